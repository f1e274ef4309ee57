// Permission registry bindings. Every struct of registry.hpp is described once, below, by its
// fields (member and Solidity parameter name); the ABI type of each field follows from its C++
// type (hash256, u256 and group_id are uint256, vectors are T[], described structs are tuples),
// and the same description drives the ABI encoder, the strict decoder and the JSON bridge. The
// canonical signature derived from the fields is compared with the struct's kSignature the first
// time its selector or topic is computed, so a field list that drifts from the interface cannot
// go unnoticed.
#include "enact/chain/registry.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <cstring>
#include <map>
#include <stdexcept>
#include <tuple>
#include <utility>

#include "enact/codec/hex.hpp"
#include "enact/crypto/address.hpp"
#include "enact/crypto/keccak.hpp"

namespace enact::chain::registry {

namespace {

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
             ENACT_F(created_at, "createdAt"), ENACT_F(balance, "balance"), ENACT_F(wallet_count, "walletCount"));
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
ENACT_SCHEMA(payment_view, ENACT_F(account_hash, "accountHash"), ENACT_F(intent_id, "intentId"),
             ENACT_F(amount_cents, "amountCents"), ENACT_F(provider, "provider"), ENACT_F(credited, "credited"),
             ENACT_F(created_at, "createdAt"));

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
ENACT_SCHEMA(credit_balance_call, ENACT_F(account_hash, "accountHash"));
ENACT_SCHEMA(debit_credits_call, ENACT_F(account_hash, "accountHash"), ENACT_F(amount, "amount"));
ENACT_SCHEMA(charge_credits_call, ENACT_F(account_hash, "accountHash"), ENACT_F(amount, "amount"));
ENACT_SCHEMA(record_payment_call, ENACT_F(account_hash, "accountHash"), ENACT_F(intent_id, "intentId"),
             ENACT_F(amount_cents, "amountCents"), ENACT_F(provider, "provider"));
ENACT_SCHEMA(credit_payment_call, ENACT_F(account_hash, "accountHash"), ENACT_F(intent_id, "intentId"));
ENACT_SCHEMA(get_payment_call, ENACT_F(account_hash, "accountHash"), ENACT_F(intent_id, "intentId"));
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
ENACT_SCHEMA(credits_debited_event, ENACT_F(account_hash, "accountHash"), ENACT_F(amount, "amount"),
             ENACT_F(balance, "balance"));
ENACT_SCHEMA(payment_credited_event, ENACT_F(account_hash, "accountHash"),
             ENACT_F(payment_intent_id, "paymentIntentId"), ENACT_F(amount_cents, "amountCents"),
             ENACT_F(provider, "provider"), ENACT_F(balance, "balance"));
ENACT_SCHEMA(payment_recorded_event, ENACT_F(account_hash, "accountHash"),
             ENACT_F(payment_intent_id, "paymentIntentId"), ENACT_F(amount_cents, "amountCents"),
             ENACT_F(provider, "provider"));
ENACT_SCHEMA(write_charged_event, ENACT_F(account_hash, "accountHash"), ENACT_F(amount, "amount"),
             ENACT_F(balance, "balance"));
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
ENACT_SCHEMA(unknown_payment_error, ENACT_F(account_hash, "accountHash"), ENACT_F(intent_id, "intentId"));
ENACT_SCHEMA(duplicate_error, ENACT_F(what, "what"));
ENACT_SCHEMA(already_credited_error, ENACT_F(account_hash, "accountHash"), ENACT_F(intent_id, "intentId"));
ENACT_SCHEMA(insufficient_credits_error, ENACT_F(account_hash, "accountHash"), ENACT_F(balance, "balance"),
             ENACT_F(required, "required"));
ENACT_SCHEMA(invalid_argument_error, ENACT_F(reason, "reason"));
ENACT_SCHEMA(not_owner_error, ENACT_F(sender, "sender"));
ENACT_SCHEMA(not_api_payer_error, ENACT_F(sender, "sender"));
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

std::string_view name_of(std::string_view signature) { return signature.substr(0, signature.find('(')); }

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
const std::vector<abi::type>& field_types() {
  static const std::vector<abi::type> types = [] {
    check_signature<S>();
    std::vector<abi::type> out;
    for_each_field<S>([&](const auto& fl) {
      out.push_back(abi::type::of(abi_type_name<typename std::decay_t<decltype(fl)>::type>()));
    });
    return out;
  }();
  return types;
}

template <class S>
const std::array<uint8_t, 4>& selector_of() {
  static const std::array<uint8_t, 4> sel = [] {
    check_signature<S>();
    return abi::selector(S::kSignature);
  }();
  return sel;
}

template <class S>
const hash256& topic_of() {
  static const hash256 topic = [] {
    check_signature<S>();
    return keccak256(S::kSignature);
  }();
  return topic;
}

// ---------------------------------------------------------------------------------------------
// C++ value <-> abi::value

template <class T>
abi::value to_abi(const T& v);

template <class S>
std::vector<abi::value> field_values(const S& s) {
  std::vector<abi::value> out;
  out.reserve(field_count<S>());
  for_each_field<S>([&](const auto& fl) { out.push_back(to_abi(s.*fl.member)); });
  return out;
}

template <class T>
abi::value to_abi(const T& v) {
  if constexpr (std::is_same_v<T, hash256>) {
    return abi::value::number(u256::load_be(v.data()));
  } else if constexpr (std::is_same_v<T, u256>) {
    return abi::value::number(v);
  } else if constexpr (std::is_same_v<T, group_id>) {
    return abi::value::number(u256{v});
  } else if constexpr (std::is_same_v<T, address>) {
    return abi::value::addr(v);
  } else if constexpr (std::is_same_v<T, bool>) {
    return abi::value::boolean(v);
  } else if constexpr (std::is_same_v<T, std::string>) {
    return abi::value::text(v);
  } else if constexpr (std::is_same_v<T, bytes>) {
    return abi::value::blob(v);
  } else if constexpr (is_vector<T>::value) {
    std::vector<abi::value> items;
    items.reserve(v.size());
    for (const auto& e : v)
      items.push_back(to_abi(e));
    return abi::value::list(std::move(items));
  } else {
    return abi::value::list(field_values(v));
  }
}

error kind_error(const std::string& what, const char* expected) {
  return fail(abi_errc::type_mismatch, what + ": expected " + expected);
}

template <class T>
result<T> from_abi(const abi::value& v, const std::string& what);

template <class S>
result<S> struct_from_abi(std::span<const abi::value> values, const std::string& what) {
  if (values.size() != field_count<S>())
    return fail(abi_errc::wrong_length, what + ": expected " + std::to_string(field_count<S>()) + " values, got " +
                                            std::to_string(values.size()));
  S out{};
  std::optional<error> failure;
  size_t i = 0;
  all_fields<S>([&](const auto& fl) {
    using M = typename std::decay_t<decltype(fl)>::type;
    auto r = from_abi<M>(values[i++], what + "." + std::string(fl.name));
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

template <class T>
result<T> from_abi(const abi::value& v, const std::string& what) {
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
    const auto* l = std::get_if<std::vector<abi::value>>(&v.node);
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
  ENACT_TRY(const auto values, abi::decode(field_types<S>(), data));
  return struct_from_abi<S>(values, what);
}

// ---------------------------------------------------------------------------------------------
// C++ value <-> JSON

json::value u256_json(const u256& v) {
  if (v.fits_u64())
    return json::value(static_cast<uint64_t>(v));
  return json::value(json::string(v.to_string()));
}

error json_error(const std::string& what, const std::string& why) {
  return fail(abi_errc::bad_value, what + ": " + why);
}

result<u256> u256_from_json(const json::value& v, const std::string& what) {
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

result<group_id> group_id_from_json(const json::value& v, const std::string& what) {
  ENACT_TRY(const u256 x, u256_from_json(v, what));
  if (!x.fits_u64())
    return fail(abi_errc::out_of_range, what + ": group id " + x.to_string() + " exceeds 64 bits");
  return static_cast<group_id>(x);
}

result<permission_set> permissions_from_json(const json::value& v, const std::string& what) {
  const auto* o = v.if_object();
  if (o == nullptr)
    return json_error(what, "expected an object of permission fields");
  for (const auto& kv : *o)
    if (std::find(scope::kPermissionFields.begin(), scope::kPermissionFields.end(), kv.key()) ==
        scope::kPermissionFields.end())
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
    return json::value(json::string(hex::encode_prefixed(v)));
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
  S out{};
  std::optional<error> failure;
  all_fields<S>([&](const auto& fl) {
    using M = typename std::decay_t<decltype(fl)>::type;
    const std::string at = what + "." + std::string(fl.name);
    const json::value* f = o->if_contains(fl.name);
    if (f == nullptr) {
      failure = json_error(at, "missing");
      return false;
    }
    auto r = from_json_value<M>(*f, at);
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

template <class T>
result<T> from_json_value(const json::value& v, const std::string& what) {
  if constexpr (std::is_same_v<T, hash256>) {
    const auto* s = v.if_string();
    if (s == nullptr)
      return json_error(what, "expected 0x followed by 64 hex digits");
    auto b = hex::decode_prefixed(*s, what);
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
    auto b = hex::decode_prefixed(*s, what);
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
const std::vector<abi::type>& result_types() {
  static const std::vector<abi::type> types = [] {
    if constexpr (is_page<R>::value)
      return std::vector<abi::type>{abi::type::of(abi_type_name<decltype(R::items)>()), abi::type::of("uint256")};
    else
      return std::vector<abi::type>{abi::type::of(abi_type_name<R>())};
  }();
  return types;
}

template <class R>
std::vector<abi::value> result_values(const R& v) {
  if constexpr (is_page<R>::value)
    return {to_abi(v.items), abi::value::number(v.total)};
  else
    return {to_abi(v)};
}

template <class R>
result<R> result_from_values(const std::vector<abi::value>& values, const std::string& what) {
  if constexpr (is_page<R>::value) {
    R out;
    ENACT_TRY(out.items, from_abi<decltype(out.items)>(values.at(0), what + ".items"));
    ENACT_TRY(out.total, from_abi<u256>(values.at(1), what + ".total"));
    return out;
  } else {
    return from_abi<R>(values.at(0), what);
  }
}

// ---------------------------------------------------------------------------------------------
// Dispatch tables

uint32_t key_of(const std::array<uint8_t, 4>& s) {
  return (uint32_t{s[0]} << 24) | (uint32_t{s[1]} << 16) | (uint32_t{s[2]} << 8) | s[3];
}

using call_decoder = result<call> (*)(bytes_view);

template <class T>
result<call> decode_any_call(bytes_view args) {
  ENACT_TRY(T c, decode_fields<T>(args, std::string(name_of(T::kSignature))));
  return call(std::move(c));
}

template <size_t... I>
std::map<uint32_t, call_decoder> make_call_table(std::index_sequence<I...>) {
  std::map<uint32_t, call_decoder> table;
  const auto add = [&](uint32_t key, call_decoder d) {
    if (!table.emplace(key, d).second)
      throw std::logic_error("registry binding: two functions share a selector");
  };
  (add(key_of(selector_of<std::variant_alternative_t<I, call>>()),
       &decode_any_call<std::variant_alternative_t<I, call>>),
   ...);
  return table;
}

const std::map<uint32_t, call_decoder>& call_table() {
  static const auto table = make_call_table(std::make_index_sequence<std::variant_size_v<call>>{});
  return table;
}

template <class E>
result<E> decode_event_fields(const hash256& topic1, bytes_view data, const std::string& what) {
  const auto& types = field_types<E>();
  ENACT_TRY(auto indexed, abi::decode(std::span(types).first(1), topic1));
  ENACT_TRY(auto rest, abi::decode(std::span(types).subspan(1), data));
  std::vector<abi::value> values;
  values.reserve(types.size());
  values.push_back(std::move(indexed.front()));
  for (auto& v : rest)
    values.push_back(std::move(v));
  return struct_from_abi<E>(values, what);
}

template <class E>
event make_event(E e) {
  event out;
  out.name = std::string(name_of(E::kSignature));
  if constexpr (requires { e.account_hash; })
    out.account_hash = e.account_hash;
  out.args = struct_to_json(e);
  out.value = std::move(e);
  return out;
}

using event_decoder = result<event> (*)(const hash256&, bytes_view);

template <class E>
result<event> decode_any_event(const hash256& topic1, bytes_view data) {
  ENACT_TRY(E e, decode_event_fields<E>(topic1, data, std::string(name_of(E::kSignature))));
  return make_event(std::move(e));
}

template <size_t... I>
std::map<hash256, event_decoder> make_event_table(std::index_sequence<I...>) {
  std::map<hash256, event_decoder> table;
  const auto add = [&](const hash256& key, event_decoder d) {
    if (!table.emplace(key, d).second)
      throw std::logic_error("registry binding: two events share a topic");
  };
  (add(topic_of<std::variant_alternative_t<I, any_event>>(),
       &decode_any_event<std::variant_alternative_t<I, any_event>>),
   ...);
  return table;
}

const std::map<hash256, event_decoder>& event_table() {
  static const auto table = make_event_table(std::make_index_sequence<std::variant_size_v<any_event>>{});
  return table;
}

// Solidity documentation, "Panic via assert and Error via require".
std::string_view panic_reason(const u256& code) {
  if (!code.fits_u64())
    return "unknown panic code";
  switch (static_cast<uint64_t>(code)) {
    case 0x00:
      return "generic compiler panic";
    case 0x01:
      return "assertion failed";
    case 0x11:
      return "arithmetic underflow or overflow";
    case 0x12:
      return "division or modulo by zero";
    case 0x21:
      return "invalid enum value";
    case 0x22:
      return "incorrectly encoded storage byte array";
    case 0x31:
      return "pop() on an empty array";
    case 0x32:
      return "array index out of bounds";
    case 0x41:
      return "too much memory allocated";
    case 0x51:
      return "call to a zero-initialized internal function";
    default:
      return "unknown panic code";
  }
}

template <class E>
registry_error make_registry_error(const E& e) {
  registry_error out;
  out.code = E::kCode;
  out.name = std::string(name_of(E::kSignature));
  out.args = struct_to_json(e);
  if constexpr (std::is_same_v<E, error_string_error>) {
    out.message = "reverted: " + e.message;
  } else if constexpr (std::is_same_v<E, panic_error>) {
    out.message = "Panic(" + e.code.to_hex() + "): " + std::string(panic_reason(e.code));
  } else {
    out.message = out.name + "(";
    bool first = true;
    for (const auto& kv : out.args) {
      if (!first)
        out.message += ", ";
      first = false;
      out.message += std::string(kv.key()) + "=";
      out.message += kv.value().is_string() ? std::string(kv.value().get_string()) : json::serialize(kv.value());
    }
    out.message += ")";
  }
  return out;
}

using error_decoder = registry_error (*)(bytes_view);

template <class E>
registry_error decode_any_error(bytes_view args) {
  auto e = decode_fields<E>(args, std::string(name_of(E::kSignature)));
  if (!e) {
    registry_error out;
    out.args = {{"data", hex::encode_prefixed(selector_of<E>()) + hex::encode(args)}};
    out.message = "revert data: " + std::string(E::kSignature) + " with malformed arguments (" + e.err().message + ")";
    return out;
  }
  return make_registry_error(*e);
}

template <size_t... I>
std::map<uint32_t, error_decoder> make_error_table(std::index_sequence<I...>) {
  std::map<uint32_t, error_decoder> table;
  const auto add = [&](uint32_t key, error_decoder d) {
    if (!table.emplace(key, d).second)
      throw std::logic_error("registry binding: two errors share a selector");
  };
  (add(key_of(selector_of<std::variant_alternative_t<I, any_error>>()),
       &decode_any_error<std::variant_alternative_t<I, any_error>>),
   ...);
  return table;
}

const std::map<uint32_t, error_decoder>& error_table() {
  static const auto table = make_error_table(std::make_index_sequence<std::variant_size_v<any_error>>{});
  return table;
}

/// Finds the alternative of V for which `match` holds and converts `args` to it.
template <class V, size_t... I, class Match>
std::optional<result<V>> variant_from_json(std::index_sequence<I...>, Match match, const json::object& args,
                                           const std::string& what) {
  std::optional<result<V>> out;
  const auto try_one = [&]<class T>(std::type_identity<T>) {
    if (out || !match(std::type_identity<T>{}))
      return;
    auto r = struct_from_json<T>(args, what);
    if (r)
      out.emplace(V(std::move(*r)));
    else
      out.emplace(std::move(r).err());
  };
  (try_one(std::type_identity<std::variant_alternative_t<I, V>>{}), ...);
  return out;
}

template <class S>
bool keys_match(const json::object& args) {
  if (args.size() != field_count<S>())
    return false;
  return all_fields<S>([&](const auto& fl) { return args.contains(fl.name); });
}

}  // namespace

// =============================================================================================
// Calls

template <call_type T>
const std::array<uint8_t, 4>& selector() {
  return selector_of<T>();
}

template <call_type T>
bytes encode(const T& c) {
  const auto& sel = selector_of<T>();
  // The values are built from T's fields, whose types field_types derives: encoding cannot fail.
  const bytes args = abi::encode(field_types<T>(), field_values(c)).value();
  bytes out(sel.begin(), sel.end());
  out.insert(out.end(), args.begin(), args.end());
  return out;
}

bytes encode(const call& c) {
  return std::visit([](const auto& x) { return encode(x); }, c);
}

template <call_type T>
result<T> decode(bytes_view calldata) {
  if (calldata.size() < 4)
    return fail(abi_errc::truncated, "call data: " + std::to_string(calldata.size()) + " bytes, no 4-byte selector");
  const auto& sel = selector_of<T>();
  if (!std::equal(sel.begin(), sel.end(), calldata.begin()))
    return fail(abi_errc::selector_mismatch,
                "call data: selector 0x" + hex::encode(calldata.first(4)) + " is not " + std::string(T::kSignature));
  return decode_fields<T>(calldata.subspan(4), std::string(name_of(T::kSignature)));
}

result<call> decode_call(bytes_view calldata) {
  if (calldata.size() < 4)
    return fail(abi_errc::truncated, "call data: " + std::to_string(calldata.size()) + " bytes, no 4-byte selector");
  const std::array<uint8_t, 4> sel{calldata[0], calldata[1], calldata[2], calldata[3]};
  const auto& table = call_table();
  const auto it = table.find(key_of(sel));
  if (it == table.end())
    return fail(abi_errc::selector_mismatch, "call data: selector 0x" + hex::encode(sel) + " is no registry function");
  return it->second(calldata.subspan(4));
}

std::string_view function_name(const call& c) {
  return std::visit([](const auto& x) { return name_of(std::decay_t<decltype(x)>::kSignature); }, c);
}

std::string_view signature(const call& c) {
  return std::visit([](const auto& x) { return std::decay_t<decltype(x)>::kSignature; }, c);
}

boost::json::object to_json(const call& c) {
  return std::visit([](const auto& x) { return struct_to_json(x); }, c);
}

result<call> call_from_json(std::string_view function, const boost::json::object& args) {
  const bool by_signature = function.find('(') != std::string_view::npos;
  const auto named = [&]<class T>(std::type_identity<T>) {
    return by_signature ? T::kSignature == function : name_of(T::kSignature) == function;
  };
  size_t candidates = 0;
  bool exact = false;
  [&]<size_t... I>(std::index_sequence<I...>) {
    const auto count = [&]<class T>(std::type_identity<T>) {
      if (named(std::type_identity<T>{})) {
        ++candidates;
        exact = exact || keys_match<T>(args);
      }
    };
    (count(std::type_identity<std::variant_alternative_t<I, call>>{}), ...);
  }
  (std::make_index_sequence<std::variant_size_v<call>>{});
  if (candidates == 0)
    return fail(abi_errc::bad_value, "function " + std::string(function) + ": not in the registry");
  // An overloaded name picks the overload whose parameters the keys name; with no exact match
  // the first overload reports what is missing or extra.
  const auto match = [&]<class T>(std::type_identity<T> t) {
    return named(t) && (candidates == 1 || !exact || keys_match<T>(args));
  };
  auto r = variant_from_json<call>(std::make_index_sequence<std::variant_size_v<call>>{}, match, args,
                                   std::string(function));
  return std::move(*r);
}

template <call_with_result T>
bytes encode_result(const typename T::result_type& value) {
  using R = typename T::result_type;
  return abi::encode(result_types<R>(), result_values<R>(value)).value();
}

template <call_with_result T>
result<typename T::result_type> decode_result(bytes_view return_data) {
  using R = typename T::result_type;
  check_signature<T>();
  ENACT_TRY(const auto values, abi::decode(result_types<R>(), return_data));
  return result_from_values<R>(values, std::string(name_of(T::kSignature)) + " result");
}

template <call_with_result T>
boost::json::value result_to_json(const typename T::result_type& value) {
  return to_json_value(value);
}

template <call_with_result T>
result<typename T::result_type> result_from_json(const boost::json::value& v) {
  return from_json_value<typename T::result_type>(v, std::string(name_of(T::kSignature)) + " result");
}

// =============================================================================================
// Events

template <event_type T>
const hash256& topic0() {
  return topic_of<T>();
}

template <event_type T>
encoded_log encode_log(const T& e) {
  const auto& types = field_types<T>();
  const auto values = field_values(e);
  encoded_log out;
  out.topics.push_back(topic_of<T>());
  const bytes word = abi::encode(std::span(types).first(1), std::span(values).first(1)).value();
  hash256 topic{};
  std::copy(word.begin(), word.end(), topic.begin());
  out.topics.push_back(topic);
  out.data = abi::encode(std::span(types).subspan(1), std::span(values).subspan(1)).value();
  return out;
}

encoded_log encode_log(const any_event& e) {
  return std::visit([](const auto& x) { return encode_log(x); }, e);
}

result<encoded_log> encode_log(std::string_view name, const boost::json::object& args) {
  ENACT_TRY(const any_event e, event_from_json(name, args));
  return encode_log(e);
}

result<event> decode_log(std::span<const hash256> topics, bytes_view data) {
  if (topics.empty())
    return fail(abi_errc::wrong_length, "log: no topics (an anonymous event is no registry event)");
  const auto& table = event_table();
  const auto it = table.find(topics[0]);
  if (it == table.end())
    return fail(abi_errc::selector_mismatch,
                "log: topic0 " + hex::encode_prefixed(topics[0]) + " is no registry event");
  if (topics.size() != 2)
    return fail(abi_errc::wrong_length, "log: " + std::to_string(topics.size()) + " topics, registry events have 2");
  return it->second(topics[1], data);
}

std::string_view event_name(const any_event& e) {
  return std::visit([](const auto& x) { return name_of(std::decay_t<decltype(x)>::kSignature); }, e);
}

boost::json::object to_json(const any_event& e) {
  return std::visit([](const auto& x) { return struct_to_json(x); }, e);
}

result<any_event> event_from_json(std::string_view name, const boost::json::object& args) {
  const auto match = [&]<class T>(std::type_identity<T>) {
    return name_of(T::kSignature) == name;
  };
  auto r = variant_from_json<any_event>(std::make_index_sequence<std::variant_size_v<any_event>>{}, match, args,
                                        std::string(name));
  if (!r)
    return fail(abi_errc::bad_value, "event " + std::string(name) + ": not a registry event");
  return std::move(*r);
}

// =============================================================================================
// Reverts

template <error_type T>
const std::array<uint8_t, 4>& selector() {
  return selector_of<T>();
}

template <error_type T>
bytes encode_revert(const T& e) {
  const auto& sel = selector_of<T>();
  const bytes args = abi::encode(field_types<T>(), field_values(e)).value();
  bytes out(sel.begin(), sel.end());
  out.insert(out.end(), args.begin(), args.end());
  return out;
}

bytes encode_revert(const any_error& e) {
  return std::visit([](const auto& x) { return encode_revert(x); }, e);
}

result<bytes> encode_revert(const registry_error& e) {
  const auto match = [&]<class T>(std::type_identity<T>) {
    return T::kCode == e.code;
  };
  auto r = variant_from_json<any_error>(std::make_index_sequence<std::variant_size_v<any_error>>{}, match, e.args,
                                        e.name.empty() ? "revert" : e.name);
  if (!r)
    return fail(abi_errc::bad_value, "revert: " + make_error_code(e.code).message() + " has no encoding");
  ENACT_TRY(const any_error typed, std::move(*r));
  return encode_revert(typed);
}

registry_error decode_revert(bytes_view revert_data) {
  if (revert_data.size() < 4) {
    registry_error out;
    out.args = {{"data", hex::encode_prefixed(revert_data)}};
    out.message = revert_data.empty() ? "reverted without data"
                                      : "revert data of " + std::to_string(revert_data.size()) + " bytes (" +
                                            hex::encode_prefixed(revert_data) + "), shorter than a selector";
    return out;
  }
  const std::array<uint8_t, 4> sel{revert_data[0], revert_data[1], revert_data[2], revert_data[3]};
  const auto& table = error_table();
  const auto it = table.find(key_of(sel));
  if (it == table.end()) {
    registry_error out;
    out.args = {{"data", hex::encode_prefixed(revert_data)}};
    out.message = "revert data with unknown selector 0x" + hex::encode(sel);
    return out;
  }
  return it->second(revert_data.subspan(4));
}

// =============================================================================================
// Explicit instantiations: one typed encoder and decoder per function, event and error.

#define ENACT_CALL(T)                                   \
  template const std::array<uint8_t, 4>& selector<T>(); \
  template bytes encode<T>(const T&);                   \
  template result<T> decode<T>(bytes_view);
#define ENACT_RESULT(T)                                                 \
  template bytes encode_result<T>(const T::result_type&);               \
  template result<T::result_type> decode_result<T>(bytes_view);         \
  template boost::json::value result_to_json<T>(const T::result_type&); \
  template result<T::result_type> result_from_json<T>(const boost::json::value&);
#define ENACT_EVENT(T)                 \
  template const hash256& topic0<T>(); \
  template encoded_log encode_log<T>(const T&);
#define ENACT_ERROR(T)                                  \
  template const std::array<uint8_t, 4>& selector<T>(); \
  template bytes encode_revert<T>(const T&);

ENACT_CALL(owner_call)
ENACT_CALL(api_payers_call)
ENACT_CALL(is_api_payer_call)
ENACT_CALL(set_api_payer_call)
ENACT_CALL(new_account_call)
ENACT_CALL(convert_to_chain_secured_call)
ENACT_CALL(get_account_call)
ENACT_CALL(account_by_admin_call)
ENACT_CALL(set_usage_api_key_call)
ENACT_CALL(set_usage_api_key_with_wallet_call)
ENACT_CALL(update_usage_api_key_metadata_call)
ENACT_CALL(remove_usage_api_key_call)
ENACT_CALL(get_usage_api_key_call)
ENACT_CALL(list_usage_api_keys_call)
ENACT_CALL(add_group_call)
ENACT_CALL(update_group_call)
ENACT_CALL(remove_group_call)
ENACT_CALL(add_pkp_to_group_call)
ENACT_CALL(remove_pkp_from_group_call)
ENACT_CALL(add_action_to_group_call)
ENACT_CALL(remove_action_from_group_call)
ENACT_CALL(get_group_call)
ENACT_CALL(list_groups_call)
ENACT_CALL(register_wallet_derivation_call)
ENACT_CALL(get_wallet_call)
ENACT_CALL(list_wallets_call)
ENACT_CALL(list_wallets_in_group_call)
ENACT_CALL(add_action_call)
ENACT_CALL(update_action_metadata_call)
ENACT_CALL(delete_action_call)
ENACT_CALL(get_action_call)
ENACT_CALL(list_actions_call)
ENACT_CALL(list_actions_in_group_call)
ENACT_CALL(credit_balance_call)
ENACT_CALL(debit_credits_call)
ENACT_CALL(charge_credits_call)
ENACT_CALL(record_payment_call)
ENACT_CALL(credit_payment_call)
ENACT_CALL(get_payment_call)
ENACT_CALL(multicall_call)

ENACT_RESULT(owner_call)
ENACT_RESULT(api_payers_call)
ENACT_RESULT(is_api_payer_call)
ENACT_RESULT(get_account_call)
ENACT_RESULT(account_by_admin_call)
ENACT_RESULT(get_usage_api_key_call)
ENACT_RESULT(list_usage_api_keys_call)
ENACT_RESULT(add_group_call)
ENACT_RESULT(get_group_call)
ENACT_RESULT(list_groups_call)
ENACT_RESULT(get_wallet_call)
ENACT_RESULT(list_wallets_call)
ENACT_RESULT(list_wallets_in_group_call)
ENACT_RESULT(get_action_call)
ENACT_RESULT(list_actions_call)
ENACT_RESULT(list_actions_in_group_call)
ENACT_RESULT(credit_balance_call)
ENACT_RESULT(debit_credits_call)
ENACT_RESULT(charge_credits_call)
ENACT_RESULT(credit_payment_call)
ENACT_RESULT(get_payment_call)
ENACT_RESULT(multicall_call)

ENACT_EVENT(account_created_event)
ENACT_EVENT(account_converted_event)
ENACT_EVENT(usage_api_key_set_event)
ENACT_EVENT(usage_api_key_metadata_updated_event)
ENACT_EVENT(usage_api_key_removed_event)
ENACT_EVENT(group_added_event)
ENACT_EVENT(group_updated_event)
ENACT_EVENT(group_removed_event)
ENACT_EVENT(pkp_added_to_group_event)
ENACT_EVENT(pkp_removed_from_group_event)
ENACT_EVENT(action_added_to_group_event)
ENACT_EVENT(action_removed_from_group_event)
ENACT_EVENT(wallet_derivation_registered_event)
ENACT_EVENT(action_added_event)
ENACT_EVENT(action_metadata_updated_event)
ENACT_EVENT(action_deleted_event)
ENACT_EVENT(credits_debited_event)
ENACT_EVENT(payment_credited_event)
ENACT_EVENT(payment_recorded_event)
ENACT_EVENT(write_charged_event)
ENACT_EVENT(api_payer_set_event)

ENACT_ERROR(not_admin_error)
ENACT_ERROR(relay_not_allowed_error)
ENACT_ERROR(already_unmanaged_error)
ENACT_ERROR(unknown_account_error)
ENACT_ERROR(unknown_usage_key_error)
ENACT_ERROR(unknown_group_error)
ENACT_ERROR(unknown_wallet_error)
ENACT_ERROR(unknown_action_error)
ENACT_ERROR(unknown_payment_error)
ENACT_ERROR(duplicate_error)
ENACT_ERROR(already_credited_error)
ENACT_ERROR(insufficient_credits_error)
ENACT_ERROR(invalid_argument_error)
ENACT_ERROR(not_owner_error)
ENACT_ERROR(not_api_payer_error)
ENACT_ERROR(account_hash_not_canonical_error)
ENACT_ERROR(managed_not_allowed_error)
ENACT_ERROR(hash_is_usage_key_error)
ENACT_ERROR(hash_is_account_error)
ENACT_ERROR(usage_key_of_another_account_error)
ENACT_ERROR(new_admin_not_sender_error)
ENACT_ERROR(error_string_error)
ENACT_ERROR(panic_error)

// =============================================================================================
// Deployment (creation_code and runtime_code are generated: registry_artifact.cpp.in)

bytes deployment_data(std::span<const address> api_payers) {
  std::vector<abi::value> payers;
  payers.reserve(api_payers.size());
  for (const address& a : api_payers)
    payers.push_back(abi::value::addr(a));
  static const std::array<abi::type, 1> kConstructorTypes = {abi::type::of("address[]")};
  const std::array<abi::value, 1> args = {abi::value::list(std::move(payers))};
  // An address list always fits its type: encoding cannot fail.
  const bytes encoded = abi::encode(kConstructorTypes, args).value();
  bytes out = creation_code();
  out.insert(out.end(), encoded.begin(), encoded.end());
  return out;
}

#undef ENACT_CALL
#undef ENACT_RESULT
#undef ENACT_EVENT
#undef ENACT_ERROR

}  // namespace enact::chain::registry
