// SPDX-License-Identifier: Apache-2.0
// The one-time import of the ledger's credit balances (import.hpp).
#include "metering/import.hpp"

#include "enact/codec/hex.hpp"

namespace enact::metering {

std::string ledger_import_id(const account_hash& account) { return "ledger-import:0x" + codec::hex::encode(account); }

result<uint64_t> import_balances(store& s, std::span<const std::pair<account_hash, uint64_t>> balances) {
  uint64_t imported = 0;
  for (const auto& [account, amount] : balances) {
    if (amount == 0)
      continue;
    // Imported by an earlier start: a read, so a start writes nothing once every balance moved.
    if (auto before = s.get_payment(account, ledger_import_id(account)); before && before->credited)
      continue;
    payment p;
    p.id = ledger_import_id(account);
    p.account = account;
    p.amount_cents = amount;
    p.provider = std::string(kLedgerImportProvider);
    p.created_at = system_now();
    // Recorded by an earlier start (which may have stopped before the credit): credit it now,
    // which changes nothing when that start credited it.
    if (auto recorded = s.record_payment(p); !recorded && recorded.err().code != metering_errc::duplicate_payment)
      return recorded.err();
    ENACT_TRY(const credit_result c, s.credit_payment(account, p.id));
    if (c.credited_now)
      ++imported;
  }
  return imported;
}

}  // namespace enact::metering
