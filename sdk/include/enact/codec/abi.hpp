// SPDX-License-Identifier: Apache-2.0
// Solidity contract ABI (https://docs.soliditylang.org/en/latest/abi-spec.html): parsed types
// (uintN/intN, address, bool, bytesN, bytes, string, T[], T[k] and tuples, nested freely), a value
// tree, the standard head/tail encoding and a strict decoder that rejects every non-canonical
// word (dirty high bits, bad sign extension, bool other than 0/1, non-zero padding) and every
// offset or length that points outside the data, before allocating anything. Also function
// signatures and selectors, `abi.encodePacked`, and command-line arguments; the JSON bridge in the
// shape ethers' AbiCoder uses is in abi_json.hpp.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "enact/bytes.hpp"
#include "enact/u256.hpp"
#include "enact/error.hpp"
#include "enact/result.hpp"

namespace enact {

enum class abi_errc {
  bad_type = 1,       // not a valid ABI type string (or a type outside the supported limits)
  bad_signature,      // not a valid function signature
  type_mismatch,      // value of the wrong kind for its type (a string where a uint256 goes)
  wrong_length,       // wrong number of values, array elements, tuple components or bytesN bytes
  out_of_range,       // integer outside its type's range
  bad_bool,           // bool word other than 0 or 1
  bad_padding,        // non-zero padding in an address, bytesN, bytes or string word
  bad_offset,         // offset pointing outside the data
  truncated,          // data ends before a word, a length or a payload it declares
  too_large,          // decoding would materialise more than the data can hold (aliased offsets)
  bad_value,          // JSON or command-line text that does not parse as the type
  selector_mismatch,  // call data for another function
};

}  // namespace enact
ENACT_ERRC(abi_errc, abi_category, "enact.abi", "invalid ABI type", "invalid function signature",
           "value does not match its type", "wrong length", "integer out of range", "invalid bool", "non-zero padding",
           "offset out of bounds", "data too short", "decoded data too large", "invalid value", "selector mismatch")

namespace enact::codec::abi {

/// Types nested deeper than this (tuples and array dimensions) are rejected.
inline constexpr size_t kMaxTypeDepth = 64;
/// A static type whose head is larger than this many bytes is rejected.
inline constexpr size_t kMaxStaticSize = size_t{1} << 32;

enum class type_kind : uint8_t {
  uint_n,       // uintN, N = 8..256 step 8 (`bits`)
  int_n,        // intN (`bits`)
  address,      // address
  boolean,      // bool
  fixed_bytes,  // bytesN, N = 1..32 (`size`)
  bytes,        // bytes
  string,       // string
  array,        // T[] (`components[0]` is T)
  fixed_array,  // T[k] (`components[0]` is T, `size` is k)
  tuple,        // (T1,...,Tn), n >= 1 (`components`)
};

/// An ABI type. Built by parse() (or by hand: encode, decode and the JSON bridge check a hand-built
/// type against the same rules before using it; canonical(), is_dynamic() and head_size() assume
/// a valid one).
struct type {
  type_kind kind = type_kind::uint_n;
  /// uint_n / int_n: the bit width N.
  unsigned bits = 256;
  /// fixed_bytes: N; fixed_array: k.
  size_t size = 0;
  /// array / fixed_array: the element type; tuple: the components.
  std::vector<type> components;

  /// Parses a canonical type string or an alias: `uint`/`int` for 256 bits, `tuple(...)` for
  /// `(...)`, and optional spaces after '(' and ',' inside tuples. Zero-size types (`()`, `T[0]`),
  /// `fixed`/`ufixed` and `function` are rejected.
  [[nodiscard]] static result<type> parse(std::string_view s);
  /// Throwing form of parse, for literals in code: `codec::abi::type::of("uint256[]")`.
  [[nodiscard]] static type of(std::string_view s) { return parse(s).value(); }

  /// The canonical form used in signatures: `uint256`, `(uint256,string[])[2][]`.
  [[nodiscard]] std::string canonical() const;
  /// bytes, string, T[], and any T[k] or tuple containing one of them.
  [[nodiscard]] bool is_dynamic() const;
  /// Bytes this type takes in the head of its enclosing tuple: 32 for a dynamic type (its
  /// offset), the whole encoding for a static one.
  [[nodiscard]] size_t head_size() const;
  /// The element type of an array; precondition: kind is array or fixed_array.
  [[nodiscard]] const type& element() const { return components.front(); }

  friend bool operator==(const type& a, const type& b) = default;
};

/// A decoded or to-be-encoded value. Integers of every width are u256 (intN in 256-bit two's
/// complement, sign-extended); bytes and bytesN are both `bytes`; arrays and tuples are lists.
struct value {
  using variant = std::variant<u256, bool, address, bytes, std::string, std::vector<value>>;
  variant node;

