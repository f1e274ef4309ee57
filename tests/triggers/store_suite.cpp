// SPDX-License-Identifier: Apache-2.0
// The trigger-store cases (store.hpp): trigger CRUD and ownership, queuing runs against the
// trigger's type and state, run listing order, leases (exclusive under concurrent workers,
// expiry, renewal, fencing of a lost lease, the attempt limit), retries and their backoff times,
// schedule firing as a compare-and-set, the chain watcher's de-duplication, tokens, approvals,
// the approval page's browser sessions, the per-trigger run limits, persistence, the limit on an
// owner's triggers and the credit rule of schedules. Written against store& only.
#include "store_suite.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "enact/crypto/keccak.hpp"
#include "must.hpp"
#include "support.hpp"
#include "triggers/housekeeping.hpp"
#include "triggers/ids.hpp"

namespace enact::triggers::test {
namespace {

using namespace std::chrono_literals;

trigger make_trigger(std::string owner, trigger_type type = trigger_type::webhook, bool enabled = true) {
  trigger t;
  t.id = new_trigger_id();
  t.owner = std::move(owner);
  t.type = type;
  t.name = "t " + t.id.substr(4, 6);
  t.enabled = enabled;
  t.action_cid = "QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG";
  t.sealed_usage_key = bytes{1, 2, 3, 4, 5};
  t.usage_key_hash = crypto::keccak256(std::string_view("key of " + t.id));
  if (type == trigger_type::schedule)
    t.config = api::schedule_config{"*/30 * * * * *", "UTC"};
  if (type == trigger_type::chain_event)
    t.config = api::chain_event_config{.chain = "ethereum",
                                       .event = "Transfer(address indexed from, address indexed to, uint256 value)"};
  t.created_at = t.updated_at = t0;
  // The cases queue many runs at one instant; run_limits tests the limits themselves.
  t.max_runs_per_minute = kMaxRunsPerMinuteLimit;
  t.max_queued_runs = kMaxQueuedRunsLimit;
  return t;
}

new_run make_run(const std::string& trigger_id, time_point at = t0, int n = 0) {
  return new_run{new_run_id(), trigger_id, json::object{{"n", n}}, at};
}

// --- cases -------------------------------------------------------------------------------------

void triggers_crud(backend& b) {
  auto s = b.open();
  const trigger a1 = MUST(s->create_trigger(make_trigger("alice"), std::nullopt));
  trigger a2 = make_trigger("alice", trigger_type::schedule);
  a2.pkp_id = address{};
  a2.pkp_id->fill(0xab);
  MUST(s->create_trigger(a2, schedule_state{t0 + 30s, std::nullopt}));
  const trigger b1 = MUST(s->create_trigger(make_trigger("bob"), std::nullopt));

  CHECK_ERRC(s->create_trigger(a1, std::nullopt), store_errc::conflict);

  const trigger got = MUST(s->get_trigger("alice", a2.id));
  CHECK(got.id == a2.id);
  CHECK(got.type == trigger_type::schedule);
  CHECK(got.name == a2.name);
  CHECK(got.enabled);
  CHECK(got.pkp_id == a2.pkp_id);
  CHECK(got.sealed_usage_key == a2.sealed_usage_key);
  CHECK(got.usage_key_hash == a2.usage_key_hash);
  CHECK(got.config == a2.config);
  CHECK(got.created_at == t0);

  // Another owner's trigger does not exist for you.
  CHECK_ERRC(s->get_trigger("bob", a1.id), store_errc::not_found);
  CHECK_ERRC(s->get_trigger("alice", "trg_nope"), store_errc::not_found);
  CHECK(MUST(s->find_trigger(b1.id)).owner == "bob");

  const auto all = MUST(s->list_triggers("alice", page{}));
  REQUIRE(all.items.size() == 2);
  CHECK(all.total == 2);
  CHECK(all.items[0].id == a1.id);  // oldest first
  CHECK(all.items[1].id == a2.id);
  const auto second = MUST(s->list_triggers("alice", page{1, 1}));
  REQUIRE(second.items.size() == 1);
  CHECK(second.items[0].id == a2.id);
  CHECK(second.total == 2);
  CHECK(MUST(s->list_triggers("carol", page{})).total == 0);

  trigger_patch p;
  p.name = "renamed";
  p.enabled = false;
  p.pkp_id = std::optional<address>{};
  p.sealed_usage_key = bytes{9, 9};
  p.usage_key_hash = crypto::keccak256(std::string_view("new key"));
  p.config = api::schedule_config{"0 * * * *", "UTC"};
  p.now = t0 + 5s;
  const trigger u = MUST(s->update_trigger("alice", a2.id, p));
  CHECK(u.name == "renamed");
  CHECK(!u.enabled);
  CHECK(!u.pkp_id);
  CHECK(u.sealed_usage_key == bytes{9, 9});
  CHECK(u.usage_key_hash == *p.usage_key_hash);
  CHECK(u.updated_at == t0 + 5s);
  CHECK(u.created_at == t0);
  CHECK(MUST(s->get_trigger("alice", a2.id)).config == *p.config);
  CHECK_ERRC(s->update_trigger("bob", a2.id, p), store_errc::not_found);
  trigger_patch half;
  half.sealed_usage_key = bytes{1};
  CHECK_ERRC(s->update_trigger("alice", a2.id, half), store_errc::invalid_argument);

  // Deleting takes the runs along.
  const run r = MUST(s->enqueue_run(make_run(a1.id), trigger_type::webhook));
  CHECK_ERRC(s->delete_trigger("bob", a1.id), store_errc::not_found);
  MUST(s->delete_trigger("alice", a1.id));
  CHECK_ERRC(s->get_trigger("alice", a1.id), store_errc::not_found);
  CHECK_ERRC(s->get_run("alice", r.id), store_errc::not_found);
  CHECK_ERRC(s->delete_trigger("alice", a1.id), store_errc::not_found);
}

void queue_and_list(backend& b) {
  auto s = b.open();
  const trigger w = MUST(s->create_trigger(make_trigger("alice"), std::nullopt));
  const trigger off = MUST(s->create_trigger(make_trigger("alice", trigger_type::webhook, false), std::nullopt));
  const trigger sch = MUST(s->create_trigger(make_trigger("alice", trigger_type::schedule), schedule_state{t0, {}}));

  CHECK_ERRC(s->enqueue_run(make_run("trg_unknown"), trigger_type::webhook), store_errc::not_found);
  CHECK_ERRC(s->enqueue_run(make_run(off.id), trigger_type::webhook), store_errc::disabled);
  CHECK_ERRC(s->enqueue_run(make_run(sch.id), trigger_type::webhook), store_errc::wrong_type);
  CHECK(MUST(s->list_runs("alice", off.id, page{})).total == 0);

  std::vector<std::string> ids;
  for (int i = 0; i < 5; ++i) {
    const run r = MUST(s->enqueue_run(make_run(w.id, t0 + std::chrono::seconds(i), i), trigger_type::webhook));
    CHECK(r.status == run_status::queued);
    CHECK(r.attempts == 0);
    ids.push_back(r.id);
  }
  const run one = MUST(s->get_run("alice", ids[2]));
  CHECK(one.trigger_id == w.id);
  CHECK(one.params == json::value(json::object{{"n", 2}}));
  CHECK(one.queued_at == t0 + 2s);
  CHECK(!one.started_at);
  CHECK(!one.finished_at);
  CHECK(!one.response);
  CHECK(!one.error);
  CHECK_ERRC(s->get_run("bob", ids[2]), store_errc::not_found);
  CHECK_ERRC(s->get_run("alice", "run_nope"), store_errc::not_found);

  // Newest first, paged.
  const auto all = MUST(s->list_runs("alice", w.id, page{}));
  CHECK(all.total == 5);
  REQUIRE(all.items.size() == 5);
  for (size_t i = 0; i < 5; ++i)
    CHECK(all.items[i].id == ids[4 - i]);
  const auto mid = MUST(s->list_runs("alice", w.id, page{2, 1}));
  REQUIRE(mid.items.size() == 2);
  CHECK(mid.items[0].id == ids[3]);
  CHECK(mid.items[1].id == ids[2]);
  CHECK(MUST(s->list_runs("alice", w.id, page{10, 5})).items.empty());
  CHECK_ERRC(s->list_runs("bob", w.id, page{}), store_errc::not_found);
}

void run_limits(backend& b) {
  auto s = b.open();
  // Defaults, and limits kept and changed.
  trigger d = make_trigger("alice");
  d.max_runs_per_minute = trigger{}.max_runs_per_minute;
  d.max_queued_runs = trigger{}.max_queued_runs;
  const trigger plain = MUST(s->create_trigger(d, std::nullopt));
  CHECK(MUST(s->find_trigger(plain.id)).max_runs_per_minute == kDefaultMaxRunsPerMinute);
  CHECK(MUST(s->find_trigger(plain.id)).max_queued_runs == kDefaultMaxQueuedRuns);
  trigger lt = make_trigger("alice");
  lt.max_runs_per_minute = 3;
  lt.max_queued_runs = 5;
  MUST(s->create_trigger(lt, std::nullopt));
  const trigger got = MUST(s->get_trigger("alice", lt.id));
  CHECK(got.max_runs_per_minute == 3);
  CHECK(got.max_queued_runs == 5);

  // Three runs in the minute of t0, then rate_limited until the next minute.
  for (int i = 0; i < 3; ++i)
    MUST(s->enqueue_run(make_run(lt.id, t0 + std::chrono::seconds(10 * i), i), trigger_type::webhook));
  CHECK_ERRC(s->enqueue_run(make_run(lt.id, t0 + 59s), trigger_type::webhook), store_errc::rate_limited);
  CHECK(MUST(s->list_runs("alice", lt.id, page{})).total == 3);  // nothing recorded for a refusal
  // The next minute: two more, then five are waiting and the queue is full.
  MUST(s->enqueue_run(make_run(lt.id, t0 + 60s), trigger_type::webhook));
  MUST(s->enqueue_run(make_run(lt.id, t0 + 61s), trigger_type::webhook));
  CHECK_ERRC(s->enqueue_run(make_run(lt.id, t0 + 62s), trigger_type::webhook), store_errc::queue_full);
  // A run that ends frees a place.
  auto leased = MUST(s->lease_runs(lease("w", t0 + 62s)));
  REQUIRE(leased.size() == 1);
  const lease_ref ref{leased[0].r.id, "w", leased[0].r.attempts};
  MUST(s->complete_run(ref, json::value(nullptr), t0 + 62s));
  MUST(s->enqueue_run(make_run(lt.id, t0 + 63s), trigger_type::webhook));
  // Another trigger has limits of its own.
  MUST(s->enqueue_run(make_run(plain.id, t0 + 63s), trigger_type::webhook));
  // Raised limits apply at once.
  trigger_patch p;
  p.max_runs_per_minute = 10;
  p.max_queued_runs = 10;
  p.now = t0 + 64s;
  const trigger raised = MUST(s->update_trigger("alice", lt.id, p));
  CHECK(raised.max_runs_per_minute == 10);
  CHECK(raised.max_queued_runs == 10);
  MUST(s->enqueue_run(make_run(lt.id, t0 + 64s), trigger_type::webhook));

  // A schedule over its limit records a failed run (rate_limited, never attempted), which does
  // not count towards the limits, and still moves on to its next firing.
  trigger sch = make_trigger("alice", trigger_type::schedule);
  sch.max_runs_per_minute = 1;
  MUST(s->create_trigger(sch, schedule_state{t0, {}}));
  const auto fired = MUST(s->fire_schedule(sch.id, t0, t0, make_run(sch.id, t0), t0 + 30s));
  REQUIRE(fired);
  CHECK(fired->status == run_status::queued);
  const auto refused = MUST(s->fire_schedule(sch.id, t0 + 30s, t0 + 30s, make_run(sch.id, t0 + 30s), t0 + 60s));
  REQUIRE(refused);
  CHECK(refused->status == run_status::failed);
  REQUIRE(refused->error);
  CHECK(refused->error->code == kRateLimitedCode);
  const run stored = MUST(s->get_run("alice", refused->id));
  CHECK(stored.status == run_status::failed);
  CHECK(stored.attempts == 0);
  REQUIRE(stored.error);
  CHECK(stored.error->code == kRateLimitedCode);
  CHECK(stored.finished_at == t0 + 30s);
  CHECK(MUST(s->get_schedule(sch.id))->state->next_due == t0 + 60s);
  const auto next = MUST(s->fire_schedule(sch.id, t0 + 60s, t0 + 60s, make_run(sch.id, t0 + 60s), t0 + 90s));
  REQUIRE(next);
  CHECK(next->status == run_status::queued);

  // A chain batch over the limit: the first log's run is queued, the second's refused.
  trigger ct = make_trigger("alice", trigger_type::chain_event);
  ct.max_runs_per_minute = 1;
  MUST(s->create_trigger(ct, std::nullopt));
  chain_batch cb;
  cb.trigger_id = ct.id;
  for (uint64_t i = 0; i < 2; ++i) {
    seen_log l;
    l.trigger_id = ct.id;
    l.block_hash = crypto::keccak256(std::string_view("limits block"));
    l.log_index = i;
    l.block_number = 7;
    l.seen_at = t0;
    new_run r = make_run(ct.id, t0, static_cast<int>(i));
    l.run_id = r.id;
    cb.logs.push_back({l, r});
  }
  const auto runs = MUST(s->record_chain_batch(cb));
  REQUIRE(runs.size() == 2);
  CHECK(runs[0].status == run_status::queued);
  CHECK(runs[1].status == run_status::failed);
  REQUIRE(runs[1].error);
  CHECK(runs[1].error->code == kRateLimitedCode);
  // The refused run is never leased.
  for (auto l = MUST(s->lease_runs(lease("w2", t0 + 65s, 100))); const auto& x : l)
    CHECK(x.r.id != runs[1].id);
}

void lease_lifecycle(backend& b) {
  auto s = b.open();
  const trigger w = MUST(s->create_trigger(make_trigger("alice"), std::nullopt));
  CHECK(MUST(s->lease_runs(lease("w1", t0))).empty());
  CHECK(!MUST(s->next_run_wakeup()));
  const run r1 = MUST(s->enqueue_run(make_run(w.id, t0), trigger_type::webhook));
  const run r2 = MUST(s->enqueue_run(make_run(w.id, t0 + 1ms), trigger_type::webhook));
  CHECK(MUST(s->next_run_wakeup()) == t0);

  // Oldest first; the lease carries what the worker needs from the trigger.
  auto got = MUST(s->lease_runs(lease("w1", t0 + 1s)));
  REQUIRE(got.size() == 1);
  const leased_run l1 = got[0];
  CHECK(l1.r.id == r1.id);
  CHECK(l1.r.status == run_status::running);
  CHECK(l1.r.attempts == 1);
  CHECK(l1.r.lease_owner == "w1");
  CHECK(l1.r.lease_expires_at == t0 + 11s);
  CHECK(l1.r.started_at == t0 + 1s);
  CHECK(l1.owner == "alice");
  CHECK(l1.action_cid == w.action_cid);
  CHECK(l1.sealed_usage_key == w.sealed_usage_key);

  auto got2 = MUST(s->lease_runs(lease("w2", t0 + 1s, 5)));
  REQUIRE(got2.size() == 1);
  CHECK(got2[0].r.id == r2.id);
  CHECK(MUST(s->lease_runs(lease("w3", t0 + 1s, 5))).empty());
  CHECK(MUST(s->get_run("alice", r1.id)).status == run_status::running);

  // Complete: success with the response; the lease is gone; only the holder may write.
  CHECK_ERRC(s->complete_run(lease_ref{r1.id, "w2", 1}, json::value(1), t0 + 2s), store_errc::lease_lost);
  CHECK_ERRC(s->complete_run(lease_ref{r1.id, "w1", 2}, json::value(1), t0 + 2s), store_errc::lease_lost);
  MUST(s->complete_run(ref_of(l1), json::object{{"ok", true}}, t0 + 2s));
  const run done = MUST(s->get_run("alice", r1.id));
  CHECK(done.status == run_status::success);
  REQUIRE(done.response);
  CHECK(*done.response == json::value(json::object{{"ok", true}}));
  CHECK(done.finished_at == t0 + 2s);
  CHECK(done.lease_owner.empty());
  CHECK(!done.lease_expires_at);
  CHECK_ERRC(s->complete_run(ref_of(l1), json::value(2), t0 + 3s), store_errc::lease_lost);

  // Fail: failed with the error and its stack.
  MUST(s->fail_run(ref_of(got2[0]), run_error{"action_failed", "boom", "Error: boom\n    at action.js:3"}, t0 + 4s, 0));
  const run failed = MUST(s->get_run("alice", r2.id));
  CHECK(failed.status == run_status::failed);
  REQUIRE(failed.error);
  CHECK(failed.error->code == "action_failed");
  CHECK(failed.error->message == "boom");
  CHECK(failed.error->stack == std::optional<std::string>("Error: boom\n    at action.js:3"));
  CHECK(failed.finished_at == t0 + 4s);
  CHECK(!MUST(s->next_run_wakeup()));
}

void lease_expiry(backend& b) {
  auto s = b.open();
  const trigger w = MUST(s->create_trigger(make_trigger("alice"), std::nullopt));
  const run r = MUST(s->enqueue_run(make_run(w.id), trigger_type::webhook));

  auto a = MUST(s->lease_runs(lease("dead", t0, 1, 5s)));
  REQUIRE(a.size() == 1);
  CHECK(MUST(s->next_run_wakeup()) == t0 + 5s);
  CHECK(MUST(s->lease_runs(lease("other", t0 + 4999ms))).empty());

  // Renewal keeps it.
  MUST(s->renew_lease(ref_of(a[0]), t0 + 8s));
  CHECK(MUST(s->lease_runs(lease("other", t0 + 6s))).empty());
  CHECK_ERRC(s->renew_lease(lease_ref{r.id, "other", 1}, t0 + 9s), store_errc::lease_lost);

  // Expired: returned to queued, then handed to the next worker as attempt 2.
  CHECK(MUST(s->expire_leases(t0 + 8s, 3)) == 1);
  const run back = MUST(s->get_run("alice", r.id));
  CHECK(back.status == run_status::queued);
  CHECK(back.attempts == 1);
  CHECK(back.lease_owner.empty());
  auto c = MUST(s->lease_runs(lease("live", t0 + 8s, 1, 5s)));
  REQUIRE(c.size() == 1);
  CHECK(c[0].r.id == r.id);
  CHECK(c[0].r.attempts == 2);
  CHECK(c[0].r.started_at == t0);  // the first start is kept
  // The dead worker's late answer is refused; the live one's is recorded.
  CHECK_ERRC(s->complete_run(ref_of(a[0]), json::value("late"), t0 + 9s), store_errc::lease_lost);

  // lease_runs itself expires leases: attempt 3 after attempt 2's lease ran out.
  auto d = MUST(s->lease_runs(lease("third", t0 + 13s, 1, 5s)));
  REQUIRE(d.size() == 1);
  CHECK(d[0].r.attempts == 3);
  CHECK_ERRC(s->complete_run(ref_of(c[0]), json::value("late"), t0 + 14s), store_errc::lease_lost);

  // After the last attempt's lease expires the run is failed, not handed out again.
  CHECK(MUST(s->lease_runs(lease("fourth", t0 + 18s))).empty());
  const run ended = MUST(s->get_run("alice", r.id));
  CHECK(ended.status == run_status::failed);
  REQUIRE(ended.error);
  CHECK(ended.error->code == "lease_expired");
  CHECK(ended.finished_at == t0 + 18s);

  // release_all_leases: every lease at once, whatever its expiry.
  const run r2 = MUST(s->enqueue_run(make_run(w.id), trigger_type::webhook));
  REQUIRE(MUST(s->lease_runs(lease("crashed", t0 + 20s, 1, 1h))).size() == 1);
  CHECK(MUST(s->release_all_leases(t0 + 21s, 3)) == 1);
  CHECK(MUST(s->get_run("alice", r2.id)).status == run_status::queued);
  CHECK(MUST(s->lease_runs(lease("restarted", t0 + 21s))).size() == 1);
}

void retries(backend& b) {
  auto s = b.open();
  const trigger w = MUST(s->create_trigger(make_trigger("alice"), std::nullopt));
  const run r = MUST(s->enqueue_run(make_run(w.id), trigger_type::webhook));
  auto a = MUST(s->lease_runs(lease("w", t0)));
  REQUIRE(a.size() == 1);
  const run_error transient{"unavailable", "core busy", std::nullopt};
  MUST(s->retry_run_later(ref_of(a[0]), transient, t0 + 2s));

  // Waiting for its backoff: running (spec: running → running), no lease, last error kept.
  const run waiting = MUST(s->get_run("alice", r.id));
  CHECK(waiting.status == run_status::running);
  CHECK(waiting.lease_owner.empty());
  CHECK(waiting.next_attempt_at == t0 + 2s);
  REQUIRE(waiting.error);
  CHECK(waiting.error->code == "unavailable");
  CHECK(MUST(s->next_run_wakeup()) == t0 + 2s);
  CHECK(MUST(s->lease_runs(lease("w", t0 + 1999ms))).empty());
  CHECK_ERRC(s->retry_run_later(ref_of(a[0]), transient, t0 + 3s), store_errc::lease_lost);

  auto b2 = MUST(s->lease_runs(lease("w", t0 + 2s)));
  REQUIRE(b2.size() == 1);
  CHECK(b2[0].r.attempts == 2);
  MUST(s->retry_run_later(ref_of(b2[0]), transient, t0 + 6s));
  auto c = MUST(s->lease_runs(lease("w", t0 + 6s)));
  REQUIRE(c.size() == 1);
  CHECK(c[0].r.attempts == 3);
  MUST(s->complete_run(ref_of(c[0]), json::value(42), t0 + 7s));
  const run done = MUST(s->get_run("alice", r.id));
  CHECK(done.status == run_status::success);
  CHECK(done.attempts == 3);
  CHECK(!done.error);  // success clears the transient errors
  CHECK(*done.response == json::value(42));

  // A due retry and a new run: the one due earlier goes first.
  const run older = MUST(s->enqueue_run(make_run(w.id, t0 + 10s), trigger_type::webhook));
  auto x = MUST(s->lease_runs(lease("w", t0 + 10s)));
  REQUIRE(x.size() == 1);
  MUST(s->retry_run_later(ref_of(x[0]), transient, t0 + 12s));
  const run newer = MUST(s->enqueue_run(make_run(w.id, t0 + 11s), trigger_type::webhook));
  auto y = MUST(s->lease_runs(lease("w", t0 + 13s, 2)));
  REQUIRE(y.size() == 2);
  CHECK(y[0].r.id == newer.id);  // due at 11 s
  CHECK(y[1].r.id == older.id);  // due at 12 s
}

void concurrent_workers(backend& b) {
  auto s = b.open();
  const trigger w = MUST(s->create_trigger(make_trigger("alice"), std::nullopt));
  constexpr int kRuns = 120;
  for (int i = 0; i < kRuns; ++i)
    MUST(s->enqueue_run(make_run(w.id, t0, i), trigger_type::webhook));

  // Several workers lease at once, each completing what it got; no run reaches two of them.
  constexpr int kWorkers = 4;
  std::mutex mu;
  std::map<std::string, int> handed;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int k = 0; k < kWorkers; ++k) {
    threads.emplace_back([&, k] {
      const std::string me = "worker-" + std::to_string(k);
      for (;;) {
        auto got = s->lease_runs(lease(me, t0 + 1s, 3));
        if (!got) {
          ++failures;
          return;
        }
        if (got->empty())
          return;
        for (const auto& l : *got) {
          {
            std::lock_guard lock(mu);
            ++handed[l.r.id];
          }
          if (!s->complete_run(ref_of(l), json::value(k), t0 + 2s))
            ++failures;
        }
      }
    });
  }
  for (auto& t : threads)
    t.join();
  CHECK(failures == 0);
  CHECK(handed.size() == kRuns);
  for (const auto& [id, n] : handed)
    CHECK_MESSAGE(n == 1, "run " << id << " was handed out " << n << " times");
  const auto all = MUST(s->list_runs("alice", w.id, page{100, 0}));
  for (const auto& r : all.items)
    CHECK(r.status == run_status::success);
}

void schedules(backend& b) {
  auto s = b.open();
  const trigger on =
      MUST(s->create_trigger(make_trigger("alice", trigger_type::schedule), schedule_state{t0 + 30s, {}}));
  const trigger off =
      MUST(s->create_trigger(make_trigger("alice", trigger_type::schedule, false), schedule_state{t0, {}}));
  const trigger fresh = MUST(s->create_trigger(make_trigger("alice", trigger_type::schedule), std::nullopt));
  MUST(s->create_trigger(make_trigger("alice"), std::nullopt));  // a webhook: no schedule

  const auto all = MUST(s->list_schedules());
  REQUIRE(all.size() == 2);
  CHECK(all[0].trigger_id == on.id);
  CHECK(all[0].cron == "*/30 * * * * *");
  REQUIRE(all[0].state);
  CHECK(all[0].state->next_due == t0 + 30s);
  CHECK(all[1].trigger_id == fresh.id);
  CHECK(!all[1].state);
  CHECK(!MUST(s->get_schedule(off.id)));
  CHECK(!MUST(s->get_schedule("trg_nope")));

  // Fire as a compare-and-set on the due time.
  const new_run r1 = make_run(on.id, t0 + 30s);
  CHECK(!MUST(s->fire_schedule(on.id, t0 + 29s, t0 + 30s, r1, t0 + 60s)));
  const auto fired = MUST(s->fire_schedule(on.id, t0 + 30s, t0 + 30s, r1, t0 + 60s));
  REQUIRE(fired);
  CHECK(fired->id == r1.id);
  CHECK(fired->status == run_status::queued);
  CHECK(!MUST(s->fire_schedule(on.id, t0 + 30s, t0 + 30s, make_run(on.id), t0 + 60s)));  // fired already
  const auto after = MUST(s->get_schedule(on.id));
  REQUIRE(after);
  REQUIRE(after->state);
  CHECK(after->state->next_due == t0 + 60s);
  CHECK(after->state->last_planned == t0 + 30s);
  CHECK(MUST(s->list_runs("alice", on.id, page{})).total == 1);
  // A disabled trigger does not fire.
  CHECK(!MUST(s->fire_schedule(off.id, t0, t0, make_run(off.id), t0 + 30s)));

  MUST(s->set_schedule_state(fresh.id, schedule_state{t0 + 90s, std::nullopt}));
  CHECK(MUST(s->get_schedule(fresh.id))->state->next_due == t0 + 90s);
  CHECK_ERRC(s->set_schedule_state("trg_nope", schedule_state{t0, {}}), store_errc::not_found);

  // An update can replace the state in the same transaction.
  trigger_patch p;
  p.schedule = schedule_state{t0 + 120s, std::nullopt};
  p.now = t0 + 1s;
  MUST(s->update_trigger("alice", on.id, p));
  CHECK(MUST(s->get_schedule(on.id))->state->next_due == t0 + 120s);
}

void chain_state(backend& b) {
  auto s = b.open();
  trigger ct = make_trigger("alice", trigger_type::chain_event);
  MUST(s->create_trigger(ct, std::nullopt));
  const trigger w = MUST(s->create_trigger(make_trigger("alice"), std::nullopt));
  CHECK(!MUST(s->chain_checkpoint(ct.id)));

  const hash256 block_a = crypto::keccak256(std::string_view("block a"));
  const auto batch_of = [&](std::initializer_list<uint64_t> indexes, std::optional<uint64_t> checkpoint) {
    chain_batch cb;
    cb.trigger_id = ct.id;
    for (const uint64_t i : indexes) {
      seen_log l;
      l.trigger_id = ct.id;
      l.block_hash = block_a;
      l.log_index = i;
      l.block_number = 100;
      l.seen_at = t0;
      new_run r = make_run(ct.id, t0, static_cast<int>(i));
      l.run_id = r.id;
      cb.logs.push_back({l, r});
    }
    cb.checkpoint_block = checkpoint;
    return cb;
  };
  const auto first = MUST(s->record_chain_batch(batch_of({0, 1}, 100)));
  CHECK(first.size() == 2);
  CHECK(MUST(s->chain_checkpoint(ct.id)) == std::optional(chain_position{100, std::nullopt}));
  // Re-reading the same range (a restart before the checkpoint moved) fires only the new log; the
  // checkpoint keeps its block's hash.
  auto next = batch_of({0, 1, 2}, 101);
  next.checkpoint_hash = block_a;
  next.expected_checkpoint = std::optional<uint64_t>(100);
  const auto again = MUST(s->record_chain_batch(next));
  REQUIRE(again.size() == 1);
  CHECK(again[0].params == json::value(json::object{{"n", 2}}));
  CHECK(MUST(s->chain_checkpoint(ct.id)) == std::optional(chain_position{101, block_a}));
  CHECK(MUST(s->list_runs("alice", ct.id, page{})).total == 3);
  // A batch over a checkpoint that moved meanwhile writes nothing.
  auto stale = batch_of({3}, 102);
  stale.expected_checkpoint = std::optional<uint64_t>(100);
  CHECK_ERRC(s->record_chain_batch(stale), store_errc::conflict);
  stale.expected_checkpoint = std::optional<uint64_t>();
  CHECK_ERRC(s->record_chain_batch(stale), store_errc::conflict);
  CHECK(MUST(s->chain_checkpoint(ct.id))->block == 101);
  CHECK(MUST(s->list_runs("alice", ct.id, page{})).total == 3);
  // A PATCH that sets another start_block drops the checkpoint (the watch restarts there); one
  // that keeps it, or another field, does not.
  const auto patch_start = [&](std::optional<uint64_t> start) {
    auto config = std::get<api::chain_event_config>(ct.config);
    config.start_block = start;
    trigger_patch p;
    p.config = api::trigger_config(config);
    p.now = t0;
    ct = MUST(s->update_trigger("alice", ct.id, p));
  };
  patch_start(std::nullopt);
  CHECK(MUST(s->chain_checkpoint(ct.id)));
  patch_start(50);
  CHECK(!MUST(s->chain_checkpoint(ct.id)));
  MUST(s->record_chain_batch(batch_of({}, 101)));
  patch_start(50);
  CHECK(MUST(s->chain_checkpoint(ct.id)));
  stale.expected_checkpoint = std::optional<uint64_t>(101);
  CHECK(MUST(s->record_chain_batch(stale)).size() == 1);

  const auto seen = MUST(s->find_seen_log(ct.id, block_a, 1));
  REQUIRE(seen);
  CHECK(!seen->removed);
  CHECK(seen->block_number == 100);
  CHECK(seen->run_id == first[1].id);
  CHECK(!MUST(s->find_seen_log(ct.id, block_a, 7)));
  CHECK(MUST(s->mark_logs_removed(ct.id, block_a)) == 4);
  CHECK(MUST(s->find_seen_log(ct.id, block_a, 1))->removed);
  CHECK(MUST(s->mark_logs_removed(ct.id, block_a)) == 0);

  chain_batch wrong;
  wrong.trigger_id = w.id;
  CHECK_ERRC(s->record_chain_batch(wrong), store_errc::wrong_type);
  wrong.trigger_id = "trg_nope";
  CHECK_ERRC(s->record_chain_batch(wrong), store_errc::not_found);
}

void tokens_and_approvals(backend& b) {
  auto s = b.open();
  token_record t{crypto::keccak256(std::string_view("token 1")), "alice", "cli", t0, t0 + 720h, false};
  MUST(s->insert_token(t));
  CHECK_ERRC(s->insert_token(t), store_errc::conflict);
  const token_record got = MUST(s->find_token(t.hash));
  CHECK(got.user_id == "alice");
  CHECK(got.client_name == "cli");
  CHECK(got.expires_at == t0 + 720h);
  CHECK(!got.revoked);
  CHECK_ERRC(s->find_token(crypto::keccak256(std::string_view("other"))), store_errc::not_found);
  token_record t2{crypto::keccak256(std::string_view("token 2")), "alice", "web", t0 + 1s, t0 + 721h, false};
  MUST(s->insert_token(t2));
  const auto mine = MUST(s->list_tokens("alice"));
  REQUIRE(mine.size() == 2);
  CHECK(mine[0].hash == t2.hash);  // newest first
  CHECK_ERRC(s->revoke_token(t.hash, "bob"), store_errc::not_found);
  MUST(s->revoke_token(t.hash, "alice"));
  CHECK(MUST(s->find_token(t.hash)).revoked);

  approval a{"challenge-1", "enact cli", approval_status::pending, "", std::nullopt, t0, t0 + 10min};
  MUST(s->create_approval(a));
  CHECK_ERRC(s->create_approval(a), store_errc::conflict);
  CHECK(MUST(s->get_approval("challenge-1")).status == approval_status::pending);
  CHECK_ERRC(s->get_approval("nope"), store_errc::not_found);
  token_record claimed{
      crypto::keccak256(std::string_view("token 3")), "alice", "enact cli", t0 + 2min, t0 + 722h, false};
  CHECK_ERRC(s->claim_approval("challenge-1", claimed, t0 + 1min), store_errc::conflict);  // not approved yet
  const approval decided = MUST(s->decide_approval("challenge-1", "alice", true, t0 + 1min));
  CHECK(decided.status == approval_status::approved);
  CHECK(decided.user_id == "alice");
  CHECK_ERRC(s->decide_approval("challenge-1", "bob", false, t0 + 1min), store_errc::conflict);
  token_record imposter = claimed;
  imposter.user_id = "bob";
  CHECK_ERRC(s->claim_approval("challenge-1", imposter, t0 + 2min), store_errc::invalid_argument);
  MUST(s->claim_approval("challenge-1", claimed, t0 + 2min));
  CHECK(MUST(s->get_approval("challenge-1")).token_hash == std::optional<hash256>(claimed.hash));
  CHECK(MUST(s->find_token(claimed.hash)).user_id == "alice");
  token_record twice = claimed;
  twice.hash = crypto::keccak256(std::string_view("token 4"));
  CHECK_ERRC(s->claim_approval("challenge-1", twice, t0 + 3min), store_errc::conflict);

  approval late{"challenge-2", "x", approval_status::pending, "", std::nullopt, t0, t0 + 10min};
  MUST(s->create_approval(late));
  CHECK_ERRC(s->decide_approval("challenge-2", "alice", true, t0 + 10min), store_errc::conflict);
  const approval denied_one{"challenge-3", "x", approval_status::pending, "", std::nullopt, t0, t0 + 10min};
  MUST(s->create_approval(denied_one));
  CHECK(MUST(s->decide_approval("challenge-3", "alice", false, t0)).status == approval_status::denied);
  CHECK_ERRC(s->claim_approval("challenge-3", twice, t0 + 1min), store_errc::conflict);
}

void browser_sessions(backend& b) {
  auto db = b.open();
  const hash256 pre = crypto::keccak256(std::string_view("pre"));
  const hash256 in = crypto::keccak256(std::string_view("in"));
  MUST(db->create_session({pre, "", "nonce0001", t0, t0 + 10min}));
  CHECK_ERRC(db->create_session({pre, "", "nonce0002", t0, t0 + 10min}), store_errc::conflict);
  const browser_session signed_in{in, "0xabc", "", t0, t0 + 30min};
  CHECK_ERRC(db->sign_in_session(pre, "nonce0002", signed_in, t0), store_errc::not_found);
  CHECK_ERRC(db->sign_in_session(pre, "", signed_in, t0), store_errc::not_found);
  CHECK_ERRC(db->sign_in_session(pre, "nonce0001", signed_in, t0 + 10min), store_errc::not_found);
  MUST(db->sign_in_session(pre, "nonce0001", signed_in, t0 + 1min));
  CHECK_ERRC(db->sign_in_session(pre, "nonce0001", signed_in, t0 + 1min), store_errc::not_found);
  CHECK_ERRC(db->find_session(pre), store_errc::not_found);
  const auto s = MUST(db->find_session(in));
  CHECK(s.user_id == "0xabc");
  CHECK(s.nonce.empty());
  CHECK(s.expires_at == t0 + 30min);
  // Signing out deletes it; a second time finds nothing.
  const hash256 other = crypto::keccak256(std::string_view("other"));
  MUST(db->create_session({other, "0xdef", "", t0, t0 + 30min}));
  MUST(db->end_session(other));
  CHECK_ERRC(db->find_session(other), store_errc::not_found);
  CHECK_ERRC(db->end_session(other), store_errc::not_found);
  CHECK(db->find_session(in).has_value());
  // A new session drops the expired ones.
  MUST(db->create_session({pre, "", "nonce0003", t0 + 31min, t0 + 41min}));
  CHECK_ERRC(db->find_session(in), store_errc::not_found);
}

void persistence(backend& b) {
  std::string trigger_id, run_id;
  {
    auto s = b.open();
    const trigger w = MUST(s->create_trigger(make_trigger("alice"), std::nullopt));
    trigger_id = w.id;
    run_id = MUST(s->enqueue_run(make_run(w.id), trigger_type::webhook)).id;
  }
  auto s = b.open();
  CHECK(MUST(s->get_trigger("alice", trigger_id)).id == trigger_id);
  CHECK(MUST(s->get_run("alice", run_id)).status == run_status::queued);
}

void retention(backend& b) {
  auto s = b.open();
  const trigger w = MUST(s->create_trigger(make_trigger("alice"), std::nullopt));
  std::vector<std::string> ids;
  for (int i = 0; i < 6; ++i)
    ids.push_back(MUST(s->enqueue_run(make_run(w.id, t0, i), trigger_type::webhook)).id);
  // ids[0] succeeds at t0 + 1 h, ids[1] fails at t0 + 2 h, ids[4] at t0 + 3 h and ids[5] at
  // t0 + 4 h; ids[2] stays running, ids[3] queued.
  const auto take = [&](time_point at) {
    auto l = MUST(s->lease_runs(lease("w", at, 1, 24h)));
    REQUIRE(l.size() == 1);
    return l[0];
  };
  MUST(s->complete_run(ref_of(take(t0 + 1h)), json::value(1), t0 + 1h));
  MUST(s->fail_run(ref_of(take(t0 + 2h)), run_error{"action_failed", "no", std::nullopt}, t0 + 2h, 0));
  const leased_run running = take(t0 + 2h);
  CHECK(running.r.id == ids[2]);
  const leased_run q3 = take(t0 + 2h);
  MUST(s->retry_run_later(ref_of(q3), run_error{"unavailable", "busy", std::nullopt}, t0 + 48h));
  MUST(s->complete_run(ref_of(take(t0 + 3h)), json::value(4), t0 + 3h));
  MUST(s->complete_run(ref_of(take(t0 + 4h)), json::value(5), t0 + 4h));

  // Finished before the cutoff only; a run still running or waiting for its retry stays.
  CHECK(MUST(s->delete_finished_runs(t0 + 90min, 100)) == 1);
  CHECK_ERRC(s->get_run("alice", ids[0]), store_errc::not_found);
  CHECK(MUST(s->get_run("alice", ids[1])).status == run_status::failed);
  // Oldest first, at most `limit`.
  CHECK(MUST(s->delete_finished_runs(t0 + 100h, 2)) == 2);
  CHECK_ERRC(s->get_run("alice", ids[1]), store_errc::not_found);
  CHECK_ERRC(s->get_run("alice", ids[4]), store_errc::not_found);
  CHECK(MUST(s->get_run("alice", ids[5])).status == run_status::success);
  CHECK(MUST(delete_expired_runs(*s, t0 + 4h, 1h)) == 0);  // ids[5] finished 0 h before
  {
    // The housekeeping thread sweeps at start: ids[5] finished 96 h before its clock's now.
    manual_clock clk(t0 + 100h);
    std::atomic<size_t> swept{0};
    run_retention keeper(*s, clk, 24h, 1h, [&](const result<size_t>& r) { swept += r ? *r : 0; });
    for (int i = 0; i < 500 && swept.load() == 0; ++i)
      std::this_thread::sleep_for(10ms);
    keeper.stop();
    CHECK(swept.load() == 1);
  }
  CHECK_ERRC(s->get_run("alice", ids[5]), store_errc::not_found);
  CHECK(MUST(s->delete_finished_runs(t0 + 100h, 100)) == 0);
  CHECK(MUST(s->get_run("alice", ids[2])).status == run_status::running);
  CHECK(MUST(s->get_run("alice", ids[3])).status == run_status::running);
  CHECK(MUST(s->list_runs("alice", w.id, page{})).total == 2);
}

// docs/protocol.md §4 "Limits": an owner's triggers are counted in the transaction that inserts
// one, so creations racing each other never pass the limit.
void owner_limit(backend& b) {
  auto s = b.open();
  for (int i = 0; i < 3; ++i)
    MUST(s->create_trigger(make_trigger("alice"), std::nullopt, 3));
  const auto over = s->create_trigger(make_trigger("alice", trigger_type::schedule), schedule_state{t0 + 30s, {}}, 3);
  CHECK_ERRC(over, store_errc::limit_reached);
  CHECK(MUST(s->list_triggers("alice", page{})).total == 3);  // nothing of it stored
  CHECK(MUST(s->list_schedules()).empty());
  // Per owner; a higher limit, or none, lets the same owner create more.
  MUST(s->create_trigger(make_trigger("bob"), std::nullopt, 3));
  MUST(s->create_trigger(make_trigger("alice"), std::nullopt, 4));
  CHECK_ERRC(s->create_trigger(make_trigger("alice"), std::nullopt, 4), store_errc::limit_reached);
  MUST(s->create_trigger(make_trigger("alice"), std::nullopt));
  // Deleting one makes room.
  const auto mine = MUST(s->list_triggers("alice", page{}));
  REQUIRE(mine.total == 5);
  CHECK_ERRC(s->create_trigger(make_trigger("alice"), std::nullopt, 5), store_errc::limit_reached);
  MUST(s->delete_trigger("alice", mine.items[0].id));
  MUST(s->create_trigger(make_trigger("alice"), std::nullopt, 5));

  // 8 threads, 40 creations of one owner against a limit of 6: exactly 6 are stored.
  std::atomic<int> made{0}, refused{0}, other{0};
  std::vector<std::thread> threads;
  for (int k = 0; k < 8; ++k)
    threads.emplace_back([&] {
      for (int i = 0; i < 5; ++i) {
        const auto r = s->create_trigger(make_trigger("carol"), std::nullopt, 6);
        (r ? made : r.code() == store_errc::limit_reached ? refused : other)++;
      }
    });
  for (auto& t : threads)
    t.join();
  CHECK(made.load() == 6);
  CHECK(refused.load() == 34);
  CHECK(other.load() == 0);
  CHECK(MUST(s->list_triggers("carol", page{})).total == 6);
}

// docs/protocol.md §4 "Limits": a schedule whose runs fail in a row for lack of credits is
// disabled with a reason, in the transaction that records the failure that reaches the limit.
void credit_failures(backend& b) {
  auto s = b.open();
  const run_error no_credits{std::string(kInsufficientCreditsCode), "insufficient credits: 0 of 1", std::nullopt};
  const run_error threw{"action_failed", "boom", std::nullopt};
  time_point now = t0;
  // Queues one run of `t` and leases it (the only run waiting), as the scheduler and a worker do.
  const auto leased = [&](const trigger& t) {
    now += 30s;
    MUST(s->enqueue_run(make_run(t.id, now), t.type));
    auto l = MUST(s->lease_runs(lease("w", now)));
    REQUIRE(l.size() == 1);
    REQUIRE(l[0].r.trigger_id == t.id);
    return ref_of(l[0]);
  };
  const auto state = [&](const trigger& t) {
    return MUST(s->get_trigger("alice", t.id));
  };
  // The owner's PATCH of `enabled` (or, with nullopt, of its name alone).
  const auto patch = [&](const trigger& t, std::optional<bool> enabled, time_point at) {
    trigger_patch p;
    p.enabled = enabled;
    if (!enabled)
      p.name = "renamed";
    p.now = at;
    return MUST(s->update_trigger("alice", t.id, p));
  };

  const trigger sched =
      MUST(s->create_trigger(make_trigger("alice", trigger_type::schedule), schedule_state{t0 + 30s, {}}));
  CHECK(!sched.disabled_reason);
  CHECK(sched.credit_failures == 0);
  // Two in a row, then a run that ran: the row starts again.
  CHECK(!MUST(s->fail_run(leased(sched), no_credits, now, 3)));
  CHECK(!MUST(s->fail_run(leased(sched), no_credits, now, 3)));
  CHECK(state(sched).credit_failures == 2);
  MUST(s->complete_run(leased(sched), json::value(1), now));
  CHECK(state(sched).credit_failures == 0);
  // A failure of another kind breaks the row too.
  CHECK(!MUST(s->fail_run(leased(sched), no_credits, now, 3)));
  CHECK(!MUST(s->fail_run(leased(sched), threw, now, 3)));
  CHECK(state(sched).credit_failures == 0);
  // Three in a row: the third disables it, with its reason, and it leaves the scheduler's index.
  CHECK(!MUST(s->fail_run(leased(sched), no_credits, now, 3)));
  CHECK(!MUST(s->fail_run(leased(sched), no_credits, now, 3)));
  CHECK(MUST(s->fail_run(leased(sched), no_credits, now, 3)));
  const time_point disabled_at = now;
  trigger off = state(sched);
  CHECK(!off.enabled);
  CHECK(off.disabled_reason == credit_disabled_reason(3));
  CHECK(off.credit_failures == 3);
  CHECK(off.updated_at == disabled_at);
  CHECK(MUST(s->find_trigger(sched.id)).disabled_reason == off.disabled_reason);
  CHECK(MUST(s->list_triggers("alice", page{})).items.at(0).disabled_reason == off.disabled_reason);
  CHECK(!MUST(s->get_schedule(sched.id)));
  CHECK(MUST(s->list_schedules()).empty());
  CHECK(!MUST(s->fire_schedule(sched.id, t0 + 30s, t0 + 30s, make_run(sched.id), t0 + 60s)));
  CHECK(MUST(s->get_run("alice", MUST(s->list_runs("alice", sched.id, page{})).items.at(0).id)).error->code ==
        kInsufficientCreditsCode);
  // Other changes keep the reason.
  patch(sched, std::nullopt, now);
  CHECK(state(sched).disabled_reason == off.disabled_reason);
  CHECK(!state(sched).enabled);
  // The owner enables it again: the reason and the count go.
  const trigger on = patch(sched, true, now);
  CHECK(on.enabled);
  CHECK(!on.disabled_reason);
  CHECK(on.credit_failures == 0);
  CHECK(!state(sched).disabled_reason);
  CHECK(state(sched).credit_failures == 0);
  // Enabling an enabled trigger does not reset its row (an owner cannot keep a trigger from
  // the limit by sending enabled: true).
  CHECK(!MUST(s->fail_run(leased(sched), no_credits, now, 3)));
  patch(sched, true, now);
  CHECK(state(sched).credit_failures == 1);
  // Disabled by its owner: later failures count, but do not make it the service's (no reason).
  MUST(s->enqueue_run(make_run(sched.id, now + 1s), trigger_type::schedule));
  patch(sched, false, now);
  {
    auto l = MUST(s->lease_runs(lease("w", now + 1s)));
    REQUIRE(l.size() == 1);
    CHECK(!MUST(s->fail_run(ref_of(l[0]), no_credits, now + 1s, 1)));
  }
  CHECK(!state(sched).disabled_reason);
  CHECK(state(sched).credit_failures == 2);
  patch(sched, true, now + 2s);

  // 0: never disabled, however many.
  const trigger patient =
      MUST(s->create_trigger(make_trigger("alice", trigger_type::schedule), schedule_state{t0 + 30s, {}}));
  for (int i = 0; i < 4; ++i)
    CHECK(!MUST(s->fail_run(leased(patient), no_credits, now, 0)));
  CHECK(state(patient).enabled);
  CHECK(state(patient).credit_failures == 4);
  // Only schedules count: a webhook's sender is there to see its answers.
  const trigger hook = MUST(s->create_trigger(make_trigger("alice"), std::nullopt));
  for (int i = 0; i < 2; ++i)
    CHECK(!MUST(s->fail_run(leased(hook), no_credits, now, 1)));
  CHECK(state(hook).enabled);
  CHECK(state(hook).credit_failures == 0);
  // A worker that lost its lease changes neither the run nor the trigger.
  const lease_ref ref = leased(patient);
  CHECK_ERRC(s->fail_run(lease_ref{ref.run_id, "w2", ref.attempt}, no_credits, now, 1), store_errc::lease_lost);
  CHECK(state(patient).credit_failures == 4);
  CHECK(state(patient).enabled);
  MUST(s->complete_run(ref, json::value(2), now));
  CHECK(state(patient).credit_failures == 0);
  CHECK_ERRC(s->complete_run(ref, json::value(2), now), store_errc::lease_lost);

  // The reason survives reopening.
  const trigger victim =
      MUST(s->create_trigger(make_trigger("alice", trigger_type::schedule), schedule_state{t0 + 30s, {}}));
  CHECK(MUST(s->fail_run(leased(victim), no_credits, now, 1)));
  s.reset();
  s = b.open();
  const trigger reopened = MUST(s->get_trigger("alice", victim.id));
  CHECK(!reopened.enabled);
  CHECK(reopened.disabled_reason == credit_disabled_reason(1));
  CHECK(reopened.credit_failures == 1);
}

}  // namespace

