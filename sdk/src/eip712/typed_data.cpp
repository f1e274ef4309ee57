// SPDX-License-Identifier: Apache-2.0
// EIP-712 encoding (https://eips.ethereum.org/EIPS/eip-712). Type strings are read where they are
// used (`Person[2][]` is an array of `Person[2]`, the last suffix being the outermost dimension,
// as in Solidity), and every value error is reported with the path of the value.
#include "enact/eip712/typed_data.hpp"

#include <cmath>
#include <cstring>
#include <optional>
#include <set>
#include <utility>

#include "enact/codec/hex.hpp"
#include "enact/u256.hpp"
#include "enact/address.hpp"
#include "enact/crypto/keccak.hpp"

namespace json = boost::json;

namespace enact::eip712 {
namespace {

constexpr std::string_view kDomainType = "EIP712Domain";

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

// JavaScript reads JSON numbers as doubles: integers of larger magnitude arrive rounded, and ethers
// refuses them (getBigInt: "overflow"). 2^53 - 1 is Number.MAX_SAFE_INTEGER.
constexpr uint64_t kMaxSafeInteger = (uint64_t{1} << 53) - 1;

// --- type strings ---------------------------------------------------------------------------

enum class atomic_kind { uint_, int_, address, bool_, bytes_fixed, bytes, string };
struct atomic {
  atomic_kind kind;
  unsigned size = 0;  // bits for uintN/intN, bytes for bytesN
};

bool all_digits(std::string_view s) noexcept {
  if (s.empty())
    return false;
  for (char c : s)
    if (c < '0' || c > '9')
      return false;
  return true;
}

/// A decimal without leading zeros and at most 9 digits (so it fits any integer type used here).
std::optional<unsigned> small_decimal(std::string_view s) noexcept {
  if (!all_digits(s) || s.size() > 9 || (s.size() > 1 && s[0] == '0'))
    return std::nullopt;
  unsigned v = 0;
  for (char c : s)
    v = v * 10 + static_cast<unsigned>(c - '0');
  return v;
}

std::optional<atomic> parse_atomic(std::string_view t) noexcept {
  if (t == "address")
    return atomic{atomic_kind::address};
  if (t == "bool")
    return atomic{atomic_kind::bool_};
  if (t == "string")
    return atomic{atomic_kind::string};
  if (t == "bytes")
    return atomic{atomic_kind::bytes};
  if (t.starts_with("bytes")) {
    auto n = small_decimal(t.substr(5));
    if (n && *n >= 1 && *n <= 32)
      return atomic{atomic_kind::bytes_fixed, *n};
    return std::nullopt;
  }
  const bool is_uint = t.starts_with("uint");
  if (is_uint || t.starts_with("int")) {
    auto n = small_decimal(t.substr(is_uint ? 4 : 3));
    if (n && *n >= 8 && *n <= 256 && *n % 8 == 0)
      return atomic{is_uint ? atomic_kind::uint_ : atomic_kind::int_, *n};
  }
  return std::nullopt;
}

/// A name that reads as an atomic type, valid or not (`uint`, `int7`, `bytes33`): never a struct.
bool looks_atomic(std::string_view t) noexcept {
  if (t == "address" || t == "bool" || t == "string")
    return true;
  for (std::string_view prefix : {"uint", "int", "bytes"}) {
    if (t.starts_with(prefix)) {
      const auto rest = t.substr(prefix.size());
      if (rest.empty() || all_digits(rest))
        return true;
    }
  }
  return false;
}

/// An identifier: letters, digits, '_' and the characters of `also`, not starting with a digit.
bool is_identifier(std::string_view s, std::string_view also) noexcept {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9'))
    return false;
  for (char c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                    also.find(c) != std::string_view::npos;
    if (!ok)
      return false;
  }
  return true;
}

// \w only: eth-sig-util finds dependencies with /^\w*/, so any other character would make it
// compute a different encodeType.
bool is_struct_name(std::string_view s) noexcept { return is_identifier(s, ""); }

bool is_member_name(std::string_view s) noexcept { return is_identifier(s, "$"); }

/// The outermost array dimension of a type: `T[3]` -> {T, 3}, `T[]` -> {T, nullopt}.
struct array_split {
  std::string_view element;
  std::optional<size_t> count;
};
enum class split_status { not_array, ok, malformed };
split_status split_array(std::string_view t, array_split& out) noexcept {
  if (t.empty() || t.back() != ']')
    return split_status::not_array;
  const size_t open = t.rfind('[');
  if (open == std::string_view::npos || open == 0)
    return split_status::malformed;
  const auto inside = t.substr(open + 1, t.size() - open - 2);
  out.element = t.substr(0, open);
  if (inside.empty()) {
    out.count.reset();
    return split_status::ok;
  }
  auto n = small_decimal(inside);
  if (!n || *n == 0)
    return split_status::malformed;
  out.count = *n;
  return split_status::ok;
}

/// The type with every array suffix removed, or nullopt when a suffix is malformed.
std::optional<std::string_view> base_of(std::string_view t) noexcept {
  array_split s;
  for (;;) {
    switch (split_array(t, s)) {
      case split_status::not_array:
        if (t.find_first_of("[]") != std::string_view::npos)
          return std::nullopt;
        return t;
      case split_status::malformed:
        return std::nullopt;
      case split_status::ok:
        t = s.element;
    }
  }
}

bool has_dynamic_dimension(std::string_view t) noexcept { return t.find("[]") != t.npos; }

std::string quoted(std::string_view s) { return "'" + std::string(s) + "'"; }

// --- value paths ----------------------------------------------------------------------------

/// A value's place in the document, rendered only when an error needs it.
struct path {
  const path* parent = nullptr;
  std::string_view key;  // the root's text, or a member name
  size_t index = 0;
  bool is_index = false;

