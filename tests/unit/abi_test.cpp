// SPDX-License-Identifier: Apache-2.0
#include "support.hpp"

#include <boost/json.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "enact/codec/abi.hpp"
#include "enact/codec/abi_json.hpp"

using namespace enact;
using namespace std::string_view_literals;
using codec::abi::value;

namespace {
bytes X(std::string_view h) { return codec::hex::decode(h).value(); }
value N(uint64_t v) { return value::number(u256{v}); }
value I(int64_t v) { return value::signed_number(v); }
value B(bool b) { return value::boolean(b); }
value Y(std::string_view h) { return value::blob(X(h)); }
value T(std::string s) { return value::text(std::move(s)); }
value A(std::string_view h) { return value::addr(codec::hex::decode_fixed<20>(h).value()); }
value L(std::vector<value> v) { return value::list(std::move(v)); }
std::vector<codec::abi::type> types_of(const std::vector<std::string_view>& names) {
  std::vector<codec::abi::type> out;
  for (auto n : names)
    out.push_back(codec::abi::type::parse(n).value());
  return out;
}
/// A 32-byte word of hex, right-aligned: W("45") is 31 zero bytes then 0x45.
std::string W(std::string_view h) { return std::string(64 - h.size(), '0') + std::string(h); }
/// The word of an integer.
std::string Wn(uint64_t v) { return codec::hex::encode(u256{v}.to_be()); }
/// A 32-byte word of hex, left-aligned (bytes and bytesN payloads).
std::string P(std::string_view h) { return std::string(h) + std::string(64 - h.size(), '0'); }
std::string words(std::initializer_list<std::string_view> ws) {
  std::string out;
  for (auto w : ws)
    out += w;
  return out;
}
}  // namespace

TEST_CASE("abi type parsing and canonical forms") {
  struct case_ {
    std::string_view in, canonical;
    bool dynamic;
    size_t head;
  };
  // Solidity ABI spec, "Types": uint/int alias uint256/int256; tuple(...) is ethers' spelling.
  const case_ cases[] = {
      {"uint256", "uint256", false, 32},
      {"uint", "uint256", false, 32},
      {"int", "int256", false, 32},
      {"uint8", "uint8", false, 32},
      {"int24", "int24", false, 32},
      {"address", "address", false, 32},
      {"bool", "bool", false, 32},
      {"bytes1", "bytes1", false, 32},
      {"bytes32", "bytes32", false, 32},
      {"bytes", "bytes", true, 32},
      {"string", "string", true, 32},
      {"uint256[]", "uint256[]", true, 32},
      {"bytes3[2]", "bytes3[2]", false, 64},
      {"uint8[3][]", "uint8[3][]", true, 32},
      {"uint[2][3]", "uint256[2][3]", false, 192},
      {"string[2]", "string[2]", true, 32},
      {"(uint256,bool)", "(uint256,bool)", false, 64},
      {"tuple(uint256,bool)", "(uint256,bool)", false, 64},
      {"(uint256, string[])[2][]", "(uint256,string[])[2][]", true, 32},
      {"((int,address)[2],bytes32)", "((int256,address)[2],bytes32)", false, 160},
      {"uint256[134217728]", "uint256[134217728]", false, size_t{1} << 32},
  };
  for (const auto& c : cases) {
    CAPTURE(c.in);
    auto t = codec::abi::type::parse(c.in);
    REQUIRE(t);
    CHECK(t->canonical() == c.canonical);
    CHECK(t->is_dynamic() == c.dynamic);
    CHECK(t->head_size() == c.head);
    CHECK(*codec::abi::type::parse(t->canonical()) == *t);
  }
  const auto t = codec::abi::type::of("(uint256,string[])[2][]");
  CHECK(t.kind == codec::abi::type_kind::array);
  CHECK(t.element().kind == codec::abi::type_kind::fixed_array);
  CHECK(t.element().size == 2);
  CHECK(t.element().element().components[1].kind == codec::abi::type_kind::array);
}

