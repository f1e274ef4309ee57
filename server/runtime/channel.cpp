// SPDX-License-Identifier: Apache-2.0
// Length-prefixed frames over the worker's socket (see channel.hpp).
#include "runtime/channel.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>

namespace enact::runtime::channel {
namespace {

void encode_length(size_t n, uint8_t out[4]) noexcept {
  out[0] = static_cast<uint8_t>(n >> 24);
  out[1] = static_cast<uint8_t>(n >> 16);
  out[2] = static_cast<uint8_t>(n >> 8);
  out[3] = static_cast<uint8_t>(n);
}

size_t decode_length(const uint8_t in[4]) noexcept {
  return (size_t{in[0]} << 24) | (size_t{in[1]} << 16) | (size_t{in[2]} << 8) | in[3];
}

io write_all(int fd, const void* data, size_t n) noexcept {
  const auto* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR)
        continue;
      return errno == EPIPE ? io::closed : io::failed;
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
  return io::ok;
}

io read_all(int fd, void* data, size_t n) noexcept {
  auto* p = static_cast<char*>(data);
  while (n > 0) {
    const ssize_t r = ::read(fd, p, n);
    if (r < 0) {
      if (errno == EINTR)
        continue;
      return io::failed;
    }
    if (r == 0)
      return io::closed;
    p += r;
    n -= static_cast<size_t>(r);
  }
  return io::ok;
}

// Waits for `events` on fd until `until`.
io wait(int fd, short events, deadline until) noexcept {
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
    if (left.count() < 0)
      return io::timeout;
    pollfd p{fd, events, 0};
    // +1: poll rounds down, and a wake-up just before the deadline would spin.
    const int r = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count() + 1, 60'000)));
    if (r < 0) {
      if (errno == EINTR)
        continue;
      return io::failed;
    }
    if (r == 0)
      continue;
    return io::ok;  // readable, writable, or hung up: the next call finds out which
  }
}

/// Moves `n` bytes in non-blocking steps, `step(offset, left)` being one send or recv (its return
/// value), waiting for `events` whenever the socket is not ready, until `until`.
template <class Step>
io transfer_all(int fd, short events, size_t n, deadline until, Step step) noexcept {
  size_t done = 0;
  while (done < n) {
    const ssize_t r = step(done, n - done);
    if (r < 0) {
      if (errno == EINTR)
        continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        if (const io st = wait(fd, events, until); st != io::ok)
          return st;
        continue;
      }
      return errno == EPIPE || errno == ECONNRESET ? io::closed : io::failed;
    }
    if (r == 0)
      return io::closed;  // recv: the peer closed (a send of at least one byte never returns 0)
    done += static_cast<size_t>(r);
  }
  return io::ok;
}

io send_all(int fd, const void* data, size_t n, deadline until) noexcept {
  const auto* p = static_cast<const char*>(data);
  return transfer_all(fd, POLLOUT, n, until,
                      [&](size_t at, size_t left) { return ::send(fd, p + at, left, MSG_NOSIGNAL | MSG_DONTWAIT); });
}

io recv_all(int fd, void* data, size_t n, deadline until) noexcept {
  auto* p = static_cast<char*>(data);
  return transfer_all(fd, POLLIN, n, until,
                      [&](size_t at, size_t left) { return ::recv(fd, p + at, left, MSG_DONTWAIT); });
}

}  // namespace

// Small frames go out in one system call: header and payload copied into one buffer.
constexpr size_t kCoalesceBytes = 16u << 10;

namespace {

/// One frame through `put(data, n)` (write_all or send_all on the caller's socket).
template <class Put>
io put_frame(std::string_view payload, Put put) noexcept {
  if (payload.size() > UINT32_MAX)
    return io::too_large;
  uint8_t header[4];
  encode_length(payload.size(), header);
  if (payload.size() <= kCoalesceBytes) {
    char buf[4 + kCoalesceBytes];
    std::memcpy(buf, header, 4);
    std::memcpy(buf + 4, payload.data(), payload.size());
    return put(buf, 4 + payload.size());
  }
  if (const io st = put(header, sizeof header); st != io::ok)
    return st;
  return put(payload.data(), payload.size());
}

/// One frame of at most `max_bytes` through `get(data, n)` (read_all or recv_all).
template <class Get>
io get_frame(std::string& out, size_t max_bytes, Get get) {
  uint8_t header[4];
  if (const io st = get(header, sizeof header); st != io::ok)
    return st;
  const size_t n = decode_length(header);
  if (n > max_bytes)
    return io::too_large;
  out.resize(n);
  return get(out.data(), n);
}

}  // namespace

io write_frame(int fd, std::string_view payload) noexcept {
  return put_frame(payload, [fd](const void* data, size_t n) { return write_all(fd, data, n); });
}

io read_frame(int fd, std::string& out, size_t max_bytes) {
  return get_frame(out, max_bytes, [fd](void* data, size_t n) { return read_all(fd, data, n); });
}

io send_frame(int fd, std::string_view payload, deadline until) noexcept {
  return put_frame(payload, [fd, until](const void* data, size_t n) { return send_all(fd, data, n, until); });
}

io receive_frame(int fd, std::string& out, size_t max_bytes, deadline until) {
  // An answer is never ready the moment we ask: wait first rather than fail a recv.
  if (const io st = wait(fd, POLLIN, until); st != io::ok)
    return st;
  return get_frame(out, max_bytes, [fd, until](void* data, size_t n) { return recv_all(fd, data, n, until); });
}

}  // namespace enact::runtime::channel
