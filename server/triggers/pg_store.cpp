// SPDX-License-Identifier: Apache-2.0
// The PostgreSQL trigger store (pg_store.hpp): its schema, open, and the trigger records; runs,
// schedules and chain logs are in pg_store_runs.cpp, tokens, approvals and browser sessions in
// pg_store_auth.cpp, libpq access and the call boundary in pg_store_internal.hpp.
#include "triggers/pg_store_internal.hpp"

#include <iterator>

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
};
static_assert(std::size(kMigrations) == pg_store::kSchemaVersion, "kSchemaVersion must count the migrations");

}  // namespace

// ---------------------------------------------------------------------------------------------
// Shared rows and statements

error storage_error(const pg_failure& e) {
  // A race the statements could not rule out in advance: another transaction inserted the same
  // key, or deleted the trigger a row refers to.
  if (e.sqlstate == "23505")
    return fail(store_errc::conflict, e.what());
  if (e.sqlstate == "23503")
    return fail(store_errc::not_found, "the trigger no longer exists (" + std::string(e.what()) + ")");
  return fail(store_errc::storage, e.what());
}

std::optional<trigger> load_trigger(connection& c, std::string_view id) {
  rows q = c.exec("SELECT " TRIGGER_COLUMNS "FROM triggers t WHERE t.id = $1", id);
  if (!q.next())
    return std::nullopt;
  return read_trigger(q);
}

/// Inserts a queued run (the caller has checked its trigger).
run insert_run(connection& c, const new_run& r, const std::string& params_json) {
  c.exec(
      "INSERT INTO runs (id, trigger_id, status, params, queued_at, next_attempt_at) "
      "VALUES ($1, $2, 'queued', $3, $4, $4)",
      r.id, r.trigger_id, params_json, r.queued_at);
  return queued_run(r);
}

/// Why a run of trigger `id` at `at` may not be queued under its run limits; nullopt when it may.
std::optional<error> over_limits(connection& c, std::string_view id, time_point at) {
  rows q = c.exec("SELECT t.max_runs_per_minute, t.max_queued_runs, " RUNS_THIS_MINUTE(
                      "$2::bigint") ", " RUNS_UNFINISHED " FROM triggers t WHERE t.id = $1",
                  id, minute_of(at));
  if (!q.next())
    return std::nullopt;
  const int64_t per_minute = q.i64(0);
  const int64_t queued = q.i64(1);
  if (q.i64(2) >= per_minute)
    return fail(store_errc::rate_limited, "trigger " + std::string(id) + ": " + std::to_string(per_minute) +
                                              " runs queued in this minute already (max_runs_per_minute)");
  if (q.i64(3) >= queued)
    return fail(store_errc::queue_full, "trigger " + std::string(id) + ": " + std::to_string(queued) +
                                            " runs queued or running already (max_queued_runs)");
  return std::nullopt;
}

/// Queues `r`, or records it as a run that failed at once (never attempted) when the trigger is
/// over its run limits.
run insert_or_refuse(connection& c, const new_run& r, const std::string& params_json) {
  const auto over = over_limits(c, r.trigger_id, r.queued_at);
  if (!over)
    return insert_run(c, r, params_json);
  c.exec(
      "INSERT INTO runs (id, trigger_id, status, params, error_code, error_message, queued_at, "
      "finished_at, next_attempt_at) VALUES ($1, $2, 'failed', $3, $4, $5, $6, $6, $6)",
      r.id, r.trigger_id, params_json, kRateLimitedCode, over->message, r.queued_at);
  return refused_run(r, over->message);
}

/// Fails (after max_attempts) or requeues runs whose lease expired by `now`; everything leased
/// when `all` is set. Rows another transaction holds are skipped: that one is handling them.
size_t expire(connection& c, time_point now, uint32_t max_attempts, bool all) {
  const int64_t cutoff = all ? kMaxI64 : static_cast<int64_t>(now.time_since_epoch().count());
  size_t n =
      static_cast<size_t>(c.exec("UPDATE runs SET status = 'failed', finished_at = $1, lease_owner = NULL, "
                                 "lease_expires_at = NULL, error_code = 'lease_expired', error_message = "
                                 "'the worker running this attempt stopped answering, and no attempt is left', "
                                 "error_stack = NULL WHERE seq IN (SELECT seq FROM runs WHERE lease_owner IS NOT NULL "
                                 "AND lease_expires_at <= $2 AND attempts >= $3 FOR UPDATE SKIP LOCKED)",
                                 now, cutoff, max_attempts)
                              .affected());
  n += static_cast<size_t>(c.exec("UPDATE runs SET status = 'queued', lease_owner = NULL, lease_expires_at = NULL "
                                  "WHERE seq IN (SELECT seq FROM runs WHERE lease_owner IS NOT NULL AND "
                                  "lease_expires_at <= $1 FOR UPDATE SKIP LOCKED)",
                                  cutoff)
                               .affected());
  return n;
}

}  // namespace pg_backend

using namespace pg_backend;

// ---------------------------------------------------------------------------------------------
// open

