// SPDX-License-Identifier: Apache-2.0
#include "support.hpp"

#include <string_view>

#include "enact/crypto/aes_gcm.hpp"

using namespace enact;
using namespace std::string_view_literals;

namespace {
bytes h(std::string_view s) { return codec::hex::decode(s).value(); }
Secret key_of(std::string_view s) { return Secret(bytes_view(h(s))); }
bytes cat(const bytes& a, const bytes& b, const bytes& c) {
  bytes out = a;
  out.insert(out.end(), b.begin(), b.end());
  out.insert(out.end(), c.begin(), c.end());
  return out;
}
}  // namespace

TEST_CASE("AES-256-GCM known answers") {
  struct case_ {
    const char* name;
    std::string_view key, nonce, plaintext, aad, ciphertext, tag;
  };
  // McGrew & Viega, "The Galois/Counter Mode of Operation" (the GCM specification submitted to
  // NIST), Appendix B, Test Cases 13–16 (AES-256, 96-bit IV).
  const case_ cases[] = {
      {"TC13", "0000000000000000000000000000000000000000000000000000000000000000", "000000000000000000000000", "", "",
       "", "530f8afbc74536b9a963b4f1c4cb738b"},
      {"TC14", "0000000000000000000000000000000000000000000000000000000000000000", "000000000000000000000000",
       "00000000000000000000000000000000", "", "cea7403d4d606b6e074ec5d3baf39d18", "d0d1c8a799996bf0265b98b5d48ab919"},
      {"TC15", "feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308", "cafebabefacedbaddecaf888",
       "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72"
       "1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b391aafd255",
       "",
       "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa"
       "8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662898015ad",
       "b094dac5d93471bdec1a502270e3cc6c"},
      {"TC16", "feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308", "cafebabefacedbaddecaf888",
       "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72"
       "1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39",
       "feedfacedeadbeeffeedfacedeadbeefabaddad2",
       "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa"
       "8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662",
       "76fc6ece0f4e1768cddf8853bb2d551b"},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    const Secret key = key_of(c.key);
    const bytes expected = cat(h(c.nonce), h(c.ciphertext), h(c.tag));
    const auto sealed = crypto::aes_gcm::encrypt_with_nonce(key, h(c.nonce), h(c.plaintext), h(c.aad));
    REQUIRE(sealed);
    CHECK(*sealed == expected);
    const auto opened = crypto::aes_gcm::decrypt(key, expected, h(c.aad));
    REQUIRE(opened);
    CHECK(*opened == h(c.plaintext));
  }
}

TEST_CASE("AES-256-GCM encrypt uses a fresh nonce and round-trips") {
  const Secret key = key_of("feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308");
  const bytes msg{'s', 'e', 'c', 'r', 'e', 't'};
  const bytes aad{'p', 'k', 'p'};
  const auto a = crypto::aes_gcm::encrypt(key, msg, aad);
  const auto b = crypto::aes_gcm::encrypt(key, msg, aad);
  REQUIRE(a);
  REQUIRE(b);
  CHECK(a->size() == msg.size() + crypto::aes_gcm::kOverhead);
  CHECK(*a != *b);  // different nonces
  CHECK(*crypto::aes_gcm::decrypt(key, *a, aad) == msg);
  CHECK(*crypto::aes_gcm::decrypt(key, *b, aad) == msg);
  const auto empty = crypto::aes_gcm::encrypt(key, {});
  REQUIRE(empty);
  CHECK(empty->size() == crypto::aes_gcm::kOverhead);
  CHECK(crypto::aes_gcm::decrypt(key, *empty)->empty());
}

TEST_CASE("AES-256-GCM rejects bad keys, nonces, truncation and tampering") {
  const Secret key = key_of("feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308");
  const bytes msg(40, 0x42);
  const bytes aad{1, 2, 3};
  const bytes sealed = crypto::aes_gcm::encrypt(key, msg, aad).value();

  for (const size_t n : {size_t{0}, size_t{16}, size_t{31}, size_t{33}}) {
    const Secret bad = Secret::of_size(n);
    CHECK(crypto::aes_gcm::encrypt(bad, msg).code() == aes_gcm_errc::bad_key_size);
    CHECK(crypto::aes_gcm::decrypt(bad, sealed, aad).code() == aes_gcm_errc::bad_key_size);
  }
  CHECK(crypto::aes_gcm::encrypt_with_nonce(key, bytes(11), msg).code() == aes_gcm_errc::bad_nonce_size);
  CHECK(crypto::aes_gcm::encrypt_with_nonce(key, bytes(16), msg).code() == aes_gcm_errc::bad_nonce_size);

  CHECK(crypto::aes_gcm::decrypt(key, bytes{}).code() == aes_gcm_errc::truncated);
  CHECK(crypto::aes_gcm::decrypt(key, bytes(27)).code() == aes_gcm_errc::truncated);
  CHECK(crypto::aes_gcm::decrypt(key, bytes(28)).code() == aes_gcm_errc::authentication_failed);

  // Flipping any bit of nonce, ciphertext or tag breaks authentication.
  for (const size_t at : {size_t{0}, size_t{11}, size_t{12}, size_t{30}, sealed.size() - 16, sealed.size() - 1}) {
    bytes t = sealed;
    t[at] ^= 0x01;
    const auto r = crypto::aes_gcm::decrypt(key, t, aad);
    CHECK_MESSAGE(r.code() == aes_gcm_errc::authentication_failed, at);
  }
  CHECK(crypto::aes_gcm::decrypt(key, sealed, bytes{1, 2}).code() == aes_gcm_errc::authentication_failed);
  CHECK(crypto::aes_gcm::decrypt(key, sealed).code() == aes_gcm_errc::authentication_failed);
  CHECK(crypto::aes_gcm::decrypt(key, bytes_view(sealed).first(sealed.size() - 1), aad).code() ==
        aes_gcm_errc::authentication_failed);
  const Secret other = key_of("0000000000000000000000000000000000000000000000000000000000000001");
  CHECK(crypto::aes_gcm::decrypt(other, sealed, aad).code() == aes_gcm_errc::authentication_failed);
  CHECK(*crypto::aes_gcm::decrypt(key, sealed, aad) == msg);
}
