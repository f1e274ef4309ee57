// SPDX-License-Identifier: Apache-2.0
// The metering-store conformance cases (conformance.hpp): payments credited once, reservations
// against the balance and a key's cap, settle and release, expiry, the histories, and threads
// hammering one account; the attack cases (a key spending past its cap, a race for the last
// credits, another account's reservation, a settle above the reservation, a replayed payment id)
// are among them.
#include "conformance.hpp"

#include <doctest/doctest.h>

#include <random>
#include <string>
#include <thread>
#include <vector>

#include "must.hpp"

namespace enact::metering::test {
namespace {

const account_hash kAlice = test_hash(0xA1);
const account_hash kBob = test_hash(0xB0);
const key_hash kAliceKey = test_hash(0xA1, 1);
const key_hash kAliceKey2 = test_hash(0xA1, 2);

/// Records and credits a payment of `cents` to `account`.
void fund(store& s, const account_hash& account, const std::string& id, uint64_t cents) {
  MUST(s.record_payment(intent(id, account, cents)));
  const credit_result c = MUST(s.credit_payment(account, id));
  CHECK(c.credited_now);
}

reserve_request req(const account_hash& account, const key_hash& key, uint64_t amount, uint64_t cap = 0,
                    std::string run_id = "run") {
  return reserve_request{account, key, amount, cap, std::move(run_id)};
}

void payments_credit_once(store& s) {
  CHECK(MUST(s.balance(kAlice)) == 0);
  MUST(s.record_payment(intent("pi_1", kAlice, 500)));
  const payment rec = MUST(s.get_payment(kAlice, "pi_1"));
  CHECK(rec.amount_cents == 500);
  CHECK(rec.provider == "dev");
  CHECK_FALSE(rec.credited);
  CHECK(MUST(s.balance(kAlice)) == 0);  // recording credits nothing

  const credit_result first = MUST(s.credit_payment(kAlice, "pi_1"));
  CHECK(first.credited_now);
  CHECK(first.balance == 500);
  CHECK(MUST(s.get_payment(kAlice, "pi_1")).credited);
  // Attack: the same payment id replayed — no second credit, the first answer again.
  const credit_result again = MUST(s.credit_payment(kAlice, "pi_1"));
  CHECK_FALSE(again.credited_now);
  CHECK(again.balance == 500);
  MUST(s.record_payment(intent("pi_2", kAlice, 700, "stripe")));
  CHECK(MUST(s.credit_payment(kAlice, "pi_2")).balance == 1200);
  CHECK(MUST(s.credit_payment(kAlice, "pi_1")).balance == 500);  // still the first credit's answer
  CHECK(MUST(s.balance(kAlice)) == 1200);

  // Ids are global: recording one again, for any account, is refused.
  CHECK_ERRC(s.record_payment(intent("pi_1", kAlice, 500)), metering_errc::duplicate_payment);
  CHECK_ERRC(s.record_payment(intent("pi_1", kBob, 900)), metering_errc::duplicate_payment);
  // Another account's payment is not found, and crediting it does nothing.
  CHECK_ERRC(s.get_payment(kBob, "pi_2"), metering_errc::unknown_payment);
  CHECK_ERRC(s.credit_payment(kBob, "pi_2"), metering_errc::unknown_payment);
  CHECK_ERRC(s.credit_payment(kAlice, "pi_none"), metering_errc::unknown_payment);
  CHECK(MUST(s.balance(kBob)) == 0);
  // Out of range.
  CHECK_ERRC(s.record_payment(intent("pi_0", kAlice, 0)), metering_errc::invalid_argument);
  CHECK_ERRC(s.record_payment(intent("", kAlice, 5)), metering_errc::invalid_argument);
  CHECK_ERRC(s.record_payment(intent("pi_3", kAlice, 5, "")), metering_errc::invalid_argument);
  CHECK_ERRC(s.record_payment(intent(std::string(257, 'x'), kAlice, 5)), metering_errc::invalid_argument);
}

reversal_request reversal_of(std::string event, std::string payment, reversal_kind kind, std::string ref,
                             uint64_t cents) {
  return reversal_request{std::move(event), std::move(payment), "stripe", kind, std::move(ref), cents};
}

void stripe_fund(store& s, const account_hash& account, const std::string& id, uint64_t cents) {
  MUST(s.record_payment(intent(id, account, cents, "stripe")));
  CHECK(MUST(s.credit_payment(account, id)).credited_now);
}

// Refunds report the charge's cumulative amount refunded (Stripe's charge.amount_refunded): each
// debits only its increase, so a redelivery or an older total arriving late debits nothing.
void refunds_debit_once(store& s) {
  stripe_fund(s, kAlice, "pi_r", 1000);
  const reversal_result partial =
      MUST(s.reverse_payment(reversal_of("evt_1", "pi_r", reversal_kind::refund, "ch_r", 300)));
  CHECK(partial.applied_now);
  CHECK(partial.account == kAlice);
  CHECK(partial.reversed_cents == 300);
  CHECK(partial.balance == 700);
  // The same event again, and an older total delivered after a newer one: nothing more.
  CHECK_FALSE(MUST(s.reverse_payment(reversal_of("evt_1", "pi_r", reversal_kind::refund, "ch_r", 300))).applied_now);
  const reversal_result full =
      MUST(s.reverse_payment(reversal_of("evt_2", "pi_r", reversal_kind::refund, "ch_r", 1000)));
  CHECK(full.reversed_cents == 1000);
  CHECK(full.balance == 0);
  CHECK_FALSE(MUST(s.reverse_payment(reversal_of("evt_3", "pi_r", reversal_kind::refund, "ch_r", 300))).applied_now);
  CHECK(MUST(s.balance(kAlice)) == 0);
  CHECK(MUST(s.owed(kAlice)) == 0);
  const payment rec = MUST(s.get_payment(kAlice, "pi_r"));
  CHECK(rec.reversed_cents == 1000);
  REQUIRE(rec.reversals.size() == 2);
  CHECK(rec.reversals[0].event_id == "evt_1");
  CHECK(rec.reversals[0].kind == reversal_kind::refund);
  CHECK(rec.reversals[0].amount_cents == 300);
  CHECK(rec.reversals[1].amount_cents == 700);
  // The listing carries them too.
  const auto listed = MUST(s.payments(kAlice, {1, 10}));
  REQUIRE(listed.items.size() == 1);
  CHECK(listed.items[0].reversed_cents == 1000);
  CHECK(listed.items[0].reversals.size() == 2);

  // Attack: another provider's payment, an unknown one, an amount above the payment's.
  fund(s, kBob, "pi_dev", 900);
  CHECK_ERRC(s.reverse_payment(reversal_of("evt_4", "pi_dev", reversal_kind::refund, "ch_d", 900)),
             metering_errc::unknown_payment);
  CHECK_ERRC(s.reverse_payment(reversal_of("evt_5", "pi_none", reversal_kind::refund, "ch_n", 10)),
             metering_errc::unknown_payment);
  stripe_fund(s, kBob, "pi_b", 500);
  CHECK_ERRC(s.reverse_payment(reversal_of("evt_6", "pi_b", reversal_kind::refund, "ch_b", 501)),
             metering_errc::invalid_argument);
  CHECK_ERRC(s.reverse_payment(reversal_of("", "pi_b", reversal_kind::refund, "ch_b", 5)),
             metering_errc::invalid_argument);
  CHECK(MUST(s.balance(kBob)) == 1400);
}

// A reversal beyond the balance (credits spent already) is owed: the account cannot reserve
// until a payment pays it back, and the payment pays the debt first.
void reversal_owed_until_paid(store& s) {
  stripe_fund(s, kAlice, "pi_spent", 1000);
  const reservation r = MUST(s.reserve(req(kAlice, kAliceKey, 800)));
  CHECK(MUST(s.settle(kAlice, r.id, 800)) == 200);
  const reversal_result d =
      MUST(s.reverse_payment(reversal_of("evt_d1", "pi_spent", reversal_kind::dispute, "dp_1", 1000)));
  CHECK(d.applied_now);
  CHECK(d.balance == 0);
  CHECK(d.owed == 800);
  CHECK(MUST(s.balance(kAlice)) == 0);
  CHECK(MUST(s.owed(kAlice)) == 800);
  CHECK_ERRC(s.reserve(req(kAlice, kAliceKey, 1)), metering_errc::insufficient_credits);
  // A dispute closed lost (reported as a dispute again) keeps the debit, once.
  CHECK_FALSE(
      MUST(s.reverse_payment(reversal_of("evt_d2", "pi_spent", reversal_kind::dispute, "dp_1", 1000))).applied_now);
  // A payment of 500 pays 500 of the debt: still nothing to run with.
  stripe_fund(s, kAlice, "pi_back1", 500);
  CHECK(MUST(s.owed(kAlice)) == 300);
  CHECK(MUST(s.balance(kAlice)) == 0);
  CHECK_ERRC(s.reserve(req(kAlice, kAliceKey, 1)), metering_errc::insufficient_credits);
  stripe_fund(s, kAlice, "pi_back2", 500);
  CHECK(MUST(s.owed(kAlice)) == 0);
  CHECK(MUST(s.balance(kAlice)) == 200);
  (void)MUST(s.reserve(req(kAlice, kAliceKey, 200)));
}

// A refund that lands while a run holds the credits it takes: the run's settle is still charged,
// and what the balance no longer covers is owed, not lost.
void reversal_during_run_is_owed(store& s) {
  stripe_fund(s, kAlice, "pi_fly", 1000);
  const reservation r = MUST(s.reserve(req(kAlice, kAliceKey, 900)));
  (void)MUST(s.reverse_payment(reversal_of("evt_f", "pi_fly", reversal_kind::refund, "ch_f", 1000)));
  CHECK(MUST(s.balance(kAlice)) == 0);
  CHECK(MUST(s.settle(kAlice, r.id, 700)) == 0);
  CHECK(MUST(s.owed(kAlice)) == 700);
  CHECK(MUST(s.spending(kAlice, kAliceKey)).spent == 700);
  CHECK_ERRC(s.reserve(req(kAlice, kAliceKey, 1)), metering_errc::insufficient_credits);
  stripe_fund(s, kAlice, "pi_fly2", 1000);
  CHECK(MUST(s.owed(kAlice)) == 0);
  CHECK(MUST(s.balance(kAlice)) == 300);
}

// A won dispute gives back what its dispute took, once, paying what is owed first; in any order.
void disputes_won_reinstate(store& s) {
  stripe_fund(s, kAlice, "pi_w", 600);
  (void)MUST(s.reverse_payment(reversal_of("evt_a", "pi_w", reversal_kind::dispute, "dp_w", 600)));
  CHECK(MUST(s.balance(kAlice)) == 0);
  const reversal_result won =
      MUST(s.reverse_payment(reversal_of("evt_b", "pi_w", reversal_kind::dispute_won, "dp_w", 600)));
  CHECK(won.applied_now);
  CHECK(won.reversed_cents == 0);
  CHECK(won.balance == 600);
  CHECK_FALSE(
      MUST(s.reverse_payment(reversal_of("evt_c", "pi_w", reversal_kind::dispute_won, "dp_w", 600))).applied_now);
  CHECK_FALSE(MUST(s.reverse_payment(reversal_of("evt_a", "pi_w", reversal_kind::dispute, "dp_w", 600))).applied_now);
  CHECK(MUST(s.balance(kAlice)) == 600);
  const payment rec = MUST(s.get_payment(kAlice, "pi_w"));
  REQUIRE(rec.reversals.size() == 2);
  CHECK(rec.reversals[1].kind == reversal_kind::dispute_won);
  CHECK(rec.reversals[1].amount_cents == 600);

  // The win delivered before its dispute: the dispute, when it comes, takes nothing.
  stripe_fund(s, kBob, "pi_x", 700);
  (void)MUST(s.reverse_payment(reversal_of("evt_x2", "pi_x", reversal_kind::dispute_won, "dp_x", 700)));
  (void)MUST(s.reverse_payment(reversal_of("evt_x1", "pi_x", reversal_kind::dispute, "dp_x", 700)));
  CHECK(MUST(s.balance(kBob)) == 700);
  CHECK(MUST(s.get_payment(kBob, "pi_x")).reversed_cents == 0);

  // A refund reported before the payment is credited: the credit brings the rest only.
  MUST(s.record_payment(intent("pi_late", kBob, 900, "stripe")));
  (void)MUST(s.reverse_payment(reversal_of("evt_l", "pi_late", reversal_kind::refund, "ch_l", 400)));
  CHECK(MUST(s.balance(kBob)) == 700);
  CHECK(MUST(s.credit_payment(kBob, "pi_late")).balance == 1200);
}

void reserve_settle_release(store& s) {
  CHECK_ERRC(s.reserve(req(kAlice, kAliceKey, 1)), metering_errc::insufficient_credits);
  fund(s, kAlice, "pi_a", 10);
  const reservation r = MUST(s.reserve(req(kAlice, kAliceKey, 4, 0, "run-1")));
  CHECK(r.amount == 4);
  CHECK(r.account == kAlice);
  CHECK(MUST(s.balance(kAlice)) == 10);  // held, not debited
  CHECK(MUST(s.available(kAlice)) == 6);
  CHECK(MUST(s.spending(kAlice, kAliceKey)).reserved == 4);
  // Open reservations count: 7 more do not fit.
  CHECK_ERRC(s.reserve(req(kAlice, kAliceKey, 7)), metering_errc::insufficient_credits);
  // Attack: settling above what was reserved — refused, the reservation stays open.
  CHECK_ERRC(s.settle(kAlice, r.id, 5), metering_errc::over_reserved);
  // Attack: another account settles or releases Alice's reservation — as if it did not exist.
  fund(s, kBob, "pi_b", 10);
  CHECK_ERRC(s.settle(kBob, r.id, 1), metering_errc::unknown_reservation);
  CHECK_ERRC(s.release(kBob, r.id), metering_errc::unknown_reservation);
  CHECK(MUST(s.balance(kBob)) == 10);
  // Settling less than reserved debits only that.
  CHECK(MUST(s.settle(kAlice, r.id, 3)) == 7);
  CHECK(MUST(s.balance(kAlice)) == 7);
  CHECK(MUST(s.available(kAlice)) == 7);
  CHECK(MUST(s.spending(kAlice, kAliceKey)).spent == 3);
  CHECK(MUST(s.spending(kAlice, kAliceKey)).reserved == 0);
  // Closed: neither a second settle nor a release.
  CHECK_ERRC(s.settle(kAlice, r.id, 1), metering_errc::unknown_reservation);
  CHECK_ERRC(s.release(kAlice, r.id), metering_errc::unknown_reservation);
  // Release frees without a charge.
  const reservation r2 = MUST(s.reserve(req(kAlice, kAliceKey, 7)));
  CHECK(MUST(s.available(kAlice)) == 0);
  MUST(s.release(kAlice, r2.id));
  CHECK(MUST(s.balance(kAlice)) == 7);
  CHECK(MUST(s.available(kAlice)) == 7);
  CHECK_ERRC(s.settle(kAlice, r2.id, 1), metering_errc::unknown_reservation);
  // A settle of 0 closes without a charge.
  const reservation r3 = MUST(s.reserve(req(kAlice, kAliceKey, 2)));
  CHECK(MUST(s.settle(kAlice, r3.id, 0)) == 7);
  CHECK(MUST(s.available(kAlice)) == 7);
  // The whole balance may be spent, never more.
  const reservation all = MUST(s.reserve(req(kAlice, kAliceKey, 7)));
  CHECK(MUST(s.settle(kAlice, all.id, 7)) == 0);
  CHECK_ERRC(s.reserve(req(kAlice, kAliceKey, 1)), metering_errc::insufficient_credits);
  CHECK_ERRC(s.reserve(req(kAlice, kAliceKey, 0)), metering_errc::invalid_argument);
  CHECK_ERRC(s.settle(kAlice, "rsv_unknown", 1), metering_errc::unknown_reservation);
}

void key_caps(store& s) {
  fund(s, kAlice, "pi_cap", 100);
  // Attack: a key with a cap of 5 tries to spend past it.
  const reservation a = MUST(s.reserve(req(kAlice, kAliceKey, 3, 5)));
  // Its open reservation counts against the cap.
  CHECK_ERRC(s.reserve(req(kAlice, kAliceKey, 3, 5)), metering_errc::cap_exceeded);
  const reservation b = MUST(s.reserve(req(kAlice, kAliceKey, 2, 5)));
  CHECK_ERRC(s.reserve(req(kAlice, kAliceKey, 1, 5)), metering_errc::cap_exceeded);
  MUST(s.settle(kAlice, a.id, 3));
  MUST(s.release(kAlice, b.id));
  CHECK(MUST(s.spending(kAlice, kAliceKey)).spent == 3);
  // Spent credits count too: 3 spent, 2 left under the cap.
  CHECK_ERRC(s.reserve(req(kAlice, kAliceKey, 3, 5)), metering_errc::cap_exceeded);
  const reservation c = MUST(s.reserve(req(kAlice, kAliceKey, 2, 5)));
  MUST(s.settle(kAlice, c.id, 2));
  CHECK_ERRC(s.reserve(req(kAlice, kAliceKey, 1, 5)), metering_errc::cap_exceeded);
  // A raised cap lets it spend again; another key of the account has its own spending; no cap
  // (0) is bounded by the balance only.
  MUST(s.settle(kAlice, MUST(s.reserve(req(kAlice, kAliceKey, 1, 6))).id, 1));
  CHECK(MUST(s.spending(kAlice, kAliceKey)).spent == 6);
  MUST(s.settle(kAlice, MUST(s.reserve(req(kAlice, kAliceKey2, 4, 5))).id, 4));
  CHECK(MUST(s.spending(kAlice, kAliceKey2)).spent == 4);
  CHECK_ERRC(s.reserve(req(kAlice, kAliceKey, 91, 0)), metering_errc::insufficient_credits);
  MUST(s.settle(kAlice, MUST(s.reserve(req(kAlice, kAliceKey, 90, 0))).id, 90));
  CHECK(MUST(s.balance(kAlice)) == 0);
}

void expiry(store& s, test_clock& clock) {
  fund(s, kAlice, "pi_exp", 10);
  reserve_request q = req(kAlice, kAliceKey, 8, 0, "crashed-run");
  q.ttl = std::chrono::seconds(30);
  const reservation r = MUST(s.reserve(q));
  CHECK(r.expires_at == clock.now.load() + 30000);
  CHECK(MUST(s.available(kAlice)) == 2);
  // The server that held it crashed: past the expiry the credits are free again, and the
  // reservation can never be charged.
  clock.now += 30000;
  CHECK(MUST(s.available(kAlice)) == 10);
  CHECK(MUST(s.spending(kAlice, kAliceKey)).reserved == 0);
  CHECK_ERRC(s.settle(kAlice, r.id, 8), metering_errc::unknown_reservation);
  CHECK(MUST(s.balance(kAlice)) == 10);
  const reservation other = MUST(s.reserve(req(kAlice, kAliceKey, 10)));
  MUST(s.release(kAlice, other.id));
  // release_expired deletes what expired and nothing else.
  q.ttl = std::chrono::seconds(1);
  q.amount = 2;
  (void)MUST(s.reserve(q));
  q.ttl = std::chrono::seconds(60);
  q.amount = 8;
  const reservation live = MUST(s.reserve(q));
  clock.now += 1000;
  CHECK(MUST(s.release_expired()) == 1);
  CHECK(MUST(s.release_expired()) == 0);
  CHECK(MUST(s.settle(kAlice, live.id, 8)) == 2);
  CHECK(MUST(s.usage(kAlice, {1, 20})).total == 1);  // the expired runs were never charged
}

void histories(store& s, test_clock& clock) {
  for (int i = 0; i < 3; ++i) {
    fund(s, kAlice, "pi_h" + std::to_string(i), 500 + i);
    clock.now += 1;
  }
  MUST(s.record_payment(intent("pi_open", kAlice, 900, "stripe")));
  fund(s, kBob, "pi_bob", 600);
  for (int i = 0; i < 25; ++i) {
    const reservation r =
        MUST(s.reserve(req(kAlice, i % 2 ? kAliceKey : kAliceKey2, 2, 0, "run-" + std::to_string(i))));
    MUST(s.settle(kAlice, r.id, 1 + i % 2));
    clock.now += 1;
  }
  const page<usage_record> first = MUST(s.usage(kAlice, {1, 20}));
  CHECK(first.total == 25);
  REQUIRE(first.items.size() == 20);
  CHECK(first.items[0].run_id == "run-24");  // newest first
  CHECK(first.items[0].key == kAliceKey2);
  CHECK(first.items[0].amount == 1);
  CHECK(first.items[1].amount == 2);
  CHECK(first.items[0].at > first.items[1].at);
  const page<usage_record> second = MUST(s.usage(kAlice, {2, 20}));
  REQUIRE(second.items.size() == 5);
  CHECK(second.items[4].run_id == "run-0");
  CHECK(MUST(s.usage(kAlice, {3, 20})).items.empty());
  CHECK(MUST(s.usage(kBob, {1, 20})).total == 0);
  CHECK_ERRC(s.usage(kAlice, {0, 20}), metering_errc::invalid_argument);
  CHECK_ERRC(s.usage(kAlice, {1, 101}), metering_errc::invalid_argument);

  const page<payment> pays = MUST(s.payments(kAlice, {1, 2}));
  CHECK(pays.total == 4);
  REQUIRE(pays.items.size() == 2);
  CHECK(pays.items[0].id == "pi_open");
  CHECK_FALSE(pays.items[0].credited);
  CHECK(pays.items[1].id == "pi_h2");
  CHECK(pays.items[1].credited);
  CHECK(pays.items[1].balance_after == 500 + 501 + 502);
  CHECK(MUST(s.payments(kBob, {1, 20})).total == 1);
}

/// Attack: two reservations race for the last credits — exactly one wins, every time.
void race_for_last_credits(store& s) {
  for (int round = 0; round < 20; ++round) {
    const account_hash a = test_hash(0xC0, static_cast<uint8_t>(round));
    fund(s, a, "pi_race" + std::to_string(round), 3);
    std::atomic<int> won{0};
    std::atomic<int> refused{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 2; ++t)
      threads.emplace_back([&] {
        auto r = s.reserve(req(a, kAliceKey, 2));
        if (r)
          ++won;
        else if (r.code() == metering_errc::insufficient_credits)
          ++refused;
      });
    for (auto& t : threads)
      t.join();
    CHECK(won == 1);
    CHECK(refused == 1);
  }
}

/// Threads hammer reserve/settle/release on one account: the final balance is the funding less
/// the settled amounts, never below zero, and the capped key never passes its cap.
void hammer(store& s) {
  constexpr uint64_t kFunding = 600;
  constexpr uint64_t kCap = 150;
  fund(s, kAlice, "pi_hammer", kFunding);
  std::atomic<uint64_t> settled{0};
  std::atomic<uint64_t> capped_settled{0};
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t)
    threads.emplace_back([&, t] {
      std::mt19937 rng(static_cast<unsigned>(t));
      for (int i = 0; i < 60; ++i) {
        const bool capped = rng() % 2 == 0;
        const uint64_t amount = 1 + rng() % 5;
        auto r = s.reserve(req(kAlice, capped ? kAliceKey : kAliceKey2, amount, capped ? kCap : 0,
                               "t" + std::to_string(t) + "-" + std::to_string(i)));
        if (!r) {
          if (r.code() != metering_errc::insufficient_credits && r.code() != metering_errc::cap_exceeded)
            ++failures;
          continue;
        }
        if (rng() % 4 == 0) {
          if (!s.release(kAlice, r->id))
            ++failures;
          continue;
        }
        const uint64_t charge = rng() % (amount + 1);
        if (!s.settle(kAlice, r->id, charge)) {
          ++failures;
          continue;
        }
        settled += charge;
        if (capped)
          capped_settled += charge;
      }
    });
  for (auto& t : threads)
    t.join();
  CHECK(failures == 0);
  const uint64_t balance = MUST(s.balance(kAlice));
  CHECK(settled.load() <= kFunding);
  CHECK(balance == kFunding - settled.load());
  CHECK(MUST(s.available(kAlice)) == balance);  // nothing left open
  CHECK(MUST(s.spending(kAlice, kAliceKey)).spent == capped_settled.load());
  CHECK(capped_settled.load() <= kCap);
  const uint64_t charges = MUST(s.usage(kAlice, {1, 1})).total;
  CHECK(charges <= 6 * 60);
}

}  // namespace

