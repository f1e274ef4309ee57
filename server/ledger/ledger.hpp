// SPDX-License-Identifier: Apache-2.0
// `enact::ledger::permission_ledger`: the one interface the core routes use for authorization
// state (docs/architecture.md §4 "Permission ledger", docs/protocol.md §3) — accounts, usage keys with their permission
// sets and expiration, groups, the PKP registry and action metadata: permissions only. Credits,
// payments and what a call costs are the metering store's (server/metering, docs/architecture.md
// §4), so no method here moves credits. The registry contract's rules:
//   - every write names its sender (the contract's msg.sender): the account's admin wallet, or,
//     for a managed (API-mode) account only, one of the server's api_payer addresses;
//     anyone else -> not_admin; an api_payer writing for an unmanaged account -> relay_not_allowed;
//   - conversion to ChainSecured is one-way (already_unmanaged on the second attempt), and hands
//     the account to another wallet only with that wallet's consent: a sender that is not an
//     api_payer converts only to itself (new_admin_not_sender); the api_payer's relay is what
//     carries a new admin's consent (the server checked its ConvertAccount envelope);
//   - identity rules: a sender that is not an api_payer creates only its own account, unmanaged,
//     under crypto::keccak256(abi.encodePacked(admin)) (managed_not_allowed, hash_not_canonical); account
//     hashes and usage-key hashes are one namespace (hash_is_usage_key, hash_is_account,
//     usage_key_of_another_account), so no credential authenticates as an account it does not
//     belong to.
// Every successful write appends one ledger event with the next sequence number, named after the
// registry's event, so that the `evm` backend's logs and the embedded event log line up.
// Backends: `embedded` (SQLite, embedded_ledger.hpp); `evm` (the registry over JSON-RPC,
// evm_ledger.hpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <boost/json.hpp>

#include "enact/api/core.hpp"
#include "enact/bytes.hpp"
#include "enact/chain/registry.hpp"
#include "enact/error.hpp"
#include "enact/result.hpp"
#include "enact/scopes/scopes.hpp"

namespace enact {

enum class ledger_errc {
  not_admin = 1,      // sender is neither the admin nor (for managed accounts) an api_payer
  relay_not_allowed,  // api_payer relay for an unmanaged (ChainSecured) account
  already_unmanaged,  // conversion of an account that is already ChainSecured
  unknown_account,    // no account with that hash
  unknown_usage_key,  // no usage key with that hash in the account
  unknown_group,      // no group with that id in the account
  unknown_wallet,     // no PKP with that id in the account's registry
  unknown_action,     // no action with that hashed CID in the account
  duplicate,          // the thing exists already (account, key, wallet, action, ...)
  invalid_argument,   // a value the registry refuses (empty name, amount 0, ...)
  storage,            // the backend failed (I/O, corruption, node unreachable)
  // Identity rules (docs/protocol.md §3): a wallet creates only its own unmanaged account under
  // crypto::keccak256(abi.encodePacked(wallet)); account and usage-key hashes are one namespace.
  hash_not_canonical,            // newAccount by a wallet under another hash
  managed_not_allowed,           // newAccount by a wallet with managed = true
  hash_is_usage_key,             // newAccount under the hash of a usage key
  hash_is_account,               // setUsageApiKey under the hash of an account
  usage_key_of_another_account,  // setUsageApiKey under the hash of another account's key
  new_admin_not_sender,          // convertToChainSecured by a wallet naming another new admin
};

namespace detail {
inline const std::error_category& ledger_category() noexcept {
  static const errc_category<ledger_errc> c(
      "enact.ledger",
      {"", "not the admin", "relay not allowed", "already unmanaged", "unknown account", "unknown usage key",
       "unknown group", "unknown wallet", "unknown action", "duplicate", "invalid argument", "storage failure",
       "account hash not canonical", "managed account not allowed", "hash is a usage key", "hash is an account",
       "usage key of another account", "new admin is not the sender"});
  return c;
}
}  // namespace detail
inline std::error_code make_error_code(ledger_errc e) noexcept {
  return {static_cast<int>(e), detail::ledger_category()};
}

}  // namespace enact
ENACT_ERRC_ENUM(enact::ledger_errc)

