// SPDX-License-Identifier: Apache-2.0
#include "http/bounded_server.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <strings.h>
#include <string_view>

#include "http/errors.hpp"
#include "http/rate_limiter.hpp"
#include "http/request.hpp"

namespace enact::http {
namespace {

using steady = std::chrono::steady_clock;
using std::chrono::milliseconds;

int ms_until(steady::time_point t) {
  const auto left = std::chrono::duration_cast<milliseconds>(t - steady::now()).count();
  return static_cast<int>(std::clamp<int64_t>(left, 0, 1 << 30));
}

/// Waits for `events` on `fd` for at most `ms`: 1 ready, 0 timed out, -1 error.
int wait_for(int fd, short events, int ms) {
  pollfd p{fd, events, 0};
  for (;;) {
    const int r = ::poll(&p, 1, ms);
    if (r < 0 && errno == EINTR)
      continue;
    return r < 0 ? -1 : (r == 0 ? 0 : 1);
  }
}

void address_of(const sockaddr_storage& ss, std::string& ip, int& port) {
  std::array<char, INET6_ADDRSTRLEN> text{};
  if (ss.ss_family == AF_INET) {
    const auto& a = reinterpret_cast<const sockaddr_in&>(ss);
    ::inet_ntop(AF_INET, &a.sin_addr, text.data(), text.size());
    port = ntohs(a.sin_port);
  } else if (ss.ss_family == AF_INET6) {
    const auto& a = reinterpret_cast<const sockaddr_in6&>(ss);
    ::inet_ntop(AF_INET6, &a.sin6_addr, text.data(), text.size());
    port = ntohs(a.sin6_port);
  }
  ip = text.data();
}

/// The whole answer of a refusal made before any route saw the request: the error body of
/// docs/protocol.md §0, a request id, and Connection: close (the rest of the request is unread).
std::string refusal_text(int status, std::string_view reason, const http_error& e, const std::string& request_id,
                         std::string_view extra_headers = {}) {
  const std::string body = boost::json::serialize(error_body(e));
  std::string out = "HTTP/1.1 " + std::to_string(status) + " " + std::string(reason) +
                    "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
                    "\r\nConnection: close\r\nX-Request-Id: " + request_id + "\r\n";
  out += extra_headers;
  out += "\r\n";
  out += body;
  return out;
}

/// An answer's head (`data` up to `head_end`, its blank line) saying Connection: close instead of
/// httplib's keep-alive headers, followed by the rest of `data`.
std::string close_answer_head(std::string_view data, size_t head_end) {
  std::string out;
  out.reserve(data.size() + 8);
  size_t at = 0;
  while (at < head_end) {
    const size_t eol = data.find("\r\n", at);
    const std::string_view line = data.substr(at, eol - at);
    if (!line.starts_with("Connection:") && !line.starts_with("Keep-Alive:")) {
      out += line;
      out += "\r\n";
    }
    at = eol + 2;
  }
  out += "Connection: close\r\n";
  out += data.substr(head_end + 2);
  return out;
}

/// Sends what fits within `deadline`; the refusal is best effort (the client may be gone).
void send_all(int fd, std::string_view data, steady::time_point deadline) {
  while (!data.empty()) {
    if (wait_for(fd, POLLOUT, ms_until(deadline)) != 1)
      return;
    const ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return;
    data.remove_prefix(static_cast<size_t>(n));
  }
}

/// Reads and drops what the client has sent so far, without waiting: closing a socket with unread
/// input sends a reset, which can overtake the answer. For the connection cap's refusal, whose
/// connection is not counted, so no thread may wait on it.
void drain_available(int fd) {
  std::array<char, 4096> sink{};
  for (size_t drained = 0; drained < 64 * 1024;) {
    const ssize_t n = ::recv(fd, sink.data(), sink.size(), MSG_DONTWAIT);
    if (n <= 0)
      return;
    drained += static_cast<size_t>(n);
  }
}

/// Closes after a refusal without discarding it: a socket closed with unread input sends a reset,
/// which can reach the client before the answer does. Reads (and drops) what the client still
/// sends for a moment, bounded in bytes and time, first.
void lingering_close(int fd) {
  ::shutdown(fd, SHUT_WR);
  const auto until = steady::now() + milliseconds(200);
  std::array<char, 4096> sink{};
  size_t drained = 0;
  while (drained < 256 * 1024 && wait_for(fd, POLLIN, ms_until(until)) == 1) {
    const ssize_t n = ::recv(fd, sink.data(), sink.size(), 0);
    if (n <= 0)
      break;
    drained += static_cast<size_t>(n);
  }
}

thread_local bool t_refused = false;

/// One connection as httplib reads it, with docs/protocol.md §6's bounds: each request's head
/// is counted byte by byte (httplib's line reader asks for one byte at a time), its body is
/// counted against its Content-Length or the body limit, and both must arrive by the request's
/// deadline. A bound crossed is answered here (431, 413, 408) and every later read and write
/// of httplib's fails, so the connection ends with that one answer.
class bounded_stream final : public httplib::Stream {
 public:
  bounded_stream(int fd, const connection_limits& limits, size_t max_body, int read_timeout_ms, int write_timeout_ms)
      : fd_(fd),
        limits_(limits),
        max_body_(max_body),
        read_timeout_ms_(read_timeout_ms),
        write_timeout_ms_(write_timeout_ms) {
    sockaddr_storage ss{};
    socklen_t len = sizeof ss;
    if (::getpeername(fd, reinterpret_cast<sockaddr*>(&ss), &len) == 0)
      address_of(ss, remote_ip_, remote_port_);
    len = sizeof ss;
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) == 0)
      address_of(ss, local_ip_, local_port_);
  }

