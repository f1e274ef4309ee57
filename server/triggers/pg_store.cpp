// SPDX-License-Identifier: Apache-2.0
// The PostgreSQL trigger store (pg_store.hpp): its schema, the SQL backend (sql_store.hpp) the
// store's body runs on — a pool of libpq connections (pg_store_internal.hpp), transactions retried
// on a deadlock or a serialization failure — and the two statements PostgreSQL does better alone:
// queuing a webhook's run in one statement, and leasing runs with SKIP LOCKED in one.
#include <iterator>

#include "triggers/pg_store_internal.hpp"
#include "triggers/sql_store_internal.hpp"

namespace enact::triggers {

bool is_postgres_url(std::string_view s) noexcept {
  return s.starts_with("postgres://") || s.starts_with("postgresql://");
}

namespace pg_backend {
namespace {

// pg_advisory_xact_lock key that serialises schema creation between instances opening at once.
constexpr const char* kSchemaLock = "SELECT pg_advisory_xact_lock(6872612823553061683)";

// Schema migrations: kMigrations[i] takes version i to i + 1. Append, never edit. The same tables
// as the SQLite store (sqlite_store.cpp): surrogate `seq` ordering lists by creation, instants in
// Unix milliseconds, hashes and keys as bytea, JSON kept as the exact text it was written as.
constexpr const char* kMigrations[] = {
    R"sql(
CREATE TABLE triggers (
  seq              bigint  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  id               text    NOT NULL UNIQUE,
  owner            text    NOT NULL,
  type             text    NOT NULL,
  name             text    NOT NULL,
  enabled          boolean NOT NULL,
  action_cid       text    NOT NULL,
  pkp_id           bytea,
  sealed_usage_key bytea   NOT NULL,
  usage_key_hash   bytea   NOT NULL,
  config           text    NOT NULL,
  created_at       bigint  NOT NULL,
  updated_at       bigint  NOT NULL
);
CREATE INDEX triggers_by_owner ON triggers(owner, seq);
CREATE TABLE runs (
  seq              bigint  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  id               text    NOT NULL UNIQUE,
  trigger_id       text    NOT NULL REFERENCES triggers(id) ON DELETE CASCADE,
  status           text    NOT NULL CHECK (status IN ('queued', 'running', 'success', 'failed')),
  attempts         integer NOT NULL DEFAULT 0,
  params           text    NOT NULL,
  response         text,
  error_code       text,
  error_message    text,
  error_stack      text,
  queued_at        bigint  NOT NULL,
  started_at       bigint,
  finished_at      bigint,
  next_attempt_at  bigint  NOT NULL,
  lease_owner      text,
  lease_expires_at bigint
);
CREATE INDEX runs_by_trigger ON runs(trigger_id, seq);
CREATE INDEX runs_ready ON runs(next_attempt_at, seq)
  WHERE lease_owner IS NULL AND status IN ('queued', 'running');
CREATE INDEX runs_leased ON runs(lease_expires_at) WHERE lease_owner IS NOT NULL;
CREATE TABLE schedule_state (
  trigger_id   text   PRIMARY KEY REFERENCES triggers(id) ON DELETE CASCADE,
  next_due     bigint NOT NULL,
  last_planned bigint
);
CREATE TABLE chain_checkpoints (
  trigger_id text   PRIMARY KEY REFERENCES triggers(id) ON DELETE CASCADE,
  block      bigint NOT NULL
);
CREATE TABLE chain_logs (
  trigger_id   text    NOT NULL REFERENCES triggers(id) ON DELETE CASCADE,
  block_hash   bytea   NOT NULL,
  log_index    bigint  NOT NULL,
  block_number bigint  NOT NULL,
  removed      boolean NOT NULL DEFAULT false,
  run_id       text,
  seen_at      bigint  NOT NULL,
  PRIMARY KEY (trigger_id, block_hash, log_index)
);
CREATE TABLE tokens (
  hash        bytea   PRIMARY KEY,
  user_id     text    NOT NULL,
  client_name text    NOT NULL,
  created_at  bigint  NOT NULL,
  expires_at  bigint  NOT NULL,
  revoked     boolean NOT NULL DEFAULT false
);
CREATE INDEX tokens_by_user ON tokens(user_id, created_at);
CREATE TABLE approvals (
  challenge   text   PRIMARY KEY,
  client_name text   NOT NULL,
  status      text   NOT NULL CHECK (status IN ('pending', 'approved', 'denied')),
  user_id     text   NOT NULL DEFAULT '',
  token_hash  bytea,
  created_at  bigint NOT NULL,
  expires_at  bigint NOT NULL
);
CREATE TABLE browser_sessions (
  hash       bytea  PRIMARY KEY,
  user_id    text   NOT NULL,
  nonce      text   NOT NULL,
  created_at bigint NOT NULL,
  expires_at bigint NOT NULL
);
CREATE INDEX browser_sessions_by_expiry ON browser_sessions(expires_at);
)sql",
    // 1 → 2: per-trigger run limits (docs/protocol.md §4); the partial index keeps the count of a trigger's
    // unfinished runs proportional to them, not to its history.
    R"sql(
ALTER TABLE triggers ADD COLUMN max_runs_per_minute integer NOT NULL DEFAULT 60;
ALTER TABLE triggers ADD COLUMN max_queued_runs integer NOT NULL DEFAULT 100;
CREATE INDEX runs_unfinished ON runs(trigger_id) WHERE status IN ('queued', 'running');
)sql",
    // 2 → 3: the hash of a chain checkpoint's block, so that a restart resumes from the checkpoint
    // when the chain still has that block (chain_watcher.hpp).
    R"sql(
ALTER TABLE chain_checkpoints ADD COLUMN block_hash bytea;
)sql",
    // 3 → 4: a webhook run's de-duplication key (config.dedup_header), unique per trigger; NULL
    // (no key) is never equal to another NULL.
    R"sql(
ALTER TABLE runs ADD COLUMN dedup_key text;
CREATE UNIQUE INDEX runs_dedup ON runs(trigger_id, dedup_key);
)sql",
    // 4 → 5: runs_dedup holds only the runs that have a key (webhooks whose trigger names
    // config.dedup_header): schedule and chain runs, and most webhook runs, skip its insert.
    R"sql(
