// SPDX-License-Identifier: Apache-2.0
// Upgrading a data directory whose credits the permission ledger kept (docs/architecture.md §2
// metering/): at start the server carries every account's ledger balance into the metering store
// once, so no credit is lost, none is doubled by a restart, and an import a crash interrupted
// completes on the next start. This version's ledger keeps no credits, so the old version's
// writes are made here as it made them: rows of the ledger file (the accounts' balance column,
// the payments table, the credit events of the event log), which the ledger must still open,
// list for the import, and step over in its event log.
#include <doctest/doctest.h>
#include <sqlite3.h>

#include <string>
#include <vector>

#include "enact/codec/hex.hpp"
#include "ledger/embedded_ledger.hpp"
#include "metering/import.hpp"
#include "metering/sqlite_store.hpp"
#include "run_test.hpp"
#include "server_process.hpp"
#include "steps.hpp"

namespace enact::itest {
namespace {

hash256 hash_of(const account_keys& a) { return codec::hex::decode_fixed<32>(a.api_key_hash).value(); }

/// The ledger file of a stopped server, written as the version before the metering store wrote
/// it: one transaction per call, SQL text with the account's hash as a blob literal.
class old_ledger {
 public:
  explicit old_ledger(const std::string& path) {
    REQUIRE(sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE, nullptr) == SQLITE_OK);
  }
  ~old_ledger() { sqlite3_close(db_); }
  old_ledger(const old_ledger&) = delete;
  old_ledger& operator=(const old_ledger&) = delete;

  /// record_payment + credit_payment: the payment row, the balance, the PaymentCredited event.
  void credit(const hash256& account, const std::string& intent, uint64_t cents) {
    const std::string h = blob(account);
    const std::string id = "(SELECT id FROM accounts WHERE hash = " + h + ")";
    exec("BEGIN; INSERT INTO payments (account_id, intent_id, amount_cents, provider, credited, created_at) VALUES (" +
         id + ", '" + intent + "', " + std::to_string(cents) + ", 'dev', 1, 1700000000); UPDATE accounts SET balance " +
         "= balance + " + std::to_string(cents) + " WHERE hash = " + h + "; " +
         event("PaymentCredited", account,
               "{\"accountHash\":\"" + codec::hex::encode_prefixed(account) + "\",\"paymentIntentId\":\"" + intent +
                   "\",\"amountCents\":" + std::to_string(cents) + ",\"provider\":\"dev\",\"balance\":0}") +
         " COMMIT;");
  }
  /// debit: a run the old version charged in the ledger, with its CreditsDebited event.
  void debit(const hash256& account, uint64_t amount) {
    exec("BEGIN; UPDATE accounts SET balance = balance - " + std::to_string(amount) + " WHERE hash = " + blob(account) +
         "; " +
         event("CreditsDebited", account,
               "{\"accountHash\":\"" + codec::hex::encode_prefixed(account) +
                   "\",\"amount\":" + std::to_string(amount) + ",\"balance\":0}") +
         " COMMIT;");
  }

 private:
  static std::string blob(const hash256& h) { return "x'" + codec::hex::encode(h) + "'"; }
  static std::string event(const std::string& name, const hash256& account, const std::string& data) {
    return "INSERT INTO events (name, account, sender, data, created_at) VALUES ('" + name + "', " + blob(account) +
           ", zeroblob(20), '" + data + "', 1700000000);";
  }
  void exec(const std::string& sql) {
    char* err = nullptr;
    const int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err);
    const std::string message = err == nullptr ? "" : err;
    sqlite3_free(err);
    REQUIRE_MESSAGE(rc == SQLITE_OK, sql << ": " << message);
  }
  sqlite3* db_ = nullptr;
};

/// Every event of the ledger at `path`, in order.
std::vector<ledger::event> ledger_events(const std::string& path) {
  auto l = ledger::embedded_ledger::open(path, {});
  REQUIRE(l);
  std::vector<ledger::event> out;
  for (uint64_t after = 0;;) {
    auto page = (*l)->events_after(after, 100);
    REQUIRE(page);
    if (page->empty())
      return out;
    after = page->back().sequence;
    out.insert(out.end(), page->begin(), page->end());
  }
}

