// SPDX-License-Identifier: Apache-2.0
// The registry's descriptions, shared by registry.cpp (the ABI side and the dispatch tables) and
// registry_json.cpp (the JSON bridge). Every struct of registry.hpp is described once, below, by
// its fields (member and Solidity parameter name); the ABI type of each field follows from its
// C++ type (hash256, u256 and group_id are uint256, vectors are T[], described structs are
// tuples), and the same description drives the ABI encoder, the strict decoder and the JSON
// bridge. The canonical signature derived from the fields is compared with the struct's
// kSignature the first time its selector or topic is computed, so a field list that drifts from
// the interface cannot go unnoticed.
#pragma once

#include <boost/json.hpp>

#include <algorithm>
#include <array>
#include <optional>
#include <cstring>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "enact/chain/registry.hpp"
#include "enact/codec/hex.hpp"
#include "enact/address.hpp"
#include "enact/crypto/keccak.hpp"

namespace enact::chain::registry::detail {

namespace json = boost::json;

// ---------------------------------------------------------------------------------------------
// Descriptions

template <class S, class M>
struct field {
  using type = M;
  std::string_view name;  // the Solidity parameter or component name
  M S::*member;
  std::string_view member_name;  // the C++ member's name, checked against `name`
};

template <class S>
struct schema;

template <class S>
concept described = requires {
  schema<S>::fields;
};

#define ENACT_SCHEMA(S, ...)                                     \
  template <>                                                    \
  struct schema<S> {                                             \
    using self = S;                                              \
    static constexpr auto fields = std::make_tuple(__VA_ARGS__); \
  }
#define ENACT_F(member, name) \
  field<self, decltype(self::member)> { name, &self::member, #member }

// Solidity struct Permissions (JSON: value_from(permission_set), see the file comment of
// registry.hpp; the names here serve the ABI error messages).
ENACT_SCHEMA(permission_set, ENACT_F(can_create_groups, "canCreateGroups"),
             ENACT_F(can_delete_groups, "canDeleteGroups"), ENACT_F(can_create_pkps, "canCreatePkps"),
             ENACT_F(manage_ipfs_ids_in_groups, "manageIpfsIdsInGroups"), ENACT_F(add_pkp_to_groups, "addPkpToGroups"),
             ENACT_F(remove_pkp_from_groups, "removePkpFromGroups"), ENACT_F(execute_in_groups, "executeInGroups"));

// Views.
ENACT_SCHEMA(account_view, ENACT_F(account_hash, "accountHash"), ENACT_F(admin, "admin"), ENACT_F(managed, "managed"),
             ENACT_F(name, "name"), ENACT_F(description, "description"), ENACT_F(email, "email"),
             ENACT_F(created_at, "createdAt"), ENACT_F(wallet_count, "walletCount"));
ENACT_SCHEMA(usage_key_view, ENACT_F(account_hash, "accountHash"), ENACT_F(usage_key_hash, "usageKeyHash"),
             ENACT_F(wallet, "wallet"), ENACT_F(expiration, "expiration"), ENACT_F(balance, "balance"),
             ENACT_F(name, "name"), ENACT_F(description, "description"), ENACT_F(permissions, "permissions"),
             ENACT_F(created_at, "createdAt"));
ENACT_SCHEMA(group_view, ENACT_F(group_id, "groupId"), ENACT_F(name, "name"), ENACT_F(description, "description"),
             ENACT_F(pkp_ids, "pkpIds"), ENACT_F(cid_hashes, "cidHashes"));
ENACT_SCHEMA(wallet_view, ENACT_F(wallet, "wallet"), ENACT_F(derivation_path, "derivationPath"), ENACT_F(name, "name"),
             ENACT_F(description, "description"), ENACT_F(created_at, "createdAt"));
ENACT_SCHEMA(action_view, ENACT_F(hashed_cid, "hashedCid"), ENACT_F(cid, "cid"), ENACT_F(name, "name"),
             ENACT_F(description, "description"), ENACT_F(created_at, "createdAt"));

// Calls.
ENACT_SCHEMA(owner_call);
ENACT_SCHEMA(api_payers_call);
ENACT_SCHEMA(is_api_payer_call, ENACT_F(who, "who"));
ENACT_SCHEMA(set_api_payer_call, ENACT_F(payer, "payer"), ENACT_F(allowed, "allowed"));
ENACT_SCHEMA(new_account_call, ENACT_F(api_key_hash, "apiKeyHash"), ENACT_F(admin, "admin"),
             ENACT_F(managed, "managed"), ENACT_F(name, "name"), ENACT_F(description, "description"),
             ENACT_F(email, "email"));
ENACT_SCHEMA(convert_to_chain_secured_call, ENACT_F(account_hash, "accountHash"), ENACT_F(new_admin, "newAdmin"));
ENACT_SCHEMA(get_account_call, ENACT_F(account_hash, "accountHash"));
ENACT_SCHEMA(account_by_admin_call, ENACT_F(admin, "admin"));
ENACT_SCHEMA(set_usage_api_key_call, ENACT_F(account_hash, "accountHash"), ENACT_F(usage_key_hash, "usageKeyHash"),
             ENACT_F(expiration, "expiration"), ENACT_F(balance, "balance"), ENACT_F(name, "name"),
             ENACT_F(description, "description"), ENACT_F(permissions, "p"));
ENACT_SCHEMA(set_usage_api_key_with_wallet_call, ENACT_F(account_hash, "accountHash"),
             ENACT_F(usage_key_hash, "usageKeyHash"), ENACT_F(expiration, "expiration"), ENACT_F(balance, "balance"),
             ENACT_F(name, "name"), ENACT_F(description, "description"), ENACT_F(permissions, "p"),
             ENACT_F(wallet, "wallet"));
ENACT_SCHEMA(update_usage_api_key_metadata_call, ENACT_F(account_hash, "accountHash"),
             ENACT_F(usage_key_hash, "usageKeyHash"), ENACT_F(name, "name"), ENACT_F(description, "description"));
ENACT_SCHEMA(remove_usage_api_key_call, ENACT_F(account_hash, "accountHash"), ENACT_F(usage_key_hash, "usageKeyHash"));
ENACT_SCHEMA(get_usage_api_key_call, ENACT_F(usage_key_hash, "usageKeyHash"));
ENACT_SCHEMA(list_usage_api_keys_call, ENACT_F(account_hash, "accountHash"), ENACT_F(offset, "offset"),
             ENACT_F(limit, "limit"));
ENACT_SCHEMA(add_group_call, ENACT_F(account_hash, "accountHash"), ENACT_F(name, "name"),
             ENACT_F(description, "description"), ENACT_F(pkp_ids, "pkpIds"), ENACT_F(cid_hashes, "cidHashes"));
ENACT_SCHEMA(update_group_call, ENACT_F(account_hash, "accountHash"), ENACT_F(group_id, "groupId"),
             ENACT_F(name, "name"), ENACT_F(description, "description"), ENACT_F(pkp_ids, "pkpIds"),
             ENACT_F(cid_hashes, "cidHashes"));
ENACT_SCHEMA(remove_group_call, ENACT_F(account_hash, "accountHash"), ENACT_F(group_id, "groupId"));
ENACT_SCHEMA(add_pkp_to_group_call, ENACT_F(account_hash, "accountHash"), ENACT_F(group_id, "groupId"),
             ENACT_F(pkp_id, "pkpId"));
ENACT_SCHEMA(remove_pkp_from_group_call, ENACT_F(account_hash, "accountHash"), ENACT_F(group_id, "groupId"),
             ENACT_F(pkp_id, "pkpId"));
ENACT_SCHEMA(add_action_to_group_call, ENACT_F(account_hash, "accountHash"), ENACT_F(group_id, "groupId"),
             ENACT_F(hashed_cid, "hashedCid"));
ENACT_SCHEMA(remove_action_from_group_call, ENACT_F(account_hash, "accountHash"), ENACT_F(group_id, "groupId"),
             ENACT_F(hashed_cid, "hashedCid"));
ENACT_SCHEMA(get_group_call, ENACT_F(account_hash, "accountHash"), ENACT_F(group_id, "groupId"));
ENACT_SCHEMA(list_groups_call, ENACT_F(account_hash, "accountHash"), ENACT_F(offset, "offset"),
             ENACT_F(limit, "limit"));
ENACT_SCHEMA(register_wallet_derivation_call, ENACT_F(admin_hash, "adminHash"), ENACT_F(wallet, "wallet"),
             ENACT_F(derivation_path, "derivationPath"), ENACT_F(name, "name"), ENACT_F(description, "description"));
ENACT_SCHEMA(get_wallet_call, ENACT_F(account_hash, "accountHash"), ENACT_F(wallet, "wallet"));
ENACT_SCHEMA(list_wallets_call, ENACT_F(account_hash, "accountHash"), ENACT_F(offset, "offset"),
             ENACT_F(limit, "limit"));
ENACT_SCHEMA(list_wallets_in_group_call, ENACT_F(account_hash, "accountHash"), ENACT_F(group_id, "groupId"),
             ENACT_F(offset, "offset"), ENACT_F(limit, "limit"));
ENACT_SCHEMA(add_action_call, ENACT_F(account_hash, "accountHash"), ENACT_F(hashed_cid, "hashedCid"),
             ENACT_F(cid, "cid"), ENACT_F(name, "name"), ENACT_F(description, "description"));
ENACT_SCHEMA(update_action_metadata_call, ENACT_F(account_hash, "accountHash"), ENACT_F(hashed_cid, "hashedCid"),
             ENACT_F(name, "name"), ENACT_F(description, "description"));
ENACT_SCHEMA(delete_action_call, ENACT_F(account_hash, "accountHash"), ENACT_F(hashed_cid, "hashedCid"));
ENACT_SCHEMA(get_action_call, ENACT_F(account_hash, "accountHash"), ENACT_F(hashed_cid, "hashedCid"));
ENACT_SCHEMA(list_actions_call, ENACT_F(account_hash, "accountHash"), ENACT_F(offset, "offset"),
             ENACT_F(limit, "limit"));
ENACT_SCHEMA(list_actions_in_group_call, ENACT_F(account_hash, "accountHash"), ENACT_F(group_id, "groupId"),
             ENACT_F(offset, "offset"), ENACT_F(limit, "limit"));
ENACT_SCHEMA(multicall_call, ENACT_F(calls, "calls"));

// Events (first field indexed).
ENACT_SCHEMA(account_created_event, ENACT_F(account_hash, "accountHash"),
             ENACT_F(admin_wallet_address, "adminWalletAddress"), ENACT_F(managed, "managed"), ENACT_F(name, "name"),
             ENACT_F(description, "description"));
ENACT_SCHEMA(account_converted_event, ENACT_F(account_hash, "accountHash"), ENACT_F(previous_admin, "previousAdmin"),
             ENACT_F(new_admin, "newAdmin"));
ENACT_SCHEMA(usage_api_key_set_event, ENACT_F(account_hash, "accountHash"), ENACT_F(usage_key_hash, "usageKeyHash"),
             ENACT_F(wallet, "wallet"), ENACT_F(expiration, "expiration"), ENACT_F(balance, "balance"),
             ENACT_F(name, "name"), ENACT_F(description, "description"), ENACT_F(permissions, "permissions"));
ENACT_SCHEMA(usage_api_key_metadata_updated_event, ENACT_F(account_hash, "accountHash"),
             ENACT_F(usage_key_hash, "usageKeyHash"), ENACT_F(name, "name"), ENACT_F(description, "description"));
ENACT_SCHEMA(usage_api_key_removed_event, ENACT_F(account_hash, "accountHash"),
             ENACT_F(usage_key_hash, "usageKeyHash"));
ENACT_SCHEMA(group_added_event, ENACT_F(account_hash, "accountHash"), ENACT_F(group_id, "groupId"),
             ENACT_F(name, "name"), ENACT_F(description, "description"), ENACT_F(pkp_ids, "pkpIds"),
             ENACT_F(cid_hashes, "cidHashes"));
ENACT_SCHEMA(group_updated_event, ENACT_F(account_hash, "accountHash"), ENACT_F(group_id, "groupId"),
             ENACT_F(name, "name"), ENACT_F(description, "description"), ENACT_F(pkp_ids, "pkpIds"),
             ENACT_F(cid_hashes, "cidHashes"));
ENACT_SCHEMA(group_removed_event, ENACT_F(account_hash, "accountHash"), ENACT_F(group_id, "groupId"));
ENACT_SCHEMA(pkp_added_to_group_event, ENACT_F(account_hash, "accountHash"), ENACT_F(group_id, "groupId"),
             ENACT_F(pkp_id, "pkpId"));
ENACT_SCHEMA(pkp_removed_from_group_event, ENACT_F(account_hash, "accountHash"), ENACT_F(group_id, "groupId"),
             ENACT_F(pkp_id, "pkpId"));
ENACT_SCHEMA(action_added_to_group_event, ENACT_F(account_hash, "accountHash"), ENACT_F(group_id, "groupId"),
             ENACT_F(hashed_cid, "hashedCid"));
ENACT_SCHEMA(action_removed_from_group_event, ENACT_F(account_hash, "accountHash"), ENACT_F(group_id, "groupId"),
             ENACT_F(hashed_cid, "hashedCid"));
ENACT_SCHEMA(wallet_derivation_registered_event, ENACT_F(account_hash, "accountHash"), ENACT_F(wallet, "wallet"),
             ENACT_F(derivation_path, "derivationPath"), ENACT_F(name, "name"), ENACT_F(description, "description"));
ENACT_SCHEMA(action_added_event, ENACT_F(account_hash, "accountHash"), ENACT_F(hashed_cid, "hashedCid"),
             ENACT_F(cid, "cid"), ENACT_F(name, "name"), ENACT_F(description, "description"));
ENACT_SCHEMA(action_metadata_updated_event, ENACT_F(account_hash, "accountHash"), ENACT_F(hashed_cid, "hashedCid"),
             ENACT_F(name, "name"), ENACT_F(description, "description"));
ENACT_SCHEMA(action_deleted_event, ENACT_F(account_hash, "accountHash"), ENACT_F(hashed_cid, "hashedCid"));
ENACT_SCHEMA(api_payer_set_event, ENACT_F(payer, "payer"), ENACT_F(allowed, "allowed"));

// Errors.
ENACT_SCHEMA(not_admin_error, ENACT_F(account_hash, "accountHash"), ENACT_F(sender, "sender"));
ENACT_SCHEMA(relay_not_allowed_error, ENACT_F(account_hash, "accountHash"), ENACT_F(sender, "sender"));
ENACT_SCHEMA(already_unmanaged_error, ENACT_F(account_hash, "accountHash"));
ENACT_SCHEMA(unknown_account_error, ENACT_F(account_hash, "accountHash"));
ENACT_SCHEMA(unknown_usage_key_error, ENACT_F(account_hash, "accountHash"), ENACT_F(usage_key_hash, "usageKeyHash"));
ENACT_SCHEMA(unknown_group_error, ENACT_F(account_hash, "accountHash"), ENACT_F(group_id, "groupId"));
ENACT_SCHEMA(unknown_wallet_error, ENACT_F(account_hash, "accountHash"), ENACT_F(wallet, "wallet"));
ENACT_SCHEMA(unknown_action_error, ENACT_F(account_hash, "accountHash"), ENACT_F(hashed_cid, "hashedCid"));
ENACT_SCHEMA(duplicate_error, ENACT_F(what, "what"));
ENACT_SCHEMA(invalid_argument_error, ENACT_F(reason, "reason"));
ENACT_SCHEMA(not_owner_error, ENACT_F(sender, "sender"));
ENACT_SCHEMA(account_hash_not_canonical_error, ENACT_F(api_key_hash, "apiKeyHash"), ENACT_F(admin, "admin"));
ENACT_SCHEMA(managed_not_allowed_error, ENACT_F(api_key_hash, "apiKeyHash"), ENACT_F(sender, "sender"));
ENACT_SCHEMA(hash_is_usage_key_error, ENACT_F(api_key_hash, "apiKeyHash"));
ENACT_SCHEMA(hash_is_account_error, ENACT_F(usage_key_hash, "usageKeyHash"));
ENACT_SCHEMA(usage_key_of_another_account_error, ENACT_F(account_hash, "accountHash"),
             ENACT_F(usage_key_hash, "usageKeyHash"));
ENACT_SCHEMA(new_admin_not_sender_error, ENACT_F(account_hash, "accountHash"), ENACT_F(new_admin, "newAdmin"));
ENACT_SCHEMA(error_string_error, ENACT_F(message, "message"));
ENACT_SCHEMA(panic_error, ENACT_F(code, "code"));

#undef ENACT_F
#undef ENACT_SCHEMA

template <class T>
struct is_vector : std::false_type {};
template <class E>
struct is_vector<std::vector<E>> : std::true_type {};

template <class T>
struct is_page : std::false_type {};
template <class E>
struct is_page<list_page<E>> : std::true_type {};

template <class S, class F>
void for_each_field(F&& f) {
  std::apply([&](const auto&... fl) { (f(fl), ...); }, schema<S>::fields);
}

/// Calls `f` on each field in order until one returns false.
template <class S, class F>
bool all_fields(F&& f) {
  return std::apply([&](const auto&... fl) { return (f(fl) && ...); }, schema<S>::fields);
}

template <class S>
constexpr size_t field_count() {
  return std::tuple_size_v<std::decay_t<decltype(schema<S>::fields)>>;
}

/// Builds an S field by field from `read(field)`, a result of the field's type; the first
/// failure is the result.
template <class S, class Read>
result<S> fill_fields(Read&& read) {
  S out{};
  std::optional<error> failure;
  all_fields<S>([&](const auto& fl) {
    auto r = read(fl);
    if (!r) {
      failure = std::move(r).err();
      return false;
    }
    out.*fl.member = std::move(*r);
    return true;
  });
  if (failure)
    return std::move(*failure);
  return out;
}

inline std::string_view name_of(std::string_view signature) { return signature.substr(0, signature.find('(')); }

/// Members are named after their Solidity parameter in snake_case (setUsageApiKey's `p` is
/// `permissions`); checked so that a description cannot pair a name with the wrong member.
template <class S>
void check_names() {
  for_each_field<S>([](const auto& fl) {
    std::string snake;
    for (const char c : fl.name) {
      if (c >= 'A' && c <= 'Z') {
        snake += '_';
        snake += static_cast<char>(c - 'A' + 'a');
      } else {
        snake += c;
      }
    }
    if (snake != fl.member_name && !(fl.name == "p" && fl.member_name == "permissions"))
      throw std::logic_error("registry binding: parameter " + std::string(fl.name) + " described by member " +
                             std::string(fl.member_name));
  });
}

// ---------------------------------------------------------------------------------------------
// ABI types, derived from the C++ types

template <class T>
std::string abi_type_name() {
  if constexpr (std::is_same_v<T, hash256> || std::is_same_v<T, u256> || std::is_same_v<T, group_id>) {
    return "uint256";
  } else if constexpr (std::is_same_v<T, address>) {
    return "address";
  } else if constexpr (std::is_same_v<T, bool>) {
    return "bool";
  } else if constexpr (std::is_same_v<T, std::string>) {
    return "string";
  } else if constexpr (std::is_same_v<T, bytes>) {
    return "bytes";
  } else if constexpr (is_vector<T>::value) {
    return abi_type_name<typename T::value_type>() + "[]";
  } else {
    static_assert(described<T>, "no ABI type for this C++ type");
    check_names<T>();
    std::string out = "(";
    for_each_field<T>([&](const auto& fl) {
      if (out.size() > 1)
        out += ',';
      out += abi_type_name<typename std::decay_t<decltype(fl)>::type>();
    });
    return out + ")";
  }
}

/// name(T1,...,Tn) from the fields of S; must equal S::kSignature.
template <class S>
std::string derived_signature() {
  std::string types = abi_type_name<S>();  // "(T1,...,Tn)"
  if (field_count<S>() == 0)
    types = "()";
  return std::string(name_of(S::kSignature)) + types;
}

template <class S>
void check_signature() {
  const std::string derived = derived_signature<S>();
  if (derived != S::kSignature)
    throw std::logic_error("registry binding: fields give " + derived + ", kSignature is " +
                           std::string(S::kSignature));
}

/// The ABI types of S's fields, in order (the arguments of a call, event or error).
template <class S>
const std::vector<codec::abi::type>& field_types() {
  static const std::vector<codec::abi::type> types = [] {
    check_signature<S>();
    std::vector<codec::abi::type> out;
    for_each_field<S>([&](const auto& fl) {
      out.push_back(codec::abi::type::of(abi_type_name<typename std::decay_t<decltype(fl)>::type>()));
    });
    return out;
  }();
  return types;
}

template <class S>
const std::array<uint8_t, 4>& selector_of() {
  static const std::array<uint8_t, 4> sel = [] {
    check_signature<S>();
    return codec::abi::selector(S::kSignature);
  }();
  return sel;
}

template <class S>
const hash256& topic_of() {
  static const hash256 topic = [] {
    check_signature<S>();
    return crypto::keccak256(S::kSignature);
  }();
  return topic;
}

// ---------------------------------------------------------------------------------------------
// C++ value <-> codec::abi::value

template <class T>
codec::abi::value to_abi(const T& v);

template <class S>
std::vector<codec::abi::value> field_values(const S& s) {
  std::vector<codec::abi::value> out;
  out.reserve(field_count<S>());
  for_each_field<S>([&](const auto& fl) { out.push_back(to_abi(s.*fl.member)); });
  return out;
}

template <class T>
codec::abi::value to_abi(const T& v) {
  if constexpr (std::is_same_v<T, hash256>) {
    return codec::abi::value::number(u256::load_be(v.data()));
  } else if constexpr (std::is_same_v<T, u256>) {
    return codec::abi::value::number(v);
  } else if constexpr (std::is_same_v<T, group_id>) {
    return codec::abi::value::number(u256{v});
  } else if constexpr (std::is_same_v<T, address>) {
    return codec::abi::value::addr(v);
  } else if constexpr (std::is_same_v<T, bool>) {
    return codec::abi::value::boolean(v);
  } else if constexpr (std::is_same_v<T, std::string>) {
    return codec::abi::value::text(v);
  } else if constexpr (std::is_same_v<T, bytes>) {
    return codec::abi::value::blob(v);
  } else if constexpr (is_vector<T>::value) {
    std::vector<codec::abi::value> items;
    items.reserve(v.size());
    for (const auto& e : v)
      items.push_back(to_abi(e));
    return codec::abi::value::list(std::move(items));
  } else {
    return codec::abi::value::list(field_values(v));
  }
}

inline error kind_error(const std::string& what, const char* expected) {
  return fail(abi_errc::type_mismatch, what + ": expected " + expected);
}

template <class T>
result<T> from_abi(const codec::abi::value& v, const std::string& what);

template <class S>
result<S> struct_from_abi(std::span<const codec::abi::value> values, const std::string& what) {
  if (values.size() != field_count<S>())
    return fail(abi_errc::wrong_length, what + ": expected " + std::to_string(field_count<S>()) + " values, got " +
                                            std::to_string(values.size()));
  size_t i = 0;
  return fill_fields<S>([&](const auto& fl) {
    using M = typename std::decay_t<decltype(fl)>::type;
    return from_abi<M>(values[i++], what + "." + std::string(fl.name));
  });
}

template <class T>
result<T> from_abi(const codec::abi::value& v, const std::string& what) {
  if constexpr (std::is_same_v<T, hash256> || std::is_same_v<T, u256> || std::is_same_v<T, group_id>) {
    const auto* n = std::get_if<u256>(&v.node);
    if (n == nullptr)
      return kind_error(what, "a number");
    if constexpr (std::is_same_v<T, hash256>) {
      return n->to_be();
    } else if constexpr (std::is_same_v<T, group_id>) {
      if (!n->fits_u64())
        return fail(abi_errc::out_of_range, what + ": group id " + n->to_string() + " exceeds 64 bits");
      return static_cast<group_id>(*n);
    } else {
      return *n;
    }
  } else if constexpr (std::is_same_v<T, address>) {
    const auto* a = std::get_if<address>(&v.node);
    if (a == nullptr)
      return kind_error(what, "an address");
    return *a;
  } else if constexpr (std::is_same_v<T, bool>) {
    const auto* b = std::get_if<bool>(&v.node);
    if (b == nullptr)
      return kind_error(what, "a bool");
    return *b;
  } else if constexpr (std::is_same_v<T, std::string>) {
    const auto* s = std::get_if<std::string>(&v.node);
    if (s == nullptr)
      return kind_error(what, "a string");
    return *s;
  } else if constexpr (std::is_same_v<T, bytes>) {
    const auto* b = std::get_if<bytes>(&v.node);
    if (b == nullptr)
      return kind_error(what, "bytes");
    return *b;
  } else {
    const auto* l = std::get_if<std::vector<codec::abi::value>>(&v.node);
    if (l == nullptr)
      return kind_error(what, "a list");
    if constexpr (is_vector<T>::value) {
      T out;
      out.reserve(l->size());
      for (size_t i = 0; i < l->size(); ++i) {
        ENACT_TRY(auto e, from_abi<typename T::value_type>((*l)[i], what + "[" + std::to_string(i) + "]"));
        out.push_back(std::move(e));
      }
      return out;
    } else {
      return struct_from_abi<T>(*l, what);
    }
  }
}

/// Decodes the fields of S from their ABI encoding (the arguments of a call or error).
template <class S>
result<S> decode_fields(bytes_view data, const std::string& what) {
  ENACT_TRY(const auto values, codec::abi::decode(field_types<S>(), data));
  return struct_from_abi<S>(values, what);
}

// ---------------------------------------------------------------------------------------------
// C++ value <-> JSON

inline json::value u256_json(const u256& v) {
  if (v.fits_u64())
    return json::value(static_cast<uint64_t>(v));
  return json::value(json::string(v.to_string()));
}

inline error json_error(const std::string& what, const std::string& why) {
  return fail(abi_errc::bad_value, what + ": " + why);
}

inline result<u256> u256_from_json(const json::value& v, const std::string& what) {
  if (const auto* u = v.if_uint64())
    return u256{*u};
  if (const auto* i = v.if_int64()) {
    if (*i < 0)
      return json_error(what, "must not be negative");
    return u256{static_cast<uint64_t>(*i)};
  }
  if (const auto* s = v.if_string()) {
    auto r = u256::from_dec(*s, what);
    if (!r)
      return fail(abi_errc::bad_value, std::move(r).err().message);
    return *r;
  }
  return json_error(what, "expected an unsigned integer (JSON integer or decimal string)");
}

inline result<group_id> group_id_from_json(const json::value& v, const std::string& what) {
  ENACT_TRY(const u256 x, u256_from_json(v, what));
  if (!x.fits_u64())
    return fail(abi_errc::out_of_range, what + ": group id " + x.to_string() + " exceeds 64 bits");
  return static_cast<group_id>(x);
}

inline result<permission_set> permissions_from_json(const json::value& v, const std::string& what) {
  const auto* o = v.if_object();
  if (o == nullptr)
    return json_error(what, "expected an object of permission fields");
  for (const auto& kv : *o)
    if (std::find(scopes::kPermissionFields.begin(), scopes::kPermissionFields.end(), kv.key()) ==
        scopes::kPermissionFields.end())
      return json_error(what + "." + std::string(kv.key()), "unknown permission field");
  permission_set p;
  const auto flag = [&](std::string_view key, bool& out) -> result<void> {
    const json::value* f = o->if_contains(key);
    if (f == nullptr)
      return {};
    if (!f->is_bool())
      return json_error(what + "." + std::string(key), "expected a boolean");
    out = f->get_bool();
    return {};
  };
  const auto ids = [&](std::string_view key, std::vector<group_id>& out) -> result<void> {
    const json::value* f = o->if_contains(key);
    if (f == nullptr)
      return {};
    const auto* a = f->if_array();
    if (a == nullptr)
      return json_error(what + "." + std::string(key), "expected an array of group ids");
    for (size_t i = 0; i < a->size(); ++i) {
      ENACT_TRY(const group_id g,
                group_id_from_json((*a)[i], what + "." + std::string(key) + "[" + std::to_string(i) + "]"));
      out.push_back(g);
    }
    return {};
  };
  ENACT_TRY_VOID(flag("can_create_groups", p.can_create_groups));
  ENACT_TRY_VOID(flag("can_delete_groups", p.can_delete_groups));
  ENACT_TRY_VOID(flag("can_create_pkps", p.can_create_pkps));
  ENACT_TRY_VOID(ids("manage_ipfs_ids_in_groups", p.manage_ipfs_ids_in_groups));
  ENACT_TRY_VOID(ids("add_pkp_to_groups", p.add_pkp_to_groups));
  ENACT_TRY_VOID(ids("remove_pkp_from_groups", p.remove_pkp_from_groups));
  ENACT_TRY_VOID(ids("execute_in_groups", p.execute_in_groups));
  return p;
}

template <class T>
json::value to_json_value(const T& v);

template <class S>
json::object struct_to_json(const S& s) {
  json::object o;
  for_each_field<S>([&](const auto& fl) { o[fl.name] = to_json_value(s.*fl.member); });
  return o;
}

template <class T>
json::value to_json_value(const T& v) {
  if constexpr (std::is_same_v<T, hash256> || std::is_same_v<T, address> || std::is_same_v<T, bytes>) {
    return json::value(json::string(codec::hex::encode_prefixed(v)));
  } else if constexpr (std::is_same_v<T, u256>) {
    return u256_json(v);
  } else if constexpr (std::is_same_v<T, group_id>) {
    return json::value(v);
  } else if constexpr (std::is_same_v<T, bool>) {
    return json::value(v);
  } else if constexpr (std::is_same_v<T, std::string>) {
    return json::value(json::string(v));
  } else if constexpr (std::is_same_v<T, permission_set>) {
    return json::value_from(v);
  } else if constexpr (is_vector<T>::value) {
    json::array a;
    a.reserve(v.size());
    for (const auto& e : v)
      a.push_back(to_json_value(e));
    return a;
  } else if constexpr (is_page<T>::value) {
    return json::object{{"items", to_json_value(v.items)}, {"total", u256_json(v.total)}};
  } else {
    return struct_to_json(v);
  }
}

template <class T>
result<T> from_json_value(const json::value& v, const std::string& what);

template <class S>
result<S> struct_from_json(const json::value& v, const std::string& what) {
  const auto* o = v.if_object();
  if (o == nullptr)
    return json_error(what, "expected an object");
  for (const auto& kv : *o) {
    bool known = false;
    for_each_field<S>([&](const auto& fl) { known = known || fl.name == kv.key(); });
    if (!known)
      return json_error(what + "." + std::string(kv.key()), "unknown field");
  }
  return fill_fields<S>([&](const auto& fl) {
    using M = typename std::decay_t<decltype(fl)>::type;
    const std::string at = what + "." + std::string(fl.name);
    const json::value* f = o->if_contains(fl.name);
    if (f == nullptr)
      return result<M>(json_error(at, "missing"));
    return from_json_value<M>(*f, at);
  });
}

template <class T>
result<T> from_json_value(const json::value& v, const std::string& what) {
  if constexpr (std::is_same_v<T, hash256>) {
    const auto* s = v.if_string();
    if (s == nullptr)
      return json_error(what, "expected 0x followed by 64 hex digits");
    auto b = codec::hex::decode_prefixed(*s, what);
    if (!b)
      return fail(abi_errc::bad_value, std::move(b).err().message);
    if (b->size() != 32)
      return json_error(what, "expected 32 bytes, got " + std::to_string(b->size()));
    hash256 out{};
    std::copy(b->begin(), b->end(), out.begin());
    return out;
  } else if constexpr (std::is_same_v<T, address>) {
    const auto* s = v.if_string();
    if (s == nullptr)
      return json_error(what, "expected 0x followed by 40 hex digits");
    auto a = parse_address(*s, what);
    if (!a)
      return fail(abi_errc::bad_value, std::move(a).err().message);
    return *a;
  } else if constexpr (std::is_same_v<T, bytes>) {
    const auto* s = v.if_string();
    if (s == nullptr)
      return json_error(what, "expected 0x-prefixed hex");
    auto b = codec::hex::decode_prefixed(*s, what);
    if (!b)
      return fail(abi_errc::bad_value, std::move(b).err().message);
    return std::move(*b);
  } else if constexpr (std::is_same_v<T, u256>) {
    return u256_from_json(v, what);
  } else if constexpr (std::is_same_v<T, group_id>) {
    return group_id_from_json(v, what);
  } else if constexpr (std::is_same_v<T, bool>) {
    if (!v.is_bool())
      return json_error(what, "expected a boolean");
    return v.get_bool();
  } else if constexpr (std::is_same_v<T, std::string>) {
    if (!v.is_string())
      return json_error(what, "expected a string");
    return std::string(v.get_string());
  } else if constexpr (std::is_same_v<T, permission_set>) {
    return permissions_from_json(v, what);
  } else if constexpr (is_vector<T>::value) {
    const auto* a = v.if_array();
    if (a == nullptr)
      return json_error(what, "expected an array");
    T out;
    out.reserve(a->size());
    for (size_t i = 0; i < a->size(); ++i) {
      ENACT_TRY(auto e, from_json_value<typename T::value_type>((*a)[i], what + "[" + std::to_string(i) + "]"));
      out.push_back(std::move(e));
    }
    return out;
  } else if constexpr (is_page<T>::value) {
    const auto* o = v.if_object();
    if (o == nullptr)
      return json_error(what, "expected an object {items, total}");
    for (const auto& kv : *o)
      if (kv.key() != "items" && kv.key() != "total")
        return json_error(what + "." + std::string(kv.key()), "unknown field");
    const auto* items = o->if_contains("items");
    const auto* total = o->if_contains("total");
    if (items == nullptr || total == nullptr)
      return json_error(what, items == nullptr ? "items missing" : "total missing");
    T out;
    ENACT_TRY(out.items, from_json_value<decltype(out.items)>(*items, what + ".items"));
    ENACT_TRY(out.total, u256_from_json(*total, what + ".total"));
    return out;
  } else {
    return struct_from_json<T>(v, what);
  }
}

// ---------------------------------------------------------------------------------------------
// Return values: a list page is two return values, anything else one.

template <class R>
const std::vector<codec::abi::type>& result_types() {
  static const std::vector<codec::abi::type> types = [] {
    if constexpr (is_page<R>::value)
      return std::vector<codec::abi::type>{codec::abi::type::of(abi_type_name<decltype(R::items)>()),
                                           codec::abi::type::of("uint256")};
    else
      return std::vector<codec::abi::type>{codec::abi::type::of(abi_type_name<R>())};
  }();
  return types;
}

template <class R>
std::vector<codec::abi::value> result_values(const R& v) {
  if constexpr (is_page<R>::value)
    return {to_abi(v.items), codec::abi::value::number(v.total)};
  else
    return {to_abi(v)};
}

template <class R>
result<R> result_from_values(const std::vector<codec::abi::value>& values, const std::string& what) {
  if constexpr (is_page<R>::value) {
    R out;
    ENACT_TRY(out.items, from_abi<decltype(out.items)>(values.at(0), what + ".items"));
    ENACT_TRY(out.total, from_abi<u256>(values.at(1), what + ".total"));
    return out;
  } else {
    return from_abi<R>(values.at(0), what);
  }
}

}  // namespace enact::chain::registry::detail
