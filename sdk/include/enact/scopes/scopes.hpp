// SPDX-License-Identifier: Apache-2.0
// The usage-key permission model (core-api spec "Scopes", "Usage API key", "Authentication" §3–5;
// docs/protocol.md §2). An account key may do everything; a usage key holds a `permission_set` of three
// account-wide flags and four per-group lists in which group id 0 is the wildcard for every group.
// Pure functions, header-only: `allows` answers one scope question, `find_executable_group`
// applies the execution rule, and the JSON conversion reads and writes the permission fields of
// add_usage_api_key / update_usage_api_key / list_api_keys.
#pragma once

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "enact/bytes.hpp"
#include "enact/error.hpp"
#include "enact/result.hpp"

namespace enact {

enum class scope_errc {
  unknown_field = 1,  // a field that is not a permission field (nor one the caller allows)
  wrong_type,         // boolean or array of integers expected
  bad_group_id,       // negative, fractional or out of uint64 range
};

}  // namespace enact
ENACT_ERRC(scope_errc, scope_category, "enact.scope", "unknown field", "wrong type", "invalid group id")

namespace enact::scopes {

using group_id = uint64_t;

/// In a per-group list, this id stands for every group of the account.
inline constexpr group_id kAllGroups = 0;

/// The scopes of the specification's permission model.
enum class permission {
  execute,               // per group
  pkp_create,            // account-wide
  group_create,          // account-wide
  group_delete,          // account-wide
  group_manage_actions,  // per group
  group_add_pkp,         // per group
  group_remove_pkp,      // per group
};

inline constexpr std::array<permission, 7> kAllPermissions = {
    permission::execute,         permission::pkp_create,           permission::group_create,
    permission::group_delete,    permission::group_manage_actions, permission::group_add_pkp,
    permission::group_remove_pkp};

/// The scope's name as the specification writes it ("group:manageActions"); error messages of
/// `forbidden` name the missing scope this way.
[[nodiscard]] constexpr std::string_view name(permission p) noexcept {
  switch (p) {
    case permission::execute:
      return "execute";
    case permission::pkp_create:
      return "pkp:create";
    case permission::group_create:
      return "group:create";
    case permission::group_delete:
      return "group:delete";
    case permission::group_manage_actions:
      return "group:manageActions";
    case permission::group_add_pkp:
      return "group:addPkp";
    case permission::group_remove_pkp:
      return "group:removePkp";
  }
  return "unknown";
}

/// The permission named `s` (as `name` spells it), if any.
[[nodiscard]] constexpr std::optional<permission> permission_from_name(std::string_view s) noexcept {
  for (const permission p : kAllPermissions)
    if (name(p) == s)
      return p;
  return std::nullopt;
}

/// True for the scopes that apply to one group at a time.
[[nodiscard]] constexpr bool is_per_group(permission p) noexcept {
  return p == permission::execute || p == permission::group_manage_actions || p == permission::group_add_pkp ||
         p == permission::group_remove_pkp;
}

/// A usage key's permissions, field for field as the usage-key record stores them.
struct permission_set {
  bool can_create_groups = false;
  bool can_delete_groups = false;
  bool can_create_pkps = false;
  std::vector<group_id> manage_ipfs_ids_in_groups;
  std::vector<group_id> add_pkp_to_groups;
  std::vector<group_id> remove_pkp_from_groups;
  std::vector<group_id> execute_in_groups;

