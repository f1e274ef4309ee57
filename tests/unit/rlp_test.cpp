// SPDX-License-Identifier: Apache-2.0
#include "support.hpp"

#include <boost/json.hpp>

#include <string>
#include <string_view>

#include "enact/codec/rlp.hpp"
#include "enact/codec/rlp_json.hpp"

using namespace enact;
using namespace std::string_view_literals;

namespace {
bytes X(std::string_view h) { return codec::hex::decode(h).value(); }
codec::rlp::item S(std::string_view h) { return codec::rlp::item::string(X(h)); }
codec::rlp::item L(std::vector<codec::rlp::item> items) { return codec::rlp::item::list(std::move(items)); }
std::string rep(std::string_view two_hex_digits, size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i)
    out += two_hex_digits;
  return out;
}
codec::rlp::item nested_lists(size_t depth) {
  codec::rlp::item it = codec::rlp::item::list({});
  for (size_t i = 1; i < depth; ++i) {
    std::vector<codec::rlp::item> wrap;
    wrap.push_back(std::move(it));
    it = codec::rlp::item::list(std::move(wrap));
  }
  return it;
}
}  // namespace

TEST_CASE("rlp encodes and decodes the reference vectors") {
  struct case_ {
    std::string_view name;
    codec::rlp::item in;
    std::string out;  // hex
  };
  // Yellow Paper appendix B and the Ethereum wiki RLP page ("dog", ["cat","dog"], the set
  // theoretical representation of three, "Lorem ipsum…"); the rest computed with ethers 6.17
  // encodeRlp.
  const case_ cases[] = {
      {"empty string", S(""), "80"},
      {"empty list", L({}), "c0"},
      {"byte 0x00", S("00"), "00"},
      {"byte 0x0f", S("0f"), "0f"},
      {"byte 0x7f", S("7f"), "7f"},
      {"byte 0x80", S("80"), "8180"},
      {"dog", S("646f67"), "83646f67"},
      {"cat dog", L({S("636174"), S("646f67")}), "c88363617483646f67"},
      {"1024", S("0400"), "820400"},
      {"three", L({L({}), L({L({})}), L({L({}), L({L({})})})}), "c7c0c1c0c3c0c1c0"},
      {"lorem",
       S("4c6f72656d20697073756d20646f6c6f722073697420616d65742c20636f6e736563746574757220616469706"
         "9736963696e6720656c6974"),
       "b8384c6f72656d20697073756d20646f6c6f722073697420616d65742c20636f6e7365637465747572206164697"
       "069736963696e6720656c6974"},
      {"55-byte string", S(rep("ab", 55)), "b7" + rep("ab", 55)},
      {"56-byte string", S(rep("ab", 56)), "b838" + rep("ab", 56)},
      {"1024-byte string", S(rep("cd", 1024)), "b90400" + rep("cd", 1024)},
      {"list payload 54", L({S(rep("11", 53))}), "f6b5" + rep("11", 53)},
      {"list payload 55", L({S(rep("11", 54))}), "f7b6" + rep("11", 54)},
      {"list payload 56", L({S(rep("11", 55))}), "f838b7" + rep("11", 55)},
      {"mixed", L({S(""), S("00"), S("7f"), S("80"), L({S("0400"), S(rep("ff", 32))})}),
       "ea80007f8180e4820400a0" + rep("ff", 32)},
  };
  for (const auto& c : cases) {
    CAPTURE(c.name);
    CHECK(codec::hex::encode(codec::rlp::encode(c.in)) == c.out);
    auto d = codec::rlp::decode(X(c.out));
    REQUIRE(d);
    CHECK(*d == c.in);
  }
}

