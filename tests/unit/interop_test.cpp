// SPDX-License-Identifier: Apache-2.0
// Interop vectors: the SDK against the ecosystem's JavaScript libraries. Every expected value in
// tests/vectors/*.json was computed by the npm package named in that file's `libraries` field
// (ethers, viem, @metamask/eth-sig-util, ipfs-only-hash, cron-parser; pkp.json's HKDF by node's
// crypto.hkdfSync) by
// tests/vectors/generate.mjs; tests/vectors/README.md describes every field. Each check names
// the file and the vector index, so a failure says which vector to look at.
#include "support.hpp"

#include <boost/json.hpp>

#include <chrono>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "enact/codec/abi.hpp"
#include "enact/codec/abi_json.hpp"
#include "enact/codec/hex.hpp"
#include "enact/codec/rlp.hpp"
#include "enact/codec/rlp_json.hpp"
#include "enact/cron/cron.hpp"
#include "enact/address.hpp"
#include "enact/crypto/eip191.hpp"
#include "enact/crypto/secp256k1.hpp"
#include "enact/secret.hpp"
#include "enact/eip712/envelope.hpp"
#include "enact/eip712/typed_data.hpp"
#include "enact/ipfs/cid.hpp"
#include "enact/pkp/pkp.hpp"

namespace json = boost::json;
using namespace enact;

namespace {

json::object load(const std::string& file) {
  return json::parse(test::read_file(test::source_path("tests/vectors/" + file))).as_object();
}

const json::array& entries(const json::object& doc, std::string_view key = "vectors") { return doc.at(key).as_array(); }

std::string str(const json::value& v) { return std::string(v.as_string()); }

/// "file[i] name" for failure messages.
std::string label(std::string_view file, size_t i, const json::object& v) {
  std::string s = std::string(file) + "[" + std::to_string(i) + "]";
  if (auto* n = v.if_contains("name"))
    s += " " + str(*n);
  return s;
}

std::string hex0x(bytes_view b) { return codec::hex::encode_prefixed(b); }

/// A test private key from its "0x" hex form (the vectors' keys are public test keys).
Secret key_of(const json::value& v) { return Secret(codec::hex::decode_prefixed(v.as_string()).value()); }

/// "YYYY-MM-DDTHH:MM:SSZ" (RFC 3339, UTC, whole seconds), the only form the vectors use.
std::optional<std::chrono::sys_seconds> parse_utc(std::string_view s) {
  int y = 0;
  unsigned mo = 0, d = 0, h = 0, mi = 0, se = 0;
  if (s.size() != 20 || std::sscanf(std::string(s).c_str(), "%4d-%2u-%2uT%2u:%2u:%2uZ", &y, &mo, &d, &h, &mi, &se) != 6)
    return std::nullopt;
  const std::chrono::year_month_day ymd{std::chrono::year{y}, std::chrono::month{mo}, std::chrono::day{d}};
  if (!ymd.ok())
    return std::nullopt;
  return std::chrono::sys_days{ymd} + std::chrono::hours{h} + std::chrono::minutes{mi} + std::chrono::seconds{se};
}

std::string format_utc(std::chrono::sys_seconds t) {
  const auto day = std::chrono::floor<std::chrono::days>(t);
  const std::chrono::year_month_day ymd{day};
  const std::chrono::hh_mm_ss hms{t - day};
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02d:%02d:%02dZ", static_cast<int>(ymd.year()),
                static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()),
                static_cast<int>(hms.hours().count()), static_cast<int>(hms.minutes().count()),
                static_cast<int>(hms.seconds().count()));
  return buf;
}

/// Parses a JSON array of ABI type strings.
std::optional<std::vector<codec::abi::type>> parse_types(const json::array& a) {
  std::vector<codec::abi::type> out;
  for (const auto& t : a) {
    auto r = codec::abi::type::parse(t.as_string());
    if (!r)
      return std::nullopt;
    out.push_back(std::move(*r));
  }
  return out;
}

