// SPDX-License-Identifier: Apache-2.0
// core_client's requests and decoded answers, endpoint by endpoint (client_test.hpp for the fake core).
#include <set>

#include "client_test.hpp"
#include "enact/crypto/keccak.hpp"

using namespace client_test;

// Every endpoint of docs/protocol.md §2 this client covers: the request it sends and what it decodes.
TEST_CASE("each endpoint sends the request docs/protocol.md specifies and decodes its answer") {
  fake_server server;
  serve_canned(server);
  core_client c(options_for(server), secret(kApiKey));
  const Secret usage = secret(kUsageKey);

  usage_key_spec spec;
  spec.name = "ci";
  spec.description = "deploys";
  spec.expiration = 1900000000;
  spec.permissions.can_create_groups = true;
  spec.permissions.execute_in_groups = {7, 0};
  spec.permissions.add_pkp_to_groups = {3};
  const std::string spec_fields =
      R"("name": "ci", "description": "deploys", "expiration": 1900000000,
         "can_create_groups": true, "can_delete_groups": false, "can_create_pkps": false,
         "manage_ipfs_ids_in_groups": [], "add_pkp_to_groups": [3], "remove_pkp_from_groups": [],
         "execute_in_groups": [7, 0])";

  const std::vector<endpoint_case> cases = {
      {"new_account",
       [](core_client& cl) {
         new_account_request r{"acme", std::nullopt, std::string("ops@example.org")};
         auto a = cl.new_account(r);
         CHECK(as_chars(a.api_key.view()) == kNewKey);
         CHECK(a.wallet_address == addr(kA1));
         CHECK(a.api_key_hash == h256(kH1));
       },
       "POST",
       "/core/v1/new_account",
       {},
       R"({"name": "acme", "email": "ops@example.org"})",
       auth::none},
      {"account",
       [](core_client& cl) {
         auto a = cl.account();
         CHECK(a.api_key_hash == h256(kH1));
         CHECK(a.admin_wallet_address == addr(kA1));
         CHECK(a.managed);
         CHECK(a.name == "acme");
         CHECK(a.description == "d");
         CHECK(a.key.kind == scopes::key_kind::usage);
         CHECK(a.key.hash == h256(kH2));
       },
       "GET",
       "/core/v1/account",
       {},
       "",
       auth::key},
      {"add_usage_api_key",
       [&](core_client& cl) {
         auto k = cl.add_usage_api_key(spec);
         CHECK(as_chars(k.usage_api_key.view()) == kNewKey);
         CHECK(k.hash == h256(kH2));
         CHECK(k.wallet_address == addr(kA2));
       },
       "POST",
       "/core/v1/add_usage_api_key",
       {},
       "{" + spec_fields + "}",
       auth::key},
      {"list_api_keys",
       [](core_client& cl) {
         check_page<usage_key_info>(cl.list_api_keys({2, 5}), [](const usage_key_info& k) {
           CHECK(k.hash == h256(kH2));
           CHECK(k.name == "ci");
           CHECK(k.expiration == 1900000000);
           CHECK(k.created_at == 1800000000);
           CHECK(k.permissions.can_create_groups);
           CHECK_FALSE(k.permissions.can_delete_groups);
           CHECK(k.permissions.can_create_pkps);
           CHECK(k.permissions.manage_ipfs_ids_in_groups == std::vector<uint64_t>{0});
           CHECK(k.permissions.add_pkp_to_groups == std::vector<uint64_t>{3, 4});
           CHECK(k.permissions.remove_pkp_from_groups.empty());
           CHECK(k.permissions.execute_in_groups == std::vector<uint64_t>{7});
         });
       },
       "GET",
       "/core/v1/list_api_keys",
       {{"page_number", "2"}, {"page_size", "5"}},
       "",
       auth::key},
      {"update_usage_api_key",
       [&](core_client& cl) { CHECK(cl.update_usage_api_key(usage, spec) == h256(kH2)); },
       "POST",
       "/core/v1/update_usage_api_key",
       {},
       R"({"usage_api_key": ")" + kUsageKey + R"(", )" + spec_fields + "}",
       auth::key},
      {"update_usage_api_key_metadata",
       [&](core_client& cl) { CHECK(cl.update_usage_api_key_metadata(usage, "ci-2", "") == h256(kH2)); },
       "POST",
       "/core/v1/update_usage_api_key_metadata",
       {},
       R"({"usage_api_key": ")" + kUsageKey + R"(", "name": "ci-2", "description": ""})",
       auth::key},
      {"remove_usage_api_key",
       [&](core_client& cl) { CHECK(cl.remove_usage_api_key(usage) == h256(kH2)); },
       "POST",
       "/core/v1/remove_usage_api_key",
       {},
       R"({"usage_api_key": ")" + kUsageKey + R"("})",
       auth::key},
      {"add_group",
       [](core_client& cl) {
         new_group g{"ops", std::nullopt, {addr(kA2)}, {}};
         check_group(cl.add_group(g));
       },
       "POST",
       "/core/v1/add_group",
       {},
       R"({"name": "ops", "pkp_ids_permitted": [")" + checksum(kA2) + R"("]})",
       auth::key},
      {"list_groups",
       [](core_client& cl) { check_page<group>(cl.list_groups(), check_group); },
       "GET",
       "/core/v1/list_groups",
       {{"page_number", "1"}, {"page_size", "20"}},
       "",
       auth::key},
      {"update_group",
       [](core_client& cl) {
         group g{7, "ops", "on-call", {addr(kA1)}, {h256(kH3)}};
         check_group(cl.update_group(g));
       },
       "POST",
       "/core/v1/update_group",
       {},
       R"({"group_id": 7, "name": "ops", "description": "on-call", "pkp_ids_permitted": [")" + checksum(kA1) +
           R"("], "cid_hashes_permitted": [")" + kH3 + R"("]})",
       auth::key},
      {"remove_group",
       [](core_client& cl) { CHECK(cl.remove_group(7) == 7); },
       "POST",
       "/core/v1/remove_group",
       {},
       R"({"group_id": 7})",
       auth::key},
      {"create_wallet",
       [](core_client& cl) {
         check_wallet(cl.create_wallet({"signer", std::string("hot")}));
       },
       "POST",
       "/core/v1/create_wallet",
       {},
       R"({"name": "signer", "description": "hot"})",
       auth::key},
      {"list_wallets",
       [](core_client& cl) {
         check_page<wallet>(cl.list_wallets({3, 100}), check_wallet);
       },
       "GET",
       "/core/v1/list_wallets",
       {{"page_number", "3"}, {"page_size", "100"}},
       "",
       auth::key},
      {"list_wallets_in_group",
       [](core_client& cl) { check_page<wallet>(cl.list_wallets_in_group(7), check_wallet); },
       "GET",
       "/core/v1/list_wallets_in_group",
       {{"group_id", "7"}, {"page_number", "1"}, {"page_size", "20"}},
       "",
       auth::key},
      {"add_pkp_to_group",
       [](core_client& cl) { check_group(cl.add_pkp_to_group(7, addr(kA2))); },
       "POST",
       "/core/v1/add_pkp_to_group",
       {},
       R"({"group_id": 7, "pkp_id": ")" + checksum(kA2) + R"("})",
       auth::key},
      {"remove_pkp_from_group",
       [](core_client& cl) { check_group(cl.remove_pkp_from_group(7, addr(kA2))); },
       "POST",
       "/core/v1/remove_pkp_from_group",
       {},
       R"({"group_id": 7, "pkp_id": ")" + checksum(kA2) + R"("})",
       auth::key},
      {"add_action",
       [](core_client& cl) {
         check_action(cl.add_action({kCid, "hello", std::nullopt}));
       },
       "POST",
       "/core/v1/add_action",
       {},
       R"({"action_ipfs_cid": ")" + kCid + R"(", "name": "hello"})",
       auth::key},
      {"add_action_to_group",
       [](core_client& cl) { check_group(cl.add_action_to_group(7, kCid)); },
       "POST",
       "/core/v1/add_action_to_group",
       {},
       R"({"group_id": 7, "action_ipfs_cid": ")" + kCid + R"("})",
       auth::key},
      {"remove_action_from_group",
       [](core_client& cl) { check_group(cl.remove_action_from_group(7, h256(kH3))); },
       "POST",
       "/core/v1/remove_action_from_group",
       {},
       R"({"group_id": 7, "hashed_cid": ")" + kH3 + R"("})",
       auth::key},
      {"update_action_metadata",
       [](core_client& cl) {
         check_action(cl.update_action_metadata({h256(kH3), "hello", "x"}));
       },
       "POST",
       "/core/v1/update_action_metadata",
       {},
       R"({"hashed_cid": ")" + kH3 + R"(", "name": "hello", "description": "x"})",
       auth::key},
      {"delete_action",
       [](core_client& cl) { CHECK(cl.delete_action(h256(kH3)) == h256(kH3)); },
       "POST",
       "/core/v1/delete_action",
       {},
       R"({"hashed_cid": ")" + kH3 + R"("})",
       auth::key},
      {"list_actions (all)",
       [](core_client& cl) { check_page<action>(cl.list_actions(), check_action); },
       "GET",
       "/core/v1/list_actions",
       {{"page_number", "1"}, {"page_size", "20"}},
       "",
       auth::key},
      {"list_actions (group)",
       [](core_client& cl) {
         check_page<action>(cl.list_actions(7, {1, 50}), check_action);
       },
       "GET",
       "/core/v1/list_actions",
       {{"group_id", "7"}, {"page_number", "1"}, {"page_size", "50"}},
       "",
       auth::key},
      {"upload_action",
       [](core_client& cl) {
         auto u = cl.upload_action("Enact.setResponse(\"hi\")");
         CHECK(u.action_ipfs_cid == kCid);
         CHECK(u.hashed_cid == h256(kH3));
       },
       "POST",
       "/core/v1/upload_action",
       {},
       R"j({"code": "Enact.setResponse(\"hi\")"})j",
       auth::key},
      {"get_node_chain_config",
       [](core_client& cl) {
         auto cfg = cl.get_node_chain_config();
         CHECK(cfg.chain_id == 8453);
         CHECK(cfg.contract_address == addr(kA3));
         CHECK(cfg.chain_name == "base");
       },
       "GET",
       "/core/v1/get_node_chain_config",
       {},
       "",
       auth::none},
      {"get_api_payers",
       [](core_client& cl) {
         CHECK(cl.get_api_payers() == std::vector<address>{addr(kA1), addr(kA2)});
       },
       "GET",
       "/core/v1/get_api_payers",
       {},
       "",
       auth::none},
      {"get_admin_api_payer",
       [](core_client& cl) { CHECK(cl.get_admin_api_payer() == addr(kA3)); },
       "GET",
       "/core/v1/get_admin_api_payer",
       {},
       "",
       auth::none},
      {"get_svc_action_ipfs_id",
       [](core_client& cl) { CHECK(cl.get_svc_action_ipfs_id("console.log(1)") == kCid); },
       "POST",
       "/core/v1/get_svc_action_ipfs_id",
       {},
       R"j("console.log(1)")j",
       auth::none},
      {"billing/stripe_config",
       [](core_client& cl) { CHECK(cl.get_stripe_config().publishable_key == "pk_test_123"); },
       "GET",
       "/core/v1/billing/stripe_config",
       {},
       "",
       auth::none},
      {"billing/balance",
       [](core_client& cl) {
         auto b = cl.balance();
         CHECK(b.balance_credits == 1234);
         CHECK(b.currency == "usd_cents");
       },
       "GET",
       "/core/v1/billing/balance",
       {},
       "",
       auth::key},
      {"billing/create_payment_intent",
       [](core_client& cl) {
         auto p = cl.create_payment_intent(500);
         CHECK(p.payment_intent_id == "pi_1");
         CHECK(p.client_secret == "pi_1_secret_x");
         CHECK(p.amount_cents == 500);
       },
       "POST",
       "/core/v1/billing/create_payment_intent",
       {},
       R"({"amount_cents": 500})",
       auth::key},
      {"billing/confirm_payment",
       [](core_client& cl) { CHECK(cl.confirm_payment("pi_1") == 1734); },
       "POST",
       "/core/v1/billing/confirm_payment",
       {},
       R"({"payment_intent_id": "pi_1"})",
       auth::key},
  };

  for (const auto& tc : cases) {
    CAPTURE(tc.name);
    server.clear();
    tc.call(c);
    const auto reqs = server.requests();
    REQUIRE(reqs.size() == 1);
    const recorded_request& r = reqs[0];
    CHECK(r.method == tc.method);
    CHECK(r.path == tc.path);
    CHECK(std::map<std::string, std::string>(r.params.begin(), r.params.end()) == tc.query);
    CHECK(r.header("Accept") == "application/json");
    if (tc.credential == auth::key) {
      CHECK(r.header("X-Api-Key") == kApiKey);
    } else {
      CHECK_FALSE(r.has_header("X-Api-Key"));
    }
    CHECK_FALSE(r.has_header("Authorization"));
    CHECK_FALSE(r.has_header("X-Wallet-Auth"));
    if (tc.method == "POST") {
      CHECK(r.header("Content-Type") == "application/json");
      CHECK(json::parse(r.body) == parse(tc.body));
    } else {
      CHECK(r.body.empty());
    }
  }
}

