// SPDX-License-Identifier: Apache-2.0
// `enact::chain::registry_client`: the permission registry (docs/protocol.md §3) in one call per function.
// Writes are EIP-1559 transactions signed by the client's `transaction_sender` (the owner's key:
// an account's admin wallet in ChainSecured mode), each waiting for its receipt; reads are
// `eth_call`s of the views, decoded into the registry's view structs. It speaks to any node where
// the registry is deployed — anvil, a public chain, or enact-server's embedded ledger at /rpc —
// with the same code (docs/architecture.md §5).
//
// Errors are those of rpc_client and transaction_sender, with one refinement: a revert is the
// registry's custom error as an `enact::error` whose code is the `registry_errc` (NotAdmin →
// registry_errc::not_admin, ...) and whose message names the function and the error's
// arguments and ends with the revert data (`revert_data(e)` reads it back). That holds for a
// view that reverts, for a write refused during gas estimation (nothing is sent), and for a
// write mined with status 0, whose reason is found by replaying the call with eth_call on the
// latest state (when the replay succeeds the failure stays rpc_errc::tx_failed). A write on a
// client built without a sender fails with std::errc::operation_not_permitted.
//
// Thread safety: as the rpc_client and transaction_sender it holds (both safe to share).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "enact/bytes.hpp"
#include "enact/chain/client.hpp"
#include "enact/chain/registry.hpp"
#include "enact/u256.hpp"
#include "enact/secret.hpp"
#include "enact/result.hpp"
#include "enact/scopes/scopes.hpp"

namespace enact::chain {

/// crypto::keccak256(abi.encodePacked(admin)): the apiKeyHash of an account that a wallet creates
/// on-chain itself (docs/protocol.md §1).
[[nodiscard]] hash256 chain_secured_account_hash(const address& admin);

/// A mined newAccount: the account's hash and the receipt.
struct account_created {
  hash256 account_hash{};
  receipt tx;
};

/// A mined addGroup: the id the registry assigned (from its GroupAdded log) and the receipt.
struct group_added {
  scopes::group_id group_id = 0;
  receipt tx;
};

class registry_client {
 public:
  /// Reads only: every write fails with std::errc::operation_not_permitted.
  registry_client(std::shared_ptr<const rpc_client> rpc, address registry);
  /// Reads and writes; `sender` signs and sends the writes (it should use the same `rpc`).
  registry_client(std::shared_ptr<const rpc_client> rpc, address registry, std::shared_ptr<transaction_sender> sender);
  /// A client whose writes are signed with `owner_key` (secp256k1_errc for an invalid key).
  [[nodiscard]] static result<registry_client> create(std::shared_ptr<const rpc_client> rpc, address registry,
                                                      Secret owner_key, sender_options options = {});

  [[nodiscard]] const address& registry() const noexcept { return registry_; }
  /// The address writes come from (nullopt for a read-only client).
  [[nodiscard]] std::optional<address> sender_address() const;

  // --- writes ---------------------------------------------------------------------------------
  /// Any registry call as a transaction (the typed methods below are built on it).
  [[nodiscard]] result<receipt> send(const registry::call& c);
  /// The same with a fixed gas limit and no estimation: a refused call is then mined with
  /// status 0 (and its reason found by the replay described above).
  [[nodiscard]] result<receipt> send(const registry::call& c, uint64_t gas_limit);

