// enact::client::core_client against a loopback server that plays the core service (API.md §2):
// the request each method sends (method, path, query, headers, body fields exactly), the decoding
// of each answer, the mapping of every error code and status (API.md §0), the retry rule (GETs
// only, Retry-After honoured up to the cap), timeouts and refused connections, and that no
// credential ever reaches an exception message.
#include <doctest/doctest.h>

#include <boost/json.hpp>

#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "../unit/support.hpp"
#include "enact/client/core_client.hpp"
#include "enact/codec/base64.hpp"
#include "enact/crypto/address.hpp"
#include "enact/crypto/secp256k1.hpp"
#include "enact/eip712/envelope.hpp"
#include "fake_server.hpp"

using namespace enact;
using namespace enact::client;
using enact::test::fake_server;
using enact::test::recorded_request;
namespace json = boost::json;
using std::chrono::milliseconds;

namespace {

// Test values. The keys are shaped like real ones (base64 of 32 bytes) so that nothing in the
// client could tell them apart from issued keys.
const std::string kApiKey = "QUNDT1VOVC1LRVktMDAwMDAwMDAwMDAwMDAwMDAwMDA=";
const std::string kUsageKey = "VVNBR0UtS0VZLTAwMDAwMDAwMDAwMDAwMDAwMDAwMDA=";
const std::string kNewKey = "TkVXLUtFWS0wMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDA=";
const std::string kA1 = "0x" + std::string(40, '1');
const std::string kA2 = "0xabcdef0123456789abcdef0123456789abcdef01";
const std::string kA3 = "0x" + std::string(40, 'c');
const std::string kH1 = "0x" + std::string(64, 'a');
const std::string kH2 = "0x" + std::string(62, '0') + "02";
const std::string kH3 = "0x" + std::string(64, '3');
const std::string kCid = "QmbFMke1KXqnYyBBWxB74N4c5SBnJMVAiMNRcGu6x1AwQH";

address addr(const std::string& s) { return parse_address(s).value(); }
hash256 h256(const std::string& s) { return hex::decode_fixed<32>(s).value(); }
std::string checksum(const std::string& s) { return to_checksum_address(addr(s)); }
Secret secret(const std::string& s) { return Secret(as_bytes(s)); }

client_options options_for(const fake_server& s) {
  client_options o;
  o.base_url = s.url();
  o.connect_timeout = milliseconds(2000);
  o.read_timeout = milliseconds(5000);
  o.sleep = [](milliseconds) {
  };  // retries in these tests never wait
  return o;
}

json::value parse(std::string_view text) { return json::parse(text); }

// Canned answers, one per path, as the server would write them (lowercase addresses, extra
// fields a later server version might add).
const std::string kGroup = R"({"group_id": 7, "name": "ops", "description": "on-call",
  "pkp_ids_permitted": [")" +
                           kA1 + R"(", ")" + kA2 + R"("], "cid_hashes_permitted": [")" + kH3 +
                           R"("], "created_at": 1800000000})";
const std::string kWallet = R"({"pkp_id": ")" + kA2 + R"(", "wallet_address": ")" + kA2 + R"(", "derivation_path": ")" +
                            kH1 + R"(", "name": "signer", "description": "hot", "extra": [1, 2]})";