  friend bool operator==(const permission_set&, const permission_set&) = default;
};

enum class key_kind { account, usage };

/// Who is calling: the account key (may do everything), or a usage key with its permissions.
struct caller {
  key_kind kind = key_kind::usage;
  permission_set perms;  // ignored for the account key
};

namespace detail {
/// The per-group list that grants `p`, or nullptr for an account-wide scope.
[[nodiscard]] inline const std::vector<group_id>* group_list(const permission_set& s, permission p) noexcept {
  switch (p) {
    case permission::execute:
      return &s.execute_in_groups;
    case permission::group_manage_actions:
      return &s.manage_ipfs_ids_in_groups;
    case permission::group_add_pkp:
      return &s.add_pkp_to_groups;
    case permission::group_remove_pkp:
      return &s.remove_pkp_from_groups;
    default:
      return nullptr;
  }
}
[[nodiscard]] inline bool contains(const std::vector<group_id>& v, group_id g) noexcept {
  return std::find(v.begin(), v.end(), g) != v.end();
}
}  // namespace detail

/// Whether `c` holds scope `p`. The account key holds every scope. For a usage key, an account-wide
/// scope is its flag and `group` is ignored; a per-group scope is granted on `group` when its list
/// holds that id or the wildcard 0. Without a group (or with group 0, the wildcard itself) a
/// per-group scope is granted only by the wildcard, i.e. only when it holds on every group.
[[nodiscard]] inline bool allows(const caller& c, permission p, std::optional<group_id> group = {}) noexcept {
  if (c.kind == key_kind::account)
    return true;
  const permission_set& s = c.perms;
  switch (p) {
    case permission::pkp_create:
      return s.can_create_pkps;
    case permission::group_create:
      return s.can_create_groups;
    case permission::group_delete:
      return s.can_delete_groups;
    default:
      break;
  }
  const std::vector<group_id>* list = detail::group_list(s, p);
  if (list == nullptr)
    return false;
  if (detail::contains(*list, kAllGroups))
    return true;
  return group.has_value() && *group != kAllGroups && detail::contains(*list, *group);
}

/// Owner-only operations (managing usage keys, transferring ownership): the account key alone.
[[nodiscard]] inline bool owner_only_allowed(const caller& c) noexcept { return c.kind == key_kind::account; }

/// A group as the execution rule sees it.
struct group_view {
  group_id id = 0;
  std::span<const address> pkps;
  std::span<const hash256> cid_hashes;
};

/// The execution rule (Authentication §5): the first group, in the order given, on which `c` has
/// execute and that lists `cid_hash` and, when one is named, `pkp`. nullopt when there is none.
[[nodiscard]] inline std::optional<group_id> find_executable_group(const caller& c, std::span<const group_view> groups,
                                                                   const hash256& cid_hash,
                                                                   const std::optional<address>& pkp) noexcept {
  for (const group_view& g : groups) {
    if (!allows(c, permission::execute, g.id))
      continue;
    if (std::find(g.cid_hashes.begin(), g.cid_hashes.end(), cid_hash) == g.cid_hashes.end())
      continue;
    if (pkp && std::find(g.pkps.begin(), g.pkps.end(), *pkp) == g.pkps.end())
      continue;
    return g.id;
  }
  return std::nullopt;
}

// ---------------------------------------------------------------------------------------------
// JSON (docs/protocol.md §2 add_usage_api_key): booleans default false, arrays default [], group ids are
// non-negative JSON integers.

inline constexpr std::array<std::string_view, 7> kPermissionFields = {
    "can_create_groups", "can_delete_groups",      "can_create_pkps",  "manage_ipfs_ids_in_groups",
    "add_pkp_to_groups", "remove_pkp_from_groups", "execute_in_groups"};

namespace detail {
[[nodiscard]] inline result<void> read_flag(const boost::json::object& o, std::string_view key, bool& out) {
  const boost::json::value* v = o.if_contains(key);
  if (v == nullptr)
    return {};
  if (!v->is_bool())
    return fail(scope_errc::wrong_type, std::string(key) + ": expected boolean");
  out = v->get_bool();
  return {};
}

[[nodiscard]] inline result<void> read_groups(const boost::json::object& o, std::string_view key,
                                              std::vector<group_id>& out) {
  const boost::json::value* v = o.if_contains(key);
  if (v == nullptr)
    return {};
  if (!v->is_array())
    return fail(scope_errc::wrong_type, std::string(key) + ": expected array of group ids");
  const boost::json::array& a = v->get_array();
  out.clear();
  out.reserve(a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    const boost::json::value& e = a[i];
    const std::string where = std::string(key) + "[" + std::to_string(i) + "]";
    if (e.is_uint64()) {
      out.push_back(e.get_uint64());
    } else if (e.is_int64()) {
      if (e.get_int64() < 0)
        return fail(scope_errc::bad_group_id, where + ": group id must not be negative");
      out.push_back(static_cast<group_id>(e.get_int64()));
    } else if (e.is_double()) {
      return fail(scope_errc::bad_group_id, where + ": group id must be an integer");
    } else {
      return fail(scope_errc::wrong_type, where + ": expected integer group id");
    }
  }
  return {};
}
}  // namespace detail

/// Reads the permission fields of `o`. Absent fields keep their defaults. Any field that is neither
/// a permission field nor listed in `other_fields` is rejected (docs/protocol.md §0: unknown fields are
/// errors), so a request parser passes its own field names ("name", "description", ...) there.
[[nodiscard]] inline result<permission_set> permission_set_from_json(
    const boost::json::object& o, std::span<const std::string_view> other_fields = {}) {
  for (const auto& kv : o) {
    const std::string_view k = kv.key();
    const bool known = std::find(kPermissionFields.begin(), kPermissionFields.end(), k) != kPermissionFields.end() ||
                       std::find(other_fields.begin(), other_fields.end(), k) != other_fields.end();
    if (!known)
      return fail(scope_errc::unknown_field, std::string(k) + ": unknown field");
  }
  permission_set s;
  ENACT_TRY_VOID(detail::read_flag(o, "can_create_groups", s.can_create_groups));
  ENACT_TRY_VOID(detail::read_flag(o, "can_delete_groups", s.can_delete_groups));
  ENACT_TRY_VOID(detail::read_flag(o, "can_create_pkps", s.can_create_pkps));
  ENACT_TRY_VOID(detail::read_groups(o, "manage_ipfs_ids_in_groups", s.manage_ipfs_ids_in_groups));
  ENACT_TRY_VOID(detail::read_groups(o, "add_pkp_to_groups", s.add_pkp_to_groups));
  ENACT_TRY_VOID(detail::read_groups(o, "remove_pkp_from_groups", s.remove_pkp_from_groups));
  ENACT_TRY_VOID(detail::read_groups(o, "execute_in_groups", s.execute_in_groups));
  return s;
}

/// Writes the seven permission fields into `o` (alongside whatever else it holds).
inline void write_permission_fields(boost::json::object& o, const permission_set& s) {
  const auto ids = [](const std::vector<group_id>& v) {
    boost::json::array a;
    a.reserve(v.size());
    for (const group_id g : v)
      a.emplace_back(g);
    return a;
  };
  o["can_create_groups"] = s.can_create_groups;
  o["can_delete_groups"] = s.can_delete_groups;
  o["can_create_pkps"] = s.can_create_pkps;
  o["manage_ipfs_ids_in_groups"] = ids(s.manage_ipfs_ids_in_groups);
  o["add_pkp_to_groups"] = ids(s.add_pkp_to_groups);
  o["remove_pkp_from_groups"] = ids(s.remove_pkp_from_groups);
  o["execute_in_groups"] = ids(s.execute_in_groups);
}

/// boost::json::value_from(permission_set): an object with exactly the seven permission fields.
inline void tag_invoke(boost::json::value_from_tag, boost::json::value& v, const permission_set& s) {
  boost::json::object& o = v.emplace_object();
  write_permission_fields(o, s);
}

/// boost::json::value_to<permission_set>: strict (only permission fields); throws enact::Error
/// with a scope_errc code on bad input.
inline permission_set tag_invoke(boost::json::value_to_tag<permission_set>, const boost::json::value& v) {
  if (!v.is_object())
    throw Error(make_error_code(scope_errc::wrong_type), "permissions: expected object");
  return permission_set_from_json(v.get_object()).value();
}

}  // namespace enact::scopes
