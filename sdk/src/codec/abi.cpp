// SPDX-License-Identifier: Apache-2.0
// Solidity ABI: type parsing, head/tail encoding, strict decoding, packed mode and signatures
// (the JSON and command-line bridge: abi_json.cpp).
#include "enact/codec/abi.hpp"

#include <algorithm>
#include <limits>

#include "abi_detail.hpp"

#include "enact/codec/hex.hpp"
#include "enact/address.hpp"

namespace enact::codec::abi {

namespace detail {

namespace {
const char* value_kind(const value& v) {
  static constexpr const char* kNames[] = {"a number", "a bool", "an address", "bytes", "a string", "a list"};
  return kNames[v.node.index()];
}
}  // namespace

error mismatch(const type& t, const value& v, const path& p) {
  return fail(abi_errc::type_mismatch, p.str() + ": expected " + t.canonical() + ", got " + value_kind(v));
}

error wrong_count(const path& p, const char* what, size_t expected, size_t got) {
  return fail(abi_errc::wrong_length,
              p.str() + ": expected " + std::to_string(expected) + " " + what + ", got " + std::to_string(got));
}

}  // namespace detail

using detail::check_type;
using detail::mismatch;
using detail::npos;
using detail::path;
using detail::static_size_checked;
using detail::tree_depth;
using detail::wrong_count;

// ---------------------------------------------------------------------------------------------
// Type structure.

size_t detail::tree_depth(const type& t) {
  size_t d = 0;
  for (const type& c : t.components)
    d = std::max(d, tree_depth(c));
  return d + 1;
}

size_t detail::static_size_checked(const type& t) {
  switch (t.kind) {
    case type_kind::fixed_array: {
      const size_t e = static_size_checked(t.element());
      if (e == npos || (t.size != 0 && e > kMaxStaticSize / t.size))
        return npos;
      return e * t.size;
    }
    case type_kind::tuple: {
      size_t sum = 0;
      for (const type& c : t.components) {
        const size_t e = c.is_dynamic() ? 32 : static_size_checked(c);
        if (e == npos || e > kMaxStaticSize - sum)
          return npos;
        sum += e;
      }
      return sum;
    }
    default:
      return 32;
  }
}

/// Validates a type built in code (parse() output always passes): the same limits parse enforces.
result<void> detail::check_type(const type& t, size_t depth) {
  const auto bad = [&](const std::string& why) {
    return fail(abi_errc::bad_type, "abi type: " + why);
  };
  if (depth > kMaxTypeDepth)
    return bad("nested deeper than " + std::to_string(kMaxTypeDepth) + " levels");
  switch (t.kind) {
    case type_kind::uint_n:
    case type_kind::int_n:
      if (t.bits == 0 || t.bits > 256 || t.bits % 8 != 0)
        return bad("invalid integer width " + std::to_string(t.bits));
      return {};
    case type_kind::fixed_bytes:
      if (t.size == 0 || t.size > 32)
        return bad("invalid bytesN size " + std::to_string(t.size));
      return {};
    case type_kind::address:
    case type_kind::boolean:
    case type_kind::bytes:
    case type_kind::string:
      return {};
    case type_kind::array:
    case type_kind::fixed_array:
      if (t.components.size() != 1)
        return bad("an array needs exactly one element type");
      if (t.kind == type_kind::fixed_array && t.size == 0)
        return bad("zero-length fixed array");
      ENACT_TRY_VOID(check_type(t.element(), depth + 1));
      break;
    case type_kind::tuple:
      if (t.components.empty())
        return bad("empty tuple");
      for (const type& c : t.components)
        ENACT_TRY_VOID(check_type(c, depth + 1));
      break;
    default:
      return bad("unknown kind");
  }
  if (!t.is_dynamic() && static_size_checked(t) == npos)
    return bad("static encoding larger than " + std::to_string(kMaxStaticSize) + " bytes");
  return {};
}

namespace {

// ---------------------------------------------------------------------------------------------
// Encoding.

void put_word(bytes& out, const u256& v) {
  const size_t n = out.size();
  out.resize(n + 32);
  v.store_be(out.data() + n);
}

void put_padded(bytes& out, bytes_view b) {
  out.insert(out.end(), b.begin(), b.end());
  out.resize(out.size() + (32 - b.size() % 32) % 32, 0);
}

result<void> encode_value(const type& t, const value& v, bytes& out, const path& p);

/// Writes a value of an elementary static type (uint<M>, int<M>, address, bool, bytes<M>): in a
/// whole 32-byte word (`full_word`: the standard encoding, and elements of arrays in packed mode)
/// or in its own width (packed mode). An integer out of range is named in the error when
/// `show_value`, else called "value".
result<void> put_static(const type& t, const value& v, bytes& out, const path& p, bool full_word, bool show_value) {
  switch (t.kind) {
    case type_kind::uint_n:
    case type_kind::int_n: {
      if (!v.is_number())
        return mismatch(t, v, p);
      const u256& n = std::get<u256>(v.node);
      const bool is_uint = t.kind == type_kind::uint_n;
      if (!(is_uint ? n.fits_bits(t.bits) : n.fits_signed_bits(t.bits))) {
        const std::string shown = !show_value ? "value" : is_uint ? n.to_string() : n.to_signed_string();
        return fail(abi_errc::out_of_range, p.str() + ": " + shown + " out of range for " + t.canonical());
      }
      const hash256 be = n.to_be();
      const size_t width = full_word ? 32 : t.bits / 8;
      out.insert(out.end(), be.end() - static_cast<std::ptrdiff_t>(width), be.end());
      return {};
    }
    case type_kind::address: {
      if (!v.is_address())
        return mismatch(t, v, p);
      if (full_word)
        out.resize(out.size() + 12, 0);
      const auto& a = std::get<address>(v.node);
      out.insert(out.end(), a.begin(), a.end());
      return {};
    }
    case type_kind::boolean:
      if (!v.is_bool())
        return mismatch(t, v, p);
      if (full_word)
        out.resize(out.size() + 31, 0);
      out.push_back(std::get<bool>(v.node) ? 1 : 0);
      return {};
    case type_kind::fixed_bytes: {
      if (!v.is_bytes())
        return mismatch(t, v, p);
      const auto& b = std::get<bytes>(v.node);
      if (b.size() != t.size)
        return wrong_count(p, "bytes", t.size, b.size());
      if (full_word)
        put_padded(out, b);
      else
        out.insert(out.end(), b.begin(), b.end());
      return {};
    }
    default:
      return fail(abi_errc::bad_type, p.str() + ": unknown type kind");
  }
}

/// The elements of `v` for the array type `t` (T[] or T[k], whose length they must have).
result<std::span<const value>> checked_elements(const type& t, const value& v, const path& p) {
  if (!v.is_list())
    return mismatch(t, v, p);
  const auto& items = std::get<std::vector<value>>(v.node);
  if (t.kind == type_kind::fixed_array && items.size() != t.size)
    return wrong_count(p, "elements", t.size, items.size());
  return std::span<const value>(items);
}

/// The tuple encoding of n values (ABI spec: enc((X1,...,Xk)) = head(X1)...head(Xk)
/// tail(X1)...tail(Xk)); type_at(i) gives the i-th type, offsets are relative to the start.
template <class TypeAt, class PathAt>
result<void> encode_sequence(size_t n, TypeAt type_at, std::span<const value> values, bytes& out, PathAt path_at) {
  size_t head = 0;
  for (size_t i = 0; i < n; ++i)
    head += type_at(i).head_size();
  bytes tail;
  out.reserve(out.size() + head);
  for (size_t i = 0; i < n; ++i) {
    const type& t = type_at(i);
    const path cp = path_at(i);
    if (t.is_dynamic()) {
      put_word(out, u256{head + tail.size()});
      ENACT_TRY_VOID(encode_value(t, values[i], tail, cp));
    } else {
      ENACT_TRY_VOID(encode_value(t, values[i], out, cp));
    }
  }
  out.insert(out.end(), tail.begin(), tail.end());
  return {};
}

result<void> encode_value(const type& t, const value& v, bytes& out, const path& p) {
  switch (t.kind) {
    case type_kind::bytes:
    case type_kind::string: {
      bytes_view b;
      if (t.kind == type_kind::bytes && v.is_bytes()) {
        b = std::get<bytes>(v.node);
      } else if (t.kind == type_kind::string && v.is_string()) {
        b = as_bytes(std::get<std::string>(v.node));
      } else {
        return mismatch(t, v, p);
      }
      put_word(out, u256{b.size()});
      put_padded(out, b);
      return {};
    }
    case type_kind::array:
    case type_kind::fixed_array: {
      ENACT_TRY(const std::span<const value> items, checked_elements(t, v, p));
      if (t.kind == type_kind::array)
        put_word(out, u256{items.size()});
      return encode_sequence(
          items.size(), [&](size_t) -> const type& { return t.element(); }, items, out,
          [&](size_t i) { return p.child(i, false); });
    }
    case type_kind::tuple: {
      if (!v.is_list())
        return mismatch(t, v, p);
      const auto& items = std::get<std::vector<value>>(v.node);
      if (items.size() != t.components.size())
        return wrong_count(p, "tuple components", t.components.size(), items.size());
      return encode_sequence(
          items.size(), [&](size_t i) -> const type& { return t.components[i]; }, items, out,
          [&](size_t i) { return p.child(i, true); });
    }
    default:  // uint<M>, int<M>, address, bool, bytes<M>
      return put_static(t, v, out, p, true, true);
  }
}

// ---------------------------------------------------------------------------------------------
// Decoding. Every read is bounds-checked; every count is checked against the bytes that remain
// before anything is allocated. A budget bounds what aliased offsets (many heads pointing at the
// same tail) could otherwise multiply: a canonical encoding materialises at most one value per
// 32-byte word per level of type nesting, and at most as many payload bytes as it holds.

struct decoder {
  bytes_view data;
  size_t nodes_left = 0;
  size_t payload_left = 0;

