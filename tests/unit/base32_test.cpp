// SPDX-License-Identifier: Apache-2.0
#include "support.hpp"

#include <string_view>

#include "enact/codec/base32.hpp"
#include "enact/codec/hex.hpp"

using namespace enact;
using namespace std::string_view_literals;

TEST_CASE("base32 lower no-pad matches RFC 4648 §10") {
  // RFC 4648 §10 test vectors, lowercased and without '=' padding (multibase 'b').
  const test::text_vector cases[] = {
      {""sv, ""sv},
      {"f"sv, "my"sv},
      {"fo"sv, "mzxq"sv},
      {"foo"sv, "mzxw6"sv},
      {"foob"sv, "mzxw6yq"sv},
      {"fooba"sv, "mzxw6ytb"sv},
      {"foobar"sv, "mzxw6ytboi"sv},
  };
  for (const auto& c : cases) {
    CHECK(codec::base32::encode_lower_nopad(as_bytes(c.in)) == c.out);
    auto d = codec::base32::decode_lower_nopad(c.out);
    REQUIRE_MESSAGE(d, c.out);
    CHECK(as_chars(*d) == c.in);
  }
}

TEST_CASE("base32 encodes a CIDv1 as multiformats does") {
  // CIDv1 (dag-pb) of the IPFS docs example: bytes from js `cids` 1.1.9.
  const bytes raw = *codec::hex::decode("01701220c3c4733ec8affd06cf9e9ff50ffc6bcd2ec85a6170004bb709669c31de94391a");
  CHECK("b" + codec::base32::encode_lower_nopad(raw) == "bafybeigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi");
}

TEST_CASE("base32 round-trips every byte length up to 40") {
  for (size_t n = 0; n <= 40; ++n) {
    bytes b(n);
    for (size_t i = 0; i < n; ++i)
      b[i] = static_cast<uint8_t>(255 - i * 13);
    auto d = codec::base32::decode_lower_nopad(codec::base32::encode_lower_nopad(b));
    REQUIRE(d);
    CHECK(*d == b);
  }
}

TEST_CASE("base32 decode is strict") {
  test::check_refusals<base32_errc>(
      {
          {"MY"sv, base32_errc::bad_char},        // uppercase is another multibase ('B')
          {"my======"sv, base32_errc::bad_char},  // padding
          {"m1"sv, base32_errc::bad_char},        // 0, 1, 8, 9 are not in the alphabet
          {"m8"sv, base32_errc::bad_char},
          {"m y"sv, base32_errc::bad_length},  // 3 characters cannot encode whole bytes
          {"m"sv, base32_errc::bad_length},
          {"mzx"sv, base32_errc::bad_length},
          {"mzxw6y"sv, base32_errc::bad_length},
          {"mz"sv, base32_errc::non_canonical},  // "f" is "my": the last 2 bits must be zero
          {"mzxr"sv, base32_errc::non_canonical},
          {"mzxw7"sv, base32_errc::non_canonical},
          {"mzxw6yr"sv, base32_errc::non_canonical},
      },
      [](std::string_view in) { return codec::base32::decode_lower_nopad(in); });
  CHECK(codec::base32::decode_lower_nopad("my!a", "cid").err().message == "cid: invalid base32 character at offset 2");
}
