// SPDX-License-Identifier: Apache-2.0
#include "support.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <string_view>
#include <vector>

#include "enact/scopes/scopes.hpp"

using namespace enact;
using namespace enact::scopes;
using namespace std::string_view_literals;

namespace {
/// A usage key holding exactly `p`: the flag for an account-wide scope, or `groups` for a
/// per-group scope.
caller usage_with(permission p, const std::vector<group_id>& groups) {
  caller c{key_kind::usage, {}};
  permission_set& s = c.perms;
  switch (p) {
    case permission::pkp_create:
      s.can_create_pkps = true;
      break;
    case permission::group_create:
      s.can_create_groups = true;
      break;
    case permission::group_delete:
      s.can_delete_groups = true;
      break;
    case permission::execute:
      s.execute_in_groups = groups;
      break;
    case permission::group_manage_actions:
      s.manage_ipfs_ids_in_groups = groups;
      break;
    case permission::group_add_pkp:
      s.add_pkp_to_groups = groups;
      break;
    case permission::group_remove_pkp:
      s.remove_pkp_from_groups = groups;
      break;
  }
  return c;
}
constexpr group_id kGroup = 7;
constexpr group_id kOtherGroup = 8;
}  // namespace

TEST_CASE("scope names follow the specification") {
  struct case_ {
    permission p;
    std::string_view name;
    bool per_group;
  };
  // core-api spec, "Scopes (permission model)".
  const case_ cases[] = {
      {permission::execute, "execute", true},
      {permission::pkp_create, "pkp:create", false},
      {permission::group_create, "group:create", false},
      {permission::group_delete, "group:delete", false},
      {permission::group_manage_actions, "group:manageActions", true},
      {permission::group_add_pkp, "group:addPkp", true},
      {permission::group_remove_pkp, "group:removePkp", true},
  };
  for (const auto& c : cases) {
    CHECK(name(c.p) == c.name);
    CHECK(is_per_group(c.p) == c.per_group);
    CHECK(permission_from_name(c.name) == c.p);
  }
  CHECK(!permission_from_name("group:manageactions"));
  CHECK(!permission_from_name(""));
}

TEST_CASE("permission matrix: every scope for each kind of caller") {
  const caller account{key_kind::account, {}};
  const caller none{key_kind::usage, {}};
  for (const permission p : kAllPermissions) {
    INFO(name(p));
    // Account key: everything, on any group or none.
    CHECK(allows(account, p, kGroup));
    CHECK(allows(account, p));

    // Usage key without the scope.
    CHECK(!allows(none, p, kGroup));
    CHECK(!allows(none, p));

    // Usage key with the scope on this group (or the account-wide flag).
    const caller with = usage_with(p, {kGroup});
    CHECK(allows(with, p, kGroup));
    CHECK(allows(with, p) == !is_per_group(p));  // per-group: a group must be named
    // ...and with nothing else.
    for (const permission q : kAllPermissions)
      if (q != p)
        CHECK_MESSAGE(!allows(with, q, kGroup), name(q));

    // Usage key with the scope on another group only.
    const caller elsewhere = usage_with(p, {kOtherGroup});
    CHECK(allows(elsewhere, p, kOtherGroup) == true);
    CHECK(allows(elsewhere, p, kGroup) == !is_per_group(p));

    // Usage key with the wildcard 0: every group, and the group-less question too.
    const caller wildcard = usage_with(p, {kAllGroups});
    CHECK(allows(wildcard, p, kGroup));
    CHECK(allows(wildcard, p, 123456789));
    CHECK(allows(wildcard, p));
    for (const permission q : kAllPermissions)
      if (q != p)
        CHECK_MESSAGE(!allows(wildcard, q, kGroup), name(q));

    // Group id 0 named explicitly asks about every group: only the wildcard grants it.
    CHECK(allows(with, p, kAllGroups) == !is_per_group(p));
  }
}