std::optional<std::vector<codec::abi::value>> values_from_json(const std::vector<codec::abi::type>& types,
                                                               const json::array& a) {
  if (a.size() != types.size())
    return std::nullopt;
  std::vector<codec::abi::value> out;
  for (size_t k = 0; k < types.size(); ++k) {
    auto r = codec::abi::from_json(types[k], a[k]);
    if (!r)
      return std::nullopt;
    out.push_back(std::move(*r));
  }
  return out;
}

json::array values_to_json(const std::vector<codec::abi::type>& types, const std::vector<codec::abi::value>& values) {
  json::array out;
  for (size_t k = 0; k < types.size() && k < values.size(); ++k)
    out.push_back(codec::abi::to_json(types[k], values[k]));
  return out;
}

}  // namespace

// --- abi.json: ethers AbiCoder.defaultAbiCoder() and Interface.encodeFunctionData -------------

TEST_CASE("interop: ABI encodings match ethers") {
  const auto doc = load("abi.json");
  const auto& vs = entries(doc, "encodings");
  CHECK(vs.size() >= 300);
  for (size_t i = 0; i < vs.size(); ++i) {
    const auto& v = vs[i].as_object();
    INFO(label("abi.json encodings", i, v));
    const auto types = parse_types(v.at("types").as_array());
    if (!types) {
      FAIL_CHECK("type does not parse: " << json::serialize(v.at("types")));
      continue;
    }
    const auto values = values_from_json(*types, v.at("values").as_array());
    if (!values) {
      FAIL_CHECK("values do not convert: " << json::serialize(v.at("values")));
      continue;
    }
    auto enc = codec::abi::encode(*types, *values);
    if (!enc) {
      FAIL_CHECK("encode failed: " << enc.err().message);
      continue;
    }
    CHECK(hex0x(*enc) == str(v.at("encoded")));
    auto data = codec::hex::decode(v.at("encoded").as_string());
    REQUIRE(data);
    auto dec = codec::abi::decode(*types, *data);
    if (!dec) {
      FAIL_CHECK("decode failed: " << dec.err().message);
      continue;
    }
    CHECK(values_to_json(*types, *dec) == v.at("values"));
  }
}

TEST_CASE("interop: ABI function calls match ethers") {
  const auto doc = load("abi.json");
  const auto& vs = entries(doc, "calls");
  CHECK(vs.size() >= 20);
  bool saw_set_usage_api_key = false;
  for (size_t i = 0; i < vs.size(); ++i) {
    const auto& v = vs[i].as_object();
    INFO(label("abi.json calls", i, v));
    const std::string signature = str(v.at("signature"));
    saw_set_usage_api_key |= signature.starts_with("setUsageApiKey(");
    auto fn = codec::abi::parse_signature(signature);
    if (!fn) {
      FAIL_CHECK("signature does not parse: " << fn.err().message);
      continue;
    }
    CHECK(fn->canonical() == signature);
    CHECK(hex0x(fn->selector()) == str(v.at("selector")));
    CHECK(hex0x(codec::abi::selector(signature)) == str(v.at("selector")));
    const auto values = values_from_json(fn->inputs, v.at("values").as_array());
    if (!values) {
      FAIL_CHECK("values do not convert: " << json::serialize(v.at("values")));
      continue;
    }
    auto call = codec::abi::encode_call(signature, *values);
    if (!call) {
      FAIL_CHECK("encode_call failed: " << call.err().message);
      continue;
    }
    CHECK(hex0x(*call) == str(v.at("calldata")));
    auto dec = codec::abi::decode_call(*fn, *call);
    if (!dec) {
      FAIL_CHECK("decode_call failed: " << dec.err().message);
      continue;
    }
    CHECK(values_to_json(fn->inputs, *dec) == v.at("values"));
  }
  CHECK(saw_set_usage_api_key);
}

// --- rlp.json: ethers encodeRlp / decodeRlp ---------------------------------------------------

