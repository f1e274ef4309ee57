// SPDX-License-Identifier: Apache-2.0
// Byte containers shared by every module: owned `bytes`, borrowed `bytes_view`, and fixed-size
// arrays for hashes, addresses and keys. Big-endian load/store helpers for 64-bit words live here
// too, since the codec and crypto modules both need them.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace enact {

using bytes = std::vector<uint8_t>;
using bytes_view = std::span<const uint8_t>;

using hash256 = std::array<uint8_t, 32>;
using address = std::array<uint8_t, 20>;

/// View over the bytes of a string, without copying.
[[nodiscard]] inline bytes_view as_bytes(std::string_view s) noexcept {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

/// View over a byte container as characters.
[[nodiscard]] inline std::string_view as_chars(bytes_view b) noexcept {
  return {reinterpret_cast<const char*>(b.data()), b.size()};
}

namespace be {
[[nodiscard]] constexpr uint64_t load64(const uint8_t* p) noexcept {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i)
    v = (v << 8) | p[i];
  return v;
}
constexpr void store64(uint8_t* p, uint64_t v) noexcept {
  for (int i = 7; i >= 0; --i) {
    p[i] = static_cast<uint8_t>(v);
    v >>= 8;
  }
}
}  // namespace be

}  // namespace enact
