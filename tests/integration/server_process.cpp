// SPDX-License-Identifier: Apache-2.0
#include "server_process.hpp"

#include "enact/address.hpp"
#include "enact/codec/hex.hpp"
#include "enact/eip712/envelope.hpp"
#include "enact/secret.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <ctime>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace enact::itest {

/// Where one server instance's output is kept for the suite-wide secret scan. The transcript is
/// a sequence of records "=== <status> <method> <path> <body bytes>\n<body>\n", appended under
/// `mu` (the clients of one server may run on several threads).
struct scan_capture {
  std::string dir;
  std::mutex mu;
  std::ofstream transcript;
};

namespace {

using steady = std::chrono::steady_clock;
constexpr auto kStartTimeout = std::chrono::seconds(30);
constexpr auto kStopTimeout = std::chrono::seconds(30);

std::string read_whole_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

exit_status decode_status(int raw) {
  exit_status s;
  if (WIFEXITED(raw)) {
    s.exited = true;
    s.code = WEXITSTATUS(raw);
  } else if (WIFSIGNALED(raw)) {
    s.signal = WTERMSIG(raw);
  }
  return s;
}

/// waitpid with a deadline; SIGKILL when it passes.
exit_status wait_for(pid_t pid, std::chrono::seconds timeout) {
  const auto deadline = steady::now() + timeout;
  int raw = 0;
  for (;;) {
    const pid_t r = ::waitpid(pid, &raw, WNOHANG);
    if (r == pid)
      return decode_status(raw);
    if (r < 0 && errno != EINTR)
      throw std::runtime_error(std::string("waitpid: ") + std::strerror(errno));
    if (steady::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &raw, 0);
      exit_status s = decode_status(raw);
      s.exited = false;  // a hang is never a clean exit
      return s;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

/// fork + exec of the server with stdout to `stdout_fd` and stderr to `stderr_fd`. Everything the
/// child touches is prepared before fork, so the child only calls async-signal-safe functions.
pid_t spawn(const std::vector<std::string>& args, int stdout_fd, int stderr_fd) {
  const std::string bin = server_binary();
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(bin.c_str()));
  for (const auto& a : args)
    argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0)
    throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    // A test process that dies without stopping its servers takes them with it.
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    const int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0)
      ::dup2(devnull, 0);
    ::dup2(stdout_fd, 1);
    ::dup2(stderr_fd, 2);
    // Nothing else of the test process (other servers' pipes, sockets) leaks into the child.
    for (int fd = 3; fd < 4096; ++fd)
      ::close(fd);
    ::execv(argv[0], argv.data());
    static const char msg[] = "exec of enact-server failed\n";
    [[maybe_unused]] auto n = ::write(2, msg, sizeof msg - 1);
    ::_exit(127);
  }
  return pid;
}

// --- suite-wide secret scan capture --------------------------------------------------------------

std::mutex g_scan_mu;
// The capture of the server listening on each port, for the clients created for that port.
std::map<int, std::weak_ptr<scan_capture>> g_scan_by_port;
std::atomic<uint64_t> g_scan_seq{0};

std::string scan_root() {
  const char* d = std::getenv("ENACT_SECRET_SCAN_DIR");
  return d != nullptr ? std::string(d) : std::string();
}

std::string program_name() {
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("test") : exe.filename().string();
}

/// A fresh capture directory for one server instance, or null when the scan is off. `command`
/// (the arguments after the binary) is kept beside the output: the scanner reads from it which
/// runs print a secret on purpose (issue-token).
std::shared_ptr<scan_capture> open_capture(std::string_view kind, const std::vector<std::string>& command) {
  const std::string root = scan_root();
  if (root.empty())
    return nullptr;
  auto cap = std::make_shared<scan_capture>();
  cap->dir = root + "/" + program_name() + "-" + std::to_string(::getpid()) + "-" + std::to_string(++g_scan_seq) + "-" +
             std::string(kind);
  std::error_code ec;
  std::filesystem::create_directories(cap->dir, ec);
  if (ec)
    throw std::runtime_error("ENACT_SECRET_SCAN_DIR: cannot create " + cap->dir + ": " + ec.message());
  std::ofstream cmd(cap->dir + "/command", std::ios::binary);
  for (const auto& a : command)
    cmd << a << '\n';
  cap->transcript.open(cap->dir + "/transcript", std::ios::binary | std::ios::app);
  return cap;
}

