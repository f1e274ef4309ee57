#include "server_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace enact::itest {
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

}  // namespace

// --- temp_dir -----------------------------------------------------------------------------------

temp_dir::temp_dir() {
  const char* base = std::getenv("TMPDIR");
  std::string templ =
      std::string(base != nullptr && *base != '\0' ? base : "/tmp") + "/enact-itest-XXXXXX";
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

temp_dir::temp_dir(temp_dir&& other) noexcept : path_(std::move(other.path_)) {
  other.path_.clear();
}

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

bool response::has_header(const std::string& name) const {
  return headers.find(name) != headers.end();
}

std::string response::error_code() const {
  const auto* o = body.if_object();
  if (o == nullptr)
    return {};
  const auto* e = o->if_contains("error");
  if (e == nullptr || !e->is_object())
    return {};
  const auto* c = e->as_object().if_contains("code");
  return c != nullptr && c->is_string() ? std::string(c->get_string()) : std::string();
}

std::string response::error_message() const {
  const auto* o = body.if_object();
  if (o == nullptr)
    return {};
  const auto* e = o->if_contains("error");
  if (e == nullptr || !e->is_object())
    return {};
  const auto* m = e->as_object().if_contains("message");
  return m != nullptr && m->is_string() ? std::string(m->get_string()) : std::string();
}

std::string response::describe() const {
  std::string t = text.size() > 600 ? text.substr(0, 600) + "…" : text;
  return std::to_string(status) + " " + t;
}

httplib::Headers api_key(const std::string& key) {
  return httplib::Headers{{"X-Api-Key", key}};
}

httplib::Headers bearer(const std::string& key) {
  return httplib::Headers{{"Authorization", "Bearer " + key}};
}

// --- http_client --------------------------------------------------------------------------------

http_client::http_client(std::string host, int port, bool keep_alive)
    : cli_(std::move(host), port) {
  cli_.set_keep_alive(keep_alive);
  cli_.set_tcp_nodelay(true);  // headers and body go out as separate writes: no Nagle delay
  cli_.set_connection_timeout(10);
  cli_.set_read_timeout(30);
  cli_.set_write_timeout(30);
}

response http_client::request(const std::string& method,
                              const std::string& path,
                              const std::string& body,
                              const httplib::Headers& headers,
                              const std::string& content_type) {
  auto r = [&] {
    if (method == "GET")
      return cli_.Get(path, headers);
    if (method == "POST")
      return cli_.Post(path, headers, body, content_type);
    if (method == "PUT")
      return cli_.Put(path, headers, body, content_type);
    if (method == "DELETE")
      return cli_.Delete(path, headers, body, content_type);
    throw std::invalid_argument("http_client: unsupported method " + method);
  }();
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

response http_client::get(const std::string& path, const httplib::Headers& headers) {
  return request("GET", "/core/v1" + path, {}, headers);
}

response http_client::post_raw(const std::string& path,
                               const std::string& body,
                               const httplib::Headers& headers) {
  return request("POST", "/core/v1" + path, body, headers);
}

response http_client::post(const std::string& path,
                           const json::value& body,
                           const httplib::Headers& headers) {
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
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
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
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - steady::now());
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
  const std::string line = first.substr(0, first.find('\n'));
  const std::string marker = "listening on http://127.0.0.1:";
  const auto at = line.find(marker);
  if (line.starts_with("enact-server ") && at != std::string::npos)
    port_ = std::atoi(line.c_str() + at + marker.size());
  if (port_ <= 0) {
    const exit_status s = stop();
    throw std::runtime_error("enact-server did not start (exit " + std::to_string(s.code) +
                             ", signal " + std::to_string(s.signal) + "); stdout: " + first +
                             "; stderr: " + log_text());
  }
}

server_process::~server_process() {
  stop();
}

exit_status server_process::stop() {
  if (status_)
    return *status_;
  if (pid_ <= 0)
    return exit_status{};
  ::kill(pid_, SIGTERM);
  status_ = wait_for(pid_, kStopTimeout);
  pid_ = -1;
  if (stdout_fd_ >= 0) {
    ::close(stdout_fd_);
    stdout_fd_ = -1;
  }
  return *status_;
}

std::string server_process::log_text() const {
  return read_whole_file(log_path_);
}

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
    if (rid != nullptr && rid->is_string() && rid->get_string() == id && msg != nullptr &&
        msg->is_string() && msg->get_string() == "request")
      out.push_back(std::move(l));
  }
  return out;
}

std::vector<json::object> server_process::await_request_lines(
    std::string_view id,
    std::chrono::milliseconds timeout) const {
  const auto deadline = steady::now() + timeout;
  for (;;) {
    auto lines = request_lines(id);
    if (!lines.empty() || steady::now() > deadline)
      return lines;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

std::vector<json::object> server_process::await_request_count(
    size_t n,
    std::chrono::milliseconds timeout) const {
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

finished_run run_to_exit(const std::vector<std::string>& args) {
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
  return r;
}

std::vector<json::object> list_all(http_client& c,
                                   const std::string& path,
                                   const httplib::Headers& headers) {
  std::vector<json::object> out;
  const char sep = path.find('?') == std::string::npos ? '?' : '&';
  for (uint64_t page = 1;; ++page) {
    const response r =
        c.get(path + sep + "page_size=100&page_number=" + std::to_string(page), headers);
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
