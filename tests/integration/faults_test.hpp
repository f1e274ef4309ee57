// SPDX-License-Identifier: Apache-2.0
// Crash and fault tests of enact-server on its embedded ledger: SIGKILL in the middle of
// concurrent writes and of a burst of action runs, then a restart on the same data directory; and
// a data directory on a full disk. What they hold the server to:
//   - a write answered 200 is durable; a write the kill cut off is applied whole or not at all;
//   - the ledger's event log (docs/architecture.md §4, docs/protocol.md §3) stays contiguous, every charge has its
//   event,
//     and each balance is what was paid in less what the events charged;
//   - on a full disk, writes answer 503 unavailable (never 500, never a crash), reads keep working,
//     and once space is back nothing is corrupt (PRAGMA integrity_check) or lost.
// The chain node of the `evm` ledger backend, stopped and restarted under load, has a placeholder
// below until that backend exists.
//
// Shared by faults_kill_test.cpp and faults_disk_test.cpp (integration.faults): the ledger file
// of a stopped server and the processes of a running one.
#pragma once

#include <doctest/doctest.h>

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include "steps.hpp"

namespace enact::itest {

using steady = std::chrono::steady_clock;

/// Seconds since `t`, for the timing lines the tests print.
inline double seconds_since(steady::time_point t) { return std::chrono::duration<double>(steady::now() - t).count(); }

/// A SQLite file of a stopped server, opened read-write (so a WAL left by a crash is recovered
/// the way the server itself recovers it) and only read.
class sqlite_file {
 public:
  explicit sqlite_file(const std::string& path) {
    const int rc = sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE, nullptr);
    REQUIRE_MESSAGE(rc == SQLITE_OK, path << ": " << sqlite3_errstr(rc));
  }
  ~sqlite_file() { sqlite3_close(db_); }
  sqlite_file(const sqlite_file&) = delete;
  sqlite_file& operator=(const sqlite_file&) = delete;

  /// Every row of `sql`, each column as text (NULL as "").
  std::vector<std::vector<std::string>> rows(const std::string& sql) {
    sqlite3_stmt* s = nullptr;
    REQUIRE_MESSAGE(sqlite3_prepare_v2(db_, sql.c_str(), -1, &s, nullptr) == SQLITE_OK,
                    sql << ": " << sqlite3_errmsg(db_));
    std::vector<std::vector<std::string>> out;
    int rc = 0;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
      std::vector<std::string> row;
      for (int i = 0; i < sqlite3_column_count(s); ++i) {
        const auto* t = reinterpret_cast<const char*>(sqlite3_column_text(s, i));
        row.emplace_back(t == nullptr ? "" : t);
      }
      out.push_back(std::move(row));
    }
    const bool done = rc == SQLITE_DONE;
    const std::string err = done ? "" : sqlite3_errmsg(db_);
    sqlite3_finalize(s);
    REQUIRE_MESSAGE(done, sql << ": " << err);
    return out;
  }
  std::string one(const std::string& sql) {
    const auto r = rows(sql);
    REQUIRE(r.size() == 1);
    REQUIRE(r[0].size() == 1);
    return r[0][0];
  }

 private:
  sqlite3* db_ = nullptr;
};

/// The ledger's event log is 1, 2, 3, … with no gap (docs/architecture.md §4: sequence numbers never skip).
inline void check_event_log_contiguous(sqlite_file& ledger) {
  const auto r = ledger.rows(
      "SELECT count(*), coalesce(min(sequence), 0), "
      "coalesce(max(sequence), 0) FROM events");
  INFO("events: count " << r[0][0] << ", first " << r[0][1] << ", last " << r[0][2]);
  CHECK(r[0][1] == "1");
  CHECK(r[0][0] == r[0][2]);
}

/// `WHERE` clause text matching one account's events (accounts are stored as 32-byte blobs).
inline std::string of_account(const std::string& api_key_hash) {
  return "lower(hex(account)) = '" + api_key_hash.substr(2) + "'";
}

inline uint64_t as_u64(const std::string& s) { return std::stoull(s); }

/// The worker processes (children) of `pid`, from /proc.
inline std::vector<pid_t> children_of(pid_t pid) {
  std::vector<pid_t> out;
  DIR* d = ::opendir("/proc");
  if (d == nullptr)
    return out;
  while (const dirent* e = ::readdir(d)) {
    const pid_t p = static_cast<pid_t>(std::atoi(e->d_name));
    if (p <= 0)
      continue;
    std::ifstream f("/proc/" + std::string(e->d_name) + "/stat");
    std::string stat;
    std::getline(f, stat);
    // pid (comm) state ppid …; comm may hold spaces, so read after the last ')'.
    const auto close = stat.rfind(')');
    if (close == std::string::npos)
      continue;
    char state = 0;
    int ppid = 0;
    if (std::sscanf(stat.c_str() + close + 1, " %c %d", &state, &ppid) == 2 && ppid == pid)
      out.push_back(p);
  }
  ::closedir(d);
  return out;
}

/// Whether `pid` has ended (gone, or a zombie nobody reaped yet).
inline bool ended(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!std::getline(f, stat))
    return true;
  const auto close = stat.rfind(')');
  return close != std::string::npos && close + 2 < stat.size() && stat[close + 2] == 'Z';
}

/// SIGKILL of a running server, recording that it died of it.
inline void sigkill(server_process& srv) {
  REQUIRE(srv.running());
  REQUIRE(::kill(srv.pid(), SIGKILL) == 0);
  const exit_status st = srv.stop();  // reaps it (the SIGTERM finds nothing to stop)
  CHECK(!st.exited);
  CHECK(st.signal == SIGKILL);
}
}  // namespace enact::itest
