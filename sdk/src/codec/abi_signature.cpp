// SPDX-License-Identifier: Apache-2.0
// The Solidity ABI's text forms: the type parser (type::parse), function signatures
// (parse_signature, canonical forms, selectors) and whole calls (encode_call, decode_call).
#include <algorithm>
#include <string>

#include "abi_detail.hpp"
#include "enact/codec/abi.hpp"
#include "enact/codec/hex.hpp"
#include "enact/crypto/keccak.hpp"

namespace enact::codec::abi {

using detail::npos;
using detail::static_size_checked;
using detail::tree_depth;

namespace {

bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool is_ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$'; }
bool is_ident_char(char c) { return is_ident_start(c) || (c >= '0' && c <= '9'); }

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

std::array<uint8_t, 4> function_sig::selector() const { return codec::abi::selector(canonical()); }

std::array<uint8_t, 4> selector(std::string_view canonical_signature) {
  const hash256 h = crypto::keccak256(canonical_signature);
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
    return fail(abi_errc::selector_mismatch, "call data: selector 0x" + codec::hex::encode(calldata.first(4)) +
                                                 " is not " + fn.canonical() + " (0x" + codec::hex::encode(sel) + ")");
  return decode(fn.inputs, calldata.subspan(4));
}

}  // namespace enact::codec::abi