DROP INDEX runs_dedup;
CREATE UNIQUE INDEX runs_dedup ON runs(trigger_id, dedup_key) WHERE dedup_key IS NOT NULL;
)sql",
    // 5 → 6: why the service disabled a trigger, and a schedule's runs failed in a row for lack of
    // credits (docs/protocol.md §4 "Limits").
    R"sql(
ALTER TABLE triggers ADD COLUMN disabled_reason text;
ALTER TABLE triggers ADD COLUMN credit_failures integer NOT NULL DEFAULT 0;
)sql",
};
static_assert(std::size(kMigrations) == pg_store::kSchemaVersion, "kSchemaVersion must count the migrations");

}  // namespace

// ---------------------------------------------------------------------------------------------
// The SQL backend

/// The store_errc a failure answers: conflict and not_found for the races the statements could not
/// rule out in advance, storage otherwise.
error storage_error(const pg_failure& e) {
  // Another transaction inserted the same key, or deleted the trigger a row refers to.
  if (e.sqlstate == "23505")
    return fail(store_errc::conflict, e.what());
  if (e.sqlstate == "23503")
    return fail(store_errc::not_found, "the trigger no longer exists (" + std::string(e.what()) + ")");
  return fail(store_errc::storage, e.what());
}

class statement_rows final : public sql::rows {
 public:
  explicit statement_rows(pg_backend::rows r) : r_(std::move(r)) {}
  bool next() override { return r_.next(); }
  bool is_null(int col) const override { return r_.is_null(col); }
  int64_t i64(int col) const override { return r_.i64(col); }
  bool boolean(int col) const override { return r_.boolean(col); }
  std::string text(int col) const override { return r_.text(col); }
  bytes blob(int col) const override { return r_.blob(col); }
  int64_t affected() const override { return r_.affected(); }

 private:
  pg_backend::rows r_;
};

class sql_connection final : public sql::connection {
 public:
  explicit sql_connection(pg_backend::connection& c) : c_(c) {}

 protected:
  std::unique_ptr<sql::rows> run(const char* sql, std::span<const sql::param> params) override {
    return std::make_unique<statement_rows>(c_.exec_args(sql, args::of(params)));
  }

 private:
  pg_backend::connection& c_;
};

class db final : public sql::backend {
 public:
  db(const std::string& url, const pg_options& o)
      : connections_(url, {.size = o.connections, .setup = kConnectionSetup}) {}

