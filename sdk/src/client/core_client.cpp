// SPDX-License-Identifier: Apache-2.0
#include "enact/client/core_client.hpp"

#include <algorithm>
#include <boost/json.hpp>

#include <cctype>
#include <chrono>
#include <utility>

#include "enact/codec/hex.hpp"
#include "enact/address.hpp"
#include "enact/crypto/keccak.hpp"
#include "enact/crypto/secp256k1.hpp"
#include "json_read.hpp"
#include "transport.hpp"

namespace enact::client {

namespace {

using detail::http_answer;
using detail::http_method;
using detail::http_request;

constexpr std::string_view kRoot = "/core/v1";

std::string paged(std::string_view endpoint, page_request p, std::string_view extra = {}) {
  std::string t = std::string(kRoot) + std::string(endpoint) + "?";
  if (!extra.empty())
    t += std::string(extra) + "&";
  t += "page_number=" + std::to_string(p.number) + "&page_size=" + std::to_string(p.size);
  return t;
}

template <class T>
T decode(const http_answer& a) {
  return detail::decode_answer(a, [](const json::value& v) { return json::value_to<T>(v); });
}

hash256 decode_hash_field(const http_answer& a, std::string_view key) {
  return detail::decode_answer(
      a, [&](const json::value& v) { return detail::read::get_hash(detail::read::expect_object(v, "answer"), key); });
}

uint64_t decode_u64_field(const http_answer& a, std::string_view key) {
  return detail::decode_answer(
      a, [&](const json::value& v) { return detail::read::get_u64(detail::read::expect_object(v, "answer"), key); });
}

/// `{"typed_data": …, "signature": …}` plus `extra` fields: the body of the ChainSecured endpoints.
std::string envelope_body(const eip712::envelope::signed_envelope& proof, json::object extra = {}) {
  extra["typed_data"] = proof.typed_data;
  extra["signature"] = proof.signature;
  return json::serialize(extra);
}

uint64_t unix_now() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count());
}

/// A signing failure (a key that is no secp256k1 key) as the client reports it: nothing was sent.
template <class T>
T signed_or_throw(result<T> r, eip712::envelope::kind k) {
  if (!r)
    throw api_error(api_errc::invalid_request, 0, {},
                    std::string(eip712::envelope::primary_type_name(k)) + " envelope: " + r.err().message);
  return std::move(r).value();
}

/// A key value in a request body: sent as its text, wiped from the JSON tree once serialized.
std::string body_with_key(json::object o, const Secret& usage_api_key) {
  o["usage_api_key"] = as_chars(usage_api_key.view());
  std::string text = json::serialize(o);
  json::value v = std::move(o);
  detail::wipe_strings(v);
  return text;
}

}  // namespace

struct core_client::impl {
  detail::transport http;
  Secret api_key;
  std::optional<eip712::envelope::deployment> deployment;  // of the server, once asked

  impl(client_options o, Secret key) : http(std::move(o)), api_key(std::move(key)) {}

  enum class auth { none, key };

  http_answer get(std::string target, auth a) {
    http_request r;
    r.method = http_method::get;
    r.target = std::move(target);
    if (a == auth::key)
      r.api_key = &api_key;
    return http.send(r);
  }

  http_answer post(std::string_view endpoint, std::string body, auth a, std::vector<bytes_view> redact = {},
                   detail::http_headers extra = {}) {
    http_request r;
    r.method = http_method::post;
    r.target = std::string(kRoot) + std::string(endpoint);
    r.body = std::move(body);
    if (a == auth::key)
      r.api_key = &api_key;
    r.redact = std::move(redact);
    r.extra = std::move(extra);
    return http.send(r);
  }

  template <class T>
  http_answer post_json(std::string_view endpoint, const T& request, auth a) {
    return post(endpoint, json::serialize(json::value_from(request)), a);
  }

  chain_config chain() {
    chain_config c = decode<chain_config>(get(std::string(kRoot) + "/get_node_chain_config", auth::none));
    deployment = eip712::envelope::deployment{c.chain_id, c.contract_address};
    return c;
  }

  const eip712::envelope::deployment& server_deployment() {
    if (!deployment)
      (void)chain();
    return *deployment;
  }