const std::string kAction =
    R"({"action_ipfs_cid": ")" + kCid + R"(", "hashed_cid": ")" + kH3 + R"(", "name": "hello", "description": null})";
std::string page_of(const std::string& item) {
  return R"({"items": [)" + item + R"(], "page_number": 2, "page_size": 5, "total": 6})";
}

const std::map<std::string, std::string>& canned() {
  static const std::map<std::string, std::string> m = {
      {"/core/v1/new_account", R"({"api_key": ")" + kNewKey + R"(", "wallet_address": ")" + kA1 +
                                   R"(", "api_key_hash": ")" + kH1 + R"(", "note": "once"})"},
      {"/core/v1/account",
       R"({"api_key_hash": ")" + kH1 + R"(", "admin_wallet_address": ")" + kA1 +
           R"(", "managed": true, "name": "acme", "description": "d", "key": {"kind": "usage", "hash": ")" + kH2 +
           R"(", "since": 1}, "future": {"nested": [1]}})"},
      {"/core/v1/add_usage_api_key",
       R"({"usage_api_key": ")" + kNewKey + R"(", "hash": ")" + kH2 + R"(", "wallet_address": ")" + kA2 + R"("})"},
      {"/core/v1/list_api_keys",
       page_of(R"({"hash": ")" + kH2 +
               R"(", "name": "ci", "description": "", "expiration": 1900000000, "created_at": 1800000000,
        "can_create_groups": true, "can_delete_groups": false, "can_create_pkps": true,
        "manage_ipfs_ids_in_groups": [0], "add_pkp_to_groups": [3, 4], "remove_pkp_from_groups": [],
        "execute_in_groups": [7]})")},
      {"/core/v1/update_usage_api_key", R"({"hash": ")" + kH2 + R"("})"},
      {"/core/v1/update_usage_api_key_metadata", R"({"hash": ")" + kH2 + R"("})"},
      {"/core/v1/remove_usage_api_key", R"({"hash": ")" + kH2 + R"("})"},
      {"/core/v1/add_group", kGroup},
      {"/core/v1/list_groups", page_of(kGroup)},
      {"/core/v1/update_group", kGroup},
      {"/core/v1/remove_group", R"({"group_id": "7"})"},
      {"/core/v1/create_wallet", kWallet},
      {"/core/v1/list_wallets", page_of(kWallet)},
      {"/core/v1/list_wallets_in_group", page_of(kWallet)},
      {"/core/v1/add_pkp_to_group", kGroup},
      {"/core/v1/remove_pkp_from_group", kGroup},
      {"/core/v1/add_action", kAction},
      {"/core/v1/add_action_to_group", kGroup},
      {"/core/v1/remove_action_from_group", kGroup},
      {"/core/v1/update_action_metadata", kAction},
      {"/core/v1/delete_action", R"({"hashed_cid": ")" + kH3 + R"("})"},
      {"/core/v1/list_actions", page_of(kAction)},
      {"/core/v1/upload_action", R"({"action_ipfs_cid": ")" + kCid + R"(", "hashed_cid": ")" + kH3 + R"("})"},
      {"/core/v1/get_node_chain_config",
       R"({"chain_id": 8453, "contract_address": ")" + kA3 + R"(", "chain_name": "base"})"},
      {"/core/v1/get_api_payers", R"({"api_payers": [")" + kA1 + R"(", ")" + kA2 + R"("]})"},
      {"/core/v1/get_admin_api_payer", R"({"admin_api_payer": ")" + kA3 + R"("})"},
      {"/core/v1/get_svc_action_ipfs_id", R"({"action_ipfs_cid": ")" + kCid + R"("})"},
      {"/core/v1/billing/stripe_config", R"({"publishable_key": "pk_test_123"})"},
      {"/core/v1/billing/balance", R"({"balance_credits": 1234, "currency": "usd_cents"})"},
      {"/core/v1/billing/create_payment_intent",
       R"({"payment_intent_id": "pi_1", "client_secret": "pi_1_secret_x", "amount_cents": 500})"},
      {"/core/v1/billing/confirm_payment", R"({"balance_credits": 1734})"},
  };
  return m;
}

void serve_canned(fake_server& s) {
  s.on([](const httplib::Request& req, httplib::Response& res, size_t) {
    auto it = canned().find(req.path);
    if (it == canned().end()) {
      res.status = 404;
      res.set_content(R"({"error": {"code": "not_found", "message": "no such endpoint"}})", "application/json");
      return;
    }
    res.set_content(it->second, "application/json");
  });
}

void check_group(const group& g) {
  CHECK(g.group_id == 7);
  CHECK(g.name == "ops");
  CHECK(g.description == "on-call");
  CHECK(g.pkp_ids_permitted == std::vector<address>{addr(kA1), addr(kA2)});
  CHECK(g.cid_hashes_permitted == std::vector<hash256>{h256(kH3)});
}

void check_wallet(const wallet& w) {
  CHECK(w.pkp_id == addr(kA2));
  CHECK(w.wallet_address == addr(kA2));
  CHECK(w.derivation_path == h256(kH1));
  CHECK(w.name == "signer");
  CHECK(w.description == "hot");
}

void check_action(const action& a) {
  CHECK(a.action_ipfs_cid == kCid);
  CHECK(a.hashed_cid == h256(kH3));
  CHECK(a.name == "hello");
  CHECK(a.description.empty());  // null reads as empty
}

