// SPDX-License-Identifier: Apache-2.0
#include "support.hpp"

#include <string_view>

#include "enact/address.hpp"
#include "enact/crypto/eip191.hpp"
#include "enact/crypto/keccak.hpp"
#include "enact/crypto/secp256k1.hpp"

using namespace enact;
using namespace std::string_view_literals;
namespace k1 = enact::crypto::secp256k1;

namespace {
template <size_t N>
std::array<uint8_t, N> fixed(std::string_view hex) {
  return codec::hex::decode_fixed<N>(hex).value();
}
Secret key_of(std::string_view hex) {
  const auto k = fixed<32>(hex);
  return Secret(bytes_view(k));
}
constexpr std::string_view kOrder = "fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141";
constexpr std::string_view kHalfOrder = "7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0";

/// a - b for 32-byte big-endian numbers, a >= b.
std::array<uint8_t, 32> sub(const std::array<uint8_t, 32>& a, const std::array<uint8_t, 32>& b) {
  std::array<uint8_t, 32> out{};
  int borrow = 0;
  for (int i = 31; i >= 0; --i) {
    int d = a[i] - b[i] - borrow;
    borrow = d < 0;
    out[i] = static_cast<uint8_t>(d + (borrow ? 256 : 0));
  }
  return out;
}
std::array<uint8_t, 32> add1(std::array<uint8_t, 32> a) {
  for (int i = 31; i >= 0 && ++a[i] == 0; --i) {
  }
  return a;
}

struct sign_case {
  std::string_view key, digest, r, s;
  uint8_t v;             // 27 or 28
  std::string_view pub;  // 0x04 ‖ x ‖ y
  std::string_view compressed, address;
};
// Computed with ethers v6 SigningKey.sign (RFC 6979, low-s), .publicKey, .compressedPublicKey
// and computeAddress. Digests: crypto::keccak256("enact"), hashMessage("hello"), and 32 zero bytes. Keys:
// 1, the web3.js documentation key 0x4c08…2318, and n-1.
const sign_case kSignCases[] = {
    {"0000000000000000000000000000000000000000000000000000000000000001",
     "1abb3a35683ee7422ba950b15d68b8500589a728ed0adcbe4da9e2ebc8647ecb",
     "d1f2ab295fa404cec5dae9651fc54a60f481c7f5f3c2aaf79818e871e6b5b3d9",
     "79d8a54f38dccf95e38d2e8b99848e28320efc583d750cc144db5f92bf9fae7b", 28,
     "0479be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798483ada7726a3c4655da4fbfc0e1"
     "108a8fd17b448a68554199c47d08ffb10d4b8",
     "0279be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798",
     "0x7E5F4552091A69125d5DfCb7b8C2659029395Bdf"},
    {"0000000000000000000000000000000000000000000000000000000000000001",
     "50b2c43fd39106bafbba0da34fc430e1f91e3c96ea2acee2bc34119f92b37750",
     "e5ddc160e4c8f92de507c7db9b982d4f9b7197bfa421864aeadc586bc96b09ae",
     "0ba0c5b131650ae4994cff1839341d00f3735ef5abc62ac8fe2cf50f65208e2a", 27,
     "0479be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798483ada7726a3c4655da4fbfc0e1"
     "108a8fd17b448a68554199c47d08ffb10d4b8",
     "0279be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798",
     "0x7E5F4552091A69125d5DfCb7b8C2659029395Bdf"},
    {"0000000000000000000000000000000000000000000000000000000000000001",
     "0000000000000000000000000000000000000000000000000000000000000000",
     "a0b37f8fba683cc68f6574cd43b39f0343a50008bf6ccea9d13231d9e7e2e1e4",
     "11edc8d307254296264aebfc3dc76cd8b668373a072fd64665b50000e9fcce52", 28,
     "0479be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798483ada7726a3c4655da4fbfc0e1"
     "108a8fd17b448a68554199c47d08ffb10d4b8",
     "0279be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798",
     "0x7E5F4552091A69125d5DfCb7b8C2659029395Bdf"},
    {"4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318",
     "1abb3a35683ee7422ba950b15d68b8500589a728ed0adcbe4da9e2ebc8647ecb",
     "314d27cdc35f16b15d05fe7efa2362d1186751f457c16169e421ef44615f14d8",
     "5424299db17f4dbf0bf13f6e7de269d43b4b20267ee3d392eed3450c6b0ec870", 27,
     "044e3b81af9c2234cad09d679ce6035ed1392347ce64ce405f5dcd36228a25de6e47fd35c4215d1edf53e6f83de34"
     "4615ce719bdb0fd878f6ed76f06dd277956de",
     "024e3b81af9c2234cad09d679ce6035ed1392347ce64ce405f5dcd36228a25de6e",
     "0x2c7536E3605D9C16a7a3D7b1898e529396a65c23"},
    {"4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318",
     "50b2c43fd39106bafbba0da34fc430e1f91e3c96ea2acee2bc34119f92b37750",
     "a5d58782075bdf09490159d634d1aae66a8f6777c7247d2f233e9511cfd7c64c",
     "34f288cdbcea5370e4863fdbe9f4d86654c2ba1d86589e9ebb64494c64900859", 27,
     "044e3b81af9c2234cad09d679ce6035ed1392347ce64ce405f5dcd36228a25de6e47fd35c4215d1edf53e6f83de34"
     "4615ce719bdb0fd878f6ed76f06dd277956de",
     "024e3b81af9c2234cad09d679ce6035ed1392347ce64ce405f5dcd36228a25de6e",
     "0x2c7536E3605D9C16a7a3D7b1898e529396a65c23"},
    {"4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318",
     "0000000000000000000000000000000000000000000000000000000000000000",
     "b4d8aa580d8befeda7a73aed101e34ff8385da94fd4c2dfbadb11f3ef62edcd3",
     "6c5263eba18b60349b39a96bfba0ebc57ae5ca0676e3a5c4b37dd6d92080f8cc", 27,
     "044e3b81af9c2234cad09d679ce6035ed1392347ce64ce405f5dcd36228a25de6e47fd35c4215d1edf53e6f83de34"
     "4615ce719bdb0fd878f6ed76f06dd277956de",
     "024e3b81af9c2234cad09d679ce6035ed1392347ce64ce405f5dcd36228a25de6e",
     "0x2c7536E3605D9C16a7a3D7b1898e529396a65c23"},
    {"fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364140",
     "1abb3a35683ee7422ba950b15d68b8500589a728ed0adcbe4da9e2ebc8647ecb",
     "22e59db585dc30a4dcac3931f257a301a01fa5855d381e6aeeaeae0e29f2fe0b",
     "51fc3f158d9612c1c1c46bda11e56b331aaf5e54f399b64522c49d6d13afada9", 28,
     "0479be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798b7c52588d95c3b9aa25b0403f1e"
     "ef75702e84bb7597aabe663b82f6f04ef2777",
     "0379be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798",
     "0x80C0dbf239224071c59dD8970ab9d542E3414aB2"},
    {"fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364140",
     "50b2c43fd39106bafbba0da34fc430e1f91e3c96ea2acee2bc34119f92b37750",
     "8648246ef6426fcf581e12142a8ca3ff42ba15e5c01c8e64c184aa2a12883df2",
     "4ccae02753833791cdf68e695fbfbc50f1a812f2485e735286d530bfdea9e47e", 27,
     "0479be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798b7c52588d95c3b9aa25b0403f1e"
     "ef75702e84bb7597aabe663b82f6f04ef2777",
     "0379be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798",
     "0x80C0dbf239224071c59dD8970ab9d542E3414aB2"},
    {"fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364140",
     "0000000000000000000000000000000000000000000000000000000000000000",
     "919026f3e239ea52cf530eb6d345dc2b56ef0928f1e9ad20d8f360284dc65048",
     "14395e7137e2204f15b69239010f3c34fbb3c858a29b0d106b1fa65bc0047263", 27,
     "0479be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798b7c52588d95c3b9aa25b0403f1e"
     "ef75702e84bb7597aabe663b82f6f04ef2777",
     "0379be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798",
     "0x80C0dbf239224071c59dD8970ab9d542E3414aB2"},
};
}  // namespace

