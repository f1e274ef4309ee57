// SPDX-License-Identifier: Apache-2.0
// What the dashboard needs from the API (docs/dashboard.md, docs/protocol.md §2): the Solana
// address of every wallet answer, equal to the SDK's derivation and to `enact pkp derive`; action
// code read back through the typed client; and GET /dashboard/settings with the page's policy,
// on one listener and on two (the trigger service under --triggers-listen, reached by the page
// across origins with CORS).
#include <doctest/doctest.h>

#include <boost/json.hpp>
#include <httplib.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "enact/client/core_client.hpp"
#include "enact/codec/hex.hpp"
#include "enact/pkp/pkp.hpp"
#include "steps.hpp"
#include "triggers_test.hpp"

namespace enact::itest {
namespace {

/// The Solana address of (account, path) under the server's simulated root key, as the SDK
/// derives it.
std::string sdk_solana(const std::string& data_dir, const std::string& account_hex, const std::string& path_hex) {
  const std::string raw = file_text(data_dir + "/tee-root.key");
  REQUIRE(raw.size() == 32);
  const Secret root{as_bytes(std::string_view(raw))};
  const hash256 account = codec::hex::decode_fixed<32>(account_hex).value();
  const hash256 path = codec::hex::decode_fixed<32>(path_hex).value();
  return pkp::solana_address(pkp::ed25519_public_key(root, account, path).value());
}

/// The second line of `enact pkp derive` for the same key: the Solana address.
std::string cli_solana(const std::string& data_dir, const std::string& account_hex, const std::string& path_hex) {
  const std::string raw = file_text(data_dir + "/tee-root.key");
  const std::string key_file = data_dir + "/../root.hex";
  {
    std::ofstream out(key_file);
    out << codec::hex::encode(as_bytes(std::string_view(raw))) << "\n";
  }
  const std::string cmd = std::string(ENACT_CLI) + " pkp derive --root-key-file " + key_file + " --account " +
                          account_hex + " --path " + path_hex;
  FILE* p = ::popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  std::string out;
  char buf[256];
  while (std::fgets(buf, sizeof buf, p) != nullptr)
    out += buf;
  CHECK(::pclose(p) == 0);
  std::remove(key_file.c_str());
  const size_t nl = out.find('\n');
  REQUIRE(nl != std::string::npos);
  std::string second = out.substr(nl + 1);
  while (!second.empty() && (second.back() == '\n' || second.back() == '\r'))
    second.pop_back();
  return second;
}

std::string connect_src(const std::string& policy) {
  const size_t at = policy.find("connect-src ");
  REQUIRE(at != std::string::npos);
  return policy.substr(at, policy.find(';', at) - at);
}

}  // namespace

TEST_CASE("every wallet answer names its Solana address, as the SDK and the CLI derive it") {
  server_process srv({"--dev"});
  http_client c = srv.client();
  const account_keys owner = create_account(c, "solana");
  const response w = c.post("/create_wallet", json::object{{"name", "sol"}}, owner.auth());
  ITEST_REQUIRE_STATUS(w, 200);
  const std::string path = s_of(w.body, "derivation_path");
  CHECK(path == api_path_hex(owner.api_key_hash, 0));
  const std::string expected = sdk_solana(srv.data_dir(), owner.api_key_hash, path);
  CHECK(s_of(w.body, "solana_address") == expected);
  CHECK(cli_solana(srv.data_dir(), owner.api_key_hash, path) == expected);
  // Existing fields unchanged.
  CHECK(s_of(w.body, "pkp_id") == s_of(w.body, "wallet_address"));

  const response list = c.get("/list_wallets", owner.auth());
  ITEST_REQUIRE_STATUS(list, 200);
  REQUIRE(list.body.at("items").as_array().size() == 1);
  CHECK(s_of(list.body.at("items").at(0), "solana_address") == expected);
  const response g =
      c.post("/add_group",
             json::object{{"name", "g"}, {"pkp_ids_permitted", json::array{json::string(s_of(w.body, "pkp_id"))}}},
             owner.auth());
  ITEST_REQUIRE_STATUS(g, 200);
  const response in_group =
      c.get("/list_wallets_in_group?group_id=" + std::to_string(u_of(g.body, "group_id")), owner.auth());
  ITEST_REQUIRE_STATUS(in_group, 200);
  CHECK(s_of(in_group.body.at("items").at(0), "solana_address") == expected);

  // The same path under another account is another key, and another address.
  const account_keys other = create_account(c, "other");
  const response w2 = c.post("/create_wallet", json::object{{"name", "sol"}}, other.auth());
  ITEST_REQUIRE_STATUS(w2, 200);
  CHECK(s_of(w2.body, "solana_address") != expected);

  // The typed client reads it.
  client::client_options o;
  o.base_url = "http://127.0.0.1:" + std::to_string(srv.port());
  client::core_client cc(o, Secret(as_bytes(std::string_view(owner.api_key))));
  const auto wallets = cc.list_wallets();
  REQUIRE(wallets.items.size() == 1);
  REQUIRE(wallets.items[0].solana_address.has_value());
  CHECK(*wallets.items[0].solana_address == expected);
  CHECK(srv.stop().clean());
}

TEST_CASE("the typed client reads an action's code back") {
  server_process srv({"--dev"});
  http_client c = srv.client();
  const account_keys owner = create_account(c, "code");
  client::client_options o;
  o.base_url = "http://127.0.0.1:" + std::to_string(srv.port());
  client::core_client cc(o, Secret(as_bytes(std::string_view(owner.api_key))));
  const std::string code = "// ünïcödé\nEnact.setResponse({ok: true});\n";
  const auto up = cc.upload_action(code);
  cc.add_action(api::new_action{up.action_ipfs_cid, "a", std::nullopt});
  const auto back = cc.get_action_code(up.action_ipfs_cid);
  CHECK(back.action_ipfs_cid == up.action_ipfs_cid);
  CHECK(back.code == code);
  try {
    (void)cc.get_action_code(cid_of_code("not registered"));
    FAIL("expected not_found");
  } catch (const api_error& e) {
    CHECK(e.code() == api_errc::not_found);
  }
  CHECK_THROWS_AS((void)cc.get_action_code("Qm x"), api_error);
  CHECK(srv.stop().clean());
}

TEST_CASE("GET /dashboard/settings and the page's policy, on one listener and on two") {
  SUBCASE("the trigger routes on the dashboard's listener") {
    server_process srv({"--dev"});
    const response s = call(srv.port(), "GET", "/dashboard/settings");
    ITEST_REQUIRE_STATUS(s, 200);
    CHECK(s.body == json::parse(R"({"triggers_url":null,"stripe_js_url":null})"));
    CHECK(connect_src(s.header("Content-Security-Policy")) == "connect-src 'self'");
    const response page = call(srv.port(), "GET", "/dashboard/");
    CHECK(page.header("Content-Security-Policy") ==
          "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; "
          "base-uri 'none'; form-action 'none'; frame-ancestors 'none'");
    CHECK(srv.stop().clean());
  }
  SUBCASE("--triggers-listen: the page is told where, may connect there, and is answered with CORS") {
    temp_dir dir;
    const std::string data = dir.path() + "/data";
    const std::string token = issue_token(data, "alice");
    const int port = free_port();
    server_process srv({"--dev", "--triggers-listen", "127.0.0.1:" + std::to_string(port)}, data);
    const std::string triggers = "http://127.0.0.1:" + std::to_string(port);
    const std::string dashboard = "http://127.0.0.1:" + std::to_string(srv.port());
    const response s = call(srv.port(), "GET", "/dashboard/settings");
    ITEST_REQUIRE_STATUS(s, 200);
    CHECK(s_of(s.body, "triggers_url") == triggers);
    for (const char* path : {"/dashboard/", "/dashboard/app.js", "/dashboard/settings"}) {
      INFO(path);
      CHECK(connect_src(call(srv.port(), "GET", path).header("Content-Security-Policy")) ==
            "connect-src 'self' " + triggers);
    }
    // The page's requests: a preflight, then the call, each allowed for the dashboard's origin.
    httplib::Client trig("127.0.0.1", port);
    const auto pre = trig.Options("/api/triggers",
                                  httplib::Headers{{"Origin", dashboard},
                                                   {"Access-Control-Request-Method", "POST"},
                                                   {"Access-Control-Request-Headers", "authorization, content-type"}});
    REQUIRE(pre);
    CHECK(pre->status == 204);
    CHECK(pre->get_header_value("Access-Control-Allow-Origin") == dashboard);
    const std::string allowed = pre->get_header_value("Access-Control-Allow-Headers");
    CHECK(allowed.find("Authorization") != std::string::npos);
    CHECK(allowed.find("Content-Type") != std::string::npos);
    const auto me = trig.Get("/api/me", httplib::Headers{{"Origin", dashboard}, {"Authorization", "Bearer " + token}});
    REQUIRE(me);
    CHECK(me->status == 200);
    CHECK(me->get_header_value("Access-Control-Allow-Origin") == dashboard);
    CHECK(me->get_header_value("Vary").find("Origin") != std::string::npos);
    CHECK_FALSE(me->has_header("Access-Control-Allow-Credentials"));
    // The core's own listener is unchanged: no CORS for a page of its own origin is needed.
    const response core = call(srv.port(), "GET", "/core/v1/get_node_chain_config", {}, {{"Origin", triggers}});
    CHECK_FALSE(core.has_header("Access-Control-Allow-Origin"));
    CHECK(srv.stop().clean());
  }
  SUBCASE("--triggers-public-url: the page is told the public URL") {
    const int port = free_port();
    server_process srv({"--dev", "--triggers-listen", "127.0.0.1:" + std::to_string(port), "--triggers-public-url",
                        "https://Triggers.Example.org:8443/base/"});
    const response s = call(srv.port(), "GET", "/dashboard/settings");
    ITEST_REQUIRE_STATUS(s, 200);
    CHECK(s_of(s.body, "triggers_url") == "https://Triggers.Example.org:8443/base");
    CHECK(connect_src(s.header("Content-Security-Policy")) == "connect-src 'self' https://triggers.example.org:8443");
    CHECK(srv.stop().clean());
  }
}

}  // namespace enact::itest