template <class T>
void check_page(const page<T>& p, const std::function<void(const T&)>& check_item) {
  CHECK(p.page_number == 2);
  CHECK(p.page_size == 5);
  CHECK(p.total == 6);
  REQUIRE(p.items.size() == 1);
  check_item(p.items[0]);
}

enum class auth { none, key };

struct endpoint_case {
  std::string_view name;
  std::function<void(core_client&)> call;  // calls the method and checks what it decoded
  std::string method;
  std::string path;
  std::map<std::string, std::string> query;
  std::string body;  // expected JSON, compared as a value (field order free); empty for GET
  auth credential;
};

}  // namespace

// Every endpoint of API.md §2 this client covers: the request it sends and what it decodes.
TEST_CASE("each endpoint sends the request API.md specifies and decodes its answer") {
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
         CHECK(a.key.kind == scope::key_kind::usage);
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
}

TEST_CASE("billing with a wallet proof sends X-Wallet-Auth and no API key") {
  fake_server server;
  serve_canned(server);
  core_client c(options_for(server), secret(kApiKey));
  Secret wallet_key = Secret(h256("0x" + std::string(63, '0') + "7"));
  auto env = envelope::sign(envelope::kind::billing_auth, 8453, wallet_key, 1800000000).value();
  const std::string header = envelope::encode_wallet_auth(env);

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
    auto parts = envelope::decode_wallet_auth(r.header("X-Wallet-Auth"));
    REQUIRE(parts);
    envelope::expectation want{};
    want.expected = envelope::kind::billing_auth;
    want.chain_id = 8453;
    want.now = 1800000000;
    auto signer = envelope::verify(parts->first, parts->second, want);
    REQUIRE(signer);
    CHECK(*signer == secp256k1::to_address(secp256k1::public_key_of(wallet_key).value()));
  }
  CHECK(json::parse(reqs[1].body) == parse(R"({"amount_cents": 700})"));
}

TEST_CASE("answers with unknown fields decode; missing or ill-typed fields are bad_response") {
  fake_server server;
  core_client c(options_for(server), secret(kApiKey));
  struct case_ {
    std::string_view answer;
    std::string_view field;  // named in the message
  };
  const case_ cases[] = {
      {R"({"chain_id": 1, "chain_name": "x"})", "contract_address"},
      {R"({"chain_id": -1, "contract_address": "0x1111111111111111111111111111111111111111"})", "chain_id"},
      {R"({"chain_id": 1.5, "contract_address": "0x1111111111111111111111111111111111111111"})", "chain_id"},
      {R"({"chain_id": 1, "contract_address": "0x1234"})", "contract_address"},
      {R"({"chain_id": 1, "contract_address": 7})", "contract_address"},
      {R"([1, 2])", "chain config"},
  };
  for (const auto& tc : cases) {
    CAPTURE(tc.answer);
    server.on([&](const httplib::Request&, httplib::Response& res, size_t) {
      res.set_content(std::string(tc.answer), "application/json");
    });
    try {
      (void)c.get_node_chain_config();
      FAIL("no exception");
    } catch (const api_error& e) {
      CHECK(e.errc() == api_errc::bad_response);
      CHECK(e.status() == 200);
      CHECK(e.code_name() == "bad_response");
      CHECK(std::string(e.what()).find(tc.field) != std::string::npos);
      CHECK_FALSE(e.request_id().empty());
    }
  }
  // Chain id as a decimal string, unknown fields anywhere: accepted.
  server.on([](const httplib::Request&, httplib::Response& res, size_t) {
    res.set_content(
        R"({"chain_id": "31337", "contract_address": ")" + kA1 + R"(", "chain_name": "anvil", "rpc": {"x": null}})",
        "application/json");
  });
  CHECK(c.get_node_chain_config().chain_id == 31337);

  // Errors inside list items name the item.
  server.on([](const httplib::Request&, httplib::Response& res, size_t) {
    res.set_content(R"({"items": [)" + kGroup + R"(, {"group_id": 8, "pkp_ids_permitted": ["0x12"],
                        "cid_hashes_permitted": []}], "page_number": 1, "page_size": 20, "total": 2})",
                    "application/json");
  });
  try {
    (void)c.list_groups();
    FAIL("no exception");
  } catch (const api_error& e) {
    CHECK(e.errc() == api_errc::bad_response);
    CHECK(std::string(e.what()).find("items[1].pkp_ids_permitted[0]") != std::string::npos);
  }

  // A 2xx answer that is not JSON at all.
  server.on(
      [](const httplib::Request&, httplib::Response& res, size_t) { res.set_content("<html>ok</html>", "text/html"); });
  try {
    (void)c.account();
    FAIL("no exception");
  } catch (const api_error& e) {
    CHECK(e.errc() == api_errc::bad_response);
    CHECK(e.request_id() == "req-" + std::to_string(server.requests().size()));
  }
}

