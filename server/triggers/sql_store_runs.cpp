// SPDX-License-Identifier: Apache-2.0
// The trigger store's body over SQL (sql_store.hpp): runs and their leases, schedules, and the
// chain watcher's checkpoints and logs.
#include <limits>

#include "triggers/sql_store_internal.hpp"
#include "triggers/webhook.hpp"

namespace enact::triggers {

using namespace store_rows;
using sql::connection;
using sql::cursor;

namespace sql {

result<run_limits> queueable(connection& c, const std::string& id, trigger_type expected) {
  cursor q = c.exec("SELECT type, enabled, max_runs_per_minute, max_queued_runs FROM triggers WHERE id = $1", id);
  if (!q.next())
    return no_trigger(id);
  if (q.text(0) != to_string(expected))
    return fail(store_errc::wrong_type, "trigger " + id + ": not a " + std::string(to_string(expected)) + " trigger");
  if (!q.boolean(1))
    return fail(store_errc::disabled, "trigger " + id + ": disabled");
  return run_limits{q.i64(2), q.i64(3)};
}

run insert_run(connection& c, const new_run& r, const std::string& params_json) {
  c.exec(
      "INSERT INTO runs (id, trigger_id, status, params, queued_at, next_attempt_at) "
      "VALUES ($1, $2, 'queued', $3, $4, $4)",
      r.id, r.trigger_id, params_json, r.queued_at);
  return queued_run(r);
}

std::optional<std::string> dedup_key(connection& c, const new_run& r) {
  cursor q = c.exec("SELECT config FROM triggers WHERE id = $1", r.trigger_id);
  if (!q.next())
    return std::nullopt;
  const std::string text = q.text(0);
  if (text.find("\"dedup_header\"") == std::string::npos)  // most webhooks: no parse
    return std::nullopt;
  std::error_code ec;
  const json::value config = json::parse(text, ec);
  const json::value* name = !ec && config.is_object() ? config.get_object().if_contains("dedup_header") : nullptr;
  const json::object* params = r.params.if_object();
  const json::value* headers = params != nullptr ? params->if_contains("headers") : nullptr;
  if (name == nullptr || !name->is_string() || headers == nullptr || !headers->is_object())
    return std::nullopt;
  // The params carry the headers lowercased (webhook_params); the setting keeps its spelling.
  std::string lower(name->get_string());
  for (char& ch : lower)
    if (ch >= 'A' && ch <= 'Z')
      ch = static_cast<char>(ch - 'A' + 'a');
  const json::value* value = headers->get_object().if_contains(lower);
  if (value == nullptr || !value->is_string() || value->get_string().empty())
    return std::nullopt;
  return std::string(value->get_string());
}

std::optional<run> find_duplicate(connection& c, const std::string& trigger_id, const std::string& key) {
  cursor q = c.exec("SELECT " RUN_COLUMNS "FROM runs r WHERE r.trigger_id = $1 AND r.dedup_key = $2", trigger_id, key);
  if (!q.next())
    return std::nullopt;
  return read_run(q);
}

std::optional<error> over_limits(connection& c, std::string_view id, int64_t per_minute, int64_t queued,
                                 time_point at) {
  const time_point minute = std::chrono::floor<std::chrono::minutes>(at);
  // The trigger's newest runs by seq (the runs_by_trigger index), at most the limit of them.
  if (cursor q = c.exec("SELECT COUNT(*) FROM (SELECT queued_at FROM runs WHERE trigger_id = $1 AND "
                        "NOT (status = 'failed' AND attempts = 0) ORDER BY seq DESC LIMIT $2) w "
                        "WHERE queued_at >= $3",
                        id, per_minute, minute);
      q.next() && q.i64(0) >= per_minute)
    return fail(store_errc::rate_limited, "trigger " + std::string(id) + ": " + std::to_string(per_minute) +
                                              " runs queued in this minute already (max_runs_per_minute)");
  if (cursor q = c.exec("SELECT COUNT(*) FROM (SELECT 1 FROM runs WHERE trigger_id = $1 AND "
                        "status IN ('queued', 'running') LIMIT $2) q",
                        id, queued);
      q.next() && q.i64(0) >= queued)
    return fail(store_errc::queue_full, "trigger " + std::string(id) + ": " + std::to_string(queued) +
                                            " runs queued or running already (max_queued_runs)");
  return std::nullopt;
}

run insert_or_refuse(connection& c, const new_run& r, const std::string& params_json, int64_t per_minute,
                     int64_t queued) {
  const auto over = over_limits(c, r.trigger_id, per_minute, queued, r.queued_at);
  if (!over)
    return insert_run(c, r, params_json);
  c.exec(
      "INSERT INTO runs (id, trigger_id, status, params, error_code, error_message, queued_at, "
      "finished_at, next_attempt_at) VALUES ($1, $2, 'failed', $3, $4, $5, $6, $6, $6)",
      r.id, r.trigger_id, params_json, kRateLimitedCode, over->message, r.queued_at);
  return refused_run(r, over->message);
}

size_t expire(connection& c, time_point now, uint32_t max_attempts, bool all) {
  const int64_t cutoff =
      all ? std::numeric_limits<int64_t>::max() : static_cast<int64_t>(now.time_since_epoch().count());
  auto n = c.exec(
                "UPDATE runs SET status = 'failed', finished_at = $1, lease_owner = NULL, "
                "lease_expires_at = NULL, error_code = 'lease_expired', error_message = "
                "'the worker running this attempt stopped answering, and no attempt is left', "
                "error_stack = NULL WHERE seq IN (SELECT seq FROM runs WHERE lease_owner IS NOT NULL "
                "AND lease_expires_at <= $2 AND attempts >= $3 FOR UPDATE SKIP LOCKED)",
                now, cutoff, max_attempts)
               .affected();
  n += c.exec(
            "UPDATE runs SET status = 'queued', lease_owner = NULL, lease_expires_at = NULL "
            "WHERE seq IN (SELECT seq FROM runs WHERE lease_owner IS NOT NULL AND "
            "lease_expires_at <= $1 FOR UPDATE SKIP LOCKED)",
            cutoff)
           .affected();
  return static_cast<size_t>(n);
}

leased_run read_leased(const cursor& q) {
  leased_run l;
  l.r = read_run(q);
  l.owner = q.text(kRunColumns);
  l.action_cid = q.text(kRunColumns + 1);
  if (!q.is_null(kRunColumns + 2))
    l.pkp_id = q.fixed<20>(kRunColumns + 2);
  l.sealed_usage_key = q.blob(kRunColumns + 3);
  return l;
}

}  // namespace sql

// ---------------------------------------------------------------------------------------------
// runs

result<run> sql_store::enqueue_run(const new_run& r, trigger_type expected) {
  ENACT_TRY_VOID(check_new_run(r));
  const std::string params = json::serialize(r.params);  // outside the backend's writer
  return write([&](connection& c) -> result<run> {
    ENACT_TRY(const sql::run_limits limits, sql::queueable(c, r.trigger_id, expected));
    // A webhook delivered again (its config.dedup_header value seen before) is its first run,
    // whatever the limits say now: nothing new is queued.
    const auto key = expected == trigger_type::webhook ? sql::dedup_key(c, r) : std::nullopt;
    if (key && key->size() > kMaxDedupValue)
      return fail(store_errc::invalid_argument,
                  "the de-duplication header's value is over " + std::to_string(kMaxDedupValue) + " bytes");
    if (key)
      if (auto first = sql::find_duplicate(c, r.trigger_id, *key))
        return std::move(*first);
    if (auto over = sql::over_limits(c, r.trigger_id, limits.per_minute, limits.queued, r.queued_at))
      return *over;
    if (!key)
      return sql::insert_run(c, r, params);
    // The unique (trigger_id, dedup_key) index decides between deliveries racing on several
    // instances: the loser inserts nothing and answers the winner's run.
    if (c.exec("INSERT INTO runs (id, trigger_id, status, params, queued_at, next_attempt_at, dedup_key) "
               "VALUES ($1, $2, 'queued', $3, $4, $4, $5) "
               "ON CONFLICT (trigger_id, dedup_key) WHERE dedup_key IS NOT NULL DO NOTHING",
               r.id, r.trigger_id, params, r.queued_at, *key)
            .affected() == 1)
      return queued_run(r);
    if (auto first = sql::find_duplicate(c, r.trigger_id, *key))
      return std::move(*first);
    return fail(store_errc::conflict, "trigger " + r.trigger_id + ": a delivery with this key was queued meanwhile");
  });
}

result<run> sql_store::get_run(std::string_view owner, std::string_view run_id) const {
  return read([&](connection& c) -> result<run> {
    cursor q = c.exec(
        "SELECT " RUN_COLUMNS ", t.owner FROM runs r JOIN triggers t ON t.id = r.trigger_id WHERE r.id = $1", run_id);
    if (!q.next() || q.text(kRunColumns) != owner)
      return no_run(run_id);
    return read_run(q);
  });
}

result<listing<run>> sql_store::list_runs(std::string_view owner, std::string_view trigger_id, page p) const {
  return read([&](connection& c) -> result<listing<run>> {
    auto t = sql::load_trigger(c, trigger_id);
    if (!t || t->owner != owner)
      return no_trigger(trigger_id);
    cursor n = c.exec("SELECT COUNT(*) FROM runs WHERE trigger_id = $1", trigger_id);
    cursor q =
        c.exec("SELECT " RUN_COLUMNS "FROM runs r WHERE r.trigger_id = $1 ORDER BY r.seq DESC LIMIT $2 OFFSET $3",
               trigger_id, p.limit, p.offset);
    return read_listing<run>(n, q, [](const cursor& row) { return read_run(row); });
  });
}

result<std::vector<leased_run>> sql_store::lease_runs(const lease_request& req) {
  if (req.worker_id.empty() || req.max_runs == 0)
    return fail(store_errc::invalid_argument, "lease: worker_id must not be empty, max_runs ≥ 1");
  ENACT_TRY_VOID(check_text("lease.worker_id", req.worker_id, 256));
  // A read first: idle workers polling an empty queue open no write transaction and lock nothing.
  auto anything = read([&](connection& c) -> result<bool> {
    cursor q = c.exec(
        "SELECT EXISTS (SELECT 1 FROM runs WHERE lease_owner IS NULL AND status IN "
        "('queued', 'running') AND next_attempt_at <= $1) OR EXISTS (SELECT 1 FROM runs "
        "WHERE lease_owner IS NOT NULL AND lease_expires_at <= $1)",
        req.now);
    return q.next() && q.boolean(0);
  });
  if (!anything)
    return anything.err();
  if (!*anything)
    return std::vector<leased_run>{};
  const time_point until = req.now + req.duration;
  return write([&](connection& c) -> result<std::vector<leased_run>> {
    sql::expire(c, req.now, req.max_attempts, false);
    return lease_due(c, req, until);
  });
}

std::vector<leased_run> sql_store::lease_due(connection& c, const lease_request& req, time_point until) {
  std::vector<int64_t> picked;
  {
    cursor q = c.exec(
        "SELECT seq FROM runs WHERE lease_owner IS NULL AND status IN ('queued', 'running') "
        "AND next_attempt_at <= $1 ORDER BY next_attempt_at, seq LIMIT $2 FOR UPDATE SKIP LOCKED",
        req.now, static_cast<uint64_t>(req.max_runs));
    while (q.next())
      picked.push_back(q.i64(0));
  }
  std::vector<leased_run> out;
  out.reserve(picked.size());
  for (const int64_t seq : picked) {
    c.exec(
        "UPDATE runs SET status = 'running', attempts = attempts + 1, lease_owner = $1, "
        "lease_expires_at = $2, started_at = COALESCE(started_at, $3) WHERE seq = $4",
        req.worker_id, until, req.now, seq);
    cursor q = c.exec("SELECT " RUN_COLUMNS
                      ", t.owner, t.action_cid, t.pkp_id, t.sealed_usage_key "
                      "FROM runs r JOIN triggers t ON t.id = r.trigger_id WHERE r.seq = $1",
                      seq);
    if (!q.next())
      throw corrupt_row("leased run vanished");
    out.push_back(sql::read_leased(q));
  }
  return out;
}

/// A write the worker holding lease `l` makes; lease_lost when it no longer holds it.
#define LEASE_HELD "WHERE id = $1 AND lease_owner = $2 AND attempts = $3 AND status = 'running'"

result<void> sql_store::renew_lease(const lease_ref& l, time_point expires_at) {
  return write_one([&](connection& c) -> result<void> {
    if (c.exec("UPDATE runs SET lease_expires_at = $4 " LEASE_HELD, l.run_id, l.worker_id, l.attempt, expires_at)
            .affected() == 0)
      return lease_lost(l);
    return {};
  });
}

/// The trigger of run $1, in a statement on triggers.
#define TRIGGER_OF_RUN "id = (SELECT trigger_id FROM runs WHERE id = $1)"

result<void> sql_store::complete_run(const lease_ref& l, const json::value& response, time_point now) {
  const std::string body = json::serialize(response);
  return write([&](connection& c) -> result<void> {
    if (c.exec("UPDATE runs SET status = 'success', response = $4, error_code = NULL, error_message = NULL, "
               "error_stack = NULL, finished_at = $5, lease_owner = NULL, lease_expires_at = NULL " LEASE_HELD,
               l.run_id, l.worker_id, l.attempt, body, now)
            .affected() == 0)
      return lease_lost(l);
    // A run that ran ends the trigger's row of credit failures (store.hpp fail_run); most triggers
    // have none, and their row is not written.
    c.exec("UPDATE triggers SET credit_failures = 0 WHERE " TRIGGER_OF_RUN " AND credit_failures <> 0", l.run_id);
    return {};
  });
}

result<bool> sql_store::fail_run(const lease_ref& l, const run_error& e, time_point now,
                                 uint32_t disable_after_credit_failures) {
  return write([&](connection& c) -> result<bool> {
    if (c.exec("UPDATE runs SET status = 'failed', error_code = $4, error_message = $5, error_stack = $6, "
               "finished_at = $7, lease_owner = NULL, lease_expires_at = NULL " LEASE_HELD,
               l.run_id, l.worker_id, l.attempt, e.code, e.message, e.stack, now)
            .affected() == 0)
      return lease_lost(l);
    // docs/protocol.md §4 "Limits": only schedules count, since nobody sends their firings; a
    // failure of another kind breaks the row.
    if (e.code != kInsufficientCreditsCode) {
      c.exec("UPDATE triggers SET credit_failures = 0 WHERE " TRIGGER_OF_RUN " AND credit_failures <> 0", l.run_id);
      return false;
    }
    c.exec("UPDATE triggers SET credit_failures = credit_failures + 1 WHERE " TRIGGER_OF_RUN " AND type = 'schedule'",
           l.run_id);
    if (disable_after_credit_failures == 0)
      return false;
    // Only an enabled trigger: one its owner disabled keeps the owner's state, without a reason.
    return c.exec("UPDATE triggers SET enabled = FALSE, disabled_reason = $2, updated_at = $3 WHERE " TRIGGER_OF_RUN
                  " AND type = 'schedule' AND enabled = TRUE AND credit_failures >= $4",
                  l.run_id, credit_disabled_reason(disable_after_credit_failures), now, disable_after_credit_failures)
               .affected() == 1;
  });
}

result<void> sql_store::retry_run_later(const lease_ref& l, const run_error& e, time_point next_attempt_at) {
  return write_one([&](connection& c) -> result<void> {
    if (c.exec("UPDATE runs SET error_code = $4, error_message = $5, error_stack = $6, next_attempt_at = $7, "
               "lease_owner = NULL, lease_expires_at = NULL " LEASE_HELD,
               l.run_id, l.worker_id, l.attempt, e.code, e.message, e.stack, next_attempt_at)
            .affected() == 0)
      return lease_lost(l);
    return {};
  });
}

result<size_t> sql_store::expire_leases(time_point now, uint32_t max_attempts) {
  return write([&](connection& c) -> result<size_t> { return sql::expire(c, now, max_attempts, false); });
}

result<size_t> sql_store::release_all_leases(time_point now, uint32_t max_attempts) {
  return write([&](connection& c) -> result<size_t> { return sql::expire(c, now, max_attempts, true); });
}

result<size_t> sql_store::delete_finished_runs(time_point before, size_t limit) {
  return write([&](connection& c) -> result<size_t> {
    return static_cast<size_t>(c.exec("DELETE FROM runs WHERE seq IN (SELECT seq FROM runs WHERE status IN "
                                      "('success', 'failed') AND finished_at < $1 ORDER BY finished_at LIMIT $2)",
                                      before, static_cast<int64_t>(limit))
                                   .affected());
  });
}

result<std::optional<time_point>> sql_store::next_run_wakeup() const {
  return read([&](connection& c) -> result<std::optional<time_point>> {
    // The earlier of the two, or nullopt when neither exists.
    std::optional<time_point> out;
    for (const char* sql : {"SELECT MIN(next_attempt_at) FROM runs WHERE lease_owner IS NULL AND status IN "
                            "('queued', 'running')",
                            "SELECT MIN(lease_expires_at) FROM runs WHERE lease_owner IS NOT NULL"}) {
      cursor q = c.exec(sql);
      if (q.next() && !q.is_null(0) && (!out || time_at(q, 0) < *out))
        out = time_at(q, 0);
    }
    return out;
  });
}

// ---------------------------------------------------------------------------------------------
// schedules

result<std::vector<scheduled_trigger>> sql_store::list_schedules() const {
  return read([&](connection& c) -> result<std::vector<scheduled_trigger>> {
    std::vector<scheduled_trigger> out;
    cursor q = c.exec(
        "SELECT t.id, t.config, s.next_due, s.last_planned FROM triggers t LEFT JOIN "
        "schedule_state s ON s.trigger_id = t.id WHERE t.type = 'schedule' AND t.enabled = TRUE "
        "ORDER BY t.seq");
    while (q.next())
      if (auto s = read_schedule(q))
        out.push_back(std::move(*s));
    return out;
  });
}

result<std::optional<scheduled_trigger>> sql_store::get_schedule(std::string_view trigger_id) const {
  return read([&](connection& c) -> result<std::optional<scheduled_trigger>> {
    cursor q = c.exec(
        "SELECT t.id, t.config, s.next_due, s.last_planned FROM triggers t LEFT JOIN "
        "schedule_state s ON s.trigger_id = t.id WHERE t.id = $1 AND t.type = 'schedule' AND "
        "t.enabled = TRUE",
        trigger_id);
    if (!q.next())
      return std::optional<scheduled_trigger>{};
    return read_schedule(q);
  });
}

std::optional<run> sql_store::fire(connection& c, const schedule_firing& f, const std::string& params) {
  int64_t per_minute = 0;
  int64_t queued = 0;
  {
    // The row lock makes a second scheduler (another instance) wait, then see the new due time.
    cursor q = c.exec(
        "SELECT s.next_due, t.max_runs_per_minute, t.max_queued_runs FROM schedule_state s "
        "JOIN triggers t ON t.id = s.trigger_id "
        "WHERE s.trigger_id = $1 AND t.type = 'schedule' AND t.enabled = TRUE FOR UPDATE OF s",
        f.trigger_id);
    if (!q.next() || time_at(q, 0) != f.expected_due)
      return std::nullopt;
    per_minute = q.i64(1);
    queued = q.i64(2);
  }
  run out = sql::insert_or_refuse(c, f.r, params, per_minute, queued);
  c.exec("UPDATE schedule_state SET next_due = $1, last_planned = $2 WHERE trigger_id = $3", f.next_due, f.planned,
         f.trigger_id);
  return out;
}

result<std::optional<run>> sql_store::fire_schedule(std::string_view trigger_id, time_point expected_due,
                                                    time_point planned, const new_run& r, time_point next_due) {
  ENACT_TRY_VOID(check_new_run(r));
  const std::string params = json::serialize(r.params);
  const schedule_firing f{std::string(trigger_id), expected_due, planned, r, next_due};
  return write([&](connection& c) -> result<std::optional<run>> { return fire(c, f, params); });
}

result<void> sql_store::set_schedule_state(std::string_view trigger_id, const schedule_state& s) {
  return write([&](connection& c) -> result<void> {
    if (!c.exec("SELECT 1 FROM triggers WHERE id = $1", trigger_id).next())
      return no_trigger(trigger_id);
    c.exec(
        "INSERT INTO schedule_state (trigger_id, next_due, last_planned) VALUES ($1, $2, $3) "
        "ON CONFLICT (trigger_id) DO UPDATE SET next_due = excluded.next_due, "
        "last_planned = excluded.last_planned",
        trigger_id, s.next_due, s.last_planned);
    return {};
  });
}

// ---------------------------------------------------------------------------------------------
// chain watcher

result<std::optional<chain_position>> sql_store::chain_checkpoint(std::string_view trigger_id) const {
  return read([&](connection& c) -> result<std::optional<chain_position>> {
    cursor q = c.exec("SELECT block, block_hash FROM chain_checkpoints WHERE trigger_id = $1", trigger_id);
    if (!q.next())
      return std::optional<chain_position>{};
    chain_position p{q.u64(0), std::nullopt};
    if (!q.is_null(1))
      p.block_hash = q.fixed<32>(1);
    return std::optional<chain_position>(p);
  });
}

result<std::vector<run>> sql_store::record_chain_batch(const chain_batch& b) {
  std::vector<std::string> params;
  params.reserve(b.logs.size());
  for (const auto& e : b.logs) {
    if (e.log.trigger_id != b.trigger_id || (!e.fire.id.empty() && e.fire.trigger_id != b.trigger_id))
      return fail(store_errc::invalid_argument, "chain batch: every log and run must name trigger " + b.trigger_id);
    if (!e.fire.id.empty())
      ENACT_TRY_VOID(check_new_run(e.fire));
    params.push_back(json::serialize(e.fire.params));
  }
  return write([&](connection& c) -> result<std::vector<run>> {
    ENACT_TRY(const sql::run_limits limits, sql::queueable(c, b.trigger_id, trigger_type::chain_event));
    if (b.expected_checkpoint) {
      // The row lock makes a concurrent PATCH that drops the checkpoint wait for this batch, or
      // this batch see the row gone.
      cursor q = c.exec("SELECT block FROM chain_checkpoints WHERE trigger_id = $1 FOR UPDATE", b.trigger_id);
      const std::optional<uint64_t> stored = q.next() ? std::optional<uint64_t>(q.u64(0)) : std::nullopt;
      if (stored != *b.expected_checkpoint)
        return fail(store_errc::conflict, "trigger " + b.trigger_id + ": its chain checkpoint moved");
    }
    std::vector<run> out;
    for (size_t i = 0; i < b.logs.size(); ++i) {
      const auto& e = b.logs[i];
      const std::optional<std::string> run_id =
          e.fire.id.empty() ? std::nullopt : std::optional<std::string>(e.fire.id);
      // A second watcher inserting the same log waits for this one, then inserts nothing.
      const auto fresh = c.exec(
                              "INSERT INTO chain_logs (trigger_id, block_hash, log_index, block_number, "
                              "removed, run_id, seen_at) VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING",
                              b.trigger_id, e.log.block_hash, e.log.log_index, e.log.block_number, e.log.removed,
                              run_id, e.log.seen_at)
                             .affected();
      if (fresh == 1 && run_id)
        out.push_back(sql::insert_or_refuse(c, e.fire, params[i], limits.per_minute, limits.queued));
    }
    if (b.checkpoint_block)
      c.exec(
          "INSERT INTO chain_checkpoints (trigger_id, block, block_hash) VALUES ($1, $2, $3) "
          "ON CONFLICT (trigger_id) DO UPDATE SET block = excluded.block, block_hash = excluded.block_hash",
          b.trigger_id, *b.checkpoint_block, b.checkpoint_hash);
    return out;
  });
}

result<size_t> sql_store::mark_logs_removed(std::string_view trigger_id, const hash256& block_hash) {
  return write_one([&](connection& c) -> result<size_t> {
    return static_cast<size_t>(c.exec("UPDATE chain_logs SET removed = TRUE WHERE trigger_id = $1 AND "
                                      "block_hash = $2 AND removed = FALSE",
                                      trigger_id, block_hash)
                                   .affected());
  });
}

result<std::optional<seen_log>> sql_store::find_seen_log(std::string_view trigger_id, const hash256& block_hash,
                                                         uint64_t log_index) const {
  return read([&](connection& c) -> result<std::optional<seen_log>> {
    cursor q = c.exec(
        "SELECT block_number, removed, run_id, seen_at FROM chain_logs WHERE trigger_id = $1 "
        "AND block_hash = $2 AND log_index = $3",
        trigger_id, block_hash, log_index);
    if (!q.next())
      return std::optional<seen_log>{};
    return std::optional<seen_log>(
        seen_log{std::string(trigger_id), block_hash, log_index, q.u64(0), q.boolean(1), q.text(2), time_at(q, 3)});
  });
}

result<std::vector<trigger>> sql_store::list_chain_triggers() const {
  return read([&](connection& c) -> result<std::vector<trigger>> {
    cursor q = c.exec("SELECT " TRIGGER_COLUMNS "FROM triggers t WHERE t.type = $1 AND t.enabled = TRUE ORDER BY t.seq",
                      to_string(trigger_type::chain_event));
    std::vector<trigger> out;
    while (q.next())
      out.push_back(read_trigger(q));
    return out;
  });
}

result<std::vector<seen_log>> sql_store::list_seen_logs(std::string_view trigger_id, uint64_t from_block) const {
  return read([&](connection& c) -> result<std::vector<seen_log>> {
    cursor q = c.exec(
        "SELECT block_hash, log_index, block_number, run_id, seen_at FROM chain_logs "
        "WHERE trigger_id = $1 AND block_number >= $2 AND removed = FALSE "
        "ORDER BY block_number, log_index",
        trigger_id, from_block);
    std::vector<seen_log> out;
    while (q.next())
      out.push_back(
          seen_log{std::string(trigger_id), q.fixed<32>(0), q.u64(1), q.u64(2), false, q.text(3), time_at(q, 4)});
    return out;
  });
}

}  // namespace enact::triggers
