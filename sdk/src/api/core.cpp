// SPDX-License-Identifier: Apache-2.0
#include "enact/api/core.hpp"

#include <charconv>
#include <tuple>
#include <string>
#include <string_view>

#include "enact/codec/hex.hpp"
#include "enact/address.hpp"
#include "../client/json_read.hpp"

namespace enact::api {

using client::detail::read::bad;
using client::detail::read::expect_object;
using client::detail::read::get_address;
using client::detail::read::get_bool;
using client::detail::read::get_hash;
using client::detail::read::get_i64;
using client::detail::read::get_secret;
using client::detail::read::get_string;
using client::detail::read::get_text;
using client::detail::read::get_u64;
using client::detail::read::require;

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
    a.emplace_back(codec::hex::encode_prefixed(x));
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
    out.push_back(client::detail::read::to_address(a[i], std::string(key) + "[" + std::to_string(i) + "]"));
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
    out.push_back(client::detail::read::to_hash(a[i], std::string(key) + "[" + std::to_string(i) + "]"));
  return out;
}

void put_optional(json::object& o, std::string_view key, const std::optional<std::string>& s) {
  if (s)
    o[key] = *s;
}

std::string_view kind_name(scopes::key_kind k) { return k == scopes::key_kind::account ? "account" : "usage"; }

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
  o["hash"] = codec::hex::encode_prefixed(k.hash);
  if (k.permissions)
    o["permissions"] = json::value_from(*k.permissions);
}

void tag_invoke(json::value_from_tag, json::value& v, const account_info& a) {
  json::object& o = v.emplace_object();
  o["api_key_hash"] = codec::hex::encode_prefixed(a.api_key_hash);
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
  scopes::write_permission_fields(o, s.permissions);
}