  /// newAccount(crypto::keccak256(abi.encodePacked(sender)), sender, managed = false, ...): the
  /// sender's own ChainSecured account.
  [[nodiscard]] result<account_created> new_account(std::string_view name, std::string_view description = {},
                                                    std::string_view email = {});
  /// convertToChainSecured: one-way; `new_admin` administers the account afterwards. Sent by the
  /// admin, `new_admin` must be the sender's own address (registry_errc::new_admin_not_sender
  /// otherwise: an account is handed to another wallet only with that wallet's consent, which
  /// the core service's /convert_to_chain_secured_account relays after checking the new admin's
  /// ConvertAccount envelope).
  [[nodiscard]] result<receipt> convert_to_chain_secured(const hash256& account, const address& new_admin);
  /// registerWalletDerivation: a PKP (minted by create_wallet_with_signature, or a usage key's
  /// wallet) joins the account's registry.
  [[nodiscard]] result<receipt> register_wallet_derivation(const hash256& account, const address& wallet,
                                                           const hash256& derivation_path, std::string_view name,
                                                           std::string_view description = {});
  /// setUsageApiKey, 7 arguments (no wallet recorded). `usage_key_hash` is keccak256 of the
  /// key's base64 text (docs/protocol.md §1).
  [[nodiscard]] result<receipt> set_usage_api_key(const hash256& account, const hash256& usage_key_hash,
                                                  const u256& expiration, const u256& balance, std::string_view name,
                                                  std::string_view description,
                                                  const scopes::permission_set& permissions);
  /// setUsageApiKey, 8 arguments: the same, recording the key's own wallet address.
  [[nodiscard]] result<receipt> set_usage_api_key(const hash256& account, const hash256& usage_key_hash,
                                                  const u256& expiration, const u256& balance, std::string_view name,
                                                  std::string_view description,
                                                  const scopes::permission_set& permissions, const address& wallet);
  [[nodiscard]] result<receipt> update_usage_api_key_metadata(const hash256& account, const hash256& usage_key_hash,
                                                              std::string_view name, std::string_view description);
  [[nodiscard]] result<receipt> remove_usage_api_key(const hash256& account, const hash256& usage_key_hash);
  /// addGroup; the new group's id comes from the receipt's GroupAdded log.
  [[nodiscard]] result<group_added> add_group(const hash256& account, std::string_view name,
                                              std::string_view description = {},
                                              const std::vector<address>& pkp_ids = {},
                                              const std::vector<hash256>& cid_hashes = {});
  /// updateGroup: replaces name, description and both sets.
  [[nodiscard]] result<receipt> update_group(const hash256& account, scopes::group_id group, std::string_view name,
                                             std::string_view description, const std::vector<address>& pkp_ids,
                                             const std::vector<hash256>& cid_hashes);
  [[nodiscard]] result<receipt> remove_group(const hash256& account, scopes::group_id group);
  [[nodiscard]] result<receipt> add_pkp_to_group(const hash256& account, scopes::group_id group, const address& pkp_id);
  [[nodiscard]] result<receipt> remove_pkp_from_group(const hash256& account, scopes::group_id group,
                                                      const address& pkp_id);
  /// addAction(account, crypto::keccak256(cid), cid, name, description).
  [[nodiscard]] result<receipt> add_action(const hash256& account, std::string_view cid, std::string_view name,
                                           std::string_view description = {});
  [[nodiscard]] result<receipt> add_action_to_group(const hash256& account, scopes::group_id group,
                                                    const hash256& hashed_cid);
  [[nodiscard]] result<receipt> remove_action_from_group(const hash256& account, scopes::group_id group,
                                                         const hash256& hashed_cid);
  [[nodiscard]] result<receipt> update_action_metadata(const hash256& account, const hash256& hashed_cid,
                                                       std::string_view name, std::string_view description);
  [[nodiscard]] result<receipt> delete_action(const hash256& account, const hash256& hashed_cid);

  // --- reads ----------------------------------------------------------------------------------
  /// Any view, decoded (the typed methods below are built on it).
  template <registry::call_with_result T>
  [[nodiscard]] result<typename T::result_type> view(const T& c) const {
    ENACT_TRY(const bytes out, call_data(registry::function_name(registry::call{c}), registry::encode(c)));
    return registry::decode_result<T>(out);
  }

  [[nodiscard]] result<address> owner() const;
  [[nodiscard]] result<std::vector<address>> api_payers() const;
  [[nodiscard]] result<bool> is_api_payer(const address& who) const;
  [[nodiscard]] result<registry::account_view> get_account(const hash256& account) const;
  [[nodiscard]] result<registry::account_view> account_by_admin(const address& admin) const;
  [[nodiscard]] result<registry::usage_key_view> get_usage_api_key(const hash256& usage_key_hash) const;
  [[nodiscard]] result<registry::list_page<registry::usage_key_view>> list_usage_api_keys(const hash256& account,
                                                                                          uint64_t offset = 0,
                                                                                          uint64_t limit = 100) const;
  [[nodiscard]] result<registry::group_view> get_group(const hash256& account, scopes::group_id group) const;
  [[nodiscard]] result<registry::list_page<registry::group_view>> list_groups(const hash256& account,
                                                                              uint64_t offset = 0,
                                                                              uint64_t limit = 100) const;
  [[nodiscard]] result<registry::wallet_view> get_wallet(const hash256& account, const address& wallet) const;
  [[nodiscard]] result<registry::list_page<registry::wallet_view>> list_wallets(const hash256& account,
                                                                                uint64_t offset = 0,
                                                                                uint64_t limit = 100) const;
  [[nodiscard]] result<registry::list_page<registry::wallet_view>> list_wallets_in_group(const hash256& account,
                                                                                         scopes::group_id group,
                                                                                         uint64_t offset = 0,
                                                                                         uint64_t limit = 100) const;
  [[nodiscard]] result<registry::action_view> get_action(const hash256& account, const hash256& hashed_cid) const;
  [[nodiscard]] result<registry::list_page<registry::action_view>> list_actions(const hash256& account,
                                                                                uint64_t offset = 0,
                                                                                uint64_t limit = 100) const;
  [[nodiscard]] result<registry::list_page<registry::action_view>> list_actions_in_group(const hash256& account,
                                                                                         scopes::group_id group,
                                                                                         uint64_t offset = 0,
                                                                                         uint64_t limit = 100) const;

 private:
  [[nodiscard]] result<receipt> send_with(const registry::call& c, std::optional<uint64_t> gas);
  /// eth_call of `data` on the registry (from the sender, when there is one); a revert becomes
  /// the registry error, its message prefixed with `function`.
  [[nodiscard]] result<bytes> call_data(std::string_view function, const bytes& data) const;

  std::shared_ptr<const rpc_client> rpc_;
  address registry_{};
  std::shared_ptr<transaction_sender> sender_;
};

}  // namespace enact::chain
