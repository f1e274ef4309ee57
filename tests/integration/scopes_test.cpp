// SPDX-License-Identifier: Apache-2.0
// The scope matrix (core-api spec "Scopes", "Authentication" §3–4; docs/protocol.md §2 auth column): every
// operation that needs a scope is tried with a usage key that lacks exactly that scope (403
// forbidden naming the scope, state unchanged as a read shows), with one holding it on group A
// only (allowed on A, refused on B) and with the wildcard 0 (allowed everywhere). Owner-only
// operations are refused to usage keys; the account key may do everything.
#include <doctest/doctest.h>

#include <functional>
#include <set>

#include "steps.hpp"

namespace enact::itest {
namespace {

/// Fixed resources of the account the matrix runs on: two PKPs and two registered actions.
struct fixture {
  server_process srv;
  http_client c;
  account_keys owner;
  std::string p1, p2;      // PKP ids
  std::string cid1, cid2;  // action CIDs
  std::string h1, h2;      // their hashes

  fixture() : c(srv.client()) {
    owner = create_account(c, "matrix");
    for (auto* p : {&p1, &p2}) {
      const response w = c.post("/create_wallet", json::object{{"name", "w"}}, owner.auth());
      REQUIRE(w.status == 200);
      *p = s_of(w.body, "pkp_id");
    }
    cid1 = cid_of_code("Enact.setResponse('one');");
    cid2 = cid_of_code("Enact.setResponse('two');");
    h1 = hashed_cid_hex(cid1);
    h2 = hashed_cid_hex(cid2);
    for (const auto* cid : {&cid1, &cid2})
      ITEST_REQUIRE_STATUS(c.post("/add_action", json::object{{"action_ipfs_cid", *cid}, {"name", "a"}}, owner.auth()),
                           200);
  }

  /// A fresh group holding PKP p1 and action h1.
  uint64_t new_group(const std::string& name) {
    const response g = c.post("/add_group",
                              json::object{{"name", name},
                                           {"pkp_ids_permitted", json::array{json::string(p1)}},
                                           {"cid_hashes_permitted", json::array{json::string(h1)}}},
                              owner.auth());
    ITEST_REQUIRE_STATUS(g, 200);
    return u_of(g.body, "group_id");
  }