  bool is_readable() const override { return off_ < len_ || wait_for(fd_, POLLIN, read_timeout_ms_) == 1; }
  bool is_writable() const override { return !refused_ && wait_for(fd_, POLLOUT, write_timeout_ms_) == 1; }

  ssize_t read(char* ptr, size_t size) override {
    if (refused_)
      return -1;
    // Checked before waiting for input: a declared length over the limit is refused at once,
    // whether or not the client sends it.
    if (phase_ == phase::body && body_left_ == 0) {
      refuse(413, "Payload Too Large",
             make_error(api_errc::payload_too_large,
                        "request body too large: at most " + std::to_string(max_body_) + " bytes"));
      return -1;
    }
    if (off_ == len_ && !fill())
      return refused_ || !eof_ ? -1 : 0;
    size_t n = std::min(size, len_ - off_);
    if (phase_ == phase::head) {
      for (size_t i = 0; i < n; ++i)
        if (buf_[off_ + i] == '\n')
          ++head_lines_;
      head_bytes_ += n;
      // The request line, the header lines and the blank line that ends them.
      if (head_bytes_ > limits_.max_header_bytes || head_lines_ > limits_.max_headers + 2) {
        refuse(431, "Request Header Fields Too Large",
               make_error(api_errc::invalid_request, "request head: at most " + std::to_string(limits_.max_headers) +
                                                         " header lines and " +
                                                         std::to_string(limits_.max_header_bytes) + " bytes"));
        return -1;
      }
    } else {
      n = std::min(n, body_left_);
      body_left_ -= n;
      consumed_ += n;
    }
    std::memcpy(ptr, buf_.data() + off_, n);
    off_ += n;
    return static_cast<ssize_t>(n);
  }