TEST_CASE("a base URL path prefix is kept in front of /core/v1") {
  fake_server server;
  serve_canned(server);
  auto o = options_for(server);
  o.base_url = server.url() + "/enact/";
  core_client c(o);
  // The fake server answers every path; only the path it was asked for matters here.
  server.on([](const httplib::Request&, httplib::Response& res, size_t) {
    res.set_content(R"({"publishable_key": "pk"})", "application/json");
  });
  CHECK(c.get_stripe_config().publishable_key == "pk");
  REQUIRE(server.requests().size() == 1);
  CHECK(server.requests()[0].path == "/enact/core/v1/billing/stripe_config");
  // Written as given (what a request-bound proof signs is what arrives), bytes outside ASCII
  // percent-encoded.
  o.base_url = server.url() + "/a,b;c+d/caf\xc3\xa9";
  core_client odd(o);
  CHECK(odd.get_stripe_config().publishable_key == "pk");
  REQUIRE(server.requests().size() == 2);
  CHECK(server.requests()[1].target == "/a,b;c+d/caf%C3%A9/core/v1/billing/stripe_config");
}

TEST_CASE("billing with a wallet proof sends X-Wallet-Auth and no API key") {
  fake_server server;
  serve_canned(server);
  core_client c(options_for(server), secret(kApiKey));
  Secret wallet_key = Secret(h256("0x" + std::string(63, '0') + "7"));
  auto env = eip712::envelope::sign(eip712::envelope::kind::billing_auth, 8453, wallet_key, 1800000000).value();
  const std::string header = eip712::envelope::encode_wallet_auth(env);

  CHECK(c.balance(env).balance_credits == 1234);
  CHECK(c.create_payment_intent(700, env).amount_cents == 500);
  CHECK(c.confirm_payment("pi_1", env) == 1734);
  const auto reqs = server.requests();
  REQUIRE(reqs.size() == 3);
  for (const auto& r : reqs) {
    CAPTURE(r.path);
    CHECK(r.header("X-Wallet-Auth") == header);
    CHECK_FALSE(r.has_header("X-Api-Key"));
    // The server side can take the header apart and verify it.
    auto parts = eip712::envelope::decode_wallet_auth(r.header("X-Wallet-Auth"));
    REQUIRE(parts);
    eip712::envelope::expectation want{};
    want.expected = eip712::envelope::kind::billing_auth;
    want.chain_id = 8453;
    want.now = 1800000000;
    auto signer = eip712::envelope::verify(parts->first, parts->second, want);
    REQUIRE(signer);
    CHECK(*signer == crypto::secp256k1::to_address(crypto::secp256k1::public_key_of(wallet_key).value()));
  }
  CHECK(json::parse(reqs[1].body) == parse(R"({"amount_cents": 700})"));
}

