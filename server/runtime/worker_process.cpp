// SPDX-License-Identifier: Apache-2.0
// A worker process of the pool (worker_process.hpp): how it is spawned with nothing inherited but
// its channel, how its ready report is read and checked against /proc, how it is killed.
#include "runtime/worker_process.hpp"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/json/parse.hpp>

#include <cerrno>
#include <vector>

#include "runtime/channel.hpp"

namespace json = boost::json;

namespace enact::runtime {

std::string default_worker_path() {
  char exe[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) {
    std::string dir(exe, static_cast<size_t>(n));
    dir.resize(dir.rfind('/') + 1);
    if (const std::string beside = dir + "enact-worker"; ::access(beside.c_str(), X_OK) == 0) {
      return beside;
    }
  }
  if (::access(ENACT_WORKER_INSTALL_PATH, X_OK) == 0)
    return ENACT_WORKER_INSTALL_PATH;
  return ENACT_WORKER_BUILD_PATH;
}

namespace {

constexpr size_t kMaxHelloBytes = 64u << 10;

const json::string* string_field(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  return v != nullptr ? v->if_string() : nullptr;
}

isolation_report parse_isolation(const json::object& o) {
  const auto flag = [&](std::string_view key) {
    const json::value* v = o.if_contains(key);
    return v != nullptr && v->is_bool() && v->get_bool();
  };
  isolation_report r;
  r.empty_environment = flag("empty_environment");
  r.fds_closed = flag("fds_closed");
  r.network_namespace = flag("network_namespace");
  r.dropped_privileges = flag("dropped_privileges");
  r.rlimits = flag("rlimits");
  r.no_new_privs = flag("no_new_privs");
  r.seccomp = flag("seccomp");
  if (const json::string* notes = string_field(o, "notes"))
    r.notes = std::string(*notes);
  return r;
}

std::string read_small_file(const std::string& path) {
  std::string out;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return out;
  char buf[4096];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0 && out.size() < (64u << 10);)
    out.append(buf, static_cast<size_t>(n));
  ::close(fd);
  return out;
}

// "Seccomp" → "2" from /proc/<pid>/status; "" when absent.
std::string status_field(const std::string& status, std::string_view key) {
  for (size_t at = 0; at < status.size();) {
    size_t end = status.find('\n', at);
    if (end == std::string::npos)
      end = status.size();
    const std::string_view line(status.data() + at, end - at);
    if (line.size() > key.size() && line.starts_with(key) && line[key.size()] == ':') {
      const size_t v = line.find_first_not_of(" \t", key.size() + 1);
      return v == std::string_view::npos ? std::string() : std::string(line.substr(v));
    }
    at = end + 1;
  }
  return {};
}

// The report is the worker's own word, given before anything ran in it. Where the kernel shows a
// layer in /proc, it must agree, or the layer counts as missing: a slip in the confinement code
// must not pass for isolation.
void cross_check(int pid, isolation_report& r) {
  const std::string base = "/proc/" + std::to_string(pid);
  const std::string status = read_small_file(base + "/status");
  if (status.empty())
    return;  // gone already: its channel tells the rest
  const auto disagree = [&](bool& layer, std::string_view what, const std::string& seen) {
    layer = false;
    r.notes += std::string(r.notes.empty() ? "" : "; ") + std::string(what) + ": reported, but /proc shows " +
               (seen.empty() ? "nothing" : seen);
  };
  if (const std::string v = status_field(status, "Seccomp"); r.seccomp && v != "2")
    disagree(r.seccomp, "seccomp", "Seccomp: " + v);
  if (const std::string v = status_field(status, "NoNewPrivs"); r.no_new_privs && v != "1")
    disagree(r.no_new_privs, "no_new_privs", "NoNewPrivs: " + v);
  if (const std::string v = status_field(status, "Uid");
      r.dropped_privileges && v.rfind("65534\t65534\t65534\t65534", 0) != 0) {
    disagree(r.dropped_privileges, "dropped_privileges", "Uid: " + v);
  }
  if (r.network_namespace) {
    char mine[128] = {}, theirs[128] = {};
    const ssize_t a = ::readlink("/proc/self/ns/net", mine, sizeof mine - 1);
    const ssize_t b = ::readlink((base + "/ns/net").c_str(), theirs, sizeof theirs - 1);
    // Unreadable (no ptrace access to the worker) proves nothing either way; the same
    // namespace as the server's disproves the report.
    if (a > 0 && b > 0 && std::string_view(mine) == std::string_view(theirs))
      disagree(r.network_namespace, "network_namespace", std::string("the server's ") + mine);
  }
}

}  // namespace