TEST_CASE("rlp integers: minimal big-endian, zero as the empty string") {
  struct case_ {
    u256 v;
    std::string_view out;
  };
  // Ethereum wiki RLP page (0, 15, 1024) and ethers 6.17 encodeRlp(toBeArray(v)).
  const case_ cases[] = {
      {u256{0}, "80"},
      {u256{1}, "01"},
      {u256{15}, "0f"},
      {u256{127}, "7f"},
      {u256{128}, "8180"},
      {u256{1024}, "820400"},
      {u256{0xffffffffffffffff}, "88ffffffffffffffff"},
      {u256::max(), "a0ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.out);
    CHECK(codec::hex::encode(codec::rlp::encode(c.v)) == c.out);
    CHECK(codec::rlp::encode(codec::rlp::item::uint(c.v)) == codec::rlp::encode(c.v));
    auto d = codec::rlp::decode(X(c.out));
    REQUIRE(d);
    CHECK(*codec::rlp::decode_uint(*d) == c.v);
  }
  CHECK(codec::hex::encode(codec::rlp::encode(uint64_t{1024})) == "820400");
  CHECK(*codec::rlp::decode_u64(codec::rlp::item::uint(u256{1024})) == 1024);
  CHECK(codec::rlp::decode_u64(codec::rlp::item::uint(u256{1} << 64)).code() == rlp_errc::uint_overflow);
  CHECK(codec::rlp::uint_bytes(u256{0x0102}) == bytes{0x01, 0x02});
  CHECK(codec::rlp::uint_bytes(u256{}).empty());
}

TEST_CASE("rlp sink encoders append") {
  bytes out{0xee};
  codec::rlp::encode(out, codec::rlp::item::list({S("01")}));
  codec::rlp::encode(out, bytes_view(X("646f67")));
  codec::rlp::encode(out, uint64_t{0});
  codec::rlp::encode_header(out, true, 56);
  CHECK(codec::hex::encode(out) == "eec10183646f6780f838");
}

TEST_CASE("rlp decode rejects malformed input with a typed error") {
  struct bad {
    std::string_view name;
    std::string in;
    rlp_errc code;
  };
  const bad cases[] = {
      {"empty input", "", rlp_errc::truncated},
      {"short string cut", "83646f", rlp_errc::truncated},
      {"long string cut", "b838" + rep("ab", 55), rlp_errc::truncated},
      {"length bytes cut", "b904", rlp_errc::truncated},
      {"list cut", "c3", rlp_errc::truncated},
      {"huge length", "bfffffffffffffffff", rlp_errc::truncated},
      {"huge list length", "ffffffffffffffffff", rlp_errc::truncated},
      {"0x00 wrapped", "8100", rlp_errc::non_canonical_single_byte},
      {"0x7f wrapped", "817f", rlp_errc::non_canonical_single_byte},
      {"nested 0x01 wrapped", "c28101", rlp_errc::non_canonical_single_byte},
      {"long form for 1 byte", "b80161", rlp_errc::non_canonical_size},
      {"long form for 55 bytes", "b837" + rep("ab", 55), rlp_errc::non_canonical_size},
      {"long list form for 1 byte", "f80100", rlp_errc::non_canonical_size},
      {"length with leading zero", "b90038" + rep("ab", 56), rlp_errc::leading_zero_length},
      {"list length with leading zero", "f90038" + rep("00", 56), rlp_errc::leading_zero_length},
      {"trailing byte", "83646f6700", rlp_errc::trailing_bytes},
      {"two items", "c0c0", rlp_errc::trailing_bytes},
      {"element past its list", "c283616263", rlp_errc::length_overflow},
      {"long element past its list", "c3b90400", rlp_errc::length_overflow},
  };
  for (const auto& c : cases) {
    CAPTURE(c.name);
    auto r = codec::rlp::decode(X(c.in));
    REQUIRE(!r);
    CHECK(r.code() == c.code);
  }
  CHECK(codec::rlp::decode(X("83646f6700")).err().message == "rlp: 1 trailing bytes after the item at offset 4");
}

TEST_CASE("rlp decode limits nesting depth") {
  const bytes deepest_ok = codec::rlp::encode(nested_lists(codec::rlp::kMaxDepth));
  const bytes too_deep = codec::rlp::encode(nested_lists(codec::rlp::kMaxDepth + 1));
  CHECK(codec::rlp::decode(deepest_ok));
  CHECK(codec::rlp::decode(too_deep).code() == rlp_errc::too_deep);
  CHECK(codec::rlp::decode(X("c1c0"), 2));
  CHECK(codec::rlp::decode(X("c2c1c0"), 2).code() == rlp_errc::too_deep);
}

TEST_CASE("rlp decode_uint rejects non-canonical integers") {
  CHECK(codec::rlp::decode_uint(S("00")).code() == rlp_errc::leading_zero);
  CHECK(codec::rlp::decode_uint(S("0001")).code() == rlp_errc::leading_zero);
  CHECK(codec::rlp::decode_uint(S("01" + rep("00", 32))).code() == rlp_errc::uint_overflow);
  CHECK(codec::rlp::decode_uint(L({})).code() == rlp_errc::expected_string);
  CHECK(*codec::rlp::decode_uint(S("")) == u256{});
}

TEST_CASE("rlp item accessors") {
  const codec::rlp::item s = S("0102");
  const codec::rlp::item l = L({s});
  CHECK(!s.is_list());
  CHECK(l.is_list());
  CHECK(s.as_bytes() == bytes{1, 2});
  CHECK(l.as_list().size() == 1);
  CHECK(codec::rlp::item{}.as_bytes().empty());
  try {
    (void)l.as_bytes();
    FAIL("as_bytes on a list must throw");
  } catch (const Error& e) {
    CHECK(e.code() == rlp_errc::expected_string);
  }
  try {
    (void)s.as_list();
    FAIL("as_list on a string must throw");
  } catch (const Error& e) {
    CHECK(e.code() == rlp_errc::expected_list);
  }
}

TEST_CASE("rlp JSON bridge uses ethers' shape") {
  // ethers 6.17: decodeRlp("0xea80007f8180e4820400a0ff…ff")
  const std::string json = R"(["0x","0x00","0x7f","0x80",["0x0400","0x)" + rep("ff", 32) + R"("]])";
  const boost::json::value v = boost::json::parse(json);
  auto it = codec::rlp::from_json(v);
  REQUIRE(it);
  CHECK(codec::hex::encode(codec::rlp::encode(*it)) == "ea80007f8180e4820400a0" + rep("ff", 32));
  CHECK(codec::rlp::to_json(*it) == v);
  CHECK(boost::json::serialize(codec::rlp::to_json(S("ABCD"))) == R"("0xabcd")");
  CHECK(*codec::rlp::from_json(boost::json::parse(R"("0xABcd")")) == S("abcd"));

  test::check_refusals<rlp_errc>(
      {
          {"1", rlp_errc::bad_json},
          {"null", rlp_errc::bad_json},
          {R"("abcd")", rlp_errc::bad_json},   // 0x prefix required
          {R"("0xabc")", rlp_errc::bad_json},  // odd digit count
          {R"("0xzz")", rlp_errc::bad_json},
          {R"(["0x", {"a": 1}])", rlp_errc::bad_json},
          {R"([[[["0x"]]]])", rlp_errc::too_deep},  // with max_depth 3 below
      },
      [](std::string_view in) { return codec::rlp::from_json(boost::json::parse(in), 3); });
  CHECK(codec::rlp::from_json(boost::json::parse(R"([1])")).err().message ==
        "rlp[0]: expected a 0x-hex string or an array");
}