// API.md §0: every error code with its status.
TEST_CASE("every API error code maps to api_errc with status, message, details and request id") {
  struct case_ {
    int status;
    std::string_view code;
    api_errc errc;
  };
  const case_ cases[] = {
      {400, "invalid_request", api_errc::invalid_request},
      {400, "typed_data_invalid", api_errc::typed_data_invalid},
      {400, "chain_id_mismatch", api_errc::chain_id_mismatch},
      {401, "unauthenticated", api_errc::unauthenticated},
      {401, "signature_invalid", api_errc::signature_invalid},
      {401, "signature_expired", api_errc::signature_expired},
      {402, "insufficient_credits", api_errc::insufficient_credits},
      {403, "forbidden", api_errc::forbidden},
      {404, "not_found", api_errc::not_found},
      {409, "conflict", api_errc::conflict},
      {413, "payload_too_large", api_errc::payload_too_large},
      {422, "action_failed", api_errc::action_failed},
      {429, "rate_limited", api_errc::rate_limited},
      {503, "unavailable", api_errc::unavailable},
      {500, "internal", api_errc::internal},
  };
  fake_server server;
  auto o = options_for(server);
  o.max_retries = 0;
  core_client c(o, secret(kApiKey));
  for (const auto& tc : cases) {
    CAPTURE(tc.code);
    server.on([&](const httplib::Request&, httplib::Response& res, size_t n) {
      res.status = tc.status;
      res.set_header("X-Request-Id", "rid-" + std::string(tc.code) + "-" + std::to_string(n));
      res.set_content(R"({"error": {"code": ")" + std::string(tc.code) +
                          R"(", "message": "it went wrong", "details": {"kind": "timeout", "n": 3}}})",
                      "application/json");
    });
    // Both a GET and a POST map the same way.
    for (int kind = 0; kind < 2; ++kind) {
      try {
        if (kind == 0)
          (void)c.list_groups();
        else
          (void)c.remove_group(1);
        FAIL("no exception");
      } catch (const api_error& e) {
        CHECK(e.errc() == tc.errc);
        CHECK(e.code() == make_error_code(tc.errc));
        CHECK(e.status() == tc.status);
        CHECK(e.code_name() == tc.code);
        CHECK(e.message() == "it went wrong");
        CHECK(std::string(e.what()) == std::string(tc.code) + ": it went wrong");
        CHECK(e.details() == parse(R"({"kind": "timeout", "n": 3})"));
        CHECK(e.request_id() == "rid-" + std::string(tc.code) + "-" + std::to_string(server.requests().size()));
      }
    }
  }
}

TEST_CASE("errors without a known code map by status") {
  struct case_ {
    int status;
    std::string body;
    api_errc errc;
    std::string_view code_name;
  };
  const case_ cases[] = {
      {502, "<html>bad gateway</html>", api_errc::unavailable, "unavailable"},
      {504, "", api_errc::unavailable, "unavailable"},
      {404, "not json", api_errc::not_found, "not_found"},
      {400, R"({"error": {"code": "brand_new_code", "message": "m"}})", api_errc::invalid_request, "brand_new_code"},
      {418, R"({"error": "teapot"})", api_errc::bad_response, "bad_response"},
      {301, "", api_errc::bad_response, "bad_response"},
  };
  fake_server server;
  auto o = options_for(server);
  o.max_retries = 0;
  core_client c(o);
  for (const auto& tc : cases) {
    CAPTURE(tc.status);
    server.on([&](const httplib::Request&, httplib::Response& res, size_t) {
      res.status = tc.status;
      res.set_content(tc.body, "text/plain");
    });
    try {
      (void)c.get_api_payers();
      FAIL("no exception");
    } catch (const api_error& e) {
      CHECK(e.errc() == tc.errc);
      CHECK(e.status() == tc.status);
      CHECK(e.code_name() == tc.code_name);
      CHECK_FALSE(e.message().empty());
      CHECK(e.details().is_null());
    }
  }
}