/// Whether the arguments choose a log level: --log-level, or a --config file with log_level.
bool chooses_log_level(const std::vector<std::string>& args) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--log-level" || a.starts_with("--log-level="))
      return true;
    std::string config;
    if (a == "--config" && i + 1 < args.size())
      config = args[i + 1];
    else if (a.starts_with("--config="))
      config = a.substr(9);
    if (!config.empty() && read_whole_file(config).find("log_level") != std::string::npos)
      return true;
  }
  return false;
}

void keep_text(const scan_capture& cap, const std::string& name, const std::string& text) {
  std::ofstream(cap.dir + "/" + name, std::ios::binary) << text;
}

/// Copies the simulated TEE's root key of `data_dir` (server/tee/simulated_tee.cpp), if any.
void keep_root_key(const scan_capture& cap, const std::string& data_dir) {
  if (data_dir.empty())
    return;
  const std::string path = data_dir + "/tee-root.key";
  std::error_code ec;
  if (std::filesystem::is_regular_file(path, ec))
    keep_text(cap, "tee-root.key", read_whole_file(path));
}

/// The value of `--data-dir` in `args`, or "".
std::string data_dir_of(const std::vector<std::string>& args) {
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--data-dir" && i + 1 < args.size())
      return args[i + 1];
    if (args[i].starts_with("--data-dir="))
      return args[i].substr(11);
  }
  return {};
}

/// What is left in a pipe whose writer exited (at most `timeout` of waiting for the rest).
std::string drain(int fd, std::chrono::milliseconds timeout) {
  std::string out;
  const auto deadline = steady::now() + timeout;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - steady::now());
    if (left.count() <= 0)
      return out;
    pollfd p{fd, POLLIN, 0};
    const int n = ::poll(&p, 1, static_cast<int>(left.count()));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return out;
    char buf[4096];
    const ssize_t got = ::read(fd, buf, sizeof buf);
    if (got < 0 && errno == EINTR)
      continue;
    if (got <= 0)
      return out;
    out.append(buf, static_cast<size_t>(got));
  }
}

}  // namespace

// --- temp_dir -----------------------------------------------------------------------------------

temp_dir::temp_dir() {
  const char* base = std::getenv("TMPDIR");
  std::string templ = std::string(base != nullptr && *base != '\0' ? base : "/tmp") + "/enact-itest-XXXXXX";
  if (::mkdtemp(templ.data()) == nullptr)
    throw std::runtime_error(std::string("mkdtemp: ") + std::strerror(errno));
  path_ = templ;
}

