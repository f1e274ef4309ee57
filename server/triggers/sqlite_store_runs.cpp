// SPDX-License-Identifier: Apache-2.0
// The SQLite trigger store (sqlite_store.hpp): runs and their leases, schedules, and the chain
// watcher's checkpoints and logs.
#include "triggers/sqlite_store_internal.hpp"

namespace enact::triggers {

using namespace sqlite_backend;

// ---------------------------------------------------------------------------------------------
// runs

result<run> sqlite_store::enqueue_run(const new_run& r, trigger_type expected) {
  ENACT_TRY_VOID(check_new_run(r));
  const std::string params = json::serialize(r.params);  // outside the writer thread
  return impl_->write([&](connection& c) -> result<run> {
    query q(c, "SELECT type, enabled, max_runs_per_minute, max_queued_runs FROM triggers WHERE id = ?");
    q.bind(r.trigger_id);
    if (!q.next())
      return no_trigger(r.trigger_id);
    if (q.text(0) != to_string(expected))
      return fail(store_errc::wrong_type,
                  "trigger " + r.trigger_id + ": not a " + std::string(to_string(expected)) + " trigger");
    if (!q.boolean(1))
      return fail(store_errc::disabled, "trigger " + r.trigger_id + ": disabled");
    if (auto over = over_limits(c, r.trigger_id, q.i64(2), q.i64(3), r.queued_at))
      return *over;
    return insert_run(c, r, params);
  });
}

result<run> sqlite_store::get_run(std::string_view owner, std::string_view run_id) const {
  return impl_->read([&](connection& c) -> result<run> {
    query q(c, "SELECT " RUN_COLUMNS
               ", t.owner FROM runs r JOIN triggers t ON t.id = r.trigger_id "
               "WHERE r.id = ?");
    q.bind(run_id);
    if (!q.next() || q.text(kRunColumns) != owner)
      return no_run(run_id);
    return read_run(q);
  });
}

result<listing<run>> sqlite_store::list_runs(std::string_view owner, std::string_view trigger_id, page p) const {
  return impl_->read([&](connection& c) -> result<listing<run>> {
    auto t = load_trigger(c, trigger_id);
    if (!t || t->owner != owner)
      return no_trigger(trigger_id);
    query n(c, "SELECT COUNT(*) FROM runs WHERE trigger_id = ?");
    n.bind(trigger_id);
    query q(c, "SELECT " RUN_COLUMNS "FROM runs r WHERE r.trigger_id = ? ORDER BY r.seq DESC LIMIT ? OFFSET ?");
    q.bind(trigger_id, p.limit, p.offset);
    return read_listing<run>(n, q, [](const query& row) { return read_run(row); });
  });
}

result<std::vector<leased_run>> sqlite_store::lease_runs(const lease_request& req) {
  if (req.worker_id.empty() || req.max_runs == 0)
    return fail(store_errc::invalid_argument, "lease: worker_id must not be empty, max_runs ≥ 1");
  // A read first: an idle worker polling an empty queue never takes the write lock.
  auto anything = impl_->read([&](connection& c) -> result<bool> {
    query q(c,
            "SELECT EXISTS (SELECT 1 FROM runs WHERE lease_owner IS NULL AND status IN "
            "('queued', 'running') AND next_attempt_at <= ?) OR EXISTS (SELECT 1 FROM runs "
            "WHERE lease_owner IS NOT NULL AND lease_expires_at <= ?)");
    q.bind(req.now, req.now);
    return q.next() && q.boolean(0);
  });
  if (!anything)
    return anything.err();
  if (!*anything)
    return std::vector<leased_run>{};
  const time_point until = req.now + req.duration;
  return impl_->write([&](connection& c) -> result<std::vector<leased_run>> {
    expire(c, req.now, req.max_attempts, false);
    std::vector<int64_t> picked;
    {
      query q(c,
              "SELECT seq FROM runs WHERE lease_owner IS NULL AND status IN ('queued', 'running') "
              "AND next_attempt_at <= ? ORDER BY next_attempt_at, seq LIMIT ?");
      q.bind(req.now, static_cast<uint64_t>(req.max_runs));
      while (q.next())
        picked.push_back(q.i64(0));
    }
    std::vector<leased_run> out;
    out.reserve(picked.size());
    for (const int64_t seq : picked) {
      query(c,
            "UPDATE runs SET status = 'running', attempts = attempts + 1, lease_owner = ?, "
            "lease_expires_at = ?, started_at = COALESCE(started_at, ?) WHERE seq = ?")
          .bind(req.worker_id, until, req.now, seq)
          .run();
      query q(c, "SELECT " RUN_COLUMNS
                 ", t.owner, t.action_cid, t.pkp_id, t.sealed_usage_key "
                 "FROM runs r JOIN triggers t ON t.id = r.trigger_id WHERE r.seq = ?");
      q.bind(seq);
      if (!q.next())
        throw storage::sqlite_error("sqlite: leased run vanished");
      leased_run l;
      l.r = read_run(q);
      l.owner = q.text(kRunColumns);
      l.action_cid = q.text(kRunColumns + 1);
      if (!q.is_null(kRunColumns + 2))
        l.pkp_id = q.fixed<20>(kRunColumns + 2);
      l.sealed_usage_key = q.blob(kRunColumns + 3);
      out.push_back(std::move(l));
    }
    return out;
  });
}

result<void> sqlite_store::renew_lease(const lease_ref& l, time_point expires_at) {
  return impl_->write([&](connection& c) -> result<void> {
    query(c,
          "UPDATE runs SET lease_expires_at = ? WHERE id = ? AND lease_owner = ? AND attempts = ? "
          "AND status = 'running'")
        .bind(expires_at, l.run_id, l.worker_id, l.attempt)
        .run();
    if (c.changes() == 0)
      return lease_lost(l);
    return {};
  });
}

result<void> sqlite_store::complete_run(const lease_ref& l, const json::value& response, time_point now) {
  const std::string body = json::serialize(response);
  return impl_->write([&](connection& c) -> result<void> {
    query(c,
          "UPDATE runs SET status = 'success', response = ?, error_code = NULL, error_message = "
          "NULL, error_stack = NULL, finished_at = ?, lease_owner = NULL, lease_expires_at = NULL "
          "WHERE id = ? AND lease_owner = ? AND attempts = ? AND status = 'running'")
        .bind(body, now, l.run_id, l.worker_id, l.attempt)
        .run();
    if (c.changes() == 0)
      return lease_lost(l);
    return {};
  });
}

result<void> sqlite_store::fail_run(const lease_ref& l, const run_error& e, time_point now) {
  return impl_->write([&](connection& c) -> result<void> {
    query(c,
          "UPDATE runs SET status = 'failed', error_code = ?, error_message = ?, error_stack = ?, "
          "finished_at = ?, lease_owner = NULL, lease_expires_at = NULL "
          "WHERE id = ? AND lease_owner = ? AND attempts = ? AND status = 'running'")
        .bind(e.code, e.message, e.stack, now, l.run_id, l.worker_id, l.attempt)
        .run();
    if (c.changes() == 0)
      return lease_lost(l);
    return {};
  });
}

result<void> sqlite_store::retry_run_later(const lease_ref& l, const run_error& e, time_point next_attempt_at) {
  return impl_->write([&](connection& c) -> result<void> {
    query(c,
          "UPDATE runs SET error_code = ?, error_message = ?, error_stack = ?, next_attempt_at = ?, "
          "lease_owner = NULL, lease_expires_at = NULL "
          "WHERE id = ? AND lease_owner = ? AND attempts = ? AND status = 'running'")
        .bind(e.code, e.message, e.stack, next_attempt_at, l.run_id, l.worker_id, l.attempt)
        .run();
    if (c.changes() == 0)
      return lease_lost(l);
    return {};
  });
}

result<size_t> sqlite_store::expire_leases(time_point now, uint32_t max_attempts) {
  return impl_->write([&](connection& c) -> result<size_t> { return expire(c, now, max_attempts, false); });
}

result<size_t> sqlite_store::release_all_leases(time_point now, uint32_t max_attempts) {
  return impl_->write([&](connection& c) -> result<size_t> { return expire(c, now, max_attempts, true); });
}

result<std::optional<time_point>> sqlite_store::next_run_wakeup() const {
  return impl_->read([&](connection& c) -> result<std::optional<time_point>> {
    std::optional<time_point> out;
    const auto consider = [&](query& q) {
      if (q.next() && !q.is_null(0)) {
        const time_point t = time_at(q, 0);
        if (!out || t < *out)
          out = t;
      }
    };
    {
      query q(c,
              "SELECT MIN(next_attempt_at) FROM runs WHERE lease_owner IS NULL AND status IN "
              "('queued', 'running')");
      consider(q);
    }
    {
      query q(c, "SELECT MIN(lease_expires_at) FROM runs WHERE lease_owner IS NOT NULL");
      consider(q);
    }
    return out;
  });
}

// ---------------------------------------------------------------------------------------------
// schedules

result<std::vector<scheduled_trigger>> sqlite_store::list_schedules() const {
  return impl_->read([&](connection& c) -> result<std::vector<scheduled_trigger>> {
    std::vector<scheduled_trigger> out;
    query q(c,
            "SELECT t.id, t.config, s.next_due, s.last_planned FROM triggers t LEFT JOIN "
            "schedule_state s ON s.trigger_id = t.id WHERE t.type = 'schedule' AND t.enabled = 1 "
            "ORDER BY t.seq");
    while (q.next())
      if (auto s = read_schedule(q))
        out.push_back(std::move(*s));
    return out;
  });
}

result<std::optional<scheduled_trigger>> sqlite_store::get_schedule(std::string_view trigger_id) const {
  return impl_->read([&](connection& c) -> result<std::optional<scheduled_trigger>> {
    query q(c,
            "SELECT t.id, t.config, s.next_due, s.last_planned FROM triggers t LEFT JOIN "
            "schedule_state s ON s.trigger_id = t.id WHERE t.id = ? AND t.type = 'schedule' AND "
            "t.enabled = 1");
    q.bind(trigger_id);
    if (!q.next())
      return std::optional<scheduled_trigger>{};
    return read_schedule(q);
  });
}

result<std::optional<run>> sqlite_store::fire_schedule(std::string_view trigger_id, time_point expected_due,
                                                       time_point planned, const new_run& r, time_point next_due) {
  ENACT_TRY_VOID(check_new_run(r));
  const std::string params = json::serialize(r.params);
  return impl_->write([&](connection& c) -> result<std::optional<run>> {
    query q(c,
            "SELECT s.next_due, t.max_runs_per_minute, t.max_queued_runs FROM schedule_state s "
            "JOIN triggers t ON t.id = s.trigger_id "
            "WHERE s.trigger_id = ? AND t.type = 'schedule' AND t.enabled = 1");
    q.bind(trigger_id);
    if (!q.next() || time_at(q, 0) != expected_due)
      return std::optional<run>{};
    run out = insert_or_refuse(c, r, params, q.i64(1), q.i64(2));
    query(c, "UPDATE schedule_state SET next_due = ?, last_planned = ? WHERE trigger_id = ?")
        .bind(next_due, planned, trigger_id)
        .run();
    return std::optional<run>(std::move(out));
  });
}

std::vector<result<std::optional<run>>> sqlite_store::fire_schedules(const std::vector<schedule_firing>& firings) {
  using outcome = result<std::optional<run>>;
  std::vector<std::optional<outcome>> outs(firings.size());
  std::vector<std::string> params(firings.size());
  std::vector<impl::write_op> ops;
  std::vector<size_t> submitted;
  for (size_t i = 0; i < firings.size(); ++i) {
    if (auto ok = check_new_run(firings[i].r); !ok) {
      outs[i].emplace(ok.err());
      continue;
    }
    params[i] = json::serialize(firings[i].r.params);
    submitted.push_back(i);
    ops.push_back([&, i](connection& c) -> bool {
      const schedule_firing& f = firings[i];
      try {
        query q(c,
                "SELECT s.next_due, t.max_runs_per_minute, t.max_queued_runs FROM schedule_state s "
                "JOIN triggers t ON t.id = s.trigger_id "
                "WHERE s.trigger_id = ? AND t.type = 'schedule' AND t.enabled = 1");
        q.bind(f.trigger_id);
        if (!q.next() || time_at(q, 0) != f.expected_due) {
          outs[i].emplace(std::optional<run>{});
          return true;
        }
        run out = insert_or_refuse(c, f.r, params[i], q.i64(1), q.i64(2));
        query(c, "UPDATE schedule_state SET next_due = ?, last_planned = ? WHERE trigger_id = ?")
            .bind(f.next_due, f.planned, f.trigger_id)
            .run();
        outs[i].emplace(std::optional<run>(std::move(out)));
        return true;
      } catch (const std::exception& e) {
        outs[i].emplace(storage_error(e));
        return false;
      }
    });
  }
  std::vector<std::string> errors;
  impl_->submit_all(std::move(ops), errors);
  std::vector<outcome> result_list;
  result_list.reserve(firings.size());
  for (size_t k = 0; k < submitted.size(); ++k)
    if (!errors[k].empty())
      outs[submitted[k]].emplace(fail(store_errc::storage, errors[k]));
  for (auto& o : outs)
    result_list.push_back(o ? std::move(*o) : outcome(fail(store_errc::storage, "not written")));
  return result_list;
}

result<void> sqlite_store::set_schedule_state(std::string_view trigger_id, const schedule_state& s) {
  return impl_->write([&](connection& c) -> result<void> {
    if (!load_trigger(c, trigger_id))
      return no_trigger(trigger_id);
    query(c,
          "INSERT INTO schedule_state (trigger_id, next_due, last_planned) VALUES (?, ?, ?) "
          "ON CONFLICT (trigger_id) DO UPDATE SET next_due = excluded.next_due, "
          "last_planned = excluded.last_planned")
        .bind(trigger_id, s.next_due, s.last_planned)
        .run();
    return {};
  });
}

// ---------------------------------------------------------------------------------------------
// chain watcher

result<std::optional<uint64_t>> sqlite_store::chain_checkpoint(std::string_view trigger_id) const {
  return impl_->read([&](connection& c) -> result<std::optional<uint64_t>> {
    query q(c, "SELECT block FROM chain_checkpoints WHERE trigger_id = ?");
    q.bind(trigger_id);
    if (!q.next())
      return std::optional<uint64_t>{};
    return std::optional<uint64_t>(q.u64(0));
  });
}

result<std::vector<run>> sqlite_store::record_chain_batch(const chain_batch& b) {
  std::vector<std::string> params;
  params.reserve(b.logs.size());
  for (const auto& e : b.logs) {
    if (e.log.trigger_id != b.trigger_id || (!e.fire.id.empty() && e.fire.trigger_id != b.trigger_id))
      return fail(store_errc::invalid_argument, "chain batch: every log and run must name trigger " + b.trigger_id);
    params.push_back(json::serialize(e.fire.params));
  }
  return impl_->write([&](connection& c) -> result<std::vector<run>> {
    query q(c, "SELECT type, enabled, max_runs_per_minute, max_queued_runs FROM triggers WHERE id = ?");
    q.bind(b.trigger_id);
    if (!q.next())
      return no_trigger(b.trigger_id);
    if (q.text(0) != to_string(trigger_type::chain_event))
      return fail(store_errc::wrong_type, "trigger " + b.trigger_id + ": not a chain-event trigger");
    if (!q.boolean(1))
      return fail(store_errc::disabled, "trigger " + b.trigger_id + ": disabled");
    const int64_t per_minute = q.i64(2);
    const int64_t queued = q.i64(3);
    std::vector<run> out;
    for (size_t i = 0; i < b.logs.size(); ++i) {
      const auto& e = b.logs[i];
      const std::optional<std::string> run_id =
          e.fire.id.empty() ? std::nullopt : std::optional<std::string>(e.fire.id);
      query(c,
            "INSERT INTO chain_logs (trigger_id, block_hash, log_index, block_number, removed, "
            "run_id, seen_at) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING")
          .bind(b.trigger_id, e.log.block_hash, e.log.log_index, e.log.block_number, e.log.removed, run_id,
                e.log.seen_at)
          .run();
      if (c.changes() == 1 && run_id)
        out.push_back(insert_or_refuse(c, e.fire, params[i], per_minute, queued));
    }
    if (b.checkpoint_block)
      query(c,
            "INSERT INTO chain_checkpoints (trigger_id, block) VALUES (?, ?) "
            "ON CONFLICT (trigger_id) DO UPDATE SET block = excluded.block")
          .bind(b.trigger_id, *b.checkpoint_block)
          .run();
    return out;
  });
}

result<size_t> sqlite_store::mark_logs_removed(std::string_view trigger_id, const hash256& block_hash) {
  return impl_->write([&](connection& c) -> result<size_t> {
    query(c, "UPDATE chain_logs SET removed = 1 WHERE trigger_id = ? AND block_hash = ? AND removed = 0")
        .bind(trigger_id, block_hash)
        .run();
    return static_cast<size_t>(c.changes());
  });
}

result<std::optional<seen_log>> sqlite_store::find_seen_log(std::string_view trigger_id, const hash256& block_hash,
                                                            uint64_t log_index) const {
  return impl_->read([&](connection& c) -> result<std::optional<seen_log>> {
    query q(c,
            "SELECT block_number, removed, run_id, seen_at FROM chain_logs WHERE trigger_id = ? "
            "AND block_hash = ? AND log_index = ?");
    q.bind(trigger_id, block_hash, log_index);
    if (!q.next())
      return std::optional<seen_log>{};
    seen_log l;
    l.trigger_id = std::string(trigger_id);
    l.block_hash = block_hash;
    l.log_index = log_index;
    l.block_number = q.u64(0);
    l.removed = q.boolean(1);
    l.run_id = q.text(2);
    l.seen_at = time_at(q, 3);
    return std::optional<seen_log>(std::move(l));
  });
}

result<std::vector<trigger>> sqlite_store::list_chain_triggers() const {
  return impl_->read([&](connection& c) -> result<std::vector<trigger>> {
    query q(c, "SELECT " TRIGGER_COLUMNS
               "FROM triggers t WHERE t.type = ? AND t.enabled = 1 "
               "ORDER BY t.seq");
    q.bind(to_string(trigger_type::chain_event));
    std::vector<trigger> out;
    while (q.next())
      out.push_back(read_trigger(q));
    return out;
  });
}

result<std::vector<seen_log>> sqlite_store::list_seen_logs(std::string_view trigger_id, uint64_t from_block) const {
  return impl_->read([&](connection& c) -> result<std::vector<seen_log>> {
    query q(c,
            "SELECT block_hash, log_index, block_number, run_id, seen_at FROM chain_logs "
            "WHERE trigger_id = ? AND block_number >= ? AND removed = 0 "
            "ORDER BY block_number, log_index");
    q.bind(trigger_id, from_block);
    std::vector<seen_log> out;
    while (q.next()) {
      seen_log l;
      l.trigger_id = std::string(trigger_id);
      l.block_hash = q.fixed<32>(0);
      l.log_index = q.u64(1);
      l.block_number = q.u64(2);
      l.run_id = q.text(3);
      l.seen_at = time_at(q, 4);
      out.push_back(std::move(l));
    }
    return out;
  });
}

}  // namespace enact::triggers