  /// Statements outside an explicit transaction: reads, and writes of one statement (which
  /// commit on their own before returning).
  result<void> read(const work& f) const override {
    return answered([&] {
      pool::lease l = connections_.acquire();
      return call(*l, f);
    });
  }
  result<void> write_one(const work& f) override { return read(f); }

  /// `f` inside BEGIN … COMMIT; rolled back when it returns an error. Retried on a deadlock or a
  /// serialization failure (the other transaction went first; running again sees its result).
  result<void> write(const work& f) override {
    return answered([&] {
      result<void> out;
      storage::pg::transact(connections_,
                            [&](connection& c) {
                              out = call(c, f);
                              return out.has_value();
                            },
                            {.attempts = kWriteAttempts});
      return out;
    });
  }

  /// The schema's migrations (storage::pg::migrate).
  result<void> migrate() {
    return answered([&] {
      storage::pg::migrate(connections_, kSchemaLock, "trigger_store_schema", kMigrations);
      return result<void>{};
    });
  }

 private:
  static result<void> call(connection& c, const work& f) {
    sql_connection sc(c);
    return f(sc);
  }
  /// `f()`, a failure thrown by it answered as a store_errc.
  template <class F>
  static result<void> answered(F&& f) {
    try {
      return f();
    } catch (const pg_failure& e) {
      return storage_error(e);
    } catch (const store_rows::corrupt_row& e) {
      return fail(store_errc::storage, "postgres: " + std::string(e.what()));
    }
  }

  mutable pool connections_;
};

}  // namespace pg_backend

using sql::cursor;

// ---------------------------------------------------------------------------------------------
// open

result<std::unique_ptr<pg_store>> pg_store::open(const std::string& url, pg_options options) {
  if (!is_postgres_url(url))
    return fail(store_errc::invalid_argument, "postgres: expected a postgres:// or postgresql:// connection URL");
  auto d = std::make_unique<pg_backend::db>(url, options);
  auto migrated = d->migrate();
  if (!migrated)
    return migrated.err();
  return std::unique_ptr<pg_store>(new pg_store(std::move(d)));
}

pg_store::pg_store(std::unique_ptr<pg_backend::db> d) : sql_store(std::move(d)) {}
pg_store::~pg_store() = default;

// ---------------------------------------------------------------------------------------------
// what PostgreSQL does in one statement

// The run limits of docs/protocol.md §4 as SQL over a trigger row `t` and the calendar minute's start $M,
// as sql::over_limits counts them.
#define RUNS_THIS_MINUTE(M)                                                                        \
  "(SELECT COUNT(*) FROM (SELECT r.queued_at FROM runs r WHERE r.trigger_id = t.id AND "           \
  "NOT (r.status = 'failed' AND r.attempts = 0) ORDER BY r.seq DESC LIMIT t.max_runs_per_minute) " \
  "w WHERE w.queued_at >= " M ")"
#define RUNS_UNFINISHED                                                        \
  "(SELECT COUNT(*) FROM (SELECT 1 FROM runs r WHERE r.trigger_id = t.id AND " \
  "r.status IN ('queued', 'running') LIMIT t.max_queued_runs) q)"

