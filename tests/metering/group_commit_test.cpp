// SPDX-License-Identifier: Apache-2.0
// The committer on its own (server/metering/group_commit.hpp), with a batch runner over an
// in-memory ledger whose savepoints are copies, so that the cases decide exactly which writes
// share a batch: a lone write commits at once, writes arriving during a commit share the next
// one in arrival order, a failing write is undone alone, a failed commit answers every write of
// its batch with the failure, batches hold at most max_batch writes, and a shutdown answers the
// waiting callers with an error instead of leaving them hanging.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "metering/group_commit.hpp"

namespace enact::metering::sql::test {
namespace {

class no_sql final : public session {
 public:
  rows exec(const statement&, const std::vector<param>&) override { throw std::logic_error("no SQL here"); }
};

/// A ledger of named balances with one committed state; the runner works on a copy per batch.
struct fake_ledger {
  std::map<std::string, int64_t> committed;
  std::map<std::string, int64_t> working;  // the batch's transaction
  std::vector<size_t> batch_sizes;
  std::vector<bool> batch_durable;  // per transaction: whether its commit was waited to disk
  std::vector<std::string> order;   // writes in the order the committer ran them
  bool fail_commit = false;

  // The durable transaction numbered `block_durable` (from 1) waits here before it commits,
  // until `durable_released`.
  std::mutex durable_mu;
  std::condition_variable durable_cv;
  int durable_count = 0;
  int block_durable = 0;
  bool durable_released = false;

  // The first batch waits here until opened, so the cases can queue writes behind it.
  std::mutex gate_mu;
  std::condition_variable gate_cv;
  bool gate_closed = false;
  bool in_first_batch = false;

  batch_runner runner() {
    return [this](std::span<queued_write* const> batch) {
      {
        std::unique_lock lock(gate_mu);
        in_first_batch = true;
        gate_cv.notify_all();
        gate_cv.wait(lock, [this] { return !gate_closed; });
      }
      no_sql s;
      working = committed;
      std::map<std::string, int64_t> snapshot;
      for (queued_write* w : batch)
        run_in_savepoint(
            *w,
            [&]() -> session& {
              snapshot = working;
              return s;
            },
            [] {}, [&] { working = snapshot; }, [](const std::exception_ptr&) { return false; });
      batch_sizes.push_back(batch.size());
      batch_durable.push_back(batch.front()->durable);
      if (batch.front()->durable) {
        std::unique_lock lock(durable_mu);
        if (++durable_count == block_durable) {
          durable_cv.notify_all();
          durable_cv.wait(lock, [this] { return durable_released; });
        }
      }
      if (fail_commit)
        throw std::runtime_error("disk full");
      committed = working;
    };
  }

