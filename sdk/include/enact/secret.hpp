// SPDX-License-Identifier: Apache-2.0
// `enact::Secret`: owned secret bytes (private keys, root keys, derived keys, API key values).
// Move-only (copies are explicit, via `clone()`), wiped with OPENSSL_cleanse when destroyed or
// overwritten, compared in constant time. It deliberately has no stream operator, no conversion to
// string and no JSON conversion, so a secret cannot reach a log or a response by accident; code
// that must send a secret (a newly created API key) reads `view()` and encodes it explicitly.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "enact/bytes.hpp"

namespace enact {

namespace detail {
/// Overwrites `n` bytes at `p` with zeros in a way the optimiser cannot elide (OPENSSL_cleanse).
void secure_wipe(void* p, size_t n) noexcept;
}  // namespace detail

/// Wipes a buffer (a std::string, `bytes`, any contiguous container) with detail::secure_wipe when
/// the guard goes out of scope, however the scope is left: for plaintext that holds a secret for a
/// moment outside a `Secret` (a key service's answer, a sealed body opened). Only the buffer's
/// current contents are wiped: memory it reallocated away from is not.
template <class Buffer>
class wipe_on_exit {
 public:
  explicit wipe_on_exit(Buffer& b) noexcept : b_(b) {}
  ~wipe_on_exit() { detail::secure_wipe(b_.data(), b_.size() * sizeof(*b_.data())); }
  wipe_on_exit(const wipe_on_exit&) = delete;
  wipe_on_exit& operator=(const wipe_on_exit&) = delete;

 private:
  Buffer& b_;
};

/// True when `a` and `b` have the same length and contents. The time taken depends on the length
/// only, never on the contents (CRYPTO_memcmp); lengths are not treated as secret.
[[nodiscard]] bool constant_time_equal(bytes_view a, bytes_view b) noexcept;

class Secret {
 public:
  /// An empty secret (size 0).
  Secret() noexcept = default;
  /// Copies `data` into a new secret. The caller remains responsible for wiping its own copy.
  explicit Secret(bytes_view data) : Secret(data.size()) {
    if (!data.empty())
      std::copy(data.begin(), data.end(), data_.get());
  }
  /// A secret of `n` zero bytes, to be filled through `mutable_view()`.
  [[nodiscard]] static Secret of_size(size_t n) { return Secret(n); }

  Secret(Secret&& other) noexcept : data_(std::move(other.data_)), size_(other.size_) { other.size_ = 0; }
  Secret& operator=(Secret&& other) noexcept {
    if (this != &other) {
      wipe();
      data_ = std::move(other.data_);
      size_ = other.size_;
      other.size_ = 0;
    }
    return *this;
  }
  Secret(const Secret&) = delete;
  Secret& operator=(const Secret&) = delete;
  ~Secret() { wipe(); }

  /// An independent copy (explicit, so that copying a secret is always visible in the code).
  [[nodiscard]] Secret clone() const { return Secret(view()); }

  [[nodiscard]] bytes_view view() const noexcept { return {data_.get(), size_}; }
  [[nodiscard]] std::span<uint8_t> mutable_view() noexcept { return {data_.get(), size_}; }
  [[nodiscard]] size_t size() const noexcept { return size_; }
  [[nodiscard]] bool empty() const noexcept { return size_ == 0; }

  /// Constant-time comparison of contents; secrets of different sizes are unequal.
  friend bool operator==(const Secret& a, const Secret& b) noexcept { return constant_time_equal(a.view(), b.view()); }

 private:
  explicit Secret(size_t n) : data_(n != 0 ? std::make_unique<uint8_t[]>(n) : nullptr), size_(n) {}
  void wipe() noexcept {
    if (data_)
      detail::secure_wipe(data_.get(), size_);
    data_.reset();
    size_ = 0;
  }

  std::unique_ptr<uint8_t[]> data_;
  size_t size_ = 0;
};

}  // namespace enact