namespace {

namespace envelope = eip712::envelope;

address address_of(const Secret& key) {
  return crypto::secp256k1::to_address(crypto::secp256k1::public_key_of(key).value());
}

uint64_t unix_now() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count());
}

/// The server's check of the X-Wallet-Auth of `r` for the canned deployment (chain 8453, kA3):
/// bound to the request as it arrived.
envelope::verified check_wallet_auth(const recorded_request& r) {
  auto parts = envelope::decode_wallet_auth(r.header("X-Wallet-Auth"));
  REQUIRE(parts);
  envelope::expectation want{};
  want.expected = envelope::kind::billing_auth;
  want.chain_id = 8453;
  want.now = unix_now();
  want.verifying_contract = addr(kA3);
  want.accept_v1 = false;
  want.request = envelope::bind_request(r.method, r.target, r.body);
  auto v = envelope::check(parts->first, parts->second, want);
  INFO(r.method << " " << r.target << ": " << (v ? std::string() : v.err().message));
  REQUIRE(v);
  return *v;
}

/// The typed data and signature of a ChainSecured request body.
std::pair<std::string, std::string> envelope_of(const recorded_request& r) {
  const json::object body = json::parse(r.body).as_object();
  return {json::serialize(body.at("typed_data")), std::string(body.at("signature").as_string())};
}

}  // namespace

