// SPDX-License-Identifier: Apache-2.0
// The channel between the pool and a worker: one connected AF_UNIX stream socket (a socketpair;
// unlike a pair of pipes, writes to a dead worker fail with EPIPE instead of raising SIGPIPE in
// the server). Frames are a 4-byte big-endian length followed by that many bytes of JSON.
//
// Parent → worker: {"run": {"code", "params", "wall_ms", "heap_bytes", "output_bytes",
//                            "log_bytes"}}
//                  {"ok": <json>} | {"error": "<message>"}      answer to a capability call
// Worker → parent: {"hello": {"pid", "isolation": {...}}}       once, when confined and ready
//                  {"call": "<method>", "args": {...}}           capability call; blocks
//                  {"done": {"failure", "response"?, "logs", "logs_truncated", "message",
//                            "stack"}, "retire": bool}           end of a run
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>

namespace enact::runtime::channel {

/// The descriptor number of the channel inside the worker.
inline constexpr int kWorkerFd = 3;
/// Largest frame a worker accepts (code and params of one run).
inline constexpr size_t kMaxRequestBytes = 64u << 20;
/// Largest JSON argument of one capability call (a bigger one throws a RangeError in the action).
inline constexpr size_t kMaxCallArgsBytes = 1u << 20;

enum class io { ok, closed, timeout, too_large, failed };

using deadline = std::chrono::steady_clock::time_point;

/// Worker side: blocking read(2)/write(2), no deadline.
[[nodiscard]] io write_frame(int fd, std::string_view payload) noexcept;
[[nodiscard]] io read_frame(int fd, std::string& out, size_t max_bytes);

/// Parent side: non-blocking send/recv with poll(2) until `until`.
[[nodiscard]] io send_frame(int fd, std::string_view payload, deadline until) noexcept;
[[nodiscard]] io receive_frame(int fd, std::string& out, size_t max_bytes, deadline until);

}  // namespace enact::runtime::channel
