// SPDX-License-Identifier: Apache-2.0
// A pool of PostgreSQL connections (libpqxx) for a store shared by several server instances.
//
// A libpqxx connection serves one thread at a time: a caller takes one connection for the length
// of its work (never two at once, so callers cannot deadlock on the pool) and hands it back; at
// most `size` are open, opened lazily, and one that broke (the server restarted, the network
// dropped) is closed on return and replaced by the next caller that needs one.
#pragma once

#include <pqxx/connection>
#include <pqxx/transaction>

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "storage/pool.hpp"

namespace enact::storage {

struct pg_pool_options {
  /// Most connections open at once (and so most callers served at once); at least one.
  size_t size = 16;
  /// Runs on every new connection before it is handed out (session settings); may throw, and the
  /// connection is then dropped and the exception passed to the caller of acquire().
  std::function<void(pqxx::connection&)> on_connect;
};

/// An on_connect that bounds every wait of the connection's statements for a row or table lock to
/// `seconds` (SET lock_timeout): a statement waiting on a lock another session holds (a stuck
/// transaction of another server) fails instead of stalling its caller and every caller behind it.
/// Throws std::invalid_argument for `seconds` below 1 (0 would turn the bound off).
[[nodiscard]] std::function<void(pqxx::connection&)> lock_timeout(int seconds);
/// The statement lock_timeout runs, for a connection the pool does not open (same refusal).
[[nodiscard]] std::string lock_timeout_statement(int seconds);

class pg_pool : public pool<pqxx::connection> {
 public:
  /// `url`: a libpq connection string or URI ("postgres://…"); it may hold a password, so the pool
  /// overwrites its copy when it goes away. Connects nothing yet. `acquire()` throws what libpqxx
  /// throws when connecting fails (pqxx::broken_connection: its message names host and port, never
  /// the password).
  pg_pool(std::string url, pg_pool_options options);
  ~pg_pool();

 private:
  std::unique_ptr<pqxx::connection> connect();

  std::string url_;
  std::function<void(pqxx::connection&)> on_connect_;
};

/// When `transact` runs its body again.
struct pg_retry {
  /// Attempts in all, the first included.
  int attempts = 5;
  /// Also on a unique violation (two first inserts of one key racing: the loser's next attempt
  /// sees the winner's row).
  bool unique_violation = false;
};

/// Runs `body` in one transaction on a connection of `pool`: committed when `body` returns true,
/// rolled back otherwise. Run again, up to `retry.attempts` times in all, when PostgreSQL aborts it
/// as a deadlock or a serialization failure (and a unique violation, when `retry` says so); any
/// other exception is passed on. A connection that broke is not pooled again.
void transact(pg_pool& pool, const std::function<bool(pqxx::work&)>& body, const pg_retry& retry = {});

/// Brings a store's schema to `steps.size()`: under `lock` (a statement taking the store's
/// transaction-level advisory lock, so instances opening at once take turns), reads the version
/// kept in `version_table` (created when missing; none yet is 0), runs the steps after it in one
/// transaction and records the new version. A version newer than `steps` throws: this build is
/// older than the database.
void migrate(pg_pool& pool, const std::string& lock, const std::string& version_table,
             const std::vector<std::string>& steps);

}  // namespace enact::storage
