// SPDX-License-Identifier: Apache-2.0
// SHA-2 (FIPS 180-4): one-shot SHA-256 and SHA-384, and a streaming SHA-256 for data that arrives
// in pieces (the UnixFS leaves of a CID are hashed as header ‖ chunk ‖ trailer without copying).
// OpenSSL does the work behind src/crypto/sha2.cpp; its headers stay out of this one.
#pragma once

#include <array>
#include <cstdint>
#include <memory>

#include "enact/bytes.hpp"

namespace enact::crypto {

using hash384 = std::array<uint8_t, 48>;

/// SHA-256 of `data`.
[[nodiscard]] hash256 sha256(bytes_view data) noexcept;
/// SHA-384 of `data`.
[[nodiscard]] hash384 sha384(bytes_view data) noexcept;

/// Incremental SHA-256. `finalize` returns the digest and resets the hasher, so one instance can
/// hash many messages in turn (its OpenSSL context is allocated once, in the constructor).
class sha256_hasher {
 public:
  sha256_hasher();  // throws std::bad_alloc when OpenSSL cannot allocate a context
  ~sha256_hasher();
  sha256_hasher(sha256_hasher&&) noexcept;
  sha256_hasher& operator=(sha256_hasher&&) noexcept;
  sha256_hasher(const sha256_hasher&) = delete;
  sha256_hasher& operator=(const sha256_hasher&) = delete;

  sha256_hasher& update(bytes_view data) noexcept;
  [[nodiscard]] hash256 finalize() noexcept;

 private:
  struct context;
  struct context_deleter {
    void operator()(context* c) const noexcept;
  };
  std::unique_ptr<context, context_deleter> ctx_;
};

}  // namespace enact::crypto