  [[nodiscard]] path member(std::string_view name) const { return {this, name, 0, false}; }
  [[nodiscard]] path element(size_t i) const { return {this, {}, i, true}; }
  [[nodiscard]] std::string str() const {
    if (parent == nullptr)
      return std::string(key);
    std::string s = parent->str();
    if (is_index)
      return s + "[" + std::to_string(index) + "]";
    return s + "." + std::string(key);
  }
};

// --- encodeType -----------------------------------------------------------------------------

result<std::string> encode_type_impl(const type_map& types, std::string_view primary) {
  const auto root = types.find(primary);
  if (root == types.end())
    return fail(eip712_errc::unknown_type, "types: unknown type " + quoted(primary));
  // Every struct reachable from the primary, found without recursion (a chain of thousands of
  // types must not exhaust the stack).
  std::set<std::string_view> deps;
  std::vector<const std::vector<member>*> pending{&root->second};
  while (!pending.empty()) {
    const auto* members = pending.back();
    pending.pop_back();
    for (const auto& m : *members) {
      const auto base = base_of(m.type);
      if (!base)
        return fail(eip712_errc::bad_type, "types: invalid type " + quoted(m.type));
      if (parse_atomic(*base))
        continue;
      const auto it = types.find(*base);
      if (it == types.end())
        return fail(eip712_errc::unknown_type,
                    "types: unknown type " + quoted(*base) + " (member " + quoted(m.name) + ")");
      if (it->first != primary && deps.insert(it->first).second)
        pending.push_back(&it->second);
    }
  }
  std::string out;
  auto append = [&](std::string_view name, const std::vector<member>& members) {
    out += name;
    out += '(';
    for (size_t i = 0; i < members.size(); ++i) {
      if (i)
        out += ',';
      out += members[i].type;
      out += ' ';
      out += members[i].name;
    }
    out += ')';
  };
  append(primary, root->second);
  for (auto name : deps)
    append(name, types.find(name)->second);
  return out;
}

// --- encodeData -----------------------------------------------------------------------------

class encoder {
 public:
  encoder(const type_map& types, extra_fields extra) : types_(types), extra_(extra) {}

