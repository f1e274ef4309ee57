// SPDX-License-Identifier: Apache-2.0
// enact::crypto::keystore against files ethers writes and reads (tests/vectors/keystore.json), and
// the files an attacker or a damaged disk hands over.
#include <doctest/doctest.h>

#include <boost/json.hpp>
#include <string>

#include "enact/codec/hex.hpp"
#include "enact/crypto/keystore.hpp"
#include "support.hpp"

namespace json = boost::json;
using namespace enact;
using namespace enact::crypto;

namespace {

json::array vectors() {
  const auto doc = json::parse(test::read_file(test::source_path("tests/vectors/keystore.json"))).as_object();
  return doc.at("vectors").as_array();
}

std::string s(const json::object& v, const char* k) { return std::string(v.at(k).as_string()); }

template <size_t N>
std::array<uint8_t, N> fixed(const std::string& h) {
  return codec::hex::decode_fixed<N>(h).value();
}

// A small valid scrypt file of our own to mutate.
const std::string kKey = "0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318";
std::string small_file(const std::string& password = "pw") {
  keystore::encrypt_options o;
  o.kdf = keystore::scrypt_params{1024, 8, 1};
  return keystore::encrypt(Secret(codec::hex::decode(kKey).value()), password, o).value();
}

std::string edited(const std::string& file, void (*edit)(json::object&)) {
  auto doc = json::parse(file).as_object();
  edit(doc);
  return json::serialize(doc);
}

}  // namespace

TEST_CASE("keystore: decrypts every file of keystore.json to its key") {
  const auto vs = vectors();
  REQUIRE(vs.size() >= 8);
  for (const auto& item : vs) {
    const auto& v = item.as_object();
    CAPTURE(s(v, "source"));
    CAPTURE(s(v, "kdf"));
    const auto key = keystore::decrypt(s(v, "keystore"), s(v, "password"));
    REQUIRE_MESSAGE(key.has_value(), key.err().message);
    CHECK(codec::hex::encode_prefixed(key->view()) == s(v, "private_key"));
    // One wrong character of the password is the MAC check's business.
    CHECK(keystore::decrypt(s(v, "keystore"), s(v, "password") + "x").code() == keystore_errc::wrong_password);
  }
}

TEST_CASE("keystore: encrypting with the vector's salt, IV and id gives ethers' ciphertext and MAC") {
  for (const auto& item : vectors()) {
    const auto& v = item.as_object();
    CAPTURE(s(v, "source"));
    keystore::encrypt_options o;
    if (s(v, "kdf") == "scrypt")
      o.kdf = keystore::scrypt_params{v.at("n").to_number<uint64_t>(), v.at("r").to_number<uint32_t>(),
                                      v.at("p").to_number<uint32_t>()};
    else
      o.kdf = keystore::pbkdf2_params{v.at("c").to_number<uint32_t>()};
    o.salt = fixed<32>(s(v, "salt"));
    o.iv = fixed<16>(s(v, "iv"));
    o.id = s(v, "id");
    const auto ours = keystore::encrypt(Secret(codec::hex::decode(s(v, "private_key")).value()), s(v, "password"), o);
    REQUIRE(ours);
    const auto mine = json::parse(*ours).as_object();
    const auto theirs = json::parse(s(v, "keystore")).as_object();
    const auto& tc = theirs.contains("crypto") ? theirs.at("crypto").as_object() : theirs.at("Crypto").as_object();
    CHECK(mine.at("crypto").at("ciphertext") == tc.at("ciphertext"));
    CHECK(mine.at("crypto").at("mac") == tc.at("mac"));
    CHECK(mine.at("id") == theirs.at("id"));
    CHECK("0x" + std::string(mine.at("address").as_string()) ==
          codec::hex::encode_prefixed(codec::hex::decode(s(v, "address")).value()));
  }
}

TEST_CASE("keystore: a random salt, IV and id on every call, and the file reads back") {
  const std::string a = small_file(), b = small_file();
  CHECK(a != b);
  const auto doc = json::parse(a).as_object();
  const std::string id(doc.at("id").as_string());
  CHECK(id.size() == 36);
  CHECK(id[14] == '4');  // version 4 UUID
  CHECK(doc.at("version") == 3);
  CHECK(codec::hex::encode_prefixed(keystore::decrypt(a, "pw").value().view()) == kKey);
}

