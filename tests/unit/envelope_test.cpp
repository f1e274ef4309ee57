// SPDX-License-Identifier: Apache-2.0
#include "support.hpp"

#include <boost/json.hpp>

#include <functional>
#include <string>
#include <string_view>

#include "enact/codec/base64.hpp"
#include "enact/codec/hex.hpp"
#include "enact/address.hpp"
#include "enact/crypto/keccak.hpp"
#include "enact/crypto/secp256k1.hpp"
#include "enact/secret.hpp"
#include "enact/eip712/envelope.hpp"
#include "enact/eip712/typed_data.hpp"

using namespace enact;
using namespace std::string_view_literals;
namespace json = boost::json;

namespace {

// crypto::keccak256("cow"), the key of the EIP-712 example: 0xCD2a3d9F938E13CD947Ec05AbC7FE734Df8DD826.
Secret cow_key() { return Secret(crypto::keccak256("cow"sv)); }
const address kCow = parse_address("0xCD2a3d9F938E13CD947Ec05AbC7FE734Df8DD826").value();

// The private key 1, a second signer: 0x7E5F4552091A69125d5DfCb7b8C2659029395Bdf.
Secret other_key() {
  bytes k(32, 0);
  k[31] = 1;
  return Secret(k);
}

constexpr uint64_t kChain = 175188;
constexpr uint64_t kNow = 1700000000;

eip712::envelope::expectation expect(eip712::envelope::kind k, uint64_t now = kNow) {
  return eip712::envelope::expectation{k, kChain, now};
}

std::string text_of(const json::object& o) { return json::serialize(o); }

}  // namespace

TEST_CASE("envelope primary type names") {
  using eip712::envelope::kind;
  const std::pair<kind, std::string_view> names[] = {{kind::create_wallet, "CreateWallet"},
                                                     {kind::convert_account, "ConvertAccount"},
                                                     {kind::add_usage_api_key, "AddUsageApiKey"},
                                                     {kind::billing_auth, "BillingAuth"}};
  for (const auto& [k, name] : names) {
    CHECK(eip712::envelope::primary_type_name(k) == name);
    CHECK(eip712::envelope::kind_from_name(name) == k);
  }
  CHECK(!eip712::envelope::kind_from_name("createWallet"));
  CHECK(!eip712::envelope::kind_from_name("EIP712Domain"));
  CHECK(!eip712::envelope::kind_from_name(""));
}

