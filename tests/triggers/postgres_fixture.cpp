// SPDX-License-Identifier: Apache-2.0
#include "postgres_fixture.hpp"

#include <fcntl.h>
#include <grp.h>
#include <libpq-fe.h>
#include <pwd.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <vector>

namespace enact::triggers::test {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

constexpr int kPort = 5432;  // only names the socket file: the server listens on no TCP port
constexpr auto kStartTimeout = 60s;
constexpr auto kStopTimeout = 60s;

[[noreturn]] void fail_with(const std::string& msg) { throw std::runtime_error("postgres fixture: " + msg); }

bool executable(const fs::path& p) { return ::access(p.c_str(), X_OK) == 0; }

/// The directory holding initdb and postgres.
fs::path find_binaries() {
  if (const char* env = std::getenv("ENACT_POSTGRES_BIN"); env != nullptr && *env != '\0') {
    const fs::path p(env);
    if (executable(p / "initdb") && executable(p / "postgres"))
      return p;
    fail_with("ENACT_POSTGRES_BIN=" + p.string() + " holds no initdb and postgres");
  }
  fs::path best;
  int best_version = -1;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/usr/lib/postgresql", ec)) {
    const std::string name = e.path().filename().string();
    int v = 0;
    try {
      v = std::stoi(name);
    } catch (...) {
      continue;
    }
    const fs::path bin = e.path() / "bin";
    if (v > best_version && executable(bin / "initdb") && executable(bin / "postgres")) {
      best = bin;
      best_version = v;
    }
  }
  if (best_version < 0)
    fail_with(
        "PostgreSQL server binaries not found (no initdb and postgres under "
        "/usr/lib/postgresql/<version>/bin, and ENACT_POSTGRES_BIN unset): install them with "
        "`apt-get install postgresql-15` (or `postgresql`); the PostgreSQL store tests need a real "
        "server");
  return best;
}

std::string random_suffix() {
  std::random_device rd;
  std::ostringstream s;
  s << std::hex << rd() << rd();
  return s.str();
}

struct conn_closer {
  void operator()(PGconn* c) const noexcept { PQfinish(c); }
};

}  // namespace

postgres_server::postgres_server(options o) : options_(o), bin_(find_binaries()) {
  std::string tmpl = (fs::temp_directory_path() / "enact-pg-XXXXXX").string();
  if (::mkdtemp(tmpl.data()) == nullptr)
    fail_with("cannot create a temporary directory under " + fs::temp_directory_path().string());
  root_ = tmpl;
  data_ = root_ / "data";
  log_ = root_ / "server.log";
  try {
    if (::geteuid() == 0) {
      // The server refuses root; the package's system user, else nobody.
      const passwd* pw = ::getpwnam("postgres");
      if (pw == nullptr)
        pw = ::getpwnam("nobody");
      if (pw == nullptr)
        fail_with("running as root, and neither a `postgres` nor a `nobody` user exists to run the server as");
      uid_ = pw->pw_uid;
      gid_ = pw->pw_gid;
      switch_user_ = true;
      if (::chown(root_.c_str(), uid_, gid_) != 0)
        fail_with("cannot hand " + root_.string() + " to uid " + std::to_string(uid_));
    }
    { std::ofstream touch(log_); }
    if (switch_user_ && ::chown(log_.c_str(), uid_, gid_) != 0)
      fail_with("cannot hand " + log_.string() + " to uid " + std::to_string(uid_));
    run_as_server_user({(bin_ / "initdb").string(), "-D", data_.string(), "-U", "postgres", "--auth=trust", "-E",
                        "UTF8", "--locale=C", "--no-sync"},
                       true);
    start();
  } catch (...) {
    stop();
    std::error_code ec;
    fs::remove_all(root_, ec);
    throw;
  }
}

postgres_server::~postgres_server() {
  try {
    stop();
  } catch (...) {
  }
  std::error_code ec;
  fs::remove_all(root_, ec);
}

