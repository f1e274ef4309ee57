// SPDX-License-Identifier: Apache-2.0
// Attacks on the server's memory and threads with requests no credential is needed for
// (docs/security.md threat model, "Bounded requests"; docs/protocol.md §6 "Connections"), each
// against a real enact-server on loopback, which must stay answerable (a normal request answered
// within 1 s) with its peak memory under 200 MB:
//   - a gzip body that inflates to 256 MiB (httplib inflated it before any limit: 415 now);
//   - header floods: 256 MiB of header lines, or thousands of tiny ones (431);
//   - bodies with no limit of their own: chunked, or with no Content-Length, streamed without end
//     (413);
//   - slow clients: 70 connections from one address trickling a header line at a time (the
//     per-client connection cap: 429 past it), and one request outliving the request deadline
//     (408).
// Distinct source addresses of 127.0.0.0/8 play distinct clients.
#include <doctest/doctest.h>
#include <zlib.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "steps.hpp"

namespace enact::itest {
namespace {

using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

constexpr size_t kMiB = 1024 * 1024;
constexpr long kPeakLimitKiB = 200 * 1000;  // 200 MB

/// The server's peak resident memory so far (VmHWM), in KiB.
long peak_kib(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line))
    if (line.starts_with("VmHWM:"))
      return std::stol(line.substr(6));
  return -1;
}

/// What arrived on `fd` within `wait` (until the peer closed or the head and its
/// Content-Length are in), and its status (0: none).
struct answer {
  int status = 0;
  std::string text;
};
answer read_answer(int fd, std::chrono::milliseconds wait) {
  answer a;
  const auto until = steady::now() + wait;
  char buf[8192];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - steady::now()).count();
    pollfd p{fd, POLLIN, 0};
    if (left <= 0 || ::poll(&p, 1, static_cast<int>(left)) != 1)
      break;
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0)
      break;
    a.text.append(buf, static_cast<size_t>(n));
    const auto head_end = a.text.find("\r\n\r\n");
    if (head_end != std::string::npos) {
      const auto cl = a.text.find("Content-Length: ");
      if (cl != std::string::npos && cl < head_end &&
          a.text.size() >= head_end + 4 + std::stoul(a.text.substr(cl + 16)))
        break;
    }
  }
  if (a.text.starts_with("HTTP/1.1 ") && a.text.size() >= 12)
    a.status = std::stoi(a.text.substr(9, 3));
  return a;
}

/// Streams `head` and then `chunk` over and over (up to `total` bytes) to `fd`, stopping as
/// soon as the server answers or stops reading; returns the answer.
answer stream_until_answered(int fd, const std::string& head, const std::string& chunk, size_t total) {
  send_raw(fd, head);
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  size_t sent = 0, off = 0;
  const auto until = steady::now() + 60s;
  while (sent < total && steady::now() < until) {
    pollfd p{fd, POLLIN | POLLOUT, 0};
    if (::poll(&p, 1, 1000) <= 0)
      continue;
    if (p.revents & (POLLIN | POLLHUP | POLLERR))
      break;  // an answer, or the server closed
    const ssize_t n = ::send(fd, chunk.data() + off, chunk.size() - off, MSG_NOSIGNAL);
    if (n < 0 && errno == EAGAIN)
      continue;
    if (n <= 0)
      break;
    sent += static_cast<size_t>(n);
    off = (off + static_cast<size_t>(n)) % chunk.size();
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return read_answer(fd, 5s);
}

/// A normal request from 127.0.0.1, answered 200 within 1 s.
bool answerable(int port) {
  httplib::Client c("127.0.0.1", port);
  c.set_connection_timeout(1s);
  c.set_read_timeout(1s);
  c.set_write_timeout(1s);
  const auto start = steady::now();
  const auto r = c.Get("/core/v1/get_node_chain_config");
  return r && r->status == 200 && steady::now() - start < 1s;
}

/// `n` bytes of zeros, gzip-compressed, made a MiB at a time.
std::string gzip_of_zeros(size_t n) {
  z_stream z{};
  REQUIRE(deflateInit2(&z, 9, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY) == Z_OK);
  const std::string zeros(kMiB, '\0');
  std::string out;
  char buf[65536];
  for (size_t done = 0; done < n; done += kMiB) {
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(zeros.data()));
    z.avail_in = static_cast<uInt>(zeros.size());
    const int flush = done + kMiB >= n ? Z_FINISH : Z_NO_FLUSH;
    do {
      z.next_out = reinterpret_cast<Bytef*>(buf);
      z.avail_out = sizeof buf;
      deflate(&z, flush);
      out.append(buf, sizeof buf - z.avail_out);
    } while (z.avail_out == 0);
  }
  deflateEnd(&z);
  return out;
}

