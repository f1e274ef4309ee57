// SPDX-License-Identifier: Apache-2.0
// The trigger store on SQLite (`<data_dir>/triggers.sqlite`), for one server process.
//
// Writes go through one writer thread that commits them in groups: requests that arrive while a
// transaction is being written wait, then share the next one (each in its own savepoint, so one
// failing write rolls back alone). Every caller returns only after the transaction holding its
// write committed. Under load, one commit (and one fsync with `synchronous = FULL`) serves many
// webhook intakes; alone, a write commits at once. Reads use a small pool of read-only connections
// (WAL: readers never wait for the writer).
//
// Durability (docs/triggers.md "Durability"): the database is in WAL mode.
//  - synchronous = FULL (default): a commit returns after the WAL is fsynced. Nothing acknowledged
//    is lost when the process is killed, nor when the machine loses power (on storage that
//    honours fsync).
//  - synchronous = NORMAL: a commit returns once its WAL frames are written to the file (the OS
//    page cache); the WAL is fsynced only at checkpoints. A killed process (SIGKILL, crash, OOM)
//    loses nothing, because the kernel still writes its pages; a power loss or kernel crash may
//    lose the transactions committed since the last checkpoint (the database stays consistent).
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "triggers/sql_store.hpp"

namespace enact::triggers {

namespace sqlite_backend {
class db;
}

struct sqlite_options {
  /// PRAGMA synchronous FULL (true) or NORMAL (false); see above.
  bool synchronous_full = true;
  /// Read-only connections for concurrent reads.
  size_t read_connections = 4;
  /// Most writes committed in one transaction.
  size_t max_batch = 1024;
};

/// The store's body (sql_store.hpp) over SQLite.
class sqlite_store final : public sql_store {
 public:
  static constexpr int kSchemaVersion = 7;

  /// Opens (creating, migrating) the database at `path`. Refuses a file whose schema is newer
  /// than this build's.
  [[nodiscard]] static result<std::unique_ptr<sqlite_store>> open(const std::string& path, sqlite_options options = {});
  ~sqlite_store() override;
  sqlite_store(const sqlite_store&) = delete;
  sqlite_store& operator=(const sqlite_store&) = delete;

  /// One group of transactions for all of them (see fire_schedules in store.hpp).
  std::vector<result<std::optional<run>>> fire_schedules(const std::vector<schedule_firing>& firings) override;

  /// Transactions committed and writes they held since open (for the benchmark's report: the
  /// average group size is writes / commits).
  struct commit_stats {
    uint64_t commits = 0;
    uint64_t writes = 0;
  };
  [[nodiscard]] commit_stats stats() const;

 private:
  explicit sqlite_store(std::unique_ptr<sqlite_backend::db> d);
  sqlite_backend::db* db_;  // the backend sql_store owns
};

}  // namespace enact::triggers