/// The import's log line of this start: the accounts credited and the accounts the ledger listed.
std::pair<uint64_t, uint64_t> import_line(const server_process& srv) {
  for (const auto& l : srv.log_lines())
    if (const auto* msg = l.if_contains("msg");
        msg && msg->is_string() && msg->as_string() == "ledger balances imported into the metering store")
      return {l.at("accounts").to_number<uint64_t>(), l.at("ledger_accounts").to_number<uint64_t>()};
  FAIL("no import line in the log");
  return {};
}

}  // namespace

TEST_CASE("ledger balances move into the metering store once, across an interrupted import and restarts") {
  temp_dir dir;
  const std::string data = dir.path() + "/data";
  account_keys rich, half, poor;
  {
    // The accounts exist in the ledger; their credits are written below as the old version did.
    server_process srv({"--dev"}, data);
    auto c = srv.client();
    rich = create_account(c, "rich");
    half = create_account(c, "half");
    poor = create_account(c, "poor");
    CHECK(srv.stop().clean());
  }
  const std::vector<ledger::event> before = ledger_events(data + "/ledger.sqlite");
  REQUIRE(!before.empty());
  {
    old_ledger old(data + "/ledger.sqlite");
    old.credit(hash_of(rich), "pi_rich_1", 700);
    old.credit(hash_of(rich), "pi_rich_2", 45);
    old.credit(hash_of(half), "pi_half", 300);
    old.debit(hash_of(half), 20);
  }
  {
    // This version opens the old file, lists its balances for the import, and reads its event
    // log without the credit events (they are metering history now).
    auto l = ledger::embedded_ledger::open(data + "/ledger.sqlite", {});
    REQUIRE(l);
    const auto listed = (*l)->balances();
    REQUIRE(listed);
    REQUIRE(listed->size() == 2);  // poor holds nothing and is not listed
    CHECK(listed->at(0) == std::pair{hash_of(rich), uint64_t{745}});
    CHECK(listed->at(1) == std::pair{hash_of(half), uint64_t{280}});
  }
  CHECK(ledger_events(data + "/ledger.sqlite").size() == before.size());
  {
    // A start that crashed halfway: half's import payment recorded, not yet credited.
    auto m = metering::open_sqlite(data + "/metering.sqlite");
    REQUIRE(m);
    metering::payment p;
    p.id = metering::ledger_import_id(hash_of(half));
    p.account = hash_of(half);
    p.amount_cents = 280;
    p.provider = std::string(metering::kLedgerImportProvider);
    REQUIRE((*m)->record_payment(p));
    CHECK((*m)->balance(hash_of(half)).value() == 0);
  }
  {
    server_process srv({"--dev"}, data);
    auto c = srv.client();
    CHECK(balance_of(c, rich.auth()) == 745);
    CHECK(balance_of(c, half.auth()) == 280);
    CHECK(balance_of(c, poor.auth()) == 0);
    CHECK(import_line(srv) == std::pair<uint64_t, uint64_t>{2, 2});
    // New credits after the upgrade go to the metering store beside the imported ones.
    CHECK(buy_credits(c, rich.auth(), 500) == 1245);
    CHECK(srv.stop().clean());
  }
  {
    // A second start imports nothing: the ledger's balances are unchanged, the store has them.
    server_process srv({"--dev"}, data);
    auto c = srv.client();
    CHECK(import_line(srv) == std::pair<uint64_t, uint64_t>{0, 2});
    CHECK(balance_of(c, rich.auth()) == 1245);
    CHECK(balance_of(c, half.auth()) == 280);
    CHECK(balance_of(c, poor.auth()) == 0);
    // The ledger carries on after the old credit events: a write is the next registry event.
    (void)create_account(c, "after");
    CHECK(srv.stop().clean());
  }
  const std::vector<ledger::event> after = ledger_events(data + "/ledger.sqlite");
  REQUIRE(after.size() > before.size());
  CHECK(after.back().name == "AccountCreated");
  CHECK(after.back().sequence == before.back().sequence + 4 + (after.size() - before.size()));
  for (const ledger::event& e : after)
    CHECK(e.name != "CreditsDebited");
}

}  // namespace enact::itest
