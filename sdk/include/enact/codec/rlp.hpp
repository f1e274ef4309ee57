// SPDX-License-Identifier: Apache-2.0
// Recursive Length Prefix encoding (Ethereum Yellow Paper, appendix B): the `item` tree (a byte
// string or a list of items), encoders for items, byte strings and unsigned integers, and a
// strict decoder that accepts only canonical encodings — exactly one byte string decodes to a
// given item, so hashes over RLP (transactions, tries) cannot be malleated. The JSON bridge
// (rlp_json.hpp) uses the shape of ethers' encodeRlp/decodeRlp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <variant>
#include <vector>

#include "enact/bytes.hpp"
#include "enact/u256.hpp"
#include "enact/error.hpp"
#include "enact/result.hpp"

namespace enact {

enum class rlp_errc {
  truncated = 1,              // input ends inside a header or payload
  trailing_bytes,             // bytes left after the top-level item
  non_canonical_single_byte,  // a byte below 0x80 wrapped as a one-byte string (0x81 xx)
  non_canonical_size,         // long form used for a payload shorter than 56 bytes
  leading_zero_length,        // long-form length with a leading zero byte
  length_overflow,            // an element's declared length runs past its enclosing list
  too_deep,                   // lists nested deeper than the decoder's limit
  expected_string,            // a list where a byte string was required
  expected_list,              // a byte string where a list was required
  leading_zero,               // an integer with leading zero bytes (0 is the empty string)
  uint_overflow,              // an integer longer than the target type
  bad_json,                   // JSON that is not a "0x…" string or an array of such
};

}  // namespace enact
ENACT_ERRC(rlp_errc, rlp_category, "enact.rlp", "truncated input", "trailing bytes after the item",
           "single byte not encoded as itself", "long form used for a short payload", "length with leading zero bytes",
           "element larger than its enclosing list", "nesting too deep", "expected a byte string", "expected a list",
           "integer with leading zero bytes", "integer too large", "invalid RLP JSON")

namespace enact::codec::rlp {

/// Deepest list nesting the decoder and from_json accept by default.
inline constexpr size_t kMaxDepth = 1024;

/// A byte string or a list of items. Default-constructed: the empty string.
struct item {
  std::variant<bytes, std::vector<item>> node;

  [[nodiscard]] static item string(bytes b) {
    item i;
    i.node.emplace<0>(std::move(b));
    return i;
  }
  [[nodiscard]] static item string(bytes_view b) { return string(bytes(b.begin(), b.end())); }
  [[nodiscard]] static item list(std::vector<item> items) {
    item i;
    i.node.emplace<1>(std::move(items));
    return i;
  }
  /// The canonical integer form: minimal big-endian bytes, zero as the empty string.
  [[nodiscard]] static item uint(const u256& v);

  [[nodiscard]] bool is_list() const noexcept { return node.index() == 1; }
  /// The byte string; throws enact::Error (rlp_errc::expected_string) on a list.
  [[nodiscard]] const bytes& as_bytes() const;
  /// The list; throws enact::Error (rlp_errc::expected_list) on a byte string.
  [[nodiscard]] const std::vector<item>& as_list() const;
  [[nodiscard]] bytes& as_bytes();
  [[nodiscard]] std::vector<item>& as_list();

  friend bool operator==(const item& a, const item& b) { return a.node == b.node; }
};

/// Appends the header of a string (list = false) or list payload of `payload_len` bytes.
/// A one-byte string below 0x80 has no header: write it with encode(out, bytes_view) instead.
void encode_header(bytes& out, bool list, size_t payload_len);

/// Appends encodings to `out` (the sink form, for building larger structures without copies).
void encode(bytes& out, const item& it);
void encode(bytes& out, bytes_view string);
void encode(bytes& out, const u256& v);
inline void encode(bytes& out, uint64_t v) { encode(out, u256{v}); }

[[nodiscard]] bytes encode(const item& it);
[[nodiscard]] bytes encode(bytes_view string);
[[nodiscard]] bytes encode(const u256& v);
[[nodiscard]] inline bytes encode(uint64_t v) { return encode(u256{v}); }

/// Minimal big-endian bytes of v (empty for zero): the payload of an RLP integer.
[[nodiscard]] bytes uint_bytes(const u256& v);

/// Decodes exactly one canonical item spanning all of `in`.
[[nodiscard]] result<item> decode(bytes_view in, size_t max_depth = kMaxDepth);

/// An RLP integer: a byte string of at most 32 bytes without leading zeros.
[[nodiscard]] result<u256> decode_uint(const item& it, std::string_view what = "rlp uint");
/// Same, limited to 64 bits.
[[nodiscard]] result<uint64_t> decode_u64(const item& it, std::string_view what = "rlp uint");

}  // namespace enact::codec::rlp