namespace enact::ledger {

using account_hash = hash256;  // apiKeyHash
using group_id = scopes::group_id;

struct account {
  account_hash hash{};
  address admin{};      // adminWalletAddress
  bool managed = true;  // API mode
  std::string name;
  std::string description;
  std::string email;
  int64_t created_at = 0;  // unix seconds
};

struct usage_key {
  hash256 hash{};  // keccak256 of the base64 key string
  account_hash account{};
  address wallet{};  // the key's own address (the key bytes are a secp256k1 key)
  std::string name;
  std::string description;
  uint64_t expiration = 0;  // unix seconds; 0 = never
  uint64_t balance = 0;     // setUsageApiKey's balance argument: the key's spending cap, which the
                            // metering store enforces
  scopes::permission_set permissions;
  int64_t created_at = 0;
};

struct group {
  group_id id = 0;  // assigned by add_group: 1, 2, … per account (0 is the wildcard)
  std::string name;
  std::string description;
  std::vector<address> pkps;        // in insertion order, no duplicates
  std::vector<hash256> cid_hashes;  // in insertion order, no duplicates
};

struct wallet {
  address pkp_id{};  // the wallet address
  hash256 derivation_path{};
  std::string name;
  std::string description;
  int64_t created_at = 0;
};

struct action {
  std::string cid;       // as registered (CIDv0 or v1 string)
  hash256 hashed_cid{};  // keccak256 of the CID string
  std::string name;
  std::string description;
  int64_t created_at = 0;
};

/// One write as the registry sees it.
struct write_context {
  address sender{};  // msg.sender
};

/// 1-based page of a list (docs/protocol.md §0); validated by the caller (1..100). The wire model's type.
using page_request = api::page_request;

template <class T>
struct page {
  std::vector<T> items;
  uint64_t total = 0;
};

struct event {
  uint64_t sequence = 0;  // 1, 2, 3, … across all accounts (see events_after)
  std::string name;       // registry event name: "AccountCreated", "UsageApiKeySet", …
  account_hash account{};
  address sender{};
  boost::json::object data;  // the event's arguments: chain::registry::to_json(value)
  int64_t created_at = 0;
  /// The registry event itself, as the registry's log encodes it (chain::registry::encode_log).
  chain::registry::any_event value;
};

/// Every method is safe to call from several threads at once; each write is atomic.
class permission_ledger {
 public:
  virtual ~permission_ledger() = default;

  /// Addresses allowed to relay writes for managed accounts.
  [[nodiscard]] virtual std::vector<address> api_payers() const = 0;

  // --- accounts -------------------------------------------------------------------------------
  /// newAccount: `a.admin` becomes the admin; sender must be an api_payer (managed) or the admin,
  /// and an admin that is not an api_payer creates only its canonical, unmanaged account.
  [[nodiscard]] virtual result<void> new_account(const write_context& w, const account& a) = 0;
  [[nodiscard]] virtual result<account> get_account(const account_hash& h) const = 0;
  /// The account whose admin wallet is `admin` (X-Wallet-Auth); unknown_account when none.
  [[nodiscard]] virtual result<account> account_by_admin(const address& admin) const = 0;
  /// convertToChainSecured: one-way; the admin becomes `new_admin`, managed becomes false. A
  /// sender that is not an api_payer names only itself (new_admin_not_sender): the relay of an
  /// api_payer carries another new admin's consent.
  [[nodiscard]] virtual result<void> convert_to_chain_secured(const write_context& w, const account_hash& h,
                                                              const address& new_admin) = 0;

  // --- usage keys -----------------------------------------------------------------------------
  /// setUsageApiKey: inserts or replaces (all fields) the key `k.hash` of account `k.account`.
  [[nodiscard]] virtual result<void> set_usage_key(const write_context& w, const usage_key& k) = 0;
  [[nodiscard]] virtual result<void> update_usage_key_metadata(const write_context& w, const account_hash& account,
                                                               const hash256& key_hash, std::string_view name,
                                                               std::string_view description) = 0;
  [[nodiscard]] virtual result<void> remove_usage_key(const write_context& w, const account_hash& account,
                                                      const hash256& key_hash) = 0;
  /// Any account's usage key by its hash (authentication); unknown_usage_key when none.
  [[nodiscard]] virtual result<usage_key> find_usage_key(const hash256& key_hash) const = 0;
  [[nodiscard]] virtual result<page<usage_key>> list_usage_keys(const account_hash& account, page_request p) const = 0;