  ssize_t write(const char* ptr, size_t size) override {
    if (refused_)
      return -1;
    std::string_view data(ptr, size);
    std::string rewritten;
    if (!answer_started_ && data.starts_with("HTTP/1.1 ") && !data.starts_with("HTTP/1.1 100 ")) {
      // httplib writes an answer's status line and headers in one write.
      answer_started_ = true;
      answer_deadline_ = steady::now() + limits_.request_timeout;
      const auto head_end = data.find("\r\n\r\n");
      const auto head = data.substr(0, head_end == std::string_view::npos ? head_end : head_end + 2);
      close_ = head.find("\r\nConnection: close\r\n") != std::string_view::npos;
      if (!close_ && body_left_unread() && head_end != std::string_view::npos) {
        // The connection ends after this answer (body_left_unread): the answer says so, or a
        // keep-alive client would send its next request into a closed connection.
        rewritten = close_answer_head(data, head_end);
        data = rewritten;
        close_ = true;
      }
    }
    size_t sent = 0;
    while (sent < data.size()) {
      // A client that reads its answer slowly holds the thread no longer than a slow sender.
      const int wait_ms = answer_started_ ? std::min(write_timeout_ms_, ms_until(answer_deadline_)) : write_timeout_ms_;
      if (wait_for(fd_, POLLOUT, wait_ms) != 1)
        break;
      const ssize_t n = ::send(fd_, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        break;
      sent += static_cast<size_t>(n);
    }
    if (sent == data.size())
      return static_cast<ssize_t>(size);
    return rewritten.empty() && sent > 0 ? static_cast<ssize_t>(sent) : -1;
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    ip = remote_ip_;
    port = remote_port_;
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    ip = local_ip_;
    port = local_port_;
  }
  // httplib asks for the descriptor only to answer 500 when select() could not watch it (at or
  // above FD_SETSIZE); this stream polls, so any descriptor serves.
  socket_t socket() const override { return fd_ < FD_SETSIZE ? fd_ : FD_SETSIZE - 1; }

  /// Waits at most `idle_ms` for the next request's first byte, in short slices so that a server
  /// being stopped (`listening` closed) ends its idle connections at once.
  bool await_request(int idle_ms, const std::atomic<socket_t>& listening) {
    if (off_ < len_)
      return true;  // pipelined
    const auto until = steady::now() + milliseconds(idle_ms);
    while (listening != INVALID_SOCKET) {
      const int left = ms_until(until);
      if (left <= 0)
        return false;
      const int r = wait_for(fd_, POLLIN, std::min(left, 100));
      if (r != 0)
        return r == 1;
    }
    return false;
  }

  /// A request begins: its head is counted from here and its deadline runs.
  void begin_head() {
    phase_ = phase::head;
    head_bytes_ = 0;
    head_lines_ = 0;
    answer_started_ = false;
    started_ = steady::now();
    deadline_ = started_ + limits_.request_timeout;
    request_id_.clear();
    method_.clear();
    path_.clear();
    t_refused = false;
  }

  /// The head is whole (httplib's setup_request): the body may be its Content-Length when
  /// that is within the limit (httplib reads it exactly), nothing when it is over (httplib would
  /// read it all to skip it), or the limit and its framing when chunked or unstated.
  void begin_body(const httplib::Request& req) {
    phase_ = phase::body;
    method_ = req.method;
    path_ = req.path;
    consumed_ = 0;
    declared_ = 0;
    bad_length_ = false;
    chunked_ = ::strcasecmp(req.get_header_value("Transfer-Encoding").c_str(), "chunked") == 0;
    if (!chunked_ && req.has_header("Content-Length")) {
      const std::string v = req.get_header_value("Content-Length");
      const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), declared_);
      bad_length_ = ec != std::errc{} || end != v.data() + v.size();
      // A length a little over the limit is read and dropped, as httplib does, before its 413: a
      // client still sending its body would otherwise meet a reset instead of the answer (and an
      // httplib client, a SIGPIPE). Far over it, the refusal comes at once.
      body_left_ = !bad_length_ && declared_ <= max_body_ + kSkippedBodyAllowance ? static_cast<size_t>(declared_) : 0;
    } else {
      body_left_ = max_body_ + kChunkFramingAllowance;
    }
  }

  /// The request declared a body that httplib left unread (a GET or HEAD with a body; httplib
  /// reads bodies of POST, PUT, PATCH and DELETE only): its bytes would be parsed as the next
  /// request, so the connection ends after the answer.
  [[nodiscard]] bool body_left_unread() const {
    return phase_ == phase::body && (bad_length_ || (chunked_ ? consumed_ == 0 : consumed_ < declared_));
  }

  [[nodiscard]] bool refused() const { return refused_; }
  [[nodiscard]] int refused_status() const { return refused_status_; }
  [[nodiscard]] const std::string& refused_code() const { return refused_code_; }
  /// The refusal as its logger sees it.
  [[nodiscard]] bounded_server::refusal refusal() const {
    return {request_id_,   refused_status_,
            refused_code_, method_,
            path_,         std::chrono::duration_cast<std::chrono::microseconds>(steady::now() - started_).count()};
  }
  /// The answer said Connection: close (a refusal of httplib's or a route's, or the client's).
  [[nodiscard]] bool close_requested() const { return close_; }
  [[nodiscard]] const std::string& remote_ip() const { return remote_ip_; }

 private:
  enum class phase { head, body };

  /// One recv within the read timeout and the request's deadline. False at the end of the input,
  /// on an error or a timeout; a timeout is refused with 408.
  bool fill() {
    for (;;) {
      const int to_deadline = ms_until(deadline_);
      const int wait_ms = std::min(read_timeout_ms_, to_deadline);
      const int r = wait_for(fd_, POLLIN, wait_ms);
      if (r == 0) {
        // A request cut off mid-way by the client's silence is a timeout, not a malformed request.
        refuse(408, "Request Timeout",
               make_error(api_errc::invalid_request,
                          wait_ms == to_deadline
                              ? "request: head and body not received within " +
                                    std::to_string(limits_.request_timeout.count()) + " s"
                              : "request: nothing received for " + std::to_string(read_timeout_ms_ / 1000) + " s"));
        return false;
      }
      if (r != 1)
        return false;
      const ssize_t n = ::recv(fd_, buf_.data(), buf_.size(), 0);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0) {
        eof_ = n == 0;
        return false;
      }
      off_ = 0;
      len_ = static_cast<size_t>(n);
      return true;
    }
  }

  void refuse(int status, std::string_view reason, http_error e) {
    e.status = status;
    refused_ = true;
    t_refused = true;
    refused_status_ = status;
    refused_code_ = std::string(name(e.code));
    request_id_ = new_request_id();
    send_all(fd_, refusal_text(status, reason, e, request_id_), steady::now() + milliseconds(write_timeout_ms_));
  }

  int fd_;
  const connection_limits& limits_;
  size_t max_body_;
  int read_timeout_ms_;
  int write_timeout_ms_;
  std::string remote_ip_, local_ip_;
  int remote_port_ = 0, local_port_ = 0;

  std::array<char, 4096> buf_{};
  size_t off_ = 0, len_ = 0;
  bool eof_ = false;

  phase phase_ = phase::head;
  size_t head_bytes_ = 0, head_lines_ = 0;
  size_t body_left_ = 0;
  uint64_t declared_ = 0;  // Content-Length, when stated and well-formed
  bool chunked_ = false;
  bool bad_length_ = false;
  size_t consumed_ = 0;  // body bytes handed to httplib
  steady::time_point started_{};
  steady::time_point deadline_{};
  std::string method_, path_;  // once the head is read
  bool answer_started_ = false;
  steady::time_point answer_deadline_{};
  bool close_ = false;

  bool refused_ = false;
  int refused_status_ = 0;
  std::string refused_code_;
  std::string request_id_;
};

