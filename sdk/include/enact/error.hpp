// SPDX-License-Identifier: Apache-2.0
// Errors at the SDK boundary. Each domain has its own `<domain>_errc` enum registered with a
// std::error_category (so codes are stable and comparable), and every failure carries a message
// that names the offending field and the reason. `enact::Error` is the exception the throwing
// convenience overloads raise; `enact::error` is the value a `result<T>` holds on failure.
#pragma once

#include <initializer_list>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

namespace enact {

/// A failure: a stable code and a human sentence naming what was wrong.
struct error {
  std::error_code code;
  std::string message;
};

/// The exception thrown by the throwing overloads (and by result<T>::value() on failure).
class Error : public std::runtime_error {
 public:
  Error(std::error_code code, const std::string& message) : std::runtime_error(message), code_(code) {}
  explicit Error(const error& e) : Error(e.code, e.message) {}
  [[nodiscard]] const std::error_code& code() const noexcept { return code_; }

 private:
  std::error_code code_;
};

namespace detail {
/// A category whose messages come from a table indexed by the enum value (value 0 = success).
template <class E>
class errc_category final : public std::error_category {
 public:
  errc_category(const char* name, std::initializer_list<const char*> messages) : name_(name), messages_(messages) {}
  [[nodiscard]] const char* name() const noexcept override { return name_; }
  [[nodiscard]] std::string message(int c) const override {
    if (c == 0)
      return "success";
    if (c > 0 && static_cast<size_t>(c) < messages_.size())
      return messages_[c];
    return std::string(name_) + " error " + std::to_string(c);
  }

 private:
  const char* name_;
  std::vector<const char*> messages_;
};
}  // namespace detail

namespace detail {
/// The category of a domain enum declared with ENACT_ERRC.
template <class E>
struct errc_domain;
}  // namespace detail

/// The error code of a domain enum declared with ENACT_ERRC (found by argument-dependent lookup,
/// as std::error_code's constructor and `fail` expect).
template <class E>
requires requires { detail::errc_domain<E>::get(); }
std::error_code make_error_code(E e) noexcept { return {static_cast<int>(e), detail::errc_domain<E>::get()}; }

/// Builds an `error` from any registered errc enum: `return fail(hex_errc::bad_digit, "...")`.
template <class E>
[[nodiscard]] error fail(E code, std::string message) {
  return error{make_error_code(code), std::move(message)};
}

}  // namespace enact

/// Declares the boilerplate of a domain error enum. Use at global scope after the enum and its
/// `make_error_code` overload:
///   ENACT_ERRC_ENUM(enact::hex_errc)
#define ENACT_ERRC_ENUM(E) \
  template <>              \
  struct std::is_error_code_enum<E> : std::true_type {};

/// Declares a domain error enum `E` of namespace enact, at global scope after the enum: its
/// category `enact::detail::<category>()` named `name`, with one message per value from 1 on,
/// its make_error_code and its std::is_error_code_enum specialisation:
///   ENACT_ERRC(hex_errc, hex_category, "enact.hex", "odd number of hex digits", "invalid hex digit")
#define ENACT_ERRC(E, category, name, ...)                                  \
  namespace enact::detail {                                                 \
  inline const std::error_category& category() noexcept {                   \
    static const errc_category<E> c(name, {"", __VA_ARGS__});               \
    return c;                                                               \
  }                                                                         \
  template <>                                                               \
  struct errc_domain<E> {                                                   \
    static const std::error_category& get() noexcept { return category(); } \
  };                                                                        \
  }                                                                         \
  ENACT_ERRC_ENUM(enact::E)