TEST_CASE("secp256k1 sign matches RFC 6979 low-s signatures and recovers") {
  for (const auto& c : kSignCases) {
    INFO("key " << c.key << " digest " << c.digest);
    const Secret key = key_of(c.key);
    const hash256 digest = fixed<32>(c.digest);
    const auto sig = k1::sign(digest, key);
    REQUIRE(sig);
    CHECK(sig->r == fixed<32>(c.r));
    CHECK(sig->s == fixed<32>(c.s));
    CHECK(int(sig->v) == c.v - 27);

    const auto wire = sig->to_bytes();
    CHECK(wire[64] == c.v);
    const auto back = k1::signature::from_bytes(wire);
    REQUIRE(back);
    CHECK(*back == *sig);

    const auto pub = k1::public_key_of(key);
    REQUIRE(pub);
    const auto full = fixed<65>(c.pub);
    CHECK(bytes_view(*pub).size() == 64);
    CHECK(std::equal(pub->begin(), pub->end(), full.begin() + 1));
    CHECK(k1::compress(*pub) == fixed<33>(c.compressed));
    CHECK(to_checksum_address(k1::to_address(*pub)) == c.address);

    const auto rec = k1::recover(digest, *sig);
    REQUIRE(rec);
    CHECK(*rec == *pub);
    const auto addr = k1::recover_address(digest, wire);
    REQUIRE(addr);
    CHECK(to_checksum_address(*addr) == c.address);

    // v given as the bare recovery id (0/1) is accepted too.
    auto wire01 = wire;
    wire01[64] = static_cast<uint8_t>(c.v - 27);
    CHECK(*k1::recover_address(digest, wire01) == *addr);

    // Another digest recovers some other key, never this one.
    hash256 other = digest;
    other[0] ^= 1;
    const auto wrong = k1::recover_address(other, wire);
    CHECK((!wrong || *wrong != *addr));
  }
}

