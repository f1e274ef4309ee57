// SPDX-License-Identifier: Apache-2.0
// `enact::ledger::embedded_ledger`: the permission ledger kept in one SQLite file (docs/architecture.md §4
// "Permission ledger", docs/protocol.md §3), enforcing the registry contract's rules itself.
//
// Storage (through the storage kit, server/storage): WAL journal, synchronous=NORMAL (a commit
// survives a process crash; the last commits before a power loss may be lost, never half of one),
// foreign keys on, a busy timeout for other processes sharing the file. The schema is versioned
// with `PRAGMA user_version` and an ordered list of migrations applied in one transaction at open;
// a file written by a newer build is refused (storage) rather than misread.
//
// Concurrency: one write connection behind a mutex, so writes are serialized and each is ONE
// `BEGIN IMMEDIATE` … `COMMIT` transaction (rolled back on any failure: nothing is half-written);
// reads use a small pool of read-only connections, which WAL lets run beside the writer. Every
// connection keeps its prepared statements.
//
// Rules beyond the interface's comments (the conformance suite in tests/ledger checks them):
//   - a write checks, in order: the account exists (unknown_account), the sender rule (not_admin /
//     relay_not_allowed), its arguments (invalid_argument), the state it changes (unknown_* /
//     duplicate), then applies the change;
//   - names are 1..256 bytes, descriptions and e-mail ≤ 4096 / 256 bytes, a CID 1..256 bytes whose
//     keccak256 must equal `hashed_cid`; zero addresses are refused as admin or PKP id;
//   - an admin address administers at most one account (so `account_by_admin` is well defined):
//     new_account / convert_to_chain_secured onto an address that already is an admin → duplicate;
//   - a usage key hash belongs to one account: set_usage_key of a hash held by another account →
//     duplicate; replacing a key keeps its creation time and list position;
//   - group ids count 1, 2, 3, … per account and are never reused after remove_group, so a usage
//     key's permission list naming a removed group never grants rights on a later group;
//   - a PKP or CID hash listed twice in add_group / update_group → invalid_argument; the group's
//     PKPs must be registered in the account (unknown_wallet); its CID hashes need not be
//     registered actions (actions are public, any CID may be listed);
//   - `created_at` fields given by the caller are ignored: the ledger stamps the current time;
//   - event data use the registry's argument names (accountHash, groupId, pkpId, hashedCid, …),
//     hashes and addresses as 0x + lowercase hex, so that they match the chain's logs;
//   - no credits: balances, payments and the charges of calls are the metering store's
//     (server/metering). A data directory of an older version, which kept them here, still opens;
//     balances() reads its balances once for the import, and events_after skips its credit events.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ledger/ledger.hpp"

namespace enact::ledger {

class embedded_ledger final : public permission_ledger {
 public:
  /// The schema version this build writes (PRAGMA user_version after open).
  static constexpr int kSchemaVersion = 2;

  /// Opens (creating when absent) the ledger at `sqlite_path` and migrates it to kSchemaVersion.
  /// storage when the file cannot be opened, is not a database, or has a newer schema version.
  [[nodiscard]] static result<std::unique_ptr<embedded_ledger>> open(const std::string& sqlite_path,
                                                                     std::vector<address> api_payers);

  ~embedded_ledger() override;
  embedded_ledger(const embedded_ledger&) = delete;
  embedded_ledger& operator=(const embedded_ledger&) = delete;

  ENACT_PERMISSION_LEDGER_OVERRIDES
  /// One indexed query by CID hash instead of the default's walk over every group.
  [[nodiscard]] result<std::vector<group>> groups_listing(const account_hash& account,
                                                          const hash256& hashed_cid) const override;

  /// Runs `writes` — calls of this ledger's write methods made by the calling thread — inside ONE
  /// transaction: each call still succeeds or fails on its own (a failed call leaves nothing
  /// behind), and at the end everything is committed when `writes` succeeds and `commit` is
  /// true, or rolled back. Other writers wait meanwhile; reads (on other connections) see only
  /// committed state. The JSON-RPC surface (rpc_surface.hpp) runs `multicall` with commit and
  /// its dry runs (eth_estimateGas, eth_call of a write) without. invalid_argument when nested.
  [[nodiscard]] result<void> batch(bool commit, const std::function<result<void>()>& writes);

  /// Every account whose credit balance is above 0, with that balance, in account order: what a
  /// data directory of a version that kept credits in the ledger holds (empty for one this
  /// version created, which writes no balance), read once at start to carry the balances into
  /// the metering store (metering::import_balances).
  [[nodiscard]] result<std::vector<std::pair<account_hash, uint64_t>>> balances() const;

 private:
  struct store;
  explicit embedded_ledger(std::unique_ptr<store> s);
  std::unique_ptr<store> store_;
};

}  // namespace enact::ledger
