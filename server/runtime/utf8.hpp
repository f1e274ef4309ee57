// SPDX-License-Identifier: Apache-2.0
// Text leaving a Duktape heap must be valid UTF-8 before it reaches JSON on the wire. Duktape
// keeps strings in an extended UTF-8 in which a surrogate pair written as "\ud83d\ude00" is two
// 3-byte sequences (CESU-8 style), lone surrogates are allowed, and buffers can become strings
// with arbitrary bytes. `from_duktape` joins surrogate pairs into one 4-byte sequence and turns
// everything else that is not UTF-8 into U+FFFD.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace enact::runtime::utf8 {

/// Appends code point `cp` (at most U+10FFFF, not a surrogate) to `out` as UTF-8.
void append(std::string& out, uint32_t cp);

/// Valid UTF-8 for a Duktape string's bytes.
[[nodiscard]] std::string from_duktape(std::string_view text);

/// The offset of the first byte that is not part of well-formed UTF-8 (RFC 3629: no overlong
/// forms, no surrogates, nothing above U+10FFFF), or npos when `text` is valid.
[[nodiscard]] size_t first_invalid(std::string_view text) noexcept;

/// The length of the longest prefix of valid UTF-8 `text` that fits in `max` bytes without
/// splitting a code point.
[[nodiscard]] size_t fit(std::string_view text, size_t max) noexcept;

}  // namespace enact::runtime::utf8