result<run> pg_store::enqueue_run(const new_run& r, trigger_type expected) {
  ENACT_TRY_VOID(store_rows::check_new_run(r));
  const std::string params = json::serialize(r.params);
  bool deduplicated = false;
  auto out = write_one([&](sql::connection& c) -> result<run> {
    // A trigger with config.dedup_header goes the general way (sql_store::enqueue_run), which
    // looks its key up first: this statement inserts nothing for it.
    // One statement, one round trip and one commit: the checks and the insert see one snapshot.
    // (Requests of one trigger at the same instant may each see the others' runs not yet
    // committed, so the limits may be passed by as many runs as arrive at once.)
    const auto inserted = c.exec(
                               "INSERT INTO runs (id, trigger_id, status, params, queued_at, next_attempt_at) "
                               "SELECT $1::text, t.id, 'queued', $3::text, $4::bigint, $4::bigint FROM triggers t "
                               "WHERE t.id = $2::text AND t.type = $5::text AND t.enabled AND "
                               "t.config NOT LIKE '%\"dedup_header\"%' AND " RUNS_THIS_MINUTE(
                                   "$6::bigint") " < t.max_runs_per_minute AND " RUNS_UNFINISHED " < t.max_queued_runs",
                               r.id, r.trigger_id, params, r.queued_at, to_string(expected),
                               std::chrono::floor<std::chrono::minutes>(r.queued_at))
                              .affected();
    if (inserted == 1)
      return store_rows::queued_run(r);
    if (expected == trigger_type::webhook &&
        c.exec("SELECT 1 FROM triggers WHERE id = $1 AND config LIKE '%\"dedup_header\"%'", r.trigger_id).next()) {
      deduplicated = true;
      return fail(store_errc::conflict, "trigger " + r.trigger_id + ": de-duplicated");
    }
    ENACT_TRY(const sql::run_limits limits, sql::queueable(c, r.trigger_id, expected));
    if (auto over = sql::over_limits(c, r.trigger_id, limits.per_minute, limits.queued, r.queued_at))
      return *over;
    // Enabled again (or re-created) between the two statements: the caller may try again.
    return fail(store_errc::conflict, "trigger " + r.trigger_id + ": changed while queuing");
  });
  if (deduplicated)
    return sql_store::enqueue_run(r, expected);
  return out;
}

result<void> pg_store::complete_run(const lease_ref& l, const json::value& response, time_point now) {
  const std::string body = json::serialize(response);
  return write_one([&](sql::connection& c) -> result<void> {
    // The two updates of sql_store::complete_run in one round trip and one commit.
    cursor q = c.exec(
        "WITH done AS (UPDATE runs SET status = 'success', response = $4::text, error_code = NULL, "
        "error_message = NULL, error_stack = NULL, finished_at = $5::bigint, lease_owner = NULL, "
        "lease_expires_at = NULL WHERE id = $1::text AND lease_owner = $2::text AND attempts = $3::integer "
        "AND status = 'running' RETURNING trigger_id), "
        "reset AS (UPDATE triggers t SET credit_failures = 0 FROM done WHERE t.id = done.trigger_id AND "
        "t.credit_failures <> 0) SELECT COUNT(*) FROM done",
        l.run_id, l.worker_id, l.attempt, body, now);
    if (!q.next() || q.i64(0) == 0)
      return store_rows::lease_lost(l);
    return {};
  });
}

void pg_store::lock_owner(sql::connection& c, std::string_view owner) {
  // Keyed by a 64-bit hash of the owner under the store's own prefix: owners whose hashes collide
  // only wait for each other.
  const std::string key = "enact.triggers.owner:" + std::string(owner);
  c.exec("SELECT pg_advisory_xact_lock(hashtextextended($1::text, 0))", key);
}

std::vector<leased_run> pg_store::lease_due(sql::connection& c, const lease_request& req, time_point until) {
  // SKIP LOCKED: runs another instance is leasing right now are passed over, not waited for.
  cursor q = c.exec(
      "WITH picked AS (SELECT seq FROM runs WHERE lease_owner IS NULL AND status IN "
      "('queued', 'running') AND next_attempt_at <= $1::bigint ORDER BY next_attempt_at, seq "
      "LIMIT $2::bigint FOR UPDATE SKIP LOCKED) "
      "UPDATE runs r SET status = 'running', attempts = r.attempts + 1, lease_owner = $3::text, "
      "lease_expires_at = $4::bigint, started_at = COALESCE(r.started_at, $1::bigint) "
      "FROM picked p, triggers t WHERE r.seq = p.seq AND t.id = r.trigger_id "
      "RETURNING " RUN_COLUMNS ", t.owner, t.action_cid, t.pkp_id, t.sealed_usage_key, r.seq",
      req.now, static_cast<uint64_t>(req.max_runs), req.worker_id, until);
  std::vector<std::pair<int64_t, leased_run>> got;
  while (q.next())
    got.emplace_back(q.i64(store_rows::kRunColumns + 4), sql::read_leased(q));
  // RETURNING has no order: oldest due first, as picked.
  std::sort(got.begin(), got.end(), [](const auto& a, const auto& b) {
    return std::pair(a.second.r.next_attempt_at, a.first) < std::pair(b.second.r.next_attempt_at, b.first);
  });
  std::vector<leased_run> out;
  out.reserve(got.size());
  for (auto& g : got)
    out.push_back(std::move(g.second));
  return out;
}

}  // namespace enact::triggers