  /// The server's deployment, checked against the chain the caller means when it names one.
  eip712::envelope::deployment deployment_for(std::optional<uint64_t> chain_id) {
    const eip712::envelope::deployment d = server_deployment();
    if (chain_id && *chain_id != d.chain_id)
      throw api_error(api_errc::chain_id_mismatch, 0, {},
                      "chain id " + std::to_string(*chain_id) + " is not the server's (" + std::to_string(d.chain_id) +
                          ", get_node_chain_config): no envelope was signed or sent");
    return d;
  }

  /// A version 2 envelope of kind `k` signed now by `key`, with a fresh nonce.
  eip712::envelope::signed_envelope sign_now(eip712::envelope::kind k, std::optional<uint64_t> chain_id,
                                             const Secret& key, const hash256& account = {}) {
    const auto d = deployment_for(chain_id);
    return signed_or_throw(eip712::envelope::sign_v2(k, d, key, unix_now(), account), k);
  }

  /// The new admin (the key's address) and its ConvertAccount envelope naming this client's
  /// account: keccak256 of the account key's text (docs/protocol.md §2 "Envelope version 2").
  std::pair<address, eip712::envelope::signed_envelope> conversion_proof(const Secret& new_admin_key,
                                                                         std::optional<uint64_t> chain_id) {
    const auto pub = crypto::secp256k1::public_key_of(new_admin_key);
    if (!pub)
      throw api_error(api_errc::invalid_request, 0, {}, "new_admin_key: " + pub.err().message);
    if (api_key.empty())
      throw api_error(api_errc::invalid_request, 0, {},
                      "convert_to_chain_secured_account: the client has no account key to convert");
    const hash256 account = crypto::keccak256(as_chars(api_key.view()));
    return {crypto::secp256k1::to_address(*pub),
            sign_now(eip712::envelope::kind::convert_account, chain_id, new_admin_key, account)};
  }

  /// Signs a BillingAuth for the request the transport is about to send (docs/protocol.md §2: its
  /// method, its target as written and keccak256 of its body).
  void bind_wallet(http_request& r, const Secret& admin_wallet_key) {
    const auto d = server_deployment();
    r.wallet_auth_for = [d, &admin_wallet_key](std::string_view method, std::string_view target,
                                               std::string_view body) {
      const auto k = eip712::envelope::kind::billing_auth;
      return eip712::envelope::encode_wallet_auth(
          signed_or_throw(eip712::envelope::sign_billing(d, admin_wallet_key, unix_now(),
                                                         eip712::envelope::bind_request(method, target, body)),
                          k));
    };
  }

  /// The credential of a billing call: the API key, a wallet proof as given, or the wallet's key.
  struct billing_auth {
    const eip712::envelope::signed_envelope* proof = nullptr;
    const Secret* wallet_key = nullptr;
  };

  // Billing: the API key, or a wallet proof in X-Wallet-Auth instead of it.
  http_answer billing(http_method m, std::string_view endpoint, std::string body, billing_auth who) {
    http_request r;
    r.method = m;
    r.target = std::string(kRoot) + "/billing" + std::string(endpoint);
    r.body = std::move(body);
    if (who.proof != nullptr)
      r.wallet_auth = eip712::envelope::encode_wallet_auth(*who.proof);
    else if (who.wallet_key != nullptr)
      bind_wallet(r, *who.wallet_key);
    else
      r.api_key = &api_key;
    return http.send(r);
  }

  credit_balance balance(billing_auth who) {
    return decode<credit_balance>(billing(http_method::get, "/balance", {}, who));
  }

  payment_intent create_payment_intent(uint64_t amount_cents, billing_auth who) {
    json::object o;
    o["amount_cents"] = amount_cents;
    return decode<payment_intent>(billing(http_method::post, "/create_payment_intent", json::serialize(o), who));
  }

  template <class T>
  page<T> billing_page(std::string_view endpoint, page_request p, billing_auth who) {
    const std::string target =
        std::string(endpoint) + "?page_number=" + std::to_string(p.number) + "&page_size=" + std::to_string(p.size);
    return decode<page<T>>(billing(http_method::get, target, {}, who));
  }

