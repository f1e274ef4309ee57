// SPDX-License-Identifier: Apache-2.0
// The import of the ledger's balances into the metering store (server/metering/import.hpp): each
// account credited once through its ledger-import payment, whatever the number of runs and
// wherever an earlier run stopped.
#include <doctest/doctest.h>

#include <utility>
#include <vector>

#include "conformance.hpp"
#include "metering/import.hpp"
#include "metering/sqlite_store.hpp"
#include "must.hpp"
#include "support.hpp"

namespace enact::metering::test {
namespace {

using balances = std::vector<std::pair<account_hash, uint64_t>>;

TEST_CASE("import_balances credits each account once, completes an interrupted run and skips empty balances") {
  enact::test::temp_dir dir("enact-metering");
  auto s = enact::test::must_ok(open_sqlite((dir.path() / "metering.sqlite").string()));
  const account_hash a{1}, b{2}, c{3}, d{4};
  CHECK(ledger_import_id(a) == "ledger-import:0x0100000000000000000000000000000000000000000000000000000000000000");

  // An earlier run stopped after recording b's payment, before crediting it; d already holds
  // credits of its own.
  MUST(s->record_payment(intent(ledger_import_id(b), b, 40, std::string(kLedgerImportProvider))));
  MUST(s->record_payment(intent("pi_d", d, 900)));
  (void)MUST(s->credit_payment(d, "pi_d"));

  const balances ledger{{a, 500}, {b, 40}, {c, 0}, {d, 7}};
  CHECK(MUST(import_balances(*s, ledger)) == 3);
  CHECK(MUST(s->balance(a)) == 500);
  CHECK(MUST(s->balance(b)) == 40);
  CHECK(MUST(s->balance(c)) == 0);
  CHECK(MUST(s->balance(d)) == 907);
  const payment p = MUST(s->get_payment(a, ledger_import_id(a)));
  CHECK(p.provider == kLedgerImportProvider);
  CHECK(p.amount_cents == 500);
  CHECK(p.credited);

  // Spending after the import is not undone or refilled by a later run.
  const reservation r = MUST(s->reserve(reserve_request{a, a, 100, 0, "run-1", std::chrono::minutes(1)}));
  CHECK(MUST(s->settle(a, r.id, 100)) == 400);
  CHECK(MUST(import_balances(*s, ledger)) == 0);
  CHECK(MUST(s->balance(a)) == 400);
  CHECK(MUST(s->balance(b)) == 40);
  CHECK(MUST(s->balance(d)) == 907);
  CHECK(MUST(s->payments(a, {})).total == 1);

  // A payment id that belongs to another account is refused, not credited to the wrong one.
  MUST(s->record_payment(intent(ledger_import_id(c), d, 5)));
  CHECK_FALSE(import_balances(*s, balances{{c, 5}}));
  CHECK(MUST(s->balance(c)) == 0);
  CHECK(MUST(s->balance(d)) == 907);
}

}  // namespace
}  // namespace enact::metering::test