void postgres_server::run_as_server_user(const std::vector<std::string>& argv, bool wait) {
  // Everything the child needs is prepared before fork: after it, only async-signal-safe calls.
  std::vector<char*> args;
  for (const auto& a : argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const std::string log = log_.string();
  const bool switch_user = switch_user_;
  const uid_t uid = uid_;
  const gid_t gid = gid_;
  const pid_t pid = ::fork();
  if (pid < 0)
    fail_with("fork failed");
  if (pid == 0) {
    const int fd = ::open(log.c_str(), O_WRONLY | O_APPEND | O_CREAT, 0600);
    if (fd >= 0) {
      ::dup2(fd, 1);
      ::dup2(fd, 2);
      ::close(fd);
    }
    const int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0)
      ::dup2(devnull, 0);
    if (switch_user && (::setgroups(0, nullptr) != 0 || ::setgid(gid) != 0 || ::setuid(uid) != 0))
      ::_exit(126);
    // Set after the user change, which clears it: the server dies with the test process.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  if (!wait) {
    pid_ = pid;
    return;
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    fail_with(argv[0] + " failed (status " + std::to_string(status) + "):\n" + log_tail());
}

void postgres_server::start() {
  if (pid_ > 0)
    return;
  std::vector<std::string> argv = {
      (bin_ / "postgres").string(), "-D", data_.string(),      "-k", root_.string(),        "-p",
      std::to_string(kPort),        "-c", "listen_addresses=", "-c", "max_connections=200", "-c",
      "shared_buffers=32MB"};
  if (!options_.fsync)
    for (const char* s : {"fsync=off", "full_page_writes=off", "synchronous_commit=off"}) {
      argv.emplace_back("-c");
      argv.emplace_back(s);
    }
  run_as_server_user(argv, false);
  const std::string conninfo = url("postgres");
  const auto deadline = std::chrono::steady_clock::now() + kStartTimeout;
  for (;;) {
    if (PQping(conninfo.c_str()) == PQPING_OK)
      return;
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      fail_with("the server exited while starting (status " + std::to_string(status) + "):\n" + log_tail());
    }
    if (std::chrono::steady_clock::now() > deadline) {
      stop();
      fail_with("the server did not accept connections within 60 s:\n" + log_tail());
    }
    std::this_thread::sleep_for(20ms);
  }
}

void postgres_server::stop() {
  if (pid_ <= 0)
    return;
  ::kill(pid_, SIGINT);  // fast shutdown
  const auto deadline = std::chrono::steady_clock::now() + kStopTimeout;
  int status = 0;
  while (::waitpid(pid_, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, &status, 0);
      break;
    }
    std::this_thread::sleep_for(10ms);
  }
  pid_ = -1;
}

std::string postgres_server::url(std::string_view database) const {
  return "postgresql:///" + std::string(database) + "?host=" + root_.string() + "&port=" + std::to_string(kPort) +
         "&user=postgres";
}

std::string postgres_server::create_database() {
  const std::string name = "enact_t" + std::to_string(++databases_) + "_" + random_suffix();
  exec("postgres", "CREATE DATABASE " + name);
  return url(name);
}

void postgres_server::exec(std::string_view database, const std::string& sql) const { (void)run_sql(database, sql); }

std::string postgres_server::query_value(std::string_view database, const std::string& sql) const {
  auto v = run_sql(database, sql);
  if (!v)
    fail_with(sql + ": no row");
  return *v;
}

std::optional<std::string> postgres_server::run_sql(std::string_view database, const std::string& sql) const {
  std::unique_ptr<PGconn, conn_closer> c(PQconnectdb(url(database).c_str()));
  if (!c || PQstatus(c.get()) != CONNECTION_OK)
    fail_with("connect to " + std::string(database) + ": " + (c ? PQerrorMessage(c.get()) : "out of memory"));
  PGresult* r = PQexec(c.get(), sql.c_str());
  const auto st = PQresultStatus(r);
  const std::string msg = PQresultErrorMessage(r);
  std::optional<std::string> first;
  if (st == PGRES_TUPLES_OK && PQntuples(r) > 0 && PQnfields(r) > 0)
    first = std::string(PQgetvalue(r, 0, 0), PQgetlength(r, 0, 0));
  PQclear(r);
  if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK)
    fail_with(sql + ": " + msg);
  return first;
}

std::string postgres_server::log_tail() const {
  std::ifstream f(log_);
  std::stringstream ss;
  ss << f.rdbuf();
  std::string all = ss.str();
  constexpr size_t kTail = 4000;
  return all.size() > kTail ? "…" + all.substr(all.size() - kTail) : all;
}

postgres_server& shared_postgres() {
  static postgres_server server;
  return server;
}

}  // namespace enact::triggers::test