void check_refusal_body(const answer& a, int status, std::string_view code) {
  CHECK_MESSAGE(a.status == status, a.text.substr(0, 300));
  const auto body_at = a.text.find("\r\n\r\n");
  REQUIRE(body_at != std::string::npos);
  std::error_code ec;
  const json::value body = json::parse(a.text.substr(body_at + 4), ec);
  REQUIRE_MESSAGE(!ec, a.text.substr(0, 300));
  CHECK(body.at("error").at("code").as_string() == code);
  CHECK(a.text.find("\r\nX-Request-Id: ") != std::string::npos);
}

}  // namespace

TEST_CASE("a compressed body is refused before it is inflated") {
  server_process srv;
  const std::string bomb = gzip_of_zeros(256 * kMiB);
  REQUIRE(bomb.size() < 512 * 1024);  // well within the 1 MiB body limit as sent
  const long before = peak_kib(srv.pid());
  for (const char* encoding : {"gzip", "GZip", "deflate", "br"}) {
    CAPTURE(encoding);
    const int fd = connect_from("127.0.0.1", srv.port());
    REQUIRE(fd >= 0);
    const std::string head =
        "POST /core/v1/run_action HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        "Content-Encoding: " +
        std::string(encoding) + "\r\nContent-Length: " + std::to_string(bomb.size()) + "\r\n\r\n";
    const answer a = stream_until_answered(fd, head, bomb, bomb.size());
    ::close(fd);
    check_refusal_body(a, 415, "invalid_request");
    CHECK(a.text.find("Content-Encoding") != std::string::npos);
    CHECK(answerable(srv.port()));
  }
  const long after = peak_kib(srv.pid());
  MESSAGE("peak memory: " << before / 1024 << " MiB before, " << after / 1024 << " MiB after");
  CHECK(after < kPeakLimitKiB);

  // identity is no coding: served.
  const auto r = call(srv.port(), "GET", "/core/v1/get_node_chain_config", {}, {{"Content-Encoding", "identity"}});
  CHECK_MESSAGE(r.status == 200, r.describe());
}

TEST_CASE("header floods are refused at the limit") {
  server_process srv;
  const long before = peak_kib(srv.pid());

  SUBCASE("256 MiB of header lines") {
    const int fd = connect_from("127.0.0.1", srv.port());
    REQUIRE(fd >= 0);
    const std::string line = "X-Pad: " + std::string(1000, 'a') + "\r\n";
    std::string chunk;
    while (chunk.size() < 64 * 1024)
      chunk += line;
    const answer a =
        stream_until_answered(fd, "GET /core/v1/get_node_chain_config HTTP/1.1\r\nHost: x\r\n", chunk, 256 * kMiB);
    ::close(fd);
    check_refusal_body(a, 431, "invalid_request");
  }
  SUBCASE("thousands of tiny header lines") {
    const int fd = connect_from("127.0.0.1", srv.port());
    REQUIRE(fd >= 0);
    std::string head = "GET /core/v1/get_node_chain_config HTTP/1.1\r\nHost: x\r\n";
    for (int i = 0; i < 5000; ++i)
      head += "A" + std::to_string(i) + ": b\r\n";
    head += "\r\n";
    const answer a = stream_until_answered(fd, head, " ", 0);
    ::close(fd);
    check_refusal_body(a, 431, "invalid_request");
  }
  SUBCASE("a head within the limits is served") {
    httplib::Headers many;
    for (int i = 0; i < 90; ++i)
      many.emplace("X-H" + std::to_string(i), std::string(200, 'v'));
    const auto r = call(srv.port(), "GET", "/core/v1/get_node_chain_config", {}, many);
    CHECK_MESSAGE(r.status == 200, r.describe());
  }
  CHECK(answerable(srv.port()));
  const long after = peak_kib(srv.pid());
  MESSAGE("peak memory: " << before / 1024 << " MiB before, " << after / 1024 << " MiB after");
  CHECK(after < kPeakLimitKiB);
}

TEST_CASE("bodies without a length of their own are bounded") {
  server_process srv;
  const long before = peak_kib(srv.pid());
  SUBCASE("chunked, without end") {
    const int fd = connect_from("127.0.0.1", srv.port());
    REQUIRE(fd >= 0);
    const std::string data(64 * 1024, 'x');
    char size_line[32];
    std::snprintf(size_line, sizeof size_line, "%zx\r\n", data.size());
    const std::string chunk = size_line + data + "\r\n";
    const answer a =
        stream_until_answered(fd,
                              "POST /core/v1/new_account HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                              "Transfer-Encoding: chunked\r\n\r\n",
                              chunk, 256 * kMiB);
    ::close(fd);
    check_refusal_body(a, 413, "payload_too_large");
  }
  SUBCASE("no Content-Length, without end") {
    const int fd = connect_from("127.0.0.1", srv.port());
    REQUIRE(fd >= 0);
    const answer a = stream_until_answered(
        fd, "POST /core/v1/new_account HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\r\n",
        std::string(64 * 1024, ' '), 256 * kMiB);
    ::close(fd);
    check_refusal_body(a, 413, "payload_too_large");
  }
  SUBCASE("a declared length over the limit is refused without reading it") {
    const int fd = connect_from("127.0.0.1", srv.port());
    REQUIRE(fd >= 0);
    const answer a = stream_until_answered(fd,
                                           "POST /core/v1/new_account HTTP/1.1\r\nHost: x\r\nContent-Type: "
                                           "application/json\r\nContent-Length: 1000000000\r\n\r\n",
                                           std::string(64 * 1024, ' '), 256 * kMiB);
    ::close(fd);
    check_refusal_body(a, 413, "payload_too_large");
  }
  CHECK(answerable(srv.port()));
  const long after = peak_kib(srv.pid());
  MESSAGE("peak memory: " << before / 1024 << " MiB before, " << after / 1024 << " MiB after");
  CHECK(after < kPeakLimitKiB);
}

