// SPDX-License-Identifier: Apache-2.0
// Upgrading a data directory whose credits the permission ledger kept (docs/architecture.md §2
// metering/): at start the server carries every account's ledger balance into the metering store
// once, so no credit is lost, none is doubled by a restart, and an import a crash interrupted
// completes on the next start.
#include <doctest/doctest.h>

#include <string>

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

/// Credits `cents` to the account in the ledger, as the version before the metering store did.
void ledger_credit(ledger::embedded_ledger& l, const hash256& account, const std::string& intent, uint64_t cents) {
  ledger::payment p;
  p.intent_id = intent;
  p.account = account;
  p.amount_cents = cents;
  p.provider = "dev";
  REQUIRE(l.record_payment(p));
  REQUIRE(l.credit_payment(account, intent));
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
  {
    auto l = ledger::embedded_ledger::open(data + "/ledger.sqlite", {});
    REQUIRE(l);
    ledger_credit(**l, hash_of(rich), "pi_rich_1", 700);
    ledger_credit(**l, hash_of(rich), "pi_rich_2", 45);
    ledger_credit(**l, hash_of(half), "pi_half", 300);
    REQUIRE((*l)->debit(hash_of(half), 20));  // a run the old version charged in the ledger
    const auto listed = (*l)->balances();
    REQUIRE(listed);
    REQUIRE(listed->size() == 2);  // poor holds nothing and is not listed
  }
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
    CHECK(srv.stop().clean());
  }
}

}  // namespace enact::itest
