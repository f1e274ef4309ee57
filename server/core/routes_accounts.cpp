// SPDX-License-Identifier: Apache-2.0
// Accounts and usage keys (docs/protocol.md §2 "Accounts and keys").
#include <chrono>

#include "core/errors.hpp"
#include "core/route.hpp"
#include "core/schema.hpp"
#include "enact/codec/base64.hpp"
#include "enact/codec/hex.hpp"
#include "enact/address.hpp"
#include "enact/crypto/keccak.hpp"
#include "enact/crypto/random.hpp"
#include "enact/crypto/secp256k1.hpp"
#include "enact/secret.hpp"

namespace enact::core {
namespace {

namespace s = schema;

int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

/// A new API key (docs/protocol.md §1): 32 CSPRNG bytes that are a valid secp256k1 private key, issued as
/// standard base64. `text` is the key as issued; the caller sends it once and drops it.
struct minted_key {
  std::string text;
  hash256 hash{};
  address wallet{};
  ~minted_key() { detail::secure_wipe(text.data(), text.size()); }
};

result<minted_key> mint_key() {
  Secret key = Secret::of_size(32);
  do {
    crypto::random_bytes(key.mutable_view());
  } while (!crypto::secp256k1::is_valid_private_key(key.view()));
  ENACT_TRY(const auto pub, crypto::secp256k1::public_key_of(key));
  minted_key out;
  out.text = codec::base64::encode(key.view());
  out.hash = crypto::keccak256(std::string_view(out.text));
  out.wallet = crypto::secp256k1::to_address(pub);
  return out;
}

/// The hash of a key value given in a body (update/remove take the usage key itself).
hash256 key_hash_of(const json::value& body, std::string_view field) {
  return crypto::keccak256(std::string_view(body.at(field).as_string()));
}

const std::string_view kPermissionNames[] = {"can_create_groups",         "can_delete_groups", "can_create_pkps",
                                             "manage_ipfs_ids_in_groups", "add_pkp_to_groups", "remove_pkp_from_groups",
                                             "execute_in_groups"};
/// The usage key fields of add/update (docs/protocol.md §2): metadata and the permission set.
result<ledger::usage_key> read_usage_key(const request_context& c) {
  ENACT_TRY(api::usage_key_spec spec, api::read<api::usage_key_spec>(c.body));
  ledger::usage_key k;
  k.account = c.who->account.hash;
  k.name = std::move(spec.name);
  k.description = spec.description.value_or("");
  k.expiration = spec.expiration.value_or(0);
  // Unsigned comparison: an expiration above INT64_MAX is far in the future, not negative.
  if (k.expiration != 0 && k.expiration <= static_cast<uint64_t>(unix_now()))
    return fail(api_errc::invalid_request, "body.expiration: in the past");
  k.permissions = std::move(spec.permissions);
  return k;
}

json::object permission_properties_schema(bool with_key_value) {
  const auto groups = [](std::string_view d) {
    return s::array(s::integer("group id; 0 = every group"), d, 1000);
  };
  json::object o =
      s::object({{"name", s::name("label"), true},
                 {"description", s::string("", 4096)},
                 {"expiration", s::integer("unix seconds after which the key stops working; 0 or absent: never")},
                 {"can_create_groups", s::boolean("group:create")},
                 {"can_delete_groups", s::boolean("group:delete")},
                 {"can_create_pkps", s::boolean("pkp:create")},
                 {"manage_ipfs_ids_in_groups", groups("group:manageActions, per group")},
                 {"add_pkp_to_groups", groups("group:addPkp, per group")},
                 {"remove_pkp_from_groups", groups("group:removePkp, per group")},
                 {"execute_in_groups", groups("execute, per group")}});
  if (with_key_value) {
    o["properties"].as_object()["usage_api_key"] = s::string("the usage key's value", 128);
    o["required"].as_array().push_back("usage_api_key");
  }
  return o;
}

/// A usage key's permissions as GET /account answers them (the permission fields of
/// list_api_keys).
json::object permissions_schema() {
  const auto groups = [](std::string_view d) {
    return s::array(s::integer("group id; 0 = every group"), d, 1000);
  };
  json::object o = s::object({{"can_create_groups", s::boolean("group:create"), true},
                              {"can_delete_groups", s::boolean("group:delete"), true},
                              {"can_create_pkps", s::boolean("pkp:create"), true},
                              {"manage_ipfs_ids_in_groups", groups("group:manageActions, per group"), true},
                              {"add_pkp_to_groups", groups("group:addPkp, per group"), true},
                              {"remove_pkp_from_groups", groups("group:removePkp, per group"), true},
                              {"execute_in_groups", groups("execute, per group"), true}},
                             "a usage key's permissions (absent for the account key)");
  return o;
}

// --- handlers ---------------------------------------------------------------------------------

result<json::value> new_account(const request_context& c) {
  ENACT_TRY(const api::new_account_request req, api::read<api::new_account_request>(c.body));
  ENACT_TRY(minted_key key, mint_key());
  ledger::account a;
  a.hash = key.hash;
  a.admin = key.wallet;
  a.managed = true;
  a.name = req.name;
  a.description = req.description.value_or("");
  a.email = req.email.value_or("");
  a.created_at = unix_now();
  ENACT_TRY_VOID(c.svc.ledger->new_account(ledger::write_context{c.svc.api_payer}, a));
  return json::object{{"api_key", key.text},
                      {"wallet_address", to_checksum_address(key.wallet)},
                      {"api_key_hash", codec::hex::encode_prefixed(key.hash)}};
}

result<json::value> get_account(const request_context& c) {
  const auto& who = *c.who;
  const bool is_account = who.scopes.kind == scopes::key_kind::account;
  json::object key{{"kind", who.wallet_auth ? "wallet" : (is_account ? "account" : "usage")},
                   {"hash", codec::hex::encode_prefixed(who.key_hash)}};
  // A usage key sees its own permissions (what list_api_keys shows its owner), so a service that
  // holds one, such as the trigger service, can check what it may do before relying on it.
  if (!who.wallet_auth && !is_account) {
    json::object perms;
    scopes::write_permission_fields(perms, who.scopes.perms);
    key["permissions"] = std::move(perms);
  }
  return json::object{{"api_key_hash", codec::hex::encode_prefixed(who.account.hash)},
                      {"admin_wallet_address", to_checksum_address(who.account.admin)},
                      {"managed", who.account.managed},
                      {"name", who.account.name},
                      {"description", who.account.description},
                      {"key", std::move(key)}};
}

result<json::value> add_usage_api_key(const request_context& c) {
  ENACT_TRY(ledger::usage_key k, read_usage_key(c));
  ENACT_TRY(minted_key key, mint_key());
  k.hash = key.hash;
  k.wallet = key.wallet;
  k.created_at = unix_now();
  ENACT_TRY_VOID(c.svc.ledger->set_usage_key(relay(c), k));
  return json::object{{"usage_api_key", key.text},
                      {"hash", codec::hex::encode_prefixed(key.hash)},
                      {"wallet_address", to_checksum_address(key.wallet)}};
}

result<json::value> list_api_keys(const request_context& c) {
  ENACT_TRY(const auto p, read_page(c.http));
  ENACT_TRY(const auto keys, c.svc.ledger->list_usage_keys(c.who->account.hash, p));
  return page_answer<json::object>(keys, p, usage_key_json);
}

/// The usage key named by its value in the body, which must belong to the caller's account.
result<ledger::usage_key> own_usage_key(const request_context& c) {
  const hash256 h = key_hash_of(c.body, "usage_api_key");
  auto k = c.svc.ledger->find_usage_key(h);
  if (!k || k->account != c.who->account.hash)
    return fail(api_errc::not_found, "usage_api_key: no such usage key in this account");
  return k;
}

result<json::value> update_usage_api_key(const request_context& c) {
  ENACT_TRY(const auto existing, own_usage_key(c));
  ENACT_TRY(ledger::usage_key k, read_usage_key(c));
  k.hash = existing.hash;
  k.wallet = existing.wallet;
  k.balance = existing.balance;
  k.created_at = existing.created_at;
  ENACT_TRY_VOID(c.svc.ledger->set_usage_key(relay(c), k));
  return json::object{{"hash", codec::hex::encode_prefixed(k.hash)}};
}

result<json::value> update_usage_api_key_metadata(const request_context& c) {
  ENACT_TRY(const auto existing, own_usage_key(c));
  ENACT_TRY_VOID(c.svc.ledger->update_usage_key_metadata(relay(c), existing.account, existing.hash, str(c.body, "name"),
                                                         str(c.body, "description")));
  return json::object{{"hash", codec::hex::encode_prefixed(existing.hash)}};
}

result<json::value> remove_usage_api_key(const request_context& c) {
  ENACT_TRY(const auto existing, own_usage_key(c));
  ENACT_TRY_VOID(c.svc.ledger->remove_usage_key(relay(c), existing.account, existing.hash));
  return json::object{{"hash", codec::hex::encode_prefixed(existing.hash)}};
}

}  // namespace

void add_account_routes(std::vector<route>& out) {
  out.push_back(route{"POST",
                      "/new_account",
                      "newAccount",
                      "accounts",
                      "Create an account in API mode. The account API key is returned once.",
                      auth_kind::none,
                      true,
                      {},
                      s::object({{"name", s::name("account name"), true},
                                 {"description", s::string("", 4096)},
                                 {"email", s::string("contact address", 320)}}),
                      s::object({{"api_key", s::string("the account API key (base64); shown once", 64), true},
                                 {"wallet_address", s::address("address of the key"), true},
                                 {"api_key_hash", s::hash("keccak256 of the key string; the account id"), true}}),
                      new_account});
  out.push_back(route{"GET",
                      "/account",
                      "getAccount",
                      "accounts",
                      "The caller's account (the account-exists check) and which key was presented.",
                      auth_kind::key,
                      false,
                      {},
                      {},
                      s::object({{"api_key_hash", s::hash(), true},
                                 {"admin_wallet_address", s::address(), true},
                                 {"managed", s::boolean("true in API mode"), true},
                                 {"name", s::string(), true},
                                 {"description", s::string(), true},
                                 {"key",
                                  s::object({{"kind", s::string("account, usage or wallet"), true},
                                             {"hash", s::hash(), true},
                                             {"permissions", permissions_schema()}}),
                                  true}}),
                      get_account});
  out.push_back(route{"POST",
                      "/add_usage_api_key",
                      "addUsageApiKey",
                      "accounts",
                      "Create a usage key with a permission set (account key only). The key is returned once.",
                      auth_kind::owner,
                      true,
                      {},
                      permission_properties_schema(false),
                      s::object({{"usage_api_key", s::string("the usage key (base64); shown once", 64), true},
                                 {"hash", s::hash("keccak256 of the key string"), true},
                                 {"wallet_address", s::address("address of the key"), true}}),
                      add_usage_api_key});
  out.push_back(route{"GET",
                      "/list_api_keys",
                      "listApiKeys",
                      "accounts",
                      "The account's usage keys: hash, metadata and permission set (never the values).",
                      auth_kind::owner,
                      false,
                      {},
                      {},
                      s::ref("UsageKeyPage"),
                      list_api_keys});
  out.push_back(route{"POST",
                      "/update_usage_api_key",
                      "updateUsageApiKey",
                      "accounts",
                      "Replace every permission of a usage key (omitted ones reset to their defaults).",
                      auth_kind::owner,
                      true,
                      {},
                      permission_properties_schema(true),
                      s::object({{"hash", s::hash(), true}}),
                      update_usage_api_key});
  out.push_back(route{"POST",
                      "/update_usage_api_key_metadata",
                      "updateUsageApiKeyMetadata",
                      "accounts",
                      "Change a usage key's name and description.",
                      auth_kind::owner,
                      true,
                      {},
                      s::object({{"usage_api_key", s::string("the usage key's value", 128), true},
                                 {"name", s::name(), true},
                                 {"description", s::string("", 4096), true}}),
                      s::object({{"hash", s::hash(), true}}),
                      update_usage_api_key_metadata});
  out.push_back(route{"POST",
                      "/remove_usage_api_key",
                      "removeUsageApiKey",
                      "accounts",
                      "Delete a usage key; it stops working on the next request.",
                      auth_kind::owner,
                      true,
                      {},
                      s::object({{"usage_api_key", s::string("the usage key's value", 128), true}}),
                      s::object({{"hash", s::hash(), true}}),
                      remove_usage_api_key});
}

}  // namespace enact::core