TEST_CASE("abi type parsing rejects malformed types") {
  const std::string deep_tuple = std::string(65, '(') + "bool" + std::string(65, ')');
  std::string deep_array = "bool";
  for (int i = 0; i < 64; ++i)
    deep_array += "[]";
  const std::string_view cases[] = {
      "",
      "uint7",
      "uint264",
      "uint0",
      "uint08",
      "int257",
      "bytes0",
      "bytes33",
      "bytes01",
      "fixed128x18",
      "ufixed",
      "function",
      "Uint256",
      "uint256 ",
      " uint256",
      "uint256[",
      "uint256[]]",
      "uint256[0]",
      "uint256[01]",
      "uint256[-1]",
      "uint256[x]",
      "()",
      "(uint256",
      "(uint256,)",
      "(,uint256)",
      "(uint256 a)",
      "tuple",
      "tuple()",
      "uint256[99999999999999999999]",
      "uint256[134217729]",  // static encoding above 2^32 bytes
      deep_tuple,
      deep_array,
  };
  for (const auto& c : cases) {
    CAPTURE(c);
    auto t = codec::abi::type::parse(c);
    REQUIRE(!t);
    CHECK(t.code() == abi_errc::bad_type);
  }
  CHECK(codec::abi::type::parse("uint7").err().message ==
        "abi type \"uint7\": invalid integer width (8..256 in steps of 8) at offset 5");
}

TEST_CASE("abi encodes the Solidity ABI spec examples") {
  struct case_ {
    std::string_view sig;
    std::vector<value> args;
    std::string out;
  };
  // Solidity ABI spec, "Examples" and "Use of Dynamic Types" (identical output from ethers 6.17
  // Interface.encodeFunctionData).
  const case_ cases[] = {
      {"baz(uint32,bool)", {N(69), B(true)}, "cdcd77c0" + W("45") + W("1")},
      {"bar(bytes3[2])", {L({Y("616263"), Y("646566")})}, "fce353f6" + P("616263") + P("646566")},
      {"sam(bytes,bool,uint256[])",
       {Y("64617665"), B(true), L({N(1), N(2), N(3)})},
       "a5643bf2" + words({W("60"), W("1"), W("a0"), W("4"), P("64617665"), W("3"), W("1"), W("2"), W("3")})},
      {"f(uint256,uint32[],bytes10,bytes)",
       {N(0x123), L({N(0x456), N(0x789)}), Y("31323334353637383930"), Y("48656c6c6f2c20776f726c6421")},
       "8be65246" + words({W("123"), W("80"), P("31323334353637383930"), W("e0"), W("2"), W("456"), W("789"), W("d"),
                           P("48656c6c6f2c20776f726c6421")})},
      {"g(uint256[][],string[])",
       {L({L({N(1), N(2)}), L({N(3)})}), L({T("one"), T("two"), T("three")})},
       "2289b18c" + words({W("40"), W("140"),    W("2"), W("40"),     W("a0"), W("2"),         W("1"),
                           W("2"),  W("1"),      W("3"), W("3"),      W("60"), W("a0"),        W("e0"),
                           W("3"),  P("6f6e65"), W("3"), P("74776f"), W("5"),  P("7468726565")})},
  };
  for (const auto& c : cases) {
    CAPTURE(c.sig);
    auto enc = codec::abi::encode_call(c.sig, c.args);
    REQUIRE(enc);
    CHECK(codec::hex::encode(*enc) == c.out);
    auto fn = codec::abi::parse_signature(c.sig);
    REQUIRE(fn);
    auto dec = codec::abi::decode_call(*fn, *enc);
    REQUIRE(dec);
    CHECK(*dec == c.args);
  }
}

