// SPDX-License-Identifier: Apache-2.0
// A throwaway PostgreSQL server for tests: initdb in a fresh temporary directory, the server
// listening only on a Unix socket in that directory (no TCP port to collide on), trust auth for
// the `postgres` role, stopped and deleted by the destructor. The binaries come from Debian's
// postgresql-<N> package (/usr/lib/postgresql/<N>/bin, highest N) or $ENACT_POSTGRES_BIN.
//
// PostgreSQL refuses to run as root: under root (CI) the server runs as the `postgres` system user
// (created by the package), else as `nobody`; the temporary directory is handed to that user.
// The server gets SIGKILL when the thread that started it ends without stopping it
// (PR_SET_PDEATHSIG): start servers from the test's main thread, as doctest cases run.
//
// Failures (no binaries, initdb or start failing) throw std::runtime_error with the reason and
// the server's log: a test that needs PostgreSQL fails, never skips.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace enact::triggers::test {

class postgres_server {
 public:
  struct options {
    /// fsync off makes the suite fast; on for tests of what survives a crash.
    bool fsync = false;
  };

  explicit postgres_server(options o);
  postgres_server() : postgres_server(options{}) {}
  ~postgres_server();
  postgres_server(const postgres_server&) = delete;
  postgres_server& operator=(const postgres_server&) = delete;

  /// Fast shutdown (SIGINT: sessions ended, a checkpoint written); waits for the process to end.
  void stop();
  /// Starts the server again on the same data directory and socket.
  void start();
  [[nodiscard]] bool running() const noexcept { return pid_ > 0; }

  /// A libpq URI for `database` on this server.
  [[nodiscard]] std::string url(std::string_view database) const;
  /// Creates a new, empty database and returns its URI.
  [[nodiscard]] std::string create_database();
  /// Runs `sql` (no parameters: test setup only) on `database`; throws on failure.
  void exec(std::string_view database, const std::string& sql) const;
  /// The first column of the first row of `sql` (test setup only); throws on failure or no row.
  [[nodiscard]] std::string query_value(std::string_view database, const std::string& sql) const;

  [[nodiscard]] const std::filesystem::path& data_dir() const noexcept { return data_; }

 private:
  void run_as_server_user(const std::vector<std::string>& argv, bool wait);
  [[nodiscard]] std::string log_tail() const;
  [[nodiscard]] std::optional<std::string> run_sql(std::string_view database, const std::string& sql) const;

  options options_;
  std::filesystem::path bin_;
  std::filesystem::path root_;  // temporary directory: socket, log, data
  std::filesystem::path data_;
  std::filesystem::path log_;
  uid_t uid_ = 0;
  gid_t gid_ = 0;
  bool switch_user_ = false;
  pid_t pid_ = -1;
  int databases_ = 0;
};

/// The server shared by this test process's cases, started on first use (fsync off), stopped at
/// exit.
[[nodiscard]] postgres_server& shared_postgres();

}  // namespace enact::triggers::test
