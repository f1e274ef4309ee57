// SPDX-License-Identifier: Apache-2.0
// The embedded (SQLite) ledger: the conformance suite on a database in a fresh temporary
// directory, and the behaviour that belongs to this backend alone (schema versions, the file).
#include <doctest/doctest.h>

#include <sqlite3.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "conformance.hpp"
#include "enact/codec/hex.hpp"
#include "enact/crypto/keccak.hpp"
#include "ledger/embedded_ledger.hpp"
#include "must.hpp"
#include "support.hpp"

namespace enact::ledger::test {
namespace {

using enact::test::temp_dir;

class embedded_backend final : public backend {
 public:
  explicit embedded_backend(std::vector<address> payers) : payers_(std::move(payers)) {}
  std::unique_ptr<permission_ledger> open() override {
    return enact::test::must_ok(embedded_ledger::open(db_path(), payers_));
  }
  [[nodiscard]] std::string db_path() const { return (dir_.path() / "ledger.sqlite").string(); }

 private:
  temp_dir dir_{"enact-ledger"};
  std::vector<address> payers_;
};

std::unique_ptr<backend> make_embedded(const std::vector<address>& payers) {
  return std::make_unique<embedded_backend>(payers);
}

/// Runs one SQL statement on the file directly (what another tool or an older build would do).
void sql(const std::string& path, const std::string& statement) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  const int rc = sqlite3_exec(db, statement.c_str(), nullptr, nullptr, nullptr);
  const std::string msg = sqlite3_errmsg(db);
  sqlite3_close(db);
  REQUIRE_MESSAGE(rc == SQLITE_OK, msg);
}

int64_t sql_int(const std::string& path, const std::string& query) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  sqlite3_stmt* s = nullptr;
  REQUIRE(sqlite3_prepare_v2(db, query.c_str(), -1, &s, nullptr) == SQLITE_OK);
  REQUIRE(sqlite3_step(s) == SQLITE_ROW);
  const int64_t v = sqlite3_column_int64(s, 0);
  sqlite3_finalize(s);
  sqlite3_close(db);
  return v;
}

std::string sql_text(const std::string& path, const std::string& query) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  sqlite3_stmt* s = nullptr;
  REQUIRE(sqlite3_prepare_v2(db, query.c_str(), -1, &s, nullptr) == SQLITE_OK);
  REQUIRE(sqlite3_step(s) == SQLITE_ROW);
  std::string v = reinterpret_cast<const char*>(sqlite3_column_text(s, 0));
  sqlite3_finalize(s);
  sqlite3_close(db);
  return v;
}

/// A wallet's own account, as a wallet may create it (docs/protocol.md §3): unmanaged, canonical hash.
account sample_account() {
  account a;
  a.admin[0] = 0x10;
  a.hash = crypto::keccak256(bytes_view(a.admin));
  a.managed = false;
  a.name = "sample";
  return a;
}

}  // namespace

TEST_CASE("ledger conformance: embedded") { run_conformance(make_embedded); }

TEST_CASE("embedded ledger: schema version, WAL journal, no credits written") {
  embedded_backend be({});
  {
    auto l = be.open();
    REQUIRE(l->new_account(write_context{sample_account().admin}, sample_account()));
  }
  CHECK(sql_int(be.db_path(), "PRAGMA user_version") == embedded_ledger::kSchemaVersion);
  CHECK(sql_text(be.db_path(), "PRAGMA journal_mode") == "wal");
  CHECK(sql_int(be.db_path(), "SELECT COUNT(*) FROM events") == 1);
  // Credits are the metering store's: a write leaves the retired columns at their defaults.
  CHECK(sql_int(be.db_path(), "SELECT balance FROM accounts") == 0);
  CHECK(sql_int(be.db_path(), "SELECT charged_credits FROM events") == 0);
  CHECK(sql_int(be.db_path(), "SELECT COUNT(*) FROM payments") == 0);
  // Reopening a current database applies nothing and keeps the data.
  auto l = be.open();
  CHECK(l->get_account(sample_account().hash).has_value());
}

TEST_CASE("embedded ledger: a version 1 database is migrated, its group counts filled in") {
  // Version 2 keeps each account's group count (list_groups' total) in the accounts table. A
  // version 1 file — the column dropped, user_version set back — gets it counted on open.
  embedded_backend be({});
  const account a = sample_account();
  const write_context w{a.admin};
  {
    auto l = be.open();
    REQUIRE(l->new_account(w, a));
    for (const char* name : {"one", "two", "three"}) {
      group g;
      g.name = name;
      REQUIRE(l->add_group(w, a.hash, g));
    }
    REQUIRE(l->remove_group(w, a.hash, 2));
    CHECK(l->list_groups(a.hash, {1, 20}).value().total == 2);
  }
  sql(be.db_path(), "ALTER TABLE accounts DROP COLUMN group_count");
  sql(be.db_path(), "PRAGMA user_version = 1");
  auto l = be.open();
  CHECK(sql_int(be.db_path(), "PRAGMA user_version") == embedded_ledger::kSchemaVersion);
  const auto listed = l->list_groups(a.hash, {1, 20}).value();
  CHECK(listed.total == 2);
  CHECK(listed.items.size() == 2);
  // And kept from there on.
  group g;
  g.name = "four";
  REQUIRE(l->add_group(w, a.hash, g));
  CHECK(l->list_groups(a.hash, {1, 20}).value().total == 3);
  REQUIRE(l->remove_group(w, a.hash, 1));
  CHECK(l->list_groups(a.hash, {1, 1}).value().total == 2);
}

