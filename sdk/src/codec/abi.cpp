// Solidity ABI: type parsing, head/tail encoding, strict decoding, packed mode, signatures and
// the JSON / command-line bridge.
#include "enact/codec/abi.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

#include "enact/codec/hex.hpp"
#include "enact/crypto/address.hpp"
#include "enact/crypto/keccak.hpp"

namespace enact::abi {

namespace {

constexpr size_t npos = static_cast<size_t>(-1);

// ---------------------------------------------------------------------------------------------
// Positions in error messages: "arg 2[1].0" — argument 2, array element 1, tuple component 0.
// Frames live on the stack of the recursion and are formatted only when an error is reported.
struct path {
  const path* parent = nullptr;
  std::string_view label;  // root only
  size_t index = npos;     // root: argument index (npos: none); child: element or component
  bool component = false;  // child: tuple component (".i") rather than array element ("[i]")

  [[nodiscard]] std::string str() const {
    if (parent == nullptr)
      return index == npos ? std::string(label) : std::string(label) + " " + std::to_string(index);
    return parent->str() + (component ? "." + std::to_string(index) : "[" + std::to_string(index) + "]");
  }
  [[nodiscard]] path child(size_t i, bool tuple) const { return path{this, {}, i, tuple}; }
};

const char* value_kind(const value& v) {
  static constexpr const char* kNames[] = {"a number", "a bool", "an address", "bytes", "a string", "a list"};
  return kNames[v.node.index()];
}

error mismatch(const type& t, const value& v, const path& p) {
  return fail(abi_errc::type_mismatch, p.str() + ": expected " + t.canonical() + ", got " + value_kind(v));
}

// ---------------------------------------------------------------------------------------------
// Type structure.

bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool is_ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$'; }
bool is_ident_char(char c) { return is_ident_start(c) || (c >= '0' && c <= '9'); }

size_t tree_depth(const type& t) {
  size_t d = 0;
  for (const type& c : t.components)
    d = std::max(d, tree_depth(c));
  return d + 1;
}

/// Encoded size of a static type, or npos when it exceeds kMaxStaticSize.
size_t static_size_checked(const type& t) {
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
result<void> check_type(const type& t, size_t depth = 1) {
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

// Recursive-descent parser over `s` from `pos`; stops at the first character that cannot
// continue the type, so the signature parser can read names after it.
struct type_parser {
  std::string_view s;
  size_t pos = 0;
  std::string label;  // prefix of error messages
  abi_errc code = abi_errc::bad_type;

  [[nodiscard]] error bad(const std::string& why) const {
    return fail(code, label + ": " + why + " at offset " + std::to_string(pos));
  }
  void skip_ws() {
    while (pos < s.size() && is_ws(s[pos]))
      ++pos;
  }

  /// Decimal without sign or leading zeros; npos when absent, malformed or above `limit`.
  size_t number(size_t limit) {
    const size_t start = pos;
    size_t v = 0;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
      const auto d = static_cast<size_t>(s[pos] - '0');
      if (v > (limit - d) / 10)
        return npos;
      v = v * 10 + d;
      ++pos;
    }
    if (pos == start || (s[start] == '0' && pos - start > 1))
      return npos;
    return v;
  }

  result<type> parse(size_t depth) {
    if (depth > kMaxTypeDepth)
      return bad("type nested deeper than " + std::to_string(kMaxTypeDepth) + " levels");
    type t;
    const size_t word_start = pos;
    while (pos < s.size() && ((s[pos] >= 'a' && s[pos] <= 'z') || (s[pos] >= 'A' && s[pos] <= 'Z')))
      ++pos;
    const std::string_view word = s.substr(word_start, pos - word_start);
    if (word.empty() || (word == "tuple" && pos < s.size() && s[pos] == '(')) {
      if (pos >= s.size() || s[pos] != '(')
        return bad("expected a type");
      ++pos;
      t.kind = type_kind::tuple;
      skip_ws();
      if (pos < s.size() && s[pos] == ')')
        return bad("empty tuple");
      for (;;) {
        ENACT_TRY(type c, parse(depth + 1));
        t.components.push_back(std::move(c));
        skip_ws();
        if (pos < s.size() && s[pos] == ',') {
          ++pos;
          skip_ws();
          continue;
        }
        if (pos < s.size() && s[pos] == ')') {
          ++pos;
          break;
        }
        return bad("expected ',' or ')' in tuple");
      }
    } else if (word == "uint" || word == "int") {
      t.kind = word == "uint" ? type_kind::uint_n : type_kind::int_n;
      if (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
        const size_t n = number(256);
        if (n == npos || n == 0 || n % 8 != 0)
          return bad("invalid integer width (8..256 in steps of 8)");
        t.bits = static_cast<unsigned>(n);
      }
    } else if (word == "bytes") {
      t.kind = type_kind::bytes;
      if (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
        const size_t n = number(32);
        if (n == npos || n == 0)
          return bad("invalid bytesN size (1..32)");
        t.kind = type_kind::fixed_bytes;
        t.size = n;
      }
    } else if (word == "address") {
      t.kind = type_kind::address;
    } else if (word == "bool") {
      t.kind = type_kind::boolean;
    } else if (word == "string") {
      t.kind = type_kind::string;
    } else {
      pos = word_start;
      return bad("unknown type '" + std::string(word) + "'");
    }
    if (pos < s.size() && s[pos] >= '0' && s[pos] <= '9')
      return bad("unexpected digit");

    while (pos < s.size() && s[pos] == '[') {
      ++pos;
      type arr;
      if (pos < s.size() && s[pos] == ']') {
        arr.kind = type_kind::array;
      } else {
        const size_t k = number(kMaxStaticSize);
        if (k == npos || k == 0)
          return bad("invalid array length");
        arr.kind = type_kind::fixed_array;
        arr.size = k;
      }
      if (pos >= s.size() || s[pos] != ']')
        return bad("expected ']'");
      ++pos;
      if (++depth > kMaxTypeDepth)
        return bad("type nested deeper than " + std::to_string(kMaxTypeDepth) + " levels");
      arr.components.push_back(std::move(t));
      t = std::move(arr);
    }
    if (!t.is_dynamic() && static_size_checked(t) == npos)
      return bad("static encoding larger than " + std::to_string(kMaxStaticSize) + " bytes");
    return t;
  }

  /// A whole type, checked against the depth limit over all its levels.
  result<type> parse_full() {
    ENACT_TRY(type t, parse(1));
    if (tree_depth(t) > kMaxTypeDepth)
      return bad("type nested deeper than " + std::to_string(kMaxTypeDepth) + " levels");
    return t;
  }
};

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

error wrong_count(const path& p, const char* what, size_t expected, size_t got) {
  return fail(abi_errc::wrong_length,
              p.str() + ": expected " + std::to_string(expected) + " " + what + ", got " + std::to_string(got));
}

result<void> encode_value(const type& t, const value& v, bytes& out, const path& p) {
  switch (t.kind) {
    case type_kind::uint_n:
    case type_kind::int_n: {
      if (!v.is_number())
        return mismatch(t, v, p);
      const u256& n = std::get<u256>(v.node);
      const bool ok = t.kind == type_kind::uint_n ? n.fits_bits(t.bits) : n.fits_signed_bits(t.bits);
      if (!ok)
        return fail(abi_errc::out_of_range, p.str() + ": " +
                                                (t.kind == type_kind::uint_n ? n.to_string() : n.to_signed_string()) +
                                                " out of range for " + t.canonical());
      put_word(out, n);
      return {};
    }
    case type_kind::address: {
      if (!v.is_address())
        return mismatch(t, v, p);
      out.resize(out.size() + 12, 0);
      const auto& a = std::get<address>(v.node);
      out.insert(out.end(), a.begin(), a.end());
      return {};
    }
    case type_kind::boolean:
      if (!v.is_bool())
        return mismatch(t, v, p);
      put_word(out, u256{std::get<bool>(v.node) ? 1u : 0u});
      return {};
    case type_kind::fixed_bytes: {
      if (!v.is_bytes())
        return mismatch(t, v, p);
      const auto& b = std::get<bytes>(v.node);
      if (b.size() != t.size)
        return wrong_count(p, "bytes", t.size, b.size());
      put_padded(out, b);
      return {};
    }
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
      if (!v.is_list())
        return mismatch(t, v, p);
      const auto& items = std::get<std::vector<value>>(v.node);
      if (t.kind == type_kind::fixed_array && items.size() != t.size)
        return wrong_count(p, "elements", t.size, items.size());
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
  }
  return fail(abi_errc::bad_type, p.str() + ": unknown type kind");
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
    case type_kind::uint_n:
    case type_kind::int_n: {
      if (!v.is_number())
        return mismatch(t, v, p);
      const u256& n = std::get<u256>(v.node);
      const bool ok = t.kind == type_kind::uint_n ? n.fits_bits(t.bits) : n.fits_signed_bits(t.bits);
      if (!ok)
        return fail(abi_errc::out_of_range, p.str() + ": value out of range for " + t.canonical());
      const hash256 be = n.to_be();
      const size_t width = in_array ? 32 : t.bits / 8;
      out.insert(out.end(), be.end() - static_cast<std::ptrdiff_t>(width), be.end());
      return {};
    }
    case type_kind::address: {
      if (!v.is_address())
        return mismatch(t, v, p);
      if (in_array)
        out.resize(out.size() + 12, 0);
      const auto& a = std::get<address>(v.node);
      out.insert(out.end(), a.begin(), a.end());
      return {};
    }
    case type_kind::boolean:
      if (!v.is_bool())
        return mismatch(t, v, p);
      if (in_array)
        out.resize(out.size() + 31, 0);
      out.push_back(std::get<bool>(v.node) ? 1 : 0);
      return {};
    case type_kind::fixed_bytes: {
      if (!v.is_bytes())
        return mismatch(t, v, p);
      const auto& b = std::get<bytes>(v.node);
      if (b.size() != t.size)
        return wrong_count(p, "bytes", t.size, b.size());
      if (in_array) {
        put_padded(out, b);
      } else {
        out.insert(out.end(), b.begin(), b.end());
      }
      return {};
    }
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
      if (!v.is_list())
        return mismatch(t, v, p);
      const auto& items = std::get<std::vector<value>>(v.node);
      if (t.kind == type_kind::fixed_array && items.size() != t.size)
        return wrong_count(p, "elements", t.size, items.size());
      for (size_t i = 0; i < items.size(); ++i)
        ENACT_TRY_VOID(pack_value(e, items[i], out, p.child(i, false), true));
      return {};
    }
    case type_kind::tuple:
      return unsupported("is not supported in packed mode");
  }
  return fail(abi_errc::bad_type, p.str() + ": unknown type kind");
}

// ---------------------------------------------------------------------------------------------
// JSON and command-line values.

/// An integer written as text: optional '-', then decimal or 0x hex.
result<value> int_from_text(const type& t, std::string_view s, const path& p) {
  const bool negative = !s.empty() && s[0] == '-';
  if (negative)
    s.remove_prefix(1);
  const std::string where = p.str();
  auto mag = u256::from_string(s, where);
  if (!mag)
    return fail(abi_errc::bad_value, mag.err().message);
  const u256 m = *mag;
  bool ok = false;
  if (t.kind == type_kind::uint_n) {
    ok = (!negative || !m) && m.fits_bits(t.bits);
  } else {
    const u256 limit = u256{1} << (t.bits - 1);
    ok = negative ? m <= limit : m < limit;
  }
  if (!ok)
    return fail(abi_errc::out_of_range,
                where + ": " + (negative ? "-" : "") + m.to_string() + " out of range for " + t.canonical());
  return value::number(negative ? -m : m);
}

const char* json_kind(const boost::json::value& v) {
  switch (v.kind()) {
    case boost::json::kind::null:
      return "null";
    case boost::json::kind::bool_:
      return "a bool";
    case boost::json::kind::int64:
    case boost::json::kind::uint64:
    case boost::json::kind::double_:
      return "a number";
    case boost::json::kind::string:
      return "a string";
    case boost::json::kind::array:
      return "an array";
    case boost::json::kind::object:
      return "an object";
  }
  return "?";
}

error json_mismatch(const type& t, const boost::json::value& v, const path& p) {
  return fail(abi_errc::type_mismatch, p.str() + ": expected " + t.canonical() + ", got " + json_kind(v));
}

result<value> int_from_json(const type& t, const boost::json::value& v, const path& p) {
  if (v.is_string())
    return int_from_text(t, std::string_view(v.get_string()), p);
  if (v.is_int64()) {
    const int64_t i = v.get_int64();
    const std::string text = std::to_string(i);
    return int_from_text(t, text, p);
  }
  if (v.is_uint64())
    return int_from_text(t, std::to_string(v.get_uint64()), p);
  if (v.is_double()) {
    // Boost.JSON reads integers beyond 64 bits (and 1e3) as doubles; accept only those a double
    // holds exactly (|x| <= 2^53), as ethers refuses unsafe JavaScript integers.
    const double d = v.get_double();
    constexpr double kMaxExact = 9007199254740992.0;
    if (!std::isfinite(d) || std::trunc(d) != d || std::fabs(d) > kMaxExact)
      return fail(abi_errc::bad_value, p.str() + ": number is not an exact integer (write large integers as strings)");
    const auto mag = static_cast<uint64_t>(std::fabs(d));
    return int_from_text(t, (d < 0 ? "-" : "") + std::to_string(mag), p);
  }
  return json_mismatch(t, v, p);
}

result<value> address_from_text(std::string_view s, const path& p) {
  auto a = parse_address(s, p.str());
  if (!a)
    return fail(abi_errc::bad_value, a.err().message);
  return value::addr(*a);
}

result<value> bytes_from_text(const type& t, std::string_view s, const path& p) {
  auto b = hex::decode_prefixed(s, p.str());
  if (!b)
    return fail(abi_errc::bad_value, b.err().message);
  if (t.kind == type_kind::fixed_bytes && b->size() != t.size)
    return wrong_count(p, "bytes", t.size, b->size());
  return value::blob(std::move(b).value());
}

result<value> from_json_at(const type& t, const boost::json::value& v, const path& p) {
  switch (t.kind) {
    case type_kind::uint_n:
    case type_kind::int_n:
      return int_from_json(t, v, p);
    case type_kind::boolean:
      if (!v.is_bool())
        return json_mismatch(t, v, p);
      return value::boolean(v.get_bool());
    case type_kind::address:
      if (!v.is_string())
        return json_mismatch(t, v, p);
      return address_from_text(std::string_view(v.get_string()), p);
    case type_kind::fixed_bytes:
    case type_kind::bytes:
      if (!v.is_string())
        return json_mismatch(t, v, p);
      return bytes_from_text(t, std::string_view(v.get_string()), p);
    case type_kind::string:
      if (!v.is_string())
        return json_mismatch(t, v, p);
      return value::text(std::string(v.get_string()));
    case type_kind::array:
    case type_kind::fixed_array:
    case type_kind::tuple: {
      if (!v.is_array())
        return json_mismatch(t, v, p);
      const auto& a = v.get_array();
      const bool tuple = t.kind == type_kind::tuple;
      if (t.kind == type_kind::fixed_array && a.size() != t.size)
        return wrong_count(p, "elements", t.size, a.size());
      if (tuple && a.size() != t.components.size())
        return wrong_count(p, "tuple components", t.components.size(), a.size());
      std::vector<value> items;
      items.reserve(a.size());
      for (size_t i = 0; i < a.size(); ++i) {
        ENACT_TRY(value item, from_json_at(tuple ? t.components[i] : t.element(), a[i], p.child(i, tuple)));
        items.push_back(std::move(item));
      }
      return value::list(std::move(items));
    }
  }
  return fail(abi_errc::bad_type, p.str() + ": unknown type kind");
}

boost::json::value to_json_at(const type& t, const value& v, const path& p) {
  const auto check = [&](bool ok) {
    if (!ok)
      throw Error(mismatch(t, v, p));
  };
  switch (t.kind) {
    case type_kind::uint_n:
      check(v.is_number());
      return boost::json::value(std::get<u256>(v.node).to_string());
    case type_kind::int_n:
      check(v.is_number());
      return boost::json::value(std::get<u256>(v.node).to_signed_string());
    case type_kind::address:
      check(v.is_address());
      return boost::json::value(to_checksum_address(std::get<address>(v.node)));
    case type_kind::boolean:
      check(v.is_bool());
      return boost::json::value(std::get<bool>(v.node));
    case type_kind::fixed_bytes:
    case type_kind::bytes:
      check(v.is_bytes());
      return boost::json::value(hex::encode_prefixed(std::get<bytes>(v.node)));
    case type_kind::string:
      check(v.is_string());
      return boost::json::value(std::get<std::string>(v.node));
    case type_kind::array:
    case type_kind::fixed_array:
    case type_kind::tuple: {
      check(v.is_list());
      const auto& items = std::get<std::vector<value>>(v.node);
      const bool tuple = t.kind == type_kind::tuple;
      check(!tuple || items.size() == t.components.size());
      boost::json::array a;
      a.reserve(items.size());
      for (size_t i = 0; i < items.size(); ++i)
        a.push_back(to_json_at(tuple ? t.components[i] : t.element(), items[i], p.child(i, tuple)));
      return a;
    }
  }
  throw Error(fail(abi_errc::bad_type, p.str() + ": unknown type kind"));
}

result<void> check_types(std::span<const type> types) {
  for (const type& t : types)
    ENACT_TRY_VOID(check_type(t));
  return {};
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// type

result<type> type::parse(std::string_view s) {
  type_parser p{s, 0, "abi type \"" + std::string(s) + "\""};
  ENACT_TRY(type t, p.parse_full());
  if (p.pos != s.size())
    return p.bad("unexpected character");
  return t;
}

std::string type::canonical() const {
  switch (kind) {
    case type_kind::uint_n:
      return "uint" + std::to_string(bits);
    case type_kind::int_n:
      return "int" + std::to_string(bits);
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
      return element().canonical() + "[]";
    case type_kind::fixed_array:
      return element().canonical() + "[" + std::to_string(size) + "]";
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
  ENACT_TRY_VOID(check_types(types));
  const path root{nullptr, "args", npos, false};
  if (values.size() != types.size())
    return wrong_count(root, "values", types.size(), values.size());
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
  ENACT_TRY_VOID(check_types(types));
  const path root{nullptr, "args", npos, false};
  if (values.size() != types.size())
    return wrong_count(root, "values", types.size(), values.size());
  bytes out;
  for (size_t i = 0; i < types.size(); ++i)
    ENACT_TRY_VOID(pack_value(types[i], values[i], out, path{nullptr, "arg", i, false}, false));
  return out;
}

// ---------------------------------------------------------------------------------------------
// signatures

std::string function_sig::canonical() const {
  std::string out = name + "(";
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (i != 0)
      out += ',';
    out += inputs[i].canonical();
  }
  return out + ")";
}

std::array<uint8_t, 4> function_sig::selector() const { return abi::selector(canonical()); }

std::array<uint8_t, 4> selector(std::string_view canonical_signature) {
  const hash256 h = keccak256(canonical_signature);
  return {h[0], h[1], h[2], h[3]};
}

result<function_sig> parse_signature(std::string_view s) {
  type_parser p{s, 0, "signature \"" + std::string(s) + "\"", abi_errc::bad_signature};
  const auto bad = [&](const std::string& why) {
    return p.bad(why);
  };
  function_sig fn;
  p.skip_ws();
  const size_t name_start = p.pos;
  if (p.pos >= s.size() || !is_ident_start(s[p.pos]))
    return bad("expected a function name");
  while (p.pos < s.size() && is_ident_char(s[p.pos]))
    ++p.pos;
  fn.name = std::string(s.substr(name_start, p.pos - name_start));
  p.skip_ws();
  if (p.pos >= s.size() || s[p.pos] != '(')
    return bad("expected '('");
  ++p.pos;
  p.skip_ws();
  if (p.pos >= s.size())
    return bad("unterminated parameter list");
  if (s[p.pos] == ')') {
    ++p.pos;
  } else {
    for (;;) {
      type_parser tp{s, p.pos, p.label};
      auto t = tp.parse_full();
      if (!t)
        return fail(abi_errc::bad_type, t.err().message);
      p.pos = tp.pos;
      std::string param_name;
      bool indexed = false;
      bool located = false;
      for (;;) {
        const size_t before = p.pos;
        p.skip_ws();
        if (p.pos >= s.size())
          return bad("unterminated parameter list");
        if (s[p.pos] == ',' || s[p.pos] == ')')
          break;
        if (p.pos == before || !is_ident_start(s[p.pos]))
          return bad("unexpected character after a parameter type");
        const size_t w0 = p.pos;
        while (p.pos < s.size() && is_ident_char(s[p.pos]))
          ++p.pos;
        const std::string_view word = s.substr(w0, p.pos - w0);
        if (!param_name.empty()) {
          p.pos = w0;
          return bad("unexpected word after the parameter name");
        }
        if (word == "indexed" && !indexed && !located) {
          indexed = true;
        } else if ((word == "memory" || word == "calldata" || word == "storage") && !located && !indexed) {
          located = true;
        } else {
          param_name = std::string(word);
        }
      }
      fn.inputs.push_back(std::move(t).value());
      fn.input_names.push_back(std::move(param_name));
      fn.indexed.push_back(indexed);
      if (s[p.pos] == ')') {
        ++p.pos;
        break;
      }
      ++p.pos;  // ','
      p.skip_ws();
    }
  }
  p.skip_ws();
  if (p.pos != s.size())
    return bad("unexpected characters after ')'");
  return fn;
}

result<bytes> encode_call(std::string_view signature, std::span<const value> values) {
  ENACT_TRY(function_sig fn, parse_signature(signature));
  ENACT_TRY(bytes args, encode(fn.inputs, values));
  const auto sel = fn.selector();
  bytes out(sel.begin(), sel.end());
  out.insert(out.end(), args.begin(), args.end());
  return out;
}

result<std::vector<value>> decode_call(const function_sig& fn, bytes_view calldata) {
  if (calldata.size() < 4)
    return fail(abi_errc::truncated, "call data: " + std::to_string(calldata.size()) + " bytes, no 4-byte selector");
  const auto sel = fn.selector();
  if (!std::equal(sel.begin(), sel.end(), calldata.begin()))
    return fail(abi_errc::selector_mismatch, "call data: selector 0x" + hex::encode(calldata.first(4)) + " is not " +
                                                 fn.canonical() + " (0x" + hex::encode(sel) + ")");
  return decode(fn.inputs, calldata.subspan(4));
}

// ---------------------------------------------------------------------------------------------
// JSON and command line

result<value> from_json(const type& t, const boost::json::value& v, std::string_view what) {
  ENACT_TRY_VOID(check_type(t));
  return from_json_at(t, v, path{nullptr, what, npos, false});
}

boost::json::value to_json(const type& t, const value& v) {
  if (auto ok = check_type(t); !ok)
    throw Error(ok.err());
  return to_json_at(t, v, path{nullptr, "value", npos, false});
}

result<value> from_cli_arg(const type& t, std::string_view arg, std::string_view what) {
  ENACT_TRY_VOID(check_type(t));
  const path p{nullptr, what, npos, false};
  switch (t.kind) {
    case type_kind::uint_n:
    case type_kind::int_n:
      return int_from_text(t, arg, p);
    case type_kind::boolean:
      if (arg == "true")
        return value::boolean(true);
      if (arg == "false")
        return value::boolean(false);
      return fail(abi_errc::bad_value, p.str() + ": expected true or false");
    case type_kind::address:
      return address_from_text(arg, p);
    case type_kind::fixed_bytes:
    case type_kind::bytes:
      return bytes_from_text(t, arg, p);
    case type_kind::string:
      return value::text(std::string(arg));
    case type_kind::array:
    case type_kind::fixed_array:
    case type_kind::tuple: {
      boost::json::parse_options opt;
      opt.max_depth = kMaxTypeDepth + 1;
      boost::system::error_code ec;
      const boost::json::value v = boost::json::parse(arg, ec, {}, opt);
      if (ec)
        return fail(abi_errc::bad_value,
                    p.str() + ": " + t.canonical() + " must be written as JSON (" + ec.message() + ")");
      return from_json_at(t, v, p);
    }
  }
  return fail(abi_errc::bad_type, p.str() + ": unknown type kind");
}

}  // namespace enact::abi