temp_dir::~temp_dir() {
  if (!path_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
}

temp_dir::temp_dir(temp_dir&& other) noexcept : path_(std::move(other.path_)) { other.path_.clear(); }

temp_dir& temp_dir::operator=(temp_dir&& other) noexcept {
  if (this != &other) {
    if (!path_.empty()) {
      std::error_code ec;
      std::filesystem::remove_all(path_, ec);
    }
    path_ = std::move(other.path_);
    other.path_.clear();
  }
  return *this;
}

// --- response -----------------------------------------------------------------------------------

std::string response::header(const std::string& name) const {
  const auto it = headers.find(name);  // httplib::Headers compares names case-insensitively
  return it == headers.end() ? std::string() : it->second;
}

bool response::has_header(const std::string& name) const { return headers.find(name) != headers.end(); }

namespace {

/// error.<field> of an error body as a string ("" when the body has none).
std::string error_field(const json::value& body, std::string_view field) {
  const auto* o = body.if_object();
  if (o == nullptr)
    return {};
  const auto* e = o->if_contains("error");
  if (e == nullptr || !e->is_object())
    return {};
  const auto* v = e->as_object().if_contains(field);
  return v != nullptr && v->is_string() ? std::string(v->get_string()) : std::string();
}

}  // namespace

std::string response::error_code() const { return error_field(body, "code"); }

std::string response::error_message() const { return error_field(body, "message"); }

std::string response::describe() const {
  std::string t = text.size() > 600 ? text.substr(0, 600) + "…" : text;
  return std::to_string(status) + " " + t;
}

httplib::Headers api_key(const std::string& key) { return httplib::Headers{{"X-Api-Key", key}}; }

httplib::Headers bearer(const std::string& key) { return httplib::Headers{{"Authorization", "Bearer " + key}}; }

// --- http_client --------------------------------------------------------------------------------

http_client::http_client(std::string host, int port, bool keep_alive) : cli_(std::move(host), port) {
  cli_.set_keep_alive(keep_alive);
  cli_.set_tcp_nodelay(true);  // headers and body go out as separate writes: no Nagle delay
  cli_.set_connection_timeout(10);
  cli_.set_read_timeout(30);
  cli_.set_write_timeout(30);
  if (!scan_root().empty()) {
    const std::lock_guard lock(g_scan_mu);
    if (const auto it = g_scan_by_port.find(port); it != g_scan_by_port.end())
      capture_ = it->second.lock();
  }
}

response to_response(const httplib::Result& r) {
  response out;
  if (!r)
    return out;
  out.status = r->status;
  out.text = r->body;
  out.headers = r->headers;
  std::error_code ec;
  auto v = json::parse(out.text, ec);
  if (!ec)
    out.body = std::move(v);
  return out;
}

namespace {

httplib::Result send_request(httplib::Client& cli, const std::string& method, const std::string& path,
                             const std::string& body, const httplib::Headers& headers,
                             const std::string& content_type) {
  if (method == "GET")
    return cli.Get(path, headers);
  if (method == "POST")
    return cli.Post(path, headers, body, content_type);
  if (method == "PUT")
    return cli.Put(path, headers, body, content_type);
  if (method == "PATCH")
    return cli.Patch(path, headers, body, content_type);
  if (method == "DELETE")
    return cli.Delete(path, headers, body, content_type);
  throw std::invalid_argument("unsupported method " + method);
}

}  // namespace

response call(int port, const std::string& method, const std::string& path, const std::string& body,
              const httplib::Headers& headers, const std::string& content_type) {
  httplib::Client cli("127.0.0.1", port);
  cli.set_connection_timeout(10);
  cli.set_read_timeout(30);
  return to_response(send_request(cli, method, path, body, headers, content_type));
}

serving::serving(httplib::Server& server) : server_(server), port_(server.bind_to_any_port("127.0.0.1")) {
  if (port_ <= 0)
    throw std::runtime_error("serving: cannot bind a loopback port");
  thread_ = std::thread([this] { server_.listen_after_bind(); });
  // The socket is bound and listening already; wait for the accept loop so stop() takes.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!server_.is_running() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

void serving::stop() {
  if (thread_.joinable()) {
    server_.stop();
    thread_.join();
  }
}

namespace {

/// kWalletKeyHeader's value ("<key hex> <chain id> <registry> [issuedAt]") made into the
/// X-Wallet-Auth of this request: a version 2 BillingAuth bound to its method, target and body.
httplib::Headers sign_wallet_auth(const std::string& method, const std::string& path, const std::string& body,
                                  const httplib::Headers& headers) {
  const auto it = headers.find(std::string(kWalletKeyHeader));
  if (it == headers.end())
    return headers;
  std::istringstream in(it->second);
  std::string key_hex, contract;
  uint64_t chain = 0;
  uint64_t issued_at = 0;
  in >> key_hex >> chain >> contract;
  if (!(in >> issued_at))
    issued_at = static_cast<uint64_t>(std::time(nullptr));
  const Secret key(codec::hex::decode_prefixed(key_hex).value());
  const eip712::envelope::deployment d{chain, parse_address(contract).value()};
  auto env = eip712::envelope::sign_billing(d, key, issued_at, eip712::envelope::bind_request(method, path, body));
  httplib::Headers out = headers;
  out.erase(std::string(kWalletKeyHeader));
  out.emplace("X-Wallet-Auth", eip712::envelope::encode_wallet_auth(env.value()));
  return out;
}

}  // namespace

response http_client::request(const std::string& method, const std::string& path, const std::string& body,
                              const httplib::Headers& given, const std::string& content_type) {
  const httplib::Headers headers = sign_wallet_auth(method, path, body, given);
  response out = to_response(send_request(cli_, method, path, body, headers, content_type));
  if (out.status != 0 && capture_) {
    std::string where = method + " " + path;
    for (char& ch : where)
      if (static_cast<unsigned char>(ch) < 0x20)
        ch = '?';  // one header line per record
    const std::lock_guard lock(capture_->mu);
    capture_->transcript << "=== " << out.status << ' ' << where << ' ' << out.text.size() << '\n' << out.text << '\n';
    capture_->transcript.flush();
  }
  return out;
}

response http_client::get(const std::string& path, const httplib::Headers& headers) {
  return request("GET", "/core/v1" + path, {}, headers);
}

response http_client::post_raw(const std::string& path, const std::string& body, const httplib::Headers& headers) {
  return request("POST", "/core/v1" + path, body, headers);
}

response http_client::post(const std::string& path, const json::value& body, const httplib::Headers& headers) {
  return post_raw(path, json::serialize(body), headers);
}

// --- server_process -----------------------------------------------------------------------------

std::string server_binary() {
  // ENACT_SERVER_BINARY in the environment runs the suite against another build (an installed
  // server, a sanitizer build); the default is the one built with the tests.
  if (const char* other = std::getenv("ENACT_SERVER_BINARY"); other != nullptr && *other != '\0')
    return other;
  return ENACT_SERVER_BINARY;
}

int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

server_process::server_process(std::vector<std::string> extra_flags, std::string data_dir) {
  if (data_dir.empty()) {
    own_dir_.emplace();
    data_dir = own_dir_->path() + "/data";
  }
  data_dir_ = std::move(data_dir);
  log_path_ = work_.path() + "/stderr.log";

  std::vector<std::string> args{"--listen", "127.0.0.1:0", "--data-dir", data_dir_};
  args.insert(args.end(), extra_flags.begin(), extra_flags.end());
  capture_ = open_capture("server", args);
  if (capture_ && !chooses_log_level(extra_flags)) {
    args.push_back("--log-level");
    args.push_back("debug");
  }

  int out_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0)
    throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  const int log_fd = ::open(log_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (log_fd < 0) {
    ::close(out_pipe[0]);
    ::close(out_pipe[1]);
    throw std::runtime_error("cannot create " + log_path_);
  }
  try {
    pid_ = spawn(args, out_pipe[1], log_fd);
  } catch (...) {
    ::close(out_pipe[0]);
    ::close(out_pipe[1]);
    ::close(log_fd);
    throw;
  }
  ::close(out_pipe[1]);
  ::close(log_fd);
  stdout_fd_ = out_pipe[0];

  // The first stdout line is the banner "enact-server 0.1.0 listening on http://127.0.0.1:PORT".
  std::string first;
  const auto deadline = steady::now() + kStartTimeout;
  bool eof = false;
  while (first.find('\n') == std::string::npos && !eof) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - steady::now());
    if (left.count() <= 0)
      break;
    pollfd p{stdout_fd_, POLLIN, 0};
    const int n = ::poll(&p, 1, static_cast<int>(left.count()));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    char buf[512];
    const ssize_t got = ::read(stdout_fd_, buf, sizeof buf);
    if (got < 0 && errno == EINTR)
      continue;
    if (got <= 0)
      eof = true;
    else
      first.append(buf, static_cast<size_t>(got));
  }
  banner_ = first;
  const std::string line = first.substr(0, first.find('\n'));
  const std::string marker = "listening on http://127.0.0.1:";
  const auto at = line.find(marker);
  if (line.starts_with("enact-server ") && at != std::string::npos)
    port_ = std::atoi(line.c_str() + at + marker.size());
  if (port_ > 0 && capture_) {
    const std::lock_guard lock(g_scan_mu);
    g_scan_by_port[port_] = capture_;
  }
  if (port_ <= 0) {
    const exit_status s = stop();
    throw std::runtime_error("enact-server did not start (exit " + std::to_string(s.code) + ", signal " +
                             std::to_string(s.signal) + "); stdout: " + first + "; stderr: " + log_text());
  }
}

