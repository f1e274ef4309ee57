// SPDX-License-Identifier: Apache-2.0
#include "support.hpp"

#include <string_view>

#include "enact/codec/hex.hpp"

using namespace enact;
using namespace std::string_view_literals;

TEST_CASE("hex encode/decode round-trips") {
  // Vectors: plain byte strings with their lowercase hex.
  const test::text_vector cases[] = {
      {""sv, ""sv}, {"\x00"sv, "00"sv}, {"\x01\xab\xff"sv, "01abff"sv}, {"hello"sv, "68656c6c6f"sv}};
  for (const auto& c : cases) {
    CHECK(codec::hex::encode(as_bytes(c.in)) == c.out);
    auto d = codec::hex::decode(c.out);
    REQUIRE(d);
    CHECK(as_chars(*d) == c.in);
  }
  CHECK(codec::hex::encode_prefixed(as_bytes("\x12")) == "0x12");
}

TEST_CASE("hex decode accepts either case and an optional prefix") {
  CHECK(*codec::hex::decode("0xABcd") == bytes{0xab, 0xcd});
  CHECK(*codec::hex::decode("0XabCD") == bytes{0xab, 0xcd});
  CHECK(codec::hex::decode("0x")->empty());
  CHECK(*codec::hex::decode_prefixed("0x00ff") == bytes{0x00, 0xff});
}

TEST_CASE("hex decode rejects malformed input with a typed error") {
  struct bad {
    std::string_view in;
    hex_errc code;
  };
  const bad cases[] = {
      {"0", hex_errc::odd_length},   {"0x123", hex_errc::odd_length}, {"zz", hex_errc::bad_digit},
      {"0x0g", hex_errc::bad_digit}, {"0x 1", hex_errc::bad_digit},   {"x0", hex_errc::bad_digit},
      {"-1", hex_errc::bad_digit},
  };
  for (const auto& c : cases) {
    auto r = codec::hex::decode(c.in);
    REQUIRE_MESSAGE(!r, c.in);
    CHECK_MESSAGE(r.code() == c.code, c.in);
  }
  CHECK(codec::hex::decode_prefixed("00").code() == hex_errc::missing_prefix);
  auto r = codec::hex::decode("0x0g", "signature");
  CHECK(r.err().message == "signature: invalid hex digit at offset 1");
}

TEST_CASE("fixed-size hex decode enforces the length") {
  auto ok = codec::hex::decode_fixed<2>("0x0102");
  REQUIRE(ok);
  CHECK((*ok)[1] == 2);
  CHECK(codec::hex::decode_fixed<2>("0x010203").code() == hex_errc::wrong_length);
  CHECK(codec::hex::decode_fixed<2>("01").code() == hex_errc::wrong_length);
  CHECK(codec::hex::decode_fixed<20>("0x").code() == hex_errc::wrong_length);
}