  uint64_t confirm_payment(std::string_view id, billing_auth who) {
    json::object o;
    o["payment_intent_id"] = id;
    return decode_u64_field(billing(http_method::post, "/confirm_payment", json::serialize(o), who), "balance_credits");
  }

  raw_answer call(std::string_view method, std::string_view target, std::string_view json_body,
                  const Secret* wallet_key) {
    http_request r;
    if (method == "GET")
      r.method = http_method::get;
    else if (method == "POST")
      r.method = http_method::post;
    else
      throw api_error(api_errc::invalid_request, 0, {},
                      "method: expected GET or POST, got '" + std::string(method) + "'");
    if (r.method == http_method::get && !json_body.empty())
      throw api_error(api_errc::invalid_request, 0, {}, "a GET request has no body");
    r.target = std::string(target);
    if (r.method == http_method::post)
      r.body = json_body.empty() ? std::string("{}") : std::string(json_body);
    if (wallet_key != nullptr)
      bind_wallet(r, *wallet_key);
    else
      r.api_key = &api_key;
    http_answer a = http.send(r);
    raw_answer out;
    out.status = a.status;
    out.request_id = std::move(a.request_id);
    out.body = json::serialize(a.body);
    detail::wipe_strings(a.body);
    return out;
  }
};

core_client::core_client(client_options options, Secret api_key)
    : impl_(std::make_unique<impl>(std::move(options), std::move(api_key))) {}
core_client::~core_client() = default;
core_client::core_client(core_client&&) noexcept = default;
core_client& core_client::operator=(core_client&&) noexcept = default;

void core_client::set_api_key(Secret api_key) { impl_->api_key = std::move(api_key); }
bool core_client::has_api_key() const noexcept { return !impl_->api_key.empty(); }

// --- accounts and keys -------------------------------------------------------------------------

new_account_response core_client::new_account(const new_account_request& request) {
  http_answer a = impl_->post_json("/new_account", request, impl::auth::none);
  new_account_response r = decode<new_account_response>(a);
  detail::wipe_strings(a.body);
  return r;
}

account_info core_client::account() {
  return decode<account_info>(impl_->get(std::string(kRoot) + "/account", impl::auth::key));
}

new_usage_key core_client::add_usage_api_key(const usage_key_spec& spec) {
  http_answer a = impl_->post_json("/add_usage_api_key", spec, impl::auth::key);
  new_usage_key k = decode<new_usage_key>(a);
  detail::wipe_strings(a.body);
  return k;
}

page<usage_key_info> core_client::list_api_keys(page_request p) {
  return decode<page<usage_key_info>>(impl_->get(paged("/list_api_keys", p), impl::auth::key));
}

hash256 core_client::update_usage_api_key(const Secret& usage_api_key, const usage_key_spec& spec) {
  json::value v = json::value_from(spec);
  return decode_hash_field(impl_->post("/update_usage_api_key", body_with_key(std::move(v.get_object()), usage_api_key),
                                       impl::auth::key, {usage_api_key.view()}),
                           "hash");
}

hash256 core_client::update_usage_api_key_metadata(const Secret& usage_api_key, std::string_view name,
                                                   std::string_view description) {
  json::object o;
  o["name"] = name;
  o["description"] = description;
  return decode_hash_field(impl_->post("/update_usage_api_key_metadata", body_with_key(std::move(o), usage_api_key),
                                       impl::auth::key, {usage_api_key.view()}),
                           "hash");
}

hash256 core_client::remove_usage_api_key(const Secret& usage_api_key) {
  return decode_hash_field(impl_->post("/remove_usage_api_key", body_with_key(json::object{}, usage_api_key),
                                       impl::auth::key, {usage_api_key.view()}),
                           "hash");
}

// --- groups ------------------------------------------------------------------------------------

group core_client::add_group(const new_group& g) {
  return decode<group>(impl_->post_json("/add_group", g, impl::auth::key));
}

page<group> core_client::list_groups(page_request p) {
  return decode<page<group>>(impl_->get(paged("/list_groups", p), impl::auth::key));
}

group core_client::update_group(const group& g) {
  return decode<group>(impl_->post_json("/update_group", g, impl::auth::key));
}

uint64_t core_client::remove_group(uint64_t group_id) {
  return decode<api::group_ref>(impl_->post_json("/remove_group", api::group_ref{group_id}, impl::auth::key)).group_id;
}

