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
  std::vector<std::string> order;  // writes in the order the committer ran them
  bool fail_commit = false;

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
answer debit(group_commit& gc, fake_ledger& l, const std::string& name, int64_t amount) {
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
    gc.submit(body);
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

}  // namespace
}  // namespace enact::metering::sql::test
