// SPDX-License-Identifier: Apache-2.0
// The integration tests' fixture: the real `enact-server` binary run as a child process on a
// loopback port and a fresh data directory, with its JSON log (stderr) captured to a file, plus
// raw HTTP helpers that return the status, the parsed JSON body and the headers of a response.
// Nothing here goes through the SDK's typed client: the tests speak the wire contract (docs/protocol.md)
// directly, so they check the server, not a client's view of it.
//
// Suite-wide secret scan (docs/security.md "Secret hygiene scan"): when ENACT_SECRET_SCAN_DIR is
// set, every server started here runs with --log-level debug (unless the test chose a level, by
// flag or config file), and each one leaves in $ENACT_SECRET_SCAN_DIR/<unique>/ its stderr and
// stdout, the responses http_client received from it (transcript) and the simulated TEE's root
// key of its data directory; tests/security/suite_scan_test.cpp searches them for secrets.
#pragma once

#include <httplib.h>

#include <boost/json.hpp>

#include <sys/types.h>
#include <chrono>
#include <cstdint>
#include <memory>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace enact::itest {

namespace json = boost::json;

/// One server instance's capture directory under $ENACT_SECRET_SCAN_DIR (server_process.cpp).
struct scan_capture;

/// A directory under $TMPDIR (or /tmp) created with mkdtemp and removed, recursively, on
/// destruction. Movable, so a data directory can outlive one server and serve the next.
class temp_dir {
 public:
  temp_dir();
  ~temp_dir();
  temp_dir(temp_dir&& other) noexcept;
  temp_dir& operator=(temp_dir&& other) noexcept;
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  std::string path_;
};

/// How a child process ended.
struct exit_status {
  bool exited = false;  // by exit(); otherwise killed by `signal`
  int code = -1;
  int signal = 0;
  [[nodiscard]] bool clean() const { return exited && code == 0; }
};

/// One response as the wire carried it.
struct response {
  int status = 0;    // 0: no response (connection error)
  std::string text;  // the raw body
  json::value body;  // parsed JSON body; null when the body is not JSON
  httplib::Headers headers;
  [[nodiscard]] std::string header(const std::string& name) const;
  [[nodiscard]] bool has_header(const std::string& name) const;
  /// body.error.code, or "" when the body is no error body.
  [[nodiscard]] std::string error_code() const;
  /// body.error.message, or "".
  [[nodiscard]] std::string error_message() const;
  /// The body as an object (throws when it is not one).
  [[nodiscard]] const json::object& obj() const { return body.as_object(); }
  /// A short description for failure messages: status, body.
  [[nodiscard]] std::string describe() const;
};

/// Request headers carrying a credential as X-Api-Key.
[[nodiscard]] httplib::Headers api_key(const std::string& key);
/// Request headers carrying a credential as Authorization: Bearer.
[[nodiscard]] httplib::Headers bearer(const std::string& key);

/// The response of an httplib request: status, body, headers and the body parsed as JSON (status 0
/// when there was none).
[[nodiscard]] response to_response(const httplib::Result& r);

/// One request on a fresh connection to 127.0.0.1:`port`, with any of GET, POST, PUT, PATCH and
/// DELETE and exactly the headers given; not recorded for the secret scan.
response call(int port, const std::string& method, const std::string& path, const std::string& body = {},
              const httplib::Headers& headers = {}, const std::string& content_type = "application/json");

/// Serves `server` (its routes set) on a free loopback port from a thread of its own, until
/// stop() or destruction.
class serving {
 public:
  explicit serving(httplib::Server& server);
  ~serving() { stop(); }
  serving(const serving&) = delete;
  serving& operator=(const serving&) = delete;
  [[nodiscard]] int port() const { return port_; }
  /// http://127.0.0.1:<port>
  [[nodiscard]] std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  void stop();

 private:
  httplib::Server& server_;
  int port_ = 0;
  std::thread thread_;
};

/// A header the client replaces, request by request, with an X-Wallet-Auth bound to that request
/// (docs/protocol.md §2 "Envelope version 2"): its value is "<wallet key hex> <chain id> <registry
/// address> [issuedAt]". Made by steps.hpp wallet_auth; never sent.
inline constexpr std::string_view kWalletKeyHeader = "X-Test-Wallet-Key";

/// A raw HTTP client of one server; use one per thread. Without keep_alive every request has its
/// own connection, so no idle connection delays the server's shutdown (httplib waits for an idle
/// keep-alive connection up to its keep-alive timeout); with it, destroy the client before
/// stopping the server.
class http_client {
 public:
  http_client(std::string host, int port, bool keep_alive = false);
  /// Any method and path (the path as sent, with its query string).
  response request(const std::string& method, const std::string& path, const std::string& body = {},
                   const httplib::Headers& headers = {}, const std::string& content_type = "application/json");
  /// GET /core/v1<path>.
  response get(const std::string& path, const httplib::Headers& headers = {});
  /// POST /core/v1<path> with a raw body.
  response post_raw(const std::string& path, const std::string& body, const httplib::Headers& headers = {});
  /// POST /core/v1<path> with a JSON body.
  response post(const std::string& path, const json::value& body, const httplib::Headers& headers = {});