result<std::unique_ptr<pg_store>> pg_store::open(const std::string& url, pg_options options) {
  if (!is_postgres_url(url))
    return fail(store_errc::invalid_argument, "postgres: expected a postgres:// or postgresql:// connection URL");
  auto s = std::make_unique<impl>(url, options);
  auto migrated = s->write([&](connection& c) -> result<void> {
    c.exec_simple(kSchemaLock);
    c.exec_simple("CREATE TABLE IF NOT EXISTS trigger_store_schema (version integer NOT NULL)");
    int64_t version = 0;
    {
      rows q = c.exec("SELECT version FROM trigger_store_schema");
      if (q.next())
        version = q.i64(0);
      else
        c.exec("INSERT INTO trigger_store_schema (version) VALUES (0)");
    }
    if (version > kSchemaVersion)
      return fail(store_errc::storage, "postgres: schema version " + std::to_string(version) +
                                           " is newer than this build's " + std::to_string(kSchemaVersion));
    for (int64_t v = version; v < kSchemaVersion; ++v)
      c.exec_simple(kMigrations[v]);
    if (version < kSchemaVersion)
      c.exec("UPDATE trigger_store_schema SET version = $1", kSchemaVersion);
    return {};
  });
  if (!migrated)
    return migrated.err();
  return std::unique_ptr<pg_store>(new pg_store(std::move(s)));
}

pg_store::pg_store(std::unique_ptr<impl> i) : impl_(std::move(i)) {}
pg_store::~pg_store() = default;

// ---------------------------------------------------------------------------------------------
// triggers

result<trigger> pg_store::create_trigger(const trigger& t, const std::optional<schedule_state>& s) {
  ENACT_TRY_VOID(check_new_trigger(t));
  const std::string config = json::serialize(t.config);
  return impl_->write([&](connection& c) -> result<trigger> {
    const auto inserted =
        c.exec(
             "INSERT INTO triggers (id, owner, type, name, enabled, action_cid, pkp_id, "
             "sealed_usage_key, usage_key_hash, config, created_at, updated_at, max_runs_per_minute, "
             "max_queued_runs) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) "
             "ON CONFLICT (id) DO NOTHING",
             t.id, t.owner, to_string(t.type), t.name, t.enabled, t.action_cid, t.pkp_id, t.sealed_usage_key,
             t.usage_key_hash, config, t.created_at, t.updated_at, t.max_runs_per_minute, t.max_queued_runs)
            .affected();
    if (inserted == 0)
      return fail(store_errc::conflict, "trigger " + t.id + ": exists already");
    if (s)
      c.exec("INSERT INTO schedule_state (trigger_id, next_due, last_planned) VALUES ($1, $2, $3)", t.id, s->next_due,
             s->last_planned);
    return t;
  });
}

result<trigger> pg_store::get_trigger(std::string_view owner, std::string_view id) const {
  return impl_->once([&](connection& c) -> result<trigger> {
    auto t = load_trigger(c, id);
    if (!t || t->owner != owner)
      return no_trigger(id);
    return std::move(*t);
  });
}

result<trigger> pg_store::find_trigger(std::string_view id) const {
  return impl_->once([&](connection& c) -> result<trigger> {
    auto t = load_trigger(c, id);
    if (!t)
      return no_trigger(id);
    return std::move(*t);
  });
}

result<listing<trigger>> pg_store::list_triggers(std::string_view owner, page p) const {
  return impl_->once([&](connection& c) -> result<listing<trigger>> {
    rows n = c.exec("SELECT COUNT(*) FROM triggers WHERE owner = $1", owner);
    rows q = c.exec("SELECT " TRIGGER_COLUMNS "FROM triggers t WHERE t.owner = $1 ORDER BY t.seq LIMIT $2 OFFSET $3",
                    owner, p.limit, p.offset);
    return read_listing<trigger>(n, q, [](const rows& row) { return read_trigger(row); });
  });
}

result<trigger> pg_store::update_trigger(std::string_view owner, std::string_view id, const trigger_patch& patch) {
  ENACT_TRY_VOID(check_patch(patch));
  std::optional<std::string> config;
  if (patch.config)
    config = json::serialize(*patch.config);
  return impl_->write([&](connection& c) -> result<trigger> {
    std::optional<trigger> t;
    {
      rows q = c.exec("SELECT " TRIGGER_COLUMNS "FROM triggers t WHERE t.id = $1 FOR UPDATE", id);
      if (q.next())
        t = read_trigger(q);
    }
    if (!t || t->owner != owner)
      return no_trigger(id);
    apply_patch(*t, patch);
    c.exec(
        "UPDATE triggers SET name = $1, enabled = $2, config = $3, action_cid = $4, pkp_id = $5, "
        "sealed_usage_key = $6, usage_key_hash = $7, updated_at = $8, max_runs_per_minute = $9, "
        "max_queued_runs = $10 WHERE id = $11",
        t->name, t->enabled, config ? *config : json::serialize(t->config), t->action_cid, t->pkp_id,
        t->sealed_usage_key, t->usage_key_hash, t->updated_at, t->max_runs_per_minute, t->max_queued_runs, t->id);
    if (patch.schedule)
      c.exec(
          "INSERT INTO schedule_state (trigger_id, next_due, last_planned) VALUES ($1, $2, $3) "
          "ON CONFLICT (trigger_id) DO UPDATE SET next_due = excluded.next_due, "
          "last_planned = excluded.last_planned",
          t->id, patch.schedule->next_due, patch.schedule->last_planned);
    return std::move(*t);
  });
}

result<void> pg_store::delete_trigger(std::string_view owner, std::string_view id) {
  return impl_->once([&](connection& c) -> result<void> {
    if (c.exec("DELETE FROM triggers WHERE id = $1 AND owner = $2", id, owner).affected() == 0)
      return no_trigger(id);
    return {};
  });
}

}  // namespace enact::triggers