TEST_CASE("envelope build and sign match eth-sig-util") {
  // The canonical document for the cow key (core-api spec, Typed-data envelope).
  CHECK(text_of(eip712::envelope::build(eip712::envelope::kind::create_wallet, kChain, kCow, kNow)) ==
        R"({"types":{"EIP712Domain":[{"name":"name","type":"string"},)"
        R"({"name":"version","type":"string"},)"
        R"({"name":"chainId","type":"uint256"}],"CreateWallet":[{"name":"address","type":"address"},)"
        R"({"name":"issuedAt","type":"uint256"}]},"primaryType":"CreateWallet","domain":{"name":)"
        R"("Svc ChainSecured","version":"1","chainId":175188},"message":{"address":)"
        R"("0xCD2a3d9F938E13CD947Ec05AbC7FE734Df8DD826","issuedAt":1700000000}})");
  // Numbers JavaScript cannot read exactly are written as decimal strings.
  const auto big =
      eip712::envelope::build(eip712::envelope::kind::billing_auth, uint64_t{1} << 53, kCow, (uint64_t{1} << 53) - 1);
  CHECK(big.at("domain").at("chainId") == json::value("9007199254740992"));
  CHECK(big.at("message").at("issuedAt") == json::value((uint64_t{1} << 53) - 1));

  struct case_ {
    eip712::envelope::kind k;
    std::string_view digest;
    std::string_view signature;
  };
  // @metamask/eth-sig-util 8.2.0: TypedDataUtils.eip712Hash(data, 'V4') (equal to ethers 6.17.0
  // TypedDataEncoder.hash) and signTypedData({privateKey: crypto::keccak256("cow"), version: 'V4'}) of
  // the envelope for chainId 175188, issuedAt 1700000000, address of the cow key.
  const case_ cases[] = {
      {eip712::envelope::kind::create_wallet, "0x9a74860d472e30e72a8641ab1c6be12fef09eb610dded8df34c0e9b9a2a273a0",
       "0x78730a429a997e23785320e2ac016dbf8c66c2c67bf22681ce84dfe54a9857ec23e312fdc13f5d69788b5b706"
       "ab20068620c91d8472b0a526e5caa1b3f6f76421b"},
      {eip712::envelope::kind::convert_account, "0xd200e3e77834aba46ae7fd8d55dc6cdf02aa4faadfd0f5a78614ca7a41bf7f13",
       "0x4f1d515e7e76b06f31fde1abd067045e2bd0825127b783d7a4c793c6aa92af8a7847d877cba26ac9392e42322"
       "3629c8ccd72755a042fa2323bf278637f2c306b1c"},
      {eip712::envelope::kind::add_usage_api_key, "0xdf3db34ef668f7e372c80f9cbacb01ec94a26bc5103057aa106e33738ba6e992",
       "0xc1587d792ecd342aa0e0ef64740e13e67cd1d85dce2669681653515cb385826d374e8d46b984fa53dd761a5aa"
       "2e7beb5d0fb29ae6ae1e4d4aec18f06bddbe8dd1b"},
      {eip712::envelope::kind::billing_auth, "0x58ec3274a3dee0ff805e32885d8acdf36bf823c8eb69b63b665c226871feedcd",
       "0x5353f394c950082066ba1077b6192758add0efba85b3c9c0c8c737ac26720eca2c3512cad953373c5c1a15b6f"
       "c811d147cd1a983ceedf9cc7ff43806be45bfbd1c"},
  };
  const Secret key = cow_key();
  for (const auto& c : cases) {
    CAPTURE(eip712::envelope::primary_type_name(c.k));
    const auto built = eip712::envelope::build(c.k, kChain, kCow, kNow);
    const auto td = eip712::from_json(json::value(built)).value();
    CHECK(codec::hex::encode_prefixed(eip712::digest(td).value()) == c.digest);
    CHECK(codec::hex::encode_prefixed(eip712::envelope::digest(c.k, u256{kChain}, kCow, u256{kNow})) == c.digest);
    const auto env = eip712::envelope::sign(c.k, kChain, key, kNow);
    REQUIRE(env);
    CHECK(env->typed_data == built);
    CHECK(env->signature == c.signature);
    CHECK(eip712::envelope::verify(text_of(env->typed_data), env->signature, expect(c.k)).value() == kCow);
  }
  CHECK(eip712::envelope::sign(eip712::envelope::kind::billing_auth, kChain, Secret(bytes(32, 0)), kNow).code() ==
        secp256k1_errc::invalid_private_key);
}

TEST_CASE("envelope direct digest equals the generic EIP-712 digest") {
  // Chain ids and times across the JSON number / string boundary (2^53) and up to 2^64 - 1.
  const uint64_t values[] = {0, 1, 8453, kNow, (uint64_t{1} << 53) - 1, uint64_t{1} << 53, ~uint64_t{0}};
  const address signers[] = {kCow, address{}, parse_address("0x" + std::string(40, 'f')).value()};
  for (auto k : {eip712::envelope::kind::create_wallet, eip712::envelope::kind::convert_account,
                 eip712::envelope::kind::add_usage_api_key, eip712::envelope::kind::billing_auth})
    for (uint64_t chain : values)
      for (uint64_t issued : values)
        for (const auto& who : signers) {
          CAPTURE(chain);
          CAPTURE(issued);
          const auto td = eip712::from_json(json::value(eip712::envelope::build(k, chain, who, issued)));
          REQUIRE(td);
          CHECK(eip712::envelope::digest(k, u256{chain}, who, u256{issued}) == eip712::digest(*td).value());
        }
}

