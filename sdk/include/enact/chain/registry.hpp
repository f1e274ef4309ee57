// SPDX-License-Identifier: Apache-2.0
// Bindings of the permission registry (contracts/IPermissionRegistry.sol): one
// struct per function call, view, event and custom error, each naming its canonical Solidity
// signature (`kSignature`, from which the selector or topic0 is computed with keccak-256), with
// typed ABI encoders and strict decoders. Calls: `encode(c)` writes selector ‖ arguments,
// `decode_call` turns any calldata into the `call` variant, `encode_result` / `decode_result`
// handle return data. Events: `encode_log` writes topics and data, `decode_log` reads them back
// with the arguments as JSON. Reverts: `encode_revert` writes a custom error, Error(string) or
// Panic(uint256), `decode_revert` classifies any revert data as a `registry_errc` (the errors are
// declared in registry_errors.hpp, which this header includes). Deployment:
// `creation_code` and `deployment_data` give the registry's code and constructor call.
//
// Value types: uint256 parameters that hold keccak-256 hashes (accountHash, usageKeyHash,
// hashedCid, cidHashes, derivationPath) are `hash256` (the 32 big-endian bytes of the word);
// group ids are `scopes::group_id` and a word above 2^64-1 is refused on decode
// (abi_errc::out_of_range); every other uint256 is `u256`. JSON forms (events, errors, and the
// JSON bridge of calls and results) are those of the embedded ledger's events: hashes and bytes
// as `0x` + lowercase hex, addresses as `0x` + 40 lowercase hex digits, group ids and uint256
// counters as JSON integers (a counter above 2^64-1 as a decimal string), permissions as
// `boost::json::value_from(scopes::permission_set)`, keys being the Solidity parameter names.
// Decoding failures are abi_errc codes: truncated, bad_offset, out_of_range, bad_padding, ...,
// selector_mismatch for an unknown selector or topic0, wrong_length for a wrong topic count,
// bad_value for JSON that does not fit.
#pragma once

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <array>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "enact/bytes.hpp"
#include "enact/chain/registry_errors.hpp"
#include "enact/codec/abi.hpp"
#include "enact/u256.hpp"
#include "enact/result.hpp"
#include "enact/scopes/scopes.hpp"