TEST_CASE("keystore: altered and hostile files are refused before or by the MAC") {
  const std::string good = small_file();
  SUBCASE("a flipped ciphertext byte is caught by the MAC, never decrypted to another key") {
    const auto bad = edited(good, [](json::object& d) {
      auto& c = d.at("crypto").as_object();
      std::string ct(c.at("ciphertext").as_string());
      ct[0] = ct[0] == '0' ? '1' : '0';
      c["ciphertext"] = ct;
    });
    CHECK(keystore::decrypt(bad, "pw").code() == keystore_errc::wrong_password);
  }
  SUBCASE("a file whose address names someone else") {
    const auto bad = edited(good, [](json::object& d) { d["address"] = std::string(40, '1'); });
    CHECK(keystore::decrypt(bad, "pw").code() == keystore_errc::address_mismatch);
  }
  SUBCASE("scrypt parameters that would cost gigabytes are refused before any work") {
    const auto bad =
        edited(good, [](json::object& d) { d.at("crypto").at("kdfparams").as_object()["n"] = uint64_t{1} << 30; });
    const auto r = keystore::decrypt(bad, "pw");
    CHECK(r.code() == keystore_errc::too_costly);
    keystore::limits tight;
    tight.max_scrypt_memory = 1 << 20;  // 1 MiB: the 1 MiB file above needs 128·8·1025 bytes
    CHECK(keystore::decrypt(good, "pw", tight).code() == keystore_errc::too_costly);
  }
  SUBCASE("PBKDF2 iterations over the limit") {
    auto o = keystore::encrypt_options{};
    o.kdf = keystore::pbkdf2_params{5000};
    const auto file = keystore::encrypt(Secret(codec::hex::decode(kKey).value()), "pw", o).value();
    keystore::limits tight;
    tight.max_pbkdf2_iterations = 4999;
    CHECK(keystore::decrypt(file, "pw", tight).code() == keystore_errc::too_costly);
    CHECK(keystore::decrypt(file, "pw").has_value());
  }
  SUBCASE("n not a power of two, or at or above 2^(16·r) (RFC 7914)") {
    const auto not_pow2 = edited(good, [](json::object& d) { d.at("crypto").at("kdfparams").as_object()["n"] = 1000; });
    CHECK(keystore::decrypt(not_pow2, "pw").code() == keystore_errc::malformed);
    const auto one = edited(good, [](json::object& d) { d.at("crypto").at("kdfparams").as_object()["n"] = 1; });
    CHECK(keystore::decrypt(one, "pw").code() == keystore_errc::malformed);
    const auto big_for_r1 = edited(good, [](json::object& d) {
      auto& k = d.at("crypto").at("kdfparams").as_object();
      k["n"] = 65536;
      k["r"] = 1;
    });
    CHECK(keystore::decrypt(big_for_r1, "pw").code() == keystore_errc::malformed);
  }
  SUBCASE("what we do not read is named") {
    CHECK(keystore::decrypt(edited(good, [](json::object& d) { d["version"] = 1; }), "pw").code() ==
          keystore_errc::unsupported);
    CHECK(keystore::decrypt(edited(good, [](json::object& d) { d.at("crypto").as_object()["cipher"] = "aes-128-cbc"; }),
                            "pw")
              .code() == keystore_errc::unsupported);
    CHECK(keystore::decrypt(edited(good, [](json::object& d) { d.at("crypto").as_object()["kdf"] = "argon2"; }), "pw")
              .code() == keystore_errc::unsupported);
  }
  SUBCASE("shape errors name the field") {
    const auto r = keystore::decrypt(
        edited(good, [](json::object& d) { d.at("crypto").at("cipherparams").as_object()["iv"] = "00"; }), "pw");
    CHECK(r.code() == keystore_errc::malformed);
    CHECK(r.err().message.find("cipherparams.iv") != std::string::npos);
    CHECK(keystore::decrypt("not json", "pw").code() == keystore_errc::malformed);
    CHECK(keystore::decrypt("[]", "pw").code() == keystore_errc::malformed);
    CHECK(keystore::decrypt(edited(good, [](json::object& d) { d.at("crypto").as_object().erase("mac"); }), "pw")
              .code() == keystore_errc::malformed);
  }
  SUBCASE("only a valid secp256k1 key is encrypted") {
    CHECK(keystore::encrypt(Secret(bytes(32, 0)), "pw").code() == keystore_errc::malformed);
    CHECK(keystore::encrypt(Secret(bytes(31, 1)), "pw").code() == keystore_errc::malformed);
  }
}
