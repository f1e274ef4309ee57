// SPDX-License-Identifier: Apache-2.0
// The route table, the component schemas and the helpers handlers share.
#include <httplib.h>

#include <charconv>

#include "core/errors.hpp"
#include "core/route.hpp"
#include "core/schema.hpp"
#include "enact/codec/hex.hpp"
#include "enact/address.hpp"

namespace enact::core {

namespace s = schema;

const std::vector<route>& routes() {
  static const std::vector<route> table = [] {
    std::vector<route> t;
    add_account_routes(t);
    add_group_routes(t);
    add_action_routes(t);
    add_run_routes(t);
    add_utility_routes(t);
    add_billing_routes(t);
    add_chainsecured_routes(t);
    return t;
  }();
  return table;
}

namespace {
json::object page_of(std::string_view item) {
  return s::object({{"items", s::array(s::ref(item), "", 100), true},
                    {"page_number", s::integer("", 1), true},
                    {"page_size", s::integer("", 1), true},
                    {"total", s::integer(), true}});
}
}  // namespace

const json::object& components() {
  static const json::object c = [] {
    json::object o;
    o["Group"] = s::object({{"group_id", s::integer("", 1), true},
                            {"name", s::string(), true},
                            {"description", s::string(), true},
                            {"pkp_ids_permitted", s::array(s::address()), true},
                            {"cid_hashes_permitted", s::array(s::hash()), true}});
    o["Wallet"] = s::object({{"pkp_id", s::address("the wallet address"), true},
                             {"wallet_address", s::address(), true},
                             {"derivation_path", s::hash("32 bytes"), true},
                             {"name", s::string(), true},
                             {"description", s::string(), true},
                             {"solana_address",
                              json::object{{"type", json::array{"string", "null"}},
                                           {"description",
                                            "base58 Solana address of the PKP's Ed25519 key; null when the "
                                            "registered derivation path is not a key of this account"}},
                              true},
                             {"usage_key_wallet",
                              s::boolean("true for the wallet of a usage key minted by signature: no PKP, it "
                                         "never signs, encrypts or decrypts in a run"),
                              true}});
    o["Action"] = s::object({{"action_ipfs_cid", s::string("raw CID; empty when only the hash is known"), true},
                             {"hashed_cid", s::hash(), true},
                             {"name", s::string(), true},
                             {"description", s::string(), true}});
    json::object key = s::object({{"hash", s::hash(), true},
                                  {"name", s::string(), true},
                                  {"description", s::string(), true},
                                  {"expiration", s::integer("unix seconds; 0 = never"), true},
                                  {"created_at", s::integer("unix seconds"), true},
                                  {"wallet_address", s::address(), true},
                                  {"can_create_groups", s::boolean(), true},
                                  {"can_delete_groups", s::boolean(), true},
                                  {"can_create_pkps", s::boolean(), true},
                                  {"manage_ipfs_ids_in_groups", s::array(s::integer()), true},
                                  {"add_pkp_to_groups", s::array(s::integer()), true},
                                  {"remove_pkp_from_groups", s::array(s::integer()), true},
                                  {"execute_in_groups", s::array(s::integer()), true}});
    o["UsageKey"] = std::move(key);
    o["GroupPage"] = page_of("Group");
    o["WalletPage"] = page_of("Wallet");
    o["ActionPage"] = page_of("Action");
    o["UsageKeyPage"] = page_of("UsageKey");
    o["UsageCharge"] =
        s::object({{"run_id", s::string("the run's request id; \"write <request id>\" for a write surcharge"), true},
                   {"key_hash", s::hash("the key that paid (the account hash for the account key)"), true},
                   {"charged_credits", s::integer(), true},
                   {"charged_at", s::integer("unix seconds"), true}});
    o["PaymentRecord"] =
        s::object({{"payment_intent_id", s::string(), true},
                   {"amount_cents", s::integer(), true},
                   {"provider", s::string("dev or stripe"), true},
                   {"credited", s::boolean(), true},
                   {"created_at", s::integer("unix seconds"), true},
                   {"credited_at", s::integer("unix seconds; 0 while not credited"), true},
                   {"reversed_cents", s::integer("what refunds and open or lost disputes take back now"), true},
                   {"reversals", s::array(s::ref("PaymentReversal"), "oldest first"), true}});
    o["PaymentReversal"] =
        s::object({{"kind", s::string("refund, dispute, or dispute_won (the amount a won dispute gave back)"), true},
                   {"amount_cents", s::integer(), true},
                   {"event_id", s::string("the Stripe event that reported it"), true},
                   {"created_at", s::integer("unix seconds"), true}});
    o["UsageChargePage"] = page_of("UsageCharge");
    o["PaymentRecordPage"] = page_of("PaymentRecord");
    o["Error"] = s::error_body();
    return o;
  }();
  return c;
}

// --- helpers ------------------------------------------------------------------------------------

namespace {
result<uint64_t> page_param(const httplib::Request& req, const char* name, uint64_t fallback, uint64_t max) {
  if (!req.has_param(name))
    return fallback;
  const std::string v = req.get_param_value(name);
  uint64_t n = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (ec != std::errc{} || end != v.data() + v.size() || n < 1 || n > max)
    return fail(api_errc::invalid_request, std::string("query.") + name + ": expected an integer from 1 to " +
                                               std::to_string(max) + ", got '" + v + "'");
  return n;
}
}  // namespace

result<ledger::page_request> read_page(const httplib::Request& req) {
  ENACT_TRY(const uint64_t number, page_param(req, "page_number", 1, uint64_t{1} << 40));
  ENACT_TRY(const uint64_t size, page_param(req, "page_size", 20, 100));
  return ledger::page_request{number, size};
}

ledger::write_context relay(const request_context& c) {
  return ledger::write_context{c.svc.api_payer};  // the surcharge is the metering store's (mount.cpp)
}

std::string str(const json::value& body, std::string_view key, std::string_view fallback) {
  const auto* v = body.as_object().if_contains(key);
  if (v == nullptr || !v->is_string())
    return std::string(fallback);
  return std::string(v->get_string());
}

result<void> require_scope(const request_context& c, scopes::permission p, std::optional<scopes::group_id> group) {
  if (scopes::allows(c.who->scopes, p, group))
    return {};
  std::string msg = "this key lacks " + std::string(scopes::name(p));
  if (scopes::is_per_group(p) && group)
    msg += " on group " + std::to_string(*group);
  return fail(api_errc::forbidden, msg);
}

api::group to_api(const ledger::group& g) { return api::group{g.id, g.name, g.description, g.pkps, g.cid_hashes}; }

api::wallet to_api(const ledger::wallet& w) {
  return api::wallet{w.pkp_id, w.pkp_id, w.derivation_path, w.name, w.description, std::nullopt};
}

api::action to_api(const ledger::action& a) { return api::action{a.cid, a.hashed_cid, a.name, a.description}; }

json::object usage_key_json(const ledger::usage_key& k) {
  json::object o{{"hash", codec::hex::encode_prefixed(k.hash)},
                 {"name", k.name},
                 {"description", k.description},
                 {"expiration", k.expiration},
                 {"created_at", k.created_at},
                 {"wallet_address", to_checksum_address(k.wallet)}};
  scopes::write_permission_fields(o, k.permissions);
  return o;
}

}  // namespace enact::core