  /// typeHash ‖ member words, appended to `out`.
  result<void> encode_struct(std::string_view type, const json::value& v, const path& at, size_t depth, bytes& out) {
    const auto def = types_.find(type);
    if (def == types_.end())
      return fail(eip712_errc::unknown_type, at.str() + ": unknown type " + quoted(type));
    if (depth > kMaxDepth)
      return fail(eip712_errc::too_deep, at.str() + ": nested deeper than " + std::to_string(kMaxDepth) + " levels");
    const auto* obj = v.if_object();
    if (obj == nullptr)
      return fail(eip712_errc::bad_value, at.str() + ": expected an object for " + quoted(type));
    ENACT_TRY(const hash256 th, type_hash_of(def->first));
    out.reserve(out.size() + 32 * (def->second.size() + 1));
    out.insert(out.end(), th.begin(), th.end());
    for (const auto& m : def->second) {
      const auto sub = at.member(m.name);
      const auto* mv = obj->if_contains(m.name);
      if (mv == nullptr)
        return fail(eip712_errc::missing_field, sub.str() + ": missing (member of " + quoted(type) + ")");
      hash256 w{};
      ENACT_TRY_VOID(encode_word(m.type, *mv, sub, depth + 1, w));
      out.insert(out.end(), w.begin(), w.end());
    }
    if (extra_ == extra_fields::reject) {
      for (const auto& kv : *obj) {
        bool declared = false;
        for (const auto& m : def->second)
          declared = declared || m.name == kv.key();
        if (!declared)
          return fail(eip712_errc::extra_field, at.member(kv.key()).str() + ": not a member of " + quoted(type));
      }
    }
    return {};
  }

  /// The 32-byte word that stands for a value of `type` in its parent's encoding.
  result<void> encode_word(std::string_view type, const json::value& v, const path& at, size_t depth, hash256& out) {
    if (v.is_null())
      return fail(eip712_errc::bad_value, at.str() + ": null is not a value");
    if (const auto a = parse_atomic(type))
      return encode_atomic(*a, type, v, at, out);
    array_split split;
    switch (split_array(type, split)) {
      case split_status::malformed:
        return fail(eip712_errc::bad_type, at.str() + ": invalid type " + quoted(type));
      case split_status::ok: {
        if (depth > kMaxDepth)
          return fail(eip712_errc::too_deep,
                      at.str() + ": nested deeper than " + std::to_string(kMaxDepth) + " levels");
        const auto* arr = v.if_array();
        if (arr == nullptr)
          return fail(eip712_errc::bad_value, at.str() + ": expected an array for " + quoted(type));
        if (split.count && *split.count != arr->size())
          return fail(eip712_errc::bad_value, at.str() + ": expected " + std::to_string(*split.count) +
                                                  " elements for " + quoted(type) + ", got " +
                                                  std::to_string(arr->size()));
        // EIP-712 §encodeData: an array is the keccak of its elements' words concatenated.
        bytes words(32 * arr->size());
        for (size_t i = 0; i < arr->size(); ++i) {
          hash256 w{};
          ENACT_TRY_VOID(encode_word(split.element, (*arr)[i], at.element(i), depth + 1, w));
          std::memcpy(words.data() + 32 * i, w.data(), 32);
        }
        out = crypto::keccak256(bytes_view(words));
        return {};
      }
      case split_status::not_array:
        break;
    }
    bytes data;
    ENACT_TRY_VOID(encode_struct(type, v, at, depth, data));
    out = crypto::keccak256(bytes_view(data));
    return {};
  }