server_process::~server_process() { stop(); }

exit_status server_process::stop() {
  if (status_)
    return *status_;
  if (pid_ <= 0)
    return exit_status{};
  ::kill(pid_, SIGTERM);
  status_ = wait_for(pid_, kStopTimeout);
  pid_ = -1;
  std::string rest;
  if (stdout_fd_ >= 0) {
    if (capture_)
      rest = drain(stdout_fd_, std::chrono::seconds(2));
    ::close(stdout_fd_);
    stdout_fd_ = -1;
  }
  if (capture_) {
    {
      const std::lock_guard lock(g_scan_mu);
      const auto it = g_scan_by_port.find(port_);
      if (it != g_scan_by_port.end() && it->second.lock() == capture_)
        g_scan_by_port.erase(it);
    }
    keep_text(*capture_, "stdout.log", banner_ + rest);
    keep_text(*capture_, "stderr.log", log_text());
    keep_root_key(*capture_, data_dir_);
  }
  return *status_;
}

std::string server_process::log_text() const { return read_whole_file(log_path_); }

std::vector<json::object> server_process::log_lines() const {
  std::vector<json::object> out;
  std::istringstream in(log_text());
  std::string line;
  while (std::getline(in, line)) {
    std::error_code ec;
    auto v = json::parse(line, ec);
    if (!ec && v.is_object())
      out.push_back(std::move(v.as_object()));
  }
  return out;
}