TEST_CASE("embedded ledger: a file of a version that kept credits opens, lists them, skips their events") {
  // Before the metering store the ledger kept balances (accounts.balance), payments and their
  // events (PaymentCredited, CreditsDebited) in this file; the rows stay in an old data directory.
  embedded_backend be({});
  const account a = sample_account();
  const write_context w{a.admin};
  {
    auto l = be.open();
    REQUIRE(l->new_account(w, a));
  }
  const std::string h = "x'" + codec::hex::encode(a.hash) + "'";
  const std::string data = "'{\"accountHash\":\"" + codec::hex::encode_prefixed(a.hash) + "\"}'";
  sql(be.db_path(),
      "INSERT INTO payments (account_id, intent_id, amount_cents, provider, credited, created_at) "
      "VALUES (1, 'pi_old', 900, 'dev', 1, 1)");
  sql(be.db_path(), "UPDATE accounts SET balance = 870");
  sql(be.db_path(), "INSERT INTO events (name, account, sender, data, created_at) VALUES ('PaymentCredited', " + h +
                        ", zeroblob(20), " + data + ", 1)");
  sql(be.db_path(),
      "INSERT INTO events (name, account, sender, data, charged_credits, created_at) VALUES "
      "('CreditsDebited', " +
          h + ", zeroblob(20), " + data + ", 0, 1)");
  auto l = be.open();
  auto* embedded = dynamic_cast<embedded_ledger*>(l.get());
  REQUIRE(embedded != nullptr);
  const auto balances = embedded->balances().value();
  REQUIRE(balances.size() == 1);
  CHECK(balances[0] == std::pair{a.hash, uint64_t{870}});
  // The event stream: the account's creation, then the next write, numbered after the old events.
  group g;
  g.name = "after";
  REQUIRE(l->add_group(w, a.hash, g));
  const auto events = l->events_after(0, 10).value();
  REQUIRE(events.size() == 2);
  CHECK(events[0].name == "AccountCreated");
  CHECK(events[0].sequence == 1);
  CHECK(events[1].name == "GroupAdded");
  CHECK(events[1].sequence == 4);
  CHECK(l->events_after(1, 1).value().at(0).sequence == 4);
  CHECK(l->events_after(4, 10).value().empty());
  // The old balance is left for the import to read; this version never changes it.
  CHECK(sql_int(be.db_path(), "SELECT balance FROM accounts") == 870);
}

TEST_CASE("embedded ledger: a database from a newer build is refused") {
  embedded_backend be({});
  { auto l = be.open(); }
  sql(be.db_path(), "PRAGMA user_version = " + std::to_string(embedded_ledger::kSchemaVersion + 1));
  const auto r = embedded_ledger::open(be.db_path(), {});
  REQUIRE_FALSE(r.has_value());
  CHECK(r.code() == ledger_errc::storage);
  CHECK(r.err().message.find("newer") != std::string::npos);
  // The file is left as it was.
  CHECK(sql_int(be.db_path(), "PRAGMA user_version") == embedded_ledger::kSchemaVersion + 1);
}

TEST_CASE("embedded ledger: storage failures") {
  temp_dir dir{"enact-ledger"};
  struct case_ {
    const char* what;
    std::string path;
  };
  const std::string not_db = (dir.path() / "not-a-database").string();
  {
    std::ofstream f(not_db, std::ios::binary);
    f << std::string(4096, 'x');
  }
  const case_ cases[] = {
      {"a file that is not a database", not_db},
      {"a directory that does not exist", (dir.path() / "missing" / "ledger.sqlite").string()},
      {"a directory", dir.path().string()},
  };
  for (const case_& c : cases) {
    INFO(std::string(c.what));
    const auto r = embedded_ledger::open(c.path, {});
    REQUIRE_FALSE(r.has_value());
    CHECK(r.code() == ledger_errc::storage);
    CHECK(r.err().message.rfind("sqlite: ", 0) == 0);
  }
}

TEST_CASE("embedded ledger: page bounds") {
  embedded_backend be({});
  auto l = be.open();
  const account a = sample_account();
  REQUIRE(l->new_account(write_context{a.admin}, a));
  CHECK(l->list_groups(a.hash, {0, 20}).code() == ledger_errc::invalid_argument);
  CHECK(l->list_wallets(a.hash, {1, 0}).code() == ledger_errc::invalid_argument);
  // A page far past the end is empty, with the total.
  const auto far = l->list_groups(a.hash, {UINT64_MAX, 100});
  REQUIRE(far.has_value());
  CHECK(far->items.empty());
  CHECK(far->total == 0);
}

}  // namespace enact::ledger::test
