// SPDX-License-Identifier: Apache-2.0
// Attacks on what the dashboard reads (docs/protocol.md §2 /get_action_code; docs/dashboard.md "The
// trigger service on its own listener"; docs/security.md "Threat model"):
//
//   1. Reading action code the caller may not read: another account's CID with the attacker's
//      own key, the CIDv1 spelling of that CID, a usage key of the owner's account without rights
//      (or with rights on another group only), no key, the admin wallet's X-Wallet-Auth envelope,
//      code uploaded but never registered. Each refusal must look the same (no oracle telling
//      whose code exists), and only a caller who may read the code learns that it is missing.
//   2. A page of another origin calling the trigger service on its own listener: no
//      Access-Control-Allow-Origin for it, its preflight refused, no credentials ever allowed;
//      webhooks still accepted from anywhere.
#include <doctest/doctest.h>

#include <boost/json.hpp>
#include <httplib.h>

#include <string>

#include "enact/eip712/envelope.hpp"
#include "enact/ipfs/cid.hpp"
#include "steps.hpp"
#include "triggers_test.hpp"

namespace enact::itest {
namespace {

constexpr std::string_view kSecretCode = "Enact.setResponse({recipe: 'the owner keeps this to itself'});";
constexpr std::string_view kRefused = "no action with this CID that this key may read";

/// The same block named by its CIDv1 (dag-pb, base32) spelling.
std::string v1_spelling(const std::string& v0) {
  const ipfs::cid c = ipfs::parse(v0).value();
  return ipfs::cid{1, ipfs::kCodecDagPb, c.multihash}.to_string();
}

std::string code_path(const std::string& cid) { return "/get_action_code?action_ipfs_cid=" + cid; }

/// 404 not_found with the one message every unreadable CID gets, and no code in the answer.
void check_refused(const response& r) {
  check_error_shape(r, 404, "not_found");
  CHECK(r.error_message() == kRefused);
  CHECK(r.text.find("keeps this to itself") == std::string::npos);
}

/// The admin wallet's X-Wallet-Auth, signed for each request (steps.hpp wallet_auth).
httplib::Headers wallet_auth_of(const server_process& srv, const std::string& api_key) {
  return wallet_auth(env_of(srv), key_secret(api_key));
}

}  // namespace

TEST_CASE("get_action_code reads nothing the caller may not run or manage, and never says whose code exists") {
  server_process srv({"--dev"});
  http_client c = srv.client();
  const account_keys victim = create_account(c, "victim");
  const response up = c.post("/upload_action", json::object{{"code", kSecretCode}}, victim.auth());
  ITEST_REQUIRE_STATUS(up, 200);
  const std::string cid = s_of(up.body, "action_ipfs_cid");
  ITEST_REQUIRE_STATUS(c.post("/add_action", json::object{{"action_ipfs_cid", cid}, {"name", "secret"}}, victim.auth()),
                       200);
  const response g =
      c.post("/add_group",
             json::object{{"name", "kitchen"},
                          {"cid_hashes_permitted", json::array{json::string(s_of(up.body, "hashed_cid"))}}},
             victim.auth());
  ITEST_REQUIRE_STATUS(g, 200);
  const uint64_t group = u_of(g.body, "group_id");
  const response other = c.post("/add_group", json::object{{"name", "other"}}, victim.auth());
  ITEST_REQUIRE_STATUS(other, 200);
  const uint64_t other_group = u_of(other.body, "group_id");

  // The owner reads it: the attacks below are refusals of a route that works.
  const response mine = c.get(code_path(cid), victim.auth());
  ITEST_REQUIRE_STATUS(mine, 200);
  CHECK(s_of(mine.body, "code") == kSecretCode);
  CHECK(s_of(mine.body, "action_ipfs_cid") == cid);

  const account_keys attacker = create_account(c, "attacker");
  SUBCASE("another account's key, with the CID and with its CIDv1 spelling") {
    check_refused(c.get(code_path(cid), attacker.auth()));
    check_refused(c.get(code_path(v1_spelling(cid)), attacker.auth()));
    // The attacker's own uploads of other code change nothing.
    ITEST_REQUIRE_STATUS(c.post("/upload_action", json::object{{"code", "Enact.setResponse(1);"}}, attacker.auth()),
                         200);
    check_refused(c.get(code_path(cid), attacker.auth()));
  }
  SUBCASE("another account that registers the victim's CID and may run it still never reads it") {
    // Registering a CID is open to anyone, and content addressing lets the attacker run the code
    // the victim stored; reading its source is the victim's alone.
    ITEST_REQUIRE_STATUS(
        c.post("/add_action", json::object{{"action_ipfs_cid", cid}, {"name", "borrowed"}}, attacker.auth()), 200);
    const response mine_too =
        c.post("/add_group",
               json::object{{"name", "borrowed"},
                            {"cid_hashes_permitted", json::array{json::string(s_of(up.body, "hashed_cid"))}}},
               attacker.auth());
    ITEST_REQUIRE_STATUS(mine_too, 200);
    check_refused(c.get(code_path(cid), attacker.auth()));
    const usage_keys runner = create_usage_key(
        c, attacker.auth(), json::object{{"execute_in_groups", json::array{u_of(mine_too.body, "group_id")}}});
    check_refused(c.get(code_path(cid), runner.auth()));
    // The victim's own key still reads it.
    ITEST_CHECK_STATUS(c.get(code_path(cid), victim.auth()), 200);
  }
  SUBCASE("the owner's own usage keys without rights on a group listing it") {
    const usage_keys nothing = create_usage_key(c, victim.auth());
    const usage_keys elsewhere = create_usage_key(c, victim.auth(),
                                                  json::object{{"execute_in_groups", json::array{other_group}},
                                                               {"manage_ipfs_ids_in_groups", json::array{other_group}},
                                                               {"add_pkp_to_groups", json::array{0}},
                                                               {"can_create_groups", true},
                                                               {"can_create_pkps", true}});
    for (const usage_keys* k : {&nothing, &elsewhere}) {
      check_refused(c.get(code_path(cid), k->auth()));
      check_refused(c.get(code_path(v1_spelling(cid)), k->auth()));
    }
    // Execute or manageActions on the group, or manageActions on every group, may read it.
    for (const json::object& perms : {json::object{{"execute_in_groups", json::array{group}}},
                                      json::object{{"manage_ipfs_ids_in_groups", json::array{group}}},
                                      json::object{{"execute_in_groups", json::array{0}}},
                                      json::object{{"manage_ipfs_ids_in_groups", json::array{0}}}}) {
      INFO(json::serialize(perms));
      const usage_keys k = create_usage_key(c, victim.auth(), perms);
      const response r = c.get(code_path(cid), k.auth());
      ITEST_CHECK_STATUS(r, 200);
      CHECK(r.text.find("keeps this to itself") != std::string::npos);
    }
  }
  SUBCASE("no key, and the admin wallet's envelope") {
    const response none = c.get(code_path(cid));
    check_error_shape(none, 401, "unauthenticated");
    CHECK(none.text.find("keeps this to itself") == std::string::npos);
    const response cfg = c.get("/get_node_chain_config");
    ITEST_REQUIRE_STATUS(cfg, 200);
    const response wallet = c.get(code_path(cid), wallet_auth_of(srv, victim.api_key));
    check_error_shape(wallet, 401, "unauthenticated");
    CHECK(wallet.text.find("keeps this to itself") == std::string::npos);
  }
  SUBCASE("code uploaded but registered by no one in the account, an unknown CID, another spelling") {
    const response loose =
        c.post("/upload_action", json::object{{"code", "Enact.setResponse('loose');"}}, victim.auth());
    ITEST_REQUIRE_STATUS(loose, 200);
    check_refused(c.get(code_path(s_of(loose.body, "action_ipfs_cid")), victim.auth()));
    check_refused(c.get(code_path(cid_of_code("never stored anywhere")), victim.auth()));
    // Registered as Qm…, asked as b…: the registration names one spelling (hashed_cid).
    check_refused(c.get(code_path(v1_spelling(cid)), victim.auth()));
  }
  SUBCASE("a registered action whose code is not in the store: said only to who may read it") {
    const std::string absent = cid_of_code("Enact.setResponse('kept on IPFS only');");
    ITEST_REQUIRE_STATUS(
        c.post("/add_action", json::object{{"action_ipfs_cid", absent}, {"name", "remote"}}, victim.auth()), 200);
    const response owner = c.get(code_path(absent), victim.auth());
    check_error_shape(owner, 404, "not_found");
    CHECK(owner.error_message() != kRefused);
    CHECK(owner.error_message().find("content store") != std::string::npos);
    check_refused(c.get(code_path(absent), attacker.auth()));
    check_refused(c.get(code_path(absent), create_usage_key(c, victim.auth()).auth()));
  }
  SUBCASE("malformed CIDs are 400 for everyone") {
    for (const std::string path :
         {std::string("/get_action_code"), code_path("notacid"), code_path(cid + "x"), code_path(cid) + "&extra=1"}) {
      INFO(path);
      check_error_shape(c.get(path, attacker.auth()), 400, "invalid_request");
    }
  }
  CHECK(srv.stop().clean());
}

TEST_CASE("the trigger service on its own listener answers CORS for the dashboard's origin alone") {
  temp_dir dir;
  const std::string data = dir.path() + "/data";
  const std::string token = issue_token(data, "alice");
  const int port = free_port();
  server_process srv({"--dev", "--triggers-listen", "127.0.0.1:" + std::to_string(port)}, data);
  const std::string dashboard = "http://127.0.0.1:" + std::to_string(srv.port());
  httplib::Client trig("127.0.0.1", port);

  const auto preflight = [&](const std::string& origin, const std::string& path, const std::string& headers) {
    return trig.Options(path, httplib::Headers{{"Origin", origin},
                                               {"Access-Control-Request-Method", "GET"},
                                               {"Access-Control-Request-Headers", headers}});
  };
  // The dashboard's own origin: an exact allow, never credentials.
  const auto ok = preflight(dashboard, "/api/me", "authorization");
  REQUIRE(ok);
  CHECK(ok->status == 204);
  CHECK(ok->get_header_value("Access-Control-Allow-Origin") == dashboard);
  CHECK_FALSE(ok->has_header("Access-Control-Allow-Credentials"));

  for (const std::string origin :
       {std::string("http://evil.example"), std::string("null"), "http://127.0.0.1:" + std::to_string(port),
        dashboard + ".evil.example", "https://127.0.0.1:" + std::to_string(srv.port())}) {
    INFO(origin);
    // An actual request: answered (the bearer token is the credential), but unreadable to the page.
    const auto me = trig.Get("/api/me", httplib::Headers{{"Origin", origin}, {"Authorization", "Bearer " + token}});
    REQUIRE(me);
    CHECK(me->status == 200);
    CHECK_FALSE(me->has_header("Access-Control-Allow-Origin"));
    // Its preflight: refused.
    const auto pre = preflight(origin, "/api/triggers", "authorization, content-type");
    REQUIRE(pre);
    CHECK(pre->status == 403);
    CHECK_FALSE(pre->has_header("Access-Control-Allow-Origin"));
  }
  // Even the dashboard's origin may not send headers beyond Authorization and Content-Type.
  for (const char* h : {"x-api-key", "cookie", "x-wallet-auth"}) {
    INFO(h);
    const auto pre = preflight(dashboard, "/api/me", h);
    REQUIRE(pre);
    CHECK(pre->status == 403);
    CHECK_FALSE(pre->has_header("Access-Control-Allow-Origin"));
  }

  // A webhook is called by servers, from anywhere: accepted whatever the Origin, with no CORS
  // header for a foreign one.
  http_client c = srv.client();
  const core_side core = setup_core(c, {kTrivialCode}, 500);
  api_user alice(port, token);
  const response created =
      alice.post("/api/triggers", webhook_body(core.cids.at(std::string(kTrivialCode)), core.key.value));
  ITEST_REQUIRE_STATUS(created, 201);
  const std::string id = s_of(created.body, "id");
  for (const std::string origin : {std::string("http://evil.example"), std::string()}) {
    INFO(origin);
    httplib::Headers h;
    if (!origin.empty())
      h.emplace("Origin", origin);
    const auto hook = trig.Post("/webhook/" + id, h, R"({"n":1})", "application/json");
    REQUIRE(hook);
    CHECK(hook->status / 100 == 2);
    CHECK_FALSE(hook->has_header("Access-Control-Allow-Origin"));
  }
  CHECK(srv.stop().clean());
}

}  // namespace enact::itest
