// SPDX-License-Identifier: Apache-2.0
// The metering store on SQLite when its disk fills while 64 callers hold and charge credits
// (docs/architecture.md §4 "Group commit"). The disk is "full" through RLIMIT_FSIZE: once the
// write-ahead log may not grow, a batch's commit fails, and every write of that batch must answer
// the failure. Attack on custody: nothing answered as done is lost (a reopened file has it),
// nothing answered as failed is in the file (no debit without its usage row, no hold counted
// twice), no balance goes below zero and no key passes its cap, and the store takes writes again
// once there is room. Its own executable: the limit is the process's.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/resource.h>

#include <atomic>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "conformance.hpp"
#include "metering/sqlite_store.hpp"
#include "must.hpp"
#include "support.hpp"

namespace enact::metering::test {
namespace {

constexpr int kThreads = 64;
constexpr uint64_t kFunds = 1'000;
constexpr uint64_t kHold = 3;
constexpr uint64_t kCharge = 2;
constexpr uint64_t kCap = 600;

const account_hash kErin = test_hash(0xE0);
const key_hash kErinKey = test_hash(0xE0, 1);

/// The largest of the store's files (the database and its write-ahead log).
uintmax_t largest_file(const std::filesystem::path& dir) {
  uintmax_t most = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.is_regular_file())
      most = std::max(most, e.file_size());
  return most;
}

/// Lowers the soft RLIMIT_FSIZE to `bytes` for its lifetime: a write past it fails with EFBIG
/// (SIGXFSZ ignored) as on a full disk.
class file_size_limit {
 public:
  explicit file_size_limit(uintmax_t bytes) {
    ::signal(SIGXFSZ, SIG_IGN);
    REQUIRE(::getrlimit(RLIMIT_FSIZE, &before_) == 0);
    rlimit lower = before_;
    lower.rlim_cur = static_cast<rlim_t>(bytes);
    REQUIRE(::setrlimit(RLIMIT_FSIZE, &lower) == 0);
  }
  ~file_size_limit() { lift(); }
  void lift() {
    if (!lifted_)
      (void)::setrlimit(RLIMIT_FSIZE, &before_);
    lifted_ = true;
  }

 private:
  rlimit before_{};
  bool lifted_ = false;
};

/// A settle's answer without the balance it leaves.
result<void> done_or_failed(const result<uint64_t>& r) {
  if (!r)
    return r.err();
  return {};
}

/// What the callers were answered.
struct answers {
  std::mutex mu;
  std::vector<std::string> open;  // held, and neither settled nor released as far as answered
  uint64_t settled = 0;           // settles answered done
  uint64_t debited = 0;           // their credits
  std::atomic<int> storage{0};    // writes answered with the store's failure
  std::atomic<int> refused{0};    // insufficient_credits or cap_exceeded
  std::atomic<int> unexpected{0};
};

/// The store holds exactly what was answered: the balance less what was answered settled, the
/// holds answered open (`open` of them: none in a store reopened, since reservations live in the
/// process that made them), one usage row per answered settle, the key's spending.
void check_holds_what_was_answered(store& s, const answers& a, size_t open) {
  CHECK(MUST(s.balance(kErin)) == kFunds - a.debited);
  CHECK(MUST(s.available(kErin)) == kFunds - a.debited - kHold * open);
  CHECK(MUST(s.usage(kErin, {1, 1})).total == a.settled);
  const key_spending k = MUST(s.spending(kErin, kErinKey));
  CHECK(k.spent == a.debited);
  CHECK(k.reserved == kHold * open);
  CHECK(k.spent + k.reserved <= kCap);
}

TEST_CASE("metering store on sqlite: a disk filling under 64 callers loses, doubles and half-writes nothing") {
  enact::test::temp_dir dir("enact-metering-full");
  const std::string path = (dir.path() / "metering.sqlite").string();
  answers a;
  {
    auto s = enact::test::must_ok(open_sqlite(path));
    MUST(s->record_payment(intent("pi_full", kErin, kFunds)));
    REQUIRE(MUST(s->credit_payment(kErin, "pi_full")).credited_now);
    {
      // Room for a few commits of the log (each appends at least four pages: the account, the
      // key's spending, the usage row and its index), then none: the 384 settles (releases write
      // nothing) commit in at least 6 batches of at most 64, more than the room holds however they
      // batch, and the first always fits.
      file_size_limit full(largest_file(dir.path()) + (64u << 10));
      race(kThreads, [&](int t) {
        for (int i = 0; i < 12; ++i) {
          auto r = s->reserve(reserve_request{kErin, kErinKey, kHold, kCap, "run-" + std::to_string(t)});
          if (!r) {
            if (r.code() == metering_errc::storage)
              ++a.storage;
            else if (r.code() == metering_errc::insufficient_credits || r.code() == metering_errc::cap_exceeded)
              ++a.refused;
            else
              ++a.unexpected;
            continue;
          }
          // Every other hold is released instead of charged.
          const bool charge = (t + i) % 2 == 0;
          const result<void> done =
              charge ? done_or_failed(s->settle(kErin, r->id, kCharge)) : s->release(kErin, r->id);
          std::lock_guard lock(a.mu);
          if (done) {
            if (charge) {
              ++a.settled;
              a.debited += kCharge;
            }
          } else {
            a.open.push_back(r->id);  // answered failed: the hold must still be there
            if (done.code() == metering_errc::storage)
              ++a.storage;
            else
              ++a.unexpected;
          }
        }
      });
      MESSAGE("answered done: " << a.settled << " settles; failed for the store: " << a.storage.load()
                                << "; refused: " << a.refused.load() << "; holds left open: " << a.open.size());
      CHECK(a.unexpected == 0);
      // The attack must have met both: commits that made it and commits the disk refused.
      CHECK(a.storage > 0);
      CHECK(a.settled > 0);
      // Reads still answer while the disk is full, and see no failed write.
      check_holds_what_was_answered(*s, a, a.open.size());
    }
    // Room again: the store writes, in the same process, without a restart.
    REQUIRE_FALSE(a.open.empty());
    bool wrote = false;
    for (int attempt = 0; attempt < 3 && !wrote; ++attempt) {
      auto r = s->settle(kErin, a.open.back(), kCharge);
      if (r) {
        a.open.pop_back();
        ++a.settled;
        a.debited += kCharge;
        wrote = true;
      } else {
        MESSAGE("a write after the disk has room again: " << r.err().message);
      }
    }
    CHECK(wrote);
    check_holds_what_was_answered(*s, a, a.open.size());
  }
  // Every answered write is on disk; none of the failed ones is.
  // The holds left open went with the store that made them: none is charged after it.
  auto reopened = enact::test::must_ok(open_sqlite(path));
  check_holds_what_was_answered(*reopened, a, 0);
  for (const std::string& id : a.open)
    CHECK_ERRC(reopened->settle(kErin, id, 1), metering_errc::unknown_reservation);
  CHECK(MUST(reopened->available(kErin)) == MUST(reopened->balance(kErin)));
}

}  // namespace
}  // namespace enact::metering::test