// --- wallets -----------------------------------------------------------------------------------

wallet core_client::create_wallet(const new_wallet& w) {
  return decode<wallet>(impl_->post_json("/create_wallet", w, impl::auth::key));
}

page<wallet> core_client::list_wallets(page_request p) {
  return decode<page<wallet>>(impl_->get(paged("/list_wallets", p), impl::auth::key));
}

group core_client::get_group(uint64_t group_id) {
  return decode<group>(
      impl_->get(std::string(kRoot) + "/get_group?group_id=" + std::to_string(group_id), impl::auth::key));
}

page<wallet> core_client::list_wallets_in_group(uint64_t group_id, page_request p) {
  return decode<page<wallet>>(
      impl_->get(paged("/list_wallets_in_group", p, "group_id=" + std::to_string(group_id)), impl::auth::key));
}

group core_client::add_pkp_to_group(uint64_t group_id, const address& pkp_id) {
  return decode<group>(impl_->post_json("/add_pkp_to_group", api::group_pkp{group_id, pkp_id}, impl::auth::key));
}

group core_client::remove_pkp_from_group(uint64_t group_id, const address& pkp_id) {
  return decode<group>(impl_->post_json("/remove_pkp_from_group", api::group_pkp{group_id, pkp_id}, impl::auth::key));
}

// --- actions -----------------------------------------------------------------------------------

action core_client::add_action(const new_action& a) {
  return decode<action>(impl_->post_json("/add_action", a, impl::auth::key));
}

group core_client::add_action_to_group(uint64_t group_id, std::string_view action_ipfs_cid) {
  return decode<group>(impl_->post_json("/add_action_to_group",
                                        api::group_action{group_id, std::string(action_ipfs_cid)}, impl::auth::key));
}

group core_client::remove_action_from_group(uint64_t group_id, const hash256& hashed_cid) {
  return decode<group>(
      impl_->post_json("/remove_action_from_group", api::group_action_hash{group_id, hashed_cid}, impl::auth::key));
}

action core_client::update_action_metadata(const action_metadata& a) {
  return decode<action>(impl_->post_json("/update_action_metadata", a, impl::auth::key));
}

hash256 core_client::delete_action(const hash256& hashed_cid) {
  return decode<api::action_ref>(impl_->post_json("/delete_action", api::action_ref{hashed_cid}, impl::auth::key))
      .hashed_cid;
}

page<action> core_client::list_actions(std::optional<uint64_t> group_id, page_request p) {
  const std::string extra = group_id ? "group_id=" + std::to_string(*group_id) : std::string();
  return decode<page<action>>(impl_->get(paged("/list_actions", p, extra), impl::auth::key));
}

uploaded_action core_client::upload_action(std::string_view code) {
  json::object o;
  o["code"] = code;
  return decode<uploaded_action>(impl_->post("/upload_action", json::serialize(o), impl::auth::key));
}

action_code core_client::get_action_code(std::string_view action_ipfs_cid) {
  // A CID string is base58 or base32 text: nothing in it needs escaping in a query.
  const bool plain = !action_ipfs_cid.empty() &&
                     std::all_of(action_ipfs_cid.begin(), action_ipfs_cid.end(),
                                 [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) != 0; });
  if (!plain)
    throw api_error(api_errc::invalid_request, 0, {}, "get_action_code: a CID is letters and digits only");
  return decode<action_code>(impl_->get(
      std::string(kRoot) + "/get_action_code?action_ipfs_cid=" + std::string(action_ipfs_cid), impl::auth::key));
}

run_action_result core_client::run_action(const run_action_request& request) {
  if (request.code.has_value() == request.action_ipfs_cid.has_value())
    throw api_error(api_errc::invalid_request, 0, {}, "run_action: give exactly one of code and action_ipfs_cid");
  return decode<run_action_result>(
      impl_->post("/run_action", json::serialize(json::value_from(request)), impl::auth::key));
}

