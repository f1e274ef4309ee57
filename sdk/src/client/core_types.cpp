#include "enact/client/core_types.hpp"

#include <charconv>
#include <string>
#include <string_view>

#include "enact/codec/hex.hpp"
#include "enact/crypto/address.hpp"
#include "json_read.hpp"

namespace enact::client {

using detail::read::bad;
using detail::read::expect_object;
using detail::read::get_address;
using detail::read::get_bool;
using detail::read::get_hash;
using detail::read::get_i64;
using detail::read::get_secret;
using detail::read::get_string;
using detail::read::get_text;
using detail::read::get_u64;
using detail::read::require;

namespace {

json::array addresses_json(const std::vector<address>& v) {
  json::array a;
  a.reserve(v.size());
  for (const address& x : v)
    a.emplace_back(to_checksum_address(x));
  return a;
}

json::array hashes_json(const std::vector<hash256>& v) {
  json::array a;
  a.reserve(v.size());
  for (const hash256& x : v)
    a.emplace_back(hex::encode_prefixed(x));
  return a;
}

std::vector<address> read_addresses(const json::object& o, std::string_view key) {
  const json::value& v = require(o, key);
  if (!v.is_array())
    bad(std::string(key) + ": expected an array of addresses");
  std::vector<address> out;
  const json::array& a = v.get_array();
  out.reserve(a.size());
  for (size_t i = 0; i < a.size(); ++i)
    out.push_back(detail::read::to_address(a[i], std::string(key) + "[" + std::to_string(i) + "]"));
  return out;
}

std::vector<hash256> read_hashes(const json::object& o, std::string_view key) {
  const json::value& v = require(o, key);
  if (!v.is_array())
    bad(std::string(key) + ": expected an array of 0x hashes");
  std::vector<hash256> out;
  const json::array& a = v.get_array();
  out.reserve(a.size());
  for (size_t i = 0; i < a.size(); ++i)
    out.push_back(detail::read::to_hash(a[i], std::string(key) + "[" + std::to_string(i) + "]"));
  return out;
}

void put_optional(json::object& o, std::string_view key, const std::optional<std::string>& s) {
  if (s)
    o[key] = *s;
}

std::string_view kind_name(scope::key_kind k) { return k == scope::key_kind::account ? "account" : "usage"; }

}  // namespace

// --- value_from --------------------------------------------------------------------------------

void tag_invoke(json::value_from_tag, json::value& v, const new_account_request& r) {
  json::object& o = v.emplace_object();
  o["name"] = r.name;
  put_optional(o, "description", r.description);
  put_optional(o, "email", r.email);
}

void tag_invoke(json::value_from_tag, json::value& v, const key_identity& k) {
  json::object& o = v.emplace_object();
  o["kind"] = kind_name(k.kind);
  o["hash"] = hex::encode_prefixed(k.hash);
  if (k.permissions)
    o["permissions"] = json::value_from(*k.permissions);
}

void tag_invoke(json::value_from_tag, json::value& v, const account_info& a) {
  json::object& o = v.emplace_object();
  o["api_key_hash"] = hex::encode_prefixed(a.api_key_hash);
  o["admin_wallet_address"] = to_checksum_address(a.admin_wallet_address);
  o["managed"] = a.managed;
  o["name"] = a.name;
  o["description"] = a.description;
  o["key"] = json::value_from(a.key);
}

void tag_invoke(json::value_from_tag, json::value& v, const usage_key_spec& s) {
  json::object& o = v.emplace_object();
  o["name"] = s.name;
  put_optional(o, "description", s.description);
  if (s.expiration)
    o["expiration"] = *s.expiration;
  scope::write_permission_fields(o, s.permissions);
}

void tag_invoke(json::value_from_tag, json::value& v, const usage_key_info& k) {
  json::object& o = v.emplace_object();
  o["hash"] = hex::encode_prefixed(k.hash);
  o["name"] = k.name;
  o["description"] = k.description;
  o["expiration"] = k.expiration;
  o["created_at"] = k.created_at;
  scope::write_permission_fields(o, k.permissions);
}

void tag_invoke(json::value_from_tag, json::value& v, const group& g) {
  json::object& o = v.emplace_object();
  o["group_id"] = g.group_id;
  o["name"] = g.name;
  o["description"] = g.description;
  o["pkp_ids_permitted"] = addresses_json(g.pkp_ids_permitted);
  o["cid_hashes_permitted"] = hashes_json(g.cid_hashes_permitted);
}

void tag_invoke(json::value_from_tag, json::value& v, const new_group& g) {
  json::object& o = v.emplace_object();
  o["name"] = g.name;
  put_optional(o, "description", g.description);
  if (!g.pkp_ids_permitted.empty())
    o["pkp_ids_permitted"] = addresses_json(g.pkp_ids_permitted);
  if (!g.cid_hashes_permitted.empty())
    o["cid_hashes_permitted"] = hashes_json(g.cid_hashes_permitted);
}

void tag_invoke(json::value_from_tag, json::value& v, const new_wallet& w) {
  json::object& o = v.emplace_object();
  o["name"] = w.name;
  put_optional(o, "description", w.description);
}

void tag_invoke(json::value_from_tag, json::value& v, const wallet& w) {
  json::object& o = v.emplace_object();
  o["pkp_id"] = to_checksum_address(w.pkp_id);
  o["wallet_address"] = to_checksum_address(w.wallet_address);
  o["derivation_path"] = hex::encode_prefixed(w.derivation_path);
  o["name"] = w.name;
  o["description"] = w.description;
}

void tag_invoke(json::value_from_tag, json::value& v, const new_action& a) {
  json::object& o = v.emplace_object();
  o["action_ipfs_cid"] = a.action_ipfs_cid;
  o["name"] = a.name;
  put_optional(o, "description", a.description);
}

void tag_invoke(json::value_from_tag, json::value& v, const action& a) {
  json::object& o = v.emplace_object();
  o["action_ipfs_cid"] = a.action_ipfs_cid;
  o["hashed_cid"] = hex::encode_prefixed(a.hashed_cid);
  o["name"] = a.name;
  o["description"] = a.description;
}

void tag_invoke(json::value_from_tag, json::value& v, const action_metadata& a) {
  json::object& o = v.emplace_object();
  o["hashed_cid"] = hex::encode_prefixed(a.hashed_cid);
  o["name"] = a.name;
  o["description"] = a.description;
}

void tag_invoke(json::value_from_tag, json::value& v, const uploaded_action& a) {
  json::object& o = v.emplace_object();
  o["action_ipfs_cid"] = a.action_ipfs_cid;
  o["hashed_cid"] = hex::encode_prefixed(a.hashed_cid);
}

void tag_invoke(json::value_from_tag, json::value& v, const chain_config& c) {
  json::object& o = v.emplace_object();
  o["chain_id"] = c.chain_id;
  o["contract_address"] = to_checksum_address(c.contract_address);
  o["chain_name"] = c.chain_name;
}

void tag_invoke(json::value_from_tag, json::value& v, const stripe_config& c) {
  v.emplace_object()["publishable_key"] = c.publishable_key;
}

void tag_invoke(json::value_from_tag, json::value& v, const credit_balance& b) {
  json::object& o = v.emplace_object();
  o["balance_credits"] = b.balance_credits;
  o["currency"] = b.currency;
}

void tag_invoke(json::value_from_tag, json::value& v, const payment_intent& p) {
  json::object& o = v.emplace_object();
  o["payment_intent_id"] = p.payment_intent_id;
  o["client_secret"] = p.client_secret;
  o["amount_cents"] = p.amount_cents;
}

// --- value_to ----------------------------------------------------------------------------------

new_account_response tag_invoke(json::value_to_tag<new_account_response>, const json::value& v) {
  const json::object& o = expect_object(v, "new_account answer");
  new_account_response r;
  r.api_key = get_secret(o, "api_key");
  r.wallet_address = get_address(o, "wallet_address");
  r.api_key_hash = get_hash(o, "api_key_hash");
  return r;
}

key_identity tag_invoke(json::value_to_tag<key_identity>, const json::value& v) {
  const json::object& o = expect_object(v, "key");
  key_identity k;
  const std::string kind = get_string(o, "kind");
  if (kind == "account")
    k.kind = scope::key_kind::account;
  else if (kind == "usage")
    k.kind = scope::key_kind::usage;
  else
    bad("kind: expected \"account\" or \"usage\", got \"" + kind + "\"");
  k.hash = get_hash(o, "hash");
  if (const auto* p = o.if_contains("permissions"); p != nullptr && !p->is_null()) {
    if (!p->is_object())
      bad("permissions: expected an object");
    auto perms = scope::permission_set_from_json(p->get_object());
    if (!perms)
      bad("permissions." + perms.err().message);
    k.permissions = std::move(*perms);
  }
  return k;
}

account_info tag_invoke(json::value_to_tag<account_info>, const json::value& v) {
  const json::object& o = expect_object(v, "account");
  account_info a;
  a.api_key_hash = get_hash(o, "api_key_hash");
  a.admin_wallet_address = get_address(o, "admin_wallet_address");
  a.managed = get_bool(o, "managed");
  a.name = get_text(o, "name");
  a.description = get_text(o, "description");
  try {
    a.key = json::value_to<key_identity>(require(o, "key"));
  } catch (const Error& e) {
    bad("key." + std::string(e.what()));
  }
  return a;
}

new_usage_key tag_invoke(json::value_to_tag<new_usage_key>, const json::value& v) {
  const json::object& o = expect_object(v, "add_usage_api_key answer");
  new_usage_key k;
  k.usage_api_key = get_secret(o, "usage_api_key");
  k.hash = get_hash(o, "hash");
  k.wallet_address = get_address(o, "wallet_address");
  return k;
}

usage_key_info tag_invoke(json::value_to_tag<usage_key_info>, const json::value& v) {
  const json::object& o = expect_object(v, "usage key");
  usage_key_info k;
  k.hash = get_hash(o, "hash");
  k.name = get_text(o, "name");
  k.description = get_text(o, "description");
  k.expiration = get_u64(o, "expiration", /*required=*/false);
  k.created_at = get_i64(o, "created_at", /*required=*/false);
  // The permission fields sit beside the metadata; each absent one reads as its default.
  scope::permission_set& p = k.permissions;
  for (const auto& [key, flag] : {std::pair<std::string_view, bool*>{"can_create_groups", &p.can_create_groups},
                                  {"can_delete_groups", &p.can_delete_groups},
                                  {"can_create_pkps", &p.can_create_pkps}}) {
    if (o.contains(key))
      *flag = get_bool(o, key);
  }
  for (const auto& [key, list] : {std::pair<std::string_view, std::vector<scope::group_id>*>{
                                      "manage_ipfs_ids_in_groups", &p.manage_ipfs_ids_in_groups},
                                  {"add_pkp_to_groups", &p.add_pkp_to_groups},
                                  {"remove_pkp_from_groups", &p.remove_pkp_from_groups},
                                  {"execute_in_groups", &p.execute_in_groups}}) {
    const json::value* f = o.if_contains(key);
    if (f == nullptr || f->is_null())
      continue;
    if (!f->is_array())
      bad(std::string(key) + ": expected an array of group ids");
    const json::array& a = f->get_array();
    for (size_t i = 0; i < a.size(); ++i)
      list->push_back(detail::read::to_u64(a[i], std::string(key) + "[" + std::to_string(i) + "]"));
  }
  return k;
}

group tag_invoke(json::value_to_tag<group>, const json::value& v) {
  const json::object& o = expect_object(v, "group");
  group g;
  g.group_id = get_u64(o, "group_id");
  g.name = get_text(o, "name");
  g.description = get_text(o, "description");
  g.pkp_ids_permitted = read_addresses(o, "pkp_ids_permitted");
  g.cid_hashes_permitted = read_hashes(o, "cid_hashes_permitted");
  return g;
}

wallet tag_invoke(json::value_to_tag<wallet>, const json::value& v) {
  const json::object& o = expect_object(v, "wallet");
  wallet w;
  w.pkp_id = get_address(o, "pkp_id");
  w.wallet_address = get_address(o, "wallet_address");
  w.derivation_path = get_hash(o, "derivation_path");
  w.name = get_text(o, "name");
  w.description = get_text(o, "description");
  return w;
}

action tag_invoke(json::value_to_tag<action>, const json::value& v) {
  const json::object& o = expect_object(v, "action");
  action a;
  a.action_ipfs_cid = get_string(o, "action_ipfs_cid");
  a.hashed_cid = get_hash(o, "hashed_cid");
  a.name = get_text(o, "name");
  a.description = get_text(o, "description");
  return a;
}

uploaded_action tag_invoke(json::value_to_tag<uploaded_action>, const json::value& v) {
  const json::object& o = expect_object(v, "upload_action answer");
  uploaded_action a;
  a.action_ipfs_cid = get_string(o, "action_ipfs_cid");
  a.hashed_cid = get_hash(o, "hashed_cid");
  return a;
}

run_action_result tag_invoke(json::value_to_tag<run_action_result>, const json::value& v) {
  const json::object& o = expect_object(v, "run_action answer");
  run_action_result r;
  r.response = require(o, "response");
  r.logs = get_string(o, "logs");
  r.run_ms = get_u64(o, "run_ms");
  r.charged_credits = get_u64(o, "charged_credits");
  const json::object& sigs = expect_object(require(o, "signatures"), "signatures");
  for (const auto& kv : sigs) {
    const std::string what = "signatures." + std::string(kv.key());
    const json::object& so = expect_object(kv.value(), what);
    action_signature sig;
    auto raw = hex::decode_fixed<65>(get_string(so, "signature"), what + ".signature");
    if (!raw)
      bad(raw.err().message);
    sig.signature = *raw;
    sig.r = get_hash(so, "r");
    sig.s = get_hash(so, "s");
    const uint64_t vv = get_u64(so, "v");
    if (vv != 27 && vv != 28)
      bad(what + ".v: expected 27 or 28");
    sig.v = static_cast<uint8_t>(vv);
    auto pub = hex::decode(get_string(so, "public_key"), what + ".public_key");
    if (!pub || pub->size() != 65)
      bad(what + ".public_key: expected 65 bytes");
    sig.public_key = std::move(*pub);
    sig.digest = get_hash(so, "digest");
    r.signatures.emplace(std::string(kv.key()), std::move(sig));
  }
  return r;
}

void tag_invoke(json::value_from_tag, json::value& v, const run_action_request& r) {
  json::object& o = v.emplace_object();
  if (r.code)
    o["code"] = *r.code;
  if (r.action_ipfs_cid)
    o["action_ipfs_cid"] = *r.action_ipfs_cid;
  if (r.pkp_id)
    o["pkp_id"] = to_checksum_address(*r.pkp_id);
  if (!r.params.empty())
    o["params"] = r.params;
}

chain_config tag_invoke(json::value_to_tag<chain_config>, const json::value& v) {
  const json::object& o = expect_object(v, "chain config");
  chain_config c;
  c.chain_id = get_u64(o, "chain_id");
  c.contract_address = get_address(o, "contract_address");
  c.chain_name = get_text(o, "chain_name");
  return c;
}

stripe_config tag_invoke(json::value_to_tag<stripe_config>, const json::value& v) {
  const json::object& o = expect_object(v, "stripe_config answer");
  return stripe_config{get_string(o, "publishable_key")};
}

credit_balance tag_invoke(json::value_to_tag<credit_balance>, const json::value& v) {
  const json::object& o = expect_object(v, "balance answer");
  credit_balance b;
  b.balance_credits = get_u64(o, "balance_credits");
  b.currency = get_text(o, "currency");
  return b;
}

payment_intent tag_invoke(json::value_to_tag<payment_intent>, const json::value& v) {
  const json::object& o = expect_object(v, "payment intent");
  payment_intent p;
  p.payment_intent_id = get_string(o, "payment_intent_id");
  p.client_secret = get_string(o, "client_secret");
  p.amount_cents = get_u64(o, "amount_cents");
  return p;
}

// --- ChainSecured ------------------------------------------------------------------------------

void tag_invoke(json::value_from_tag, json::value& v, const minted_wallet& w) {
  json::object& o = v.emplace_object();
  o["pkp_id"] = to_checksum_address(w.pkp_id);
  o["wallet_address"] = to_checksum_address(w.wallet_address);
  o["derivation_path"] = hex::encode_prefixed(w.derivation_path);
}

void tag_invoke(json::value_from_tag, json::value& v, const chain_secured_account& a) {
  json::object& o = v.emplace_object();
  o["new_admin_wallet_address"] = to_checksum_address(a.new_admin_wallet_address);
  o["api_key_hash"] = hex::encode_prefixed(a.api_key_hash);
}

minted_wallet tag_invoke(json::value_to_tag<minted_wallet>, const json::value& v) {
  const json::object& o = expect_object(v, "create_wallet_with_signature answer");
  minted_wallet w;
  w.pkp_id = get_address(o, "pkp_id");
  w.wallet_address = get_address(o, "wallet_address");
  w.derivation_path = get_hash(o, "derivation_path");
  return w;
}

minted_usage_key tag_invoke(json::value_to_tag<minted_usage_key>, const json::value& v) {
  const json::object& o = expect_object(v, "add_usage_api_key_with_signature answer");
  minted_usage_key k;
  k.usage_api_key = get_secret(o, "usage_api_key");
  k.wallet_address = get_address(o, "wallet_address");
  k.derivation_path = get_hash(o, "derivation_path");
  return k;
}

chain_secured_account tag_invoke(json::value_to_tag<chain_secured_account>, const json::value& v) {
  const json::object& o = expect_object(v, "convert_to_chain_secured_account answer");
  chain_secured_account a;
  a.new_admin_wallet_address = get_address(o, "new_admin_wallet_address");
  a.api_key_hash = get_hash(o, "api_key_hash");
  return a;
}

namespace detail {

const json::array& read_page_header(const json::value& v, page_request& number_and_size, uint64_t& total) {
  const json::object& o = expect_object(v, "list answer");
  number_and_size.number = get_u64(o, "page_number");
  number_and_size.size = get_u64(o, "page_size");
  total = get_u64(o, "total");
  const json::value& items = require(o, "items");
  if (!items.is_array())
    bad("items: expected an array");
  return items.get_array();
}

void rethrow_item_error(size_t index, const Error& e) {
  throw Error(e.code(), "items[" + std::to_string(index) + "]." + e.what());
}

}  // namespace detail

}  // namespace enact::client