TEST_CASE("a GET is retried on 503 and then succeeds") {
  fake_server server;
  server.on([](const httplib::Request&, httplib::Response& res, size_t n) {
    if (n <= 2) {
      res.status = 503;
      res.set_content(R"({"error": {"code": "unavailable", "message": "pool saturated"}})", "application/json");
      return;
    }
    res.set_content(R"({"api_payers": []})", "application/json");
  });
  auto o = options_for(server);
  o.max_retries = 2;
  std::vector<milliseconds> waits;
  o.sleep = [&](milliseconds d) {
    waits.push_back(d);
  };
  core_client c(o);
  CHECK(c.get_api_payers().empty());
  CHECK(server.requests().size() == 3);
  CHECK(waits.size() == 2);

  // One retry fewer than needed: the third answer is never asked for.
  server.clear();
  waits.clear();
  server.on([](const httplib::Request&, httplib::Response& res, size_t) {
    res.status = 502;
    res.set_content("upstream down", "text/plain");
  });
  o.max_retries = 1;
  core_client c1(o);
  try {
    (void)c1.get_api_payers();
    FAIL("no exception");
  } catch (const api_error& e) {
    CHECK(e.errc() == api_errc::unavailable);
    CHECK(e.status() == 502);
  }
  CHECK(server.requests().size() == 2);
  CHECK(waits.size() == 1);
}

TEST_CASE("a POST is never retried") {
  fake_server server;
  struct case_ {
    int status;
    std::string_view code;
  };
  const case_ cases[] = {{503, "unavailable"}, {429, "rate_limited"}, {502, "unavailable"}};
  auto o = options_for(server);
  o.max_retries = 5;
  std::vector<milliseconds> waits;
  o.sleep = [&](milliseconds d) {
    waits.push_back(d);
  };
  core_client c(o, secret(kApiKey));
  for (const auto& tc : cases) {
    CAPTURE(tc.status);
    server.clear();
    server.on([&](const httplib::Request&, httplib::Response& res, size_t) {
      res.status = tc.status;
      res.set_header("Retry-After", "1");
      res.set_content(R"({"error": {"code": ")" + std::string(tc.code) + R"(", "message": "busy"}})",
                      "application/json");
    });
    try {
      (void)c.add_group({"g", std::nullopt, {}, {}});
      FAIL("no exception");
    } catch (const api_error& e) {
      CHECK(e.code_name() == tc.code);
    }
    CHECK(server.requests().size() == 1);
  }
  CHECK(waits.empty());

  // Nor when the connection fails.
  o.base_url = "http://127.0.0.1:1";
  core_client unreachable(o, secret(kApiKey));
  CHECK_THROWS_AS((void)unreachable.create_wallet({"w", std::nullopt}), api_error);
  CHECK(waits.empty());
}

TEST_CASE("429 with Retry-After waits that long, up to the cap") {
  struct case_ {
    std::string retry_after;
    milliseconds cap;
    milliseconds expected_wait;
  };
  const case_ cases[] = {
      {"7", milliseconds(60000), milliseconds(7000)},
      {"7", milliseconds(50), milliseconds(50)},
      {"0", milliseconds(50), milliseconds(0)},
  };
  for (const auto& tc : cases) {
    CAPTURE(tc.retry_after);
    CAPTURE(tc.cap.count());
    fake_server server;
    server.on([&](const httplib::Request&, httplib::Response& res, size_t n) {
      if (n == 1) {
        res.status = 429;
        res.set_header("Retry-After", tc.retry_after);
        res.set_content(R"({"error": {"code": "rate_limited", "message": "slow down"}})", "application/json");
        return;
      }
      res.set_content(R"({"balance_credits": 5, "currency": "usd_cents"})", "application/json");
    });
    auto o = options_for(server);
    o.max_retry_after = tc.cap;
    std::vector<milliseconds> waits;
    o.sleep = [&](milliseconds d) {
      waits.push_back(d);
    };
    core_client c(o, secret(kApiKey));
    CHECK(c.balance().balance_credits == 5);
    CHECK(server.requests().size() == 2);
    REQUIRE(waits.size() == 1);
    CHECK(waits[0] == tc.expected_wait);
  }

  // With retries exhausted, the error carries Retry-After for the caller.
  fake_server server;
  server.on([](const httplib::Request&, httplib::Response& res, size_t) {
    res.status = 429;
    res.set_header("Retry-After", "12");
    res.set_content(R"({"error": {"code": "rate_limited", "message": "slow down"}})", "application/json");
  });
  auto o = options_for(server);
  o.max_retries = 0;
  core_client c(o, secret(kApiKey));
  try {
    (void)c.balance();
    FAIL("no exception");
  } catch (const api_error& e) {
    CHECK(e.errc() == api_errc::rate_limited);
    REQUIRE(e.retry_after());
    CHECK(e.retry_after()->count() == 12);
  }
}