TEST_CASE("owner-only operations need the account key") {
  CHECK(owner_only_allowed(caller{key_kind::account, {}}));
  permission_set everything;
  everything.can_create_groups = everything.can_delete_groups = everything.can_create_pkps = true;
  everything.execute_in_groups = everything.manage_ipfs_ids_in_groups = {kAllGroups};
  everything.add_pkp_to_groups = everything.remove_pkp_from_groups = {kAllGroups};
  CHECK(!owner_only_allowed(caller{key_kind::usage, everything}));
  CHECK(!owner_only_allowed(caller{key_kind::usage, {}}));
}

TEST_CASE("execution rule: a group with execute listing the CID hash and the PKP") {
  hash256 cid_a{}, cid_b{}, cid_c{};
  cid_a[0] = 0xa;
  cid_b[0] = 0xb;
  cid_c[0] = 0xc;
  address pkp_1{}, pkp_2{}, pkp_3{};
  pkp_1[0] = 1;
  pkp_2[0] = 2;
  pkp_3[0] = 3;
  const address g1_pkps[] = {pkp_1};
  const hash256 g1_cids[] = {cid_a};
  const address g2_pkps[] = {pkp_1, pkp_2};
  const hash256 g2_cids[] = {cid_a, cid_b};
  const hash256 g3_cids[] = {cid_c};
  const group_view groups[] = {
      {1, g1_pkps, g1_cids},
      {2, g2_pkps, g2_cids},
      {3, {}, g3_cids},
  };
  const caller account{key_kind::account, {}};
  const caller on2{key_kind::usage, usage_with(permission::execute, {2}).perms};
  const caller on3{key_kind::usage, usage_with(permission::execute, {3}).perms};
  const caller wildcard{key_kind::usage, usage_with(permission::execute, {kAllGroups}).perms};
  const caller manager{key_kind::usage, usage_with(permission::group_manage_actions, {kAllGroups}).perms};

  struct case_ {
    const caller* who;
    hash256 cid;
    std::optional<address> pkp;
    std::optional<group_id> expected;
  };
  const case_ cases[] = {
      {&account, cid_a, pkp_1, 1},         // first matching group, in the given order
      {&account, cid_a, pkp_2, 2},         // group 1 lacks the PKP
      {&account, cid_b, std::nullopt, 2},  // no PKP named: the CID alone decides
      {&account, cid_c, std::nullopt, 3},
      {&account, cid_c, pkp_1, std::nullopt},  // group 3 lists no PKP
      {&account, cid_a, pkp_3, std::nullopt},  // PKP in no group
      {&on2, cid_a, pkp_1, 2},                 // execute on group 2 only: group 1 is skipped
      {&on2, cid_c, std::nullopt, std::nullopt},
      {&on3, cid_a, pkp_1, std::nullopt},
      {&on3, cid_c, std::nullopt, 3},
      {&wildcard, cid_a, pkp_1, 1},
      {&wildcard, cid_b, pkp_2, 2},
      {&manager, cid_a, pkp_1, std::nullopt},  // other scopes do not allow execution
  };
  for (size_t i = 0; i < std::size(cases); ++i) {
    const auto& c = cases[i];
    CHECK_MESSAGE(find_executable_group(*c.who, groups, c.cid, c.pkp) == c.expected, "case " << i);
  }
  CHECK(!find_executable_group(account, {}, cid_a, std::nullopt));
}