TEST_CASE("abi encode/decode round-trips ethers AbiCoder vectors") {
  struct case_ {
    std::vector<std::string_view> types;
    std::vector<value> values;
    std::string out;
  };
  // Computed with ethers 6.17 AbiCoder.defaultAbiCoder().encode(types, values).
  const std::string ff = std::string(64, 'f');
  const case_ cases[] = {
      {{"int8", "int8", "int256", "int16", "uint8", "uint256", "int256"},
       {I(-128), I(127), I(-1), I(-300), N(255), value::number(u256::max()), value::number(u256{1} << 255)},
       words({std::string(62, 'f') + "80", W("7f"), ff, std::string(60, 'f') + "fed4", W("ff"), ff, P("8")})},
      {{"address", "bytes32", "bool", "bytes1"},
       {A("52908400098527886e0f7030069857d2e4169ee7"), Y(std::string(64, 'a')), B(false), Y("ff")},
       words({W("52908400098527886e0f7030069857d2e4169ee7"), std::string(64, 'a'), W("0"), P("ff")})},
      {{"bytes", "string", "uint256[]", "string[]"},
       {Y(""), T(""), L({}), L({})},
       words({W("80"), W("a0"), W("c0"), W("e0"), W("0"), W("0"), W("0"), W("0")})},
      {{"string"},
       {T("abcdefghijklmnopqrstuvwxyz0123456")},
       words({W("20"), W("21"), "6162636465666768696a6b6c6d6e6f707172737475767778797a303132333435", P("36")})},
      {{"(uint256,string[])[2][]"},
       {L({L({L({N(1), L({T("a"), T("bc")})}), L({N(2), L({})})})})},
       words({W("20"), W("1"), W("20"), W("40"), W("160"), W("1"), W("40"), W("2"), W("40"), W("80"), W("1"), P("61"),
              W("2"), P("6263"), W("2"), W("40"), W("0")})},
      {{"(uint8,(bool,address),bytes)", "uint16[2][2]"},
       {L({N(7), L({B(true), A("000000000000000000000000000000000000dead")}), Y("0102")}),
        L({L({N(1), N(2)}), L({N(3), N(4)})})},
       words({W("a0"), W("1"), W("2"), W("3"), W("4"), W("7"), W("1"), W("dead"), W("80"), W("2"), P("0102")})},
  };
  for (const auto& c : cases) {
    const auto types = types_of(c.types);
    CAPTURE(types[0].canonical());
    auto enc = codec::abi::encode(types, c.values);
    REQUIRE(enc);
    CHECK(codec::hex::encode(*enc) == c.out);
    auto dec = codec::abi::decode(types, X(c.out));
    REQUIRE(dec);
    CHECK(*dec == c.values);
  }
}

TEST_CASE("abi encode checks values against their types") {
  struct bad {
    std::string_view type;
    value v;
    abi_errc code;
  };
  const bad cases[] = {
      {"uint8", N(256), abi_errc::out_of_range},         {"uint8", I(-1), abi_errc::out_of_range},
      {"int8", N(128), abi_errc::out_of_range},          {"int8", I(-129), abi_errc::out_of_range},
      {"uint256", T("1"), abi_errc::type_mismatch},      {"bool", N(1), abi_errc::type_mismatch},
      {"address", Y("00"), abi_errc::type_mismatch},     {"string", Y("00"), abi_errc::type_mismatch},
      {"bytes", T("x"), abi_errc::type_mismatch},        {"bytes3", Y("0102"), abi_errc::wrong_length},
      {"uint256[2]", L({N(1)}), abi_errc::wrong_length}, {"(uint256,bool)", L({N(1)}), abi_errc::wrong_length},
      {"uint256[]", N(1), abi_errc::type_mismatch},
  };
  for (const auto& c : cases) {
    CAPTURE(c.type);
    const auto types = types_of({c.type});
    auto r = codec::abi::encode(types, std::vector<value>{c.v});
    REQUIRE(!r);
    CHECK(r.code() == c.code);
  }
  const auto types = types_of({"bool", "string", "uint8[]"});
  const std::vector<value> vals{B(true), T("x"), L({N(1), N(300)})};
  CHECK(codec::abi::encode(types, vals).err().message == "arg 2[1]: 300 out of range for uint8");
  CHECK(codec::abi::encode(types, std::vector<value>{B(true)}).code() == abi_errc::wrong_length);
  codec::abi::type bogus;  // a type built by hand is validated too
  bogus.bits = 7;
  CHECK(codec::abi::encode(std::vector<codec::abi::type>{bogus}, std::vector<value>{N(1)}).code() ==
        abi_errc::bad_type);
}