namespace enact::chain::registry {

using scopes::group_id;
using scopes::permission_set;

// =============================================================================================
// Views (the Solidity structs returned by the view functions)

struct account_view {  // AccountView
  hash256 account_hash{};
  address admin{};
  bool managed = false;
  std::string name;
  std::string description;
  std::string email;
  u256 created_at;
  u256 wallet_count;
  friend bool operator==(const account_view&, const account_view&) = default;
};

struct usage_key_view {  // UsageKeyView
  hash256 account_hash{};
  hash256 usage_key_hash{};
  address wallet{};
  u256 expiration;
  u256 balance;
  std::string name;
  std::string description;
  permission_set permissions;
  u256 created_at;
  friend bool operator==(const usage_key_view&, const usage_key_view&) = default;
};

struct group_view {  // GroupView
  scopes::group_id group_id = 0;
  std::string name;
  std::string description;
  std::vector<address> pkp_ids;
  std::vector<hash256> cid_hashes;
  friend bool operator==(const group_view&, const group_view&) = default;
};

struct wallet_view {  // WalletView
  address wallet{};
  hash256 derivation_path{};
  std::string name;
  std::string description;
  u256 created_at;
  friend bool operator==(const wallet_view&, const wallet_view&) = default;
};

struct action_view {  // ActionView
  hash256 hashed_cid{};
  std::string cid;
  std::string name;
  std::string description;
  u256 created_at;
  friend bool operator==(const action_view&, const action_view&) = default;
};

/// The `(T[] items, uint256 total)` return of the list functions; JSON `{"items", "total"}`.
template <class T>
struct list_page {
  std::vector<T> items;
  u256 total;
  friend bool operator==(const list_page&, const list_page&) = default;
};

// =============================================================================================
// Calls: one struct per function, fields in parameter order. `result_type` is what the function
// returns (void for none).

#define ENACT_REGISTRY_EQ(T) friend bool operator==(const T&, const T&) = default

// --- registry administration
struct owner_call {
  static constexpr std::string_view kSignature = "owner()";
  using result_type = address;
  ENACT_REGISTRY_EQ(owner_call);
};
struct api_payers_call {
  static constexpr std::string_view kSignature = "apiPayers()";
  using result_type = std::vector<address>;
  ENACT_REGISTRY_EQ(api_payers_call);
};
struct is_api_payer_call {
  static constexpr std::string_view kSignature = "isApiPayer(address)";
  using result_type = bool;
  address who{};
  ENACT_REGISTRY_EQ(is_api_payer_call);
};
struct set_api_payer_call {
  static constexpr std::string_view kSignature = "setApiPayer(address,bool)";
  using result_type = void;
  address payer{};
  bool allowed = false;
  ENACT_REGISTRY_EQ(set_api_payer_call);
};

// --- accounts
struct new_account_call {
  static constexpr std::string_view kSignature = "newAccount(uint256,address,bool,string,string,string)";
  using result_type = void;
  hash256 api_key_hash{};
  address admin{};
  bool managed = false;
  std::string name;
  std::string description;
  std::string email;
  ENACT_REGISTRY_EQ(new_account_call);
};
struct convert_to_chain_secured_call {
  static constexpr std::string_view kSignature = "convertToChainSecured(uint256,address)";
  using result_type = void;
  hash256 account_hash{};
  address new_admin{};
  ENACT_REGISTRY_EQ(convert_to_chain_secured_call);
};
struct get_account_call {
  static constexpr std::string_view kSignature = "getAccount(uint256)";
  using result_type = account_view;
  hash256 account_hash{};
  ENACT_REGISTRY_EQ(get_account_call);
};
struct account_by_admin_call {
  static constexpr std::string_view kSignature = "accountByAdmin(address)";
  using result_type = account_view;
  address admin{};
  ENACT_REGISTRY_EQ(account_by_admin_call);
};

// --- usage keys
/// setUsageApiKey with 7 arguments (the key's wallet is recorded as zero). JSON key of the
/// permissions: "p".
struct set_usage_api_key_call {
  static constexpr std::string_view kSignature =
      "setUsageApiKey(uint256,uint256,uint256,uint256,string,string,"
      "(bool,bool,bool,uint256[],uint256[],uint256[],uint256[]))";
  using result_type = void;
  hash256 account_hash{};
  hash256 usage_key_hash{};
  u256 expiration;
  u256 balance;
  std::string name;
  std::string description;
  permission_set permissions;
  ENACT_REGISTRY_EQ(set_usage_api_key_call);
};
/// setUsageApiKey with 8 arguments: the same, recording the key's own wallet address.
struct set_usage_api_key_with_wallet_call {
  static constexpr std::string_view kSignature =
      "setUsageApiKey(uint256,uint256,uint256,uint256,string,string,"
      "(bool,bool,bool,uint256[],uint256[],uint256[],uint256[]),address)";
  using result_type = void;
  hash256 account_hash{};
  hash256 usage_key_hash{};
  u256 expiration;
  u256 balance;
  std::string name;
  std::string description;
  permission_set permissions;
  address wallet{};
  ENACT_REGISTRY_EQ(set_usage_api_key_with_wallet_call);
};
struct update_usage_api_key_metadata_call {
  static constexpr std::string_view kSignature = "updateUsageApiKeyMetadata(uint256,uint256,string,string)";
  using result_type = void;
  hash256 account_hash{};
  hash256 usage_key_hash{};
  std::string name;
  std::string description;
  ENACT_REGISTRY_EQ(update_usage_api_key_metadata_call);
};
struct remove_usage_api_key_call {
  static constexpr std::string_view kSignature = "removeUsageApiKey(uint256,uint256)";
  using result_type = void;
  hash256 account_hash{};
  hash256 usage_key_hash{};
  ENACT_REGISTRY_EQ(remove_usage_api_key_call);
};
struct get_usage_api_key_call {
  static constexpr std::string_view kSignature = "getUsageApiKey(uint256)";
  using result_type = usage_key_view;
  hash256 usage_key_hash{};
  ENACT_REGISTRY_EQ(get_usage_api_key_call);
};
struct list_usage_api_keys_call {
  static constexpr std::string_view kSignature = "listUsageApiKeys(uint256,uint256,uint256)";
  using result_type = list_page<usage_key_view>;
  hash256 account_hash{};
  u256 offset;
  u256 limit;
  ENACT_REGISTRY_EQ(list_usage_api_keys_call);
};

// --- groups
struct add_group_call {
  static constexpr std::string_view kSignature = "addGroup(uint256,string,string,address[],uint256[])";
  using result_type = group_id;
  hash256 account_hash{};
  std::string name;
  std::string description;
  std::vector<address> pkp_ids;
  std::vector<hash256> cid_hashes;
  ENACT_REGISTRY_EQ(add_group_call);
};
struct update_group_call {
  static constexpr std::string_view kSignature = "updateGroup(uint256,uint256,string,string,address[],uint256[])";
  using result_type = void;
  hash256 account_hash{};
  scopes::group_id group_id = 0;
  std::string name;
  std::string description;
  std::vector<address> pkp_ids;
  std::vector<hash256> cid_hashes;
  ENACT_REGISTRY_EQ(update_group_call);
};
struct remove_group_call {
  static constexpr std::string_view kSignature = "removeGroup(uint256,uint256)";
  using result_type = void;
  hash256 account_hash{};
  scopes::group_id group_id = 0;
  ENACT_REGISTRY_EQ(remove_group_call);
};
struct add_pkp_to_group_call {
  static constexpr std::string_view kSignature = "addPkpToGroup(uint256,uint256,address)";
  using result_type = void;
  hash256 account_hash{};
  scopes::group_id group_id = 0;
  address pkp_id{};
  ENACT_REGISTRY_EQ(add_pkp_to_group_call);
};
struct remove_pkp_from_group_call {
  static constexpr std::string_view kSignature = "removePkpFromGroup(uint256,uint256,address)";
  using result_type = void;
  hash256 account_hash{};
  scopes::group_id group_id = 0;
  address pkp_id{};
  ENACT_REGISTRY_EQ(remove_pkp_from_group_call);
};
struct add_action_to_group_call {
  static constexpr std::string_view kSignature = "addActionToGroup(uint256,uint256,uint256)";
  using result_type = void;
  hash256 account_hash{};
  scopes::group_id group_id = 0;
  hash256 hashed_cid{};
  ENACT_REGISTRY_EQ(add_action_to_group_call);
};
struct remove_action_from_group_call {
  static constexpr std::string_view kSignature = "removeActionFromGroup(uint256,uint256,uint256)";
  using result_type = void;
  hash256 account_hash{};
  scopes::group_id group_id = 0;
  hash256 hashed_cid{};
  ENACT_REGISTRY_EQ(remove_action_from_group_call);
};
struct get_group_call {
  static constexpr std::string_view kSignature = "getGroup(uint256,uint256)";
  using result_type = group_view;
  hash256 account_hash{};
  scopes::group_id group_id = 0;
  ENACT_REGISTRY_EQ(get_group_call);
};
struct list_groups_call {
  static constexpr std::string_view kSignature = "listGroups(uint256,uint256,uint256)";
  using result_type = list_page<group_view>;
  hash256 account_hash{};
  u256 offset;
  u256 limit;
  ENACT_REGISTRY_EQ(list_groups_call);
};

// --- PKP registry
struct register_wallet_derivation_call {
  static constexpr std::string_view kSignature = "registerWalletDerivation(uint256,address,uint256,string,string)";
  using result_type = void;
  hash256 admin_hash{};  // the account's hash (the Solidity parameter is named adminHash)
  address wallet{};
  hash256 derivation_path{};
  std::string name;
  std::string description;
  ENACT_REGISTRY_EQ(register_wallet_derivation_call);
};
struct get_wallet_call {
  static constexpr std::string_view kSignature = "getWallet(uint256,address)";
  using result_type = wallet_view;
  hash256 account_hash{};
  address wallet{};
  ENACT_REGISTRY_EQ(get_wallet_call);
};
struct list_wallets_call {
  static constexpr std::string_view kSignature = "listWallets(uint256,uint256,uint256)";
  using result_type = list_page<wallet_view>;
  hash256 account_hash{};
  u256 offset;
  u256 limit;
  ENACT_REGISTRY_EQ(list_wallets_call);
};
struct list_wallets_in_group_call {
  static constexpr std::string_view kSignature = "listWalletsInGroup(uint256,uint256,uint256,uint256)";
  using result_type = list_page<wallet_view>;
  hash256 account_hash{};
  scopes::group_id group_id = 0;
  u256 offset;
  u256 limit;
  ENACT_REGISTRY_EQ(list_wallets_in_group_call);
};

// --- actions
struct add_action_call {
  static constexpr std::string_view kSignature = "addAction(uint256,uint256,string,string,string)";
  using result_type = void;
  hash256 account_hash{};
  hash256 hashed_cid{};
  std::string cid;
  std::string name;
  std::string description;
  ENACT_REGISTRY_EQ(add_action_call);
};
struct update_action_metadata_call {
  static constexpr std::string_view kSignature = "updateActionMetadata(uint256,uint256,string,string)";
  using result_type = void;
  hash256 account_hash{};
  hash256 hashed_cid{};
  std::string name;
  std::string description;
  ENACT_REGISTRY_EQ(update_action_metadata_call);
};
struct delete_action_call {
  static constexpr std::string_view kSignature = "deleteAction(uint256,uint256)";
  using result_type = void;
  hash256 account_hash{};
  hash256 hashed_cid{};
  ENACT_REGISTRY_EQ(delete_action_call);
};
struct get_action_call {
  static constexpr std::string_view kSignature = "getAction(uint256,uint256)";
  using result_type = action_view;
  hash256 account_hash{};
  hash256 hashed_cid{};
  ENACT_REGISTRY_EQ(get_action_call);
};
struct list_actions_call {
  static constexpr std::string_view kSignature = "listActions(uint256,uint256,uint256)";
  using result_type = list_page<action_view>;
  hash256 account_hash{};
  u256 offset;
  u256 limit;
  ENACT_REGISTRY_EQ(list_actions_call);
};
struct list_actions_in_group_call {
  static constexpr std::string_view kSignature = "listActionsInGroup(uint256,uint256,uint256,uint256)";
  using result_type = list_page<action_view>;
  hash256 account_hash{};
  scopes::group_id group_id = 0;
  u256 offset;
  u256 limit;
  ENACT_REGISTRY_EQ(list_actions_in_group_call);
};

// --- batching
struct multicall_call {
  static constexpr std::string_view kSignature = "multicall(bytes[])";
  using result_type = std::vector<bytes>;
  std::vector<bytes> calls;  // each a complete calldata (selector ‖ arguments)
  ENACT_REGISTRY_EQ(multicall_call);
};

/// Any registry call, in the order of IPermissionRegistry.sol.
using call =
    std::variant<owner_call, api_payers_call, is_api_payer_call, set_api_payer_call, new_account_call,
                 convert_to_chain_secured_call, get_account_call, account_by_admin_call, set_usage_api_key_call,
                 set_usage_api_key_with_wallet_call, update_usage_api_key_metadata_call, remove_usage_api_key_call,
                 get_usage_api_key_call, list_usage_api_keys_call, add_group_call, update_group_call, remove_group_call,
                 add_pkp_to_group_call, remove_pkp_from_group_call, add_action_to_group_call,
                 remove_action_from_group_call, get_group_call, list_groups_call, register_wallet_derivation_call,
                 get_wallet_call, list_wallets_call, list_wallets_in_group_call, add_action_call,
                 update_action_metadata_call, delete_action_call, get_action_call, list_actions_call,
                 list_actions_in_group_call, multicall_call>;

/// One of the call structs above.
template <class T>
concept call_type = detail::is_alternative<T, call>::value;
/// A call whose function returns something.
template <class T>
concept call_with_result = call_type<T> && !std::is_void_v<typename T::result_type>;

/// First 4 bytes of crypto::keccak256(T::kSignature).
template <call_type T>
[[nodiscard]] const std::array<uint8_t, 4>& selector();

/// selector ‖ ABI-encoded arguments: the transaction or eth_call data.
template <call_type T>
[[nodiscard]] bytes encode(const T& c);
[[nodiscard]] bytes encode(const call& c);

/// Decodes calldata of function T (abi_errc::selector_mismatch for another function).
template <call_type T>
[[nodiscard]] result<T> decode(bytes_view calldata);
/// Decodes calldata of any registry function (abi_errc::selector_mismatch for an unknown
/// selector, abi_errc::truncated below 4 bytes).
[[nodiscard]] result<call> decode_call(bytes_view calldata);

/// The function's name ("setUsageApiKey") and canonical signature.
[[nodiscard]] std::string_view function_name(const call& c);
[[nodiscard]] std::string_view signature(const call& c);

/// The arguments as a JSON object keyed by the Solidity parameter names.
[[nodiscard]] boost::json::object to_json(const call& c);
/// The inverse of to_json: `function` is a name ("getGroup") or a canonical signature; an
/// overloaded name (setUsageApiKey) is resolved by the keys present. Every parameter is
/// required and no other key is allowed.
[[nodiscard]] result<call> call_from_json(std::string_view function, const boost::json::object& args);

/// Return data of function T (what eth_call answers).
template <call_with_result T>
[[nodiscard]] bytes encode_result(const typename T::result_type& value);
template <call_with_result T>
[[nodiscard]] result<typename T::result_type> decode_result(bytes_view return_data);
/// JSON of a return value: the value's JSON, `{"items", "total"}` for the list functions.
template <call_with_result T>
[[nodiscard]] boost::json::value result_to_json(const typename T::result_type& value);
template <call_with_result T>
[[nodiscard]] result<typename T::result_type> result_from_json(const boost::json::value& v);

// =============================================================================================
// Events: the first field is the indexed one (topic 1), the others are the log's data.

struct account_created_event {
  static constexpr std::string_view kSignature = "AccountCreated(uint256,address,bool,string,string)";
  hash256 account_hash{};
  address admin_wallet_address{};
  bool managed = false;
  std::string name;
  std::string description;
  ENACT_REGISTRY_EQ(account_created_event);
};
struct account_converted_event {
  static constexpr std::string_view kSignature = "AccountConverted(uint256,address,address)";
  hash256 account_hash{};
  address previous_admin{};
  address new_admin{};
  ENACT_REGISTRY_EQ(account_converted_event);
};
struct usage_api_key_set_event {
  static constexpr std::string_view kSignature =
      "UsageApiKeySet(uint256,uint256,address,uint256,uint256,string,string,"
      "(bool,bool,bool,uint256[],uint256[],uint256[],uint256[]))";
  hash256 account_hash{};
  hash256 usage_key_hash{};
  address wallet{};
  u256 expiration;
  u256 balance;
  std::string name;
  std::string description;
  permission_set permissions;
  ENACT_REGISTRY_EQ(usage_api_key_set_event);
};
struct usage_api_key_metadata_updated_event {
  static constexpr std::string_view kSignature = "UsageApiKeyMetadataUpdated(uint256,uint256,string,string)";
  hash256 account_hash{};
  hash256 usage_key_hash{};
  std::string name;
  std::string description;
  ENACT_REGISTRY_EQ(usage_api_key_metadata_updated_event);
};
struct usage_api_key_removed_event {
  static constexpr std::string_view kSignature = "UsageApiKeyRemoved(uint256,uint256)";
  hash256 account_hash{};
  hash256 usage_key_hash{};
  ENACT_REGISTRY_EQ(usage_api_key_removed_event);
};
struct group_added_event {
  static constexpr std::string_view kSignature = "GroupAdded(uint256,uint256,string,string,address[],uint256[])";
  hash256 account_hash{};
  scopes::group_id group_id = 0;
  std::string name;
  std::string description;
  std::vector<address> pkp_ids;
  std::vector<hash256> cid_hashes;
  ENACT_REGISTRY_EQ(group_added_event);
};
struct group_updated_event {
  static constexpr std::string_view kSignature = "GroupUpdated(uint256,uint256,string,string,address[],uint256[])";
  hash256 account_hash{};
  scopes::group_id group_id = 0;
  std::string name;
  std::string description;
  std::vector<address> pkp_ids;
  std::vector<hash256> cid_hashes;
  ENACT_REGISTRY_EQ(group_updated_event);
};
struct group_removed_event {
  static constexpr std::string_view kSignature = "GroupRemoved(uint256,uint256)";
  hash256 account_hash{};
  scopes::group_id group_id = 0;
  ENACT_REGISTRY_EQ(group_removed_event);
};
struct pkp_added_to_group_event {
  static constexpr std::string_view kSignature = "PkpAddedToGroup(uint256,uint256,address)";
  hash256 account_hash{};
  scopes::group_id group_id = 0;
  address pkp_id{};
  ENACT_REGISTRY_EQ(pkp_added_to_group_event);
};
struct pkp_removed_from_group_event {
  static constexpr std::string_view kSignature = "PkpRemovedFromGroup(uint256,uint256,address)";
  hash256 account_hash{};
  scopes::group_id group_id = 0;
  address pkp_id{};
  ENACT_REGISTRY_EQ(pkp_removed_from_group_event);
};
struct action_added_to_group_event {
  static constexpr std::string_view kSignature = "ActionAddedToGroup(uint256,uint256,uint256)";
  hash256 account_hash{};
  scopes::group_id group_id = 0;
  hash256 hashed_cid{};
  ENACT_REGISTRY_EQ(action_added_to_group_event);
};
struct action_removed_from_group_event {
  static constexpr std::string_view kSignature = "ActionRemovedFromGroup(uint256,uint256,uint256)";
  hash256 account_hash{};
  scopes::group_id group_id = 0;
  hash256 hashed_cid{};
  ENACT_REGISTRY_EQ(action_removed_from_group_event);
};
struct wallet_derivation_registered_event {
  static constexpr std::string_view kSignature = "WalletDerivationRegistered(uint256,address,uint256,string,string)";
  hash256 account_hash{};
  address wallet{};
  hash256 derivation_path{};
  std::string name;
  std::string description;
  ENACT_REGISTRY_EQ(wallet_derivation_registered_event);
};
struct action_added_event {
  static constexpr std::string_view kSignature = "ActionAdded(uint256,uint256,string,string,string)";
  hash256 account_hash{};
  hash256 hashed_cid{};
  std::string cid;
  std::string name;
  std::string description;
  ENACT_REGISTRY_EQ(action_added_event);
};
struct action_metadata_updated_event {
  static constexpr std::string_view kSignature = "ActionMetadataUpdated(uint256,uint256,string,string)";
  hash256 account_hash{};
  hash256 hashed_cid{};
  std::string name;
  std::string description;
  ENACT_REGISTRY_EQ(action_metadata_updated_event);
};
struct action_deleted_event {
  static constexpr std::string_view kSignature = "ActionDeleted(uint256,uint256)";
  hash256 account_hash{};
  hash256 hashed_cid{};
  ENACT_REGISTRY_EQ(action_deleted_event);
};
/// Registry administration log: indexed by the payer, not by an account.
struct api_payer_set_event {
  static constexpr std::string_view kSignature = "ApiPayerSet(address,bool)";
  address payer{};
  bool allowed = false;
  ENACT_REGISTRY_EQ(api_payer_set_event);
};

#undef ENACT_REGISTRY_EQ

using any_event =
    std::variant<account_created_event, account_converted_event, usage_api_key_set_event,
                 usage_api_key_metadata_updated_event, usage_api_key_removed_event, group_added_event,
                 group_updated_event, group_removed_event, pkp_added_to_group_event, pkp_removed_from_group_event,
                 action_added_to_group_event, action_removed_from_group_event, wallet_derivation_registered_event,
                 action_added_event, action_metadata_updated_event, action_deleted_event, api_payer_set_event>;

template <class T>
concept event_type = detail::is_alternative<T, any_event>::value;

/// A log as the chain stores it: topics (topic0 = crypto::keccak256(signature), then the indexed
/// argument) and the ABI-encoded other arguments.
struct encoded_log {
  std::vector<hash256> topics;
  bytes data;
  friend bool operator==(const encoded_log&, const encoded_log&) = default;
};

/// A decoded registry log.
struct event {
  std::string name;                     // "UsageApiKeySet"
  std::optional<hash256> account_hash;  // the indexed accountHash (absent for ApiPayerSet)
  boost::json::object args;             // every argument, indexed ones included
  any_event value;
};

/// crypto::keccak256(T::kSignature).
template <event_type T>
[[nodiscard]] const hash256& topic0();

template <event_type T>
[[nodiscard]] encoded_log encode_log(const T& e);
[[nodiscard]] encoded_log encode_log(const any_event& e);
/// From an event name and its JSON arguments (as decode_log gives them, and as the embedded
/// ledger records its events): every parameter required, no other key.
[[nodiscard]] result<encoded_log> encode_log(std::string_view name, const boost::json::object& args);

/// Decodes a registry log (abi_errc::selector_mismatch for a topic0 the registry does not emit,
/// abi_errc::wrong_length for a topic count other than 2).
[[nodiscard]] result<event> decode_log(std::span<const hash256> topics, bytes_view data);

[[nodiscard]] std::string_view event_name(const any_event& e);
[[nodiscard]] boost::json::object to_json(const any_event& e);
[[nodiscard]] result<any_event> event_from_json(std::string_view name, const boost::json::object& args);

// =============================================================================================
// Deployment: the registry's code from the committed build artifact
// (contracts/build/PermissionRegistry.json, checked against the Solidity sources by
// `node build.mjs --check`), compiled into the SDK when it is configured.

/// The creation code (the artifact's "bytecode"): what a deploying transaction runs, followed by
/// the constructor arguments.
[[nodiscard]] const bytes& creation_code();
/// The runtime code (the artifact's "deployedBytecode"): what eth_getCode answers at the address
/// of a registry deployed from creation_code().
[[nodiscard]] const bytes& runtime_code();
/// The solc version the artifact was compiled with ("0.8.37+commit.…").
[[nodiscard]] std::string_view compiler_version();

/// The data of the deploying transaction: creation_code() ‖ abi.encode(address[] apiPayers), the
/// constructor `constructor(address[] apiPayers)`; the sender becomes the registry's owner.
[[nodiscard]] bytes deployment_data(std::span<const address> api_payers);

}  // namespace enact::chain::registry
