// SPDX-License-Identifier: Apache-2.0
// An httplib::Server whose connections cannot hold the server's memory or threads (docs/protocol.md
// §6 "Connections", docs/security.md threat model): httplib serves each connection on one pool
// thread and reads a request's head and body with a per-read timeout only, no limit on header
// count or bytes, and no limit on a chunked body or one sent without a length. This class reads
// every connection through a stream of its own that bounds what one request may make the server
// read and for how long, and caps the connections one client holds open at once.
#pragma once

#include <httplib.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <unordered_map>

namespace enact::http {

/// The bounds of docs/protocol.md §6 "Connections"; the operator's settings are `[http]` in
/// docs/configuration.md.
struct connection_limits {
  /// Bytes of a request's line and header lines together; over it: 431.
  size_t max_header_bytes = 32 * 1024;
  /// Header lines of one request; over it: 431.
  size_t max_headers = 100;
  /// A request's head and body must arrive within this, counted from its first byte; otherwise
  /// 408 and the connection is closed (a client sending a byte at a time cannot keep a thread).
  std::chrono::seconds request_timeout{30};
  /// Connections one client (docs/protocol.md §6: an IPv4 address, an IPv6 /64) may hold open at
  /// once; another is answered 429 and closed. 0: no cap. 127.0.0.1 and ::1 are never capped.
  size_t max_connections_per_client = 16;
};

/// A chunked body, or one sent without Content-Length, may carry this much framing beyond the
/// body limit before it is refused with 413 (its raw bytes are what the stream counts).
inline constexpr size_t kChunkFramingAllowance = 64 * 1024;

/// A declared Content-Length at most this far over the body limit is read and dropped before the
/// 413 (bounded by the request deadline, never kept in memory); a larger one is refused at once.
inline constexpr size_t kSkippedBodyAllowance = 4 * 1024 * 1024;

/// Whether the request being read on this thread was refused by its bounded stream (which answered
/// and logs it): httplib still runs the error and post-routing handlers for the answer it can no
/// longer send, and those must neither log it nor answer it again.
[[nodiscard]] bool refused_on_this_thread();

class bounded_server : public httplib::Server {
 public:
  explicit bounded_server(connection_limits limits = {});
  [[nodiscard]] const connection_limits& limits() const { return limits_; }

  /// httplib's, with the listen backlog widened to the system's maximum: httplib listens with a
  /// backlog of 5, so a burst of connections (a load balancer's, or an attacker's being refused)
  /// left later clients' SYNs dropped and retried after a second or more.
  bool bind_to_port(const std::string& host, int port, int socket_flags = 0);
  int bind_to_any_port(const std::string& host, int socket_flags = 0);

  /// What a refusal of this class (no route or handler saw the request) tells its logger: the
  /// answer's X-Request-Id, status and error code, the method and path once the head was read
  /// (empty before), and the microseconds since the request's first byte.
  struct refusal {
    std::string request_id;
    int status = 0;
    std::string code;
    std::string method;
    std::string path;
    int64_t latency_us = 0;
  };
  /// Called for each refusal; serve_requests() logs them as request lines.
  using refusal_logger = std::function<void(const refusal&)>;
  void on_refusal(refusal_logger log);

 private:
  // httplib's own loop (process_server_socket) reads through its SocketStream; this one reads
  // through a bounded stream and otherwise keeps httplib's keep-alive rules.
  bool process_and_close_socket(socket_t sock) override;

  /// Counts a connection of `client`; false when the client is at its cap.
  bool admit(const std::string& client);
  void release(const std::string& client);

  connection_limits limits_;
  refusal_logger refusal_log_;
  std::mutex mu_;
  std::unordered_map<std::string, size_t> open_;  // connections per client
};

}  // namespace enact::http
