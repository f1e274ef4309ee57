// SPDX-License-Identifier: Apache-2.0
#include "support.hpp"

#include <string>
#include <string_view>
#include <vector>

#include "enact/codec/base58.hpp"
#include "enact/codec/hex.hpp"

using namespace enact;
using namespace std::string_view_literals;

TEST_CASE("base58 encode/decode round-trips the reference vectors") {
  struct case_ {
    std::string_view hex;
    std::string_view b58;
  };
  const case_ cases[] = {
      // Bitcoin Core src/test/data/base58_encode_decode.json
      {""sv, ""sv},
      {"61"sv, "2g"sv},
      {"626262"sv, "a3gV"sv},
      {"636363"sv, "aPEr"sv},
      {"73696d706c792061206c6f6e6720737472696e67"sv, "2cFupjhnEsSn59qHXstmK2ffpLv2"sv},
      {"00eb15231dfceb60925886b67d065299925915aeb172c06647"sv, "1NS17iag9jJgTHD1VXjvLCEnZuQ3rJDE9L"sv},
      {"516b6fcd0f"sv, "ABnLTmg"sv},
      {"bf4f89001e670274dd"sv, "3SEo3LWLoPntC"sv},
      {"572e4794"sv, "3EFU7m"sv},
      {"ecac89cad93923c02321"sv, "EJDM8drfXA6uyA"sv},
      {"10c8511e"sv, "Rt5zm"sv},
      {"00000000000000000000"sv, "1111111111"sv},
      // draft-msporny-base58-03 §5
      {"48656c6c6f20576f726c6421"sv, "2NEpo7TZRRrLZSi2U"sv},
      {"0000287fb4cd"sv, "11233QC4"sv},
      // IPFS "hello world" CIDv0 multihash (ipfs-only-hash 4.0.0)
      {"1220f852c7fa62f971817f54d8a80dcd63fcf7098b3cbde9ae8ec1ee449013ec5db0"sv,
       "Qmf412jQZiuVUtdgnB36FXFX7xg5V6KEbSJ4dpQuhkLyfD"sv},
  };
  for (const auto& c : cases) {
    const bytes raw = *codec::hex::decode(c.hex);
    CHECK_MESSAGE(codec::base58::encode(raw) == c.b58, c.b58);
    auto d = codec::base58::decode(c.b58);
    REQUIRE_MESSAGE(d, c.b58);
    CHECK_MESSAGE(*d == raw, c.b58);
  }
}

TEST_CASE("base58 leading zero bytes map to leading '1's") {
  CHECK(codec::base58::encode(bytes{0}) == "1");
  CHECK(codec::base58::encode(bytes{0, 0, 1}) == "112");
  CHECK(*codec::base58::decode("1") == bytes{0});
  CHECK(*codec::base58::decode("111") == bytes{0, 0, 0});
  CHECK(*codec::base58::decode("112") == bytes{0, 0, 1});
}

TEST_CASE("base58 round-trips every byte length up to 80") {
  for (size_t n = 0; n <= 80; ++n) {
    bytes b(n);
    for (size_t i = 0; i < n; ++i)
      b[i] = static_cast<uint8_t>(i * 97 + n);
    if (n > 2)
      b[0] = 0;  // exercise the zero prefix too
    auto d = codec::base58::decode(codec::base58::encode(b));
    REQUIRE(d);
    CHECK(*d == b);
  }
}

TEST_CASE("base58 decode rejects invalid input with a typed error") {
  // 0, O, I and l are not in the Bitcoin alphabet.
  const std::vector<test::refusal<base58_errc>> cases = {
      {"0"sv, base58_errc::bad_char},    {"O"sv, base58_errc::bad_char},   {"I"sv, base58_errc::bad_char},
      {"l"sv, base58_errc::bad_char},    {"2g "sv, base58_errc::bad_char}, {" 2g"sv, base58_errc::bad_char},
      {"2g\0"sv, base58_errc::bad_char}, {"Qm+"sv, base58_errc::bad_char}, {"\xc3\xa9"sv, base58_errc::bad_char},
  };
  test::check_refusals(cases, [](std::string_view in) { return codec::base58::decode(in); });
  CHECK(codec::base58::decode("2gl", "key").err().message == "key: invalid base58 character at offset 2");
}

TEST_CASE("base58 decode refuses oversized input instead of running quadratically") {
  const std::string at_limit(codec::base58::kMaxDecodeLength, 'z');
  CHECK(codec::base58::decode(at_limit).has_value());
  const std::string over(codec::base58::kMaxDecodeLength + 1, 'z');
  CHECK(codec::base58::decode(over).code() == base58_errc::too_long);
  const std::string huge(1 << 20, '1');
  CHECK(codec::base58::decode(huge).code() == base58_errc::too_long);
}