TEST_CASE("abi decode rejects non-canonical and out-of-bounds data") {
  struct bad {
    std::string_view name;
    std::vector<std::string_view> types;
    std::string data;
    abi_errc code;
  };
  const std::string ff = std::string(64, 'f');
  const bad cases[] = {
      {"empty", {"uint256"}, "", abi_errc::truncated},
      {"short word", {"uint256"}, std::string(62, '0'), abi_errc::truncated},
      {"uint8 high bits", {"uint8"}, W("100"), abi_errc::out_of_range},
      {"uint248 top byte set", {"uint248"}, "01" + std::string(62, '0'), abi_errc::out_of_range},
      {"int8 positive 128", {"int8"}, W("80"), abi_errc::out_of_range},
      {"int8 -129", {"int8"}, std::string(60, 'f') + "ff7f", abi_errc::out_of_range},
      {"int8 unextended -1", {"int8"}, W("ff"), abi_errc::out_of_range},
      {"bool 2", {"bool"}, W("2"), abi_errc::bad_bool},
      {"bool high bit", {"bool"}, P("8"), abi_errc::bad_bool},
      {"address padding", {"address"}, W("01" + std::string(40, '0')), abi_errc::bad_padding},
      {"bytes3 padding", {"bytes3"}, P("61626301"), abi_errc::bad_padding},
      {"bytes payload padding", {"bytes"}, W("20") + W("1") + P("6101"), abi_errc::bad_padding},
      {"bytes padding missing", {"bytes"}, W("20") + W("21") + ff + "ff", abi_errc::truncated},
      {"bytes length past end", {"bytes"}, W("20") + W("40") + ff, abi_errc::truncated},
      {"bytes huge length", {"bytes"}, W("20") + ff, abi_errc::truncated},
      {"string huge length", {"string"}, W("20") + W("10000000000000000"), abi_errc::truncated},
      {"offset past end", {"bytes"}, W("60") + W("0"), abi_errc::bad_offset},
      {"offset huge", {"string"}, P("8"), abi_errc::bad_offset},
      {"offset at end", {"bytes"}, W("20"), abi_errc::truncated},
      {"array count huge", {"uint256[]"}, W("20") + ff, abi_errc::truncated},
      {"array count past end", {"uint256[]"}, W("20") + W("3") + W("1") + W("2"), abi_errc::truncated},
      {"array count 2^32", {"uint8[]"}, W("20") + W("100000000"), abi_errc::truncated},
      {"nested offset past end", {"uint256[][]"}, W("20") + W("1") + W("ffff"), abi_errc::bad_offset},
      {"static array short", {"uint256[3]"}, W("1") + W("2"), abi_errc::truncated},
      {"tuple element bad", {"(uint256,bool)"}, W("1") + W("5"), abi_errc::bad_bool},
  };
  for (const auto& c : cases) {
    CAPTURE(c.name);
    auto r = codec::abi::decode(types_of(c.types), X(c.data));
    REQUIRE(!r);
    CHECK(r.code() == c.code);
  }
  // The position of the offending value is named.
  const std::string data = words({W("1"), W("60"), W("a0"), W("1"), P("78"), W("2"), W("1"), W("101")});
  auto r = codec::abi::decode(types_of({"bool", "string", "uint8[]"}), X(data));
  REQUIRE(!r);
  CHECK(r.err().message == "arg 2[1]: uint8 out of range (high bits set)");
  // Without the dirty word the same layout decodes.
  const std::string good = words({W("1"), W("60"), W("a0"), W("1"), P("78"), W("2"), W("1"), W("ff")});
  CHECK(codec::abi::decode(types_of({"bool", "string", "uint8[]"}), X(good)));
}

