// SPDX-License-Identifier: Apache-2.0
// The metering store on SQLite: the conformance suite on a file in a fresh temporary directory,
// and what belongs to this backend alone (a reopened file keeps everything).
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "conformance.hpp"
#include "enact/codec/hex.hpp"
#include "metering/session.hpp"
#include "metering/sqlite_store.hpp"
#include "must.hpp"
#include "storage/sqlite.hpp"
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

TEST_CASE("metering store single-use values: sqlite") {
  enact::test::temp_dir dir("enact-metering");
  int n = 0;
  run_nonce_conformance([&](test_clock& clock) {
    const std::string path = (dir.path() / ("nonce-" + std::to_string(++n) + ".sqlite")).string();
    return enact::test::must_ok(open_sqlite(path, {.now = clock.fn()}));
  });
}

TEST_CASE("metering store on sqlite: a file of schema version 3 moves to 4, keeping its data; uses survive a restart") {
  // Version 3 is the schema before the single-use values: its file, made by the first three steps,
  // with a credited account and a kept Idempotency-Key answer in it.
  enact::test::temp_dir dir("enact-metering");
  const std::string path = (dir.path() / "metering.sqlite").string();
  const hash256 account{3};
  const std::vector<std::string> steps = sql::schema("INTEGER PRIMARY KEY AUTOINCREMENT");
  REQUIRE(steps.size() >= 4);
  {
    storage::connection c(path);
    const std::vector<const char*> v3 = {steps[0].c_str(), steps[1].c_str(), steps[2].c_str()};
    storage::migrate(c, v3);
    REQUIRE(c.user_version() == 3);
    const std::string a = "'" + codec::hex::encode(account) + "'";
    c.exec("INSERT INTO metering_accounts (account, balance) VALUES (" + a + ", 700)");
    c.exec(
        "INSERT INTO metering_payments (id, account, amount, provider, created_at, credited_at, balance_after) "
        "VALUES ('pi_v3', " +
        a + ", 700, 'dev', 1, 2, 700)");
    const std::string fingerprint = "'" + codec::hex::encode(hash256{9}) + "'";
    c.exec(
        "INSERT INTO metering_idempotency (account, idem_key, fingerprint, created_at, lease_until, status, body, "
        "owner) VALUES (" +
        a + ", 'k', " + fingerprint + ", " + std::to_string(system_now()) + ", 0, 200, '{}', 'o')");
    CHECK_THROWS(c.exec("SELECT 1 FROM metering_nonces"));
  }
  const hash256 nonce{4};
  const millis until = system_now() + 600'000;
  {
    auto s = enact::test::must_ok(open_sqlite(path));
    CHECK(MUST(s->balance(account)) == 700);
    CHECK(MUST(s->get_payment(account, "pi_v3")).credited);
    idempotency_request q;
    q.account = account;
    q.key = "k";
    q.fingerprint = hash256{9};
    q.owner = "o";
    const idempotency_claim kept = MUST(s->claim_idempotency(q));
    CHECK(kept.state == claim_state::answered);
    CHECK(MUST(s->use_once(nonce, until)));
    CHECK_FALSE(MUST(s->use_once(nonce, until)));
  }
  {
    storage::connection c(path);
    CHECK(c.user_version() == static_cast<int>(steps.size()));
  }
  // A restart remembers the use.
  auto s = enact::test::must_ok(open_sqlite(path));
  CHECK_FALSE(MUST(s->use_once(nonce, until)));
  CHECK(MUST(s->balance(account)) == 700);
}

TEST_CASE("metering store on sqlite: a file of schema version 4 moves to 5; its credited payments can be reversed") {
  // Version 4 is the schema before reversals: a credited Stripe payment in it is refunded after
  // the upgrade, and the debit passes the balance, so what is owed is kept in the new column.
  enact::test::temp_dir dir("enact-metering");
  const std::string path = (dir.path() / "metering.sqlite").string();
  const hash256 account{5};
  const std::vector<std::string> steps = sql::schema("INTEGER PRIMARY KEY AUTOINCREMENT");
  REQUIRE(steps.size() == 5);
  {
    storage::connection c(path);
    const std::vector<const char*> v4 = {steps[0].c_str(), steps[1].c_str(), steps[2].c_str(), steps[3].c_str()};
    storage::migrate(c, v4);
    REQUIRE(c.user_version() == 4);
    const std::string a = "'" + codec::hex::encode(account) + "'";
    c.exec("INSERT INTO metering_accounts (account, balance) VALUES (" + a + ", 300)");
    c.exec(
        "INSERT INTO metering_payments (id, account, amount, provider, created_at, credited_at, balance_after) "
        "VALUES ('pi_v4', " +
        a + ", 700, 'stripe', 1, 2, 700)");
    CHECK_THROWS(c.exec("SELECT 1 FROM metering_reversals"));
  }
  auto s = enact::test::must_ok(open_sqlite(path));
  CHECK(MUST(s->balance(account)) == 300);
  const reversal_result r =
      MUST(s->reverse_payment(reversal_request{"evt_v4", "pi_v4", "stripe", reversal_kind::refund, "ch_v4", 700}));
  CHECK(r.balance == 0);
  CHECK(r.owed == 400);
  CHECK(MUST(s->get_payment(account, "pi_v4")).reversed_cents == 700);
  storage::connection c(path);
  CHECK(c.user_version() == 5);
}

