// SPDX-License-Identifier: Apache-2.0
// What both engines of the sandbox say and keep the same way (docs/architecture.md §4 "Action
// runtime"): the log buffer and its cut, the hashes of Enact.sha256/keccak256 and how their
// input is read, and the words of every argument check and every limit. Duktape (sandbox.cpp)
// and SpiderMonkey (spidermonkey.cpp) use these, so an action fails with the same message on
// either engine wherever the engines allow.
#pragma once

#include <string>
#include <string_view>

#include "enact/bytes.hpp"
#include "runtime/sandbox.hpp"

namespace enact::runtime::sandbox::text {

/// `s` cut to at most `max` bytes on a code point boundary, followed by "..." when cut.
[[nodiscard]] std::string cut(std::string s, size_t max);

/// Appends one console line to `out.logs`, or the part of it that fits in `log_bytes` followed
/// by kLogTruncationMarker; nothing once the logs were cut.
void append_log(outcome& out, size_t log_bytes, std::string_view line);

/// The bytes a hashing input string stands for: hex after "0x", else its UTF-8 bytes. False and
/// the error message (naming `what`) for bad hex.
[[nodiscard]] bool string_bytes(const std::string& s, const char* what, bytes& out, std::string& error);

/// 0x-hex of keccak256 (`keccak`) or sha256 of `in`.
[[nodiscard]] std::string digest_hex(bool keccak, bytes_view in);

// Argument checks: the messages of the errors the natives throw (TypeError or RangeError).
[[nodiscard]] std::string expected_bytes(std::string_view what);
[[nodiscard]] std::string expected_object(std::string_view method);
[[nodiscard]] std::string args_too_large(std::string_view method);
[[nodiscard]] std::string response_too_large(size_t json_bytes, size_t limit);

// Limits: the message of a run that ended on one.
[[nodiscard]] std::string timeout_message(const limits& lim);
[[nodiscard]] std::string memory_message(const limits& lim);
[[nodiscard]] std::string output_message(const limits& lim);

/// Applies what a run hit to `o` in the order both engines share: a timeout over everything, then
/// the output limit, then memory (only when the run failed for it). A failed run has no response.
void settle(outcome& o, const limits& lim, bool timed_out, bool output_exceeded, bool memory_failed);

}  // namespace enact::runtime::sandbox::text
