// SPDX-License-Identifier: Apache-2.0
// Hex encoding and decoding. `encode` writes lowercase digits; `decode` accepts either case with
// or without a `0x` prefix, and `decode_prefixed` demands the prefix (the wire form of docs/protocol.md §0).
// Fixed-size decoders (`decode_fixed<N>`) reject any other length. Hand-written: no std::regex.
#pragma once

#include <array>
#include <string>
#include <string_view>

#include "enact/bytes.hpp"
#include "enact/error.hpp"
#include "enact/result.hpp"

namespace enact {

enum class hex_errc {
  odd_length = 1,
  bad_digit,
  missing_prefix,
  wrong_length,
};

}  // namespace enact
ENACT_ERRC(hex_errc, hex_category, "enact.hex", "odd number of hex digits", "invalid hex digit", "missing 0x prefix",
           "wrong length")

namespace enact::codec::hex {

namespace detail {
constexpr char kDigits[] = "0123456789abcdef";
/// Value of a hex digit, or -1.
constexpr int nibble(char c) noexcept {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}
inline bool has_prefix(std::string_view s) noexcept {
  return s.size() >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
}
}  // namespace detail

/// Lowercase hex of `data`, without prefix.
[[nodiscard]] inline std::string encode(bytes_view data) {
  std::string out(data.size() * 2, '\0');
  for (size_t i = 0; i < data.size(); ++i) {
    out[2 * i] = detail::kDigits[data[i] >> 4];
    out[2 * i + 1] = detail::kDigits[data[i] & 0xf];
  }
  return out;
}

/// `0x` + lowercase hex of `data`.
[[nodiscard]] inline std::string encode_prefixed(bytes_view data) { return "0x" + encode(data); }

/// Decodes hex digits (either case, optional `0x`) into `out`, which must hold exactly
/// (digits / 2) bytes. `what` names the field in error messages.
[[nodiscard]] inline result<void> decode_into(std::string_view s, std::span<uint8_t> out,
                                              std::string_view what = "hex") noexcept {
  if (detail::has_prefix(s))
    s.remove_prefix(2);
  if (s.size() % 2 != 0)
    return fail(hex_errc::odd_length,
                std::string(what) + ": odd number of hex digits (" + std::to_string(s.size()) + ")");
  if (s.size() / 2 != out.size())
    return fail(hex_errc::wrong_length, std::string(what) + ": expected " + std::to_string(out.size()) +
                                            " bytes, got " + std::to_string(s.size() / 2));
  for (size_t i = 0; i < out.size(); ++i) {
    const int hi = detail::nibble(s[2 * i]);
    const int lo = detail::nibble(s[2 * i + 1]);
    if (hi < 0 || lo < 0) {
      const size_t at = hi < 0 ? 2 * i : 2 * i + 1;
      return fail(hex_errc::bad_digit, std::string(what) + ": invalid hex digit at offset " + std::to_string(at));
    }
    out[i] = static_cast<uint8_t>((hi << 4) | lo);
  }
  return {};
}

/// Decodes hex of any even length, with or without `0x`.
[[nodiscard]] inline result<bytes> decode(std::string_view s, std::string_view what = "hex") {
  const size_t digits = s.size() - (detail::has_prefix(s) ? 2 : 0);
  if (digits % 2 != 0)
    return fail(hex_errc::odd_length,
                std::string(what) + ": odd number of hex digits (" + std::to_string(digits) + ")");
  bytes out(digits / 2);
  ENACT_TRY_VOID(decode_into(s, out, what));
  return out;
}

/// Decodes `0x`-prefixed hex; a missing prefix is an error.
[[nodiscard]] inline result<bytes> decode_prefixed(std::string_view s, std::string_view what = "hex") {
  if (!detail::has_prefix(s))
    return fail(hex_errc::missing_prefix, std::string(what) + ": missing 0x prefix");
  return decode(s, what);
}

/// Decodes exactly N bytes of hex (optional `0x`).
template <size_t N>
[[nodiscard]] result<std::array<uint8_t, N>> decode_fixed(std::string_view s, std::string_view what = "hex") {
  std::array<uint8_t, N> out{};
  ENACT_TRY_VOID(decode_into(s, out, what));
  return out;
}

}  // namespace enact::codec::hex