TEST_CASE("permission_set JSON uses the add_usage_api_key field names") {
  permission_set s;
  s.can_create_groups = true;
  s.can_create_pkps = true;
  s.manage_ipfs_ids_in_groups = {1, 2};
  s.add_pkp_to_groups = {0};
  s.execute_in_groups = {UINT64_MAX};
  const boost::json::value v = boost::json::value_from(s);
  // docs/protocol.md §2, add_usage_api_key.
  CHECK(boost::json::serialize(v) ==
        R"({"can_create_groups":true,"can_delete_groups":false,"can_create_pkps":true,)"
        R"("manage_ipfs_ids_in_groups":[1,2],"add_pkp_to_groups":[0],"remove_pkp_from_groups":[],)"
        R"("execute_in_groups":[18446744073709551615]})");
  const auto back = permission_set_from_json(v.get_object());
  REQUIRE(back);
  CHECK(*back == s);
  CHECK(boost::json::value_to<permission_set>(v) == s);

  // Omitted fields take their defaults.
  const auto empty = permission_set_from_json(boost::json::object{});
  REQUIRE(empty);
  CHECK(*empty == permission_set{});
  const auto partial = permission_set_from_json(boost::json::parse(R"({"execute_in_groups":[3]})").get_object());
  REQUIRE(partial);
  CHECK(partial->execute_in_groups == std::vector<group_id>{3});
  CHECK(!partial->can_create_groups);

  // A request parser names its own fields; the rest stay unknown.
  const std::string_view request_fields[] = {"name", "description", "expiration"};
  const auto request = boost::json::parse(R"({"name":"ci","description":"d","expiration":0,"can_delete_groups":true})");
  const auto from_request = permission_set_from_json(request.get_object(), request_fields);
  REQUIRE(from_request);
  CHECK(from_request->can_delete_groups);
  CHECK(permission_set_from_json(request.get_object()).code() == scope_errc::unknown_field);
}

TEST_CASE("permission_set JSON rejects unknown fields, wrong types and bad ids") {
  struct bad {
    std::string_view json;
    scope_errc code;
    std::string_view message;
  };
  const bad cases[] = {
      {R"({"can_create_group":true})", scope_errc::unknown_field, "can_create_group: unknown field"},
      {R"({"execute":[1]})", scope_errc::unknown_field, "execute: unknown field"},
      {R"({"can_create_groups":1})", scope_errc::wrong_type, "can_create_groups: expected boolean"},
      {R"({"can_delete_groups":"true"})", scope_errc::wrong_type, "can_delete_groups: expected boolean"},
      {R"({"can_create_pkps":null})", scope_errc::wrong_type, "can_create_pkps: expected boolean"},
      {R"({"execute_in_groups":1})", scope_errc::wrong_type, "execute_in_groups: expected array of group ids"},
      {R"({"add_pkp_to_groups":{"0":1}})", scope_errc::wrong_type, "add_pkp_to_groups: expected array of group ids"},
      {R"({"remove_pkp_from_groups":[1,"2"]})", scope_errc::wrong_type,
       "remove_pkp_from_groups[1]: expected integer group id"},
      {R"({"execute_in_groups":[true]})", scope_errc::wrong_type, "execute_in_groups[0]: expected integer group id"},
      {R"({"execute_in_groups":[null]})", scope_errc::wrong_type, "execute_in_groups[0]: expected integer group id"},
      {R"({"manage_ipfs_ids_in_groups":[-1]})", scope_errc::bad_group_id,
       "manage_ipfs_ids_in_groups[0]: group id must not be negative"},
      {R"({"execute_in_groups":[1.5]})", scope_errc::bad_group_id, "execute_in_groups[0]: group id must be an integer"},
      {R"({"execute_in_groups":[18446744073709551616]})", scope_errc::bad_group_id,
       "execute_in_groups[0]: group id must be an integer"},
  };
  for (const auto& c : cases) {
    INFO(c.json);
    const auto v = boost::json::parse(c.json);
    const auto r = permission_set_from_json(v.get_object());
    REQUIRE(!r);
    CHECK(r.code() == c.code);
    CHECK(r.err().message == c.message);
    try {
      (void)boost::json::value_to<permission_set>(v);
      FAIL("value_to accepted bad input");
    } catch (const Error& e) {
      CHECK(e.code() == c.code);
    }
  }
  CHECK_THROWS_AS((void)boost::json::value_to<permission_set>(boost::json::value(1)), Error);
}
