// SPDX-License-Identifier: Apache-2.0
// Carrying credit balances into the metering store (docs/architecture.md §2 metering/): a data
// directory written by a version that kept credits in the permission ledger holds its balances
// there, and the metering store starts every account at 0. At start the server reads the ledger's
// balances and imports each as one payment, id `ledger-import:<account hash>`, provider "ledger":
// the store records a payment id once and credits it at most once, so an import interrupted
// halfway and run again credits every account exactly once, and a later start credits nothing.
// The ledger's own payments are not imported one by one: their credits are already in the ledger
// balance, and the ledger keeps no record of what its debits spent.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <utility>

#include "metering/store.hpp"

namespace enact::metering {

/// The payment provider an imported balance is recorded under.
inline constexpr std::string_view kLedgerImportProvider = "ledger";

/// The payment id that carries `account`'s ledger balance: `ledger-import:0x<account hash>`.
[[nodiscard]] std::string ledger_import_id(const account_hash& account);

/// Credits each (account, balance) once through its ledger_import_id payment; balances of 0 are
/// skipped. Returns how many accounts this call credited (0 when every one was imported before).
[[nodiscard]] result<uint64_t> import_balances(store& s, std::span<const std::pair<account_hash, uint64_t>> balances);

}  // namespace enact::metering
