// SPDX-License-Identifier: Apache-2.0
#include "support.hpp"

#include <string_view>

#include "enact/codec/base64.hpp"

using namespace enact;
using namespace std::string_view_literals;

TEST_CASE("base64 RFC 4648 §10 test vectors") {
  struct case_ {
    std::string_view in, std, url;
  };
  // RFC 4648 §10; the unpadded base64url column drops the '=' of the same vectors (§5, §3.2).
  const case_ cases[] = {
      {""sv, ""sv, ""sv},
      {"f"sv, "Zg=="sv, "Zg"sv},
      {"fo"sv, "Zm8="sv, "Zm8"sv},
      {"foo"sv, "Zm9v"sv, "Zm9v"sv},
      {"foob"sv, "Zm9vYg=="sv, "Zm9vYg"sv},
      {"fooba"sv, "Zm9vYmE="sv, "Zm9vYmE"sv},
      {"foobar"sv, "Zm9vYmFy"sv, "Zm9vYmFy"sv},
  };
  for (const auto& c : cases) {
    CAPTURE(c.in);
    CHECK(codec::base64::encode(as_bytes(c.in)) == c.std);
    CHECK(codec::base64::encode_url(as_bytes(c.in)) == c.url);
    auto d = codec::base64::decode(c.std);
    REQUIRE(d);
    CHECK(as_chars(*d) == c.in);
    auto u = codec::base64::decode_url(c.url);
    REQUIRE(u);
    CHECK(as_chars(*u) == c.in);
    auto up = codec::base64::decode_url(c.std);  // padded base64url is accepted too
    REQUIRE(up);
    CHECK(as_chars(*up) == c.in);
  }
}

TEST_CASE("base64 alphabets differ in the last two symbols") {
  struct case_ {
    std::string_view hex, std, url;
  };
  // Computed with Python 3 base64.b64encode / urlsafe_b64encode (url form with '=' stripped).
  const case_ cases[] = {
      {"fbff", "+/8=", "-_8"},
      {"fffefdfc", "//79/A==", "__79_A"},
      {"000000ffee3e3f", "AAAA/+4+Pw==", "AAAA_-4-Pw"},
  };
  for (const auto& c : cases) {
    const bytes raw = codec::hex::decode(c.hex).value();
    CHECK(codec::base64::encode(raw) == c.std);
    CHECK(codec::base64::encode_url(raw) == c.url);
    CHECK(*codec::base64::decode(c.std) == raw);
    CHECK(*codec::base64::decode_url(c.url) == raw);
    CHECK(codec::base64::decode(c.url).code() == base64_errc::bad_char);
    CHECK(codec::base64::decode_url(c.std).code() == base64_errc::bad_char);
  }
  // A 32-byte API key encodes to 44 characters (docs/protocol.md §1).
  CHECK(codec::base64::encode(bytes(32, 0xab)).size() == 44);
}

TEST_CASE("base64 decode rejects malformed input with a typed error") {
  test::check_refusals<base64_errc>(
      {
          {"Zg", base64_errc::bad_padding},   // padding required
          {"Zg=", base64_errc::bad_padding},  // incomplete padding
          {"Zm9vY", base64_errc::bad_length},
          {"Z===", base64_errc::bad_padding},  // three '='
          {"====", base64_errc::bad_padding},
          {"Zg==Zg==", base64_errc::bad_padding},  // '=' inside
          {"Zm=v", base64_errc::bad_padding},
          {"Zh==", base64_errc::non_canonical},  // 'h' leaves non-zero trailing bits
          {"Zm9=", base64_errc::non_canonical},
          {"Zm 9v", base64_errc::bad_char},
          {"Zm9v\nYmFy", base64_errc::bad_char},
          {"Zm9 ", base64_errc::bad_char},  // whitespace
          {"Zm9\n", base64_errc::bad_char},
          {"Zm9-", base64_errc::bad_char},  // url alphabet
          {"Zm9_", base64_errc::bad_char},
          {"Zm9.", base64_errc::bad_char},
      },
      [](std::string_view in) { return codec::base64::decode(in); });
  CHECK(codec::base64::decode("Zm9 ", "api_key").err().message == "api_key: invalid base64 character at offset 3");
}

TEST_CASE("base64url decode rejects malformed input with a typed error") {
  test::check_refusals<base64_errc>(
      {
          {"Z", base64_errc::bad_length},  // 4k+1 symbols encode nothing
          {"Zm9vY", base64_errc::bad_length},
          {"Zg=", base64_errc::bad_padding},  // padding present but incomplete
          {"Zm9vYg=", base64_errc::bad_padding},
          {"Z===", base64_errc::bad_padding},
          {"Zg=Z", base64_errc::bad_padding},
          {"Zh", base64_errc::non_canonical},
          {"Zm9", base64_errc::non_canonical},
          {"Zm+v", base64_errc::bad_char},  // standard alphabet
          {"Zm/v", base64_errc::bad_char},
          {"Zm9v ", base64_errc::bad_char},
      },
      [](std::string_view in) { return codec::base64::decode_url(in); });
}

TEST_CASE("base64 round-trips every length and byte value") {
  bytes data;
  for (int i = 0; i < 300; ++i) {
    CAPTURE(i);
    CHECK(*codec::base64::decode(codec::base64::encode(data)) == data);
    CHECK(*codec::base64::decode_url(codec::base64::encode_url(data)) == data);
    data.push_back(static_cast<uint8_t>(i * 37 + 11));
  }
}