std::vector<json::object> server_process::request_lines(std::string_view id) const {
  std::vector<json::object> out;
  for (auto& l : log_lines()) {
    const auto* rid = l.if_contains("request_id");
    const auto* msg = l.if_contains("msg");
    if (rid != nullptr && rid->is_string() && rid->get_string() == id && msg != nullptr && msg->is_string() &&
        msg->get_string() == "request")
      out.push_back(std::move(l));
  }
  return out;
}

std::vector<json::object> server_process::await_request_lines(std::string_view id,
                                                              std::chrono::milliseconds timeout) const {
  const auto deadline = steady::now() + timeout;
  for (;;) {
    auto lines = request_lines(id);
    if (!lines.empty() || steady::now() > deadline)
      return lines;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

std::vector<json::object> server_process::await_request_count(size_t n, std::chrono::milliseconds timeout) const {
  const auto deadline = steady::now() + timeout;
  for (;;) {
    std::vector<json::object> out;
    for (auto& l : log_lines()) {
      const auto* msg = l.if_contains("msg");
      if (msg != nullptr && msg->is_string() && msg->get_string() == "request")
        out.push_back(std::move(l));
    }
    if (out.size() >= n || steady::now() > deadline)
      return out;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

finished_run run_to_exit(const std::vector<std::string>& given) {
  std::vector<std::string> args = given;
  const auto capture = open_capture("run", given);
  // Subcommands (issue-token, deploy-registry, ...) take their own flags.
  if (capture && (args.empty() || args[0].starts_with("-")) && !chooses_log_level(args)) {
    args.push_back("--log-level");
    args.push_back("debug");
  }
  temp_dir work;
  const std::string out_path = work.path() + "/stdout.log";
  const std::string err_path = work.path() + "/stderr.log";
  const int out_fd = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  const int err_fd = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (out_fd < 0 || err_fd < 0)
    throw std::runtime_error("cannot create log files in " + work.path());
  const pid_t pid = spawn(args, out_fd, err_fd);
  ::close(out_fd);
  ::close(err_fd);
  finished_run r;
  r.status = wait_for(pid, kStopTimeout);
  r.stdout_text = read_whole_file(out_path);
  r.stderr_text = read_whole_file(err_path);
  if (capture) {
    keep_text(*capture, "stdout.log", r.stdout_text);
    keep_text(*capture, "stderr.log", r.stderr_text);
    keep_root_key(*capture, data_dir_of(given));
  }
  return r;
}

void keep_for_secret_scan(const std::vector<std::string>& args, const std::string& stdout_text,
                          const std::string& stderr_text, const std::string& data_dir) {
  const auto capture = open_capture("other", args);
  if (!capture)
    return;
  keep_text(*capture, "stdout.log", stdout_text);
  keep_text(*capture, "stderr.log", stderr_text);
  keep_root_key(*capture, data_dir);
}

std::vector<json::object> list_all(http_client& c, const std::string& path, const httplib::Headers& headers) {
  std::vector<json::object> out;
  const char sep = path.find('?') == std::string::npos ? '?' : '&';
  for (uint64_t page = 1;; ++page) {
    const response r = c.get(path + sep + "page_size=100&page_number=" + std::to_string(page), headers);
    if (r.status != 200)
      throw std::runtime_error("GET " + path + ": " + r.describe());
    const auto& items = r.obj().at("items").as_array();
    for (const auto& it : items)
      out.push_back(it.as_object());
    const uint64_t total = r.obj().at("total").to_number<uint64_t>();
    if (items.empty() || out.size() >= total)
      break;
  }
  return out;
}

}  // namespace enact::itest