  // --- groups ---------------------------------------------------------------------------------
  /// addGroup: assigns the next id; `g.id` is ignored. Every PKP must be in the account's
  /// registry (unknown_wallet otherwise).
  [[nodiscard]] virtual result<group> add_group(const write_context& w, const account_hash& account,
                                                const group& g) = 0;
  /// updateGroup: replaces name, description and both sets of group `g.id`.
  [[nodiscard]] virtual result<group> update_group(const write_context& w, const account_hash& account,
                                                   const group& g) = 0;
  [[nodiscard]] virtual result<void> remove_group(const write_context& w, const account_hash& account, group_id id) = 0;
  [[nodiscard]] virtual result<group> get_group(const account_hash& account, group_id id) const = 0;
  [[nodiscard]] virtual result<page<group>> list_groups(const account_hash& account, page_request p) const = 0;
  /// Every group of the account in id order.
  [[nodiscard]] virtual result<std::vector<group>> all_groups(const account_hash& account) const = 0;
  /// The account's groups that list `hashed_cid`, in id order, with their PKPs (`cid_hashes`
  /// holds `hashed_cid` only): what the execution rule needs on every run. This default walks
  /// all_groups; a backend with an index by CID hash answers without reading the other groups.
  [[nodiscard]] virtual result<std::vector<group>> groups_listing(const account_hash& account,
                                                                  const hash256& hashed_cid) const {
    auto all = all_groups(account);
    if (!all)
      return all.err();
    std::vector<group> out;
    for (group& g : *all)
      if (std::find(g.cid_hashes.begin(), g.cid_hashes.end(), hashed_cid) != g.cid_hashes.end()) {
        g.cid_hashes = {hashed_cid};
        out.push_back(std::move(g));
      }
    return out;
  }
  [[nodiscard]] virtual result<group> add_pkp_to_group(const write_context& w, const account_hash& account, group_id id,
                                                       const address& pkp) = 0;
  [[nodiscard]] virtual result<group> remove_pkp_from_group(const write_context& w, const account_hash& account,
                                                            group_id id, const address& pkp) = 0;
  [[nodiscard]] virtual result<group> add_action_to_group(const write_context& w, const account_hash& account,
                                                          group_id id, const hash256& hashed_cid) = 0;
  [[nodiscard]] virtual result<group> remove_action_from_group(const write_context& w, const account_hash& account,
                                                               group_id id, const hash256& hashed_cid) = 0;

  // --- PKP registry ---------------------------------------------------------------------------
  /// registerWalletDerivation.
  [[nodiscard]] virtual result<void> register_wallet(const write_context& w, const account_hash& account,
                                                     const wallet& wl) = 0;
  [[nodiscard]] virtual result<wallet> get_wallet(const account_hash& account, const address& pkp_id) const = 0;
  [[nodiscard]] virtual result<page<wallet>> list_wallets(const account_hash& account, page_request p) const = 0;
  [[nodiscard]] virtual result<page<wallet>> list_wallets_in_group(const account_hash& account, group_id id,
                                                                   page_request p) const = 0;
  /// Number of wallets ever registered for the account (the next API-mode derivation index).
  [[nodiscard]] virtual result<uint64_t> wallet_count(const account_hash& account) const = 0;

  // --- actions --------------------------------------------------------------------------------
  /// addAction: duplicate when the hashed CID is registered already.
  [[nodiscard]] virtual result<void> add_action(const write_context& w, const account_hash& account,
                                                const action& a) = 0;
  [[nodiscard]] virtual result<action> update_action_metadata(const write_context& w, const account_hash& account,
                                                              const hash256& hashed_cid, std::string_view name,
                                                              std::string_view description) = 0;
  /// deleteAction: removes the metadata and the hash from every group of the account.
  [[nodiscard]] virtual result<void> delete_action(const write_context& w, const account_hash& account,
                                                   const hash256& hashed_cid) = 0;
  [[nodiscard]] virtual result<action> get_action(const account_hash& account, const hash256& hashed_cid) const = 0;
  /// Without a group: every registered action. With one: the group's CID hashes, each with its
  /// metadata when registered (name and description empty and cid empty when not).
  [[nodiscard]] virtual result<page<action>> list_actions(const account_hash& account, std::optional<group_id> group,
                                                          page_request p) const = 0;

  // --- events ---------------------------------------------------------------------------------
  /// Events with sequence > `after`, oldest first, at most `limit`. Sequences have no gaps, except
  /// where a data directory of an older version holds the credit events it kept then
  /// (CreditsDebited, PaymentCredited), which are not registry events any more and are skipped.
  [[nodiscard]] virtual result<std::vector<event>> events_after(uint64_t after, size_t limit) const = 0;
};

}  // namespace enact::ledger

