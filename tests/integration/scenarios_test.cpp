// SPDX-License-Identifier: Apache-2.0
// One scenario per group of endpoints of docs/protocol.md §2, each against its own enact-server process and
// all through raw HTTP: accounts and keys, groups, wallets, actions, public utility, billing (dev
// provider, X-Wallet-Auth, no provider), and the OpenAPI document against every route exercised.
#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <thread>
#include <utility>

#include "enact/eip712/envelope.hpp"
#include "steps.hpp"

namespace enact::itest {
namespace {

/// Every (method, path under /core/v1) the scenarios below call; the OpenAPI case checks that the
/// document lists exactly these.
const std::set<std::pair<std::string, std::string>> kExercised = {
    {"post", "/new_account"},
    {"get", "/account"},
    {"post", "/add_usage_api_key"},
    {"get", "/list_api_keys"},
    {"post", "/update_usage_api_key"},
    {"post", "/update_usage_api_key_metadata"},
    {"post", "/remove_usage_api_key"},
    {"post", "/add_group"},
    {"get", "/list_groups"},
    {"post", "/update_group"},
    {"post", "/remove_group"},
    {"post", "/create_wallet"},
    {"get", "/list_wallets"},
    {"get", "/list_wallets_in_group"},
    {"post", "/add_pkp_to_group"},
    {"post", "/remove_pkp_from_group"},
    {"post", "/add_action"},
    {"post", "/add_action_to_group"},
    {"post", "/remove_action_from_group"},
    {"post", "/update_action_metadata"},
    {"post", "/delete_action"},
    {"get", "/list_actions"},
    {"post", "/upload_action"},
    {"get", "/get_node_chain_config"},
    {"get", "/get_api_payers"},
    {"get", "/get_admin_api_payer"},
    {"post", "/get_svc_action_ipfs_id"},
    {"get", "/billing/stripe_config"},
    {"get", "/billing/balance"},
    {"post", "/billing/create_payment_intent"},
    {"post", "/billing/confirm_payment"},
};

/// The usage key item of list_api_keys with `hash` (null when absent).
json::value find_key(http_client& c, const httplib::Headers& owner, const std::string& hash) {
  for (const auto& k : list_all(c, "/list_api_keys", owner))
    if (k.at("hash").as_string() == hash)
      return k;
  return nullptr;
}

std::vector<uint64_t> ids_of(const json::value& item, std::string_view field) {
  std::vector<uint64_t> out;
  for (const auto& v : item.as_object().at(field).as_array())
    out.push_back(v.to_number<uint64_t>());
  return out;
}

json::object group_body(uint64_t id, std::string name, json::array pkps, json::array cids) {
  return json::object{{"group_id", id},
                      {"name", std::move(name)},
                      {"description", "updated"},
                      {"pkp_ids_permitted", std::move(pkps)},
                      {"cid_hashes_permitted", std::move(cids)}};
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

}  // namespace

TEST_CASE("accounts and usage keys: create, read, list, update, remove") {
  server_process srv;
  auto c = srv.client();

  const response created =
      c.post("/new_account", json::object{{"name", "alice"}, {"description", "first"}, {"email", "a@example.com"}});
  ITEST_REQUIRE_STATUS(created, 200);
  const account_keys acct{s_of(created.body, "api_key"), s_of(created.body, "wallet_address"),
                          s_of(created.body, "api_key_hash")};
  // docs/protocol.md §1: 32 random bytes in standard base64; the hash is keccak256 of the string as issued;
  // the wallet address is the address of the key as a secp256k1 key.
  CHECK(acct.api_key.size() == 44);
  CHECK(key_secret(acct.api_key).size() == 32);
  CHECK(acct.api_key_hash == keccak_hex(acct.api_key));
  CHECK(acct.wallet_address == key_address(acct.api_key));

  for (const auto& creds : {api_key(acct.api_key), bearer(acct.api_key)}) {
    const response me = c.get("/account", creds);
    ITEST_REQUIRE_STATUS(me, 200);
    CHECK(s_of(me.body, "api_key_hash") == acct.api_key_hash);
    CHECK(s_of(me.body, "admin_wallet_address") == acct.wallet_address);
    CHECK(me.obj().at("managed").as_bool());
    CHECK(s_of(me.body, "name") == "alice");
    CHECK(s_of(me.body, "description") == "first");
    CHECK(s_of(me.obj().at("key"), "kind") == "account");
    CHECK(s_of(me.obj().at("key"), "hash") == acct.api_key_hash);
  }

  const response k1r = c.post("/add_usage_api_key",
                              json::object{{"name", "runner"},
                                           {"description", "runs things"},
                                           {"can_create_groups", true},
                                           {"manage_ipfs_ids_in_groups", json::array{1, 2}},
                                           {"execute_in_groups", json::array{0}}},
                              acct.auth());
  ITEST_REQUIRE_STATUS(k1r, 200);
  const usage_keys k1{s_of(k1r.body, "usage_api_key"), s_of(k1r.body, "hash"), s_of(k1r.body, "wallet_address")};
  CHECK(k1.value.size() == 44);
  CHECK(k1.hash == keccak_hex(k1.value));
  CHECK(k1.wallet_address == key_address(k1.value));
  const usage_keys k2 = create_usage_key(c, acct.auth(), {{"name", "other"}, {"can_create_pkps", true}});
  CHECK(k2.value != k1.value);

  {
    const response me = c.get("/account", k1.auth());
    ITEST_REQUIRE_STATUS(me, 200);
    CHECK(s_of(me.body, "api_key_hash") == acct.api_key_hash);
    CHECK(s_of(me.obj().at("key"), "kind") == "usage");
    CHECK(s_of(me.obj().at("key"), "hash") == k1.hash);
  }

  // Listing shows the hash, metadata and full permission set, never a key value.
  const response listed = c.get("/list_api_keys", acct.auth());
  ITEST_REQUIRE_STATUS(listed, 200);
  CHECK(u_of(listed.body, "total") == 2);
  CHECK(u_of(listed.body, "page_number") == 1);
  CHECK(u_of(listed.body, "page_size") == 20);
  for (const auto& secret : {k1.value, k2.value, acct.api_key})
    CHECK(listed.text.find(secret) == std::string::npos);
  const json::value item = find_key(c, acct.auth(), k1.hash);
  REQUIRE(item.is_object());
  for (const char* field : {"hash", "name", "description", "expiration", "created_at", "can_create_groups",
                            "can_delete_groups", "can_create_pkps", "manage_ipfs_ids_in_groups", "add_pkp_to_groups",
                            "remove_pkp_from_groups", "execute_in_groups"})
    CHECK_MESSAGE(item.as_object().contains(field), field);
  CHECK(s_of(item, "name") == "runner");
  CHECK(s_of(item, "description") == "runs things");
  CHECK(u_of(item, "expiration") == 0);
  CHECK(u_of(item, "created_at") >= static_cast<uint64_t>(unix_now() - 3600));
  CHECK(item.at("can_create_groups").as_bool());
  CHECK(!item.at("can_delete_groups").as_bool());
  CHECK(!item.at("can_create_pkps").as_bool());
  CHECK(ids_of(item, "manage_ipfs_ids_in_groups") == std::vector<uint64_t>{1, 2});
  CHECK(ids_of(item, "add_pkp_to_groups").empty());
  CHECK(ids_of(item, "execute_in_groups") == std::vector<uint64_t>{0});

  // Pagination of the key list.
  {
    const response p1 = c.get("/list_api_keys?page_size=1&page_number=2", acct.auth());
    ITEST_REQUIRE_STATUS(p1, 200);
    CHECK(p1.obj().at("items").as_array().size() == 1);
    CHECK(u_of(p1.body, "total") == 2);
    CHECK(u_of(p1.body, "page_number") == 2);
    CHECK(u_of(p1.body, "page_size") == 1);
  }

  // update_usage_api_key replaces every permission: the omitted ones reset.
  const response upd = c.post("/update_usage_api_key",
                              json::object{{"usage_api_key", k1.value},
                                           {"name", "runner2"},
                                           {"can_delete_groups", true},
                                           {"add_pkp_to_groups", json::array{3}}},
                              acct.auth());
  ITEST_REQUIRE_STATUS(upd, 200);
  CHECK(s_of(upd.body, "hash") == k1.hash);
  {
    const json::value after = find_key(c, acct.auth(), k1.hash);
    REQUIRE(after.is_object());
    CHECK(s_of(after, "name") == "runner2");
    CHECK(!after.at("can_create_groups").as_bool());
    CHECK(after.at("can_delete_groups").as_bool());
    CHECK(ids_of(after, "manage_ipfs_ids_in_groups").empty());
    CHECK(ids_of(after, "execute_in_groups").empty());
    CHECK(ids_of(after, "add_pkp_to_groups") == std::vector<uint64_t>{3});
  }
  // The key still authenticates, with its new permissions.
  ITEST_CHECK_STATUS(c.get("/account", k1.auth()), 200);
  {
    const response refused = c.post("/add_group", json::object{{"name", "g"}}, k1.auth());
    check_error(srv, refused, 403, "forbidden", "/core/v1/add_group");
  }

  // update_usage_api_key_metadata changes only the name and description.
  const response meta =
      c.post("/update_usage_api_key_metadata",
             json::object{{"usage_api_key", k1.value}, {"name", "renamed"}, {"description", "new words"}}, acct.auth());
  ITEST_REQUIRE_STATUS(meta, 200);
  CHECK(s_of(meta.body, "hash") == k1.hash);
  {
    const json::value after = find_key(c, acct.auth(), k1.hash);
    REQUIRE(after.is_object());
    CHECK(s_of(after, "name") == "renamed");
    CHECK(s_of(after, "description") == "new words");
    CHECK(after.at("can_delete_groups").as_bool());
    CHECK(ids_of(after, "add_pkp_to_groups") == std::vector<uint64_t>{3});
  }

  // remove_usage_api_key: the removed key fails on its very next request; the other key works.
  const response rm = c.post("/remove_usage_api_key", json::object{{"usage_api_key", k1.value}}, acct.auth());
  ITEST_REQUIRE_STATUS(rm, 200);
  CHECK(s_of(rm.body, "hash") == k1.hash);
  check_error(srv, c.get("/account", k1.auth()), 401, "unauthenticated", "/core/v1/account");
  check_error(srv, c.get("/list_groups", bearer(k1.value)), 401, "unauthenticated", "/core/v1/list_groups");
  ITEST_CHECK_STATUS(c.get("/account", k2.auth()), 200);
  ITEST_CHECK_STATUS(c.get("/account", acct.auth()), 200);
  {
    const response left = c.get("/list_api_keys", acct.auth());
    ITEST_REQUIRE_STATUS(left, 200);
    CHECK(u_of(left.body, "total") == 1);
    CHECK(find_key(c, acct.auth(), k2.hash).is_object());
    CHECK(find_key(c, acct.auth(), k1.hash).is_null());
  }
  // Removing it again: it is gone.
  check_error(srv, c.post("/remove_usage_api_key", json::object{{"usage_api_key", k1.value}}, acct.auth()), 404,
              "not_found", "/core/v1/remove_usage_api_key");

  // A key of another account is not this account's to manage.
  const account_keys bob = create_account(c, "bob");
  check_error(srv, c.post("/remove_usage_api_key", json::object{{"usage_api_key", k2.value}}, bob.auth()), 404,
              "not_found", "/core/v1/remove_usage_api_key");
  ITEST_CHECK_STATUS(c.get("/account", k2.auth()), 200);

  CHECK(srv.stop().clean());
  check_no_secret_logged(srv, {acct.api_key, k1.value, k2.value, bob.api_key});
}

TEST_CASE("groups: add, list with pagination, update, remove (group_id as a decimal string)") {
  server_process srv;
  auto c = srv.client();
  const account_keys acct = create_account(c);

  std::vector<uint64_t> ids;
  for (int i = 1; i <= 5; ++i) {
    json::object body{{"name", "g" + std::to_string(i)}};
    if (i % 2 == 1)
      body["description"] = "group " + std::to_string(i);
    const response r = c.post("/add_group", body, acct.auth());
    ITEST_REQUIRE_STATUS(r, 200);
    CHECK(s_of(r.body, "name") == "g" + std::to_string(i));
    CHECK(s_of(r.body, "description") == (i % 2 == 1 ? "group " + std::to_string(i) : ""));
    CHECK(r.obj().at("pkp_ids_permitted").as_array().empty());
    CHECK(r.obj().at("cid_hashes_permitted").as_array().empty());
    ids.push_back(u_of(r.body, "group_id"));
  }
  CHECK(std::set<uint64_t>(ids.begin(), ids.end()).size() == 5);
  CHECK(std::find(ids.begin(), ids.end(), 0) == ids.end());  // 0 is the wildcard

  // A group created with both sets.
  const response w = c.post("/create_wallet", json::object{{"name", "w"}}, acct.auth());
  ITEST_REQUIRE_STATUS(w, 200);
  const std::string pkp = s_of(w.body, "pkp_id");
  const std::string h = hashed_cid_hex(cid_of_code("Enact.setResponse(1)"));
  const response full = c.post("/add_group",
                               json::object{{"name", "full"},
                                            {"pkp_ids_permitted", json::array{json::string(lower(pkp))}},
                                            {"cid_hashes_permitted", json::array{json::string(h)}}},
                               acct.auth());
  ITEST_REQUIRE_STATUS(full, 200);
  CHECK(string_set(full.body, "pkp_ids_permitted") == std::set<std::string>{pkp});  // checksummed
  CHECK(string_set(full.body, "cid_hashes_permitted") == std::set<std::string>{h});
  const uint64_t full_id = u_of(full.body, "group_id");

  // Pagination: 6 groups in pages of 4.
  {
    const response p1 = c.get("/list_groups?page_size=4", acct.auth());
    ITEST_REQUIRE_STATUS(p1, 200);
    CHECK(u_of(p1.body, "total") == 6);
    CHECK(u_of(p1.body, "page_size") == 4);
    CHECK(u_of(p1.body, "page_number") == 1);
    CHECK(p1.obj().at("items").as_array().size() == 4);
    const response p2 = c.get("/list_groups?page_size=4&page_number=2", acct.auth());
    ITEST_REQUIRE_STATUS(p2, 200);
    CHECK(u_of(p2.body, "total") == 6);
    CHECK(p2.obj().at("items").as_array().size() == 2);
    const response p3 = c.get("/list_groups?page_size=4&page_number=3", acct.auth());
    ITEST_REQUIRE_STATUS(p3, 200);
    CHECK(u_of(p3.body, "total") == 6);
    CHECK(p3.obj().at("items").as_array().empty());
    std::set<uint64_t> seen;
    for (const auto* page : {&p1, &p2})
      for (const auto& g : page->obj().at("items").as_array())
        seen.insert(u_of(g, "group_id"));
    CHECK(seen.size() == 6);
    const response dflt = c.get("/list_groups", acct.auth());
    ITEST_REQUIRE_STATUS(dflt, 200);
    CHECK(u_of(dflt.body, "page_size") == 20);
    CHECK(dflt.obj().at("items").as_array().size() == 6);
  }

  // update_group replaces name, description and both sets.
  const response upd =
      c.post("/update_group", group_body(full_id, "renamed", json::array{}, json::array{json::string(h)}), acct.auth());
  ITEST_REQUIRE_STATUS(upd, 200);
  CHECK(u_of(upd.body, "group_id") == full_id);
  CHECK(s_of(upd.body, "name") == "renamed");
  CHECK(s_of(upd.body, "description") == "updated");
  CHECK(upd.obj().at("pkp_ids_permitted").as_array().empty());
  {
    const json::value g = find_group(c, acct.auth(), full_id);
    REQUIRE(g.is_object());
    CHECK(s_of(g, "name") == "renamed");
    CHECK(g.at("pkp_ids_permitted").as_array().empty());
    CHECK(string_set(g, "cid_hashes_permitted") == std::set<std::string>{h});
  }
  // group_id as a decimal string is accepted by update_group too.
  {
    json::object body = group_body(full_id, "again", json::array{json::string(pkp)}, json::array{});
    body["group_id"] = std::to_string(full_id);
    const response r = c.post("/update_group", body, acct.auth());
    ITEST_REQUIRE_STATUS(r, 200);
    CHECK(string_set(r.body, "pkp_ids_permitted") == std::set<std::string>{pkp});
  }

  // remove_group with group_id as a decimal string (the specification's form).
  const response rm = c.post("/remove_group", json::object{{"group_id", std::to_string(ids[1])}}, acct.auth());
  ITEST_REQUIRE_STATUS(rm, 200);
  CHECK(u_of(rm.body, "group_id") == ids[1]);
  const response rm2 = c.post("/remove_group", json::object{{"group_id", ids[2]}}, acct.auth());
  ITEST_REQUIRE_STATUS(rm2, 200);
  CHECK(u_of(rm2.body, "group_id") == ids[2]);
  {
    const response l = c.get("/list_groups", acct.auth());
    ITEST_REQUIRE_STATUS(l, 200);
    CHECK(u_of(l.body, "total") == 4);
    CHECK(find_group(c, acct.auth(), ids[1]).is_null());
    CHECK(find_group(c, acct.auth(), ids[2]).is_null());
    CHECK(find_group(c, acct.auth(), ids[0]).is_object());
  }
  check_error(srv, c.post("/remove_group", json::object{{"group_id", ids[1]}}, acct.auth()), 404, "not_found",
              "/core/v1/remove_group");

  // Another account sees none of these groups.
  const account_keys other = create_account(c, "other");
  {
    const response l = c.get("/list_groups", other.auth());
    ITEST_REQUIRE_STATUS(l, 200);
    CHECK(u_of(l.body, "total") == 0);
    check_error(srv, c.post("/remove_group", json::object{{"group_id", ids[0]}}, other.auth()), 404, "not_found",
                "/core/v1/remove_group");
    CHECK(find_group(c, acct.auth(), ids[0]).is_object());
  }

  CHECK(srv.stop().clean());
}

TEST_CASE("wallets: derivation paths, listing, PKPs in groups") {
  server_process srv;
  auto c = srv.client();
  const account_keys acct = create_account(c);

  std::vector<json::value> wallets;
  for (uint64_t i = 0; i < 3; ++i) {
    const response r =
        c.post("/create_wallet", json::object{{"name", "w" + std::to_string(i)}, {"description", "d"}}, acct.auth());
    ITEST_REQUIRE_STATUS(r, 200);
    // docs/protocol.md §1: the i-th API-mode wallet sits at crypto::keccak256(apiKeyHash ‖ i).
    CHECK(s_of(r.body, "derivation_path") == api_path_hex(acct.api_key_hash, i));
    CHECK(s_of(r.body, "pkp_id") == s_of(r.body, "wallet_address"));
    const std::string addr = s_of(r.body, "wallet_address");
    CHECK(addr == to_checksum_address(parse_address(addr).value()));
    CHECK(s_of(r.body, "name") == "w" + std::to_string(i));
    CHECK(s_of(r.body, "description") == "d");
    wallets.push_back(r.body);
  }
  CHECK(s_of(wallets[0], "pkp_id") != s_of(wallets[1], "pkp_id"));
  CHECK(s_of(wallets[1], "pkp_id") != s_of(wallets[2], "pkp_id"));

  // Another account's first wallet sits at its own path (a different key hash).
  const account_keys other = create_account(c, "other");
  {
    const response r = c.post("/create_wallet", json::object{{"name", "x"}}, other.auth());
    ITEST_REQUIRE_STATUS(r, 200);
    CHECK(s_of(r.body, "derivation_path") == api_path_hex(other.api_key_hash, 0));
    CHECK(s_of(r.body, "pkp_id") != s_of(wallets[0], "pkp_id"));
  }

  {
    const auto listed = list_all(c, "/list_wallets", acct.auth());
    REQUIRE(listed.size() == 3);
    for (const auto& w : wallets)
      CHECK(std::find(listed.begin(), listed.end(), w.as_object()) != listed.end());
    const response p = c.get("/list_wallets?page_size=2&page_number=2", acct.auth());
    ITEST_REQUIRE_STATUS(p, 200);
    CHECK(u_of(p.body, "total") == 3);
    CHECK(p.obj().at("items").as_array().size() == 1);
  }

  const response g = c.post("/add_group", json::object{{"name", "signers"}}, acct.auth());
  ITEST_REQUIRE_STATUS(g, 200);
  const uint64_t gid = u_of(g.body, "group_id");
  const std::string p0 = s_of(wallets[0], "pkp_id"), p1 = s_of(wallets[1], "pkp_id");

  const response a0 = c.post("/add_pkp_to_group", json::object{{"group_id", gid}, {"pkp_id", p0}}, acct.auth());
  ITEST_REQUIRE_STATUS(a0, 200);
  CHECK(string_set(a0.body, "pkp_ids_permitted") == std::set<std::string>{p0});
  // Addresses are accepted in any case and returned checksummed.
  const response a1 =
      c.post("/add_pkp_to_group", json::object{{"group_id", std::to_string(gid)}, {"pkp_id", lower(p1)}}, acct.auth());
  ITEST_REQUIRE_STATUS(a1, 200);
  CHECK(string_set(a1.body, "pkp_ids_permitted") == std::set<std::string>{p0, p1});

  {
    const response in = c.get("/list_wallets_in_group?group_id=" + std::to_string(gid), acct.auth());
    ITEST_REQUIRE_STATUS(in, 200);
    CHECK(u_of(in.body, "total") == 2);
    std::set<std::string> got;
    for (const auto& w : in.obj().at("items").as_array()) {
      got.insert(s_of(w, "pkp_id"));
      CHECK(w.as_object().contains("derivation_path"));
    }
    CHECK(got == std::set<std::string>{p0, p1});
  }

  const response r0 = c.post("/remove_pkp_from_group", json::object{{"group_id", gid}, {"pkp_id", p0}}, acct.auth());
  ITEST_REQUIRE_STATUS(r0, 200);
  CHECK(string_set(r0.body, "pkp_ids_permitted") == std::set<std::string>{p1});
  {
    const response in = c.get("/list_wallets_in_group?group_id=" + std::to_string(gid), acct.auth());
    ITEST_REQUIRE_STATUS(in, 200);
    CHECK(u_of(in.body, "total") == 1);
    CHECK(s_of(in.obj().at("items").as_array().at(0), "pkp_id") == p1);
  }
  // The wallet itself stays in the registry.
  CHECK(list_all(c, "/list_wallets", acct.auth()).size() == 3);

  // Unknown PKPs and other accounts' PKPs cannot be added.
  check_error(
      srv, c.post("/add_pkp_to_group", json::object{{"group_id", gid}, {"pkp_id", random_address_hex()}}, acct.auth()),
      404, "not_found", "/core/v1/add_pkp_to_group");
  {
    const response r = c.post("/create_wallet", json::object{{"name", "y"}}, other.auth());
    ITEST_REQUIRE_STATUS(r, 200);
    check_error(
        srv,
        c.post("/add_pkp_to_group", json::object{{"group_id", gid}, {"pkp_id", s_of(r.body, "pkp_id")}}, acct.auth()),
        404, "not_found", "/core/v1/add_pkp_to_group");
  }
  CHECK(string_set(find_group(c, acct.auth(), gid), "pkp_ids_permitted") == std::set<std::string>{p1});

  CHECK(srv.stop().clean());
}

TEST_CASE("actions: register, group membership, metadata, delete, upload") {
  server_process srv;
  auto c = srv.client();
  const account_keys acct = create_account(c);

  const std::string code1 = "Enact.setResponse({hello: params.name});";
  const std::string code2 = "console.log('two');";
  const std::string cid1 = cid_of_code(code1);
  // CIDv1 is accepted on input and hashed as written.
  const std::string cid2 = ipfs::cid_v1_of(as_bytes(std::string_view(code2))).to_string();
  const std::string h1 = hashed_cid_hex(cid1), h2 = hashed_cid_hex(cid2);
  CHECK(cid1.starts_with("Qm"));
  CHECK(h1 == keccak_hex(cid1));
  // An action as the answers of add_action and update_action_metadata give it.
  const auto check_action = [](const auto& a, const std::string& cid, const std::string& hashed, std::string_view name,
                               std::string_view description) {
    CHECK(s_of(a, "action_ipfs_cid") == cid);
    CHECK(s_of(a, "hashed_cid") == hashed);
    CHECK(s_of(a, "name") == name);
    CHECK(s_of(a, "description") == description);
  };

  const response a1 =
      c.post("/add_action", json::object{{"action_ipfs_cid", cid1}, {"name", "hello"}, {"description", "greets"}},
             acct.auth());
  ITEST_REQUIRE_STATUS(a1, 200);
  check_action(a1.body, cid1, h1, "hello", "greets");
  const response a2 = c.post("/add_action", json::object{{"action_ipfs_cid", cid2}, {"name", "two"}}, acct.auth());
  ITEST_REQUIRE_STATUS(a2, 200);
  CHECK(s_of(a2.body, "hashed_cid") == h2);
  CHECK(s_of(a2.body, "description") == "");

  const response g = c.post("/add_group", json::object{{"name", "g"}}, acct.auth());
  ITEST_REQUIRE_STATUS(g, 200);
  const uint64_t gid = u_of(g.body, "group_id");
  const response g2 = c.post("/add_group", json::object{{"name", "g2"}}, acct.auth());
  ITEST_REQUIRE_STATUS(g2, 200);
  const uint64_t gid2 = u_of(g2.body, "group_id");

  const response in1 =
      c.post("/add_action_to_group", json::object{{"group_id", gid}, {"action_ipfs_cid", cid1}}, acct.auth());
  ITEST_REQUIRE_STATUS(in1, 200);
  CHECK(string_set(in1.body, "cid_hashes_permitted") == std::set<std::string>{h1});
  const response in2 =
      c.post("/add_action_to_group", json::object{{"group_id", gid}, {"action_ipfs_cid", cid2}}, acct.auth());
  ITEST_REQUIRE_STATUS(in2, 200);
  CHECK(string_set(in2.body, "cid_hashes_permitted") == std::set<std::string>{h1, h2});
  ITEST_REQUIRE_STATUS(
      c.post("/add_action_to_group", json::object{{"group_id", gid2}, {"action_ipfs_cid", cid1}}, acct.auth()), 200);

  {
    const auto all = list_all(c, "/list_actions", acct.auth());
    CHECK(all.size() == 2);
    const auto in_g = list_all(c, "/list_actions?group_id=" + std::to_string(gid), acct.auth());
    REQUIRE(in_g.size() == 2);
    std::set<std::string> hs;
    for (const auto& a : in_g)
      hs.insert(std::string(a.at("hashed_cid").as_string()));
    CHECK(hs == std::set<std::string>{h1, h2});
    const auto in_g2 = list_all(c, "/list_actions?group_id=" + std::to_string(gid2), acct.auth());
    REQUIRE(in_g2.size() == 1);
    CHECK(s_of(in_g2[0], "hashed_cid") == h1);
    CHECK(s_of(in_g2[0], "action_ipfs_cid") == cid1);
    CHECK(s_of(in_g2[0], "name") == "hello");
  }

  const response out =
      c.post("/remove_action_from_group", json::object{{"group_id", gid}, {"hashed_cid", h2}}, acct.auth());
  ITEST_REQUIRE_STATUS(out, 200);
  CHECK(string_set(out.body, "cid_hashes_permitted") == std::set<std::string>{h1});
  CHECK(list_all(c, "/list_actions", acct.auth()).size() == 2);  // still registered

  const response meta =
      c.post("/update_action_metadata", json::object{{"hashed_cid", h1}, {"name", "renamed"}, {"description", "new"}},
             acct.auth());
  ITEST_REQUIRE_STATUS(meta, 200);
  check_action(meta.body, cid1, h1, "renamed", "new");
  {
    bool found = false;
    for (const auto& a : list_all(c, "/list_actions", acct.auth()))
      if (a.at("hashed_cid").as_string() == h1) {
        found = true;
        CHECK(a.at("name").as_string() == "renamed");
      }
    CHECK(found);
  }

  // delete_action removes the metadata and the hash from every group.
  const response del = c.post("/delete_action", json::object{{"hashed_cid", h1}}, acct.auth());
  ITEST_REQUIRE_STATUS(del, 200);
  CHECK(s_of(del.body, "hashed_cid") == h1);
  {
    const auto all = list_all(c, "/list_actions", acct.auth());
    REQUIRE(all.size() == 1);
    CHECK(s_of(all[0], "hashed_cid") == h2);
    CHECK(string_set(find_group(c, acct.auth(), gid), "cid_hashes_permitted").empty());
    CHECK(string_set(find_group(c, acct.auth(), gid2), "cid_hashes_permitted").empty());
    CHECK(list_all(c, "/list_actions?group_id=" + std::to_string(gid2), acct.auth()).empty());
  }
  check_error(srv, c.post("/delete_action", json::object{{"hashed_cid", h1}}, acct.auth()), 404, "not_found",
              "/core/v1/delete_action");

  // upload_action stores the code and returns the CID the SDK computes for it.
  for (const std::string& code : {code1, std::string("// big\n") + std::string(200 * 1024, 'x')}) {
    const response up = c.post("/upload_action", json::object{{"code", code}}, acct.auth());
    ITEST_REQUIRE_STATUS(up, 200);
    CHECK(s_of(up.body, "action_ipfs_cid") == cid_of_code(code));
    CHECK(s_of(up.body, "hashed_cid") == hashed_cid_hex(cid_of_code(code)));
  }
  // Uploading is not registering.
  CHECK(list_all(c, "/list_actions", acct.auth()).size() == 1);

  CHECK(srv.stop().clean());
}

TEST_CASE("public utility endpoints answer without credentials") {
  server_process srv({"--chain-id", "4242", "--chain-name", "itest-chain"});
  auto c = srv.client();

  const response chain = c.get("/get_node_chain_config");
  ITEST_REQUIRE_STATUS(chain, 200);
  CHECK(u_of(chain.body, "chain_id") == 4242);
  CHECK(s_of(chain.body, "chain_name") == "itest-chain");
  CHECK(parse_address(s_of(chain.body, "contract_address")).has_value());
  CHECK(!chain.obj().contains("rpc_url"));

  const response payers = c.get("/get_api_payers");
  ITEST_REQUIRE_STATUS(payers, 200);
  const auto& list = payers.obj().at("api_payers").as_array();
  REQUIRE(!list.empty());
  for (const auto& p : list) {
    const std::string a(p.as_string());
    CHECK(a == to_checksum_address(parse_address(a).value()));
  }
  const response admin = c.get("/get_admin_api_payer");
  ITEST_REQUIRE_STATUS(admin, 200);
  const std::string admin_payer = s_of(admin.body, "admin_api_payer");
  CHECK(std::find(list.begin(), list.end(), json::value(admin_payer)) != list.end());

  for (const std::string code : {"Enact.setResponse(42);", "", "ünïcode ✓"}) {
    const response cid = c.post("/get_svc_action_ipfs_id", json::string(code));
    ITEST_REQUIRE_STATUS(cid, 200);
    CHECK(s_of(cid.body, "action_ipfs_cid") == cid_of_code(code));
  }
  // The body is a JSON string, not an object.
  check_error(srv, c.post("/get_svc_action_ipfs_id", json::object{{"code", "x"}}), 400, "invalid_request",
              "/core/v1/get_svc_action_ipfs_id");

  // Without --dev and without Stripe there is no payment provider.
  check_error(srv, c.get("/billing/stripe_config"), 503, "unavailable", "/core/v1/billing/stripe_config");

  CHECK(srv.stop().clean());
}

TEST_CASE("billing with the dev provider: intents, confirmation, X-Wallet-Auth") {
  server_process srv({"--dev"});
  auto c = srv.client();
  const account_keys acct = create_account(c, "payer");
  const account_keys other = create_account(c, "other");

  const response cfg = c.get("/billing/stripe_config");
  ITEST_REQUIRE_STATUS(cfg, 200);
  CHECK(s_of(cfg.body, "mode") == "dev");
  CHECK(cfg.obj().at("publishable_key").is_string());

  {
    const response b = c.get("/billing/balance", acct.auth());
    ITEST_REQUIRE_STATUS(b, 200);
    CHECK(u_of(b.body, "balance_credits") == 0);
    CHECK(s_of(b.body, "currency") == "usd_cents");
  }

  check_error(srv, c.post("/billing/create_payment_intent", json::object{{"amount_cents", 499}}, acct.auth()), 400,
              "invalid_request", "/core/v1/billing/create_payment_intent");
  const response intent = c.post("/billing/create_payment_intent", json::object{{"amount_cents", 500}}, acct.auth());
  ITEST_REQUIRE_STATUS(intent, 200);
  CHECK(s_of(intent.body, "mode") == "dev");
  CHECK(u_of(intent.body, "amount_cents") == 500);
  CHECK(!s_of(intent.body, "client_secret").empty());
  const std::string id = s_of(intent.body, "payment_intent_id");
  CHECK(!id.empty());
  CHECK(balance_of(c, acct.auth()) == 0);  // nothing credited before confirmation

  // Another account cannot confirm this intent.
  check_error(srv, c.post("/billing/confirm_payment", json::object{{"payment_intent_id", id}}, other.auth()), 404,
              "not_found", "/core/v1/billing/confirm_payment");
  CHECK(balance_of(c, other.auth()) == 0);

  const response done = c.post("/billing/confirm_payment", json::object{{"payment_intent_id", id}}, acct.auth());
  ITEST_REQUIRE_STATUS(done, 200);
  CHECK(u_of(done.body, "balance_credits") == 500);
  CHECK(balance_of(c, acct.auth()) == 500);
  check_error(srv, c.post("/billing/confirm_payment", json::object{{"payment_intent_id", id}}, acct.auth()), 409,
              "conflict", "/core/v1/billing/confirm_payment");
  CHECK(balance_of(c, acct.auth()) == 500);
  check_error(srv, c.post("/billing/confirm_payment", json::object{{"payment_intent_id", "pi_unknown"}}, acct.auth()),
              404, "not_found", "/core/v1/billing/confirm_payment");

  // A usage key's balance is its account's.
  const usage_keys uk = create_usage_key(c, acct.auth());
  CHECK(balance_of(c, uk.auth()) == 500);

  // X-Wallet-Auth: the account's admin wallet is the address of the account key itself, signing
  // for this server's chain.
  const uint64_t chain_id = env_of(srv).chain_id;
  const Secret admin_key = key_secret(acct.api_key);
  // Signed per request (steps.hpp wallet_auth): a version 2 BillingAuth names its request.
  const chain_env ce = env_of(srv);
  const auto wallet_auth = [&](uint64_t chain, int64_t issued_at, const Secret& key) {
    chain_env e = ce;
    e.chain_id = chain;
    return itest::wallet_auth(e, key, static_cast<uint64_t>(issued_at));
  };
  {
    const response b = c.get("/billing/balance", wallet_auth(chain_id, unix_now(), admin_key));
    ITEST_REQUIRE_STATUS(b, 200);
    CHECK(u_of(b.body, "balance_credits") == 500);
    // The wallet may pay too: create and confirm an intent with the header alone.
    const response i2 = c.post("/billing/create_payment_intent", json::object{{"amount_cents", 700}},
                               wallet_auth(chain_id, unix_now(), admin_key));
    ITEST_REQUIRE_STATUS(i2, 200);
    const response d2 =
        c.post("/billing/confirm_payment", json::object{{"payment_intent_id", s_of(i2.body, "payment_intent_id")}},
               wallet_auth(chain_id, unix_now(), admin_key));
    ITEST_REQUIRE_STATUS(d2, 200);
    CHECK(u_of(d2.body, "balance_credits") == 1200);
    CHECK(balance_of(c, acct.auth()) == 1200);
    // The header authenticates billing only.
    check_error(srv, c.get("/list_groups", wallet_auth(chain_id, unix_now(), admin_key)), 401, "unauthenticated",
                "/core/v1/list_groups");
  }
  {
    // A bad signature: the envelope names the admin address but another key signed it.
    const auto balance_request = eip712::envelope::bind_request("GET", "/core/v1/billing/balance", "");
    auto env = eip712::envelope::sign_billing({ce.chain_id, ce.registry}, admin_key, static_cast<uint64_t>(unix_now()),
                                              balance_request)
                   .value();
    const auto forged = eip712::envelope::sign_billing({ce.chain_id, ce.registry}, key_secret(other.api_key),
                                                       static_cast<uint64_t>(unix_now()), balance_request)
                            .value();
    env.signature = forged.signature;
    check_error(srv, c.get("/billing/balance", {{"X-Wallet-Auth", eip712::envelope::encode_wallet_auth(env)}}), 401,
                "signature_invalid", "/core/v1/billing/balance");
    check_error(srv, c.get("/billing/balance", wallet_auth(chain_id, unix_now() - 1000, admin_key)), 401,
                "signature_expired", "/core/v1/billing/balance");
    check_error(srv, c.get("/billing/balance", wallet_auth(chain_id, unix_now() + 1000, admin_key)), 401,
                "signature_expired", "/core/v1/billing/balance");
    check_error(srv, c.get("/billing/balance", wallet_auth(1, unix_now(), admin_key)), 400, "chain_id_mismatch",
                "/core/v1/billing/balance");
    // A valid envelope of a wallet that administers no account.
    const Secret stranger(crypto::keccak256(std::string_view("a stranger's key")));
    check_error(srv, c.get("/billing/balance", wallet_auth(chain_id, unix_now(), stranger)), 401, "unauthenticated",
                "/core/v1/billing/balance");
  }

  CHECK(srv.stop().clean());
  check_no_secret_logged(srv, {acct.api_key, other.api_key, uk.value});
}

TEST_CASE("billing without a provider: writes are 503, the balance still reads") {
  server_process srv;
  auto c = srv.client();
  const account_keys acct = create_account(c);
  CHECK(balance_of(c, acct.auth()) == 0);
  check_error(srv, c.post("/billing/create_payment_intent", json::object{{"amount_cents", 500}}, acct.auth()), 503,
              "unavailable", "/core/v1/billing/create_payment_intent");
  check_error(srv, c.post("/billing/confirm_payment", json::object{{"payment_intent_id", "pi_x"}}, acct.auth()), 503,
              "unavailable", "/core/v1/billing/confirm_payment");
  check_error(srv, c.get("/billing/stripe_config"), 503, "unavailable", "/core/v1/billing/stripe_config");
  CHECK(srv.stop().clean());
}

TEST_CASE("OpenAPI: a 3.1 document listing every route the server answers") {
  server_process srv({"--dev"});
  auto c = srv.client();
  const response doc = c.get("/openapi.json");
  ITEST_REQUIRE_STATUS(doc, 200);
  CHECK(doc.header("Content-Type").starts_with("application/json"));
  CHECK(!doc.header("X-Request-Id").empty());
  REQUIRE(doc.body.is_object());
  CHECK(s_of(doc.body, "openapi").starts_with("3.1"));
  const auto& paths = doc.obj().at("paths").as_object();

  std::set<std::pair<std::string, std::string>> documented;
  for (const auto& p : paths)
    for (const auto& m : p.value().as_object())
      documented.emplace(std::string(m.key()), std::string(p.key()));
  for (const auto& op : kExercised)
    CHECK_MESSAGE(documented.count(op) == 1, op.first << " " << op.second << " is not documented");
  // Routes newer than these scenarios (run_action, …) are reported, not failed: they are
  // probed below like every documented route.
  for (const auto& op : documented)
    if (kExercised.count(op) == 0)
      MESSAGE(op.first << " " << op.second << " is documented but not exercised by these scenarios");

  // Every documented operation is answered by a route (never "no such endpoint"), and each has
  // an operationId and a 200 response.
  for (const auto& [method, path] : documented) {
    INFO(method << " " << path);
    const auto& op = paths.at(path).as_object().at(method).as_object();
    CHECK(op.contains("operationId"));
    CHECK(op.at("responses").as_object().contains("200"));
    const response r = method == "get" ? c.get(path) : c.post_raw(path, "{}");
    CHECK(r.status != 0);
    CHECK(r.error_message().find("no such endpoint") == std::string::npos);
    CHECK(!r.header("X-Request-Id").empty());
  }
  // And an undocumented path is not answered.
  check_error(srv, c.get("/not_a_route"), 404, "not_found", "/core/v1/not_a_route");

  // The Swagger UI page is served beside it.
  const response ui = c.get("/swagger-ui");
  CHECK(ui.status == 200);
  CHECK(ui.header("Content-Type").starts_with("text/html"));

  CHECK(srv.stop().clean());
}

}  // namespace enact::itest
