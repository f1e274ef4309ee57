// SPDX-License-Identifier: Apache-2.0
// The permission-ledger conformance cases (docs/protocol.md §3, ledger.hpp): sender rules of every write,
// one-way conversion, the event log, not-found and duplicate paths, pagination, persistence and
// concurrent writers. Credits are not the ledger's (server/metering keeps them), so no case
// moves any. Written against permission_ledger& only.
#include "conformance.hpp"

#include <doctest/doctest.h>

#include "conformance_cases.hpp"

namespace enact::ledger::test {

void run_conformance(const backend_factory& make) {
  using namespace conformance;
  SUBCASE("accounts") { accounts(make); }
  SUBCASE("identity rules: canonical wallet accounts, one namespace of hashes") { identity_rules(make); }
  SUBCASE("sender rules of every write") { sender_rules(make); }
  SUBCASE("unknown account on every call") { unknown_account_everywhere(make); }
  SUBCASE("conversion is one-way and switches the admin") { conversion(make); }
  SUBCASE("conversion needs the new admin's consent: a wallet converts only to itself") { conversion_consent(make); }
  SUBCASE("event log: one named event per write, contiguous") { event_log(make); }
  SUBCASE("usage keys") { usage_keys(make); }
  SUBCASE("groups") { groups(make); }
  SUBCASE("wallets") { wallets(make); }
  SUBCASE("actions") { actions(make); }
  SUBCASE("pagination: totals and creation order") { pagination(make); }
  SUBCASE("persistence across close and reopen") { persistence(make); }
  SUBCASE("concurrent writers") { concurrent_writers(make); }
}

}  // namespace enact::ledger::test
