// SPDX-License-Identifier: Apache-2.0
// The JSON side of the registry's descriptions (registry_schema.hpp): C++ values to and from the
// JSON forms the file comment of registry.hpp describes, driven by the same field lists as the
// ABI encoder. Used by registry.cpp (event and revert arguments) and registry_json.cpp.
#pragma once

#include <boost/json.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "registry_schema.hpp"

namespace enact::chain::registry::detail {

// ---------------------------------------------------------------------------------------------
// C++ value <-> JSON

inline json::value u256_json(const u256& v) {
  if (v.fits_u64())
    return json::value(static_cast<uint64_t>(v));
  return json::value(json::string(v.to_string()));
}

inline error json_error(const std::string& what, const std::string& why) {
  return fail(abi_errc::bad_value, what + ": " + why);
}

inline result<u256> u256_from_json(const json::value& v, const std::string& what) {
  if (const auto* u = v.if_uint64())
    return u256{*u};
  if (const auto* i = v.if_int64()) {
    if (*i < 0)
      return json_error(what, "must not be negative");
    return u256{static_cast<uint64_t>(*i)};
  }
  if (const auto* s = v.if_string()) {
    auto r = u256::from_dec(*s, what);
    if (!r)
      return fail(abi_errc::bad_value, std::move(r).err().message);
    return *r;
  }
  return json_error(what, "expected an unsigned integer (JSON integer or decimal string)");
}

inline result<group_id> group_id_from_json(const json::value& v, const std::string& what) {
  ENACT_TRY(const u256 x, u256_from_json(v, what));
  if (!x.fits_u64())
    return fail(abi_errc::out_of_range, what + ": group id " + x.to_string() + " exceeds 64 bits");
  return static_cast<group_id>(x);
}

inline result<permission_set> permissions_from_json(const json::value& v, const std::string& what) {
  const auto* o = v.if_object();
  if (o == nullptr)
    return json_error(what, "expected an object of permission fields");
  for (const auto& kv : *o)
    if (std::find(scopes::kPermissionFields.begin(), scopes::kPermissionFields.end(), kv.key()) ==
        scopes::kPermissionFields.end())
      return json_error(what + "." + std::string(kv.key()), "unknown permission field");
  permission_set p;
  const auto flag = [&](std::string_view key, bool& out) -> result<void> {
    const json::value* f = o->if_contains(key);
    if (f == nullptr)
      return {};
    if (!f->is_bool())
      return json_error(what + "." + std::string(key), "expected a boolean");
    out = f->get_bool();
    return {};
  };
  const auto ids = [&](std::string_view key, std::vector<group_id>& out) -> result<void> {
    const json::value* f = o->if_contains(key);
    if (f == nullptr)
      return {};
    const auto* a = f->if_array();
    if (a == nullptr)
      return json_error(what + "." + std::string(key), "expected an array of group ids");
    for (size_t i = 0; i < a->size(); ++i) {
      ENACT_TRY(const group_id g,
                group_id_from_json((*a)[i], what + "." + std::string(key) + "[" + std::to_string(i) + "]"));
      out.push_back(g);
    }
    return {};
  };
  ENACT_TRY_VOID(flag("can_create_groups", p.can_create_groups));
  ENACT_TRY_VOID(flag("can_delete_groups", p.can_delete_groups));
  ENACT_TRY_VOID(flag("can_create_pkps", p.can_create_pkps));
  ENACT_TRY_VOID(ids("manage_ipfs_ids_in_groups", p.manage_ipfs_ids_in_groups));
  ENACT_TRY_VOID(ids("add_pkp_to_groups", p.add_pkp_to_groups));
  ENACT_TRY_VOID(ids("remove_pkp_from_groups", p.remove_pkp_from_groups));
  ENACT_TRY_VOID(ids("execute_in_groups", p.execute_in_groups));
  return p;
}

template <class T>
json::value to_json_value(const T& v);

template <class S>
json::object struct_to_json(const S& s) {
  json::object o;
  for_each_field<S>([&](const auto& fl) { o[fl.name] = to_json_value(s.*fl.member); });
  return o;
}

template <class T>
json::value to_json_value(const T& v) {
  if constexpr (std::is_same_v<T, hash256> || std::is_same_v<T, address> || std::is_same_v<T, bytes>) {
    return json::value(json::string(codec::hex::encode_prefixed(v)));
  } else if constexpr (std::is_same_v<T, u256>) {
    return u256_json(v);
  } else if constexpr (std::is_same_v<T, group_id>) {
    return json::value(v);
  } else if constexpr (std::is_same_v<T, bool>) {
    return json::value(v);
  } else if constexpr (std::is_same_v<T, std::string>) {
    return json::value(json::string(v));
  } else if constexpr (std::is_same_v<T, permission_set>) {
    return json::value_from(v);
  } else if constexpr (is_vector<T>::value) {
    json::array a;
    a.reserve(v.size());
    for (const auto& e : v)
      a.push_back(to_json_value(e));
    return a;
  } else if constexpr (is_page<T>::value) {
    return json::object{{"items", to_json_value(v.items)}, {"total", u256_json(v.total)}};
  } else {
    return struct_to_json(v);
  }
}

template <class T>
result<T> from_json_value(const json::value& v, const std::string& what);

template <class S>
result<S> struct_from_json(const json::value& v, const std::string& what) {
  const auto* o = v.if_object();
  if (o == nullptr)
    return json_error(what, "expected an object");
  for (const auto& kv : *o) {
    bool known = false;
    for_each_field<S>([&](const auto& fl) { known = known || fl.name == kv.key(); });
    if (!known)
      return json_error(what + "." + std::string(kv.key()), "unknown field");
  }
  return fill_fields<S>([&](const auto& fl) {
    using M = typename std::decay_t<decltype(fl)>::type;
    const std::string at = what + "." + std::string(fl.name);
    const json::value* f = o->if_contains(fl.name);
    if (f == nullptr)
      return result<M>(json_error(at, "missing"));
    return from_json_value<M>(*f, at);
  });
}

/// 0x-prefixed hex bytes; `expected` says what the string should have been.
inline result<bytes> hex_from_json(const json::value& v, const std::string& what, const char* expected) {
  const auto* s = v.if_string();
  if (s == nullptr)
    return json_error(what, std::string("expected ") + expected);
  auto b = codec::hex::decode_prefixed(*s, what);
  if (!b)
    return fail(abi_errc::bad_value, std::move(b).err().message);
  return std::move(*b);
}

template <class T>
result<T> from_json_value(const json::value& v, const std::string& what) {
  if constexpr (std::is_same_v<T, hash256>) {
    ENACT_TRY(const bytes b, hex_from_json(v, what, "0x followed by 64 hex digits"));
    if (b.size() != 32)
      return json_error(what, "expected 32 bytes, got " + std::to_string(b.size()));
    hash256 out{};
    std::copy(b.begin(), b.end(), out.begin());
    return out;
  } else if constexpr (std::is_same_v<T, address>) {
    const auto* s = v.if_string();
    if (s == nullptr)
      return json_error(what, "expected 0x followed by 40 hex digits");
    auto a = parse_address(*s, what);
    if (!a)
      return fail(abi_errc::bad_value, std::move(a).err().message);
    return *a;
  } else if constexpr (std::is_same_v<T, bytes>) {
    return hex_from_json(v, what, "0x-prefixed hex");
  } else if constexpr (std::is_same_v<T, u256>) {
    return u256_from_json(v, what);
  } else if constexpr (std::is_same_v<T, group_id>) {
    return group_id_from_json(v, what);
  } else if constexpr (std::is_same_v<T, bool>) {
    if (!v.is_bool())
      return json_error(what, "expected a boolean");
    return v.get_bool();
  } else if constexpr (std::is_same_v<T, std::string>) {
    if (!v.is_string())
      return json_error(what, "expected a string");
    return std::string(v.get_string());
  } else if constexpr (std::is_same_v<T, permission_set>) {
    return permissions_from_json(v, what);
  } else if constexpr (is_vector<T>::value) {
    const auto* a = v.if_array();
    if (a == nullptr)
      return json_error(what, "expected an array");
    T out;
    out.reserve(a->size());
    for (size_t i = 0; i < a->size(); ++i) {
      ENACT_TRY(auto e, from_json_value<typename T::value_type>((*a)[i], what + "[" + std::to_string(i) + "]"));
      out.push_back(std::move(e));
    }
    return out;
  } else if constexpr (is_page<T>::value) {
    const auto* o = v.if_object();
    if (o == nullptr)
      return json_error(what, "expected an object {items, total}");
    for (const auto& kv : *o)
      if (kv.key() != "items" && kv.key() != "total")
        return json_error(what + "." + std::string(kv.key()), "unknown field");
    const auto* items = o->if_contains("items");
    const auto* total = o->if_contains("total");
    if (items == nullptr || total == nullptr)
      return json_error(what, items == nullptr ? "items missing" : "total missing");
    T out;
    ENACT_TRY(out.items, from_json_value<decltype(out.items)>(*items, what + ".items"));
    ENACT_TRY(out.total, u256_from_json(*total, what + ".total"));
    return out;
  } else {
    return struct_from_json<T>(v, what);
  }
}

}  // namespace enact::chain::registry::detail