  [[nodiscard]] size_t avail(size_t pos) const { return pos > data.size() ? 0 : data.size() - pos; }

  result<u256> word(size_t pos, const path& p) const {
    if (avail(pos) < 32)
      return fail(abi_errc::truncated, p.str() + ": data too short (needs 32 bytes at offset " + std::to_string(pos) +
                                           ", has " + std::to_string(data.size()) + ")");
    return u256::load_be(data.data() + pos);
  }

  result<void> charge_nodes(size_t n, const path& p) {
    if (n > nodes_left)
      return fail(abi_errc::too_large, p.str() +
                                           ": decoded data larger than its encoding "
                                           "(offsets pointing at shared data)");
    nodes_left -= n;
    return {};
  }

  template <class TypeAt, class PathAt>
  result<std::vector<value>> sequence(size_t n, TypeAt type_at, size_t base, const path& p, PathAt path_at) {
    ENACT_TRY_VOID(charge_nodes(n, p));
    std::vector<value> out;
    out.reserve(n);
    size_t head = base;
    for (size_t i = 0; i < n; ++i) {
      const type& t = type_at(i);
      const path cp = path_at(i);
      if (t.is_dynamic()) {
        ENACT_TRY(u256 off, word(head, cp));
        if (!off.fits_u64() || static_cast<uint64_t>(off) > avail(base))
          return fail(abi_errc::bad_offset, cp.str() + ": offset " + off.to_string() + " points outside the data (" +
                                                std::to_string(avail(base)) + " bytes from the enclosing start)");
        ENACT_TRY(value v, decode_value(t, base + static_cast<size_t>(off), cp));
        out.push_back(std::move(v));
      } else {
        ENACT_TRY(value v, decode_value(t, head, cp));
        out.push_back(std::move(v));
      }
      head += t.head_size();
    }
    return out;
  }

