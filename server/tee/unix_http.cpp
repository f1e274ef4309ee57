// SPDX-License-Identifier: Apache-2.0
#include "tee/unix_http.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <optional>

#include "tee/errors.hpp"
#include "enact/secret.hpp"

namespace enact::tee::detail {
namespace {

using clock = std::chrono::steady_clock;

// A GetQuote answer with a full event log is some tens of KiB.
constexpr size_t kMaxAnswer = size_t{16} << 20;

struct socket_guard {
  int fd;
  ~socket_guard() { ::close(fd); }
};

char lower(char c) noexcept { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

bool iequals(std::string_view a, std::string_view b) noexcept {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (lower(a[i]) != lower(b[i]))
      return false;
  return true;
}

std::string_view trim(std::string_view s) noexcept {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

enum class parse_state { incomplete, complete, malformed };

struct parsed {
  parse_state state = parse_state::incomplete;
  int status = 0;
  std::string body;
  std::string problem;
};

/// Decodes a chunked body (RFC 9112 §7.1); incomplete until the last chunk.
parse_state dechunk(std::string_view in, std::string& out, std::string& problem) {
  out.clear();
  for (;;) {
    const size_t eol = in.find("\r\n");
    if (eol == std::string_view::npos)
      return parse_state::incomplete;
    std::string_view size_text = in.substr(0, eol);
    if (const size_t semi = size_text.find(';'); semi != std::string_view::npos)
      size_text = size_text.substr(0, semi);
    size_text = trim(size_text);
    size_t size = 0;
    const auto [end, ec] = std::from_chars(size_text.data(), size_text.data() + size_text.size(), size, 16);
    if (ec != std::errc{} || end != size_text.data() + size_text.size() || size > kMaxAnswer) {
      problem = "bad chunk size";
      return parse_state::malformed;
    }
    in.remove_prefix(eol + 2);
    if (size == 0)
      return parse_state::complete;  // trailers, if any, are not needed
    if (in.size() < size + 2)
      return parse_state::incomplete;
    out.append(in.substr(0, size));
    in.remove_prefix(size + 2);
  }
}

/// What the bytes received so far amount to; `closed` when the peer has closed the connection.
parsed parse_answer(std::string_view raw, bool closed) {
  parsed p;
  const size_t head_end = raw.find("\r\n\r\n");
  if (head_end == std::string_view::npos) {
    if (closed) {
      p.state = parse_state::malformed;
      p.problem = "the connection closed before the end of the headers";
    }
    return p;
  }
  const std::string_view head = raw.substr(0, head_end);
  const std::string_view rest = raw.substr(head_end + 4);
  const size_t first_eol = head.find("\r\n");
  const std::string_view status_line = head.substr(0, first_eol);
  if (!status_line.starts_with("HTTP/1.") || status_line.size() < 12) {
    p.state = parse_state::malformed;
    p.problem = "not an HTTP/1.x status line";
    return p;
  }
  const auto [se, sec] = std::from_chars(status_line.data() + 9, status_line.data() + 12, p.status);
  if (sec != std::errc{} || se != status_line.data() + 12 || p.status < 100) {
    p.state = parse_state::malformed;
    p.problem = "bad status code";
    return p;
  }
  std::optional<size_t> content_length;
  bool chunked = false;
  std::string_view headers = first_eol == std::string_view::npos ? std::string_view{} : head.substr(first_eol + 2);
  while (!headers.empty()) {
    const size_t eol = headers.find("\r\n");
    const std::string_view line = headers.substr(0, eol);
    headers = eol == std::string_view::npos ? std::string_view{} : headers.substr(eol + 2);
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos)
      continue;
    const std::string_view name = trim(line.substr(0, colon));
    const std::string_view value = trim(line.substr(colon + 1));
    if (iequals(name, "content-length")) {
      size_t n = 0;
      const auto [e, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
      if (ec != std::errc{} || e != value.data() + value.size()) {
        p.state = parse_state::malformed;
        p.problem = "bad Content-Length";
        return p;
      }
      content_length = n;
    } else if (iequals(name, "transfer-encoding")) {
      chunked = value.size() >= 7 && iequals(value.substr(value.size() - 7), "chunked");
    }
  }
  if (chunked) {
    p.state = dechunk(rest, p.body, p.problem);
    if (p.state == parse_state::incomplete && closed) {
      p.state = parse_state::malformed;
      p.problem = "the connection closed inside a chunked body";
    }
  } else if (content_length) {
    if (rest.size() >= *content_length) {
      p.body.assign(rest.substr(0, *content_length));
      p.state = parse_state::complete;
    } else if (closed) {
      p.state = parse_state::malformed;
      p.problem = "the connection closed before Content-Length bytes arrived";
    }
  } else if (closed) {
    p.body.assign(rest);
    p.state = parse_state::complete;
  }
  if (p.state != parse_state::complete)
    enact::detail::secure_wipe(p.body.data(), p.body.size());
  return p;
}

}  // namespace

result<http_answer> unix_http_request(const std::string& socket_path, std::string_view method, std::string_view target,
                                      std::string_view json_body, std::chrono::milliseconds timeout) {
  const std::string where = "guest agent socket " + socket_path;
  const auto failed = [&](const std::string& what) {
    return fail(tee_errc::unavailable, where + ": " + what);
  };
  const auto os_failed = [&](const std::string& what) {
    return failed(what + ": " + std::strerror(errno));
  };
  const auto deadline = clock::now() + timeout;
  const auto remaining_ms = [&]() -> int {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now());
    return left.count() <= 0 ? 0 : static_cast<int>(std::min<int64_t>(left.count(), INT32_MAX));
  };

  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (socket_path.empty() || socket_path.size() >= sizeof(addr.sun_path))
    return failed("the path is empty or longer than " + std::to_string(sizeof(addr.sun_path) - 1) + " bytes");
  std::memcpy(addr.sun_path, socket_path.data(), socket_path.size());
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return os_failed("socket");
  const socket_guard guard{fd};
  // On Linux SO_SNDTIMEO also bounds a blocking connect and each send.
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(timeout.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((timeout.count() % 1000) * 1000);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0)
    return os_failed("connect");

  std::string request = std::string(method) + " " + std::string(target) +
                        " HTTP/1.1\r\nHost: dstack\r\nConnection: close\r\nAccept: "
                        "application/json\r\nContent-Length: " +
                        std::to_string(json_body.size()) + "\r\n";
  if (!json_body.empty())
    request += "Content-Type: application/json\r\n";
  request += "\r\n";
  request += json_body;
  for (size_t sent = 0; sent < request.size();) {
    const ssize_t n = ::send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return os_failed("send");
    sent += static_cast<size_t>(n);
  }

  std::string raw;  // may hold key material
  const enact::wipe_on_exit wipe_raw(raw);
  char buf[16384];
  for (;;) {
    pollfd pfd{fd, POLLIN, 0};
    const int ready = ::poll(&pfd, 1, remaining_ms());
    if (ready < 0 && errno == EINTR)
      continue;
    if (ready < 0)
      return os_failed("poll");
    if (ready == 0)
      return fail(tee_errc::unavailable,
                  where + ": no complete answer within " + std::to_string(timeout.count()) + " ms");
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return os_failed("recv");
    raw.append(buf, static_cast<size_t>(n));
    enact::detail::secure_wipe(buf, sizeof buf);
    if (raw.size() > kMaxAnswer)
      return failed("answer larger than 16 MiB");
    parsed p = parse_answer(raw, n == 0);
    if (p.state == parse_state::malformed)
      return failed("malformed HTTP answer (" + p.problem + ")");
    if (p.state == parse_state::complete)
      return http_answer{p.status, std::move(p.body)};
  }
}

}  // namespace enact::tee::detail