TEST_CASE("an answer slower than the read timeout is a timeout") {
  fake_server server;
  server.on([](const httplib::Request&, httplib::Response& res, size_t) {
    std::this_thread::sleep_for(milliseconds(1000));
    res.set_content(R"({"api_payers": []})", "application/json");
  });
  auto o = options_for(server);
  o.read_timeout = milliseconds(150);
  o.max_retries = 0;
  core_client c(o);
  try {
    (void)c.get_api_payers();
    FAIL("no exception");
  } catch (const api_error& e) {
    CHECK(e.errc() == api_errc::timeout);
    CHECK(e.code_name() == "timeout");
    CHECK(e.status() == 0);
  }
}

TEST_CASE("an unreachable server is connection_failed; GETs retry it, with backoff") {
  client_options o;
  o.base_url = "http://127.0.0.1:1";
  o.max_retries = 3;
  o.retry_backoff = milliseconds(100);
  std::vector<milliseconds> waits;
  o.sleep = [&](milliseconds d) {
    waits.push_back(d);
  };
  core_client c(o, secret(kApiKey));
  try {
    (void)c.account();
    FAIL("no exception");
  } catch (const api_error& e) {
    CHECK(e.errc() == api_errc::connection_failed);
    CHECK(e.status() == 0);
    CHECK(e.request_id().empty());
    CHECK(std::string(e.what()).find("127.0.0.1:1") != std::string::npos);
  }
  REQUIRE(waits.size() == 3);
  // Exponential with jitter: attempt n waits between half and all of 100 ms * 2^n.
  for (size_t i = 0; i < waits.size(); ++i) {
    CAPTURE(i);
    CHECK(waits[i] >= milliseconds(50 << i));
    CHECK(waits[i] <= milliseconds(100 << i));
  }
}

TEST_CASE("https to a plain-HTTP server, or with a missing CA file, fails to connect") {
  fake_server server;
  serve_canned(server);
  auto o = options_for(server);
  o.max_retries = 0;
  o.base_url = "https://127.0.0.1:" + std::to_string(server.port());
  core_client c(o);
  try {
    (void)c.get_api_payers();
    FAIL("no exception");
  } catch (const api_error& e) {
    CHECK(e.errc() == api_errc::connection_failed);
  }
  o.ca_file = "/nonexistent/ca.pem";
  core_client c2(o);
  try {
    (void)c2.get_api_payers();
    FAIL("no exception");
  } catch (const api_error& e) {
    CHECK(e.errc() == api_errc::connection_failed);
  }
}

TEST_CASE("base URLs the client refuses") {
  const std::string_view bad[] = {
      "",
      "127.0.0.1:8080",
      "ftp://example.org",
      "http://",
      "http://:8080",
      "http://user:pass@example.org",
      "http://example.org:0",
      "http://example.org:65536",
      "http://example.org:x",
      "http://example.org/?q=1",
      "http://example.org/#frag",
      "http://[::1",
  };
  for (const auto url : bad) {
    CAPTURE(url);
    client_options o;
    o.base_url = std::string(url);
    try {
      core_client c(o);
      FAIL("accepted");
    } catch (const api_error& e) {
      CHECK(e.errc() == api_errc::invalid_request);
      CHECK(e.status() == 0);
      CHECK(std::string(e.what()).find("base_url") != std::string::npos);
    }
  }
  for (const auto url :
       {"http://localhost", "https://example.org:8443/enact", "http://[::1]:80", "HTTP://Example.org/"}) {
    CAPTURE(url);
    client_options o;
    o.base_url = url;
    CHECK_NOTHROW((void)core_client{o});
  }
}

