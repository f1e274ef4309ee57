// SPDX-License-Identifier: Apache-2.0
#include "support.hpp"

#include <string>
#include <string_view>

#include "enact/address.hpp"
#include "enact/crypto/keccak.hpp"
#include "enact/crypto/secp256k1.hpp"
#include "enact/pkp/pkp.hpp"

using namespace enact;
using namespace std::string_view_literals;

namespace {
hash256 h256(std::string_view s) { return codec::hex::decode_fixed<32>(s).value(); }
Secret secret_of(std::string_view s) {
  const bytes b = codec::hex::decode(s).value();
  return Secret(bytes_view(b));
}
bytes to_bytes(const Secret& s) { return bytes(s.view().begin(), s.view().end()); }

// An account key as docs/protocol.md §1 issues it (base64 of 32 bytes); its hash is keccak256 of the string.
constexpr std::string_view kApiKey = "q5kZ4m2Yp0b3W1n8Xx9cR7t6Vv5Uu4Ss3Qq2Pp1Oo0E=";
constexpr std::string_view kApiKeyHash = "7718d66f808df4eff8e1a74c9f2deb6564cd55903d9e7388dc15905a2f608231";
}  // namespace

TEST_CASE("API-mode derivation path is keccak256(abi.encode(apiKeyHash, index))") {
  struct case_ {
    uint64_t index;
    std::string_view path;
  };
  // Computed with ethers v6: crypto::keccak256(AbiCoder.encode(["uint256","uint256"], [hash, index])),
  // hash = crypto::keccak256(toUtf8Bytes(kApiKey)).
  const case_ cases[] = {
      {0, "0d551a97591db5cd4d71fa919a645708b745d9d97bbaaa663cb21b8243d2187c"sv},
      {1, "7e4196e085db2f2f549f9d278069c339316a02466255143c35efd508ffbef2b1"sv},
      {42, "acf2d22e73978a9c99d18caea68d711226d8d839701be90762e8775a67e9f5b4"sv},
      {UINT64_MAX, "1fe118b9dadee94108de6bc4887329d9ccfbb28bcb1258bbb52f31d2472675af"sv},
  };
  const hash256 key_hash = crypto::keccak256(kApiKey);
  REQUIRE(key_hash == h256(kApiKeyHash));
  for (const auto& c : cases)
    CHECK_MESSAGE(pkp::api_mode_path(key_hash, c.index) == h256(c.path), c.index);
}

TEST_CASE("PKP keys and addresses match an independent derivation") {
  struct case_ {
    std::string_view root, account, path, sign, sym, address;
  };
  // Computed with Node 20 crypto.hkdfSync("sha256", root, "enact/pkp/v2",
  // "sign"‖account‖path | "sym"‖account‖path, 32) and ethers v6 computeAddress; none of these
  // needed the counter retry. The first two differ only in the account: another account, another
  // key (docs/protocol.md §1 "owning account").
  const case_ cases[] = {
      {"000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f", kApiKeyHash,
       "0d551a97591db5cd4d71fa919a645708b745d9d97bbaaa663cb21b8243d2187c",
       "e177cbb5a8be1c997bc25dc1f3e1214efd226cd767c501a388e2c08b1ad44420",
       "2aa3958c3609d256d724b2ea4b6beae7b1da5b6ac094c06966ef40aff98bd517",
       "0x7B0cc732C238936aF4cbaB3b7F8E744F46C586D5"},
      {"000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
       "0000000000000000000000000000000000000000000000000000000000000000",
       "0d551a97591db5cd4d71fa919a645708b745d9d97bbaaa663cb21b8243d2187c",
       "99df3b61ae7e20eccdd9456028053c0dd79851018fdbc347d37b7f4bd9642796",
       "feefe95fdd12bd52b8c0971c01c01fe92e0e8c137561d80a2196789416a1be80",
       "0xd93c9F9B88D69BEb7693f6bD9f6ba7a05724313F"},
      {"ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff", kApiKeyHash,
       "7e4196e085db2f2f549f9d278069c339316a02466255143c35efd508ffbef2b1",
       "ac3ca64f52ba6c96ef23f6c44637df71c1ad9a27df0c463d7abe9182ac1269b9",
       "efa67edea5b8cc2afe6332a644ed30770646ee78b5bb4a673f9d4a737ed5a6af",
       "0x13457776b3E19c2D1307Ca3F4E1c83C41aba8543"},
  };
  for (const auto& c : cases) {
    INFO("root " << c.root << " account " << c.account << " path " << c.path);
    const Secret root = secret_of(c.root);
    const hash256 account = h256(c.account);
    const pkp::derivation_path path = h256(c.path);
    const auto sign = pkp::signing_key(root, account, path);
    REQUIRE(sign);
    CHECK(to_bytes(*sign) == codec::hex::decode(c.sign).value());
    const auto sym = pkp::symmetric_key(root, account, path);
    REQUIRE(sym);
    CHECK(to_bytes(*sym) == codec::hex::decode(c.sym).value());
    const auto addr = pkp::wallet_address(root, account, path);
    REQUIRE(addr);
    CHECK(to_checksum_address(*addr) == c.address);
    CHECK(crypto::secp256k1::to_address(crypto::secp256k1::public_key_of(*sign).value()) == *addr);
  }
}

