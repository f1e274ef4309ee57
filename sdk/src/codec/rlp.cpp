// SPDX-License-Identifier: Apache-2.0
// RLP (Yellow Paper appendix B): encoder and strict canonical decoder.
#include "enact/codec/rlp.hpp"

#include <string>

#include "enact/codec/hex.hpp"

namespace enact::codec::rlp {

namespace {

void append_be_length(bytes& out, uint64_t len) {
  uint8_t buf[8];
  be::store64(buf, len);
  size_t skip = 0;
  while (skip < 7 && buf[skip] == 0)
    ++skip;
  out.insert(out.end(), buf + skip, buf + 8);
}

size_t be_length_size(uint64_t len) {
  size_t n = 1;
  while (len > 0xff) {
    len >>= 8;
    ++n;
  }
  return n;
}

std::string at(size_t offset) { return " at offset " + std::to_string(offset); }

// `end` bounds the item: the end of the input at top level, the end of the enclosing list's
// payload inside a list. Running past it is truncation at top level and an oversized element
// inside a list (geth's ErrValueTooLarge / ErrElemTooLarge).
struct decoder {
  const uint8_t* data;
  size_t max_depth;

  [[nodiscard]] error overrun(bool nested, size_t offset) const {
    return nested ? fail(rlp_errc::length_overflow, "rlp: element larger than its enclosing list" + at(offset))
                  : fail(rlp_errc::truncated, "rlp: input ends inside the item" + at(offset));
  }

  result<item> parse(size_t& pos, size_t end, size_t depth, bool nested) const {
    const size_t start = pos;
    if (pos >= end)
      return overrun(nested, start);
    const uint8_t b = data[pos++];
    if (b < 0x80)
      return item::string(bytes{b});

    const bool list = b >= 0xc0;
    const uint8_t base = list ? 0xc0 : 0x80;
    size_t len = 0;
    if (b - base <= 55) {
      len = static_cast<size_t>(b - base);
    } else {
      const auto len_len = static_cast<size_t>(b - base - 55);  // 1..8
      if (end - pos < len_len)
        return overrun(nested, start);
      if (data[pos] == 0)
        return fail(rlp_errc::leading_zero_length, "rlp: length with a leading zero byte" + at(start));
      uint64_t l = 0;
      for (size_t i = 0; i < len_len; ++i)
        l = (l << 8) | data[pos + i];
      pos += len_len;
      if (l < 56)
        return fail(rlp_errc::non_canonical_size,
                    "rlp: long form used for a " + std::to_string(l) + "-byte payload" + at(start));
      if (l > end - pos)
        return overrun(nested, start);
      len = static_cast<size_t>(l);
    }
    if (len > end - pos)
      return overrun(nested, start);

    if (!list) {
      if (len == 1 && data[pos] < 0x80)
        return fail(rlp_errc::non_canonical_single_byte, "rlp: byte below 0x80 wrapped as a string" + at(start));
      item it = item::string(bytes(data + pos, data + pos + len));
      pos += len;
      return it;
    }

    if (depth >= max_depth)
      return fail(rlp_errc::too_deep, "rlp: lists nested deeper than " + std::to_string(max_depth) + at(start));
    const size_t list_end = pos + len;
    std::vector<item> children;
    while (pos < list_end) {
      auto child = parse(pos, list_end, depth + 1, true);
      if (!child)
        return std::move(child).err();
      children.push_back(std::move(child).value());
    }
    return item::list(std::move(children));
  }
};

}  // namespace

item item::uint(const u256& v) { return string(uint_bytes(v)); }

const bytes& item::as_bytes() const {
  if (is_list())
    throw Error(fail(rlp_errc::expected_string, "rlp: expected a byte string, got a list"));
  return std::get<0>(node);
}
bytes& item::as_bytes() {
  if (is_list())
    throw Error(fail(rlp_errc::expected_string, "rlp: expected a byte string, got a list"));
  return std::get<0>(node);
}
const std::vector<item>& item::as_list() const {
  if (!is_list())
    throw Error(fail(rlp_errc::expected_list, "rlp: expected a list, got a byte string"));
  return std::get<1>(node);
}
std::vector<item>& item::as_list() {
  if (!is_list())
    throw Error(fail(rlp_errc::expected_list, "rlp: expected a list, got a byte string"));
  return std::get<1>(node);
}

void encode_header(bytes& out, bool list, size_t payload_len) {
  const uint8_t base = list ? 0xc0 : 0x80;
  if (payload_len <= 55) {
    out.push_back(static_cast<uint8_t>(base + payload_len));
  } else {
    out.push_back(static_cast<uint8_t>(base + 55 + be_length_size(payload_len)));
    append_be_length(out, payload_len);
  }
}

void encode(bytes& out, bytes_view string) {
  if (string.size() == 1 && string[0] < 0x80) {
    out.push_back(string[0]);
    return;
  }
  encode_header(out, false, string.size());
  out.insert(out.end(), string.begin(), string.end());
}

void encode(bytes& out, const u256& v) {
  const hash256 be = v.to_be();
  const size_t skip = 32 - (v.bit_width() + 7) / 8;
  encode(out, bytes_view(be).subspan(skip));
}

void encode(bytes& out, const item& it) {
  if (!it.is_list()) {
    encode(out, bytes_view(std::get<0>(it.node)));
    return;
  }
  bytes payload;
  for (const item& child : std::get<1>(it.node))
    encode(payload, child);
  encode_header(out, true, payload.size());
  out.insert(out.end(), payload.begin(), payload.end());
}

bytes encode(const item& it) {
  bytes out;
  encode(out, it);
  return out;
}
bytes encode(bytes_view string) {
  bytes out;
  encode(out, string);
  return out;
}
bytes encode(const u256& v) {
  bytes out;
  encode(out, v);
  return out;
}

bytes uint_bytes(const u256& v) {
  const hash256 be = v.to_be();
  const size_t skip = 32 - (v.bit_width() + 7) / 8;
  return bytes(be.begin() + static_cast<std::ptrdiff_t>(skip), be.end());
}

result<item> decode(bytes_view in, size_t max_depth) {
  const decoder d{in.data(), max_depth};
  size_t pos = 0;
  auto it = d.parse(pos, in.size(), 0, false);
  if (!it)
    return it;
  if (pos != in.size())
    return fail(rlp_errc::trailing_bytes,
                "rlp: " + std::to_string(in.size() - pos) + " trailing bytes after the item" + at(pos));
  return it;
}

result<u256> decode_uint(const item& it, std::string_view what) {
  if (it.is_list())
    return fail(rlp_errc::expected_string, std::string(what) + ": expected a byte string, got a list");
  const bytes& b = std::get<0>(it.node);
  if (b.size() > 32)
    return fail(rlp_errc::uint_overflow,
                std::string(what) + ": " + std::to_string(b.size()) + " bytes exceed 256 bits");
  if (!b.empty() && b[0] == 0)
    return fail(rlp_errc::leading_zero, std::string(what) + ": leading zero byte");
  return u256::from_be(b);
}

result<uint64_t> decode_u64(const item& it, std::string_view what) {
  auto v = decode_uint(it, what);
  if (!v)
    return std::move(v).err();
  if (!v->fits_u64())
    return fail(rlp_errc::uint_overflow, std::string(what) + ": value exceeds 64 bits");
  return static_cast<uint64_t>(*v);
}

}  // namespace enact::codec::rlp