TEST_CASE(
    "metering store on sqlite: a reopened file keeps balances and payments; open reservations went with the store "
    "that made them") {
  enact::test::temp_dir dir("enact-metering");
  const std::string path = (dir.path() / "metering.sqlite").string();
  const hash256 account{1};
  std::string open_id;
  {
    auto s = enact::test::must_ok(open_sqlite(path));
    MUST(s->record_payment(intent("pi_keep", account, 900)));
    (void)MUST(s->credit_payment(account, "pi_keep"));
    open_id = MUST(s->reserve(reserve_request{account, account, 100, 0, "run", std::chrono::minutes(10)})).id;
    CHECK(MUST(s->available(account)) == 800);
  }
  // Its run went with its process: the credits are free again and the hold is never charged.
  auto s = enact::test::must_ok(open_sqlite(path));
  CHECK(MUST(s->balance(account)) == 900);
  CHECK(MUST(s->available(account)) == 900);
  CHECK(MUST(s->spending(account, account)).reserved == 0);
  CHECK_FALSE(MUST(s->credit_payment(account, "pi_keep")).credited_now);
  CHECK_ERRC(s->settle(account, open_id, 100), metering_errc::unknown_reservation);
  CHECK(MUST(s->balance(account)) == 900);

  // Not a database: storage, with the path in the message.
  const std::string junk = (dir.path() / "junk.sqlite").string();
  { std::ofstream(junk) << "not a database at all, just text that is long enough to be a header........."; }
  CHECK_ERRC(open_sqlite(junk), metering_errc::storage);
}

TEST_CASE("attack: a second store on the same sqlite file would not see the first's holds, so it cannot open") {
  // Open reservations live in the store's process. Two stores on one file (two servers given one
  // data directory, or one server started twice) would each hold the whole balance for a run.
  enact::test::temp_dir dir("enact-metering");
  const std::string path = (dir.path() / "metering.sqlite").string();
  const hash256 account{2};
  auto first = enact::test::must_ok(open_sqlite(path));
  MUST(first->record_payment(intent("pi_once", account, 100)));
  (void)MUST(first->credit_payment(account, "pi_once"));
  const reservation held = MUST(first->reserve(reserve_request{account, account, 100, 0, "run-1"}));

  auto second = open_sqlite(path);
  if (second) {
    // The attack: the same 100 credits held again beside the first hold, and both charged.
    auto again = (*second)->reserve(reserve_request{account, account, 100, 0, "run-2"});
    CHECK_FALSE(again.has_value());
  } else {
    CHECK(second.code() == metering_errc::storage);
    CHECK(second.err().message.find("open in another metering store") != std::string::npos);
  }
  // Another name of the same file: a symbolic link (to the file, or to its directory), a path
  // through "..". Every one is the same file, and is refused while the first store holds it.
  const std::filesystem::path link = dir.path() / "alias.sqlite";
  std::filesystem::create_symlink(path, link);
  const std::filesystem::path dir_link = dir.path().parent_path() / (dir.path().filename().string() + "-alias");
  std::filesystem::create_directory_symlink(dir.path(), dir_link);
  const std::string dotted = (dir.path() / ".." / dir.path().filename() / "metering.sqlite").string();
  for (const std::string& alias : {link.string(), (dir_link / "metering.sqlite").string(), dotted}) {
    INFO("alias " << alias);
    auto other = open_sqlite(alias);
    if (other) {
      auto again = (*other)->reserve(reserve_request{account, account, 100, 0, "run-3"});
      CHECK_FALSE(again.has_value());
    } else {
      CHECK(other.err().message.find("open in another metering store") != std::string::npos);
    }
  }
  std::filesystem::remove(dir_link);
  // A hard link would be a second name with a lock file of its own: refused.
  const std::string hard = (dir.path() / "hard.sqlite").string();
  std::filesystem::create_hard_link(path, hard);
  auto linked = open_sqlite(hard);
  REQUIRE_FALSE(linked.has_value());
  CHECK(linked.err().message.find("other hard links") != std::string::npos);
  std::filesystem::remove(hard);
  CHECK(MUST(first->settle(account, held.id, 100)) == 0);

  // Closed, the file opens again, by any of its names.
  first.reset();
  auto third = enact::test::must_ok(open_sqlite(link.string()));
  CHECK(MUST(third->balance(account)) == 0);
}

}  // namespace
}  // namespace enact::metering::test
