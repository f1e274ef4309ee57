// SPDX-License-Identifier: Apache-2.0
// The SQLite store's reservations in the process (metering/process_holds.hpp): what the store's
// conformance suite cannot time, a hold whose settle is being committed. It keeps its credits and
// cannot expire until the charge is committed or failed, so no reservation takes those credits
// while they are being debited, and a charge that failed leaves the hold open as it was.
#include <doctest/doctest.h>

#include <chrono>
#include <thread>

#include "metering/process_holds.hpp"
#include "must.hpp"

namespace enact::metering::test {
namespace {

const hash256 kAccount{7};
const hash256 kKey{8};

struct fixture {
  process_holds book;
  millis now = 1'000'000;
  committed_funds funds{100, 0};
  clock_fn clock = [this] {
    return now;
  };

  /// What the holds hold now (of kKey too when `key`).
  committed_funds held(const hash256* key) const {
    return book
        .funds(
            kAccount, key, [] { return committed_funds{}; }, now)
        .held;
  }

  result<reservation> reserve(uint64_t amount, uint64_t cap = 0) {
    return book.reserve(
        reserve_request{kAccount, kKey, amount, cap, "run", std::chrono::seconds(30)}, [this] { return funds; }, clock);
  }
};

TEST_CASE("process holds: a hold being settled keeps its credits past its expiry until its charge ends") {
  fixture f;
  const reservation r = MUST(f.reserve(60, 100));
  MUST(f.book.settling(kAccount, r.id, 60, f.now));
  // A second settle of the same hold, while the first is committed: unknown.
  CHECK_ERRC(f.book.settling(kAccount, r.id, 60, f.now), metering_errc::unknown_reservation);
  CHECK_ERRC(f.book.release(kAccount, r.id), metering_errc::unknown_reservation);
  // Its expiry passes while the charge waits for its commit: still held, never forgotten.
  f.now += 60'000;
  CHECK_ERRC(f.reserve(41), metering_errc::insufficient_credits);
  f.funds.balance = 1000;
  CHECK_ERRC(f.reserve(41, 100), metering_errc::cap_exceeded);
  f.funds.balance = 100;
  CHECK(f.book.release_expired(f.now) == 0);
  CHECK(f.held(&kKey).spent == 60);
  // The charge failed: open again, as before, and now expired like any other.
  f.book.unsettled(kAccount, r.id);
  CHECK(f.held(nullptr).balance == 0);
  CHECK(f.book.release_expired(f.now) == 1);
  CHECK_ERRC(f.book.settling(kAccount, r.id, 60, f.now), metering_errc::unknown_reservation);
}

TEST_CASE("process holds: a settled hold is closed; holds are the account's own") {
  fixture f;
  const reservation r = MUST(f.reserve(30));
  CHECK_ERRC(f.book.settling(hash256{9}, r.id, 30, f.now), metering_errc::unknown_reservation);
  CHECK_ERRC(f.book.release(hash256{9}, r.id), metering_errc::unknown_reservation);
  CHECK_ERRC(f.book.settling(kAccount, r.id, 31, f.now), metering_errc::over_reserved);
  MUST(f.book.settling(kAccount, r.id, 30, f.now));
  // The committed charge is in the funds read next; the hold goes.
  f.funds.balance = 70;
  f.book.settled(kAccount, r.id);
  CHECK(f.held(nullptr).balance == 0);
  CHECK_ERRC(f.book.settling(kAccount, r.id, 30, f.now), metering_errc::unknown_reservation);
  CHECK(MUST(f.reserve(70)).amount == 70);
  CHECK_ERRC(f.reserve(1), metering_errc::insufficient_credits);
}

TEST_CASE("process holds: funds and holds are read as one state while a settle closes its hold") {
  // A settle commits its charge, then closes its hold. A read of the committed funds and the
  // holds must see both before (the charge not in the balance, the hold counted) or both after,
  // never the old balance with the hold already gone: that would show credits that are not there.
  fixture f;
  const reservation r = MUST(f.reserve(50));
  MUST(f.book.settling(kAccount, r.id, 50, f.now));
  std::thread closer;
  const auto seen = f.book.funds(
      kAccount, nullptr,
      [&] {
        // The committed balance as read: before the charge. The settle closes its hold now.
        closer = std::thread([&] { f.book.settled(kAccount, r.id); });
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        return committed_funds{100, 0};
      },
      f.now);
  closer.join();
  CHECK(seen.committed.balance - seen.held.balance == 50);
  CHECK(f.held(nullptr).balance == 0);
}

}  // namespace
}  // namespace enact::metering::test