std::string describe_exit(int status) {
  if (WIFSIGNALED(status)) {
    const char* abbrev = ::sigabbrev_np(WTERMSIG(status));
    return "killed by signal " + std::to_string(WTERMSIG(status)) +
           (abbrev != nullptr ? std::string(" (SIG") + abbrev + ")" : std::string());
  }
  if (WIFEXITED(status))
    return "exited with status " + std::to_string(WEXITSTATUS(status));
  return "stopped";
}

// SIGKILL and reap; the exit description, or "" when it was already reaped elsewhere.
std::string kill_and_reap(worker& w) {
  std::string how;
  if (w.pid > 0) {
    ::kill(w.pid, SIGKILL);
    int status = 0;
    pid_t r;
    do {
      r = ::waitpid(w.pid, &status, 0);
    } while (r < 0 && errno == EINTR);
    if (r == w.pid)
      how = describe_exit(status);
  }
  if (w.fd >= 0)
    ::close(w.fd);
  w = worker{};
  return how;
}

result<worker> launch_worker(const pool_config& cfg, size_t address_space) {
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    return fail(runtime_errc::worker_start_failed, std::string("socketpair: ") + ::strerror(errno));
  }
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  ::posix_spawn_file_actions_init(&actions);
  ::posix_spawnattr_init(&attr);
  // The channel becomes descriptor 3 (dup2 clears close-on-exec); nothing else is inherited.
  ::posix_spawn_file_actions_adddup2(&actions, sv[1], channel::kWorkerFd);
  ::posix_spawn_file_actions_addclosefrom_np(&actions, channel::kWorkerFd + 1);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  ::posix_spawnattr_setsigmask(&attr, &none);
  ::posix_spawnattr_setsigdefault(&attr, &all);
  // Its own process group: a terminal's ^C goes to the server, which decides.
  ::posix_spawnattr_setpgroup(&attr, 0);
  ::posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);

  const std::string engine(to_string(cfg.engine));
  std::vector<std::string> args = {
      cfg.worker_path, "--parent", std::to_string(::getpid()), "--address-space", std::to_string(address_space),
      "--engine",      engine};
  if (cfg.allow_weak_isolation)
    args.emplace_back("--allow-weak-isolation");
  if (!cfg.fail_layer_for_tests.empty()) {
    args.emplace_back("--fail-layer");
    args.push_back(cfg.fail_layer_for_tests);
  }
  std::vector<char*> argv;
  for (std::string& a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  char* envp[] = {nullptr};
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, cfg.worker_path.c_str(), &actions, &attr, argv.data(), envp);
  ::posix_spawn_file_actions_destroy(&actions);
  ::posix_spawnattr_destroy(&attr);
  ::close(sv[1]);
  if (rc != 0) {
    ::close(sv[0]);
    return fail(runtime_errc::worker_start_failed, "posix_spawn " + cfg.worker_path + ": " + ::strerror(rc));
  }
  return worker{pid, sv[0]};
}

result<isolation_report> read_ready_report(worker& w, const pool_config& cfg) {
  std::string frame;
  const channel::io st =
      channel::receive_frame(w.fd, frame, kMaxHelloBytes, std::chrono::steady_clock::now() + cfg.start_timeout);
  json::error_code ec;
  json::value v;
  if (st == channel::io::ok)
    v = json::parse(frame, ec);
  const json::object* top = v.if_object();
  const json::value* hello = top != nullptr ? top->if_contains("hello") : nullptr;
  const json::value* iso =
      hello != nullptr && hello->is_object() ? hello->get_object().if_contains("isolation") : nullptr;
  if (iso == nullptr || !iso->is_object()) {
    const std::string how = kill_and_reap(w);
    return fail(runtime_errc::worker_start_failed,
                cfg.worker_path + ": no ready report" +
                    (st == channel::io::timeout ? std::string(" within the start timeout") : std::string()) +
                    (how.empty() ? std::string() : "; the worker " + how));
  }
  isolation_report report = parse_isolation(iso->get_object());
  cross_check(w.pid, report);
  return report;
}

}  // namespace enact::runtime