TEST_CASE("secp256k1 signs an EIP-191 message so that it recovers to the signer") {
  const Secret key = key_of("4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318");
  const hash256 digest = crypto::personal_message_hash("hello"sv);
  const auto sig = k1::sign(digest, key);
  REQUIRE(sig);
  CHECK(to_checksum_address(*k1::recover_address(digest, sig->to_bytes())) ==
        "0x2c7536E3605D9C16a7a3D7b1898e529396a65c23");
}

TEST_CASE("secp256k1 private key validity") {
  struct case_ {
    std::string_view hex;
    bool valid;
  };
  // Valid scalars are 1..n-1 (SEC 2 §2.4.1).
  const case_ cases[] = {
      {"0000000000000000000000000000000000000000000000000000000000000000", false},
      {"0000000000000000000000000000000000000000000000000000000000000001", true},
      {"fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364140", true},
      {"fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141", false},
      {"ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff", false},
      {"00", false},
      {"", false},
      {"000000000000000000000000000000000000000000000000000000000000000001", false},
  };
  for (const auto& c : cases) {
    const bytes k = codec::hex::decode(c.hex).value();
    CHECK_MESSAGE(k1::is_valid_private_key(k) == c.valid, c.hex);
    if (!c.valid) {
      const Secret s{bytes_view(k)};
      CHECK(k1::sign(hash256{}, s).code() == secp256k1_errc::invalid_private_key);
      CHECK(k1::public_key_of(s).code() == secp256k1_errc::invalid_private_key);
    }
  }
}