TEST_CASE("billing with the admin wallet's key signs a version 2 BillingAuth for each request as sent") {
  fake_server server;
  // Behind a path prefix: the target a proof binds is the one on the wire, prefix and query included.
  server.on([](const httplib::Request& req, httplib::Response& res, size_t) {
    const std::string path = req.path.substr(std::string_view("/enact").size());
    if (const auto it = canned().find(path); it != canned().end())
      res.set_content(it->second, "application/json");
    else if (path == "/core/v1/billing/usage" || path == "/core/v1/billing/payments")
      res.set_content(R"({"items": [], "page_number": 2, "page_size": 5, "total": 0})", "application/json");
    else
      res.status = 404;
  });
  auto o = options_for(server);
  o.base_url = server.url() + "/enact/";
  core_client c(o, secret(kApiKey));
  const Secret wallet_key = Secret(h256("0x" + std::string(63, '0') + "7"));

  CHECK(c.balance(wallet_key).balance_credits == 1234);
  CHECK(c.create_payment_intent(700, wallet_key).amount_cents == 500);
  CHECK(c.confirm_payment("pi_1", wallet_key) == 1734);
  CHECK(c.billing_usage(wallet_key, {2, 5}).items.empty());
  CHECK(c.billing_payments(wallet_key, {2, 5}).items.empty());
  const auto reqs = server.requests();
  REQUIRE(reqs.size() == 6);
  // The deployment is asked once, without credentials.
  CHECK(reqs[0].target == "/enact/core/v1/get_node_chain_config");
  CHECK_FALSE(reqs[0].has_header("X-Wallet-Auth"));
  std::set<std::string> headers;
  for (size_t i = 1; i < reqs.size(); ++i) {
    const recorded_request& r = reqs[i];
    CAPTURE(r.target);
    CHECK_FALSE(r.has_header("X-Api-Key"));
    const auto v = check_wallet_auth(r);
    CHECK(v.version == 2);
    CHECK(v.signer == address_of(wallet_key));
    headers.insert(r.header("X-Wallet-Auth"));
  }
  CHECK(headers.size() == 5);  // each proof authorizes its own request only
  CHECK(reqs[4].target == "/enact/core/v1/billing/usage?page_number=2&page_size=5");
  CHECK(json::parse(reqs[2].body) == parse(R"({"amount_cents": 700})"));
  // Another page is another request: the proof of one does not pass for the other.
  recorded_request other = reqs[4];
  other.target = "/enact/core/v1/billing/usage?page_number=3&page_size=5";
  auto parts = envelope::decode_wallet_auth(other.header("X-Wallet-Auth")).value();
  envelope::expectation want{};
  want.expected = envelope::kind::billing_auth;
  want.chain_id = 8453;
  want.now = unix_now();
  want.verifying_contract = addr(kA3);
  want.request = envelope::bind_request(other.method, other.target, other.body);
  CHECK(envelope::check(parts.first, parts.second, want).code() == envelope_errc::request_mismatch);
}