TEST_CASE("interop: RLP matches ethers") {
  const auto doc = load("rlp.json");
  const auto& vs = entries(doc);
  CHECK(vs.size() >= 200);
  for (size_t i = 0; i < vs.size(); ++i) {
    const auto& v = vs[i].as_object();
    INFO(label("rlp.json", i, v));
    auto it = codec::rlp::from_json(v.at("decoded"));
    if (!it) {
      FAIL_CHECK("from_json failed: " << it.err().message);
      continue;
    }
    CHECK(hex0x(codec::rlp::encode(*it)) == str(v.at("encoded")));
    auto data = codec::hex::decode(v.at("encoded").as_string());
    REQUIRE(data);
    auto dec = codec::rlp::decode(*data);
    if (!dec) {
      FAIL_CHECK("decode failed: " << dec.err().message);
      continue;
    }
    CHECK(*dec == *it);
    CHECK(codec::rlp::to_json(*dec) == v.at("decoded"));
  }
}

// --- cid.json: ipfs-only-hash -----------------------------------------------------------------

TEST_CASE("interop: CIDs match ipfs-only-hash") {
  const auto doc = load("cid.json");
  const auto& vs = entries(doc);
  CHECK(vs.size() >= 12);
  for (size_t i = 0; i < vs.size(); ++i) {
    const auto& v = vs[i].as_object();
    INFO(label("cid.json", i, v));
    bytes content;
    if (v.at("content").as_string() == "pattern") {
      // tests/vectors/README.md: byte i = (i * 31 + 7) & 0xff.
      content.resize(static_cast<size_t>(v.at("size").to_number<uint64_t>()));
      for (size_t k = 0; k < content.size(); ++k)
        content[k] = static_cast<uint8_t>((k * 31 + 7) & 0xff);
    } else {
      const auto text = v.at("content_utf8").as_string();
      content.assign(text.begin(), text.end());
    }
    REQUIRE(content.size() == v.at("size").to_number<uint64_t>());
    const std::string v0 = ipfs::cid_v0_of(content).to_string();
    CHECK(v0 == str(v.at("cid_v0")));
    CHECK(ipfs::cid_of(content) == str(v.at("cid_v0")));
    CHECK(ipfs::cid_v1_of(content).to_string() == str(v.at("cid_v1")));
    CHECK(hex0x(ipfs::hashed_cid(str(v.at("cid_v0")))) == str(v.at("hashed_cid")));
    // The expected strings parse back to themselves.
    for (const char* key : {"cid_v0", "cid_v1"}) {
      auto parsed = ipfs::parse(v.at(key).as_string());
      CHECK_MESSAGE(parsed, key);
      if (parsed)
        CHECK(parsed->to_string() == str(v.at(key)));
    }
  }
}

// --- cron.json: cron-parser -------------------------------------------------------------------

TEST_CASE("interop: cron fire times match cron-parser") {
  const auto doc = load("cron.json");
  const auto& vs = entries(doc);
  CHECK(vs.size() >= 200);
  for (size_t i = 0; i < vs.size(); ++i) {
    const auto& v = vs[i].as_object();
    const std::string expr = str(v.at("expression"));
    INFO("cron.json[" << i << "] " << expr << " after " << str(v.at("start")));
    auto s = cron::parse(expr);
    if (!s) {
      FAIL_CHECK("parse failed: " << s.err().message);
      continue;
    }
    auto t = parse_utc(v.at("start").as_string());
    REQUIRE(t);
    std::string got;
    std::string want;
    for (const auto& n : v.at("next").as_array()) {
      if (!want.empty())
        want += ' ';
      want += str(n);
    }
    for (size_t k = 0; k < v.at("next").as_array().size(); ++k) {
      auto next = cron::next_after(*s, *t);
      if (!got.empty())
        got += ' ';
      if (!next) {
        got += "(none)";
        break;
      }
      got += format_utc(*next);
      t = *next;
    }
    CHECK(got == want);
  }
}

// --- typed_data.json, envelope-*: the wallet-proof envelope of each primary type, signed by viem --

