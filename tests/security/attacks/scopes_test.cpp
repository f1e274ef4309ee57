// SPDX-License-Identifier: Apache-2.0
// Attacks on scopes (docs/protocol.md §2 `/add_group`, `/delete_action`, the 401 row of §0;
// docs/security.md "Threat model"): a usage key tries to do more than its scopes allow through a
// route whose side effects reach further than its name, and the former master key of a
// converted account tries to keep working.
//
//   1. A usage key with no permission at all deletes an action listed in the owner's groups
//      (delete_action removes it from every group).
//   2. A key that may only create groups creates one that binds a PKP of the account to code of
//      its choosing (add_group with pkp_ids_permitted and cid_hashes_permitted), then runs it.
//   3. The former master key of an account converted to ChainSecured reads, runs and writes.
//   4. A usage key with no permission adds, renames and deletes action metadata (registry writes).
#include <doctest/doctest.h>

#include <boost/json.hpp>

#include <string>

#include "enact/crypto/keccak.hpp"
#include "enact/eip712/envelope.hpp"
#include "steps.hpp"

namespace enact::itest {
namespace {

/// A group of the owner listing one action and one PKP; the action signs with the PKP.
struct owner_setup {
  account_keys owner;
  std::string pkp;
  std::string cid;
  std::string hashed;
  uint64_t group = 0;
};

constexpr std::string_view kSignCode =
    "Enact.setResponse(Enact.signMessage({pkpId: params.pkp, message: 'owner approved'}));";

owner_setup make_owner(http_client& c) {
  owner_setup s;
  s.owner = create_account(c, "owner");
  buy_credits(c, s.owner.auth(), 500);
  const response w = c.post("/create_wallet", json::object{{"name", "treasury"}}, s.owner.auth());
  ITEST_REQUIRE_STATUS(w, 200);
  s.pkp = s_of(w.body, "pkp_id");
  const response up = c.post("/upload_action", json::object{{"code", kSignCode}}, s.owner.auth());
  ITEST_REQUIRE_STATUS(up, 200);
  s.cid = s_of(up.body, "action_ipfs_cid");
  s.hashed = s_of(up.body, "hashed_cid");
  ITEST_REQUIRE_STATUS(
      c.post("/add_action", json::object{{"action_ipfs_cid", s.cid}, {"name", "sign"}}, s.owner.auth()), 200);
  const response g = c.post("/add_group",
                            json::object{{"name", "treasury"},
                                         {"pkp_ids_permitted", json::array{json::string(s.pkp)}},
                                         {"cid_hashes_permitted", json::array{json::string(s.hashed)}}},
                            s.owner.auth());
  ITEST_REQUIRE_STATUS(g, 200);
  s.group = u_of(g.body, "group_id");
  return s;
}

bool group_lists(http_client& c, const httplib::Headers& auth, uint64_t id, const std::string& hashed) {
  const json::value g = find_group(c, auth, id);
  REQUIRE(!g.is_null());
  for (const auto& h : g.at("cid_hashes_permitted").as_array())
    if (h.as_string() == hashed)
      return true;
  return false;
}

}  // namespace

TEST_CASE("a usage key without manageActions cannot strip an action from the owner's groups") {
  server_process srv({"--dev"});
  http_client c = srv.client();
  const owner_setup s = make_owner(c);
  // A key with nothing at all, and a key that manages actions only in another group.
  const usage_keys nothing = create_usage_key(c, s.owner.auth());
  const response other = c.post("/add_group", json::object{{"name", "other"}}, s.owner.auth());
  ITEST_REQUIRE_STATUS(other, 200);
  const uint64_t other_id = u_of(other.body, "group_id");
  const usage_keys elsewhere =
      create_usage_key(c, s.owner.auth(), json::object{{"manage_ipfs_ids_in_groups", json::array{other_id}}});

  for (const usage_keys* k : {&nothing, &elsewhere}) {
    const response r = c.post("/delete_action", json::object{{"hashed_cid", s.hashed}}, k->auth());
    ITEST_CHECK_STATUS(r, 403);
    CHECK(r.error_code() == "forbidden");
    // The message names the first group it may not touch.
    CHECK(r.error_message().find("group " + std::to_string(s.group)) != std::string::npos);
    CHECK(group_lists(c, s.owner.auth(), s.group, s.hashed));
  }

  // A key with manageActions on that group (or on the wildcard) may delete it.
  const usage_keys manager =
      create_usage_key(c, s.owner.auth(), json::object{{"manage_ipfs_ids_in_groups", json::array{s.group}}});
  ITEST_CHECK_STATUS(c.post("/delete_action", json::object{{"hashed_cid", s.hashed}}, manager.auth()), 200);
  CHECK_FALSE(group_lists(c, s.owner.auth(), s.group, s.hashed));
  // An action listed in no group: a key that may manage actions somewhere deletes it; a key with no
  // permission at all may not (docs/protocol.md §2 "Action metadata").
  const response up = c.post("/upload_action", json::object{{"code", "Enact.setResponse(1);"}}, s.owner.auth());
  ITEST_REQUIRE_STATUS(up, 200);
  ITEST_REQUIRE_STATUS(
      c.post("/add_action", json::object{{"action_ipfs_cid", s_of(up.body, "action_ipfs_cid")}, {"name", "loose"}},
             s.owner.auth()),
      200);
  const response none =
      c.post("/delete_action", json::object{{"hashed_cid", s_of(up.body, "hashed_cid")}}, nothing.auth());
  ITEST_CHECK_STATUS(none, 403);
  CHECK(none.error_message().find("group:manageActions") != std::string::npos);
  ITEST_CHECK_STATUS(
      c.post("/delete_action", json::object{{"hashed_cid", s_of(up.body, "hashed_cid")}}, elsewhere.auth()), 200);
  CHECK(srv.stop().clean());
}

TEST_CASE("a usage key with no permission writes no action metadata") {
  // Each metadata write is a registry transaction (gas on a real chain): before this rule a key
  // with no scope at all could add, rename and delete actions listed in no group, and rename
  // those listed in the owner's groups.
  server_process srv({"--dev"});
  http_client c = srv.client();
  const owner_setup s = make_owner(c);
  const usage_keys nothing = create_usage_key(c, s.owner.auth());
  const usage_keys runner =
      create_usage_key(c, s.owner.auth(), json::object{{"execute_in_groups", json::array{s.group}}});
  const response up = c.post("/upload_action", json::object{{"code", "Enact.setResponse(2);"}}, s.owner.auth());
  ITEST_REQUIRE_STATUS(up, 200);
  const std::string cid = s_of(up.body, "action_ipfs_cid"), hashed = s_of(up.body, "hashed_cid");
  for (const usage_keys* k : {&nothing, &runner}) {
    const response add = c.post("/add_action", json::object{{"action_ipfs_cid", cid}, {"name", "mine"}}, k->auth());
    ITEST_CHECK_STATUS(add, 403);
    CHECK(add.error_message().find("group:manageActions") != std::string::npos);
    // Renaming the owner's listed action needs manageActions on its group.
    const response rename =
        c.post("/update_action_metadata",
               json::object{{"hashed_cid", s.hashed}, {"name", "renamed"}, {"description", ""}}, k->auth());
    ITEST_CHECK_STATUS(rename, 403);
    CHECK(rename.error_message().find("group " + std::to_string(s.group)) != std::string::npos);
  }
  const response listed = c.get("/list_actions", s.owner.auth());
  ITEST_REQUIRE_STATUS(listed, 200);
  CHECK(listed.text.find("renamed") == std::string::npos);
  CHECK(listed.text.find(hashed) == std::string::npos);
  // A key that manages actions in the group does all three.
  const usage_keys manager =
      create_usage_key(c, s.owner.auth(), json::object{{"manage_ipfs_ids_in_groups", json::array{s.group}}});
  ITEST_CHECK_STATUS(c.post("/add_action", json::object{{"action_ipfs_cid", cid}, {"name", "mine"}}, manager.auth()),
                     200);
  ITEST_CHECK_STATUS(
      c.post("/update_action_metadata",
             json::object{{"hashed_cid", s.hashed}, {"name", "renamed"}, {"description", ""}}, manager.auth()),
      200);
  ITEST_CHECK_STATUS(
      c.post("/update_action_metadata", json::object{{"hashed_cid", hashed}, {"name", "loose"}, {"description", ""}},
             manager.auth()),
      200);
  ITEST_CHECK_STATUS(c.post("/delete_action", json::object{{"hashed_cid", hashed}}, manager.auth()), 200);
  CHECK(srv.stop().clean());
}

TEST_CASE("group:create alone cannot bind the account's PKPs to the caller's code") {
  server_process srv({"--dev"});
  http_client c = srv.client();
  const owner_setup s = make_owner(c);
  // The attacker's key may create groups and execute in every group: what it lacks is any right
  // to put PKPs or actions into a group.
  const usage_keys creator = create_usage_key(
      c, s.owner.auth(), json::object{{"can_create_groups", true}, {"execute_in_groups", json::array{0}}});
  const std::string evil = "Enact.setResponse(Enact.signMessage({pkpId: params.pkp, message: 'drain'}));";
  const response up = c.post("/upload_action", json::object{{"code", evil}}, creator.auth());
  ITEST_REQUIRE_STATUS(up, 200);
  const std::string evil_hash = s_of(up.body, "hashed_cid");

  const json::array pkps{json::string(s.pkp)};
  const json::array cids{json::string(evil_hash)};
  for (const auto& [what, body] :
       {std::pair{std::string("pkps and code"),
                  json::object{{"name", "mine"}, {"pkp_ids_permitted", pkps}, {"cid_hashes_permitted", cids}}},
        std::pair{std::string("pkps only"), json::object{{"name", "mine"}, {"pkp_ids_permitted", pkps}}},
        std::pair{std::string("code only"), json::object{{"name", "mine"}, {"cid_hashes_permitted", cids}}}}) {
    INFO(what);
    const response r = c.post("/add_group", body, creator.auth());
    ITEST_CHECK_STATUS(r, 403);
    CHECK(r.error_code() == "forbidden");
  }
  // The run the attack was for is refused: no group lists the attacker's code with the PKP.
  const response run =
      c.post("/run_action", json::object{{"code", evil}, {"pkp_id", s.pkp}, {"params", json::object{{"pkp", s.pkp}}}},
             creator.auth());
  ITEST_CHECK_STATUS(run, 403);
  CHECK(run.text.find("signature") == std::string::npos);

  // An empty group is what group:create allows, and the scopes on the wildcard allow the rest.
  ITEST_CHECK_STATUS(c.post("/add_group", json::object{{"name", "empty"}}, creator.auth()), 200);
  const usage_keys trusted = create_usage_key(c, s.owner.auth(),
                                              json::object{{"can_create_groups", true},
                                                           {"add_pkp_to_groups", json::array{0}},
                                                           {"manage_ipfs_ids_in_groups", json::array{0}}});
  ITEST_CHECK_STATUS(
      c.post("/add_group",
             json::object{{"name", "delegated"}, {"pkp_ids_permitted", pkps}, {"cid_hashes_permitted", cids}},
             trusted.auth()),
      200);
  // addPkp on 0 without manageActions on 0: PKPs yes, code no.
  const usage_keys pkp_only = create_usage_key(
      c, s.owner.auth(), json::object{{"can_create_groups", true}, {"add_pkp_to_groups", json::array{0}}});
  ITEST_CHECK_STATUS(c.post("/add_group", json::object{{"name", "p"}, {"pkp_ids_permitted", pkps}}, pkp_only.auth()),
                     200);
  ITEST_CHECK_STATUS(
      c.post("/add_group", json::object{{"name", "p"}, {"pkp_ids_permitted", pkps}, {"cid_hashes_permitted", cids}},
             pkp_only.auth()),
      403);
  CHECK(srv.stop().clean());
}

TEST_CASE("the former master key of a converted account authorizes nothing") {
  server_process srv({"--dev"});
  http_client c = srv.client();
  const owner_setup s = make_owner(c);
  const usage_keys runner =
      create_usage_key(c, s.owner.auth(), json::object{{"execute_in_groups", json::array{s.group}}});
  const hash256 admin_seed = crypto::keccak256(std::string_view("new admin of the converted account"));
  const Secret admin{bytes_view(admin_seed)};
  const address admin_addr = crypto::secp256k1::to_address(crypto::secp256k1::public_key_of(admin).value());
  const response cfg = c.get("/get_node_chain_config");
  ITEST_REQUIRE_STATUS(cfg, 200);
  const auto env = eip712::envelope::sign_v2(
                       eip712::envelope::kind::convert_account,
                       {u_of(cfg.body, "chain_id"), parse_address(s_of(cfg.body, "contract_address")).value()}, admin,
                       static_cast<uint64_t>(unix_now()), codec::hex::decode_fixed<32>(s.owner.api_key_hash).value())
                       .value();
  json::object body{{"typed_data", env.typed_data},
                    {"signature", env.signature},
                    {"new_admin_wallet_address", to_checksum_address(admin_addr)}};
  ITEST_REQUIRE_STATUS(c.post("/convert_to_chain_secured_account", body, s.owner.auth()), 200);

  const json::object run_body{{"action_ipfs_cid", s.cid}, {"pkp_id", s.pkp}, {"params", json::object{{"pkp", s.pkp}}}};
  // Reads, runs (the capability that matters most: signing with every PKP of the account),
  // billing and writes: all 401.
  for (const char* path :
       {"/account", "/list_groups", "/list_wallets", "/list_actions", "/list_api_keys", "/billing/balance"}) {
    INFO(path);
    const response r = c.get(path, s.owner.auth());
    ITEST_CHECK_STATUS(r, 401);
    CHECK(r.error_code() == "unauthenticated");
  }
  const response run = c.post("/run_action", run_body, s.owner.auth());
  ITEST_CHECK_STATUS(run, 401);
  CHECK(run.text.find("signature") == std::string::npos);
  for (const auto& [path, b] :
       {std::pair{"/add_group", json::object{{"name", "x"}}}, std::pair{"/upload_action", json::object{{"code", "1"}}},
        std::pair{"/billing/create_payment_intent", json::object{{"amount_cents", 500}}}}) {
    INFO(path);
    ITEST_CHECK_STATUS(c.post(path, b, s.owner.auth()), 401);
  }
  // The usage key the owner issued keeps working: the refusal is the master key's alone.
  ITEST_CHECK_STATUS(c.post("/run_action", run_body, runner.auth()), 200);
  CHECK(srv.stop().clean());
}

}  // namespace enact::itest
