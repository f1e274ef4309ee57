// SPDX-License-Identifier: Apache-2.0
// The metering store's single-use values (store.hpp `use_once`; a wallet-proof envelope's nonce,
// docs/protocol.md §2), on every backend: a first use is recorded and a replay refused until the
// use expires, after which the id is recorded again; racing uses of one id record it exactly once
// (attack: a replayed envelope sent many times at once passes once); the housekeeping deletes the
// expired uses only, in bounded batches.
#include <doctest/doctest.h>

#include <atomic>
#include <string>
#include <vector>

#include "conformance.hpp"
#include "metering/housekeeping.hpp"
#include "must.hpp"

namespace enact::metering::test {
namespace {

constexpr millis kWindow = 660'000;  // an envelope's ±300 s and a margin

/// Distinct ids for i below 2^16.
hash256 nonce_id(uint8_t kind, int i) {
  hash256 h = test_hash(kind);
  h[2] = static_cast<uint8_t>(i & 0xff);
  h[3] = static_cast<uint8_t>((i >> 8) & 0xff);
  return h;
}

void first_use_then_replays(store& s, test_clock& clock) {
  const hash256 a = test_hash(0x40, 1);
  const hash256 b = test_hash(0x40, 2);
  const millis until = clock.now + kWindow;
  CHECK(MUST(s.use_once(a, until)));
  CHECK_FALSE(MUST(s.use_once(a, until)));            // the replay
  CHECK_FALSE(MUST(s.use_once(a, until + kWindow)));  // a later expiry changes nothing
  CHECK(MUST(s.use_once(b, until)));                  // another id is its own
  CHECK_FALSE(MUST(s.use_once(b, until)));
  // Refused until it expires (the replay's expiry is not taken: the first one holds).
  clock.now = until - 1;
  CHECK_FALSE(MUST(s.use_once(a, clock.now + kWindow)));
  // Expired: recorded again, kept until the new expiry.
  clock.now = until;
  const millis again = clock.now + kWindow;
  CHECK(MUST(s.use_once(a, again)));
  CHECK_FALSE(MUST(s.use_once(a, again)));
  clock.now = again - 1;
  CHECK_FALSE(MUST(s.use_once(a, clock.now + kWindow)));
  CHECK(MUST(s.use_once(b, clock.now + kWindow)));  // b expired meanwhile
}

void expiry_not_after_now_refused(store& s, test_clock& clock) {
  const hash256 a = test_hash(0x41, 1);
  CHECK_ERRC(s.use_once(a, clock.now), metering_errc::invalid_argument);
  CHECK_ERRC(s.use_once(a, clock.now - 1), metering_errc::invalid_argument);
  // Nothing was recorded by the refusals.
  CHECK(MUST(s.use_once(a, clock.now + 1)));
  CHECK_FALSE(MUST(s.use_once(a, clock.now + 1)));
}

void racing_uses(store& s, test_clock& clock) {
  // Attack: one envelope sent on many connections at once; each round a fresh nonce.
  for (uint8_t round = 0; round < 20; ++round) {
    const hash256 id = test_hash(0x42, round);
    std::atomic<int> recorded{0}, refused{0};
    race(8, [&](int) {
      // Counted outside doctest: its assertions are not for other threads.
      const auto r = s.use_once(id, clock.now + kWindow);
      if (r)
        ++(*r ? recorded : refused);
    });
    CHECK(recorded == 1);
    CHECK(refused == 7);
  }
  // Racing uses of an expired id: it is taken over exactly once too.
  const hash256 id = test_hash(0x42, 0);
  clock.now += kWindow;
  std::atomic<int> recorded{0}, refused{0};
  race(8, [&](int) {
    const auto r = s.use_once(id, clock.now + kWindow);
    if (r)
      ++(*r ? recorded : refused);
  });
  CHECK(recorded == 1);
  CHECK(refused == 7);
}

void housekeeping_deletes_expired_only(store& s, test_clock& clock) {
  const millis start = clock.now;
  // More expired uses than one batch deletes, recorded from several threads so that they share
  // commits; and uses that have not expired, which must stay.
  const int expiring = static_cast<int>(kNonceExpiryBatch) + 5;
  std::atomic<int> recorded{0};
  race(8, [&](int t) {
    for (int i = t; i < expiring; i += 8) {
      const auto r = s.use_once(nonce_id(0x43, i), start + 1000);
      if (r && *r)
        ++recorded;
    }
  });
  REQUIRE(recorded == expiring);
  const hash256 live = test_hash(0x44, 1);
  const hash256 edge = test_hash(0x44, 2);
  REQUIRE(MUST(s.use_once(live, start + kWindow)));
  REQUIRE(MUST(s.use_once(edge, start + 1001)));
  CHECK(MUST(s.expire_nonces()) == 0);  // none expired yet
  clock.now = start + 1000;
  std::vector<std::pair<std::string, uint64_t>> swept;
  housekeeping::sweep(s, [&](std::string_view what, const result<uint64_t>& n) {
    REQUIRE(n);
    swept.emplace_back(what, *n);
  });
  CHECK(swept == std::vector<std::pair<std::string, uint64_t>>{{"nonces", static_cast<uint64_t>(expiring)}});
  CHECK(MUST(s.expire_nonces()) == 0);
  // The uses that had not expired were kept: still replays.
  CHECK_FALSE(MUST(s.use_once(live, clock.now + kWindow)));
  CHECK_FALSE(MUST(s.use_once(edge, clock.now + kWindow)));
  clock.now = start + 1001;
  CHECK(MUST(s.expire_nonces()) == 1);  // edge
  CHECK_FALSE(MUST(s.use_once(live, clock.now + kWindow)));
}

}  // namespace

void run_nonce_conformance(const store_factory& make) {
  test_clock clock;
  std::unique_ptr<store> s = make(clock);
  REQUIRE(s);
  SUBCASE("a first use is recorded, a replay refused until the use expires") { first_use_then_replays(*s, clock); }
  SUBCASE("an expiry not after now is refused and records nothing") { expiry_not_after_now_refused(*s, clock); }
  SUBCASE("racing uses of one id: exactly one records it") { racing_uses(*s, clock); }
  SUBCASE("housekeeping deletes the expired uses only, in batches") { housekeeping_deletes_expired_only(*s, clock); }
}

}  // namespace enact::metering::test