TEST_CASE("slow clients cannot hold every thread") {
  server_process srv;  // 64 HTTP threads, 16 connections per client
  constexpr int kSlow = 70;
  std::vector<int> fds;
  for (int i = 0; i < kSlow; ++i) {
    const int fd = connect_from("127.0.0.2", srv.port());
    REQUIRE(fd >= 0);
    send_raw(fd, "GET /core/v1/get_node_chain_config HTTP/1.1\r\n");
    fds.push_back(fd);
  }
  // Past the cap, the slow client's connections are answered 429 and closed at once.
  std::this_thread::sleep_for(500ms);
  std::vector<int> held;
  int refused = 0;
  for (const int fd : fds) {
    const answer a = read_answer(fd, 20ms);
    if (a.status == 0) {
      held.push_back(fd);
      continue;
    }
    ++refused;
    check_refusal_body(a, 429, "rate_limited");
    ::close(fd);
  }
  CHECK_MESSAGE(refused >= kSlow - 16, refused << " of " << kSlow << " slow connections refused");
  // One header line per held connection every second for 6 s; meanwhile normal requests from
  // another client are answered within 1 s each.
  int answered = 0, tries = 0;
  const auto until = steady::now() + 6s;
  for (int round = 0; steady::now() < until; ++round) {
    for (const int fd : held)
      send_raw(fd, "X-Slow-" + std::to_string(round) + ": 1\r\n");
    for (int i = 0; i < 2; ++i) {
      ++tries;
      answered += answerable(srv.port()) ? 1 : 0;
      std::this_thread::sleep_for(400ms);
    }
  }
  CHECK_MESSAGE(answered == tries, answered << " of " << tries << " normal requests answered within 1 s");
  for (const int fd : held)
    ::close(fd);
  CHECK(answerable(srv.port()));
}

TEST_CASE("a request that outlives the request deadline is answered 408 and closed") {
  server_process srv({"--http-request-timeout", "2"});
  for (const bool in_body : {false, true}) {
    CAPTURE(in_body);
    const int fd = connect_from("127.0.0.1", srv.port());
    REQUIRE(fd >= 0);
    const auto start = steady::now();
    if (in_body)
      send_raw(fd,
               "POST /core/v1/new_account HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
               "Content-Length: 100\r\n\r\n");
    else
      send_raw(fd, "GET /core/v1/get_node_chain_config HTTP/1.1\r\n");
    // A byte every 300 ms: each read is well within the per-read timeout.
    answer a;
    for (int i = 0; i < 40 && a.status == 0; ++i) {
      send_raw(fd, in_body ? " " : "X: 1\r\n");
      a = read_answer(fd, 300ms);
    }
    const auto took = steady::now() - start;
    ::close(fd);
    check_refusal_body(a, 408, "invalid_request");
    CHECK(took >= 1900ms);
    CHECK(took < 4s);
  }
  CHECK(answerable(srv.port()));
}

TEST_CASE("a client's connections are counted while open only") {
  server_process srv({"--http-max-connections-per-client", "2"});
  for (int round = 0; round < 3; ++round) {
    const int a = connect_from("127.0.0.3", srv.port());
    const int b = connect_from("127.0.0.3", srv.port());
    REQUIRE((a >= 0 && b >= 0));
    for (const int fd : {a, b})
      send_raw(fd, "GET /core/v1/get_node_chain_config HTTP/1.1\r\nHost: x\r\n\r\n");
    CHECK(read_answer(a, 2s).status == 200);
    CHECK(read_answer(b, 2s).status == 200);
    const int c = connect_from("127.0.0.3", srv.port());  // a third while both are open
    send_raw(c, "GET /core/v1/get_node_chain_config HTTP/1.1\r\nHost: x\r\n\r\n");
    const answer third = read_answer(c, 2s);
    check_refusal_body(third, 429, "rate_limited");
    CHECK(third.text.find("\r\nRetry-After: 1\r\n") != std::string::npos);
    for (const int fd : {a, b, c})
      ::close(fd);
    std::this_thread::sleep_for(300ms);  // the server sees the closes
  }
  CHECK(answerable(srv.port()));  // another client is never counted against this one
}

}  // namespace enact::itest
