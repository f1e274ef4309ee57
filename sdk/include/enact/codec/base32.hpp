// SPDX-License-Identifier: Apache-2.0
// Base32 with the RFC 4648 §6 alphabet in lowercase and without padding: multibase "base32"
// (prefix 'b'), the form of CIDv1 strings. Decoding is strict so that every byte string has
// exactly one accepted text: uppercase, '=' padding, impossible lengths and non-zero trailing
// bits are all rejected.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "enact/bytes.hpp"
#include "enact/error.hpp"
#include "enact/result.hpp"

namespace enact {

enum class base32_errc {
  bad_char = 1,
  bad_length,
  non_canonical,
};

}  // namespace enact
ENACT_ERRC(base32_errc, base32_category, "enact.base32", "invalid base32 character", "impossible base32 length",
           "non-zero trailing bits")

namespace enact::codec::base32 {

namespace detail {
constexpr char kAlphabet[] = "abcdefghijklmnopqrstuvwxyz234567";
/// Value of a lowercase base32 digit, or -1.
constexpr int digit(char c) noexcept {
  if (c >= 'a' && c <= 'z')
    return c - 'a';
  if (c >= '2' && c <= '7')
    return c - '2' + 26;
  return -1;
}
}  // namespace detail

/// Lowercase, unpadded RFC 4648 base32 of `data`.
[[nodiscard]] inline std::string encode_lower_nopad(bytes_view data) {
  std::string out;
  out.reserve((data.size() * 8 + 4) / 5);
  uint32_t buf = 0;
  int bits = 0;
  for (const uint8_t b : data) {
    buf = (buf << 8) | b;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out.push_back(detail::kAlphabet[(buf >> bits) & 31]);
    }
    buf &= (1u << bits) - 1;
  }
  if (bits > 0)
    out.push_back(detail::kAlphabet[(buf << (5 - bits)) & 31]);
  return out;
}

/// Decodes lowercase, unpadded base32; `what` names the field in error messages.
[[nodiscard]] inline result<bytes> decode_lower_nopad(std::string_view s, std::string_view what = "base32") {
  // RFC 4648 §6: a final quantum of 1, 3 or 6 characters cannot come from whole bytes.
  const size_t rem = s.size() % 8;
  if (rem == 1 || rem == 3 || rem == 6)
    return fail(base32_errc::bad_length,
                std::string(what) + ": " + std::to_string(s.size()) + " characters is not a possible base32 length");
  bytes out;
  out.reserve(s.size() * 5 / 8);
  uint32_t buf = 0;
  int bits = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const int v = detail::digit(s[i]);
    if (v < 0)
      return fail(base32_errc::bad_char,
                  std::string(what) + ": invalid base32 character at offset " + std::to_string(i));
    buf = (buf << 5) | static_cast<uint32_t>(v);
    bits += 5;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<uint8_t>(buf >> bits));
      buf &= (1u << bits) - 1;
    }
  }
  if (buf != 0)
    return fail(base32_errc::non_canonical, std::string(what) + ": non-zero trailing bits in the last character");
  return out;
}

}  // namespace enact::codec::base32