 private:
  result<hash256> type_hash_of(const std::string& type) {
    if (auto it = hashes_.find(type); it != hashes_.end())
      return it->second;
    ENACT_TRY(const std::string text, encode_type_impl(types_, type));
    const hash256 h = crypto::keccak256(std::string_view(text));
    hashes_.emplace(type, h);
    return h;
  }

  static result<void> encode_atomic(const atomic& a, std::string_view type, const json::value& v, const path& at,
                                    hash256& out) {
    switch (a.kind) {
      case atomic_kind::uint_:
      case atomic_kind::int_:
        return encode_integer(a, type, v, at, out);
      case atomic_kind::address: {
        const auto* s = v.if_string();
        if (s == nullptr)
          return fail(eip712_errc::bad_value, at.str() + ": expected an address string");
        auto addr = parse_address_strict(std::string_view(*s), at.str());
        if (!addr)
          return fail(eip712_errc::bad_value, addr.err().message);
        out = hash256{};
        std::memcpy(out.data() + 12, addr->data(), 20);
        return {};
      }
      case atomic_kind::bool_: {
        if (!v.is_bool())
          return fail(eip712_errc::bad_value, at.str() + ": expected true or false for bool");
        out = hash256{};
        out[31] = v.get_bool() ? 1 : 0;
        return {};
      }
      case atomic_kind::bytes_fixed: {
        const auto* s = v.if_string();
        if (s == nullptr)
          return fail(eip712_errc::bad_value, at.str() + ": expected 0x hex for " + quoted(type));
        auto b = codec::hex::decode_prefixed(std::string_view(*s), at.str());
        if (!b)
          return fail(eip712_errc::bad_value, b.err().message);
        if (b->size() != a.size)
          return fail(eip712_errc::bad_value, at.str() + ": expected " + std::to_string(a.size) + " bytes for " +
                                                  quoted(type) + ", got " + std::to_string(b->size()));
        // Left-aligned, zero-padded on the right (ABI encoding of bytesN).
        out = hash256{};
        std::memcpy(out.data(), b->data(), b->size());
        return {};
      }
      case atomic_kind::bytes: {
        const auto* s = v.if_string();
        if (s == nullptr)
          return fail(eip712_errc::bad_value, at.str() + ": expected 0x hex for bytes");
        auto b = codec::hex::decode_prefixed(std::string_view(*s), at.str());
        if (!b)
          return fail(eip712_errc::bad_value, b.err().message);
        out = crypto::keccak256(bytes_view(*b));
        return {};
      }
      case atomic_kind::string: {
        const auto* s = v.if_string();
        if (s == nullptr)
          return fail(eip712_errc::bad_value, at.str() + ": expected a string");
        out = crypto::keccak256(std::string_view(*s));
        return {};
      }
    }
    return fail(eip712_errc::bad_type, at.str() + ": invalid type " + quoted(type));
  }