TEST_CASE("no credential ever appears in an exception message") {
  fake_server server;
  // A careless server that echoes everything it got, in every part of the error body.
  server.on([](const httplib::Request& req, httplib::Response& res, size_t) {
    const std::string key = req.get_header_value("X-Api-Key");
    json::object err;
    err["code"] = "unauthenticated";
    err["message"] = "bad key " + key + " with body " + req.body;
    err["details"] = json::object{{"key", key}, {"body", req.body}, {"list", json::array{key}}};
    res.status = 401;
    res.set_content(json::serialize(json::object{{"error", err}}), "application/json");
  });
  auto o = options_for(server);
  o.max_retries = 0;
  core_client c(o, secret(kApiKey));
  const Secret usage = secret(kUsageKey);

  std::vector<std::function<void()>> calls = {
      [&] { (void)c.account(); },
      [&] { (void)c.list_api_keys(); },
      [&] {
        (void)c.update_usage_api_key(usage, {"n", std::nullopt, std::nullopt, {}});
      },
      [&] { (void)c.update_usage_api_key_metadata(usage, "n", "d"); },
      [&] { (void)c.remove_usage_api_key(usage); },
  };
  for (size_t i = 0; i < calls.size(); ++i) {
    CAPTURE(i);
    try {
      calls[i]();
      FAIL("no exception");
    } catch (const api_error& e) {
      CHECK(e.errc() == api_errc::unauthenticated);
      const std::string all = std::string(e.what()) + e.message() + json::serialize(e.details());
      CHECK(all.find(kApiKey) == std::string::npos);
      CHECK(all.find(kUsageKey) == std::string::npos);
      CHECK(all.find("[redacted]") != std::string::npos);
    }
  }

  // The key was sent, though: redaction is of the message only.
  CHECK(server.requests().front().header("X-Api-Key") == kApiKey);

  // Transport failures and bad answers name no key either.
  o.base_url = "http://127.0.0.1:1";
  core_client unreachable(o, secret(kApiKey));
  try {
    (void)unreachable.remove_usage_api_key(usage);
    FAIL("no exception");
  } catch (const api_error& e) {
    CHECK(std::string(e.what()).find(kApiKey) == std::string::npos);
    CHECK(std::string(e.what()).find(kUsageKey) == std::string::npos);
  }
  server.on([](const httplib::Request&, httplib::Response& res, size_t) {
    res.set_content(R"({"api_key": 12, "wallet_address": ")" + kA1 + R"(", "leak": ")" + kApiKey + R"("})",
                    "application/json");
  });
  core_client c2(options_for(server), secret(kApiKey));
  try {
    (void)c2.new_account({"acme", std::nullopt, std::nullopt});
    FAIL("no exception");
  } catch (const api_error& e) {
    CHECK(e.errc() == api_errc::bad_response);
    CHECK(std::string(e.what()).find("api_key") != std::string::npos);
    CHECK(std::string(e.what()).find(kApiKey) == std::string::npos);
  }
}

TEST_CASE("an API key that cannot travel in a header is refused before anything is sent") {
  fake_server server;
  serve_canned(server);
  for (const std::string& key : {kApiKey + "\r\nX-Injected: 1", kApiKey + " ", std::string("\x01")}) {
    core_client c(options_for(server), secret(key));
    try {
      (void)c.account();
      FAIL("no exception");
    } catch (const api_error& e) {
      CHECK(e.errc() == api_errc::invalid_request);
      CHECK(e.status() == 0);
      CHECK(std::string(e.what()).find(kApiKey) == std::string::npos);
    }
  }
  CHECK(server.requests().empty());
}

TEST_CASE("request bodies and answers convert to and from JSON symmetrically") {
  // value_from of a decoded answer writes the canonical wire form (checksummed addresses).
  const group g = json::value_to<group>(parse(kGroup));
  const json::value out = json::value_from(g);
  CHECK(out.at("pkp_ids_permitted").at(1) == json::value(checksum(kA2)));
  CHECK(json::value_to<group>(out).pkp_ids_permitted == g.pkp_ids_permitted);
  const page<wallet> p = json::value_to<page<wallet>>(parse(page_of(kWallet)));
  CHECK(json::value_to<page<wallet>>(json::value_from(p)).items.at(0).derivation_path == h256(kH1));
  // A permission set round-trips through the usage-key listing form.
  usage_key_info k;
  k.hash = h256(kH2);
  k.permissions.remove_pkp_from_groups = {0};
  CHECK(json::value_to<usage_key_info>(json::value_from(k)).permissions == k.permissions);
}
