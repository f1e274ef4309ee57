// SPDX-License-Identifier: Apache-2.0
// Ethereum addresses in text: EIP-55 mixed-case checksum encoding, and parsing of `0x` + 40 hex
// digits. `parse_address` accepts any case (docs/protocol.md §0: addresses are accepted in any case);
// `parse_address_strict` additionally rejects a mixed-case string whose EIP-55 checksum is wrong,
// which catches a mistyped address that still has the right length.
#pragma once

#include <string>
#include <string_view>

#include "enact/bytes.hpp"
#include "enact/codec/hex.hpp"
#include "enact/crypto/keccak.hpp"
#include "enact/error.hpp"
#include "enact/result.hpp"

namespace enact {

enum class address_errc {
  missing_prefix = 1,  // does not start with "0x"
  wrong_length,        // not 40 hex digits after the prefix
  bad_digit,           // a character that is not a hex digit
  bad_checksum,        // mixed case that is not the EIP-55 checksum (strict parsing only)
};

}  // namespace enact
ENACT_ERRC(address_errc, address_category, "enact.address", "missing 0x prefix", "address must be 40 hex digits",
           "invalid hex digit", "EIP-55 checksum mismatch")

namespace enact {

/// "0x" + EIP-55 checksummed hex of `a`: a letter digit is uppercase when the matching nibble of
/// crypto::keccak256(lowercase hex) is >= 8.
[[nodiscard]] inline std::string to_checksum_address(const address& a) {
  std::string lower = codec::hex::encode(a);
  const hash256 h = crypto::keccak256(std::string_view(lower));
  std::string out = "0x";
  out.reserve(42);
  for (size_t i = 0; i < lower.size(); ++i) {
    const uint8_t nib = (i % 2 == 0) ? (h[i / 2] >> 4) : (h[i / 2] & 0x0f);
    char c = lower[i];
    if (c >= 'a' && nib >= 8)
      c = static_cast<char>(c - 'a' + 'A');
    out.push_back(c);
  }
  return out;
}

/// Parses "0x" + 40 hex digits in any case. `what` names the field in error messages.
[[nodiscard]] inline result<address> parse_address(std::string_view s, std::string_view what = "address") {
  if (s.size() < 2 || s[0] != '0' || s[1] != 'x')
    return fail(address_errc::missing_prefix, std::string(what) + ": missing 0x prefix");
  s.remove_prefix(2);
  if (s.size() != 40)
    return fail(address_errc::wrong_length,
                std::string(what) + ": expected 40 hex digits, got " + std::to_string(s.size()));
  address out{};
  for (size_t i = 0; i < 20; ++i) {
    const int hi = codec::hex::detail::nibble(s[2 * i]);
    const int lo = codec::hex::detail::nibble(s[2 * i + 1]);
    if (hi < 0 || lo < 0)
      return fail(address_errc::bad_digit, std::string(what) + ": invalid hex digit at offset " +
                                               std::to_string(2 + (hi < 0 ? 2 * i : 2 * i + 1)));
    out[i] = static_cast<uint8_t>((hi << 4) | lo);
  }
  return out;
}

/// As `parse_address`, and a string with both upper- and lowercase letters must carry the correct
/// EIP-55 checksum. All-lowercase and all-uppercase strings carry no checksum and are accepted.
[[nodiscard]] inline result<address> parse_address_strict(std::string_view s, std::string_view what = "address") {
  ENACT_TRY(const address a, parse_address(s, what));
  bool has_lower = false, has_upper = false;
  for (const char c : s.substr(2)) {
    has_lower |= (c >= 'a' && c <= 'f');
    has_upper |= (c >= 'A' && c <= 'F');
  }
  if (has_lower && has_upper && to_checksum_address(a) != s)
    return fail(address_errc::bad_checksum, std::string(what) + ": EIP-55 checksum mismatch");
  return a;
}

}  // namespace enact