  [[nodiscard]] static value number(const u256& v) { return make(v); }
  /// A signed integer as its 256-bit two's complement (for intN).
  [[nodiscard]] static value signed_number(int64_t v) {
    return make(v < 0 ? -u256{static_cast<uint64_t>(-(v + 1)) + 1} : u256{static_cast<uint64_t>(v)});
  }
  [[nodiscard]] static value boolean(bool b) { return make(b); }
  [[nodiscard]] static value addr(const address& a) { return make(a); }
  [[nodiscard]] static value blob(bytes b) { return make(std::move(b)); }
  [[nodiscard]] static value text(std::string s) { return make(std::move(s)); }
  [[nodiscard]] static value list(std::vector<value> items) { return make(std::move(items)); }

  [[nodiscard]] bool is_number() const noexcept { return node.index() == 0; }
  [[nodiscard]] bool is_bool() const noexcept { return node.index() == 1; }
  [[nodiscard]] bool is_address() const noexcept { return node.index() == 2; }
  [[nodiscard]] bool is_bytes() const noexcept { return node.index() == 3; }
  [[nodiscard]] bool is_string() const noexcept { return node.index() == 4; }
  [[nodiscard]] bool is_list() const noexcept { return node.index() == 5; }

  // Accessors throw enact::Error (abi_errc::type_mismatch) when the value holds another kind.
  [[nodiscard]] const u256& as_number() const { return get<0>("a number"); }
  [[nodiscard]] bool as_bool() const { return get<1>("a bool"); }
  [[nodiscard]] const address& as_address() const { return get<2>("an address"); }
  [[nodiscard]] const bytes& as_bytes() const { return get<3>("bytes"); }
  [[nodiscard]] const std::string& as_string() const { return get<4>("a string"); }
  [[nodiscard]] const std::vector<value>& as_list() const { return get<5>("a list"); }

  friend bool operator==(const value& a, const value& b) { return a.node == b.node; }

 private:
  template <class T>
  static value make(T&& v) {
    value out;
    out.node = std::forward<T>(v);
    return out;
  }
  template <size_t I>
  const std::variant_alternative_t<I, variant>& get(const char* expected) const {
    if (node.index() != I)
      throw Error(make_error_code(abi_errc::type_mismatch), std::string("abi value: expected ") + expected);
    return std::get<I>(node);
  }
};

/// The encoding of the tuple (types...) holding `values` (ABI spec, "Formal Specification of the
/// Encoding"). Values are checked against their types; errors name the position ("arg 1[0]").
[[nodiscard]] result<bytes> encode(std::span<const type> types, std::span<const value> values);

/// Strict inverse of encode. Bytes after the last value the heads reach are ignored, as
/// Solidity's decoder does.
[[nodiscard]] result<std::vector<value>> decode(std::span<const type> types, bytes_view data);

/// Solidity's non-standard packed mode (`abi.encodePacked`): scalars in their natural width,
/// bytes and strings unpadded, array elements padded to 32 bytes. Tuples, and arrays of dynamic
/// or array types, are not supported in this mode (type_mismatch).
[[nodiscard]] result<bytes> encode_packed(std::span<const type> types, std::span<const value> values);

/// A function (or event) signature.
struct function_sig {
  std::string name;
  std::vector<type> inputs;
  /// Parameter names as written ("" when absent), parallel to inputs.
  std::vector<std::string> input_names;
  /// Which parameters were marked `indexed` (event signatures), parallel to inputs.
  std::vector<bool> indexed;

  /// `name(T1,T2,...)` with canonical types.
  [[nodiscard]] std::string canonical() const;
  /// First 4 bytes of crypto::keccak256(canonical()).
  [[nodiscard]] std::array<uint8_t, 4> selector() const;
};

/// Parses `f(uint256,string)`, and the human-readable forms around it: spaces, parameter names,
/// `indexed`, and data locations (`memory`, `calldata`, `storage`), e.g.
/// `Transfer(address indexed from, address indexed to, uint256 value)`.
[[nodiscard]] result<function_sig> parse_signature(std::string_view s);

/// First 4 bytes of keccak256 of the signature text as given (pass the canonical form).
[[nodiscard]] std::array<uint8_t, 4> selector(std::string_view canonical_signature);

/// selector(signature) ‖ encode(inputs, values); `signature` may be in any form parse_signature
/// accepts, and is canonicalised first.
[[nodiscard]] result<bytes> encode_call(std::string_view signature, std::span<const value> values);

/// Checks the selector, then decodes the arguments.
[[nodiscard]] result<std::vector<value>> decode_call(const function_sig& fn, bytes_view calldata);

/// A command-line argument: scalars written bare (`42`, `-1`, `0xabc…`, `true`, `hello`), arrays
/// and tuples written as JSON (`[1,2]`, `["0x…",[true]]`).
[[nodiscard]] result<value> from_cli_arg(const type& t, std::string_view arg, std::string_view what = "arg");

}  // namespace enact::codec::abi
