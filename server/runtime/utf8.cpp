// SPDX-License-Identifier: Apache-2.0
// Duktape's extended UTF-8 to UTF-8 (see utf8.hpp).
#include "runtime/utf8.hpp"

#include <cstdint>

namespace enact::runtime::utf8 {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// Decodes one well-formed 1..4 byte sequence at `i` (surrogates included, overlong forms and
// code points above U+10FFFF excluded). Returns its length, or 0 when malformed.
size_t decode(std::string_view s, size_t i, uint32_t& cp) noexcept {
  const auto b = [&](size_t k) {
    return static_cast<uint8_t>(s[i + k]);
  };
  const uint8_t lead = b(0);
  size_t len;
  uint32_t min;
  if (lead < 0x80) {
    cp = lead;
    return 1;
  } else if ((lead & 0xE0) == 0xC0) {
    len = 2, cp = lead & 0x1F, min = 0x80;
  } else if ((lead & 0xF0) == 0xE0) {
    len = 3, cp = lead & 0x0F, min = 0x800;
  } else if ((lead & 0xF8) == 0xF0) {
    len = 4, cp = lead & 0x07, min = 0x10000;
  } else {
    return 0;
  }
  if (i + len > s.size())
    return 0;
  for (size_t k = 1; k < len; ++k) {
    if ((b(k) & 0xC0) != 0x80)
      return 0;
    cp = (cp << 6) | (b(k) & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF)
    return 0;
  return len;
}

bool is_high(uint32_t cp) noexcept { return cp >= 0xD800 && cp <= 0xDBFF; }
bool is_low(uint32_t cp) noexcept { return cp >= 0xDC00 && cp <= 0xDFFF; }

}  // namespace

void append(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

std::string from_duktape(std::string_view s) {
  // Fast path: plain ASCII, the common case for JSON and logs.
  size_t i = 0;
  while (i < s.size() && static_cast<uint8_t>(s[i]) < 0x80)
    ++i;
  if (i == s.size())
    return std::string(s);

  std::string out(s.substr(0, i));
  out.reserve(s.size());
  while (i < s.size()) {
    uint32_t cp = 0;
    const size_t len = decode(s, i, cp);
    if (len == 0) {
      out += kReplacement;
      ++i;
      continue;
    }
    if (is_high(cp)) {
      uint32_t next = 0;
      const size_t next_len = i + len < s.size() ? decode(s, i + len, next) : 0;
      if (next_len != 0 && is_low(next)) {
        append(out, 0x10000 + ((cp - 0xD800) << 10) + (next - 0xDC00));
        i += len + next_len;
        continue;
      }
      out += kReplacement;
    } else if (is_low(cp)) {
      out += kReplacement;
    } else {
      out.append(s.substr(i, len));
    }
    i += len;
  }
  return out;
}

size_t first_invalid(std::string_view s) noexcept {
  size_t i = 0;
  while (i < s.size()) {
    if (static_cast<uint8_t>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    uint32_t cp = 0;
    const size_t len = decode(s, i, cp);
    if (len == 0 || is_high(cp) || is_low(cp))
      return i;
    i += len;
  }
  return std::string_view::npos;
}

size_t fit(std::string_view text, size_t max) noexcept {
  if (text.size() <= max)
    return text.size();
  size_t n = max;
  // Back up over continuation bytes to the start of the code point that straddles the cut.
  while (n > 0 && (static_cast<uint8_t>(text[n]) & 0xC0) == 0x80)
    --n;
  return n;
}

}  // namespace enact::runtime::utf8