/// Declares, in a backend's class body, the override of every pure virtual method of
/// permission_ledger (documented above), so that the backends' headers say each signature once.
#define ENACT_PERMISSION_LEDGER_OVERRIDES                                                                              \
  [[nodiscard]] std::vector<address> api_payers() const override;                                                      \
  [[nodiscard]] result<void> new_account(const write_context& w, const account& a) override;                           \
  [[nodiscard]] result<account> get_account(const account_hash& h) const override;                                     \
  [[nodiscard]] result<account> account_by_admin(const address& admin) const override;                                 \
  [[nodiscard]] result<void> convert_to_chain_secured(const write_context& w, const account_hash& h,                   \
                                                      const address& new_admin) override;                              \
  [[nodiscard]] result<void> set_usage_key(const write_context& w, const usage_key& k) override;                       \
  [[nodiscard]] result<void> update_usage_key_metadata(const write_context& w, const account_hash& account,            \
                                                       const hash256& key_hash, std::string_view name,                 \
                                                       std::string_view description) override;                         \
  [[nodiscard]] result<void> remove_usage_key(const write_context& w, const account_hash& account,                     \
                                              const hash256& key_hash) override;                                       \
  [[nodiscard]] result<usage_key> find_usage_key(const hash256& key_hash) const override;                              \
  [[nodiscard]] result<page<usage_key>> list_usage_keys(const account_hash& account, page_request p) const override;   \
  [[nodiscard]] result<group> add_group(const write_context& w, const account_hash& account, const group& g) override; \
  [[nodiscard]] result<group> update_group(const write_context& w, const account_hash& account, const group& g)        \
      override;                                                                                                        \
  [[nodiscard]] result<void> remove_group(const write_context& w, const account_hash& account, group_id id) override;  \
  [[nodiscard]] result<group> get_group(const account_hash& account, group_id id) const override;                      \
  [[nodiscard]] result<page<group>> list_groups(const account_hash& account, page_request p) const override;           \
  [[nodiscard]] result<std::vector<group>> all_groups(const account_hash& account) const override;                     \
  [[nodiscard]] result<group> add_pkp_to_group(const write_context& w, const account_hash& account, group_id id,       \
                                               const address& pkp) override;                                           \
  [[nodiscard]] result<group> remove_pkp_from_group(const write_context& w, const account_hash& account, group_id id,  \
                                                    const address& pkp) override;                                      \
  [[nodiscard]] result<group> add_action_to_group(const write_context& w, const account_hash& account, group_id id,    \
                                                  const hash256& hashed_cid) override;                                 \
  [[nodiscard]] result<group> remove_action_from_group(const write_context& w, const account_hash& account,            \
                                                       group_id id, const hash256& hashed_cid) override;               \
  [[nodiscard]] result<void> register_wallet(const write_context& w, const account_hash& account, const wallet& wl)    \
      override;                                                                                                        \
  [[nodiscard]] result<wallet> get_wallet(const account_hash& account, const address& pkp_id) const override;          \
  [[nodiscard]] result<page<wallet>> list_wallets(const account_hash& account, page_request p) const override;         \
  [[nodiscard]] result<page<wallet>> list_wallets_in_group(const account_hash& account, group_id id, page_request p)   \
      const override;                                                                                                  \
  [[nodiscard]] result<uint64_t> wallet_count(const account_hash& account) const override;                             \
  [[nodiscard]] result<void> add_action(const write_context& w, const account_hash& account, const action& a)          \
      override;                                                                                                        \
  [[nodiscard]] result<action> update_action_metadata(const write_context& w, const account_hash& account,             \
                                                      const hash256& hashed_cid, std::string_view name,                \
                                                      std::string_view description) override;                          \
  [[nodiscard]] result<void> delete_action(const write_context& w, const account_hash& account,                        \
                                           const hash256& hashed_cid) override;                                        \
  [[nodiscard]] result<action> get_action(const account_hash& account, const hash256& hashed_cid) const override;      \
  [[nodiscard]] result<page<action>> list_actions(const account_hash& account, std::optional<group_id> group,          \
                                                  page_request p) const override;                                      \
  [[nodiscard]] result<std::vector<event>> events_after(uint64_t after, size_t limit) const override;