void tag_invoke(json::value_from_tag, json::value& v, const usage_key_info& k) {
  json::object& o = v.emplace_object();
  o["hash"] = codec::hex::encode_prefixed(k.hash);
  o["name"] = k.name;
  o["description"] = k.description;
  o["expiration"] = k.expiration;
  o["created_at"] = k.created_at;
  scopes::write_permission_fields(o, k.permissions);
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

void tag_invoke(json::value_from_tag, json::value& v, const new_action& a) {
  json::object& o = v.emplace_object();
  o["action_ipfs_cid"] = a.action_ipfs_cid;
  o["name"] = a.name;
  put_optional(o, "description", a.description);
}

// --- value_to ----------------------------------------------------------------------------------

key_identity tag_invoke(json::value_to_tag<key_identity>, const json::value& v) {
  const json::object& o = expect_object(v, "key");
  key_identity k;
  const std::string kind = get_string(o, "kind");
  if (kind == "account")
    k.kind = scopes::key_kind::account;
  else if (kind == "usage")
    k.kind = scopes::key_kind::usage;
  else
    bad("kind: expected \"account\" or \"usage\", got \"" + kind + "\"");
  k.hash = get_hash(o, "hash");
  if (const auto* p = o.if_contains("permissions"); p != nullptr && !p->is_null()) {
    if (!p->is_object())
      bad("permissions: expected an object");
    auto perms = scopes::permission_set_from_json(p->get_object());
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

usage_key_info tag_invoke(json::value_to_tag<usage_key_info>, const json::value& v) {
  const json::object& o = expect_object(v, "usage key");
  usage_key_info k;
  k.hash = get_hash(o, "hash");
  k.name = get_text(o, "name");
  k.description = get_text(o, "description");
  k.expiration = get_u64(o, "expiration", /*required=*/false);
  k.created_at = get_i64(o, "created_at", /*required=*/false);
  // The permission fields sit beside the metadata; each absent one reads as its default.
  scopes::permission_set& p = k.permissions;
  for (const auto& [key, flag] : {std::pair<std::string_view, bool*>{"can_create_groups", &p.can_create_groups},
                                  {"can_delete_groups", &p.can_delete_groups},
                                  {"can_create_pkps", &p.can_create_pkps}}) {
    if (o.contains(key))
      *flag = get_bool(o, key);
  }
  for (const auto& [key, list] : {std::pair<std::string_view, std::vector<scopes::group_id>*>{
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
      list->push_back(client::detail::read::to_u64(a[i], std::string(key) + "[" + std::to_string(i) + "]"));
  }
  return k;
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
    auto raw = codec::hex::decode_fixed<65>(get_string(so, "signature"), what + ".signature");
    if (!raw)
      bad(raw.err().message);
    sig.signature = *raw;
    sig.r = get_hash(so, "r");
    sig.s = get_hash(so, "s");
    const uint64_t vv = get_u64(so, "v");
    if (vv != 27 && vv != 28)
      bad(what + ".v: expected 27 or 28");
    sig.v = static_cast<uint8_t>(vv);
    auto pub = codec::hex::decode(get_string(so, "public_key"), what + ".public_key");
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

void tag_invoke(json::value_from_tag, json::value& v, const action_signature& sig) {
  v = json::object{{"signature", codec::hex::encode_prefixed(sig.signature)},
                   {"r", codec::hex::encode_prefixed(sig.r)},
                   {"s", codec::hex::encode_prefixed(sig.s)},
                   {"v", static_cast<uint64_t>(sig.v)},
                   {"public_key", codec::hex::encode_prefixed(sig.public_key)},
                   {"digest", codec::hex::encode_prefixed(sig.digest)}};
}

void tag_invoke(json::value_from_tag, json::value& v, const run_action_result& r) {
  json::object sigs;
  for (const auto& [name, sig] : r.signatures)
    sigs[name] = json::value_from(sig);
  v = json::object{{"response", r.response},
                   {"logs", r.logs},
                   {"signatures", std::move(sigs)},
                   {"run_ms", r.run_ms},
                   {"charged_credits", r.charged_credits}};
}

// --- flat types: one list of fields serves both directions -------------------------------------

namespace {

/// A member of `S` and its wire name. A std::string member is read with get_string when
/// `required` (an id, a CID, a provider handle) and as free text (absent or null: empty) when not.
template <class S, class M>
struct field {
  std::string_view name;
  M S::*member;
  bool required = false;
};
// Explicit guides: aggregate deduction (P1816) is missing from the clang the fuzz tree builds with.
template <class S, class M>
field(std::string_view, M S::*) -> field<S, M>;
template <class S, class M>
field(std::string_view, M S::*, bool) -> field<S, M>;

void put(json::object& o, std::string_view k, const std::string& s) { o[k] = s; }
void put(json::object& o, std::string_view k, const std::optional<std::string>& s) {
  if (s)
    o[k] = *s;
}
void put(json::object& o, std::string_view k, uint64_t n) { o[k] = n; }
void put(json::object& o, std::string_view k, bool b) { o[k] = b; }
void put(json::object& o, std::string_view k, const address& a) { o[k] = to_checksum_address(a); }
void put(json::object& o, std::string_view k, const hash256& h) { o[k] = codec::hex::encode_prefixed(h); }
void put(json::object& o, std::string_view k, const std::vector<address>& a) { o[k] = addresses_json(a); }
void put(json::object& o, std::string_view k, const std::vector<hash256>& h) { o[k] = hashes_json(h); }

void get(const json::object& o, std::string_view k, std::string& s, bool required) {
  s = required ? get_string(o, k) : get_text(o, k);
}
void get(const json::object& o, std::string_view k, std::optional<std::string>& s, bool) {
  const json::value* f = o.if_contains(k);
  s = f == nullptr || f->is_null() ? std::nullopt : std::optional<std::string>(get_string(o, k));
}
void get(const json::object& o, std::string_view k, uint64_t& n, bool) { n = get_u64(o, k); }
void get(const json::object& o, std::string_view k, bool& b, bool required) {
  // An optional flag left out (by an older server) keeps its default.
  if (required || o.contains(k))
    b = get_bool(o, k);
}
void get(const json::object& o, std::string_view k, address& a, bool) { a = get_address(o, k); }
void get(const json::object& o, std::string_view k, hash256& h, bool) { h = get_hash(o, k); }
void get(const json::object& o, std::string_view k, Secret& s, bool) { s = get_secret(o, k); }
void get(const json::object& o, std::string_view k, std::vector<address>& a, bool) { a = read_addresses(o, k); }
void get(const json::object& o, std::string_view k, std::vector<hash256>& h, bool) { h = read_hashes(o, k); }

// The fields of each flat type, in wire order.
auto fields_of(const group*) {
  return std::tuple{field{"group_id", &group::group_id}, field{"name", &group::name},
                    field{"description", &group::description}, field{"pkp_ids_permitted", &group::pkp_ids_permitted},
                    field{"cid_hashes_permitted", &group::cid_hashes_permitted}};
}
auto fields_of(const group_ref*) { return std::tuple{field{"group_id", &group_ref::group_id}}; }
auto fields_of(const group_pkp*) {
  return std::tuple{field{"group_id", &group_pkp::group_id}, field{"pkp_id", &group_pkp::pkp_id}};
}
auto fields_of(const group_action*) {
  return std::tuple{field{"group_id", &group_action::group_id},
                    field{"action_ipfs_cid", &group_action::action_ipfs_cid, true}};
}
auto fields_of(const group_action_hash*) {
  return std::tuple{field{"group_id", &group_action_hash::group_id},
                    field{"hashed_cid", &group_action_hash::hashed_cid}};
}
auto fields_of(const wallet*) {
  return std::tuple{field{"pkp_id", &wallet::pkp_id},
                    field{"wallet_address", &wallet::wallet_address},
                    field{"derivation_path", &wallet::derivation_path},
                    field{"name", &wallet::name},
                    field{"description", &wallet::description},
                    field{"solana_address", &wallet::solana_address},
                    field{"usage_key_wallet", &wallet::usage_key_wallet}};
}
auto fields_of(const action*) {
  return std::tuple{field{"action_ipfs_cid", &action::action_ipfs_cid, true}, field{"hashed_cid", &action::hashed_cid},
                    field{"name", &action::name}, field{"description", &action::description}};
}
auto fields_of(const action_metadata*) {
  return std::tuple{field{"hashed_cid", &action_metadata::hashed_cid}, field{"name", &action_metadata::name},
                    field{"description", &action_metadata::description}};
}
auto fields_of(const action_ref*) { return std::tuple{field{"hashed_cid", &action_ref::hashed_cid}}; }
auto fields_of(const action_code*) {
  return std::tuple{field{"action_ipfs_cid", &action_code::action_ipfs_cid, true},
                    field{"code", &action_code::code, true}};
}
auto fields_of(const uploaded_action*) {
  return std::tuple{field{"action_ipfs_cid", &uploaded_action::action_ipfs_cid, true},
                    field{"hashed_cid", &uploaded_action::hashed_cid}};
}
auto fields_of(const chain_config*) {
  return std::tuple{field{"chain_id", &chain_config::chain_id},
                    field{"contract_address", &chain_config::contract_address},
                    field{"chain_name", &chain_config::chain_name}};
}
auto fields_of(const stripe_config*) {
  return std::tuple{field{"publishable_key", &stripe_config::publishable_key, true},
                    field{"mode", &stripe_config::mode}};
}
auto fields_of(const credit_balance*) {
  return std::tuple{field{"balance_credits", &credit_balance::balance_credits},
                    field{"currency", &credit_balance::currency}};
}
auto fields_of(const payment_intent*) {
  return std::tuple{field{"payment_intent_id", &payment_intent::payment_intent_id, true},
                    field{"client_secret", &payment_intent::client_secret, true},
                    field{"amount_cents", &payment_intent::amount_cents}};
}
auto fields_of(const usage_charge*) {
  return std::tuple{field{"run_id", &usage_charge::run_id, true}, field{"key_hash", &usage_charge::key_hash},
                    field{"charged_credits", &usage_charge::charged_credits},
                    field{"charged_at", &usage_charge::charged_at}};
}
auto fields_of(const payment_record*) {
  return std::tuple{field{"payment_intent_id", &payment_record::payment_intent_id, true},
                    field{"amount_cents", &payment_record::amount_cents},
                    field{"provider", &payment_record::provider, true},
                    field{"credited", &payment_record::credited, true},
                    field{"created_at", &payment_record::created_at},
                    field{"credited_at", &payment_record::credited_at}};
}
auto fields_of(const new_account_response*) {
  return std::tuple{field{"api_key", &new_account_response::api_key},
                    field{"wallet_address", &new_account_response::wallet_address},
                    field{"api_key_hash", &new_account_response::api_key_hash}};
}
auto fields_of(const new_usage_key*) {
  return std::tuple{field{"usage_api_key", &new_usage_key::usage_api_key}, field{"hash", &new_usage_key::hash},
                    field{"wallet_address", &new_usage_key::wallet_address}};
}
auto fields_of(const minted_wallet*) {
  return std::tuple{field{"pkp_id", &minted_wallet::pkp_id}, field{"wallet_address", &minted_wallet::wallet_address},
                    field{"derivation_path", &minted_wallet::derivation_path},
                    field{"solana_address", &minted_wallet::solana_address}};
}
auto fields_of(const minted_usage_key*) {
  return std::tuple{field{"usage_api_key", &minted_usage_key::usage_api_key},
                    field{"wallet_address", &minted_usage_key::wallet_address},
                    field{"derivation_path", &minted_usage_key::derivation_path}};
}
auto fields_of(const chain_secured_account*) {
  return std::tuple{field{"new_admin_wallet_address", &chain_secured_account::new_admin_wallet_address},
                    field{"api_key_hash", &chain_secured_account::api_key_hash}};
}

/// Writes the fields of `s` in the order listed.
template <class S>
void write_fields(json::value& v, const S& s) {
  json::object& o = v.emplace_object();
  std::apply([&](const auto&... f) { (put(o, f.name, s.*(f.member)), ...); },
             fields_of(static_cast<const S*>(nullptr)));
}

/// Reads the fields in the order listed: the first bad one throws, named. `what` names the answer
/// when it is not an object.
template <class S>
S read_fields(const json::value& v, std::string_view what) {
  const json::object& o = expect_object(v, what);
  S s;
  std::apply([&](const auto&... f) { (get(o, f.name, s.*(f.member), f.required), ...); },
             fields_of(static_cast<const S*>(nullptr)));
  return s;
}

}  // namespace

void tag_invoke(json::value_from_tag, json::value& v, const group& x) { write_fields(v, x); }
group tag_invoke(json::value_to_tag<group>, const json::value& v) { return read_fields<group>(v, "group"); }
void tag_invoke(json::value_from_tag, json::value& v, const group_ref& x) { write_fields(v, x); }
group_ref tag_invoke(json::value_to_tag<group_ref>, const json::value& v) {
  return read_fields<group_ref>(v, "answer");
}
void tag_invoke(json::value_from_tag, json::value& v, const group_pkp& x) { write_fields(v, x); }
void tag_invoke(json::value_from_tag, json::value& v, const group_action& x) { write_fields(v, x); }
void tag_invoke(json::value_from_tag, json::value& v, const group_action_hash& x) { write_fields(v, x); }
void tag_invoke(json::value_from_tag, json::value& v, const wallet& x) { write_fields(v, x); }
wallet tag_invoke(json::value_to_tag<wallet>, const json::value& v) { return read_fields<wallet>(v, "wallet"); }
void tag_invoke(json::value_from_tag, json::value& v, const action& x) { write_fields(v, x); }
action tag_invoke(json::value_to_tag<action>, const json::value& v) { return read_fields<action>(v, "action"); }
void tag_invoke(json::value_from_tag, json::value& v, const action_metadata& x) { write_fields(v, x); }
void tag_invoke(json::value_from_tag, json::value& v, const action_ref& x) { write_fields(v, x); }
action_ref tag_invoke(json::value_to_tag<action_ref>, const json::value& v) {
  return read_fields<action_ref>(v, "answer");
}
void tag_invoke(json::value_from_tag, json::value& v, const uploaded_action& x) { write_fields(v, x); }
void tag_invoke(json::value_from_tag, json::value& v, const action_code& x) { write_fields(v, x); }
action_code tag_invoke(json::value_to_tag<action_code>, const json::value& v) {
  return read_fields<action_code>(v, "get_action_code answer");
}
uploaded_action tag_invoke(json::value_to_tag<uploaded_action>, const json::value& v) {
  return read_fields<uploaded_action>(v, "upload_action answer");
}
void tag_invoke(json::value_from_tag, json::value& v, const chain_config& x) { write_fields(v, x); }
chain_config tag_invoke(json::value_to_tag<chain_config>, const json::value& v) {
  return read_fields<chain_config>(v, "chain config");
}
void tag_invoke(json::value_from_tag, json::value& v, const stripe_config& x) { write_fields(v, x); }
stripe_config tag_invoke(json::value_to_tag<stripe_config>, const json::value& v) {
  return read_fields<stripe_config>(v, "stripe_config answer");
}
void tag_invoke(json::value_from_tag, json::value& v, const credit_balance& x) { write_fields(v, x); }
credit_balance tag_invoke(json::value_to_tag<credit_balance>, const json::value& v) {
  return read_fields<credit_balance>(v, "balance answer");
}
void tag_invoke(json::value_from_tag, json::value& v, const payment_intent& x) { write_fields(v, x); }
payment_intent tag_invoke(json::value_to_tag<payment_intent>, const json::value& v) {
  return read_fields<payment_intent>(v, "payment intent");
}
void tag_invoke(json::value_from_tag, json::value& v, const usage_charge& x) { write_fields(v, x); }
usage_charge tag_invoke(json::value_to_tag<usage_charge>, const json::value& v) {
  return read_fields<usage_charge>(v, "usage charge");
}
void tag_invoke(json::value_from_tag, json::value& v, const payment_record& x) {
  write_fields(v, x);
  json::object& o = v.as_object();
  o["reversed_cents"] = x.reversed_cents;
  json::array rs;
  for (const payment_reversal& r : x.reversals)
    rs.push_back(json::object{
        {"kind", r.kind}, {"amount_cents", r.amount_cents}, {"event_id", r.event_id}, {"created_at", r.created_at}});
  o["reversals"] = std::move(rs);
}
payment_record tag_invoke(json::value_to_tag<payment_record>, const json::value& v) {
  payment_record p = read_fields<payment_record>(v, "payment record");
  // Optional: a server from before reversals (docs/protocol.md §2 "Billing") sends neither.
  const json::object& o = v.as_object();
  p.reversed_cents = get_u64(o, "reversed_cents", /*required=*/false);
  if (const json::value* rs = o.if_contains("reversals"); rs != nullptr && !rs->is_null()) {
    if (!rs->is_array())
      throw std::runtime_error("payment record: reversals: expected an array");
    for (const json::value& r : rs->get_array()) {
      const json::object& ro = expect_object(r, "payment record: reversal");
      p.reversals.push_back(payment_reversal{get_string(ro, "kind"), get_u64(ro, "amount_cents"),
                                             get_string(ro, "event_id"), get_u64(ro, "created_at")});
    }
  }
  return p;
}
new_account_response tag_invoke(json::value_to_tag<new_account_response>, const json::value& v) {
  return read_fields<new_account_response>(v, "new_account answer");
}
new_usage_key tag_invoke(json::value_to_tag<new_usage_key>, const json::value& v) {
  return read_fields<new_usage_key>(v, "add_usage_api_key answer");
}
void tag_invoke(json::value_from_tag, json::value& v, const minted_wallet& x) { write_fields(v, x); }
minted_wallet tag_invoke(json::value_to_tag<minted_wallet>, const json::value& v) {
  return read_fields<minted_wallet>(v, "create_wallet_with_signature answer");
}
minted_usage_key tag_invoke(json::value_to_tag<minted_usage_key>, const json::value& v) {
  return read_fields<minted_usage_key>(v, "add_usage_api_key_with_signature answer");
}
void tag_invoke(json::value_from_tag, json::value& v, const chain_secured_account& x) { write_fields(v, x); }
chain_secured_account tag_invoke(json::value_to_tag<chain_secured_account>, const json::value& v) {
  return read_fields<chain_secured_account>(v, "convert_to_chain_secured_account answer");
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

}  // namespace enact::api
