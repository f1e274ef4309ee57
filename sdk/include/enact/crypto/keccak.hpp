// SPDX-License-Identifier: Apache-2.0
// Keccak-256 as Ethereum uses it: the original Keccak submission's padding (domain byte 0x01),
// not the FIPS 202 SHA3-256 padding (0x06), rate 136 bytes, 32-byte output. One-shot functions for
// bytes and text, and a streaming hasher for data that arrives in pieces. The permutation is
// implemented in src/crypto/keccak.cpp (no external dependency).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "enact/bytes.hpp"

namespace enact::crypto {

/// Keccak-256 of `data`.
[[nodiscard]] hash256 keccak256(bytes_view data) noexcept;
/// Keccak-256 of the bytes of `text` (no terminator, no encoding change).
[[nodiscard]] hash256 keccak256(std::string_view text) noexcept;

/// Incremental Keccak-256. `finalize` returns the digest and resets the hasher, so one instance
/// can hash many messages in turn.
class keccak256_hasher {
 public:
  static constexpr size_t kRate = 136;  // (1600 - 2 * 256) / 8

  void update(bytes_view data) noexcept;
  void update(std::string_view text) noexcept { update(as_bytes(text)); }
  [[nodiscard]] hash256 finalize() noexcept;

 private:
  uint64_t state_[25]{};
  uint8_t buffer_[kRate]{};
  size_t buffered_ = 0;
};

}  // namespace enact::crypto