TEST_CASE("signature::from_bytes rejects malformed signatures with distinct codes") {
  const auto good = k1::sign(hash256{}, key_of(kSignCases[0].key)).value().to_bytes();
  const auto with = [&](auto edit) {
    auto b = good;
    edit(b);
    return b;
  };
  const auto set_r = [](std::array<uint8_t, 65>& b, const std::array<uint8_t, 32>& r) {
    std::copy(r.begin(), r.end(), b.begin());
  };
  const auto set_s = [](std::array<uint8_t, 65>& b, const std::array<uint8_t, 32>& s) {
    std::copy(s.begin(), s.end(), b.begin() + 32);
  };
  const auto n = fixed<32>(kOrder);
  const auto half = fixed<32>(kHalfOrder);

  CHECK(k1::signature::from_bytes(bytes_view(good).first(64)).code() == secp256k1_errc::bad_signature_length);
  CHECK(k1::signature::from_bytes(bytes(66, 1)).code() == secp256k1_errc::bad_signature_length);
  CHECK(k1::signature::from_bytes(bytes{}).code() == secp256k1_errc::bad_signature_length);

  for (const uint8_t v : {2, 26, 29, 30, 255}) {
    const auto r = k1::signature::from_bytes(with([&](auto& b) { b[64] = v; }));
    CHECK_MESSAGE(r.code() == secp256k1_errc::bad_recovery_id, int(v));
  }
  CHECK(k1::signature::from_bytes(with([&](auto& b) { set_r(b, {}); })).code() == secp256k1_errc::r_out_of_range);
  CHECK(k1::signature::from_bytes(with([&](auto& b) { set_r(b, n); })).code() == secp256k1_errc::r_out_of_range);
  CHECK(k1::signature::from_bytes(with([&](auto& b) { set_s(b, {}); })).code() == secp256k1_errc::s_out_of_range);
  CHECK(k1::signature::from_bytes(with([&](auto& b) { set_s(b, n); })).code() == secp256k1_errc::s_out_of_range);
  // EIP-2: s = n/2 is the largest accepted; n/2 + 1 is high.
  CHECK(k1::signature::from_bytes(with([&](auto& b) { set_s(b, half); })));
  CHECK(k1::signature::from_bytes(with([&](auto& b) { set_s(b, add1(half)); })).code() == secp256k1_errc::high_s);

  // The malleable twin of a valid signature (s' = n - s, v flipped) recovers the same key in
  // plain ECDSA, and is refused here.
  const auto twin = with([&](auto& b) {
    std::array<uint8_t, 32> s{};
    std::copy(b.begin() + 32, b.begin() + 64, s.begin());
    set_s(b, sub(n, s));
    b[64] = static_cast<uint8_t>(b[64] == 27 ? 28 : 27);
  });
  const auto r = k1::signature::from_bytes(twin);
  CHECK(r.code() == secp256k1_errc::high_s);
  CHECK(r.err().message == "signature: s is above n/2 (malleable form, EIP-2)");
  CHECK(k1::recover_address(hash256{}, twin).code() == secp256k1_errc::high_s);
}

TEST_CASE("recover refuses an invalid struct and an r that is no curve point") {
  k1::signature sig = k1::sign(hash256{}, key_of(kSignCases[0].key)).value();
  k1::signature bad_v = sig;
  bad_v.v = 27;  // the struct holds the bare recovery id
  CHECK(k1::recover(hash256{}, bad_v).code() == secp256k1_errc::bad_recovery_id);
  k1::signature high = sig;
  high.s = sub(fixed<32>(kOrder), sig.s);
  CHECK(k1::recover(hash256{}, high).code() == secp256k1_errc::high_s);

  // x = 5 has no point on y^2 = x^3 + 7 (132 is a non-residue mod p), so nothing recovers.
  k1::signature no_point = sig;
  no_point.r = {};
  no_point.r[31] = 5;
  CHECK(k1::recover(hash256{}, no_point).code() == secp256k1_errc::recovery_failed);
}
