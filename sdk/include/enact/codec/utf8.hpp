// SPDX-License-Identifier: Apache-2.0
// UTF-8 well-formedness (RFC 3629): no overlong forms, no surrogates, nothing above U+10FFFF.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace enact::codec::utf8 {

/// Length (1 to 4) of the well-formed UTF-8 sequence that starts at byte `at` of `s`, or 0 when
/// the bytes there are not one (a stray continuation byte, an overlong form, a surrogate, a code
/// point above U+10FFFF, or a sequence cut short by the end of `s`). `at` must be below s.size().
[[nodiscard]] constexpr size_t sequence_length(std::string_view s, size_t at) noexcept {
  const auto lead = static_cast<uint8_t>(s[at]);
  if (lead < 0x80)
    return 1;
  size_t len = 0;
  uint32_t cp = 0;
  uint32_t min = 0;
  if ((lead & 0xE0) == 0xC0)
    len = 2, cp = lead & 0x1F, min = 0x80;
  else if ((lead & 0xF0) == 0xE0)
    len = 3, cp = lead & 0x0F, min = 0x800;
  else if ((lead & 0xF8) == 0xF0)
    len = 4, cp = lead & 0x07, min = 0x10000;
  else
    return 0;
  if (at + len > s.size())
    return 0;
  for (size_t k = 1; k < len; ++k) {
    const auto b = static_cast<uint8_t>(s[at + k]);
    if ((b & 0xC0) != 0x80)
      return 0;
    cp = (cp << 6) | (b & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
    return 0;
  return len;
}

/// Bytes of the longest well-formed UTF-8 prefix of `s` (s.size() when all of `s` is).
[[nodiscard]] constexpr size_t valid_prefix(std::string_view s) noexcept {
  size_t i = 0;
  while (i < s.size()) {
    const size_t len = sequence_length(s, i);
    if (len == 0)
      break;
    i += len;
  }
  return i;
}

/// Whether all of `s` is well-formed UTF-8.
[[nodiscard]] constexpr bool is_valid(std::string_view s) noexcept { return valid_prefix(s) == s.size(); }

/// `s` with each byte that begins no well-formed sequence replaced by U+FFFD, so text from outside
/// (an HTTP header, say) can go into JSON whatever its bytes.
[[nodiscard]] inline std::string replace_invalid(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const size_t len = sequence_length(s, i);
    if (len == 0) {
      out.append("\xEF\xBF\xBD");
      ++i;
    } else {
      out.append(s.substr(i, len));
      i += len;
    }
  }
  return out;
}

}  // namespace enact::codec::utf8