TEST_CASE("a GET retried by the transport carries the same request-bound proof") {
  fake_server server;
  server.on([](const httplib::Request& req, httplib::Response& res, size_t n) {
    if (req.path == "/core/v1/billing/balance" && n == 2) {
      res.status = 503;
      res.set_content(R"({"error": {"code": "unavailable", "message": "busy"}})", "application/json");
      return;
    }
    res.set_content(canned().at(req.path), "application/json");
  });
  core_client c(options_for(server));
  const Secret wallet_key = Secret(h256("0x" + std::string(63, '0') + "9"));
  CHECK(c.balance(wallet_key).balance_credits == 1234);
  const auto reqs = server.requests();
  REQUIRE(reqs.size() == 3);
  CHECK(reqs[1].header("X-Wallet-Auth") == reqs[2].header("X-Wallet-Auth"));
  CHECK(check_wallet_auth(reqs[2]).signer == address_of(wallet_key));
}

TEST_CASE("the key-signing ChainSecured overloads sign version 2 for the server's deployment, a nonce per call") {
  fake_server server;
  server.on([](const httplib::Request& req, httplib::Response& res, size_t) {
    if (req.path == "/core/v1/get_node_chain_config") {
      res.set_content(canned().at(req.path), "application/json");
      return;
    }
    res.status = 500;
    res.set_content(R"({"error": {"code": "internal", "message": "not played here"}})", "application/json");
  });
  core_client c(options_for(server), secret(kApiKey));
  const Secret key = Secret(h256("0x" + std::string(63, '0') + "5"));

  // POSTs are sent once; the answers do not matter here, what was signed does.
  CHECK_THROWS_AS((void)c.create_wallet_with_signature(key), api_error);
  CHECK_THROWS_AS((void)c.create_wallet_with_signature(key, 8453), api_error);
  CHECK_THROWS_AS((void)c.add_usage_api_key_with_signature(key), api_error);
  CHECK_THROWS_AS((void)c.convert_to_chain_secured_account(key), api_error);
  auto reqs = server.requests();
  REQUIRE(reqs.size() == 5);
  CHECK(reqs[0].path == "/core/v1/get_node_chain_config");
  const envelope::kind kinds[] = {envelope::kind::create_wallet, envelope::kind::create_wallet,
                                  envelope::kind::add_usage_api_key, envelope::kind::convert_account};
  std::set<hash256> nonces;
  for (size_t i = 1; i < reqs.size(); ++i) {
    CAPTURE(reqs[i].path);
    const auto [typed_data, signature] = envelope_of(reqs[i]);
    envelope::expectation want{};
    want.expected = kinds[i - 1];
    want.chain_id = 8453;
    want.now = unix_now();
    want.verifying_contract = addr(kA3);
    want.accept_v1 = false;
    want.account = crypto::keccak256(kApiKey);  // the converted account: its key's hash
    const auto v = envelope::check(typed_data, signature, want);
    INFO((v ? std::string() : v.err().message));
    REQUIRE(v);
    CHECK(v->signer == address_of(key));
    REQUIRE(v->nonce);
    nonces.insert(*v->nonce);
  }
  CHECK(nonces.size() == 4);  // single-use nonces: a fresh one for every call
  CHECK(reqs[4].header("X-Api-Key") == kApiKey);
  CHECK(json::parse(reqs[4].body).at("new_admin_wallet_address") == json::value(to_checksum_address(address_of(key))));

  // A chain the caller names that is not the server's: refused before anything is signed or sent.
  server.clear();
  try {
    (void)c.add_usage_api_key_with_signature(key, 31337);
    FAIL("expected chain_id_mismatch");
  } catch (const api_error& e) {
    CHECK(e.errc() == api_errc::chain_id_mismatch);
    CHECK(e.status() == 0);
  }
  CHECK_THROWS_AS((void)c.convert_to_chain_secured_account(key, 1), api_error);
  CHECK(server.requests().empty());

  // Conversion names the account of the client's key: without one there is nothing to sign for.
  core_client keyless(options_for(server));
  try {
    (void)keyless.convert_to_chain_secured_account(key);
    FAIL("expected invalid_request");
  } catch (const api_error& e) {
    CHECK(e.errc() == api_errc::invalid_request);
  }
}