 private:
  httplib::Client cli_;
  std::shared_ptr<scan_capture> capture_;  // the server on this port, when scanning
};

/// The `enact-server` binary as a child process.
class server_process {
 public:
  /// Starts the server on 127.0.0.1:0 with `extra_flags`; its data directory is `data_dir`, or a
  /// fresh temporary directory (removed at the end) when empty. Throws std::runtime_error when the
  /// server does not print its banner (it exited, or took over 30 s).
  explicit server_process(std::vector<std::string> extra_flags = {}, std::string data_dir = {});
  ~server_process();
  server_process(const server_process&) = delete;
  server_process& operator=(const server_process&) = delete;

  [[nodiscard]] int port() const { return port_; }
  [[nodiscard]] const std::string& data_dir() const { return data_dir_; }
  [[nodiscard]] const std::string& log_path() const { return log_path_; }
  [[nodiscard]] pid_t pid() const { return pid_; }
  [[nodiscard]] bool running() const { return pid_ > 0; }

  /// A new client of this server.
  [[nodiscard]] http_client client(bool keep_alive = false) const {
    return http_client("127.0.0.1", port_, keep_alive);
  }

  /// SIGTERM, then waits for the process (SIGKILL after 30 s). Idempotent: later calls return the
  /// first status.
  exit_status stop();

  /// The captured stderr so far.
  [[nodiscard]] std::string log_text() const;
  /// The stderr lines that are JSON objects (the server's structured log), in order.
  [[nodiscard]] std::vector<json::object> log_lines() const;
  /// The request log lines (msg "request") whose request_id is `id`.
  [[nodiscard]] std::vector<json::object> request_lines(std::string_view id) const;
  /// Same, once at least one is there: the server writes its log asynchronously, so a line may
  /// follow its response by a moment. Waits at most `timeout`; returns what is there then.
  [[nodiscard]] std::vector<json::object> await_request_lines(
      std::string_view id, std::chrono::milliseconds timeout = std::chrono::seconds(10)) const;
  /// Waits (at most `timeout`) until the log holds at least `n` request lines; returns them all.
  [[nodiscard]] std::vector<json::object> await_request_count(
      size_t n, std::chrono::milliseconds timeout = std::chrono::seconds(10)) const;

 private:
  std::optional<temp_dir> own_dir_;
  temp_dir work_;  // stderr log file
  std::string data_dir_;
  std::string log_path_;
  pid_t pid_ = -1;
  int stdout_fd_ = -1;
  int port_ = 0;
  std::optional<exit_status> status_;
  std::string banner_;                     // stdout read while waiting for the banner
  std::shared_ptr<scan_capture> capture_;  // when ENACT_SECRET_SCAN_DIR is set
};

/// Runs `enact-server` with `args` until it exits (at most 30 s, then SIGKILL) and returns how
/// it ended and what it wrote to stderr; for servers that must refuse to start.
struct finished_run {
  exit_status status;
  std::string stderr_text;
  std::string stdout_text;
};
[[nodiscard]] finished_run run_to_exit(const std::vector<std::string>& args);

/// For a server a test ran without this fixture: keeps its arguments, output and the data
/// directory's root key for the suite-wide secret scan (nothing when ENACT_SECRET_SCAN_DIR is
/// unset). Such servers should run with --log-level debug.
void keep_for_secret_scan(const std::vector<std::string>& args, const std::string& stdout_text,
                          const std::string& stderr_text, const std::string& data_dir);

/// Path of the enact-server binary under test: $ENACT_SERVER_BINARY when set, else the one built
/// with the tests.
[[nodiscard]] std::string server_binary();

/// Unix seconds now.
[[nodiscard]] int64_t unix_now();

/// `items` of a list response, fetched page by page until `total` is reached (page size 100).
/// Throws std::runtime_error on any non-200 answer.
[[nodiscard]] std::vector<json::object> list_all(http_client& c, const std::string& path,
                                                 const httplib::Headers& headers);

/// Sets an environment variable for the servers started while it lives (they inherit it), then
/// restores it.
class scoped_env {
 public:
  scoped_env(std::string name, const std::string& value) : name_(std::move(name)) {
    if (const char* old = std::getenv(name_.c_str()))
      old_ = old;
    ::setenv(name_.c_str(), value.c_str(), 1);
  }
  ~scoped_env() {
    if (old_)
      ::setenv(name_.c_str(), old_->c_str(), 1);
    else
      ::unsetenv(name_.c_str());
  }
  scoped_env(const scoped_env&) = delete;
  scoped_env& operator=(const scoped_env&) = delete;

 private:
  std::string name_;
  std::optional<std::string> old_;
};

}  // namespace enact::itest
