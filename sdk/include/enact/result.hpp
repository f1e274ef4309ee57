// SPDX-License-Identifier: Apache-2.0
// `enact::result<T>`: a value or an `enact::error`, for parsers and decoders that must not throw.
// GCC 12 has no std::expected; this is the small subset the SDK needs. `value()` throws
// `enact::Error` on failure, which is how the throwing convenience overloads are written.
#pragma once

#include <type_traits>
#include <utility>
#include <variant>

#include "enact/error.hpp"

namespace enact {

template <class T>
class [[nodiscard]] result {
  static_assert(!std::is_same_v<T, error>, "result<error> is ambiguous");

 public:
  using value_type = T;

  result(const T& v) : v_(std::in_place_index<0>, v) {}          // NOLINT: implicit by design
  result(T&& v) : v_(std::in_place_index<0>, std::move(v)) {}    // NOLINT
  result(error e) : v_(std::in_place_index<1>, std::move(e)) {}  // NOLINT
  template <class U>
  requires(std::is_constructible_v<T, U&&> && !std::is_same_v<std::decay_t<U>, T> &&
           !std::is_same_v<std::decay_t<U>, error> && !std::is_same_v<std::decay_t<U>, result>) result(U&& v)
      : v_(std::in_place_index<0>, std::forward<U>(v)) {}  // NOLINT

  [[nodiscard]] bool has_value() const noexcept { return v_.index() == 0; }
  explicit operator bool() const noexcept { return has_value(); }

  [[nodiscard]] T& value() & {
    check();
    return std::get<0>(v_);
  }
  [[nodiscard]] const T& value() const& {
    check();
    return std::get<0>(v_);
  }
  [[nodiscard]] T&& value() && {
    check();
    return std::get<0>(std::move(v_));
  }
  template <class U>
  [[nodiscard]] T value_or(U&& fallback) const& {
    return has_value() ? std::get<0>(v_) : static_cast<T>(std::forward<U>(fallback));
  }

  /// The failure; only valid when !has_value().
  [[nodiscard]] const error& err() const& { return std::get<1>(v_); }
  [[nodiscard]] error&& err() && { return std::get<1>(std::move(v_)); }
  [[nodiscard]] std::error_code code() const noexcept { return has_value() ? std::error_code{} : std::get<1>(v_).code; }

  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  void check() const {
    if (v_.index() != 0)
      throw Error(std::get<1>(v_));
  }
  std::variant<T, error> v_;
};

template <>
class [[nodiscard]] result<void> {
 public:
  result() = default;
  result(error e) : e_(std::move(e)), failed_(true) {}  // NOLINT: implicit by design
  [[nodiscard]] bool has_value() const noexcept { return !failed_; }
  explicit operator bool() const noexcept { return !failed_; }
  void value() const {
    if (failed_)
      throw Error(e_);
  }
  [[nodiscard]] const error& err() const& { return e_; }
  [[nodiscard]] std::error_code code() const noexcept { return failed_ ? e_.code : std::error_code{}; }

 private:
  error e_;
  bool failed_ = false;
};

/// Propagates a failure from a result-returning expression:
///   ENACT_TRY(auto v, parse(x));   // on failure, returns the error from the enclosing function
#define ENACT_CONCAT_INNER(a, b) a##b
#define ENACT_CONCAT(a, b) ENACT_CONCAT_INNER(a, b)
#define ENACT_TRY(decl, expr)                                   \
  auto ENACT_CONCAT(enact_try_, __LINE__) = (expr);             \
  if (!ENACT_CONCAT(enact_try_, __LINE__))                      \
    return std::move(ENACT_CONCAT(enact_try_, __LINE__)).err(); \
  decl = std::move(ENACT_CONCAT(enact_try_, __LINE__)).value()
/// Same, for a result<void>.
#define ENACT_TRY_VOID(expr)        \
  do {                              \
    auto enact_try_void_ = (expr);  \
    if (!enact_try_void_)           \
      return enact_try_void_.err(); \
  } while (0)

}  // namespace enact
