// SPDX-License-Identifier: Apache-2.0
// The PostgreSQL trigger store (pg_store.hpp): runs and their leases, schedules, and the chain
// watcher's checkpoints and logs.
#include "triggers/pg_store_internal.hpp"

namespace enact::triggers {

using namespace pg_backend;

// ---------------------------------------------------------------------------------------------
// runs

result<run> pg_store::enqueue_run(const new_run& r, trigger_type expected) {
  ENACT_TRY_VOID(check_new_run(r));
  const std::string params = json::serialize(r.params);
  return impl_->once([&](connection& c) -> result<run> {
    // One statement, one round trip and one commit: the checks and the insert see one snapshot.
    // (Requests of one trigger at the same instant may each see the others' runs not yet
    // committed, so the limits may be passed by as many runs as arrive at once.)
    const auto inserted = c.exec(
                               "INSERT INTO runs (id, trigger_id, status, params, queued_at, next_attempt_at) "
                               "SELECT $1::text, t.id, 'queued', $3::text, $4::bigint, $4::bigint FROM triggers t "
                               "WHERE t.id = $2::text AND t.type = $5::text AND t.enabled AND " RUNS_THIS_MINUTE(
                                   "$6::bigint") " < t.max_runs_per_minute AND " RUNS_UNFINISHED " < t.max_queued_runs",
                               r.id, r.trigger_id, params, r.queued_at, to_string(expected), minute_of(r.queued_at))
                              .affected();
    if (inserted == 1)
      return queued_run(r);
    rows q = c.exec("SELECT type, enabled FROM triggers WHERE id = $1", r.trigger_id);
    if (!q.next())
      return no_trigger(r.trigger_id);
    if (q.raw(0) != to_string(expected))
      return fail(store_errc::wrong_type,
                  "trigger " + r.trigger_id + ": not a " + std::string(to_string(expected)) + " trigger");
    if (!q.boolean(1))
      return fail(store_errc::disabled, "trigger " + r.trigger_id + ": disabled");
    if (auto over = over_limits(c, r.trigger_id, r.queued_at))
      return *over;
    // Enabled again (or re-created) between the two statements: the caller may try again.
    return fail(store_errc::conflict, "trigger " + r.trigger_id + ": changed while queuing");
  });
}

result<run> pg_store::get_run(std::string_view owner, std::string_view run_id) const {
  return impl_->once([&](connection& c) -> result<run> {
    rows q = c.exec("SELECT " RUN_COLUMNS
                    ", t.owner FROM runs r JOIN triggers t ON t.id = r.trigger_id "
                    "WHERE r.id = $1",
                    run_id);
    if (!q.next() || q.raw(kRunColumns) != owner)
      return no_run(run_id);
    return read_run(q);
  });
}

result<listing<run>> pg_store::list_runs(std::string_view owner, std::string_view trigger_id, page p) const {
  return impl_->once([&](connection& c) -> result<listing<run>> {
    auto t = load_trigger(c, trigger_id);
    if (!t || t->owner != owner)
      return no_trigger(trigger_id);
    rows n = c.exec("SELECT COUNT(*) FROM runs WHERE trigger_id = $1", trigger_id);
    rows q = c.exec("SELECT " RUN_COLUMNS "FROM runs r WHERE r.trigger_id = $1 ORDER BY r.seq DESC LIMIT $2 OFFSET $3",
                    trigger_id, p.limit, p.offset);
    return read_listing<run>(n, q, [](const rows& row) { return read_run(row); });
  });
}

result<std::vector<leased_run>> pg_store::lease_runs(const lease_request& req) {
  if (req.worker_id.empty() || req.max_runs == 0)
    return fail(store_errc::invalid_argument, "lease: worker_id must not be empty, max_runs ≥ 1");
  ENACT_TRY_VOID(check_text("lease.worker_id", req.worker_id, 256));
  // A read first: idle workers polling an empty queue open no transaction and lock nothing.
  auto anything = impl_->once([&](connection& c) -> result<bool> {
    rows q = c.exec(
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
  return impl_->write([&](connection& c) -> result<std::vector<leased_run>> {
    expire(c, req.now, req.max_attempts, false);
    // SKIP LOCKED: runs another instance is leasing right now are passed over, not waited for.
    rows q = c.exec(
        "WITH picked AS (SELECT seq FROM runs WHERE lease_owner IS NULL AND status IN "
        "('queued', 'running') AND next_attempt_at <= $1::bigint ORDER BY next_attempt_at, seq "
        "LIMIT $2::bigint FOR UPDATE SKIP LOCKED) "
        "UPDATE runs r SET status = 'running', attempts = r.attempts + 1, lease_owner = $3::text, "
        "lease_expires_at = $4::bigint, started_at = COALESCE(r.started_at, $1::bigint) "
        "FROM picked p, triggers t WHERE r.seq = p.seq AND t.id = r.trigger_id "
        "RETURNING " RUN_COLUMNS ", t.owner, t.action_cid, t.pkp_id, t.sealed_usage_key, r.seq",
        req.now, static_cast<uint64_t>(req.max_runs), req.worker_id, until);
    std::vector<std::pair<int64_t, leased_run>> got;
    while (q.next()) {
      leased_run l;
      l.r = read_run(q);
      l.owner = q.text(kRunColumns);
      l.action_cid = q.text(kRunColumns + 1);
      if (!q.is_null(kRunColumns + 2))
        l.pkp_id = q.fixed<20>(kRunColumns + 2);
      l.sealed_usage_key = q.blob(kRunColumns + 3);
      got.emplace_back(q.i64(kRunColumns + 4), std::move(l));
    }
    // RETURNING has no order: oldest due first, as picked.
    std::sort(got.begin(), got.end(), [](const auto& a, const auto& b) {
      return std::pair(a.second.r.next_attempt_at, a.first) < std::pair(b.second.r.next_attempt_at, b.first);
    });
    std::vector<leased_run> out;
    out.reserve(got.size());
    for (auto& g : got)
      out.push_back(std::move(g.second));
    return out;
  });
}

result<void> pg_store::renew_lease(const lease_ref& l, time_point expires_at) {
  return impl_->once([&](connection& c) -> result<void> {
    if (c.exec("UPDATE runs SET lease_expires_at = $1 WHERE id = $2 AND lease_owner = $3 AND "
               "attempts = $4 AND status = 'running'",
               expires_at, l.run_id, l.worker_id, l.attempt)
            .affected() == 0)
      return lease_lost(l);
    return {};
  });
}

result<void> pg_store::complete_run(const lease_ref& l, const json::value& response, time_point now) {
  const std::string body = json::serialize(response);
  return impl_->once([&](connection& c) -> result<void> {
    if (c.exec("UPDATE runs SET status = 'success', response = $1, error_code = NULL, "
               "error_message = NULL, error_stack = NULL, finished_at = $2, lease_owner = NULL, "
               "lease_expires_at = NULL WHERE id = $3 AND lease_owner = $4 AND attempts = $5 AND "
               "status = 'running'",
               body, now, l.run_id, l.worker_id, l.attempt)
            .affected() == 0)
      return lease_lost(l);
    return {};
  });
}

result<void> pg_store::fail_run(const lease_ref& l, const run_error& e, time_point now) {
  return impl_->once([&](connection& c) -> result<void> {
    if (c.exec("UPDATE runs SET status = 'failed', error_code = $1, error_message = $2, "
               "error_stack = $3, finished_at = $4, lease_owner = NULL, lease_expires_at = NULL "
               "WHERE id = $5 AND lease_owner = $6 AND attempts = $7 AND status = 'running'",
               e.code, e.message, e.stack, now, l.run_id, l.worker_id, l.attempt)
            .affected() == 0)
      return lease_lost(l);
    return {};
  });
}

result<void> pg_store::retry_run_later(const lease_ref& l, const run_error& e, time_point next_attempt_at) {
  return impl_->once([&](connection& c) -> result<void> {
    if (c.exec("UPDATE runs SET error_code = $1, error_message = $2, error_stack = $3, "
               "next_attempt_at = $4, lease_owner = NULL, lease_expires_at = NULL "
               "WHERE id = $5 AND lease_owner = $6 AND attempts = $7 AND status = 'running'",
               e.code, e.message, e.stack, next_attempt_at, l.run_id, l.worker_id, l.attempt)
            .affected() == 0)
      return lease_lost(l);
    return {};
  });
}

result<size_t> pg_store::expire_leases(time_point now, uint32_t max_attempts) {
  return impl_->write([&](connection& c) -> result<size_t> { return expire(c, now, max_attempts, false); });
}

result<size_t> pg_store::release_all_leases(time_point now, uint32_t max_attempts) {
  return impl_->write([&](connection& c) -> result<size_t> { return expire(c, now, max_attempts, true); });
}

result<std::optional<time_point>> pg_store::next_run_wakeup() const {
  return impl_->once([&](connection& c) -> result<std::optional<time_point>> {
    // LEAST ignores NULLs: the earlier of the two, or NULL when both are.
    rows q = c.exec(
        "SELECT LEAST((SELECT MIN(next_attempt_at) FROM runs WHERE lease_owner IS NULL AND status "
        "IN ('queued', 'running')), (SELECT MIN(lease_expires_at) FROM runs WHERE lease_owner IS "
        "NOT NULL))");
    if (!q.next())
      return std::optional<time_point>{};
    return q.opt_time(0);
  });
}

// ---------------------------------------------------------------------------------------------
// schedules

namespace {
std::optional<scheduled_trigger> read_schedule(const rows& q) {
  scheduled_trigger s;
  s.trigger_id = q.text(0);
  const json::value cfg = q.json_value(1);
  const auto* cron = cfg.is_object() ? cfg.as_object().if_contains("cron") : nullptr;
  if (cron == nullptr || !cron->is_string())
    return std::nullopt;  // not a valid schedule: the API never stores one
  s.cron = std::string(cron->get_string());
  if (!q.is_null(2))
    s.state = schedule_state{q.time(2), q.opt_time(3)};
  return s;
}
}  // namespace

result<std::vector<scheduled_trigger>> pg_store::list_schedules() const {
  return impl_->once([&](connection& c) -> result<std::vector<scheduled_trigger>> {
    std::vector<scheduled_trigger> out;
    rows q = c.exec(
        "SELECT t.id, t.config, s.next_due, s.last_planned FROM triggers t LEFT JOIN "
        "schedule_state s ON s.trigger_id = t.id WHERE t.type = 'schedule' AND t.enabled "
        "ORDER BY t.seq");
    while (q.next())
      if (auto s = read_schedule(q))
        out.push_back(std::move(*s));
    return out;
  });
}

result<std::optional<scheduled_trigger>> pg_store::get_schedule(std::string_view trigger_id) const {
  return impl_->once([&](connection& c) -> result<std::optional<scheduled_trigger>> {
    rows q = c.exec(
        "SELECT t.id, t.config, s.next_due, s.last_planned FROM triggers t LEFT JOIN "
        "schedule_state s ON s.trigger_id = t.id WHERE t.id = $1 AND t.type = 'schedule' AND "
        "t.enabled",
        trigger_id);
    if (!q.next())
      return std::optional<scheduled_trigger>{};
    return read_schedule(q);
  });
}

result<std::optional<run>> pg_store::fire_schedule(std::string_view trigger_id, time_point expected_due,
                                                   time_point planned, const new_run& r, time_point next_due) {
  ENACT_TRY_VOID(check_new_run(r));
  const std::string params = json::serialize(r.params);
  return impl_->write([&](connection& c) -> result<std::optional<run>> {
    // The row lock makes a second scheduler (another instance) wait, then see the new due time.
    {
      rows q = c.exec(
          "SELECT s.next_due FROM schedule_state s JOIN triggers t ON t.id = s.trigger_id "
          "WHERE s.trigger_id = $1 AND t.type = 'schedule' AND t.enabled FOR UPDATE OF s",
          trigger_id);
      if (!q.next() || q.time(0) != expected_due)
        return std::optional<run>{};
    }
    run out = insert_or_refuse(c, r, params);
    c.exec("UPDATE schedule_state SET next_due = $1, last_planned = $2 WHERE trigger_id = $3", next_due, planned,
           trigger_id);
    return std::optional<run>(std::move(out));
  });
}

result<void> pg_store::set_schedule_state(std::string_view trigger_id, const schedule_state& s) {
  return impl_->write([&](connection& c) -> result<void> {
    if (c.exec("SELECT 1 FROM triggers WHERE id = $1", trigger_id).count() == 0)
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

result<std::optional<uint64_t>> pg_store::chain_checkpoint(std::string_view trigger_id) const {
  return impl_->once([&](connection& c) -> result<std::optional<uint64_t>> {
    rows q = c.exec("SELECT block FROM chain_checkpoints WHERE trigger_id = $1", trigger_id);
    if (!q.next())
      return std::optional<uint64_t>{};
    return std::optional<uint64_t>(q.u64(0));
  });
}

result<std::vector<run>> pg_store::record_chain_batch(const chain_batch& b) {
  std::vector<std::string> params;
  params.reserve(b.logs.size());
  for (const auto& e : b.logs) {
    if (e.log.trigger_id != b.trigger_id || (!e.fire.id.empty() && e.fire.trigger_id != b.trigger_id))
      return fail(store_errc::invalid_argument, "chain batch: every log and run must name trigger " + b.trigger_id);
    if (!e.fire.id.empty())
      ENACT_TRY_VOID(check_new_run(e.fire));
    params.push_back(json::serialize(e.fire.params));
  }
  return impl_->write([&](connection& c) -> result<std::vector<run>> {
    {
      rows q = c.exec("SELECT type, enabled FROM triggers WHERE id = $1", b.trigger_id);
      if (!q.next())
        return no_trigger(b.trigger_id);
      if (q.raw(0) != to_string(trigger_type::chain_event))
        return fail(store_errc::wrong_type, "trigger " + b.trigger_id + ": not a chain-event trigger");
      if (!q.boolean(1))
        return fail(store_errc::disabled, "trigger " + b.trigger_id + ": disabled");
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
        out.push_back(insert_or_refuse(c, e.fire, params[i]));
    }
    if (b.checkpoint_block)
      c.exec(
          "INSERT INTO chain_checkpoints (trigger_id, block) VALUES ($1, $2) "
          "ON CONFLICT (trigger_id) DO UPDATE SET block = excluded.block",
          b.trigger_id, *b.checkpoint_block);
    return out;
  });
}

result<size_t> pg_store::mark_logs_removed(std::string_view trigger_id, const hash256& block_hash) {
  return impl_->once([&](connection& c) -> result<size_t> {
    return static_cast<size_t>(
        c.exec("UPDATE chain_logs SET removed = true WHERE trigger_id = $1 AND block_hash = $2 AND "
               "NOT removed",
               trigger_id, block_hash)
            .affected());
  });
}

result<std::optional<seen_log>> pg_store::find_seen_log(std::string_view trigger_id, const hash256& block_hash,
                                                        uint64_t log_index) const {
  return impl_->once([&](connection& c) -> result<std::optional<seen_log>> {
    rows q = c.exec(
        "SELECT block_number, removed, run_id, seen_at FROM chain_logs WHERE trigger_id = $1 "
        "AND block_hash = $2 AND log_index = $3",
        trigger_id, block_hash, log_index);
    if (!q.next())
      return std::optional<seen_log>{};
    seen_log l;
    l.trigger_id = std::string(trigger_id);
    l.block_hash = block_hash;
    l.log_index = log_index;
    l.block_number = q.u64(0);
    l.removed = q.boolean(1);
    l.run_id = q.text(2);
    l.seen_at = q.time(3);
    return std::optional<seen_log>(std::move(l));
  });
}

result<std::vector<trigger>> pg_store::list_chain_triggers() const {
  return impl_->once([&](connection& c) -> result<std::vector<trigger>> {
    rows q = c.exec("SELECT " TRIGGER_COLUMNS
                    "FROM triggers t WHERE t.type = $1 AND t.enabled "
                    "ORDER BY t.seq",
                    to_string(trigger_type::chain_event));
    std::vector<trigger> out;
    while (q.next())
      out.push_back(read_trigger(q));
    return out;
  });
}

result<std::vector<seen_log>> pg_store::list_seen_logs(std::string_view trigger_id, uint64_t from_block) const {
  return impl_->once([&](connection& c) -> result<std::vector<seen_log>> {
    rows q = c.exec(
        "SELECT block_hash, log_index, block_number, run_id, seen_at FROM chain_logs "
        "WHERE trigger_id = $1 AND block_number >= $2 AND NOT removed "
        "ORDER BY block_number, log_index",
        trigger_id, from_block);
    std::vector<seen_log> out;
    while (q.next()) {
      seen_log l;
      l.trigger_id = std::string(trigger_id);
      l.block_hash = q.fixed<32>(0);
      l.log_index = q.u64(1);
      l.block_number = q.u64(2);
      l.run_id = q.text(3);
      l.seen_at = q.time(4);
      out.push_back(std::move(l));
    }
    return out;
  });
}

}  // namespace enact::triggers
