// SPDX-License-Identifier: Apache-2.0
// Base58 with the Bitcoin alphabet (multibase "base58btc", the form of CIDv0 strings). Each
// leading zero byte is written as a leading '1'. The conversion is quadratic in the input length,
// so `decode` refuses inputs over kMaxDecodeLength characters; the identifiers it serves (CIDs,
// keys) are far shorter. Hand-written: no std::regex.
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

enum class base58_errc {
  bad_char = 1,
  too_long,
};

}  // namespace enact
ENACT_ERRC(base58_errc, base58_category, "enact.base58", "invalid base58 character", "input too long")

namespace enact::codec::base58 {

/// Longest string `decode` accepts (characters).
inline constexpr size_t kMaxDecodeLength = 1024;

namespace detail {
constexpr char kAlphabet[] = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";

/// Value of a base58btc digit, or -1 (0, O, I and l are not in the alphabet).
constexpr std::array<int8_t, 256> make_table() {
  std::array<int8_t, 256> t{};
  for (auto& v : t)
    v = -1;
  for (int i = 0; i < 58; ++i)
    t[static_cast<uint8_t>(kAlphabet[i])] = static_cast<int8_t>(i);
  return t;
}
inline constexpr std::array<int8_t, 256> kTable = make_table();
}  // namespace detail

/// Base58btc of `data`.
[[nodiscard]] inline std::string encode(bytes_view data) {
  size_t zeros = 0;
  while (zeros < data.size() && data[zeros] == 0)
    ++zeros;
  // log(256) / log(58) < 1.37: enough base-58 digits for the remaining bytes.
  const size_t cap = (data.size() - zeros) * 137 / 100 + 1;
  std::string digits(cap, '\0');  // little-endian base-58 digits, values 0..57
  size_t len = 0;
  for (size_t i = zeros; i < data.size(); ++i) {
    unsigned carry = data[i];
    for (size_t j = 0; j < len; ++j) {
      carry += static_cast<unsigned>(static_cast<uint8_t>(digits[j])) << 8;
      digits[j] = static_cast<char>(carry % 58);
      carry /= 58;
    }
    while (carry != 0) {
      digits[len++] = static_cast<char>(carry % 58);
      carry /= 58;
    }
  }
  std::string out(zeros + len, '1');
  for (size_t j = 0; j < len; ++j)
    out[zeros + j] = detail::kAlphabet[static_cast<uint8_t>(digits[len - 1 - j])];
  return out;
}

/// Decodes base58btc; `what` names the field in error messages.
[[nodiscard]] inline result<bytes> decode(std::string_view s, std::string_view what = "base58") {
  if (s.size() > kMaxDecodeLength)
    return fail(base58_errc::too_long, std::string(what) + ": " + std::to_string(s.size()) + " characters, at most " +
                                           std::to_string(kMaxDecodeLength) + " accepted");
  size_t ones = 0;
  while (ones < s.size() && s[ones] == '1')
    ++ones;
  // log(58) / log(256) < 0.733: enough bytes for the remaining digits.
  bytes acc((s.size() - ones) * 733 / 1000 + 1, 0);  // little-endian base-256
  size_t len = 0;
  for (size_t i = ones; i < s.size(); ++i) {
    const int v = detail::kTable[static_cast<uint8_t>(s[i])];
    if (v < 0)
      return fail(base58_errc::bad_char,
                  std::string(what) + ": invalid base58 character at offset " + std::to_string(i));
    unsigned carry = static_cast<unsigned>(v);
    for (size_t j = 0; j < len; ++j) {
      carry += static_cast<unsigned>(acc[j]) * 58;
      acc[j] = static_cast<uint8_t>(carry);
      carry >>= 8;
    }
    while (carry != 0) {
      acc[len++] = static_cast<uint8_t>(carry);
      carry >>= 8;
    }
  }
  bytes out(ones + len, 0);
  for (size_t j = 0; j < len; ++j)
    out[ones + j] = acc[len - 1 - j];
  return out;
}

}  // namespace enact::codec::base58
