// SPDX-License-Identifier: Apache-2.0
// The trigger store on PostgreSQL (libpq), for several enact-server instances sharing one database
// (docs/architecture.md §4 "Trigger service"; docs/triggers.md "PostgreSQL store").
//
// Sharing: every instance sees the same triggers, runs, schedules, chain checkpoints, tokens and
// approvals. Runs are handed out by `lease_runs` inside one transaction: expired leases are taken
// back, then due runs are picked with `SELECT ... FOR UPDATE SKIP LOCKED`, so two instances leasing
// at once never block on, nor both take, the same run; each lease carries an expiry, and a run
// whose worker died (its instance crashed, lost the network) is leased again once it expires.
// A shared store never releases leases at start (`release_all_leases`): the other instances'
// workers are alive.
//
// Durability: a write returns after its transaction committed; the session runs with
// synchronous_commit on (raised from off if the server's default is off), so the commit record
// reached the server's WAL on disk (and the synchronous standbys, when configured).
//
// Threads: a libpq connection serves one thread at a time. The store keeps a pool of at most
// `pg_options::connections` connections; a call takes one for its duration (never two), and a
// connection that broke is dropped and replaced on a later call.
//
// Usage keys reach the store sealed (seal.hpp) like on SQLite: the database holds the sealed bytes
// and the keccak256 hash only. Every statement is parameterised (prepared once per connection).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "triggers/sql_store.hpp"

namespace enact::triggers {

struct pg_options {
  /// Most connections open at once (and so most calls served at once).
  size_t connections = 16;
};

/// True for a libpq connection URI ("postgres://…" or "postgresql://…").
[[nodiscard]] bool is_postgres_url(std::string_view s) noexcept;

namespace pg_backend {
class db;
}

/// The store's body (sql_store.hpp) over PostgreSQL.
class pg_store final : public sql_store {
 public:
  static constexpr int kSchemaVersion = 6;

  /// Connects to `url` (a libpq URI) and creates or migrates the schema (idempotent; several
  /// instances opening at once serialise on an advisory lock). Refuses a database whose schema is
  /// newer than this build's. Error messages never contain the URL (it may hold a password).
  [[nodiscard]] static result<std::unique_ptr<pg_store>> open(const std::string& url, pg_options options = {});
  ~pg_store() override;
  pg_store(const pg_store&) = delete;
  pg_store& operator=(const pg_store&) = delete;

  /// One statement: the checks, the run limits and the insert (see enqueue_run in store.hpp).
  result<run> enqueue_run(const new_run& r, trigger_type expected) override;
  /// One statement: the run's success and the reset of its trigger's credit failures.
  result<void> complete_run(const lease_ref& l, const json::value& response, time_point now) override;

 protected:
  /// One statement: SELECT … FOR UPDATE SKIP LOCKED, so instances leasing at once never wait for,
  /// nor both take, the same run.
  std::vector<leased_run> lease_due(sql::connection& c, const lease_request& r, time_point until) override;
  /// A transaction-scoped advisory lock keyed by the owner: instances creating triggers of one
  /// owner at once count them one after the other.
  void lock_owner(sql::connection& c, std::string_view owner) override;

 private:
  explicit pg_store(std::unique_ptr<pg_backend::db> d);
};

}  // namespace enact::triggers