int to_ms(time_t sec, time_t usec) {
  return static_cast<int>(std::min<int64_t>(static_cast<int64_t>(sec) * 1000 + usec / 1000, 1 << 30));
}

}  // namespace

bool refused_on_this_thread() { return t_refused; }

bounded_server::bounded_server(connection_limits limits) : limits_(limits) {}

bool bounded_server::bind_to_port(const std::string& host, int port, int socket_flags) {
  if (!httplib::Server::bind_to_port(host, port, socket_flags))
    return false;
  ::listen(svr_sock_, SOMAXCONN);
  return true;
}

int bounded_server::bind_to_any_port(const std::string& host, int socket_flags) {
  const int port = httplib::Server::bind_to_any_port(host, socket_flags);
  if (port > 0)
    ::listen(svr_sock_, SOMAXCONN);
  return port;
}

void bounded_server::on_refusal(refusal_logger log) { refusal_log_ = std::move(log); }

bool bounded_server::admit(const std::string& client) {
  if (limits_.max_connections_per_client == 0)
    return true;
  std::lock_guard lock(mu_);
  size_t& n = open_[client];
  if (n >= limits_.max_connections_per_client)
    return false;
  ++n;
  return true;
}

void bounded_server::release(const std::string& client) {
  if (limits_.max_connections_per_client == 0)
    return;
  std::lock_guard lock(mu_);
  const auto it = open_.find(client);
  if (it != open_.end() && --it->second == 0)
    open_.erase(it);
}

bool bounded_server::process_and_close_socket(socket_t sock) {
  bounded_stream strm(sock, limits_, payload_max_length_, to_ms(read_timeout_sec_, read_timeout_usec_),
                      to_ms(write_timeout_sec_, write_timeout_usec_));
  const std::string client = client_of(strm.remote_ip());
  // docs/protocol.md §6 "Connections": 127.0.0.1 and ::1 are this machine itself, the server's own
  // trigger workers and key checks calling its core, or a local reverse proxy; they are not capped.
  const bool counted = client != "127.0.0.1" && client != "::1";
  bool ret = false;
  if (counted && !admit(client)) {
    const std::string id = new_request_id();
    auto e = make_error(api_errc::rate_limited, "too many open connections from this client: at most " +
                                                    std::to_string(limits_.max_connections_per_client));
    e.status = 429;
    send_all(sock, refusal_text(429, "Too Many Requests", e, id, "Retry-After: 1\r\n"),
             steady::now() + milliseconds(to_ms(write_timeout_sec_, write_timeout_usec_)));
    if (refusal_log_)
      refusal_log_(refusal{id, 429, "rate_limited", {}, {}, 0});
    drain_available(sock);
    ::shutdown(sock, SHUT_WR);
    ::close(sock);
    return false;
  }
  const int idle_ms = to_ms(keep_alive_timeout_sec_, 0);
  for (size_t left = keep_alive_max_count_; left > 0 && svr_sock_ != INVALID_SOCKET; --left) {
    if (!strm.await_request(idle_ms, svr_sock_))
      break;
    strm.begin_head();
    bool closed = false;
    ret = process_request(strm, left == 1, closed, [&strm](httplib::Request& req) { strm.begin_body(req); });
    if (strm.refused()) {
      if (refusal_log_)
        refusal_log_(strm.refusal());
      lingering_close(sock);
      break;
    }
    if (!ret || closed || strm.close_requested() || strm.body_left_unread()) {
      if ((strm.close_requested() || strm.body_left_unread()) && !closed)
        lingering_close(sock);  // the server ended it, perhaps with part of the request unread
      break;
    }
  }
  if (counted)
    release(client);
  ::shutdown(sock, SHUT_RDWR);
  ::close(sock);
  return ret;
}

}  // namespace enact::http