TEST_CASE("abi decode bounds what aliased offsets can materialise") {
  // bytes[] of n elements whose offsets all point at one 3200-byte payload: a few KiB of input
  // would otherwise decode to n * 3200 bytes.
  const size_t n = 100;
  std::string data = W("20") + Wn(n);
  for (size_t i = 0; i < n; ++i)
    data += Wn(32 * n);
  data += Wn(3200) + std::string(6400, '1');
  auto r = codec::abi::decode(types_of({"bytes[]"}), X(data));
  REQUIRE(!r);
  CHECK(r.code() == abi_errc::too_large);

  // uint256[][] whose 200 outer offsets share one inner array of 200 words.
  std::string nested = W("20") + W("c8");
  for (size_t i = 0; i < 200; ++i)
    nested += Wn(uint64_t{32} * 200);
  nested += W("c8");
  for (size_t i = 0; i < 200; ++i)
    nested += W("1");
  auto r2 = codec::abi::decode(types_of({"uint256[][]"}), X(nested));
  REQUIRE(!r2);
  CHECK(r2.code() == abi_errc::too_large);

  // The same shapes without sharing decode.
  std::vector<value> rows;
  for (int i = 0; i < 50; ++i)
    rows.push_back(L({N(1), N(2), N(3)}));
  const auto t = types_of({"uint256[][]"});
  const std::vector<value> vals{L(rows)};
  auto enc = codec::abi::encode(t, vals);
  REQUIRE(enc);
  auto dec = codec::abi::decode(t, *enc);
  REQUIRE(dec);
  CHECK(*dec == vals);
}

TEST_CASE("abi signatures and selectors") {
  // Solidity ABI spec "Function Selector"; transfer/Transfer from ERC-20 (EIP-20).
  CHECK(codec::hex::encode(codec::abi::selector("baz(uint32,bool)")) == "cdcd77c0");
  CHECK(codec::hex::encode(codec::abi::selector("transfer(address,uint256)")) == "a9059cbb");

  struct case_ {
    std::string_view in, canonical;
  };
  const case_ cases[] = {
      {"f(uint256,string)", "f(uint256,string)"},
      {"f()", "f()"},
      {"  f ( uint , int8[] ) ", "f(uint256,int8[])"},
      {"transfer(address to, uint256 amount)", "transfer(address,uint256)"},
      {"Transfer(address indexed from, address indexed to, uint256 value)", "Transfer(address,address,uint256)"},
      {"g((uint256, bool)[] memory xs, string calldata s)", "g((uint256,bool)[],string)"},
      {"h(tuple(uint256,address))", "h((uint256,address))"},
      {"_$x1(bool)", "_$x1(bool)"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.in);
    auto fn = codec::abi::parse_signature(c.in);
    REQUIRE(fn);
    CHECK(fn->canonical() == c.canonical);
  }
  auto ev = codec::abi::parse_signature("Transfer(address indexed from, address indexed to, uint256 value)");
  REQUIRE(ev);
  CHECK(ev->name == "Transfer");
  CHECK(ev->input_names == std::vector<std::string>{"from", "to", "value"});
  CHECK(ev->indexed == std::vector<bool>{true, true, false});
  CHECK(codec::hex::encode(ev->selector()) == "ddf252ad");  // keccak256 of the canonical event signature

  test::check_refusals<abi_errc>(
      {
          {"", abi_errc::bad_signature},
          {"(uint256)", abi_errc::bad_signature},
          {"f", abi_errc::bad_signature},
          {"f(", abi_errc::bad_signature},
          {"f(uint256", abi_errc::bad_signature},
          {"f(uint256,)", abi_errc::bad_type},
          {"f(uint256) x", abi_errc::bad_signature},
          {"1f()", abi_errc::bad_signature},
          {"f(uint256 a b)", abi_errc::bad_signature},
          {"f(uint256a)", abi_errc::bad_signature},
          {"f(uint7)", abi_errc::bad_type},
          {"f-g()", abi_errc::bad_signature},
      },
      [](std::string_view in) { return codec::abi::parse_signature(in); });
  auto fn = codec::abi::parse_signature("baz(uint32,bool)");
  REQUIRE(fn);
  CHECK(codec::abi::decode_call(*fn, X("cdcd77")).code() == abi_errc::truncated);
  CHECK(codec::abi::decode_call(*fn, X("a9059cbb" + W("45") + W("1"))).code() == abi_errc::selector_mismatch);
}

