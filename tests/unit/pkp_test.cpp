#include "support.hpp"

#include <string_view>

#include "enact/crypto/address.hpp"
#include "enact/crypto/keccak.hpp"
#include "enact/crypto/secp256k1.hpp"
#include "enact/pkp/pkp.hpp"

using namespace enact;
using namespace std::string_view_literals;

namespace {
hash256 h256(std::string_view s) {
  return hex::decode_fixed<32>(s).value();
}
Secret secret_of(std::string_view s) {
  const bytes b = hex::decode(s).value();
  return Secret(bytes_view(b));
}
bytes to_bytes(const Secret& s) {
  return bytes(s.view().begin(), s.view().end());
}

// An account key as API.md §1 issues it (base64 of 32 bytes); its hash is keccak256 of the string.
constexpr std::string_view kApiKey = "q5kZ4m2Yp0b3W1n8Xx9cR7t6Vv5Uu4Ss3Qq2Pp1Oo0E=";
constexpr std::string_view kApiKeyHash =
    "7718d66f808df4eff8e1a74c9f2deb6564cd55903d9e7388dc15905a2f608231";
}  // namespace

TEST_CASE("API-mode derivation path is keccak256(abi.encode(apiKeyHash, index))") {
  struct case_ {
    uint64_t index;
    std::string_view path;
  };
  // Computed with ethers v6: keccak256(AbiCoder.encode(["uint256","uint256"], [hash, index])),
  // hash = keccak256(toUtf8Bytes(kApiKey)).
  const case_ cases[] = {
      {0, "0d551a97591db5cd4d71fa919a645708b745d9d97bbaaa663cb21b8243d2187c"sv},
      {1, "7e4196e085db2f2f549f9d278069c339316a02466255143c35efd508ffbef2b1"sv},
      {42, "acf2d22e73978a9c99d18caea68d711226d8d839701be90762e8775a67e9f5b4"sv},
      {UINT64_MAX, "1fe118b9dadee94108de6bc4887329d9ccfbb28bcb1258bbb52f31d2472675af"sv},
  };
  const hash256 key_hash = keccak256(kApiKey);
  REQUIRE(key_hash == h256(kApiKeyHash));
  for (const auto& c : cases)
    CHECK_MESSAGE(pkp::api_mode_path(key_hash, c.index) == h256(c.path), c.index);
}

TEST_CASE("PKP keys and addresses match an independent derivation") {
  struct case_ {
    std::string_view root, path, sign, sym, address;
  };
  // Computed with Node 20 crypto.hkdfSync("sha256", root, "enact/pkp/v1", "sign"‖path | "sym"‖path,
  // 32) and ethers v6 computeAddress; none of these needed the counter retry.
  const case_ cases[] = {
      {"000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
       "0d551a97591db5cd4d71fa919a645708b745d9d97bbaaa663cb21b8243d2187c",
       "2f3501c2028bd59325e6c61eff5aea71b7e57e546d5207807d809599a853afbc",
       "6894d3395624e1c432141d23518123ba7b56d0e150010692455b7797f5bbb933",
       "0xeaAa6C61d4A9B18dd07638163D5694A6E5df8359"},
      {"000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
       "7e4196e085db2f2f549f9d278069c339316a02466255143c35efd508ffbef2b1",
       "2ae3e3336812ee78b9669bf6e7cd2e009baeea991f3131a148da7788edead78d",
       "b220e280d38c51d0ff979b2674bb5334f0b707f3df5b46052d4a614e4b761041",
       "0xA00D6F7D6533A8B38FCEA5f5CBccE065e969aC63"},
      {"ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
       "0d551a97591db5cd4d71fa919a645708b745d9d97bbaaa663cb21b8243d2187c",
       "3d6ee5b96069e274d9b3b1da0e796bca8701705c4560d12298508ff926563ce9",
       "540f78c43d236a648f7fe8cd22a324224cef26d0ac2aa7b236a984edb2d1e7ef",
       "0x5eA8ABebff79ACE04deC9E595Ec6E30C4e80bD97"},
      {"ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
       "7e4196e085db2f2f549f9d278069c339316a02466255143c35efd508ffbef2b1",
       "fff2b65822db84acfe06930df9e9d909b049d9e0ab8d9eb268ec958c3c91ef89",
       "20eaf580d564d0cec1ff9411a321b5d0b62f9e047863d6c5e492dc6056a2d1b1",
       "0x97aecA8449Ae0D5e1c95457eb309CC150706C699"},
      {"000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
       "0000000000000000000000000000000000000000000000000000000000000000",
       "44fd70307d9280c3eb35efe951274d2c95300d69b36f35ecff1c44fdac8d7295",
       "2fcaaece8946684c4649f720a78e8d5bcc8a6ed0f1f8e2b46452e52887e24749",
       "0xcA65930554Fc037FC9b65eA47C344EDa69aA5114"},
  };
  for (const auto& c : cases) {
    INFO("root " << c.root << " path " << c.path);
    const Secret root = secret_of(c.root);
    const pkp::derivation_path path = h256(c.path);
    const auto sign = pkp::signing_key(root, path);
    REQUIRE(sign);
    CHECK(to_bytes(*sign) == hex::decode(c.sign).value());
    const auto sym = pkp::symmetric_key(root, path);
    REQUIRE(sym);
    CHECK(to_bytes(*sym) == hex::decode(c.sym).value());
    const auto addr = pkp::wallet_address(root, path);
    REQUIRE(addr);
    CHECK(to_checksum_address(*addr) == c.address);
    CHECK(secp256k1::to_address(secp256k1::public_key_of(*sign).value()) == *addr);
  }
}

TEST_CASE("PKP derivation requires a 32-byte root key") {
  const pkp::derivation_path path{};
  for (const size_t n : {size_t{0}, size_t{16}, size_t{31}, size_t{33}, size_t{64}}) {
    const Secret root = Secret::of_size(n);
    CHECK(pkp::signing_key(root, path).code() == pkp_errc::bad_root_key);
    CHECK(pkp::symmetric_key(root, path).code() == pkp_errc::bad_root_key);
    CHECK(pkp::wallet_address(root, path).code() == pkp_errc::bad_root_key);
  }
  CHECK(pkp::signing_key(Secret::of_size(31), path).err().message ==
        "root key: must be 32 bytes, got 31");
}

TEST_CASE("random derivation paths differ") {
  // Equal draws (or an all-zero path) would mean the generator is not being used: 2^-256 odds.
  const auto a = pkp::random_path();
  const auto b = pkp::random_path();
  CHECK(a != b);
  CHECK(a != pkp::derivation_path{});
}