  json::value group(uint64_t id) { return find_group(c, owner.auth(), id); }
  size_t group_count() { return list_all(c, "/list_groups", owner.auth()).size(); }
  size_t wallet_count() { return list_all(c, "/list_wallets", owner.auth()).size(); }
};

/// The permission fields of a usage key holding every scope on every group.
json::object all_scopes() {
  return json::object{{"can_create_groups", true},
                      {"can_delete_groups", true},
                      {"can_create_pkps", true},
                      {"manage_ipfs_ids_in_groups", json::array{0}},
                      {"add_pkp_to_groups", json::array{0}},
                      {"remove_pkp_from_groups", json::array{0}},
                      {"execute_in_groups", json::array{0}}};
}

/// The field of the usage-key record that grants a scope.
const char* field_of(std::string_view scope) {
  if (scope == "group:create")
    return "can_create_groups";
  if (scope == "group:delete")
    return "can_delete_groups";
  if (scope == "pkp:create")
    return "can_create_pkps";
  if (scope == "group:manageActions")
    return "manage_ipfs_ids_in_groups";
  if (scope == "group:addPkp")
    return "add_pkp_to_groups";
  if (scope == "group:removePkp")
    return "remove_pkp_from_groups";
  return "execute_in_groups";
}

/// all_scopes() without `scope` (false / empty list).
json::object all_but(std::string_view scope) {
  json::object o = all_scopes();
  const char* f = field_of(scope);
  if (o.at(f).is_bool())
    o[f] = false;
  else
    o[f] = json::array{};
  return o;
}

/// One per-group operation of the matrix.
struct group_op {
  const char* name;
  const char* scope;  // the scope under test
  const char* route;
  /// Extra scopes the operation needs besides `scope` (granted on every group).
  std::vector<const char*> also;
  /// The request body for group `id`.
  std::function<json::object(fixture&, uint64_t)> body;
  /// True when group `id` shows the operation's effect.
  std::function<bool(fixture&, const json::value&)> applied;
};

std::vector<group_op> group_ops() {
  const auto pkps = [](const json::value& g) {
    return string_set(g, "pkp_ids_permitted");
  };
  const auto cids = [](const json::value& g) {
    return string_set(g, "cid_hashes_permitted");
  };
  const auto update = [](fixture& f, uint64_t id, json::array p, std::string name) {
    return json::object{{"group_id", id},
                        {"name", std::move(name)},
                        {"description", ""},
                        {"pkp_ids_permitted", std::move(p)},
                        {"cid_hashes_permitted", json::array{json::string(f.h1)}}};
  };
  return {
      {"add_action_to_group",
       "group:manageActions",
       "/add_action_to_group",
       {},
       [](fixture& f, uint64_t id) {
         return json::object{{"group_id", id}, {"action_ipfs_cid", f.cid2}};
       },
       [=](fixture& f, const json::value& g) {
         return cids(g).count(f.h2) == 1;
       }},
      {"remove_action_from_group",
       "group:manageActions",
       "/remove_action_from_group",
       {},
       [](fixture& f, uint64_t id) {
         return json::object{{"group_id", id}, {"hashed_cid", f.h1}};
       },
       [=](fixture& f, const json::value& g) {
         return cids(g).count(f.h1) == 0;
       }},
      {"update_group (metadata only)",
       "group:manageActions",
       "/update_group",
       {},
       [=](fixture& f, uint64_t id) { return update(f, id, json::array{json::string(f.p1)}, "renamed"); },
       [](fixture&, const json::value& g) {
         return g.at("name").as_string() == "renamed";
       }},
      {"add_pkp_to_group",
       "group:addPkp",
       "/add_pkp_to_group",
       {},
       [](fixture& f, uint64_t id) {
         return json::object{{"group_id", id}, {"pkp_id", f.p2}};
       },
       [=](fixture& f, const json::value& g) {
         return pkps(g).count(f.p2) == 1;
       }},
      {"update_group adding a PKP",
       "group:addPkp",
       "/update_group",
       {"group:manageActions"},
       [=](fixture& f, uint64_t id) {
         return update(f, id, json::array{json::string(f.p1), json::string(f.p2)}, "added");
       },
       [=](fixture& f, const json::value& g) {
         return pkps(g).count(f.p2) == 1;
       }},
      {"remove_pkp_from_group",
       "group:removePkp",
       "/remove_pkp_from_group",
       {},
       [](fixture& f, uint64_t id) {
         return json::object{{"group_id", id}, {"pkp_id", f.p1}};
       },
       [=](fixture& f, const json::value& g) {
         return pkps(g).count(f.p1) == 0;
       }},
      {"update_group removing a PKP",
       "group:removePkp",
       "/update_group",
       {"group:manageActions"},
       [=](fixture& f, uint64_t id) { return update(f, id, json::array{}, "removed"); },
       [=](fixture& f, const json::value& g) {
         return pkps(g).count(f.p1) == 0;
       }},
  };
}

void check_forbidden(fixture& f, const response& r, std::string_view scope, const char* route) {
  check_error(f.srv, r, 403, "forbidden", std::string("/core/v1") + route);
  CHECK_MESSAGE(r.error_message().find(scope) != std::string::npos,
                "message does not name " << std::string(scope) << ": " << r.error_message());
}

}  // namespace

TEST_CASE("per-group scopes: lacking, granted on one group, wildcard") {
  fixture f;
  for (const group_op& op : group_ops()) {
    INFO("operation: " << std::string(op.name) << " (" << std::string(op.scope) << ")");

    // Lacking exactly this scope: refused on every group, nothing changes.
    {
      const uint64_t g = f.new_group("lacking");
      const json::value before = f.group(g);
      const usage_keys k = create_usage_key(f.c, f.owner.auth(), all_but(op.scope));
      check_forbidden(f, f.c.post(op.route, op.body(f, g), k.auth()), op.scope, op.route);
      CHECK(f.group(g) == before);
    }
    // Granted on group A only: allowed on A, refused on B (unchanged).
    {
      const uint64_t a = f.new_group("A"), b = f.new_group("B");
      json::object perms{{field_of(op.scope), json::array{a}}};
      for (const char* extra : op.also)
        perms[field_of(extra)] = json::array{0};
      const usage_keys k = create_usage_key(f.c, f.owner.auth(), perms);
      const json::value before_b = f.group(b);
      CHECK(!op.applied(f, f.group(a)));
      ITEST_CHECK_STATUS(f.c.post(op.route, op.body(f, a), k.auth()), 200);
      CHECK(op.applied(f, f.group(a)));
      check_forbidden(f, f.c.post(op.route, op.body(f, b), k.auth()), op.scope, op.route);
      CHECK(f.group(b) == before_b);
    }
    // The wildcard 0: allowed on every group.
    {
      const uint64_t a = f.new_group("A"), b = f.new_group("B");
      json::object perms{{field_of(op.scope), json::array{0}}};
      for (const char* extra : op.also)
        perms[field_of(extra)] = json::array{0};
      const usage_keys k = create_usage_key(f.c, f.owner.auth(), perms);
      for (const uint64_t g : {a, b}) {
        ITEST_CHECK_STATUS(f.c.post(op.route, op.body(f, g), k.auth()), 200);
        CHECK(op.applied(f, f.group(g)));
      }
    }
    // The account key needs no scope.
    {
      const uint64_t g = f.new_group("owner");
      ITEST_CHECK_STATUS(f.c.post(op.route, op.body(f, g), f.owner.auth()), 200);
      CHECK(op.applied(f, f.group(g)));
    }
  }
  CHECK(f.srv.stop().clean());
}

TEST_CASE("update_group with several scopes: each missing one is named") {
  fixture f;
  // Adding one PKP and removing another needs manageActions, addPkp and removePkp on the group.
  const auto body = [&](uint64_t id) {
    return json::object{{"group_id", id},
                        {"name", "swapped"},
                        {"description", ""},
                        {"pkp_ids_permitted", json::array{json::string(f.p2)}},
                        {"cid_hashes_permitted", json::array{json::string(f.h1)}}};
  };
  for (const char* missing : {"group:manageActions", "group:addPkp", "group:removePkp"}) {
    INFO("missing " << std::string(missing));
    const uint64_t g = f.new_group("swap");
    const json::value before = f.group(g);
    const usage_keys k = create_usage_key(f.c, f.owner.auth(), all_but(missing));
    check_forbidden(f, f.c.post("/update_group", body(g), k.auth()), missing, "/update_group");
    CHECK(f.group(g) == before);
  }
  const uint64_t g = f.new_group("swap");
  const usage_keys k = create_usage_key(f.c, f.owner.auth(),
                                        {{"manage_ipfs_ids_in_groups", json::array{g}},
                                         {"add_pkp_to_groups", json::array{g}},
                                         {"remove_pkp_from_groups", json::array{g}}});
  ITEST_CHECK_STATUS(f.c.post("/update_group", body(g), k.auth()), 200);
  CHECK(string_set(f.group(g), "pkp_ids_permitted") == std::set<std::string>{f.p2});
  CHECK(f.srv.stop().clean());
}

TEST_CASE("account-wide scopes: group:create, group:delete, pkp:create") {
  fixture f;

  SUBCASE("group:create (add_group)") {
    const size_t before = f.group_count();
    const usage_keys lacking = create_usage_key(f.c, f.owner.auth(), all_but("group:create"));
    check_forbidden(f, f.c.post("/add_group", json::object{{"name", "x"}}, lacking.auth()), "group:create",
                    "/add_group");
    CHECK(f.group_count() == before);
    const usage_keys holder = create_usage_key(f.c, f.owner.auth(), {{"can_create_groups", true}});
    ITEST_CHECK_STATUS(f.c.post("/add_group", json::object{{"name", "x"}}, holder.auth()), 200);
    CHECK(f.group_count() == before + 1);
    ITEST_CHECK_STATUS(f.c.post("/add_group", json::object{{"name", "y"}}, f.owner.auth()), 200);
    CHECK(f.group_count() == before + 2);
  }
  SUBCASE("group:delete (remove_group)") {
    const uint64_t a = f.new_group("A"), b = f.new_group("B"), c = f.new_group("C");
    const usage_keys lacking = create_usage_key(f.c, f.owner.auth(), all_but("group:delete"));
    check_forbidden(f, f.c.post("/remove_group", json::object{{"group_id", a}}, lacking.auth()), "group:delete",
                    "/remove_group");
    CHECK(f.group(a).is_object());
    // Account-wide: the holder may delete any group of the account.
    const usage_keys holder = create_usage_key(f.c, f.owner.auth(), {{"can_delete_groups", true}});
    for (const uint64_t g : {a, b}) {
      ITEST_CHECK_STATUS(f.c.post("/remove_group", json::object{{"group_id", g}}, holder.auth()), 200);
      CHECK(f.group(g).is_null());
    }
    ITEST_CHECK_STATUS(f.c.post("/remove_group", json::object{{"group_id", c}}, f.owner.auth()), 200);
    CHECK(f.group(c).is_null());
  }
  SUBCASE("pkp:create (create_wallet)") {
    const size_t before = f.wallet_count();
    const usage_keys lacking = create_usage_key(f.c, f.owner.auth(), all_but("pkp:create"));
    check_forbidden(f, f.c.post("/create_wallet", json::object{{"name", "w"}}, lacking.auth()), "pkp:create",
                    "/create_wallet");
    CHECK(f.wallet_count() == before);
    const usage_keys holder = create_usage_key(f.c, f.owner.auth(), {{"can_create_pkps", true}});
    const response r = f.c.post("/create_wallet", json::object{{"name", "w"}}, holder.auth());
    ITEST_CHECK_STATUS(r, 200);
    // The wallet is the account's: it sits at the account's next API-mode path.
    CHECK(s_of(r.body, "derivation_path") == api_path_hex(f.owner.api_key_hash, before));
    CHECK(f.wallet_count() == before + 1);
  }
  CHECK(f.srv.stop().clean());
}

TEST_CASE("operations without a scope are open to any usage key of the account, action metadata excepted") {
  fixture f;
  const usage_keys bare = create_usage_key(f.c, f.owner.auth());  // no permission at all
  const std::string cid = cid_of_code("Enact.setResponse('bare');");
  const std::string h = hashed_cid_hex(cid);
  ITEST_CHECK_STATUS(f.c.post("/upload_action", json::object{{"code", "1"}}, bare.auth()), 200);
  // Action metadata is written only by a key that may manage actions (docs/protocol.md §2 "Action
  // metadata"): refused to this one, open to a key with group:manageActions on any group.
  const usage_keys manager = create_usage_key(f.c, f.owner.auth(), {{"manage_ipfs_ids_in_groups", json::array{0}}});
  for (const usage_keys* k : {&bare, &manager}) {
    const int want = k == &bare ? 403 : 200;
    ITEST_CHECK_STATUS(f.c.post("/add_action", json::object{{"action_ipfs_cid", cid}, {"name", "n"}}, k->auth()), want);
    ITEST_CHECK_STATUS(f.c.post("/update_action_metadata",
                                json::object{{"hashed_cid", h}, {"name", "m"}, {"description", "d"}}, k->auth()),
                       k == &bare ? 403 : 200);
    ITEST_CHECK_STATUS(f.c.post("/delete_action", json::object{{"hashed_cid", h}}, k->auth()), want);
  }
  for (const char* path : {"/account", "/list_groups", "/list_wallets", "/list_actions", "/billing/balance"})
    ITEST_CHECK_STATUS(f.c.get(path, bare.auth()), 200);
  const uint64_t g = f.new_group("g");
  ITEST_CHECK_STATUS(f.c.get("/list_wallets_in_group?group_id=" + std::to_string(g), bare.auth()), 200);
  // ...but every scoped operation is refused to it.
  check_forbidden(f, f.c.post("/add_group", json::object{{"name", "x"}}, bare.auth()), "group:create", "/add_group");
  check_forbidden(f, f.c.post("/add_pkp_to_group", json::object{{"group_id", g}, {"pkp_id", f.p2}}, bare.auth()),
                  "group:addPkp", "/add_pkp_to_group");
  CHECK(f.srv.stop().clean());
}

TEST_CASE("owner-only operations are refused to usage keys, even with every scope") {
  fixture f;
  const usage_keys target = create_usage_key(f.c, f.owner.auth(), {{"name", "target"}});
  const usage_keys strong = create_usage_key(f.c, f.owner.auth(), all_scopes());
  const auto snapshot = [&] {
    return list_all(f.c, "/list_api_keys", f.owner.auth());
  };
  const auto before = snapshot();
  REQUIRE(before.size() == 2);

  struct owner_op {
    const char* method;
    const char* route;
    json::object body;
  };
  json::object update = all_scopes();
  update["usage_api_key"] = target.value;
  update["name"] = "hijacked";
  const owner_op ops[] = {
      {"POST", "/add_usage_api_key", {{"name", "more"}, {"can_create_groups", true}}},
      {"GET", "/list_api_keys", {}},
      {"POST", "/update_usage_api_key", update},
      {"POST",
       "/update_usage_api_key_metadata",
       {{"usage_api_key", target.value}, {"name", "hijacked"}, {"description", ""}}},
      {"POST", "/remove_usage_api_key", {{"usage_api_key", target.value}}},
      // A usage key cannot remove itself either.
      {"POST", "/remove_usage_api_key", {{"usage_api_key", strong.value}}},
  };
  for (const auto& op : ops) {
    INFO(std::string(op.method) << " " << std::string(op.route));
    for (const auto& creds : {strong.auth(), bearer(strong.value)}) {
      const response r =
          std::string_view(op.method) == "GET" ? f.c.get(op.route, creds) : f.c.post(op.route, op.body, creds);
      check_error(f.srv, r, 403, "forbidden", std::string("/core/v1") + op.route);
    }
  }
  CHECK(snapshot() == before);
  ITEST_CHECK_STATUS(f.c.get("/account", target.auth()), 200);
  ITEST_CHECK_STATUS(f.c.get("/account", strong.auth()), 200);

  // The account key may do all of them.
  ITEST_CHECK_STATUS(f.c.get("/list_api_keys", f.owner.auth()), 200);
  ITEST_CHECK_STATUS(f.c.post("/update_usage_api_key", update, f.owner.auth()), 200);
  ITEST_CHECK_STATUS(
      f.c.post("/update_usage_api_key_metadata",
               json::object{{"usage_api_key", target.value}, {"name", "t2"}, {"description", ""}}, f.owner.auth()),
      200);
  ITEST_CHECK_STATUS(f.c.post("/remove_usage_api_key", json::object{{"usage_api_key", target.value}}, f.owner.auth()),
                     200);
  ITEST_CHECK_STATUS(f.c.post("/add_usage_api_key", json::object{{"name", "new"}}, f.owner.auth()), 200);
  CHECK(snapshot().size() == 2);
  CHECK(f.srv.stop().clean());
}

}  // namespace enact::itest