  static result<void> encode_integer(const atomic& a, std::string_view type, const json::value& v, const path& at,
                                     hash256& out) {
    bool negative = false;
    u256 mag;
    auto inexact = [&] {
      return fail(
          eip712_errc::out_of_range,
          at.str() + ": JSON number is not an exact integer below 2^53 (write large " + "values as decimal strings)");
    };
    switch (v.kind()) {
      case json::kind::int64: {
        const int64_t i = v.get_int64();
        negative = i < 0;
        const uint64_t m = negative ? uint64_t{0} - static_cast<uint64_t>(i) : static_cast<uint64_t>(i);
        if (m > kMaxSafeInteger)
          return inexact();
        mag = m;
        break;
      }
      case json::kind::uint64:
        if (v.get_uint64() > kMaxSafeInteger)
          return inexact();
        mag = v.get_uint64();
        break;
      case json::kind::double_: {
        const double d = v.get_double();
        if (!std::isfinite(d) || std::trunc(d) != d || std::fabs(d) > double(kMaxSafeInteger))
          return inexact();
        negative = d < 0;
        mag = static_cast<uint64_t>(std::fabs(d));
        break;
      }
      case json::kind::string: {
        std::string_view s = v.get_string();
        negative = !s.empty() && s[0] == '-';
        if (negative)
          s.remove_prefix(1);
        // eth-sig-util reads strings with BigInt(), which refuses a signed hex literal.
        if (negative && codec::hex::detail::has_prefix(s))
          return fail(eip712_errc::bad_value, at.str() + ": a negative value must be written in decimal");
        auto parsed = u256::from_string(s, at.str());
        if (!parsed) {
          if (parsed.code() == u256_errc::overflow)
            return fail(eip712_errc::out_of_range, at.str() + ": " + std::string(type) + " out of range");
          return fail(eip712_errc::bad_value, parsed.err().message);
        }
        mag = *parsed;
        break;
      }
      default:
        return fail(eip712_errc::bad_value, at.str() + ": expected a number or a numeric string for " + quoted(type));
    }
    bool in_range = false;
    if (a.kind == atomic_kind::uint_) {
      in_range = (!negative || !mag) && mag.fits_bits(a.size);
    } else {
      // intN holds [-2^(N-1), 2^(N-1) - 1].
      in_range = mag.fits_bits(a.size - 1) || (negative && mag == (u256{1} << (a.size - 1)));
    }
    if (!in_range)
      return fail(eip712_errc::out_of_range, at.str() + ": " + std::string(type) + " out of range");
    out = (negative ? -mag : mag).to_be();
    return {};
  }

  const type_map& types_;
  extra_fields extra_;
  std::map<std::string, hash256, std::less<>> hashes_;
};

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

result<std::string> encode_type(const type_map& types, std::string_view primary) {
  return encode_type_impl(types, primary);
}

result<hash256> type_hash(const type_map& types, std::string_view type) {
  ENACT_TRY(const std::string text, encode_type_impl(types, type));
  return crypto::keccak256(std::string_view(text));
}

result<bytes> encode_data(const type_map& types, std::string_view type, const json::value& value, extra_fields extra,
                          std::string_view where) {
  encoder enc(types, extra);
  bytes out;
  ENACT_TRY_VOID(enc.encode_struct(type, value, path{nullptr, where}, 1, out));
  return out;
}

result<hash256> hash_struct(const type_map& types, std::string_view type, const json::value& value, extra_fields extra,
                            std::string_view where) {
  ENACT_TRY(const bytes data, encode_data(types, type, value, extra, where));
  return crypto::keccak256(bytes_view(data));
}

result<hash256> domain_separator(const typed_data& td) {
  // Undeclared domain keys are always refused: ethers would hash them, eth-sig-util would not.
  return hash_struct(td.types, kDomainType, json::value(td.domain), extra_fields::reject, "domain");
}

result<hash256> digest(const typed_data& td, extra_fields extra) {
  ENACT_TRY(const hash256 separator, domain_separator(td));
  // EIP-712 §Specification: "\x19\x01" ‖ domainSeparator ‖ hashStruct(message).
  uint8_t buf[2 + 32 + 32] = {0x19, 0x01};
  std::memcpy(buf + 2, separator.data(), 32);
  if (td.primary_type == kDomainType)
    return crypto::keccak256(bytes_view(buf, 2 + 32));
  ENACT_TRY(const hash256 message, hash_struct(td.types, td.primary_type, td.message, extra));
  std::memcpy(buf + 34, message.data(), 32);
  return crypto::keccak256(bytes_view(buf, sizeof buf));
}

result<crypto::secp256k1::signature> sign(const typed_data& td, const secret& key) {
  ENACT_TRY(const hash256 h, digest(td));
  return crypto::secp256k1::sign(h, key);
}

result<address> recover(const typed_data& td, bytes_view sig65) {
  ENACT_TRY(const hash256 h, digest(td));
  return crypto::secp256k1::recover_address(h, sig65);
}

}  // namespace enact::eip712