run_action_result core_client::run_action(const run_action_request& request, std::string_view idempotency_key) {
  if (request.code.has_value() == request.action_ipfs_cid.has_value())
    throw api_error(api_errc::invalid_request, 0, {}, "run_action: give exactly one of code and action_ipfs_cid");
  // The server's rule for the key, checked here so a bad key is not sent (nor a header broken).
  const bool printable =
      std::all_of(idempotency_key.begin(), idempotency_key.end(), [](char c) { return c > 0x20 && c < 0x7f; });
  if (idempotency_key.empty() || idempotency_key.size() > 255 || !printable)
    throw api_error(api_errc::invalid_request, 0, {},
                    "run_action: an Idempotency-Key is 1 to 255 printable ASCII characters without spaces");
  return decode<run_action_result>(impl_->post("/run_action", json::serialize(json::value_from(request)),
                                               impl::auth::key, {},
                                               {{"Idempotency-Key", std::string(idempotency_key)}}));
}

// --- public utility ----------------------------------------------------------------------------

chain_config core_client::get_node_chain_config() { return impl_->chain(); }

eip712::envelope::deployment core_client::deployment() { return impl_->server_deployment(); }

std::vector<address> core_client::get_api_payers() {
  const http_answer a = impl_->get(std::string(kRoot) + "/get_api_payers", impl::auth::none);
  return detail::decode_answer(a, [](const json::value& v) {
    const json::value& list = detail::read::require(detail::read::expect_object(v, "answer"), "api_payers");
    if (!list.is_array())
      detail::read::bad("api_payers: expected an array of addresses");
    std::vector<address> out;
    for (size_t i = 0; i < list.get_array().size(); ++i)
      out.push_back(detail::read::to_address(list.get_array()[i], "api_payers[" + std::to_string(i) + "]"));
    return out;
  });
}

address core_client::get_admin_api_payer() {
  const http_answer a = impl_->get(std::string(kRoot) + "/get_admin_api_payer", impl::auth::none);
  return detail::decode_answer(a, [](const json::value& v) {
    return detail::read::get_address(detail::read::expect_object(v, "answer"), "admin_api_payer");
  });
}

std::string core_client::get_svc_action_ipfs_id(std::string_view code) {
  // The body is the code itself as one JSON string (docs/protocol.md §2, public utility).
  const http_answer a =
      impl_->post("/get_svc_action_ipfs_id", json::serialize(json::value(json::string(code))), impl::auth::none);
  return detail::decode_answer(a, [](const json::value& v) {
    return detail::read::get_string(detail::read::expect_object(v, "answer"), "action_ipfs_cid");
  });
}

stripe_config core_client::get_stripe_config() {
  return decode<stripe_config>(impl_->get(std::string(kRoot) + "/billing/stripe_config", impl::auth::none));
}

// --- billing -----------------------------------------------------------------------------------

credit_balance core_client::balance() { return impl_->balance({}); }
credit_balance core_client::balance(const Secret& admin_wallet_key) {
  return impl_->balance({nullptr, &admin_wallet_key});
}
credit_balance core_client::balance(const eip712::envelope::signed_envelope& wallet_proof) {
  return impl_->balance({&wallet_proof});
}
payment_intent core_client::create_payment_intent(uint64_t amount_cents) {
  return impl_->create_payment_intent(amount_cents, {});
}
payment_intent core_client::create_payment_intent(uint64_t amount_cents, const Secret& admin_wallet_key) {
  return impl_->create_payment_intent(amount_cents, {nullptr, &admin_wallet_key});
}
payment_intent core_client::create_payment_intent(uint64_t amount_cents,
                                                  const eip712::envelope::signed_envelope& wallet_proof) {
  return impl_->create_payment_intent(amount_cents, {&wallet_proof});
}
uint64_t core_client::confirm_payment(std::string_view payment_intent_id) {
  return impl_->confirm_payment(payment_intent_id, {});
}
uint64_t core_client::confirm_payment(std::string_view payment_intent_id, const Secret& admin_wallet_key) {
  return impl_->confirm_payment(payment_intent_id, {nullptr, &admin_wallet_key});
}
uint64_t core_client::confirm_payment(std::string_view payment_intent_id,
                                      const eip712::envelope::signed_envelope& wallet_proof) {
  return impl_->confirm_payment(payment_intent_id, {&wallet_proof});
}
page<usage_charge> core_client::billing_usage(page_request p) {
  return impl_->billing_page<usage_charge>("/usage", p, {});
}
page<usage_charge> core_client::billing_usage(const Secret& admin_wallet_key, page_request p) {
  return impl_->billing_page<usage_charge>("/usage", p, {nullptr, &admin_wallet_key});
}
page<usage_charge> core_client::billing_usage(const eip712::envelope::signed_envelope& wallet_proof, page_request p) {
  return impl_->billing_page<usage_charge>("/usage", p, {&wallet_proof});
}
page<payment_record> core_client::billing_payments(page_request p) {
  return impl_->billing_page<payment_record>("/payments", p, {});
}
page<payment_record> core_client::billing_payments(const Secret& admin_wallet_key, page_request p) {
  return impl_->billing_page<payment_record>("/payments", p, {nullptr, &admin_wallet_key});
}
page<payment_record> core_client::billing_payments(const eip712::envelope::signed_envelope& wallet_proof,
                                                   page_request p) {
  return impl_->billing_page<payment_record>("/payments", p, {&wallet_proof});
}