TEST_CASE("envelope verify refuses each rule with its own code") {
  const Secret key = cow_key();
  const auto env = eip712::envelope::sign(eip712::envelope::kind::create_wallet, kChain, key, kNow).value();
  const std::string good = text_of(env.typed_data);
  REQUIRE(eip712::envelope::verify(good, env.signature, expect(eip712::envelope::kind::create_wallet)));

  // A document edited after signing; the checks before the signature step do not need it valid.
  auto edited = [&](const std::function<void(json::object&)>& edit) {
    json::object o = env.typed_data;
    edit(o);
    return text_of(o);
  };
  auto types = [](json::object& o) -> json::object& {
    return o["types"].as_object();
  };
  auto member = [](std::string_view n, std::string_view t) {
    return json::object{{"name", n}, {"type", t}};
  };
  // Signs `o` as it stands, by `k` (for cases past the shape checks).
  auto signed_by = [](const json::object& o, const Secret& k) {
    const auto td = eip712::from_json(json::value(o)).value();
    return codec::hex::encode_prefixed(eip712::sign(td, k).value().to_bytes());
  };
  const Secret other = other_key();
  const auto stale = eip712::envelope::sign(eip712::envelope::kind::create_wallet, kChain, key, kNow - 301).value();

  struct case_ {
    const char* what;
    std::string typed_data;
    std::string signature;
    eip712::envelope::expectation want;
    envelope_errc code;
  };
  const auto create = expect(eip712::envelope::kind::create_wallet);
  auto with_signer = [&](const address& a) {
    auto e = create;
    e.expected_signer = a;
    return e;
  };
  auto wrong_chain = create;
  wrong_chain.chain_id = 1;
  const case_ cases[] = {
      // 1. size
      {"4097 bytes", "{" + std::string(4097 - good.size(), ' ') + good.substr(1), env.signature, create,
       envelope_errc::too_large},
      // 2. JSON and top-level shape
      {"not JSON", good.substr(0, good.size() - 1), env.signature, create, envelope_errc::malformed},
      {"not an object", "[]", env.signature, create, envelope_errc::malformed},
      {"extra top-level key", edited([](json::object& o) { o["nonce"] = 1; }), env.signature, create,
       envelope_errc::malformed},
      {"missing message", edited([](json::object& o) { o.erase("message"); }), env.signature, create,
       envelope_errc::malformed},
      // 3. canonical types
      {"message fields swapped", edited([&](json::object& o) {
         auto& m = types(o)["CreateWallet"].as_array();
         std::swap(m[0], m[1]);
       }),
       env.signature, create, envelope_errc::types_not_canonical},
      {"issuedAt typed uint64",
       edited([&](json::object& o) { types(o)["CreateWallet"].as_array()[1] = member("issuedAt", "uint64"); }),
       env.signature, create, envelope_errc::types_not_canonical},
      {"member renamed",
       edited([&](json::object& o) { types(o)["CreateWallet"].as_array()[0] = member("wallet", "address"); }),
       env.signature, create, envelope_errc::types_not_canonical},
      {"domain with salt",
       edited([&](json::object& o) { types(o)["EIP712Domain"].as_array().push_back(member("salt", "bytes32")); }),
       env.signature, create, envelope_errc::types_not_canonical},
      {"domain members reordered", edited([&](json::object& o) {
         auto& d = types(o)["EIP712Domain"].as_array();
         std::swap(d[0], d[1]);
       }),
       env.signature, create, envelope_errc::types_not_canonical},
      {"extra key in a member",
       edited([&](json::object& o) { types(o)["CreateWallet"].as_array()[0].as_object()["note"] = "x"; }),
       env.signature, create, envelope_errc::types_not_canonical},
      {"an extra type", edited([&](json::object& o) { types(o)["BillingAuth"] = types(o)["CreateWallet"]; }),
       env.signature, create, envelope_errc::types_not_canonical},
      {"primaryType outside the four", edited([&](json::object& o) {
         types(o)["Login"] = types(o)["CreateWallet"];
         types(o).erase("CreateWallet");
         o["primaryType"] = "Login";
       }),
       env.signature, create, envelope_errc::types_not_canonical},
      {"primaryType not the declared struct", edited([](json::object& o) { o["primaryType"] = "AddUsageApiKey"; }),
       env.signature, create, envelope_errc::types_not_canonical},
      // 4. primaryType of this endpoint: a CreateWallet signature where AddUsageApiKey is expected
      {"CreateWallet presented to AddUsageApiKey", good, env.signature,
       expect(eip712::envelope::kind::add_usage_api_key), envelope_errc::wrong_primary_type},
      // 5. domain
      {"domain name", edited([](json::object& o) { o["domain"].as_object()["name"] = "Svc ChainSecured "; }),
       env.signature, create, envelope_errc::domain_mismatch},
      {"domain version", edited([](json::object& o) { o["domain"].as_object()["version"] = "2"; }), env.signature,
       create, envelope_errc::domain_mismatch},
      {"domain version as number", edited([](json::object& o) { o["domain"].as_object()["version"] = 1; }),
       env.signature, create, envelope_errc::domain_mismatch},
      {"extra domain key", edited([](json::object& o) {
         o["domain"].as_object()["verifyingContract"] = "0x0000000000000000000000000000000000000000";
       }),
       env.signature, create, envelope_errc::domain_mismatch},
      {"chainId not a number", edited([](json::object& o) { o["domain"].as_object()["chainId"] = "mainnet"; }),
       env.signature, create, envelope_errc::malformed},
      // 6. chain
      {"chainId differs", good, env.signature, wrong_chain, envelope_errc::chain_id_mismatch},
      // 7. message shape
      {"message extra key", edited([](json::object& o) { o["message"].as_object()["nonce"] = 1; }), env.signature,
       create, envelope_errc::malformed},
      {"message address checksum", edited([](json::object& o) {
         o["message"].as_object()["address"] = "0xcD2a3d9F938E13CD947Ec05AbC7FE734Df8DD826";
       }),
       env.signature, create, envelope_errc::malformed},
      {"issuedAt negative", edited([](json::object& o) { o["message"].as_object()["issuedAt"] = -1; }), env.signature,
       create, envelope_errc::malformed},
      // 8. issuedAt window (signatures made at now-301 / now+301)
      {"issuedAt now-301", text_of(stale.typed_data), stale.signature, create, envelope_errc::expired},
      // 9. signature form
      {"signature too short", good, "0x1234", create, envelope_errc::signature_malformed},
      {"signature without 0x", good, env.signature.substr(2), create, envelope_errc::signature_malformed},
      {"signature bad digit", good, "0x" + std::string(129, '0') + "g", create, envelope_errc::signature_malformed},
      {"signature v = 29", good, env.signature.substr(0, 130) + "1d", create, envelope_errc::signature_malformed},
      // 10. signer
      {"signed by another key", good, signed_by(env.typed_data, other), create, envelope_errc::signer_mismatch},
      {"not the expected signer", good, env.signature,
       with_signer(parse_address("0x7E5F4552091A69125d5DfCb7b8C2659029395Bdf").value()),
       envelope_errc::signer_mismatch},
  };
  for (const auto& c : cases) {
    const std::string what(c.what);
    CAPTURE(what);
    auto r = eip712::envelope::verify(c.typed_data, c.signature, c.want);
    REQUIRE(!r);
    CHECK(r.code() == c.code);
  }
}