TEST_CASE("run_action with an Idempotency-Key sends it; a key the server would refuse is not sent") {
  fake_server server;
  serve_canned(server);
  core_client c(options_for(server), secret(kApiKey));
  api::run_action_request req;
  req.action_ipfs_cid = "QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG";
  // The canned server has no run_action (404): what matters here is what was sent.
  CHECK_THROWS_AS((void)c.run_action(req, "trigger-run:run_01"), api_error);
  const auto reqs = server.requests();
  REQUIRE(reqs.size() == 1);
  CHECK(reqs[0].path == "/core/v1/run_action");
  CHECK(reqs[0].header("Idempotency-Key") == "trigger-run:run_01");
  CHECK(reqs[0].header("X-Api-Key") == kApiKey);
  CHECK_THROWS_AS((void)c.run_action(req), api_error);
  REQUIRE(server.requests().size() == 2);
  CHECK_FALSE(server.requests()[1].has_header("Idempotency-Key"));
  for (const std::string bad : {std::string(), std::string("two words"), std::string("line\r\nX-Evil: 1"),
                                std::string(256, 'k'), std::string("caf\xc3\xa9")}) {
    CAPTURE(bad);
    CHECK_THROWS_AS((void)c.run_action(req, bad), api_error);
  }
  CHECK(server.requests().size() == 2);  // none of them went out
}