void run_conformance(const store_factory& make) {
  test_clock clock;
  std::unique_ptr<store> s = make(clock);
  REQUIRE(s);
  SUBCASE("payments credit once; a replayed payment id changes nothing") { payments_credit_once(*s); }
  SUBCASE("refunds debit their increase once; redelivered or older totals debit nothing") { refunds_debit_once(*s); }
  SUBCASE("a reversal beyond the balance is owed; the account cannot run until it is paid back") {
    reversal_owed_until_paid(*s);
  }
  SUBCASE("a won dispute gives its amount back once, in any order") { disputes_won_reinstate(*s); }
  SUBCASE("a refund during a run: the run is charged, what the balance lacks is owed") {
    reversal_during_run_is_owed(*s);
  }
  SUBCASE("reserve, settle at most what was reserved, release; another account's reservation") {
    reserve_settle_release(*s);
  }
  SUBCASE("a usage key's spending cap, open reservations included") { key_caps(*s); }
  SUBCASE("expired reservations free their credits and are never charged") { expiry(*s, clock); }
  SUBCASE("usage and payment histories, paged, newest first") { histories(*s, clock); }
  SUBCASE("two reservations race for the last credits") { race_for_last_credits(*s); }
  SUBCASE("threads hammering reserve/settle on one account") { hammer(*s); }
}

}  // namespace enact::metering::test
