// SPDX-License-Identifier: Apache-2.0
// The metering store's Idempotency-Keys (store.hpp, docs/protocol.md §0 "Idempotency"), on every
// backend: a key answers its first request's answer for 24 hours, refuses another request, is
// per account (attack: another account cannot read the answer kept under the same key), is
// claimed by exactly one of many racing requests, is taken over when its claimant's lease runs
// out (by exactly one of racing takers, never before; attack: the claimant taken over can no
// longer answer or free the key), and is expired by the housekeeping.
#include <doctest/doctest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "conformance.hpp"
#include "metering/housekeeping.hpp"
#include "must.hpp"

namespace enact::metering::test {
namespace {

const account_hash kAlice = test_hash(0xA1);
const account_hash kBob = test_hash(0xB0);

idempotency_request request(const account_hash& a, std::string key, uint8_t body) {
  idempotency_request r;
  r.account = a;
  r.key = std::move(key);
  r.fingerprint = test_hash(0xF0, body);
  return r;
}

void first_answer_kept(store& s, test_clock& clock) {
  const idempotency_request run = request(kAlice, "key-1", 1);
  CHECK(MUST(s.claim_idempotency(run)).state == claim_state::claimed);
  // While it runs, the same request finds it in progress (a retry racing the first attempt).
  CHECK(MUST(s.claim_idempotency(run)).state == claim_state::in_progress);
  MUST(s.keep_answer(run, kept_answer{200, R"({"response":1,"charged_credits":1})"}));
  CHECK_ERRC(s.keep_answer(run, kept_answer{500, "{}"}), metering_errc::unknown_claim);  // kept once
  const idempotency_claim again = MUST(s.claim_idempotency(run));
  CHECK(again.state == claim_state::answered);
  REQUIRE(again.answer);
  CHECK(again.answer->status == 200);
  CHECK(again.answer->body == R"({"response":1,"charged_credits":1})");
  // Another request under the same key is refused, and does not disturb the kept answer.
  CHECK(MUST(s.claim_idempotency(request(kAlice, "key-1", 2))).state == claim_state::mismatch);
  CHECK(MUST(s.claim_idempotency(run)).answer->body == R"({"response":1,"charged_credits":1})");

  // Attack: another account sending the same key (and the same request) reads nothing of
  // Alice's: the key is Bob's own, free.
  idempotency_request bobs = run;
  bobs.account = kBob;
  CHECK(MUST(s.claim_idempotency(bobs)).state == claim_state::claimed);
  MUST(s.keep_answer(bobs, kept_answer{422, R"({"error":"bob"})"}));
  CHECK(MUST(s.claim_idempotency(run)).answer->body == R"({"response":1,"charged_credits":1})");
  CHECK(MUST(s.claim_idempotency(bobs)).answer->status == 422);

  // 24 hours on, the key is free again, for any request of the account.
  clock.now += std::chrono::duration_cast<std::chrono::milliseconds>(kIdempotencyRetention).count() - 1;
  CHECK(MUST(s.claim_idempotency(run)).state == claim_state::answered);
  clock.now += 1;
  const idempotency_request later = request(kAlice, "key-1", 3);
  CHECK(MUST(s.claim_idempotency(later)).state == claim_state::claimed);
  MUST(s.drop_claim(later));
}

void dropped_and_abandoned_claims(store& s, test_clock& clock) {
  // A request that had no effect frees its key: the retry runs.
  idempotency_request q = request(kAlice, "key-drop", 1);
  CHECK(MUST(s.claim_idempotency(q)).state == claim_state::claimed);
  MUST(s.drop_claim(q));
  CHECK_ERRC(s.drop_claim(q), metering_errc::unknown_claim);
  CHECK(MUST(s.claim_idempotency(q)).state == claim_state::claimed);
  // Its server died: until the lease runs out the key is in progress, then the next request takes
  // it over, and the dead claimant's late answer is refused.
  q.lease = std::chrono::seconds(30);
  idempotency_request dead = request(kAlice, "key-dead", 1);
  dead.lease = std::chrono::seconds(30);
  CHECK(MUST(s.claim_idempotency(dead)).state == claim_state::claimed);
  clock.now += 29999;
  CHECK(MUST(s.claim_idempotency(dead)).state == claim_state::in_progress);
  clock.now += 1;
  CHECK(MUST(s.claim_idempotency(dead)).state == claim_state::claimed);
  MUST(s.keep_answer(dead, kept_answer{200, "{}"}));
  CHECK(MUST(s.claim_idempotency(dead)).state == claim_state::answered);

  // With owners: while the lease holds the key is in progress, and says until when; once it ran
  // out, the next request takes it over, and the first claimant (late, not dead) can neither
  // answer nor free the key under its successor.
  idempotency_request first = request(kAlice, "key-owned", 1);
  first.lease = std::chrono::seconds(30);
  first.owner = "first";
  idempotency_request second = first;
  second.owner = "second";
  CHECK(MUST(s.claim_idempotency(first)).state == claim_state::claimed);
  const millis claimed_at = clock.now;
  clock.now += 10000;
  const idempotency_claim busy = MUST(s.claim_idempotency(second));
  CHECK(busy.state == claim_state::in_progress);
  CHECK(busy.lease_until == claimed_at + 30000);
  CHECK_ERRC(s.keep_answer(second, kept_answer{200, "{}"}), metering_errc::unknown_claim);  // not its claim
  CHECK_ERRC(s.drop_claim(second), metering_errc::unknown_claim);
  clock.now = claimed_at + 30000;
  CHECK(MUST(s.claim_idempotency(second)).state == claim_state::claimed);
  CHECK_ERRC(s.keep_answer(first, kept_answer{200, R"({"late":1})"}), metering_errc::unknown_claim);
  CHECK_ERRC(s.drop_claim(first), metering_errc::unknown_claim);
  CHECK(MUST(s.claim_idempotency(first)).state == claim_state::in_progress);  // second's lease holds
  MUST(s.keep_answer(second, kept_answer{200, R"({"second":1})"}));
  CHECK(MUST(s.claim_idempotency(first)).answer->body == R"({"second":1})");
  CHECK_ERRC(s.claim_idempotency([&] {
    idempotency_request q = first;
    q.owner = std::string(65, 'o');
    return q;
  }()),
             metering_errc::invalid_argument);
  // Keys are checked: empty, too long, control characters.
  CHECK_ERRC(s.claim_idempotency(request(kAlice, "", 1)), metering_errc::invalid_argument);
  CHECK_ERRC(s.claim_idempotency(request(kAlice, std::string(256, 'k'), 1)), metering_errc::invalid_argument);
  CHECK_ERRC(s.claim_idempotency(request(kAlice, "a\nb", 1)), metering_errc::invalid_argument);
  CHECK(MUST(s.claim_idempotency(request(kAlice, std::string(255, 'k'), 1))).state == claim_state::claimed);
}

void racing_claims(store& s) {
  // Of requests racing for one free key, exactly one runs, every time.
  for (int round = 0; round < 10; ++round) {
    const idempotency_request q = request(kAlice, "race-" + std::to_string(round), 1);
    std::atomic<int> claimed{0};
    std::atomic<int> other{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
      threads.emplace_back([&] {
        auto c = s.claim_idempotency(q);
        if (c && c->state == claim_state::claimed)
          ++claimed;
        else if (c && c->state == claim_state::in_progress)
          ++other;
      });
    for (auto& t : threads)
      t.join();
    CHECK(claimed == 1);
    CHECK(other == 3);
  }
}

void racing_takeovers(store& s, test_clock& clock) {
  // Of requests racing to take over a claim whose lease ran out, exactly one wins; before the
  // lease ran out none does (that would run the request twice).
  for (int round = 0; round < 10; ++round) {
    idempotency_request dead = request(kAlice, "takeover-" + std::to_string(round), 1);
    dead.lease = std::chrono::seconds(30);
    dead.owner = "dead";
    CHECK(MUST(s.claim_idempotency(dead)).state == claim_state::claimed);
    const auto race = [&](int expected_winners) {
      std::atomic<int> claimed{0};
      std::atomic<int> busy{0};
      std::vector<std::thread> threads;
      for (int t = 0; t < 4; ++t)
        threads.emplace_back([&, t] {
          idempotency_request q = dead;
          q.owner = "taker-" + std::to_string(t);
          auto c = s.claim_idempotency(q);
          if (c && c->state == claim_state::claimed)
            ++claimed;
          else if (c && c->state == claim_state::in_progress)
            ++busy;
        });
      for (auto& t : threads)
        t.join();
      CHECK(claimed == expected_winners);
      CHECK(busy == 4 - expected_winners);
    };
    clock.now += 29999;
    race(0);  // the lease holds: nobody takes over
    clock.now += 1;
    race(1);  // ran out: one taker, the others find it in progress under the winner's lease
    CHECK_ERRC(s.keep_answer(dead, kept_answer{200, "{}"}), metering_errc::unknown_claim);
    clock.now += 30000;  // past the winner's lease as well
  }
}

void charge_kept_with_answer(store& s, test_clock& clock) {
  // A run's charge and its answer are kept in one transaction: both or neither.
  MUST(s.record_payment(intent("pi_keep", kAlice, 100)));
  (void)MUST(s.credit_payment(kAlice, "pi_keep"));
  reserve_request hold;
  hold.account = kAlice;
  hold.key = test_hash(0xC0);
  hold.amount = 10;
  hold.run_id = "req-1";
  const reservation r = MUST(s.reserve(hold));
  idempotency_request q = request(kAlice, "charged", 1);
  q.lease = std::chrono::seconds(30);
  q.owner = "mine";
  CHECK(MUST(s.claim_idempotency(q)).state == claim_state::claimed);
  // Attack: the claim was taken over (this server was thought dead): its charge is not made
  // either, so the taker's run is the one charge.
  clock.now += 30000;
  idempotency_request taker = q;
  taker.owner = "taker";
  CHECK(MUST(s.claim_idempotency(taker)).state == claim_state::claimed);
  clock.now -= 30000;  // the reservation still open on this clock
  CHECK_ERRC(s.settle_and_keep(kAlice, r.id, 4, q, kept_answer{200, "{}"}), metering_errc::unknown_claim);
  CHECK(MUST(s.balance(kAlice)) == 100);
  CHECK(MUST(s.available(kAlice)) == 90);  // still held, not charged
  CHECK(MUST(s.settle_and_keep(kAlice, r.id, 4, taker, kept_answer{200, R"({"charged_credits":4})"})) == 96);
  CHECK(MUST(s.available(kAlice)) == 96);
  CHECK(MUST(s.claim_idempotency(q)).answer->body == R"({"charged_credits":4})");
  // A settle that fails (the reservation gone) keeps no answer: the key stays claimed.
  idempotency_request other = request(kAlice, "uncharged", 1);
  CHECK(MUST(s.claim_idempotency(other)).state == claim_state::claimed);
  CHECK_ERRC(s.settle_and_keep(kAlice, r.id, 4, other, kept_answer{200, "{}"}), metering_errc::unknown_reservation);
  CHECK(MUST(s.claim_idempotency(other)).state == claim_state::in_progress);
  MUST(s.drop_claim(other));
}

void housekeeping_expires(store& s, test_clock& clock) {
  const idempotency_request old_key = request(kAlice, "old", 1);
  (void)MUST(s.claim_idempotency(old_key));
  MUST(s.keep_answer(old_key, kept_answer{200, "{}"}));
  clock.now += std::chrono::duration_cast<std::chrono::milliseconds>(kIdempotencyRetention).count() / 2;
  const idempotency_request young = request(kAlice, "young", 1);
  (void)MUST(s.claim_idempotency(young));
  MUST(s.keep_answer(young, kept_answer{200, "{}"}));
  CHECK(MUST(s.expire_idempotency()) == 0);
  clock.now += std::chrono::duration_cast<std::chrono::milliseconds>(kIdempotencyRetention).count() / 2;
  std::vector<std::string> swept;
  housekeeping::sweep(s, [&](std::string_view what, const result<uint64_t>& n) {
    CHECK(n);
    swept.emplace_back(what);
    CHECK(*n == 1);
  });
  CHECK(swept == std::vector<std::string>{"idempotency_keys"});
  CHECK(MUST(s.claim_idempotency(young)).state == claim_state::answered);
  // The thread sweeps at start.
  clock.now += std::chrono::duration_cast<std::chrono::milliseconds>(kIdempotencyRetention).count();
  std::atomic<int> reports{0};
  {
    housekeeping hk(s, std::chrono::hours(1), [&](std::string_view, const result<uint64_t>&) { ++reports; });
    for (int i = 0; i < 200 && reports == 0; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  CHECK(reports == 1);
  CHECK(MUST(s.expire_idempotency()) == 0);
}

// Attack: a claimant delayed past its lease renews before it runs; the renewal is a
// compare-and-set on its owner and a live lease, so a claim taken over (or whose lease ran out,
// free to be taken) is not renewed and the late claimant does not run beside its successor.
void renewals(store& s, test_clock& clock) {
  idempotency_request first = request(kAlice, "key-renew", 1);
  first.lease = std::chrono::seconds(30);
  first.owner = "first";
  idempotency_request second = first;
  second.owner = "second";
  CHECK(MUST(s.claim_idempotency(first)).state == claim_state::claimed);
  clock.now += 20000;
  MUST(s.renew_claim(first));  // the live owner: leased 30 s from now
  const millis renewed_at = clock.now;
  clock.now += 20000;  // past the first lease, within the renewed one
  const idempotency_claim busy = MUST(s.claim_idempotency(second));
  CHECK(busy.state == claim_state::in_progress);
  CHECK(busy.lease_until == renewed_at + 30000);
  CHECK_ERRC(s.renew_claim(second), metering_errc::unknown_claim);  // not its claim
  clock.now = renewed_at + 30000;  // the lease ended: not renewed, even before a takeover
  CHECK_ERRC(s.renew_claim(first), metering_errc::unknown_claim);
  CHECK(MUST(s.claim_idempotency(second)).state == claim_state::claimed);
  CHECK_ERRC(s.renew_claim(first), metering_errc::unknown_claim);  // taken over
  clock.now += 1000;
  MUST(s.renew_claim(second));
  MUST(s.keep_answer(second, kept_answer{200, R"({"second":1})"}));
  CHECK_ERRC(s.renew_claim(second), metering_errc::unknown_claim);  // answered: nothing to renew
  // Another request's fingerprint under the owner's token renews nothing either.
  idempotency_request third = request(kAlice, "key-renew-2", 1);
  third.owner = "third";
  CHECK(MUST(s.claim_idempotency(third)).state == claim_state::claimed);
  idempotency_request forged = third;
  forged.fingerprint = test_hash(0xF0, 9);
  CHECK_ERRC(s.renew_claim(forged), metering_errc::unknown_claim);
  MUST(s.renew_claim(third));
  MUST(s.drop_claim(third));
  CHECK_ERRC(s.renew_claim(third), metering_errc::unknown_claim);  // dropped
}

// Attack: the 24-hour retention frees a key only when it is answered or its lease ended; a claim
// taken over late in the retention (its first server died) and still leased stays its claimant's,
// for claims and the housekeeping alike.
void retention_spares_live_claims(store& s, test_clock& clock) {
  const millis day = std::chrono::duration_cast<std::chrono::milliseconds>(kIdempotencyRetention).count();
  idempotency_request dead = request(kAlice, "retried-all-day", 1);
  dead.lease = std::chrono::seconds(46);
  dead.owner = "dead";
  CHECK(MUST(s.claim_idempotency(dead)).state == claim_state::claimed);
  clock.now += day - 10000;
  idempotency_request live = dead;
  live.owner = "live";
  CHECK(MUST(s.claim_idempotency(live)).state == claim_state::claimed);  // taken over, leased 46 s
  clock.now += 10000;  // the key's first claim is a day old; live's lease holds 36 s more
  idempotency_request other = dead;
  other.owner = "other";
  const idempotency_claim c = MUST(s.claim_idempotency(other));
  CHECK(c.state == claim_state::in_progress);
  CHECK(c.lease_until == clock.now + 36000);
  CHECK(MUST(s.claim_idempotency(request(kAlice, "retried-all-day", 2))).state == claim_state::mismatch);
  CHECK(MUST(s.expire_idempotency()) == 0);
  MUST(s.renew_claim(live));
  MUST(s.keep_answer(live, kept_answer{200, R"({"live":1})"}));
  // Answered and a day old: free again, and swept.
  CHECK(MUST(s.claim_idempotency(request(kAlice, "retried-all-day", 3))).state == claim_state::claimed);
  // A day-old claim whose lease ended unanswered is free again too, and swept.
  idempotency_request lapsed = request(kAlice, "lapsed", 1);
  lapsed.lease = std::chrono::seconds(30);
  lapsed.owner = "lapsed";
  CHECK(MUST(s.claim_idempotency(lapsed)).state == claim_state::claimed);
  clock.now += day;
  CHECK(MUST(s.expire_idempotency()) == 2);
  CHECK(MUST(s.claim_idempotency(lapsed)).state == claim_state::claimed);
}

}  // namespace

void run_idempotency_conformance(const store_factory& make) {
  test_clock clock;
  std::unique_ptr<store> s = make(clock);
  REQUIRE(s);
  SUBCASE("a key answers its first answer, refuses another request, is per account, expires") {
    first_answer_kept(*s, clock);
  }
  SUBCASE("a dropped claim frees the key; a dead claimant's key is taken over") {
    dropped_and_abandoned_claims(*s, clock);
  }
  SUBCASE("racing requests with one key: exactly one claims it") { racing_claims(*s); }
  SUBCASE("racing takeovers of a dead claim: none before its lease ran out, exactly one after") {
    racing_takeovers(*s, clock);
  }
  SUBCASE("a run's charge and its answer are kept together or not at all") { charge_kept_with_answer(*s, clock); }
  SUBCASE("housekeeping deletes keys past the retention") { housekeeping_expires(*s, clock); }
  SUBCASE("a claim is renewed by its live owner only") { renewals(*s, clock); }
  SUBCASE("the retention frees answered or lapsed keys, never a live claim") {
    retention_spares_live_claims(*s, clock);
  }
}

}  // namespace enact::metering::test