TEST_CASE("abi packed encoding") {
  // Computed with ethers 6.17 solidityPacked(types, values).
  const auto types = types_of(
      {"address", "uint8", "int16", "bool", "bytes3", "string", "bytes", "uint16[]", "bool[2]", "bytes2[]", "int8[]"});
  const std::vector<value> vals{A("000000000000000000000000000000000000dead"),
                                N(255),
                                I(-2),
                                B(true),
                                Y("616263"),
                                T("hi"),
                                Y("0102"),
                                L({N(1), N(2)}),
                                L({B(true), B(false)}),
                                L({Y("aabb")}),
                                L({I(-1)})};
  auto packed = codec::abi::encode_packed(types, vals);
  REQUIRE(packed);
  CHECK(codec::hex::encode(*packed) ==
        "000000000000000000000000000000000000dead"
        "ff"
        "fffe"
        "01"
        "616263"
        "6869"
        "0102" +
            W("1") + W("2") + W("1") + W("0") + P("aabb") + std::string(64, 'f'));
  CHECK(codec::abi::encode_packed(types_of({"(uint256)"}), std::vector<value>{L({N(1)})}).code() ==
        abi_errc::type_mismatch);
  CHECK(codec::abi::encode_packed(types_of({"string[]"}), std::vector<value>{L({T("a")})}).code() ==
        abi_errc::type_mismatch);
  CHECK(codec::abi::encode_packed(types_of({"uint8"}), std::vector<value>{N(256)}).code() == abi_errc::out_of_range);
}

TEST_CASE("abi JSON bridge") {
  const auto t = codec::abi::type::of("(uint8,int16,address,bool,bytes2,bytes,string,uint256[])");
  // ethers-style input: numbers, decimal and hex strings, a lowercase address.
  const auto in = boost::json::parse(R"([
    7, "-300", "0x52908400098527886e0f7030069857d2e4169ee7", true, "0xABcd", "0x", "hé",
    [1, "2", "0x03", 9007199254740992, "115792089237316195423570985008687907853269984665640564039457584007913129639935"]
  ])");
  auto v = codec::abi::from_json(t, in);
  REQUIRE(v);
  const auto& items = v->as_list();
  CHECK(items[0] == N(7));
  CHECK(items[1] == I(-300));
  CHECK(items[4] == Y("abcd"));
  CHECK(items[7].as_list()[3] == N(9007199254740992ULL));
  CHECK(items[7].as_list()[4] == value::number(u256::max()));
  // Output: decimal strings, EIP-55 address (EIP-55 test vector), lowercase hex.
  CHECK(
      boost::json::serialize(codec::abi::to_json(t, *v)) ==
      R"(["7","-300","0x52908400098527886E0F7030069857D2E4169EE7",true,"0xabcd","0x","hé",)"
      R"(["1","2","3","9007199254740992","115792089237316195423570985008687907853269984665640564039457584007913129639935"]])");

  struct bad {
    std::string_view type, json;
    abi_errc code;
  };
  const bad cases[] = {
      {"uint8", "256", abi_errc::out_of_range},
      {"uint8", "-1", abi_errc::out_of_range},
      {"uint8", R"("-1")", abi_errc::out_of_range},
      {"int8", "-129", abi_errc::out_of_range},
      {"int8", R"("128")", abi_errc::out_of_range},
      {"uint256", "1.5", abi_errc::bad_value},
      {"uint256", "1e300", abi_errc::bad_value},
      {"uint256", R"("12x")", abi_errc::bad_value},
      {"uint256", R"("")", abi_errc::bad_value},
      {"uint256", "true", abi_errc::type_mismatch},
      {"bool", R"("true")", abi_errc::type_mismatch},
      {"address", R"("0x1234")", abi_errc::bad_value},
      {"address", "1", abi_errc::type_mismatch},
      {"bytes2", R"("0xabcdef")", abi_errc::wrong_length},
      {"bytes", R"("abcd")", abi_errc::bad_value},
      {"bytes", R"("0xabc")", abi_errc::bad_value},
      {"string", "1", abi_errc::type_mismatch},
      {"uint256[2]", "[1]", abi_errc::wrong_length},
      {"(uint256,bool)", "[1]", abi_errc::wrong_length},
      {"(uint256,bool)", R"({"a":1})", abi_errc::type_mismatch},
      {"uint256[]", "[1, null]", abi_errc::type_mismatch},
  };
  for (const auto& c : cases) {
    CAPTURE(c.type);
    CAPTURE(c.json);
    auto r = codec::abi::from_json(codec::abi::type::of(c.type), boost::json::parse(c.json));
    REQUIRE(!r);
    CHECK(r.code() == c.code);
  }
  CHECK(codec::abi::from_json(codec::abi::type::of("uint256[]"), boost::json::parse("[1, true]"), "amounts")
            .err()
            .message == "amounts[1]: expected uint256, got a bool");
  CHECK(codec::abi::from_json(codec::abi::type::of("uint256"), boost::json::parse("1e3")).value() == N(1000));
  CHECK_THROWS_AS((void)codec::abi::to_json(codec::abi::type::of("bool"), N(1)), Error);
}