TEST_CASE("envelope issuedAt window is now ± max_skew inclusive") {
  const Secret key = cow_key();
  struct case_ {
    int64_t offset;
    bool accepted;
  };
  const case_ cases[] = {{-301, false}, {-300, true}, {0, true}, {300, true}, {301, false}};
  for (const auto& c : cases) {
    CAPTURE(c.offset);
    const auto env = eip712::envelope::sign(eip712::envelope::kind::billing_auth, kChain, key,
                                            static_cast<uint64_t>(static_cast<int64_t>(kNow) + c.offset))
                         .value();
    auto r =
        eip712::envelope::verify(text_of(env.typed_data), env.signature, expect(eip712::envelope::kind::billing_auth));
    if (c.accepted) {
      CHECK(r.value() == kCow);
    } else {
      CHECK(r.code() == envelope_errc::expired);
    }
  }
  // A smaller window, and a clock near zero (no wrap-around below 0).
  const auto env = eip712::envelope::sign(eip712::envelope::kind::billing_auth, kChain, key, 10).value();
  auto narrow = expect(eip712::envelope::kind::billing_auth, 20);
  narrow.max_skew = 5;
  CHECK(eip712::envelope::verify(text_of(env.typed_data), env.signature, narrow).code() == envelope_errc::expired);
  CHECK(
      eip712::envelope::verify(text_of(env.typed_data), env.signature, expect(eip712::envelope::kind::billing_auth, 0))
          .value() == kCow);
  // issuedAt beyond 64 bits is outside every window.
  json::object far = env.typed_data;
  far["message"].as_object()["issuedAt"] = "0x10000000000000000";
  CHECK(eip712::envelope::verify(text_of(far), env.signature, expect(eip712::envelope::kind::billing_auth)).code() ==
        envelope_errc::expired);
}

