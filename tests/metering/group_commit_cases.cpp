// SPDX-License-Identifier: Apache-2.0
// The metering store under concurrent writes, which its committer runs in batches of one
// transaction each (docs/architecture.md §4 "Group commit"): threads race for a balance that
// covers only some of them, failing writes share batches with succeeding ones, a key's cap is
// raced for, and holds and charges interleave on several accounts; the invariants are those the
// fleet test checks (none lost, none doubled, no balance below zero, no cap passed).
#include <doctest/doctest.h>

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "conformance.hpp"
#include "must.hpp"

namespace enact::metering::test {
namespace {

constexpr int kThreads = 16;

const account_hash kCarol = test_hash(0xC0);
const account_hash kDave = test_hash(0xD0);
const key_hash kCarolKey = test_hash(0xC0, 1);

void fund(store& s, const account_hash& account, const std::string& id, uint64_t cents) {
  MUST(s.record_payment(intent(id, account, cents)));
  CHECK(MUST(s.credit_payment(account, id)).credited_now);
}

reserve_request hold(const account_hash& account, uint64_t amount, uint64_t cap = 0, const key_hash& key = kCarolKey) {
  return reserve_request{account, key, amount, cap, "run"};
}

/// What kThreads threads got, each asking `per_thread` times for the same hold: the holds taken,
/// the refusals with `refusal`, and any other answer.
struct raced_holds {
  std::vector<std::string> held;
  int refused = 0;
  int other = 0;
};
raced_holds race_holds(store& s, const reserve_request& q, int per_thread, metering_errc refusal) {
  std::mutex mu;
  raced_holds out;
  race(kThreads, [&](int) {
    for (int i = 0; i < per_thread; ++i) {
      auto r = s.reserve(q);
      std::lock_guard lock(mu);
      if (r)
        out.held.push_back(r->id);
      else if (r.code() == refusal)
        ++out.refused;
      else
        ++out.other;
    }
  });
  return out;
}

// Attack: 16 threads x 8 holds of 3 credits against 100 credits: exactly 33 holds succeed, every
// other one answers insufficient_credits, and settling them all spends 99 credits, once each.
void holds_race_for_a_balance(store& s) {
  fund(s, kCarol, "pi_race", 100);
  const raced_holds h = race_holds(s, hold(kCarol, 3), 8, metering_errc::insufficient_credits);
  const std::vector<std::string>& held = h.held;
  CHECK(held.size() == 33);
  CHECK(h.refused == kThreads * 8 - 33);
  CHECK(h.other == 0);
  CHECK(MUST(s.available(kCarol)) == 1);
  CHECK(MUST(s.balance(kCarol)) == 100);
  std::atomic<size_t> next{0};
  std::atomic<int> settled{0};
  race(kThreads, [&](int) {
    for (size_t i = next++; i < held.size(); i = next++)
      if (s.settle(kCarol, held[i], 3))
        ++settled;
  });
  CHECK(settled == 33);
  CHECK(MUST(s.balance(kCarol)) == 1);
  CHECK(MUST(s.usage(kCarol, {1, 1})).total == 33);
  CHECK(MUST(s.spending(kCarol, kCarolKey)).spent == 99);
  // Settled once: a second settle of any of them is unknown.
  CHECK_ERRC(s.settle(kCarol, held.front(), 3), metering_errc::unknown_reservation);
}

// Failing writes (an unknown reservation, a hold above the balance, a settle above its hold, a
// replayed payment record) interleave with succeeding ones: each failure is its own, and none
// undoes a neighbour's hold or charge.
void failures_do_not_undo_neighbours(store& s) {
  fund(s, kCarol, "pi_mix", 10'000);
  std::atomic<int> ok_holds{0}, ok_settles{0}, unexpected{0};
  race(kThreads, [&](int t) {
    for (int i = 0; i < 10; ++i) {
      switch ((t + i) % 4) {
        case 0: {
          auto r = s.reserve(hold(kCarol, 5));
          if (!r) {
            ++unexpected;
            break;
          }
          ++ok_holds;
          // Over its hold: refused alone; the hold stays open and settles after.
          if (s.settle(kCarol, r->id, 6).code() != metering_errc::over_reserved)
            ++unexpected;
          if (s.settle(kCarol, r->id, 5))
            ++ok_settles;
          else
            ++unexpected;
          break;
        }
        case 1:
          if (s.settle(kCarol, "rsv_" + std::to_string(t * 100 + i), 1).code() != metering_errc::unknown_reservation)
            ++unexpected;
          break;
        case 2:
          if (s.reserve(hold(kCarol, 1'000'000)).code() != metering_errc::insufficient_credits)
            ++unexpected;
          break;
        default:
          if (s.record_payment(intent("pi_mix", kCarol, 1)).code() != metering_errc::duplicate_payment)
            ++unexpected;
          break;
      }
    }
  });
  CHECK(unexpected == 0);
  CHECK(ok_holds == ok_settles);
  CHECK(ok_holds == kThreads * 10 / 4);
  CHECK(MUST(s.balance(kCarol)) == 10'000 - 5 * static_cast<uint64_t>(ok_settles.load()));
  CHECK(MUST(s.available(kCarol)) == MUST(s.balance(kCarol)));
  CHECK(MUST(s.usage(kCarol, {1, 1})).total == static_cast<uint64_t>(ok_settles.load()));
}

// Attack: threads race a key capped at 40 credits on an account holding far more: exactly 40
// one-credit holds succeed, the others answer cap_exceeded, and settled they spend 40.
void key_cap_under_concurrency(store& s) {
  fund(s, kCarol, "pi_cap", 10'000);
  const raced_holds h = race_holds(s, hold(kCarol, 1, 40), 5, metering_errc::cap_exceeded);
  CHECK(h.held.size() == 40);
  CHECK(h.refused == kThreads * 5 - 40);
  CHECK(h.other == 0);
  CHECK(MUST(s.spending(kCarol, kCarolKey)).reserved == 40);
  for (const std::string& id : h.held)
    (void)MUST(s.settle(kCarol, id, 1));
  CHECK(MUST(s.spending(kCarol, kCarolKey)).spent == 40);
  CHECK_ERRC(s.reserve(hold(kCarol, 1, 40)), metering_errc::cap_exceeded);
  CHECK(MUST(s.balance(kCarol)) == 10'000 - 40);
}

// Runs of two accounts, held and then charged or released, all at once, with payments credited
// meanwhile: every answered charge is in the balance and the history exactly once.
void runs_of_two_accounts(store& s) {
  fund(s, kCarol, "pi_c0", 300);
  fund(s, kDave, "pi_d0", 300);
  std::atomic<uint64_t> charged_carol{0}, charged_dave{0};
  std::atomic<int> unexpected{0};
  race(kThreads, [&](int t) {
    const account_hash& account = t % 2 == 0 ? kCarol : kDave;
    auto& charged = t % 2 == 0 ? charged_carol : charged_dave;
    for (int i = 0; i < 12; ++i) {
      auto r = s.reserve(hold(account, 4, 0, account));
      if (!r) {
        if (r.code() != metering_errc::insufficient_credits)
          ++unexpected;
        continue;
      }
      if (i % 3 == 2) {
        if (!s.release(account, r->id))
          ++unexpected;
      } else if (s.settle(account, r->id, 3)) {
        charged += 3;
      } else {
        ++unexpected;
      }
    }
    if (t < 2) {  // a payment per account, credited in the middle of the runs
      const std::string id = std::string("pi_late_") + (t == 0 ? "c" : "d");
      if (!s.record_payment(intent(id, account, 50)) || !s.credit_payment(account, id))
        ++unexpected;
    }
  });
  CHECK(unexpected == 0);
  CHECK(MUST(s.balance(kCarol)) == 350 - charged_carol.load());
  CHECK(MUST(s.balance(kDave)) == 350 - charged_dave.load());
  CHECK(MUST(s.usage(kCarol, {1, 1})).total * 3 == charged_carol.load());
  CHECK(MUST(s.usage(kDave, {1, 1})).total * 3 == charged_dave.load());
  CHECK(MUST(s.available(kCarol)) == MUST(s.balance(kCarol)));
  CHECK(MUST(s.available(kDave)) == MUST(s.balance(kDave)));
}

}  // namespace

void run_group_commit_conformance(const store_factory& make) {
  test_clock clock;
  SUBCASE("holds race for a balance that covers only some of them") { holds_race_for_a_balance(*make(clock)); }
  SUBCASE("failing writes do not undo their neighbours") { failures_do_not_undo_neighbours(*make(clock)); }
  SUBCASE("a key's spending cap under concurrent holds") { key_cap_under_concurrency(*make(clock)); }
  SUBCASE("runs of two accounts held, charged and released at once") { runs_of_two_accounts(*make(clock)); }
}

}  // namespace enact::metering::test