TEST_CASE("abi command-line arguments") {
  struct case_ {
    std::string_view type, arg;
    value expected;
  };
  const case_ cases[] = {
      {"uint256", "42", N(42)},
      {"uint256", "0x2a", N(42)},
      {"int256", "-1", I(-1)},
      {"int8", "-0x80", I(-128)},
      {"bool", "true", B(true)},
      {"bool", "false", B(false)},
      {"address", "0x52908400098527886E0F7030069857D2E4169EE7", A("52908400098527886e0f7030069857d2e4169ee7")},
      {"bytes", "0x0102", Y("0102")},
      {"bytes4", "0x01020304", Y("01020304")},
      {"string", "hello world", T("hello world")},
      {"string", "[1]", T("[1]")},
      {"uint256[]", "[1, \"2\", \"0x3\"]", L({N(1), N(2), N(3)})},
      {"(uint256,string)", R"([1, "a"])", L({N(1), T("a")})},
  };
  for (const auto& c : cases) {
    CAPTURE(c.type);
    CAPTURE(c.arg);
    auto v = codec::abi::from_cli_arg(codec::abi::type::of(c.type), c.arg);
    REQUIRE(v);
    CHECK(*v == c.expected);
  }
  struct bad {
    std::string_view type, arg;
    abi_errc code;
  };
  const bad bads[] = {
      {"uint256", "-1", abi_errc::out_of_range}, {"uint256", "4 2", abi_errc::bad_value},
      {"uint8", "256", abi_errc::out_of_range},  {"bool", "yes", abi_errc::bad_value},
      {"bool", "1", abi_errc::bad_value},        {"address", "0x123", abi_errc::bad_value},
      {"bytes", "0102", abi_errc::bad_value},    {"uint256[]", "1,2", abi_errc::bad_value},
      {"uint256[]", "[1,", abi_errc::bad_value}, {"uint256[2]", "[1,2,3]", abi_errc::wrong_length},
  };
  for (const auto& c : bads) {
    CAPTURE(c.type);
    CAPTURE(c.arg);
    auto v = codec::abi::from_cli_arg(codec::abi::type::of(c.type), c.arg);
    REQUIRE(!v);
    CHECK(v.code() == c.code);
  }
  CHECK(codec::abi::from_cli_arg(codec::abi::type::of("uint8"), "300", "arg 1").err().message ==
        "arg 1: 300 out of range for uint8");
}
