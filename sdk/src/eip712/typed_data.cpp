// SPDX-License-Identifier: Apache-2.0
// EIP-712 typed data read from JSON (https://eips.ethereum.org/EIPS/eip-712): `types` is checked
// whole (names, references, the EIP712Domain members, cycles) before anything is encoded.
#include "enact/eip712/typed_data.hpp"

#include <map>
#include <utility>

#include "type_string.hpp"

namespace json = boost::json;

namespace enact::eip712 {
using namespace detail;
namespace {

// The members EIP712Domain may declare, in the only order accepted (EIP-712 §Definition of
// domainSeparator; ethers' TypedDataEncoder.hashDomain builds the type in this order).
struct domain_member {
  std::string_view name;
  std::string_view type;
};
constexpr domain_member kDomainMembers[] = {{"name", "string"},
                                            {"version", "string"},
                                            {"chainId", "uint256"},
                                            {"verifyingContract", "address"},
                                            {"salt", "bytes32"}};

// --- validation of `types` ------------------------------------------------------------------

result<void> check_domain_type(const std::vector<member>& members) {
  size_t next = 0;  // index in kDomainMembers the next member may start from
  for (const auto& m : members) {
    size_t k = 0;
    while (k < std::size(kDomainMembers) && kDomainMembers[k].name != m.name)
      ++k;
    if (k == std::size(kDomainMembers))
      return fail(eip712_errc::bad_type, "types.EIP712Domain: member " + quoted(m.name) +
                                             " is not one of name, version, chainId, verifyingContract, salt");
    if (m.type != kDomainMembers[k].type)
      return fail(eip712_errc::bad_type, "types.EIP712Domain: member " + quoted(m.name) + " must have type " +
                                             quoted(kDomainMembers[k].type) + ", not " + quoted(m.type));
    if (k < next)
      return fail(eip712_errc::bad_type, "types.EIP712Domain: member " + quoted(m.name) +
                                             " out of order (name, version, chainId, verifyingContract, salt)");
    next = k + 1;
  }
  return {};
}

/// A struct that contains itself along members whose types have no dynamic dimension has no
/// finite value. Iterative three-colour DFS over those edges.
result<void> check_cycles(const type_map& types) {
  enum class colour : uint8_t { white, grey, black };
  std::map<std::string_view, colour> state;
  for (const auto& [name, _] : types)
    state.emplace(name, colour::white);
  struct frame {
    std::string_view name;
    const std::vector<member>* members;
    size_t next;
  };
  for (const auto& [start, start_members] : types) {
    if (state[start] != colour::white)
      continue;
    std::vector<frame> stack{{start, &start_members, 0}};
    state[start] = colour::grey;
    while (!stack.empty()) {
      auto& f = stack.back();
      if (f.next == f.members->size()) {
        state[f.name] = colour::black;
        stack.pop_back();
        continue;
      }
      const member& m = (*f.members)[f.next++];
      if (has_dynamic_dimension(m.type))
        continue;
      const auto base = base_of(m.type);
      if (!base)
        continue;
      const auto it = types.find(*base);
      if (it == types.end())
        continue;
      const auto c = state[it->first];
      if (c == colour::grey)
        return fail(eip712_errc::cyclic_type, "types." + it->first + ": cyclic type (contains itself through " +
                                                  std::string(f.name) + "." + m.name +
                                                  " with no dynamic array on the way)");
      if (c == colour::white) {
        state[it->first] = colour::grey;
        stack.push_back({it->first, &it->second, 0});
      }
    }
  }
  return {};
}

}  // namespace

// --- public API -----------------------------------------------------------------------------

result<type_map> parse_types(const json::value& types_json) {
  const auto* obj = types_json.if_object();
  if (obj == nullptr)
    return fail(eip712_errc::bad_json, "types: expected an object");
  type_map types;
  for (const auto& kv : *obj) {
    const std::string name(kv.key());
    const std::string where = "types." + name;
    if (!is_struct_name(name) || looks_atomic(name))
      return fail(eip712_errc::bad_type, "types: invalid struct name " + quoted(name));
    const auto* arr = kv.value().if_array();
    if (arr == nullptr)
      return fail(eip712_errc::bad_json, where + ": expected an array of {name, type}");
    std::vector<member> members;
    members.reserve(arr->size());
    for (size_t i = 0; i < arr->size(); ++i) {
      const auto* field = (*arr)[i].if_object();
      const json::value* n = field ? field->if_contains("name") : nullptr;
      const json::value* t = field ? field->if_contains("type") : nullptr;
      if (n == nullptr || t == nullptr || !n->is_string() || !t->is_string())
        return fail(eip712_errc::bad_json,
                    where + "[" + std::to_string(i) + R"(]: expected {"name": string, "type": string})");
      member m{std::string(n->get_string()), std::string(t->get_string())};
      if (!is_member_name(m.name))
        return fail(eip712_errc::bad_type, where + ": invalid member name " + quoted(m.name));
      for (const auto& prev : members)
        if (prev.name == m.name)
          return fail(eip712_errc::bad_type, where + ": duplicate member " + quoted(m.name));
      members.push_back(std::move(m));
    }
    types.emplace(name, std::move(members));
  }
  // References are checked once every name is known.
  for (const auto& [name, members] : types) {
    for (const auto& m : members) {
      const auto base = base_of(m.type);
      if (!base)
        return fail(eip712_errc::bad_type, "types." + name + ": invalid array suffix in " + quoted(m.type) +
                                               " (member " + quoted(m.name) + ")");
      if (!parse_atomic(*base) && types.find(*base) == types.end())
        return fail(eip712_errc::unknown_type,
                    "types." + name + ": unknown type " + quoted(*base) + " (member " + quoted(m.name) + ")");
    }
  }
  if (const auto d = types.find(kDomainType); d != types.end())
    ENACT_TRY_VOID(check_domain_type(d->second));
  ENACT_TRY_VOID(check_cycles(types));
  return types;
}

result<typed_data> from_json(const json::value& doc) {
  const auto* obj = doc.if_object();
  if (obj == nullptr)
    return fail(eip712_errc::bad_json, "typed data: expected a JSON object");
  for (std::string_view key : {"types", "primaryType", "domain", "message"})
    if (!obj->contains(key))
      return fail(eip712_errc::missing_field, std::string(key) + ": missing");

  typed_data td;
  ENACT_TRY(td.types, parse_types(obj->at("types")));
  const auto d = td.types.find(kDomainType);
  if (d == td.types.end())
    return fail(eip712_errc::missing_field, "types.EIP712Domain: missing");

  const auto& primary = obj->at("primaryType");
  if (!primary.is_string())
    return fail(eip712_errc::bad_json, "primaryType: expected a string");
  td.primary_type = std::string(primary.get_string());
  if (td.types.find(td.primary_type) == td.types.end())
    return fail(eip712_errc::unknown_type, "primaryType: unknown type " + quoted(td.primary_type));

  const auto* domain = obj->at("domain").if_object();
  if (domain == nullptr)
    return fail(eip712_errc::bad_json, "domain: expected an object");
  for (const auto& kv : *domain) {
    bool declared = false;
    for (const auto& m : d->second)
      declared = declared || m.name == kv.key();
    if (!declared)
      return fail(eip712_errc::extra_field, "domain." + std::string(kv.key()) + ": not a member of types.EIP712Domain");
  }
  td.domain = *domain;

  const auto& message = obj->at("message");
  if (!message.is_object())
    return fail(eip712_errc::bad_json, "message: expected an object");
  td.message = message;
  return td;
}

result<typed_data> parse(std::string_view text) {
  json::parse_options opt;
  opt.max_depth = kMaxDepth;
  std::error_code ec;
  json::value doc = json::parse(text, ec, {}, opt);
  if (ec)
    return fail(eip712_errc::bad_json, "typed data: invalid JSON (" + ec.message() + ")");
  return from_json(doc);
}

json::object to_json(const typed_data& td) {
  json::object types;
  for (const auto& [name, members] : td.types) {
    json::array arr;
    arr.reserve(members.size());
    for (const auto& m : members)
      arr.push_back(json::object{{"name", m.name}, {"type", m.type}});
    types.emplace(name, std::move(arr));
  }
  return json::object{
      {"types", std::move(types)}, {"primaryType", td.primary_type}, {"domain", td.domain}, {"message", td.message}};
}

}  // namespace enact::eip712