TEST_CASE("envelope size is measured on the text as received: 4096 accepted, 4097 refused") {
  const auto env = eip712::envelope::sign(eip712::envelope::kind::convert_account, kChain, cow_key(), kNow).value();
  const std::string compact = text_of(env.typed_data);
  REQUIRE(compact.size() < 4096);
  // JSON whitespace after the opening brace changes the size, not the document or its digest.
  auto padded = [&](size_t size) {
    return "{" + std::string(size - compact.size(), ' ') + compact.substr(1);
  };
  auto want = expect(eip712::envelope::kind::convert_account);
  want.expected_signer = kCow;  // the new admin wallet of a conversion
  const std::string at_limit = padded(4096);
  REQUIRE(at_limit.size() == 4096);
  CHECK(eip712::envelope::verify(at_limit, env.signature, want).value() == kCow);
  const std::string over = padded(4097);
  REQUIRE(over.size() == 4097);
  CHECK(eip712::envelope::verify(over, env.signature, want).code() == envelope_errc::too_large);
  // The parsed-value overload takes the size the caller measured.
  const json::value doc = json::parse(compact);
  CHECK(eip712::envelope::verify(doc, 4096, env.signature, want).value() == kCow);
  CHECK(eip712::envelope::verify(doc, 4097, env.signature, want).code() == envelope_errc::too_large);
}

TEST_CASE("envelope signatures for one flow are refused by every other") {
  using eip712::envelope::kind;
  const kind kinds[] = {kind::create_wallet, kind::convert_account, kind::add_usage_api_key, kind::billing_auth};
  const Secret key = cow_key();
  for (kind signed_for : kinds) {
    const auto env = eip712::envelope::sign(signed_for, kChain, key, kNow).value();
    for (kind presented_to : kinds) {
      CAPTURE(eip712::envelope::primary_type_name(signed_for));
      CAPTURE(eip712::envelope::primary_type_name(presented_to));
      auto r = eip712::envelope::verify(text_of(env.typed_data), env.signature, expect(presented_to));
      if (signed_for == presented_to) {
        CHECK(r.value() == kCow);
      } else {
        CHECK(r.code() == envelope_errc::wrong_primary_type);
      }
    }
  }
}

TEST_CASE("envelope X-Wallet-Auth header round-trips and rejects bad values") {
  const auto env = eip712::envelope::sign(eip712::envelope::kind::billing_auth, kChain, cow_key(), kNow).value();
  CHECK(eip712::envelope::to_json(env) ==
        R"({"typed_data":)" + text_of(env.typed_data) + R"(,"signature":")" + env.signature + R"("})");
  const std::string header = eip712::envelope::encode_wallet_auth(env);
  CHECK(as_chars(codec::base64::decode(header).value()) == eip712::envelope::to_json(env));
  auto parts = eip712::envelope::decode_wallet_auth(header);
  REQUIRE(parts);
  CHECK(parts->first == text_of(env.typed_data));
  CHECK(parts->second == env.signature);
  CHECK(eip712::envelope::verify(parts->first, parts->second, expect(eip712::envelope::kind::billing_auth)).value() ==
        kCow);

  auto b64 = [](std::string_view s) {
    return codec::base64::encode(as_bytes(s));
  };
  struct bad {
    const char* what;
    std::string header;
    envelope_errc code;
  };
  const bad cases[] = {
      {"over the limit", std::string(eip712::envelope::kMaxWalletAuthSize + 4, 'A'), envelope_errc::too_large},
      {"not base64", "!!!!", envelope_errc::malformed},
      {"base64url alphabet", "-_-_", envelope_errc::malformed},
      {"not JSON", b64("{\"typed_data\":"), envelope_errc::malformed},
      {"array", b64("[]"), envelope_errc::malformed},
      {"missing signature", b64(R"({"typed_data":{}})"), envelope_errc::malformed},
      {"typed data as a string", b64(R"({"typed_data":"{}","signature":"0x"})"), envelope_errc::malformed},
      {"extra key", b64(R"({"typed_data":{},"signature":"0x","v":1})"), envelope_errc::malformed},
  };
  for (const auto& c : cases) {
    const std::string what(c.what);
    CAPTURE(what);
    CHECK(eip712::envelope::decode_wallet_auth(c.header).code() == c.code);
  }
}