// --- ChainSecured ------------------------------------------------------------------------------

minted_wallet core_client::create_wallet_with_signature(const eip712::envelope::signed_envelope& proof) {
  return decode<minted_wallet>(impl_->post("/create_wallet_with_signature", envelope_body(proof), impl::auth::none));
}

minted_wallet core_client::create_wallet_with_signature(const Secret& wallet_key) {
  return create_wallet_with_signature(impl_->sign_now(eip712::envelope::kind::create_wallet, std::nullopt, wallet_key));
}

minted_wallet core_client::create_wallet_with_signature(const Secret& wallet_key, uint64_t chain_id) {
  return create_wallet_with_signature(impl_->sign_now(eip712::envelope::kind::create_wallet, chain_id, wallet_key));
}

minted_usage_key core_client::add_usage_api_key_with_signature(const eip712::envelope::signed_envelope& proof) {
  http_answer a = impl_->post("/add_usage_api_key_with_signature", envelope_body(proof), impl::auth::none);
  minted_usage_key k = decode<minted_usage_key>(a);
  detail::wipe_strings(a.body);
  return k;
}

minted_usage_key core_client::add_usage_api_key_with_signature(const Secret& wallet_key) {
  return add_usage_api_key_with_signature(
      impl_->sign_now(eip712::envelope::kind::add_usage_api_key, std::nullopt, wallet_key));
}

minted_usage_key core_client::add_usage_api_key_with_signature(const Secret& wallet_key, uint64_t chain_id) {
  return add_usage_api_key_with_signature(
      impl_->sign_now(eip712::envelope::kind::add_usage_api_key, chain_id, wallet_key));
}

chain_secured_account core_client::convert_to_chain_secured_account(const address& new_admin,
                                                                    const eip712::envelope::signed_envelope& proof) {
  json::object o;
  o["new_admin_wallet_address"] = to_checksum_address(new_admin);
  return decode<chain_secured_account>(
      impl_->post("/convert_to_chain_secured_account", envelope_body(proof, std::move(o)), impl::auth::key));
}

chain_secured_account core_client::convert_to_chain_secured_account(const Secret& new_admin_key) {
  auto [new_admin, proof] = impl_->conversion_proof(new_admin_key, std::nullopt);
  return convert_to_chain_secured_account(new_admin, proof);
}

chain_secured_account core_client::convert_to_chain_secured_account(const Secret& new_admin_key, uint64_t chain_id) {
  auto [new_admin, proof] = impl_->conversion_proof(new_admin_key, chain_id);
  return convert_to_chain_secured_account(new_admin, proof);
}

// --- any endpoint --------------------------------------------------------------------------------

core_client::raw_answer::~raw_answer() { enact::detail::secure_wipe(body.data(), body.size()); }

core_client::raw_answer core_client::call(std::string_view method, std::string_view target,
                                          std::string_view json_body) {
  return impl_->call(method, target, json_body, nullptr);
}

core_client::raw_answer core_client::call(std::string_view method, std::string_view target, std::string_view json_body,
                                          const Secret& admin_wallet_key) {
  return impl_->call(method, target, json_body, &admin_wallet_key);
}

}  // namespace enact::client