TEST_CASE("interop: envelopes signed by the reference libraries pass the server's validator") {
  const auto doc = load("typed_data.json");
  size_t seen = 0;
  for (const auto& entry : entries(doc)) {
    const auto& v = entry.as_object();
    if (!str(v.at("name")).starts_with("envelope-"))
      continue;
    INFO(str(v.at("name")));
    ++seen;
    const auto& td = v.at("document").as_object();
    const auto k = eip712::envelope::kind_from_name(td.at("primaryType").as_string());
    REQUIRE(k.has_value());
    const uint64_t issued = td.at("message").at("issuedAt").to_number<uint64_t>();
    eip712::envelope::expectation want{*k, td.at("domain").at("chainId").to_number<uint64_t>(), issued};
    const std::string text = boost::json::serialize(td);
    auto signer = eip712::envelope::verify(text, str(v.at("signature_viem")), want);
    REQUIRE_MESSAGE(signer, (signer ? "" : signer.err().message));
    CHECK(to_checksum_address(*signer) == str(v.at("signer")));
    // The SDK's own builder gives the same document, and so the same signature.
    auto built = eip712::envelope::build(*k, want.chain_id, *signer, issued);
    CHECK(built.at("types") == td.at("types"));
    // One rule per neighbour: another endpoint, another chain, outside the issuedAt window.
    eip712::envelope::expectation other = want;
    other.expected = *k == eip712::envelope::kind::billing_auth ? eip712::envelope::kind::create_wallet
                                                                : eip712::envelope::kind::billing_auth;
    CHECK(eip712::envelope::verify(text, str(v.at("signature_viem")), other).code() ==
          envelope_errc::wrong_primary_type);
    other = want;
    other.chain_id += 1;
    CHECK(eip712::envelope::verify(text, str(v.at("signature_viem")), other).code() ==
          envelope_errc::chain_id_mismatch);
    other = want;
    other.now = issued + eip712::envelope::kDefaultMaxSkew + 1;
    CHECK(eip712::envelope::verify(text, str(v.at("signature_viem")), other).code() == envelope_errc::expired);
  }
  CHECK(seen == 4);
}

// --- typed_data.json, envelope2-*: version 2 envelopes (docs/protocol.md §2), signed by viem ----

namespace {
hash256 word_of(const json::value& v) {
  const auto raw = codec::hex::decode_prefixed(v.as_string()).value();
  hash256 out{};
  std::copy(raw.begin(), raw.end(), out.begin());
  return out;
}
}  // namespace

