// SPDX-License-Identifier: Apache-2.0
// EIP-712 encodeType, encodeData and the signing digest (https://eips.ethereum.org/EIPS/eip-712
// §Specification); every value error is reported with the path of the value.
#include <cmath>
#include <cstring>
#include <set>

#include "enact/address.hpp"
#include "enact/codec/hex.hpp"
#include "enact/crypto/keccak.hpp"
#include "enact/eip712/typed_data.hpp"
#include "enact/u256.hpp"
#include "type_string.hpp"

namespace json = boost::json;

namespace enact::eip712 {
using namespace detail;
namespace {

// JavaScript reads JSON numbers as doubles: integers of larger magnitude arrive rounded, and ethers
// refuses them (getBigInt: "overflow"). 2^53 - 1 is Number.MAX_SAFE_INTEGER.
constexpr uint64_t kMaxSafeInteger = (uint64_t{1} << 53) - 1;

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
    ENACT_TRY(const std::string text, encode_type(types_, type));
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

}  // namespace

// --- encodeType -----------------------------------------------------------------------------

result<std::string> encode_type(const type_map& types, std::string_view primary) {
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

result<hash256> type_hash(const type_map& types, std::string_view type) {
  ENACT_TRY(const std::string text, encode_type(types, type));
  return crypto::keccak256(std::string_view(text));
}

// --- encodeData and the digest ----------------------------------------------------------------

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

result<crypto::secp256k1::signature> sign(const typed_data& td, const Secret& key) {
  ENACT_TRY(const hash256 h, digest(td));
  return crypto::secp256k1::sign(h, key);
}

result<address> recover(const typed_data& td, bytes_view sig65) {
  ENACT_TRY(const hash256 h, digest(td));
  return crypto::secp256k1::recover_address(h, sig65);
}

}  // namespace enact::eip712