lease_request lease(std::string worker, time_point now, size_t n, std::chrono::milliseconds d) {
  lease_request r;
  r.worker_id = std::move(worker);
  r.max_runs = n;
  r.duration = d;
  r.now = now;
  r.max_attempts = 3;
  return r;
}

lease_ref ref_of(const leased_run& l) { return lease_ref{l.r.id, l.r.lease_owner, l.r.attempts}; }

void run_store_suite(const backend_factory& make) {
  const auto with = [&](void (*fn)(backend&)) {
    auto b = make();
    fn(*b);
  };
  SUBCASE("triggers: create, get, list, update, delete, ownership") { with(triggers_crud); }
  SUBCASE("runs: queued against the trigger's type and state; listed newest first") { with(queue_and_list); }
  SUBCASE("run limits: per minute and queued; schedules and chain events record refusals") { with(run_limits); }
  SUBCASE("leases: oldest first, fenced, completed or failed") { with(lease_lifecycle); }
  SUBCASE("leases: renewal, expiry back to queued, attempt limit, release at start") { with(lease_expiry); }
  SUBCASE("retries: running without a lease until next_attempt_at") { with(retries); }
  SUBCASE("concurrent workers never share a run") { with(concurrent_workers); }
  SUBCASE("retention: finished runs deleted before a cutoff, oldest first") { with(retention); }
  SUBCASE("schedules: index, fire as compare-and-set, state with updates") { with(schedules); }
  SUBCASE("chain watcher: checkpoint and seen logs fire once") { with(chain_state); }
  SUBCASE("tokens and approvals") { with(tokens_and_approvals); }
  SUBCASE("browser sessions: sign in once with their own nonce, sign out") { with(browser_sessions); }
  SUBCASE("state survives reopening") { with(persistence); }
  SUBCASE("owner limit: counted in the creating transaction, never passed by concurrent creations") {
    with(owner_limit);
  }
  SUBCASE("credit failures: a schedule's row of insufficient_credits disables it with a reason") {
    with(credit_failures);
  }
}

}  // namespace enact::triggers::test