TEST_CASE("interop: version 2 envelopes signed by the reference libraries pass the server's validator") {
  namespace env = eip712::envelope;
  const auto doc = load("typed_data.json");
  size_t seen = 0;
  for (const auto& entry : entries(doc)) {
    const auto& v = entry.as_object();
    if (!str(v.at("name")).starts_with("envelope2-"))
      continue;
    INFO(str(v.at("name")));
    ++seen;
    const auto& td = v.at("document").as_object();
    const auto k = env::kind_from_name(td.at("primaryType").as_string());
    REQUIRE(k.has_value());
    const auto& msg = td.at("message").as_object();
    const env::deployment dep{td.at("domain").at("chainId").to_number<uint64_t>(),
                              parse_address(td.at("domain").at("verifyingContract").as_string()).value()};
    env::message_v2 m;
    m.signer = parse_address(msg.at("address").as_string()).value();
    m.issued_at = msg.at("issuedAt").to_number<uint64_t>();
    if (msg.contains("nonce"))
      m.nonce = word_of(msg.at("nonce"));
    if (msg.contains("account"))
      m.account = word_of(msg.at("account"));
    if (msg.contains("method"))
      m.request = {std::string(msg.at("method").as_string()), std::string(msg.at("path").as_string()),
                   word_of(msg.at("bodyHash"))};
    // The SDK's builder gives the document ethers and eth-sig-util hashed, and its direct digest
    // their digest.
    CHECK(json::value(env::build(*k, dep, m)) == json::value(td));
    CHECK(codec::hex::encode_prefixed(env::digest(*k, dep, m)) == str(v.at("digest_ethers")));
    CHECK(codec::hex::encode_prefixed(env::digest(*k, dep, m)) == str(v.at("digest_eth_sig_util")));
    // Signing it again gives viem's signature (RFC 6979).
    auto signed_again = env::sign(*k, dep, m, key_of(v.at("private_key")));
    REQUIRE(signed_again);
    CHECK(signed_again->signature == str(v.at("signature_viem")));

    env::expectation want{*k, dep.chain_id, m.issued_at};
    want.verifying_contract = dep.verifying_contract;
    want.accept_v1 = false;
    if (*k == env::kind::convert_account)
      want.account = m.account;
    if (*k == env::kind::billing_auth)
      want.request = m.request;
    const std::string text = json::serialize(td);
    const std::string sig = str(v.at("signature_viem"));
    auto got = env::check(text, sig, want);
    REQUIRE_MESSAGE(got, (got ? "" : got.err().message));
    CHECK(to_checksum_address(got->signer) == str(v.at("signer")));
    CHECK(got->version == 2);
    CHECK(got->nonce.has_value() == (*k != env::kind::billing_auth));

    // Each binding refuses its neighbour: another deployment's registry, another account, another request.
    auto other = want;
    other.verifying_contract->at(19) ^= 1;
    CHECK(env::check(text, sig, other).code() == envelope_errc::contract_mismatch);
    other = want;
    other.verifying_contract.reset();
    CHECK(env::check(text, sig, other).code() == envelope_errc::contract_mismatch);
    other = want;
    other.chain_id += 1;
    CHECK(env::check(text, sig, other).code() == envelope_errc::chain_id_mismatch);
    if (*k == env::kind::convert_account) {
      other = want;
      other.account->at(0) ^= 1;
      CHECK(env::check(text, sig, other).code() == envelope_errc::account_mismatch);
      other.account.reset();
      CHECK(env::check(text, sig, other).code() == envelope_errc::account_mismatch);
    }
    if (*k == env::kind::billing_auth) {
      for (int field = 0; field < 4; ++field) {
        other = want;
        if (field == 0)
          other.request->method = "PUT";
        else if (field == 1)
          other.request->path += "&x=1";
        else if (field == 2)
          other.request->body_hash[0] ^= 1;
        else
          other.request.reset();
        CHECK(env::check(text, sig, other).code() == envelope_errc::request_mismatch);
      }
    }
    // An edited value the signature does not cover: the nonce or the issuedAt.
    auto edited = td;
    if (msg.contains("nonce"))
      edited["message"].as_object()["nonce"] = "0x" + std::string(64, '0');
    else
      edited["message"].as_object()["issuedAt"] = m.issued_at + 1;
    CHECK(env::check(json::serialize(edited), sig, want).code() == envelope_errc::signer_mismatch);
  }
  CHECK(seen == 5);
}

TEST_CASE("interop: version 1 envelopes are refused where only version 2 is accepted") {
  namespace env = eip712::envelope;
  const auto doc = load("typed_data.json");
  size_t seen = 0;
  for (const auto& entry : entries(doc)) {
    const auto& v = entry.as_object();
    if (!str(v.at("name")).starts_with("envelope-"))
      continue;
    ++seen;
    const auto& td = v.at("document").as_object();
    const auto k = env::kind_from_name(td.at("primaryType").as_string()).value();
    env::expectation want{k, td.at("domain").at("chainId").to_number<uint64_t>(),
                          td.at("message").at("issuedAt").to_number<uint64_t>()};
    want.accept_v1 = false;
    CHECK(env::check(json::serialize(td), str(v.at("signature_viem")), want).code() == envelope_errc::version_refused);
  }
  CHECK(seen == 4);
}

// --- typed_data.json: ethers TypedDataEncoder, eth-sig-util eip712Hash V4, viem signTypedData --