TEST_CASE("a path registered under another account derives another wallet") {
  // The attack of docs/protocol.md §1 "owning account": the victim's (wallet, path) is public; an attacker
  // who registers the same pair under its own account must not reach the victim's key.
  const Secret root = secret_of("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f");
  const hash256 victim = crypto::keccak256("victim-key"sv);
  const hash256 attacker = crypto::keccak256("attacker-key"sv);
  const auto path = pkp::api_mode_path(victim, 0);
  const auto victim_wallet = pkp::wallet_address(root, victim, path).value();
  CHECK(pkp::wallet_address(root, attacker, path).value() != victim_wallet);
  CHECK(to_bytes(pkp::signing_key(root, attacker, path).value()) !=
        to_bytes(pkp::signing_key(root, victim, path).value()));
  CHECK(to_bytes(pkp::symmetric_key(root, attacker, path).value()) !=
        to_bytes(pkp::symmetric_key(root, victim, path).value()));
  // Nor does the earlier path-only rule give it.
  CHECK(pkp::legacy_wallet_address(root, path).value() != victim_wallet);
}

TEST_CASE("server keys are out of reach of every account derivation") {
  // docs/protocol.md §1 "server keys": another salt, so no (account, path) gives the relayer's key; the
  // old rule put the relayer at path crypto::keccak256("enact/api-payer/0"), which any account could
  // register.
  const Secret root = secret_of("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f");
  const auto payer = pkp::server_signing_key(root, "api-payer/0").value();
  const hash256 old_path = crypto::keccak256("enact/api-payer/0"sv);
  for (const hash256& account : {hash256{}, crypto::keccak256("any"sv), old_path})
    CHECK(to_bytes(pkp::signing_key(root, account, old_path).value()) != to_bytes(payer));
  CHECK(to_bytes(pkp::server_key(root, "api-payer/0").value()) == to_bytes(payer));  // no retry
  CHECK(to_bytes(pkp::server_key(root, "triggers/usage-key-seal/v1").value()) != to_bytes(payer));
  CHECK(pkp::server_key(root, "").code() == pkp_errc::bad_purpose);
  CHECK(pkp::server_signing_key(root, std::string(65, 'x')).code() == pkp_errc::bad_purpose);
  CHECK(pkp::server_key(Secret::of_size(31), "api-payer/0").code() == pkp_errc::bad_root_key);
}

TEST_CASE("a usage key minted by signature is no PKP key of any account") {
  // docs/protocol.md §1 "usage key by signature": HKDF-SHA256 under salt "enact/usage-key/v1", so the
  // key that leaves the server is never the key a PKP signs with. Expected value: RFC 5869 HKDF
  // computed outside the SDK (Python's hmac over the same ikm, salt and info).
  const Secret root = secret_of("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f");
  const hash256 account = h256(std::string(64, '1'));
  const pkp::derivation_path path = h256(std::string(64, '2'));
  const Secret usage = pkp::usage_key(root, account, path).value();
  CHECK(to_bytes(usage) ==
        codec::hex::decode("17ef0e86ea4eba61a9c30d24b147c98e76a1744b783e34a465218af909dd1087").value());
  CHECK(to_bytes(usage) != to_bytes(pkp::signing_key(root, account, path).value()));
  CHECK(crypto::secp256k1::to_address(crypto::secp256k1::public_key_of(usage).value()) !=
        pkp::wallet_address(root, account, path).value());
  CHECK(pkp::usage_key(Secret::of_size(31), account, path).code() == pkp_errc::bad_root_key);
}

TEST_CASE("the canonical account hash of a wallet is keccak256(abi.encodePacked(wallet))") {
  // ethers v6: solidityPackedKeccak256(["address"], ["0x7E5F4552091A69125d5DfCb7b8C2659029395Bdf"])
  const address a = parse_address("0x7E5F4552091A69125d5DfCb7b8C2659029395Bdf").value();
  CHECK(pkp::canonical_account_hash(a) == crypto::keccak256(bytes_view(a)));
}

TEST_CASE("PKP derivation requires a 32-byte root key") {
  const pkp::derivation_path path{};
  const hash256 account{};
  for (const size_t n : {size_t{0}, size_t{16}, size_t{31}, size_t{33}, size_t{64}}) {
    const Secret root = Secret::of_size(n);
    CHECK(pkp::signing_key(root, account, path).code() == pkp_errc::bad_root_key);
    CHECK(pkp::symmetric_key(root, account, path).code() == pkp_errc::bad_root_key);
    CHECK(pkp::wallet_address(root, account, path).code() == pkp_errc::bad_root_key);
    CHECK(pkp::legacy_wallet_address(root, path).code() == pkp_errc::bad_root_key);
  }
  CHECK(pkp::signing_key(Secret::of_size(31), account, path).err().message == "root key: must be 32 bytes, got 31");
}

TEST_CASE("random derivation paths differ") {
  // Equal draws (or an all-zero path) would mean the generator is not being used: 2^-256 odds.
  const auto a = pkp::random_path();
  const auto b = pkp::random_path();
  CHECK(a != b);
  CHECK(a != pkp::derivation_path{});
}
