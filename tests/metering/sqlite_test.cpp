// SPDX-License-Identifier: Apache-2.0
// The metering store on SQLite: the conformance suite on a file in a fresh temporary directory,
// and what belongs to this backend alone (a reopened file keeps everything).
#include <doctest/doctest.h>

#include <fstream>

#include "conformance.hpp"
#include "metering/sqlite_store.hpp"
#include "must.hpp"
#include "support.hpp"

namespace enact::metering::test {
namespace {

TEST_CASE("metering store conformance: sqlite") {
  enact::test::temp_dir dir("enact-metering");
  int n = 0;
  run_conformance([&](test_clock& clock) {
    const std::string path = (dir.path() / ("metering-" + std::to_string(++n) + ".sqlite")).string();
    return enact::test::must_ok(open_sqlite(path, {.now = clock.fn()}));
  });
}

TEST_CASE("metering store idempotency keys: sqlite") {
  enact::test::temp_dir dir("enact-metering");
  int n = 0;
  run_idempotency_conformance([&](test_clock& clock) {
    const std::string path = (dir.path() / ("idem-" + std::to_string(++n) + ".sqlite")).string();
    return enact::test::must_ok(open_sqlite(path, {.now = clock.fn()}));
  });
}

TEST_CASE("metering store concurrent writes in batches: sqlite") {
  enact::test::temp_dir dir("enact-metering");
  int n = 0;
  run_group_commit_conformance([&](test_clock& clock) {
    const std::string path = (dir.path() / ("batch-" + std::to_string(++n) + ".sqlite")).string();
    return enact::test::must_ok(open_sqlite(path, {.now = clock.fn()}));
  });
}

TEST_CASE("metering store on sqlite: a reopened file keeps balances, payments and open reservations") {
  enact::test::temp_dir dir("enact-metering");
  const std::string path = (dir.path() / "metering.sqlite").string();
  const hash256 account{1};
  std::string open_id;
  {
    auto s = enact::test::must_ok(open_sqlite(path));
    MUST(s->record_payment(intent("pi_keep", account, 900)));
    (void)MUST(s->credit_payment(account, "pi_keep"));
    open_id = MUST(s->reserve(reserve_request{account, account, 100, 0, "run", std::chrono::minutes(10)})).id;
  }
  auto s = enact::test::must_ok(open_sqlite(path));
  CHECK(MUST(s->balance(account)) == 900);
  CHECK(MUST(s->available(account)) == 800);
  CHECK_FALSE(MUST(s->credit_payment(account, "pi_keep")).credited_now);
  CHECK(MUST(s->settle(account, open_id, 100)) == 800);

  // Not a database: storage, with the path in the message.
  const std::string junk = (dir.path() / "junk.sqlite").string();
  { std::ofstream(junk) << "not a database at all, just text that is long enough to be a header........."; }
  CHECK_ERRC(open_sqlite(junk), metering_errc::storage);
}

}  // namespace
}  // namespace enact::metering::test