TEST_CASE("interop: EIP-712 typed data matches ethers, eth-sig-util and viem") {
  const auto doc = load("typed_data.json");
  const auto& vs = entries(doc);
  CHECK(vs.size() >= 300);
  for (size_t i = 0; i < vs.size(); ++i) {
    const auto& v = vs[i].as_object();
    INFO(label("typed_data.json", i, v));
    auto td = eip712::from_json(v.at("document"));
    if (!td) {
      FAIL_CHECK("document rejected: " << td.err().message);
      continue;
    }
    auto et = eip712::encode_type(td->types, td->primary_type);
    CHECK_MESSAGE(et, (et ? "" : et.err().message));
    if (et)
      CHECK(*et == str(v.at("encode_type")));
    auto ds = eip712::domain_separator(*td);
    CHECK_MESSAGE(ds, (ds ? "" : ds.err().message));
    if (ds)
      CHECK(hex0x(*ds) == str(v.at("domain_separator")));
    auto hs = eip712::hash_struct(td->types, td->primary_type, td->message);
    CHECK_MESSAGE(hs, (hs ? "" : hs.err().message));
    if (hs)
      CHECK(hex0x(*hs) == str(v.at("hash_struct")));
    auto d = eip712::digest(*td);
    if (!d) {
      FAIL_CHECK("digest failed: " << d.err().message);
      continue;
    }
    CHECK(hex0x(*d) == str(v.at("digest_ethers")));
    CHECK(hex0x(*d) == str(v.at("digest_eth_sig_util")));
    auto sig = eip712::sign(*td, key_of(v.at("private_key")));
    if (!sig) {
      FAIL_CHECK("sign failed: " << sig.err().message);
      continue;
    }
    CHECK(hex0x(sig->to_bytes()) == str(v.at("signature_viem")));
    const auto expected_sig = codec::hex::decode_prefixed(v.at("signature_viem").as_string());
    REQUIRE(expected_sig);
    auto signer = eip712::recover(*td, *expected_sig);
    CHECK_MESSAGE(signer, (signer ? "" : signer.err().message));
    if (signer)
      CHECK(to_checksum_address(*signer) == str(v.at("signer")));
  }
}

// --- eip55.json: ethers getAddress ------------------------------------------------------------

TEST_CASE("interop: EIP-55 checksums match ethers") {
  const auto doc = load("eip55.json");
  const auto& vs = entries(doc);
  CHECK(vs.size() >= 200);
  for (size_t i = 0; i < vs.size(); ++i) {
    const auto& v = vs[i].as_object();
    INFO("eip55.json[" << i << "] " << str(v.at("lowercase")));
    auto a = parse_address(v.at("lowercase").as_string());
    REQUIRE(a);
    CHECK(to_checksum_address(*a) == str(v.at("checksummed")));
    auto strict = parse_address_strict(v.at("checksummed").as_string());
    CHECK(strict);
    if (strict)
      CHECK(*strict == *a);
  }
}

// --- keys.json: ethers Wallet, hashMessage, signMessage ---------------------------------------

TEST_CASE("interop: keys, EIP-191 hashes and signatures match ethers") {
  const auto doc = load("keys.json");
  const auto& vs = entries(doc);
  CHECK(vs.size() >= 50);
  for (size_t i = 0; i < vs.size(); ++i) {
    const auto& v = vs[i].as_object();
    INFO("keys.json[" << i << "]");
    const Secret key = key_of(v.at("private_key"));
    auto pub = crypto::secp256k1::public_key_of(key);
    if (!pub) {
      FAIL_CHECK("public_key_of failed: " << pub.err().message);
      continue;
    }
    CHECK("0x04" + codec::hex::encode(*pub) == str(v.at("public_key")));
    CHECK(hex0x(crypto::secp256k1::compress(*pub)) == str(v.at("public_key_compressed")));
    CHECK(to_checksum_address(crypto::secp256k1::to_address(*pub)) == str(v.at("address")));

    const auto message = codec::hex::decode_prefixed(v.at("message_hex").as_string());
    REQUIRE(message);
    const hash256 h = crypto::personal_message_hash(*message);
    CHECK(hex0x(h) == str(v.at("eip191_hash")));
    if (auto* text = v.if_contains("message"))
      CHECK(hex0x(crypto::personal_message_hash(std::string_view(text->as_string()))) == str(v.at("eip191_hash")));
    auto sig = crypto::secp256k1::sign(h, key);
    if (!sig) {
      FAIL_CHECK("sign failed: " << sig.err().message);
      continue;
    }
    CHECK(hex0x(sig->to_bytes()) == str(v.at("signature")));
    const auto expected_sig = codec::hex::decode_prefixed(v.at("signature").as_string());
    REQUIRE(expected_sig);
    auto signer = crypto::secp256k1::recover_address(h, *expected_sig);
    CHECK_MESSAGE(signer, (signer ? "" : signer.err().message));
    if (signer)
      CHECK(to_checksum_address(*signer) == str(v.at("address")));
  }
}

