// SPDX-License-Identifier: Apache-2.0
#include "support.hpp"

#include <string_view>

#include "enact/crypto/hkdf.hpp"

using namespace enact;
using namespace std::string_view_literals;

namespace {
bytes range(uint8_t first, uint8_t last) {
  bytes b;
  for (unsigned i = first; i <= last; ++i)
    b.push_back(static_cast<uint8_t>(i));
  return b;
}
}  // namespace

TEST_CASE("HKDF-SHA256 matches RFC 5869 Appendix A") {
  struct case_ {
    const char* name;
    bytes ikm, salt, info;
    size_t length;
    std::string_view okm;
  };
  // RFC 5869 Appendix A.1–A.3 (SHA-256 cases); Node's crypto.hkdfSync gives the same values.
  const case_ cases[] = {
      {"A.1 basic", bytes(22, 0x0b), range(0x00, 0x0c), range(0xf0, 0xf9), 42,
       "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865"sv},
      {"A.2 longer inputs", range(0x00, 0x4f), range(0x60, 0xaf), range(0xb0, 0xff), 82,
       "b11e398dc80327a1c8e7f78c596a49344f012eda2d4efad8a050cc4c19afa97c59045a99cac7827271cb41c6"
       "5e590e09da3275600c2f09b8367793a9aca3db71cc30c58179ec3e87c14c01d5c1f3434f1d87"sv},
      {"A.3 empty salt and info", bytes(22, 0x0b), bytes{}, bytes{}, 42,
       "8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8"sv},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    const auto okm = crypto::hkdf_sha256(c.ikm, c.salt, c.info, c.length);
    REQUIRE(okm);
    CHECK(bytes(okm->view().begin(), okm->view().end()) == codec::hex::decode(c.okm).value());
  }
}

TEST_CASE("HKDF-SHA256 output length limits") {
  const bytes ikm(32, 7);
  CHECK(crypto::hkdf_sha256(ikm, {}, {}, 0).code() == hkdf_errc::bad_length);
  CHECK(crypto::hkdf_sha256(ikm, {}, {}, crypto::kHkdfSha256MaxLength + 1).code() == hkdf_errc::bad_length);
  const auto longest = crypto::hkdf_sha256(ikm, {}, {}, crypto::kHkdfSha256MaxLength);
  REQUIRE(longest);
  CHECK(longest->size() == 8160);
  // A shorter output is a prefix of a longer one (RFC 5869 §2.3, T(1) ‖ T(2) ‖ …).
  const auto one = crypto::hkdf_sha256(ikm, {}, {}, 1);
  REQUIRE(one);
  CHECK(one->view()[0] == longest->view()[0]);
  // An empty input key is allowed.
  CHECK(crypto::hkdf_sha256({}, {}, {}, 32));
}
