// SPDX-License-Identifier: Apache-2.0
// Base64 (RFC 4648 §4) and base64url (§5). `encode` writes the standard alphabet with padding
// (the form of API keys, docs/protocol.md §1); `encode_url` writes the URL alphabet without padding (the
// token challenge). Decoders are strict: one alphabet each, no whitespace or line breaks, and
// canonical input only — the unused low bits of the last symbol must be zero (§3.5), so every
// byte string has exactly one accepted encoding.
#pragma once

#include <string>
#include <string_view>
#include <utility>

#include "enact/bytes.hpp"
#include "enact/error.hpp"
#include "enact/result.hpp"

namespace enact {

enum class base64_errc {
  bad_char = 1,   // a character outside the alphabet (including whitespace)
  bad_length,     // a symbol count of the form 4k+1, which encodes no byte string
  bad_padding,    // missing, misplaced or superfluous '='
  non_canonical,  // non-zero bits in the unused part of the last symbol
};

}  // namespace enact
ENACT_ERRC(base64_errc, base64_category, "enact.base64", "invalid base64 character", "invalid base64 length",
           "invalid base64 padding", "non-canonical base64 (non-zero trailing bits)")

namespace enact::codec::base64 {

namespace detail {
constexpr char kStd[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
constexpr char kUrl[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// Value of a symbol in the given alphabet, or -1.
constexpr int symbol(char c, bool url) noexcept {
  if (c >= 'A' && c <= 'Z')
    return c - 'A';
  if (c >= 'a' && c <= 'z')
    return c - 'a' + 26;
  if (c >= '0' && c <= '9')
    return c - '0' + 52;
  if (c == (url ? '-' : '+'))
    return 62;
  if (c == (url ? '_' : '/'))
    return 63;
  return -1;
}

inline std::string encode(bytes_view in, const char* alphabet, bool pad) {
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 3 <= in.size(); i += 3) {
    const uint32_t v = (uint32_t{in[i]} << 16) | (uint32_t{in[i + 1]} << 8) | in[i + 2];
    out.push_back(alphabet[v >> 18]);
    out.push_back(alphabet[(v >> 12) & 63]);
    out.push_back(alphabet[(v >> 6) & 63]);
    out.push_back(alphabet[v & 63]);
  }
  const size_t rest = in.size() - i;
  if (rest == 1) {
    const uint32_t v = uint32_t{in[i]} << 16;
    out.push_back(alphabet[v >> 18]);
    out.push_back(alphabet[(v >> 12) & 63]);
    if (pad)
      out.append("==");
  } else if (rest == 2) {
    const uint32_t v = (uint32_t{in[i]} << 16) | (uint32_t{in[i + 1]} << 8);
    out.push_back(alphabet[v >> 18]);
    out.push_back(alphabet[(v >> 12) & 63]);
    out.push_back(alphabet[(v >> 6) & 63]);
    if (pad)
      out.push_back('=');
  }
  return out;
}

/// Decodes `s` whose padding (if any) has already been validated and stripped.
inline result<bytes> decode_symbols(std::string_view s, bool url, std::string_view what) {
  bytes out;
  out.reserve(s.size() / 4 * 3 + 2);
  uint32_t acc = 0;
  int bits = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const int v = symbol(s[i], url);
    if (v < 0)
      return fail(base64_errc::bad_char, std::string(what) + ": invalid " + (url ? "base64url" : "base64") +
                                             " character at offset " + std::to_string(i));
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<uint8_t>(acc >> bits));
      acc &= (1u << bits) - 1;
    }
  }
  if (s.size() % 4 == 1)
    return fail(base64_errc::bad_length,
                std::string(what) + ": " + std::to_string(s.size()) + " symbols cannot encode bytes");
  if (acc != 0)  // RFC 4648 §3.5: pad bits must be zero for a canonical encoding
    return fail(base64_errc::non_canonical, std::string(what) + ": non-zero trailing bits in the last symbol");
  return out;
}

/// Splits up to two trailing '=' off `s`, refusing a '=' anywhere else: the body and the number
/// of '='.
inline result<std::pair<std::string_view, size_t>> split_padding(std::string_view s, std::string_view what) {
  size_t pad = 0;
  while (pad < 2 && pad < s.size() && s[s.size() - 1 - pad] == '=')
    ++pad;
  const std::string_view body = s.substr(0, s.size() - pad);
  if (const size_t eq = body.find('='); eq != std::string_view::npos)
    return fail(base64_errc::bad_padding, std::string(what) + ": misplaced '=' at offset " + std::to_string(eq));
  return std::pair{body, pad};
}
}  // namespace detail

/// Standard alphabet, padded (RFC 4648 §4).
[[nodiscard]] inline std::string encode(bytes_view data) { return detail::encode(data, detail::kStd, true); }

/// URL-safe alphabet, unpadded (RFC 4648 §5, padding omitted as §3.2 permits).
[[nodiscard]] inline std::string encode_url(bytes_view data) { return detail::encode(data, detail::kUrl, false); }

/// Strict standard base64: padding required, canonical trailing bits, no whitespace.
[[nodiscard]] inline result<bytes> decode(std::string_view s, std::string_view what = "base64") {
  ENACT_TRY(const auto split, detail::split_padding(s, what));
  auto out = detail::decode_symbols(split.first, false, what);
  if (out && s.size() % 4 != 0)
    return fail(base64_errc::bad_padding, std::string(what) + ": missing or incomplete padding");
  return out;
}

/// Strict base64url: URL alphabet; padding optional, but when present it must be complete.
[[nodiscard]] inline result<bytes> decode_url(std::string_view s, std::string_view what = "base64url") {
  ENACT_TRY(const auto split, detail::split_padding(s, what));
  // With at most two '=' and a total length that is a multiple of 4, the padding is exactly what
  // the body length calls for.
  if (split.second != 0 && s.size() % 4 != 0)
    return fail(base64_errc::bad_padding, std::string(what) + ": incomplete padding");
  return detail::decode_symbols(split.first, true, what);
}

}  // namespace enact::codec::base64