// --- pkp.json: HKDF-SHA256 (node:crypto), ethers computeAddress, AbiCoder, SigningKey.sign ------

TEST_CASE("interop: PKP derivation matches node's HKDF and ethers") {
  const auto doc = load("pkp.json");
  const auto& vs = entries(doc);
  CHECK(vs.size() >= 30);
  size_t api_paths = 0;
  for (size_t i = 0; i < vs.size(); ++i) {
    const auto& v = vs[i].as_object();
    INFO(label("pkp.json", i, v));
    const Secret root = key_of(v.at("root_key"));
    const auto path = codec::hex::decode_fixed<32>(v.at("derivation_path").as_string());
    REQUIRE(path);
    const auto account = codec::hex::decode_fixed<32>(v.at("account_hash").as_string());
    REQUIRE(account);

    if (str(v.at("path_kind")) == "api") {
      ++api_paths;
      const auto api_key_hash = codec::hex::decode_fixed<32>(v.at("api_key_hash").as_string());
      REQUIRE(api_key_hash);
      const uint64_t index = std::stoull(str(v.at("index")));
      CHECK(hex0x(pkp::api_mode_path(*api_key_hash, index)) == str(v.at("derivation_path")));
    }

    auto key = pkp::signing_key(root, *account, *path);
    if (!key) {
      FAIL_CHECK("signing_key failed: " << key.err().message);
      continue;
    }
    CHECK(hex0x(key->view()) == str(v.at("signing_key")));
    auto sym = pkp::symmetric_key(root, *account, *path);
    REQUIRE(sym);
    CHECK(hex0x(sym->view()) == str(v.at("symmetric_key")));
    auto addr = pkp::wallet_address(root, *account, *path);
    REQUIRE(addr);
    CHECK(to_checksum_address(*addr) == str(v.at("address")));
    // docs/protocol.md §1 "owning account": the same path under another account is another key.
    const auto other = codec::hex::decode_fixed<32>(v.at("other_account_hash").as_string());
    REQUIRE(other);
    auto other_addr = pkp::wallet_address(root, *other, *path);
    REQUIRE(other_addr);
    CHECK(to_checksum_address(*other_addr) == str(v.at("other_account_address")));
    CHECK(*other_addr != *addr);
    auto legacy = pkp::legacy_wallet_address(root, *path);
    REQUIRE(legacy);
    CHECK(to_checksum_address(*legacy) == str(v.at("legacy_address")));
    auto pub = crypto::secp256k1::public_key_of(*key);
    REQUIRE(pub);
    CHECK("0x04" + codec::hex::encode(*pub) == str(v.at("public_key")));

    const auto digest = codec::hex::decode_fixed<32>(v.at("digest").as_string());
    REQUIRE(digest);
    auto sig = crypto::secp256k1::sign(*digest, *key);
    if (!sig) {
      FAIL_CHECK("sign failed: " << sig.err().message);
      continue;
    }
    CHECK(hex0x(sig->to_bytes()) == str(v.at("signature")));
  }
  // Both kinds of path are covered.
  CHECK(api_paths > 0);
  CHECK(api_paths < vs.size());
}

TEST_CASE("interop: server keys match node's HKDF and ethers") {
  const auto doc = load("pkp.json");
  const auto& ks = entries(doc, "server_keys");
  CHECK(ks.size() >= 12);
  for (size_t i = 0; i < ks.size(); ++i) {
    const auto& v = ks[i].as_object();
    INFO("server_keys[" << i << "] " << str(v.at("purpose")));
    const Secret root = key_of(v.at("root_key"));
    const std::string purpose = str(v.at("purpose"));
    auto key = pkp::server_key(root, purpose);
    REQUIRE(key);
    CHECK(hex0x(key->view()) == str(v.at("key")));
    auto signing = pkp::server_signing_key(root, purpose);
    REQUIRE(signing);
    CHECK(hex0x(signing->view()) == str(v.at("signing_key")));
    auto pub = crypto::secp256k1::public_key_of(*signing);
    REQUIRE(pub);
    CHECK(to_checksum_address(crypto::secp256k1::to_address(*pub)) == str(v.at("signing_address")));
  }
}
