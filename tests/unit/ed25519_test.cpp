// SPDX-License-Identifier: Apache-2.0
// Ed25519 (crypto::ed25519) and the PKP Ed25519 key (pkp::ed25519_seed, ed25519_public_key,
// solana_address) against tests/vectors/ed25519.json: RFC 8032 §7.1 and PKP derivations whose
// keys and signatures @noble/curves and @solana/web3.js computed (tests/vectors/README.md).
#include "support.hpp"

#include <boost/json.hpp>

#include <string>

#include "enact/codec/hex.hpp"
#include "enact/crypto/ed25519.hpp"
#include "enact/pkp/pkp.hpp"

namespace json = boost::json;
using namespace enact;

namespace {

json::array vectors() {
  return json::parse(test::read_file(test::source_path("tests/vectors/ed25519.json"))).at("vectors").as_array();
}
std::string str(const json::value& v) { return std::string(v.as_string()); }
bytes hex_bytes(const json::value& v) { return codec::hex::decode_prefixed(v.as_string()).value(); }
hash256 h256(const json::value& v) { return codec::hex::decode_fixed<32>(v.as_string()).value(); }
Secret secret_of(const json::value& v) { return Secret(bytes_view(hex_bytes(v))); }
std::string hex0x(bytes_view b) { return codec::hex::encode_prefixed(b); }

}  // namespace

TEST_CASE("Ed25519: public keys, signatures and Solana addresses equal @noble/curves and @solana/web3.js") {
  const json::array vs = vectors();
  REQUIRE(vs.size() >= 43);
  size_t derived = 0;
  for (size_t i = 0; i < vs.size(); ++i) {
    const json::object& v = vs[i].as_object();
    INFO("ed25519.json[" << i << "] " << str(v.at("name")));
    const bytes message = hex_bytes(v.at("message"));
    if (v.contains("root_key")) {
      const Secret root = secret_of(v.at("root_key"));
      const hash256 account = h256(v.at("account_hash"));
      const hash256 path = h256(v.at("derivation_path"));
      auto seed = pkp::ed25519_seed(root, account, path);
      REQUIRE(seed);
      CHECK(hex0x(seed->view()) == str(v.at("seed")));
      auto pub = pkp::ed25519_public_key(root, account, path);
      REQUIRE(pub);
      CHECK(hex0x(*pub) == str(v.at("public_key")));
      auto other = pkp::ed25519_public_key(root, h256(v.at("other_account_hash")), path);
      REQUIRE(other);
      CHECK(hex0x(*other) == str(v.at("other_account_public_key")));
      ++derived;
    }
    const Secret seed = secret_of(v.at("seed"));
    auto pub = crypto::ed25519::public_key_of(seed);
    REQUIRE(pub);
    CHECK(hex0x(*pub) == str(v.at("public_key")));
    CHECK(pkp::solana_address(*pub) == str(v.at("solana_address")));
    auto sig = crypto::ed25519::sign(message, seed);
    REQUIRE(sig);
    CHECK(hex0x(*sig) == str(v.at("signature")));
    CHECK(crypto::ed25519::verify(message, *sig, *pub));

    // Any altered bit of the signature or the message, or another key, fails verification.
    auto bad = *sig;
    bad[i % bad.size()] ^= static_cast<uint8_t>(1u << (i % 8));
    CHECK_FALSE(crypto::ed25519::verify(message, bad, *pub));
    bytes altered = message;
    altered.push_back(0);
    CHECK_FALSE(crypto::ed25519::verify(altered, *sig, *pub));
    auto other_key = *pub;
    other_key[0] ^= 1;
    CHECK_FALSE(crypto::ed25519::verify(message, *sig, other_key));
  }
  CHECK(derived == 40);
}

TEST_CASE("Ed25519 refuses seeds and signatures of the wrong size") {
  const Secret short_seed(bytes_view(bytes(31, 7)));
  auto pub = crypto::ed25519::public_key_of(short_seed);
  REQUIRE_FALSE(pub);
  CHECK(pub.err().code == make_error_code(ed25519_errc::bad_seed_size));
  auto sig = crypto::ed25519::sign(bytes{1, 2, 3}, short_seed);
  REQUIRE_FALSE(sig);
  CHECK(sig.err().code == make_error_code(ed25519_errc::bad_seed_size));

  const Secret seed(bytes_view(bytes(32, 7)));
  auto key = crypto::ed25519::public_key_of(seed);
  REQUIRE(key);
  auto good = crypto::ed25519::sign(bytes{1, 2, 3}, seed);
  REQUIRE(good);
  const bytes truncated(good->begin(), good->end() - 1);
  CHECK_FALSE(crypto::ed25519::verify(bytes{1, 2, 3}, truncated, *key));
  bytes longer(good->begin(), good->end());
  longer.push_back(0);
  CHECK_FALSE(crypto::ed25519::verify(bytes{1, 2, 3}, longer, *key));
  // S + L (S not reduced) is refused: RFC 8032 §5.1.7 requires 0 <= S < L.
  auto malleable = *good;
  static constexpr uint8_t kL[32] = {0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58, 0xd6, 0x9c, 0xf7,
                                     0xa2, 0xde, 0xf9, 0xde, 0x14, 0,    0,    0,    0,    0,    0,
                                     0,    0,    0,    0,    0,    0,    0,    0,    0,    0x10};
  unsigned carry = 0;
  for (size_t i = 0; i < 32; ++i) {
    const unsigned sum = malleable[32 + i] + kL[i] + carry;
    malleable[32 + i] = static_cast<uint8_t>(sum);
    carry = sum >> 8;
  }
  if (carry == 0)
    CHECK_FALSE(crypto::ed25519::verify(bytes{1, 2, 3}, malleable, *key));
}

TEST_CASE("A PKP's Ed25519 key belongs to its account and differs from its other keys") {
  const Secret root(bytes_view(bytes(32, 0x42)));
  hash256 account{};
  account[31] = 1;
  hash256 other = account;
  other[31] = 2;
  const hash256 path{};
  auto seed = pkp::ed25519_seed(root, account, path);
  auto sign_key = pkp::signing_key(root, account, path);
  auto sym = pkp::symmetric_key(root, account, path);
  REQUIRE(seed);
  REQUIRE(sign_key);
  REQUIRE(sym);
  CHECK(hex0x(seed->view()) != hex0x(sign_key->view()));
  CHECK(hex0x(seed->view()) != hex0x(sym->view()));
  CHECK(*pkp::ed25519_public_key(root, account, path) != *pkp::ed25519_public_key(root, other, path));
  const Secret short_root(bytes_view(bytes(31, 0x42)));
  auto refused = pkp::ed25519_seed(short_root, account, path);
  REQUIRE_FALSE(refused);
  CHECK(refused.err().code == make_error_code(pkp_errc::bad_root_key));
  // Leading zero bytes are leading '1's in base58: 32 zero bytes are 32 '1's.
  CHECK(pkp::solana_address(crypto::ed25519::public_key{}) == std::string(32, '1'));
}
