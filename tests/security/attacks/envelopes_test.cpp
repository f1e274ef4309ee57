// SPDX-License-Identifier: Apache-2.0
// Attacks on what a wallet's signature authorizes (docs/protocol.md §2 "Envelope version 2";
// docs/security.md "Threat model"): someone who saw a victim's signed envelope — any operator of
// another deployment, anything that logs bodies or headers, a phishing page — tries to use it for
// something the victim did not sign:
//
//   1. The victim's ConvertAccount envelope on an API-mode account the attacker prepared: with
//      the specification's envelope ({address, issuedAt}) the victim's wallet became the admin of
//      the attacker's account (its credit purchases credited it, its register-wallet minted PKPs
//      under it, and the attacker's usage key ran them).
//   2. The victim's X-Wallet-Auth header on other billing requests: with the specification's
//      envelope it was a bearer token for every billing route for 600 s.
//   3. An envelope made for one deployment on another, and a version 2 envelope twice.
//
// Each is made with nothing but HTTP and the SDK's envelope functions, as an outsider would.
#include <doctest/doctest.h>

#include <boost/json.hpp>

#include <string>

#include "enact/crypto/keccak.hpp"
#include "enact/eip712/envelope.hpp"
#include "steps.hpp"

namespace enact::itest {
namespace {

namespace env = eip712::envelope;

Secret wallet_key(std::string_view label) {
  return Secret(bytes_view(crypto::keccak256("envelope attack wallet " + std::string(label))));
}

address address_of_key(const Secret& key) {
  return crypto::secp256k1::to_address(crypto::secp256k1::public_key_of(key).value());
}

env::deployment deployment_of(const chain_env& e) { return {e.chain_id, e.registry}; }

json::object convert_body(const env::signed_envelope& e, const Secret& admin) {
  return json::object{{"new_admin_wallet_address", to_checksum_address(address_of_key(admin))},
                      {"typed_data", e.typed_data},
                      {"signature", e.signature}};
}

json::object mint_body(const env::signed_envelope& e) {
  return json::object{{"typed_data", e.typed_data}, {"signature", e.signature}};
}

hash256 hash_of(const account_keys& a) { return codec::hex::decode_fixed<32>(a.api_key_hash).value(); }

/// Whether `acct`'s account key still authorizes it as an API-mode account.
bool still_managed(http_client& c, const account_keys& acct) { return c.get("/account", acct.auth()).status == 200; }

std::string x_wallet_auth(const env::signed_envelope& e) { return env::encode_wallet_auth(e); }

}  // namespace

TEST_CASE("a victim's ConvertAccount envelope converts no account but the one it names") {
  server_process srv({"--dev"});
  const chain_env e = env_of(srv);
  http_client c = srv.client();
  const account_keys victim = create_account(c, "victim");
  const account_keys attacker = create_account(c, "attacker");
  const Secret victim_wallet = wallet_key("victim");
  const auto now = static_cast<uint64_t>(unix_now());

  // The specification's envelope names only the wallet: refused, whatever account it is sent for.
  const auto v1 = env::sign(env::kind::convert_account, e.chain_id, victim_wallet, now).value();
  check_error(srv, c.post("/convert_to_chain_secured_account", convert_body(v1, victim_wallet), attacker.auth()), 400,
              "typed_data_invalid", "/core/v1/convert_to_chain_secured_account");
  CHECK(still_managed(c, attacker));

  // The victim's version 2 envelope names the victim's account: the attacker's is not it.
  const auto v2 =
      env::sign_v2(env::kind::convert_account, deployment_of(e), victim_wallet, now, hash_of(victim)).value();
  const response stolen = c.post("/convert_to_chain_secured_account", convert_body(v2, victim_wallet), attacker.auth());
  check_error(srv, stolen, 401, "signature_invalid", "/core/v1/convert_to_chain_secured_account");
  CHECK(stolen.obj().at("error").at("message").as_string().find("message.account") != std::string::npos);
  CHECK(still_managed(c, attacker));
  // The victim's wallet administers no account: its billing header authenticates nothing.
  check_error(srv, c.get("/billing/balance", wallet_auth(e, victim_wallet)), 401, "unauthenticated",
              "/core/v1/billing/balance");

  // The victim's own conversion, with that same envelope, goes through once.
  const response mine = c.post("/convert_to_chain_secured_account", convert_body(v2, victim_wallet), victim.auth());
  ITEST_REQUIRE_STATUS(mine, 200);
  CHECK(s_of(mine.body, "new_admin_wallet_address") == to_checksum_address(address_of_key(victim_wallet)));
  CHECK(balance_of(c, wallet_auth(e, victim_wallet)) == 0);
  CHECK(still_managed(c, attacker));
  CHECK(srv.stop().clean());
}

TEST_CASE("an X-Wallet-Auth header authorizes the one request it was signed for") {
  server_process srv({"--dev"});
  const chain_env e = env_of(srv);
  http_client c = srv.client();
  // An API-mode account's admin wallet is its account key's address (docs/protocol.md §1).
  const account_keys acct = create_account(c, "wallet owner");
  const Secret admin = key_secret(acct.api_key);
  const auto now = static_cast<uint64_t>(unix_now());
  buy_credits(c, acct.auth(), 500);

  // The specification's header, seen once on a balance read, is a bearer token for every billing
  // route: refused outright.
  const auto v1 = env::sign(env::kind::billing_auth, e.chain_id, admin, now).value();
  for (const char* path : {"/billing/balance", "/billing/payments", "/billing/usage"}) {
    INFO(path);
    check_error(srv, c.get(path, {{"X-Wallet-Auth", x_wallet_auth(v1)}}), 400, "typed_data_invalid",
                "/core/v1" + std::string(path));
  }

  // A header the victim's dashboard sent to read its balance, as a log or a proxy saw it.
  const auto seen =
      env::sign_billing(deployment_of(e), admin, now, env::bind_request("GET", "/core/v1/billing/balance", "")).value();
  const httplib::Headers header{{"X-Wallet-Auth", x_wallet_auth(seen)}};
  // The request it was made for works, and works again (a retry of the same request).
  ITEST_REQUIRE_STATUS(c.get("/billing/balance", header), 200);
  ITEST_REQUIRE_STATUS(c.get("/billing/balance", header), 200);
  // Any other request is refused: another route, another query, another method, a body.
  for (const auto& [method, path] :
       std::vector<std::pair<std::string, std::string>>{{"GET", "/core/v1/billing/payments"},
                                                        {"GET", "/core/v1/billing/usage"},
                                                        {"GET", "/core/v1/billing/balance?limit=1"},
                                                        {"POST", "/core/v1/billing/create_payment_intent"}}) {
    INFO(method << " " << path);
    const response r = c.request(method, path, method == "POST" ? R"({"amount_cents":5000})" : "", header);
    check_error(srv, r, 401, "signature_invalid", path.substr(0, path.find('?')));
  }
  // A payment intent's header carries its body: another amount is another request.
  const std::string body = R"({"amount_cents":500})";
  const auto intent_auth = env::sign_billing(deployment_of(e), admin, now,
                                             env::bind_request("POST", "/core/v1/billing/create_payment_intent", body))
                               .value();
  const httplib::Headers intent_header{{"X-Wallet-Auth", x_wallet_auth(intent_auth)}};
  ITEST_REQUIRE_STATUS(c.post_raw("/billing/create_payment_intent", body, intent_header), 200);
  check_error(srv, c.post_raw("/billing/create_payment_intent", R"({"amount_cents":90000})", intent_header), 401,
              "signature_invalid", "/core/v1/billing/create_payment_intent");

  CHECK(srv.stop().clean());
}

TEST_CASE("a version 2 envelope is used once, and on its own deployment only") {
  server_process a({"--dev"});
  server_process b({"--dev"});
  const chain_env ea = env_of(a);
  const chain_env eb = env_of(b);
  // Two deployments never share a chain id and registry (docs/protocol.md §3).
  CHECK((ea.chain_id != eb.chain_id || ea.registry != eb.registry));
  http_client ca = a.client();
  http_client cb = b.client();
  const Secret w = wallet_key("minting wallet");
  const auto now = static_cast<uint64_t>(unix_now());

  for (const auto k : {env::kind::create_wallet, env::kind::add_usage_api_key}) {
    const std::string path =
        k == env::kind::create_wallet ? "/create_wallet_with_signature" : "/add_usage_api_key_with_signature";
    INFO(path);
    const auto made_for_a = env::sign_v2(k, deployment_of(ea), w, now).value();
    // On the other deployment: refused before anything is minted.
    check_error(b, cb.post(path, mint_body(made_for_a)), 400, "chain_id_mismatch", "/core/v1" + path);
    // On its own: once.
    ITEST_REQUIRE_STATUS(ca.post(path, mint_body(made_for_a)), 200);
    const response again = ca.post(path, mint_body(made_for_a));
    check_error(a, again, 401, "signature_expired", "/core/v1" + path);
    CHECK(again.obj().at("error").at("message").as_string().find("used before") != std::string::npos);
  }

  // The nonce is kept across a restart: the store, not the process, remembers it.
  const auto once = env::sign_v2(env::kind::create_wallet, deployment_of(ea), w, now).value();
  ITEST_REQUIRE_STATUS(ca.post("/create_wallet_with_signature", mint_body(once)), 200);
  const std::string dir = a.data_dir();
  CHECK(a.stop().clean());
  server_process a2({"--dev"}, dir);
  http_client ca2 = a2.client();
  REQUIRE(env_of(a2).chain_id == ea.chain_id);
  check_error(a2, ca2.post("/create_wallet_with_signature", mint_body(once)), 401, "signature_expired",
              "/core/v1/create_wallet_with_signature");

  // A billing header of deployment a on deployment b: refused, whoever the wallet administers there.
  const account_keys acct = create_account(cb, "b account");
  const auto conv = env::sign_v2(env::kind::convert_account, deployment_of(eb), w, now, hash_of(acct)).value();
  ITEST_REQUIRE_STATUS(cb.post("/convert_to_chain_secured_account", convert_body(conv, w), acct.auth()), 200);
  ITEST_REQUIRE_STATUS(cb.get("/billing/balance", wallet_auth(eb, w)), 200);
  check_error(b, cb.get("/billing/balance", wallet_auth(ea, w)), 400, "chain_id_mismatch", "/core/v1/billing/balance");
  CHECK(b.stop().clean());
  CHECK(a2.stop().clean());
}

TEST_CASE("an operator who opts in takes version 1 for conversion and billing, and is warned") {
  server_process srv({"--dev", "--chain-envelope-v1", "accept"});
  const chain_env e = env_of(srv);
  http_client c = srv.client();
  const account_keys acct = create_account(c, "old client");
  const Secret admin = wallet_key("old client admin");
  const auto now = static_cast<uint64_t>(unix_now());
  const auto v1 = env::sign(env::kind::convert_account, e.chain_id, admin, now).value();
  ITEST_REQUIRE_STATUS(c.post("/convert_to_chain_secured_account", convert_body(v1, admin), acct.auth()), 200);
  const auto bill = env::sign(env::kind::billing_auth, e.chain_id, admin, now).value();
  ITEST_REQUIRE_STATUS(c.get("/billing/balance", {{"X-Wallet-Auth", x_wallet_auth(bill)}}), 200);
  bool warned = false;
  for (const auto& line : srv.log_lines())
    if (line.contains("msg") &&
        line.at("msg").as_string().find("version 1 wallet-proof envelopes are accepted") != std::string::npos)
      warned = line.at("level") == "warn";
  CHECK(warned);
  CHECK(srv.stop().clean());
}

}  // namespace enact::itest
