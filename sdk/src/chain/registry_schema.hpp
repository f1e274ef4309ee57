// SPDX-License-Identifier: Apache-2.0
// The registry's descriptions, shared by registry.cpp (the ABI side and the dispatch tables) and
// registry_json.cpp (the JSON bridge, through registry_schema_json.hpp). Every struct of
// registry.hpp is described once by its fields (member and Solidity parameter name), expanded
// from the tables generated from the contract's artifact (enact/chain/registry_abi.hpp); the ABI
// type of each field follows from its C++ type (hash256, u256 and group_id are uint256, vectors
// are T[], described structs are tuples), and the same description drives the ABI encoder, the
// strict decoder and the JSON bridge. The canonical signature derived from the fields is compared
// with the struct's kSignature the first time its selector or topic is computed, so a C++ type
// rule that disagrees with the ABI cannot go unnoticed.
#pragma once

#include <boost/json.hpp>

#include <algorithm>
#include <array>
#include <optional>
#include <cstring>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "enact/chain/registry.hpp"
#include "enact/codec/hex.hpp"
#include "enact/address.hpp"
#include "enact/crypto/keccak.hpp"

namespace enact::chain::registry::detail {

namespace json = boost::json;

// ---------------------------------------------------------------------------------------------
// Descriptions

template <class S, class M>
struct field {
  using type = M;
  std::string_view name;  // the Solidity parameter or component name
  M S::*member;
  std::string_view member_name;  // the C++ member's name, checked against `name`
};

template <class S>
struct schema;

template <class S>
concept described = requires {
  schema<S>::fields;
};

#define ENACT_SCHEMA(S, ...)                                     \
  template <>                                                    \
  struct schema<S> {                                             \
    using self = S;                                              \
    static constexpr auto fields = std::make_tuple(__VA_ARGS__); \
  }
#define ENACT_F(member, name) \
  field<self, decltype(self::member)> { name, &self::member, #member }

// Solidity struct Permissions (JSON: value_from(permission_set), see the file comment of
// registry.hpp; the names here serve the ABI error messages).
ENACT_SCHEMA(permission_set, ENACT_F(can_create_groups, "canCreateGroups"),
             ENACT_F(can_delete_groups, "canDeleteGroups"), ENACT_F(can_create_pkps, "canCreatePkps"),
             ENACT_F(manage_ipfs_ids_in_groups, "manageIpfsIdsInGroups"), ENACT_F(add_pkp_to_groups, "addPkpToGroups"),
             ENACT_F(remove_pkp_from_groups, "removePkpFromGroups"), ENACT_F(execute_in_groups, "executeInGroups"));

// Views, calls, events (first field indexed) and custom errors: from the generated tables.
#define ENACT_SCHEMA_FIELD(type, member, name) , std::make_tuple(ENACT_F(member, name))
#define ENACT_SCHEMA_OF(S, ...)                                                                                  \
  template <>                                                                                                    \
  struct schema<S> {                                                                                             \
    using self = S;                                                                                              \
    static constexpr auto fields = std::tuple_cat(std::tuple<>() ENACT_REGISTRY_FIELDS_##S(ENACT_SCHEMA_FIELD)); \
  };
ENACT_REGISTRY_VIEWS(ENACT_SCHEMA_OF)
ENACT_REGISTRY_CALLS(ENACT_SCHEMA_OF)
ENACT_REGISTRY_EVENTS(ENACT_SCHEMA_OF)
ENACT_REGISTRY_ERRORS(ENACT_SCHEMA_OF)
#undef ENACT_SCHEMA_OF
#undef ENACT_SCHEMA_FIELD

// Solidity's built-in reverts, which no ABI lists.
ENACT_SCHEMA(error_string_error, ENACT_F(message, "message"));
ENACT_SCHEMA(panic_error, ENACT_F(code, "code"));

#undef ENACT_F
#undef ENACT_SCHEMA

template <class T>
struct is_vector : std::false_type {};
template <class E>
struct is_vector<std::vector<E>> : std::true_type {};

template <class T>
struct is_page : std::false_type {};
template <class E>
struct is_page<list_page<E>> : std::true_type {};

template <class S, class F>
void for_each_field(F&& f) {
  std::apply([&](const auto&... fl) { (f(fl), ...); }, schema<S>::fields);
}

/// Calls `f` on each field in order until one returns false.
template <class S, class F>
bool all_fields(F&& f) {
  return std::apply([&](const auto&... fl) { return (f(fl) && ...); }, schema<S>::fields);
}

template <class S>
constexpr size_t field_count() {
  return std::tuple_size_v<std::decay_t<decltype(schema<S>::fields)>>;
}

/// Builds an S field by field from `read(field)`, a result of the field's type; the first
/// failure is the result.
template <class S, class Read>
result<S> fill_fields(Read&& read) {
  S out{};
  std::optional<error> failure;
  all_fields<S>([&](const auto& fl) {
    auto r = read(fl);
    if (!r) {
      failure = std::move(r).err();
      return false;
    }
    out.*fl.member = std::move(*r);
    return true;
  });
  if (failure)
    return std::move(*failure);
  return out;
}

inline std::string_view name_of(std::string_view signature) { return signature.substr(0, signature.find('(')); }

/// Members are named after their Solidity parameter in snake_case (setUsageApiKey's `p` is
/// `permissions`); checked so that a description cannot pair a name with the wrong member.
template <class S>
void check_names() {
  for_each_field<S>([](const auto& fl) {
    std::string snake;
    for (const char c : fl.name) {
      if (c >= 'A' && c <= 'Z') {
        snake += '_';
        snake += static_cast<char>(c - 'A' + 'a');
      } else {
        snake += c;
      }
    }
    if (snake != fl.member_name && !(fl.name == "p" && fl.member_name == "permissions"))
      throw std::logic_error("registry binding: parameter " + std::string(fl.name) + " described by member " +
                             std::string(fl.member_name));
  });
}

// ---------------------------------------------------------------------------------------------
// ABI types, derived from the C++ types

template <class T>
std::string abi_type_name() {
  if constexpr (std::is_same_v<T, hash256> || std::is_same_v<T, u256> || std::is_same_v<T, group_id>) {
    return "uint256";
  } else if constexpr (std::is_same_v<T, address>) {
    return "address";
  } else if constexpr (std::is_same_v<T, bool>) {
    return "bool";
  } else if constexpr (std::is_same_v<T, std::string>) {
    return "string";
  } else if constexpr (std::is_same_v<T, bytes>) {
    return "bytes";
  } else if constexpr (is_vector<T>::value) {
    return abi_type_name<typename T::value_type>() + "[]";
  } else {
    static_assert(described<T>, "no ABI type for this C++ type");
    check_names<T>();
    std::string out = "(";
    for_each_field<T>([&](const auto& fl) {
      if (out.size() > 1)
        out += ',';
      out += abi_type_name<typename std::decay_t<decltype(fl)>::type>();
    });
    return out + ")";
  }
}

/// name(T1,...,Tn) from the fields of S; must equal S::kSignature.
template <class S>
std::string derived_signature() {
  std::string types = abi_type_name<S>();  // "(T1,...,Tn)"
  if (field_count<S>() == 0)
    types = "()";
  return std::string(name_of(S::kSignature)) + types;
}

template <class S>
void check_signature() {
  const std::string derived = derived_signature<S>();
  if (derived != S::kSignature)
    throw std::logic_error("registry binding: fields give " + derived + ", kSignature is " +
                           std::string(S::kSignature));
}

/// The ABI types of S's fields, in order (the arguments of a call, event or error).
template <class S>
const std::vector<codec::abi::type>& field_types() {
  static const std::vector<codec::abi::type> types = [] {
    check_signature<S>();
    std::vector<codec::abi::type> out;
    for_each_field<S>([&](const auto& fl) {
      out.push_back(codec::abi::type::of(abi_type_name<typename std::decay_t<decltype(fl)>::type>()));
    });
    return out;
  }();
  return types;
}

template <class S>
const std::array<uint8_t, 4>& selector_of() {
  static const std::array<uint8_t, 4> sel = [] {
    check_signature<S>();
    return codec::abi::selector(S::kSignature);
  }();
  return sel;
}

template <class S>
const hash256& topic_of() {
  static const hash256 topic = [] {
    check_signature<S>();
    return crypto::keccak256(S::kSignature);
  }();
  return topic;
}

// ---------------------------------------------------------------------------------------------
// C++ value <-> codec::abi::value

template <class T>
codec::abi::value to_abi(const T& v);

template <class S>
std::vector<codec::abi::value> field_values(const S& s) {
  std::vector<codec::abi::value> out;
  out.reserve(field_count<S>());
  for_each_field<S>([&](const auto& fl) { out.push_back(to_abi(s.*fl.member)); });
  return out;
}

template <class T>
codec::abi::value to_abi(const T& v) {
  if constexpr (std::is_same_v<T, hash256>) {
    return codec::abi::value::number(u256::load_be(v.data()));
  } else if constexpr (std::is_same_v<T, u256>) {
    return codec::abi::value::number(v);
  } else if constexpr (std::is_same_v<T, group_id>) {
    return codec::abi::value::number(u256{v});
  } else if constexpr (std::is_same_v<T, address>) {
    return codec::abi::value::addr(v);
  } else if constexpr (std::is_same_v<T, bool>) {
    return codec::abi::value::boolean(v);
  } else if constexpr (std::is_same_v<T, std::string>) {
    return codec::abi::value::text(v);
  } else if constexpr (std::is_same_v<T, bytes>) {
    return codec::abi::value::blob(v);
  } else if constexpr (is_vector<T>::value) {
    std::vector<codec::abi::value> items;
    items.reserve(v.size());
    for (const auto& e : v)
      items.push_back(to_abi(e));
    return codec::abi::value::list(std::move(items));
  } else {
    return codec::abi::value::list(field_values(v));
  }
}

inline error kind_error(const std::string& what, const char* expected) {
  return fail(abi_errc::type_mismatch, what + ": expected " + expected);
}

template <class T>
result<T> from_abi(const codec::abi::value& v, const std::string& what);

template <class S>
result<S> struct_from_abi(std::span<const codec::abi::value> values, const std::string& what) {
  if (values.size() != field_count<S>())
    return fail(abi_errc::wrong_length, what + ": expected " + std::to_string(field_count<S>()) + " values, got " +
                                            std::to_string(values.size()));
  size_t i = 0;
  return fill_fields<S>([&](const auto& fl) {
    using M = typename std::decay_t<decltype(fl)>::type;
    return from_abi<M>(values[i++], what + "." + std::string(fl.name));
  });
}

template <class T>
result<T> from_abi(const codec::abi::value& v, const std::string& what) {
  if constexpr (std::is_same_v<T, hash256> || std::is_same_v<T, u256> || std::is_same_v<T, group_id>) {
    const auto* n = std::get_if<u256>(&v.node);
    if (n == nullptr)
      return kind_error(what, "a number");
    if constexpr (std::is_same_v<T, hash256>) {
      return n->to_be();
    } else if constexpr (std::is_same_v<T, group_id>) {
      if (!n->fits_u64())
        return fail(abi_errc::out_of_range, what + ": group id " + n->to_string() + " exceeds 64 bits");
      return static_cast<group_id>(*n);
    } else {
      return *n;
    }
  } else if constexpr (std::is_same_v<T, address>) {
    const auto* a = std::get_if<address>(&v.node);
    if (a == nullptr)
      return kind_error(what, "an address");
    return *a;
  } else if constexpr (std::is_same_v<T, bool>) {
    const auto* b = std::get_if<bool>(&v.node);
    if (b == nullptr)
      return kind_error(what, "a bool");
    return *b;
  } else if constexpr (std::is_same_v<T, std::string>) {
    const auto* s = std::get_if<std::string>(&v.node);
    if (s == nullptr)
      return kind_error(what, "a string");
    return *s;
  } else if constexpr (std::is_same_v<T, bytes>) {
    const auto* b = std::get_if<bytes>(&v.node);
    if (b == nullptr)
      return kind_error(what, "bytes");
    return *b;
  } else {
    const auto* l = std::get_if<std::vector<codec::abi::value>>(&v.node);
    if (l == nullptr)
      return kind_error(what, "a list");
    if constexpr (is_vector<T>::value) {
      T out;
      out.reserve(l->size());
      for (size_t i = 0; i < l->size(); ++i) {
        ENACT_TRY(auto e, from_abi<typename T::value_type>((*l)[i], what + "[" + std::to_string(i) + "]"));
        out.push_back(std::move(e));
      }
      return out;
    } else {
      return struct_from_abi<T>(*l, what);
    }
  }
}

/// Decodes the fields of S from their ABI encoding (the arguments of a call or error).
template <class S>
result<S> decode_fields(bytes_view data, const std::string& what) {
  ENACT_TRY(const auto values, codec::abi::decode(field_types<S>(), data));
  return struct_from_abi<S>(values, what);
}

// ---------------------------------------------------------------------------------------------
// Return values: a list page is two return values, anything else one.

template <class R>
const std::vector<codec::abi::type>& result_types() {
  static const std::vector<codec::abi::type> types = [] {
    if constexpr (is_page<R>::value)
      return std::vector<codec::abi::type>{codec::abi::type::of(abi_type_name<decltype(R::items)>()),
                                           codec::abi::type::of("uint256")};
    else
      return std::vector<codec::abi::type>{codec::abi::type::of(abi_type_name<R>())};
  }();
  return types;
}

template <class R>
std::vector<codec::abi::value> result_values(const R& v) {
  if constexpr (is_page<R>::value)
    return {to_abi(v.items), codec::abi::value::number(v.total)};
  else
    return {to_abi(v)};
}

template <class R>
result<R> result_from_values(const std::vector<codec::abi::value>& values, const std::string& what) {
  if constexpr (is_page<R>::value) {
    R out;
    ENACT_TRY(out.items, from_abi<decltype(out.items)>(values.at(0), what + ".items"));
    ENACT_TRY(out.total, from_abi<u256>(values.at(1), what + ".total"));
    return out;
  } else {
    return from_abi<R>(values.at(0), what);
  }
}

}  // namespace enact::chain::registry::detail