  /// Fails when `count` elements of head size `h` cannot fit in the data from `pos`.
  result<void> check_count(const u256& count, size_t h, size_t pos, const path& p) const {
    if (!count.fits_u64() || static_cast<uint64_t>(count) > avail(pos) / h)
      return fail(abi_errc::truncated, p.str() + ": " + count.to_string() + " elements of " + std::to_string(h) +
                                           " bytes exceed the " + std::to_string(avail(pos)) + " bytes left");
    return {};
  }

  result<value> decode_value(const type& t, size_t pos, const path& p) {
    switch (t.kind) {
      case type_kind::uint_n: {
        ENACT_TRY(u256 w, word(pos, p));
        if (!w.fits_bits(t.bits))
          return fail(abi_errc::out_of_range, p.str() + ": " + t.canonical() + " out of range (high bits set)");
        return value::number(w);
      }
      case type_kind::int_n: {
        ENACT_TRY(u256 w, word(pos, p));
        if (!w.fits_signed_bits(t.bits))
          return fail(abi_errc::out_of_range, p.str() + ": " + t.canonical() + " out of range (bad sign extension)");
        return value::number(w);
      }
      case type_kind::address: {
        ENACT_TRY(u256 w, word(pos, p));
        if (w.bit_width() > 160)
          return fail(abi_errc::bad_padding, p.str() + ": address with non-zero high bytes");
        address a{};
        std::copy_n(data.data() + pos + 12, 20, a.begin());
        return value::addr(a);
      }
      case type_kind::boolean: {
        ENACT_TRY(u256 w, word(pos, p));
        if (w > u256{1})
          return fail(abi_errc::bad_bool, p.str() + ": bool word is " + w.to_hex() + ", not 0 or 1");
        return value::boolean(w == u256{1});
      }
      case type_kind::fixed_bytes: {
        ENACT_TRY_VOID(word(pos, p));
        const uint8_t* w = data.data() + pos;
        if (std::any_of(w + t.size, w + 32, [](uint8_t b) { return b != 0; }))
          return fail(abi_errc::bad_padding, p.str() + ": " + t.canonical() + " with non-zero padding");
        return value::blob(bytes(w, w + t.size));
      }
      case type_kind::bytes:
      case type_kind::string: {
        ENACT_TRY(u256 len, word(pos, p));
        const size_t start = pos + 32;
        const size_t left = avail(start);
        if (!len.fits_u64() || static_cast<uint64_t>(len) > left)
          return fail(abi_errc::truncated,
                      p.str() + ": length " + len.to_string() + " exceeds the " + std::to_string(left) + " bytes left");
        const auto n = static_cast<size_t>(len);
        const size_t padded = n + (32 - n % 32) % 32;
        if (padded > left)
          return fail(abi_errc::truncated, p.str() + ": payload padding missing");
        const uint8_t* b = data.data() + start;
        if (std::any_of(b + n, b + padded, [](uint8_t x) { return x != 0; }))
          return fail(abi_errc::bad_padding, p.str() + ": non-zero padding after " + t.canonical() + " payload");
        if (n > payload_left)
          return fail(abi_errc::too_large, p.str() +
                                               ": decoded data larger than its encoding "
                                               "(offsets pointing at shared data)");
        payload_left -= n;
        if (t.kind == type_kind::bytes)
          return value::blob(bytes(b, b + n));
        return value::text(std::string(reinterpret_cast<const char*>(b), n));
      }
      case type_kind::array: {
        ENACT_TRY(u256 count, word(pos, p));
        ENACT_TRY_VOID(check_count(count, t.element().head_size(), pos + 32, p));
        ENACT_TRY(auto items, sequence(
                                  static_cast<size_t>(count), [&](size_t) -> const type& { return t.element(); },
                                  pos + 32, p, [&](size_t i) { return p.child(i, false); }));
        return value::list(std::move(items));
      }
      case type_kind::fixed_array: {
        ENACT_TRY_VOID(check_count(u256{t.size}, t.element().head_size(), pos, p));
        ENACT_TRY(auto items, sequence(
                                  t.size, [&](size_t) -> const type& { return t.element(); }, pos, p,
                                  [&](size_t i) { return p.child(i, false); }));
        return value::list(std::move(items));
      }
      case type_kind::tuple: {
        ENACT_TRY(auto items, sequence(
                                  t.components.size(), [&](size_t i) -> const type& { return t.components[i]; }, pos, p,
                                  [&](size_t i) { return p.child(i, true); }));
        return value::list(std::move(items));
      }
    }
    return fail(abi_errc::bad_type, p.str() + ": unknown type kind");
  }
};

// ---------------------------------------------------------------------------------------------
// Packed mode.

result<void> pack_value(const type& t, const value& v, bytes& out, const path& p, bool in_array) {
  const auto unsupported = [&](const char* why) {
    return fail(abi_errc::type_mismatch, p.str() + ": " + t.canonical() + " " + why);
  };
  switch (t.kind) {
    case type_kind::bytes:
      if (!v.is_bytes())
        return mismatch(t, v, p);
      out.insert(out.end(), std::get<bytes>(v.node).begin(), std::get<bytes>(v.node).end());
      return {};
    case type_kind::string:
      if (!v.is_string())
        return mismatch(t, v, p);
      out.insert(out.end(), std::get<std::string>(v.node).begin(), std::get<std::string>(v.node).end());
      return {};
    case type_kind::array:
    case type_kind::fixed_array: {
      if (in_array)
        return unsupported("is not supported inside an array in packed mode");
      const type& e = t.element();
      if (e.is_dynamic() || e.kind == type_kind::fixed_array || e.kind == type_kind::tuple)
        return unsupported("has elements that packed mode does not support");
      ENACT_TRY(const std::span<const value> items, checked_elements(t, v, p));
      for (size_t i = 0; i < items.size(); ++i)
        ENACT_TRY_VOID(pack_value(e, items[i], out, p.child(i, false), true));
      return {};
    }
    case type_kind::tuple:
      return unsupported("is not supported in packed mode");
    default:  // uint<M>, int<M>, address, bool, bytes<M>
      return put_static(t, v, out, p, in_array, false);
  }
}

result<void> check_types(std::span<const type> types) {
  for (const type& t : types)
    ENACT_TRY_VOID(check_type(t));
  return {};
}

/// What encode and encode_packed check first: the types are valid, and there is one value a type.
result<void> check_arguments(std::span<const type> types, std::span<const value> values) {
  ENACT_TRY_VOID(check_types(types));
  if (values.size() != types.size())
    return wrong_count(path{nullptr, "args", npos, false}, "values", types.size(), values.size());
  return {};
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// type

std::string type::canonical() const {
  switch (kind) {
    case type_kind::uint_n:
    case type_kind::int_n:
      return (kind == type_kind::uint_n ? "uint" : "int") + std::to_string(bits);
    case type_kind::address:
      return "address";
    case type_kind::boolean:
      return "bool";
    case type_kind::fixed_bytes:
      return "bytes" + std::to_string(size);
    case type_kind::bytes:
      return "bytes";
    case type_kind::string:
      return "string";
    case type_kind::array:
    case type_kind::fixed_array:
      return element().canonical() + (kind == type_kind::array ? "[]" : "[" + std::to_string(size) + "]");
    case type_kind::tuple: {
      std::string out = "(";
      for (size_t i = 0; i < components.size(); ++i) {
        if (i != 0)
          out += ',';
        out += components[i].canonical();
      }
      return out + ")";
    }
  }
  return "?";
}

bool type::is_dynamic() const {
  switch (kind) {
    case type_kind::bytes:
    case type_kind::string:
    case type_kind::array:
      return true;
    case type_kind::fixed_array:
      return element().is_dynamic();
    case type_kind::tuple:
      return std::any_of(components.begin(), components.end(), [](const type& c) { return c.is_dynamic(); });
    default:
      return false;
  }
}

size_t type::head_size() const {
  if (is_dynamic())
    return 32;
  switch (kind) {
    case type_kind::fixed_array:
      return element().head_size() * size;
    case type_kind::tuple: {
      size_t sum = 0;
      for (const type& c : components)
        sum += c.head_size();
      return sum;
    }
    default:
      return 32;
  }
}

// ---------------------------------------------------------------------------------------------
// encode / decode

result<bytes> encode(std::span<const type> types, std::span<const value> values) {
  ENACT_TRY_VOID(check_arguments(types, values));
  bytes out;
  ENACT_TRY_VOID(encode_sequence(
      types.size(), [&](size_t i) -> const type& { return types[i]; }, values, out,
      [&](size_t i) {
        return path{nullptr, "arg", i, false};
      }));
  return out;
}

result<std::vector<value>> decode(std::span<const type> types, bytes_view data) {
  ENACT_TRY_VOID(check_types(types));
  size_t depth = 1;
  for (const type& t : types)
    depth = std::max(depth, tree_depth(t));
  decoder d{data, (data.size() / 32 + 1) * depth + types.size(), data.size()};
  const path root{nullptr, "args", npos, false};
  return d.sequence(
      types.size(), [&](size_t i) -> const type& { return types[i]; }, 0, root,
      [&](size_t i) {
        return path{nullptr, "arg", i, false};
      });
}

result<bytes> encode_packed(std::span<const type> types, std::span<const value> values) {
  ENACT_TRY_VOID(check_arguments(types, values));
  bytes out;
  for (size_t i = 0; i < types.size(); ++i)
    ENACT_TRY_VOID(pack_value(types[i], values[i], out, path{nullptr, "arg", i, false}, false));
  return out;
}

}  // namespace enact::codec::abi