  void close_gate() {
    std::lock_guard lock(gate_mu);
    gate_closed = true;
  }
  void open_gate() {
    {
      std::lock_guard lock(gate_mu);
      gate_closed = false;
    }
    gate_cv.notify_all();
  }
  void wait_in_first_batch() {
    std::unique_lock lock(gate_mu);
    gate_cv.wait(lock, [this] { return in_first_batch; });
  }
};

/// What a write answered: kept (true), refused by its own rule (false), or the error it threw.
struct answer {
  std::optional<bool> kept;
  std::string error;
};

/// Submits a debit of `amount` from "balance", named `name`: refused when the balance is short,
/// thrown when `amount` is negative (a failing statement).
answer debit(group_commit& gc, fake_ledger& l, const std::string& name, int64_t amount, bool durable = true) {
  answer a;
  const std::function<bool(session&)> body = [&](session&) {
    l.order.push_back(name);
    if (amount < 0)
      throw std::runtime_error("bad amount in " + name);
    l.working[name] = amount;
    if (l.working["balance"] < amount) {
      a.kept = false;
      return false;
    }
    l.working["balance"] -= amount;
    a.kept = true;
    return true;
  };
  try {
    gc.submit(body, false, durable);
  } catch (const std::exception& e) {
    a.error = e.what();
  }
  return a;
}

void wait_pending(const group_commit& gc, size_t n) {
  while (gc.stats().pending != n)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

TEST_CASE("group commit: a lone write commits at once, in a batch of its own") {
  fake_ledger l;
  l.committed["balance"] = 10;
  group_commit gc(l.runner());
  const answer a = debit(gc, l, "a", 4);
  CHECK(a.kept == true);
  CHECK(l.committed["balance"] == 6);  // committed before the caller was answered
  const answer b = debit(gc, l, "b", 7);
  CHECK(b.kept == false);
  CHECK(l.committed["balance"] == 6);
  CHECK(l.batch_sizes == std::vector<size_t>{1, 1});
}

TEST_CASE(
    "group commit: writes arriving during a commit share the next, in arrival order, each with its own "
    "outcome") {
  fake_ledger l;
  l.committed["balance"] = 10;
  group_commit gc(l.runner());
  l.close_gate();
  std::vector<answer> answers(6);
  std::vector<std::thread> callers;
  callers.emplace_back([&] { answers[0] = debit(gc, l, "first", 1); });
  l.wait_in_first_batch();
  // Queued one after another while the first batch commits: 4, then one too large (refused
  // alone), then one that throws (undone alone), then 5 (which sees the 4), then 1 (short now).
  const std::vector<std::pair<std::string, int64_t>> queued = {
      {"w4", 4}, {"too_large", 50}, {"throws", -1}, {"w5", 5}, {"w1", 1}};
  for (size_t i = 0; i < queued.size(); ++i) {
    callers.emplace_back([&, i] { answers[i + 1] = debit(gc, l, queued[i].first, queued[i].second); });
    wait_pending(gc, i + 1);
  }
  l.open_gate();
  for (auto& t : callers)
    t.join();
  CHECK(l.batch_sizes == std::vector<size_t>{1, 5});
  CHECK(l.order == std::vector<std::string>{"first", "w4", "too_large", "throws", "w5", "w1"});
  CHECK(answers[0].kept == true);
  CHECK(answers[1].kept == true);
  CHECK(answers[2].kept == false);
  CHECK(answers[3].error == "bad amount in throws");
  CHECK(answers[4].kept == true);
  CHECK(answers[5].kept == false);  // 10 - 1 - 4 - 5 = 0 left
  CHECK(l.committed["balance"] == 0);
  // The refused and the failed writes left nothing behind; their neighbours' effects stayed.
  CHECK(l.committed.count("too_large") == 0);
  CHECK(l.committed.count("throws") == 0);
  CHECK(l.committed.count("w1") == 0);
  CHECK(l.committed["w4"] == 4);
  CHECK(l.committed["w5"] == 5);
  const group_commit_stats st = gc.stats();
  CHECK(st.batches == 2);
  CHECK(st.writes == 6);
  CHECK(st.largest == 5);
}

TEST_CASE("group commit: a failed commit answers every write of its batch with the failure") {
  fake_ledger l;
  l.committed["balance"] = 10;
  group_commit gc(l.runner());
  l.fail_commit = true;
  l.close_gate();
  std::vector<answer> answers(3);
  std::vector<std::thread> callers;
  callers.emplace_back([&] { answers[0] = debit(gc, l, "a", 1); });
  l.wait_in_first_batch();
  callers.emplace_back([&] { answers[1] = debit(gc, l, "b", 2); });
  wait_pending(gc, 1);
  callers.emplace_back([&] { answers[2] = debit(gc, l, "c", 3); });
  wait_pending(gc, 2);
  l.open_gate();
  for (auto& t : callers)
    t.join();
  for (const answer& a : answers)
    CHECK(a.error == "disk full");
  CHECK(l.committed["balance"] == 10);
  l.fail_commit = false;
  CHECK(debit(gc, l, "d", 3).kept == true);  // the committer goes on
  CHECK(l.committed["balance"] == 7);
}

TEST_CASE("group commit: a batch holds at most max_batch writes") {
  fake_ledger l;
  l.committed["balance"] = 1000;
  group_commit gc(l.runner(), {.max_batch = 3});
  l.close_gate();
  std::vector<std::thread> callers;
  callers.emplace_back([&] { (void)debit(gc, l, "w0", 1); });
  l.wait_in_first_batch();
  for (size_t i = 1; i <= 7; ++i) {
    callers.emplace_back([&, i] { (void)debit(gc, l, "w" + std::to_string(i), 1); });
    wait_pending(gc, i);
  }
  l.open_gate();
  for (auto& t : callers)
    t.join();
  CHECK(l.batch_sizes == std::vector<size_t>{1, 3, 3, 1});
  CHECK(l.committed["balance"] == 992);
}

TEST_CASE("group commit: shutdown answers the waiting callers with an error and never hangs") {
  fake_ledger l;
  l.committed["balance"] = 100;
  auto gc = std::make_unique<group_commit>(l.runner());
  l.close_gate();
  std::vector<answer> answers(5);
  std::vector<std::thread> callers;
  callers.emplace_back([&] { answers[0] = debit(*gc, l, "running", 1); });
  l.wait_in_first_batch();
  for (size_t i = 1; i < answers.size(); ++i) {
    callers.emplace_back([&, i] { answers[i] = debit(*gc, l, "queued" + std::to_string(i), 1); });
    wait_pending(*gc, i);
  }
  std::atomic<bool> stopped{false};
  std::thread stopper([&] {
    gc->shutdown();  // waits for the batch in progress
    stopped = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CHECK_FALSE(stopped.load());
  l.open_gate();
  stopper.join();
  for (auto& t : callers)
    t.join();
  CHECK(answers[0].kept == true);  // the batch in progress finished and was answered
  for (size_t i = 1; i < answers.size(); ++i) {
    CHECK_FALSE(answers[i].kept.has_value());  // never run
    CHECK(answers[i].error == "the store is closed; the write was not run");
  }
  CHECK(l.committed["balance"] == 99);
  const answer late = debit(*gc, l, "late", 1);  // after shutdown: refused at once
  CHECK(late.error == "the store is closed; the write was not run");
  gc->shutdown();  // twice is fine
  gc.reset();
  CHECK(l.order == std::vector<std::string>{"running"});
}

TEST_CASE("group commit: a lone write runs on its caller's thread, with no hand-off") {
  fake_ledger l;
  l.committed["balance"] = 10;
  group_commit gc(l.runner());
  std::thread::id ran_on;
  const std::function<bool(session&)> body = [&](session&) {
    ran_on = std::this_thread::get_id();
    return true;
  };
  gc.submit(body);
  CHECK(ran_on == std::this_thread::get_id());
  std::thread other([&] { gc.submit(body); });
  const std::thread::id other_id = other.get_id();
  other.join();
  CHECK(ran_on == other_id);
}

TEST_CASE(
    "group commit: holds run first, in a transaction of their own not waited to disk, and are answered while the "
    "durable writes commit") {
  fake_ledger l;
  l.committed["balance"] = 100;
  group_commit gc(l.runner());
  l.close_gate();
  std::vector<answer> answers(5);
  std::atomic<int> holds_answered{0};
  std::vector<std::thread> callers;
  callers.emplace_back([&] { answers[0] = debit(gc, l, "first", 1); });
  l.wait_in_first_batch();
  // Queued during the first commit: a charge, a hold, a charge, a hold refused (too large).
  const std::vector<std::tuple<std::string, int64_t, bool>> queued = {
      {"charge1", 2, true}, {"hold1", 3, false}, {"charge2", 4, true}, {"hold_too_large", 500, false}};
  for (size_t i = 0; i < queued.size(); ++i) {
    callers.emplace_back([&, i] {
      const auto& [name, amount, durable] = queued[i];
      answers[i + 1] = debit(gc, l, name, amount, durable);
      if (!durable)
        ++holds_answered;
    });
    wait_pending(gc, i + 1);
  }
  {
    std::lock_guard lock(l.durable_mu);
    l.block_durable = 2;  // the charges' commit (the first batch's is number 1) will wait
  }
  l.open_gate();
  {
    std::unique_lock lock(l.durable_mu);
    l.durable_cv.wait(lock, [&] { return l.durable_count == 2; });
  }
  for (int i = 0; i < 5000 && holds_answered.load() < 2; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  CHECK(holds_answered.load() == 2);
  CHECK(answers[2].kept == true);   // hold1: answered while the charges wait on their commit
  CHECK(answers[4].kept == false);  // refused alone
  CHECK_FALSE(answers[1].kept.has_value());
  CHECK_FALSE(answers[3].kept.has_value());
  {
    std::lock_guard lock(l.durable_mu);
    l.durable_released = true;
  }
  l.durable_cv.notify_all();
  for (auto& t : callers)
    t.join();
  CHECK(l.order == std::vector<std::string>{"first", "hold1", "hold_too_large", "charge1", "charge2"});
  CHECK(l.batch_sizes == std::vector<size_t>{1, 2, 2});
  CHECK(l.batch_durable == std::vector<bool>{true, false, true});
  CHECK(answers[1].kept == true);
  CHECK(answers[3].kept == true);
  CHECK(l.committed["balance"] == 100 - 1 - 3 - 2 - 4);
}

}  // namespace
}  // namespace enact::metering::sql::test
