// SPDX-License-Identifier: Apache-2.0
// The wallet-proof envelope as a client sends it: canonical shape checks on the JSON as received,
// then an ECDSA recover over the digest (docs/protocol.md §2 "Typed-data envelope", rule 5).
#include <cmath>
#include <cstring>
#include <initializer_list>

#include "enact/address.hpp"
#include "enact/codec/base64.hpp"
#include "enact/codec/hex.hpp"
#include "enact/crypto/keccak.hpp"
#include "enact/crypto/secp256k1.hpp"
#include "enact/eip712/envelope.hpp"
#include "enact/u256.hpp"
#include "envelope_fields.hpp"

namespace json = boost::json;

namespace enact::eip712::envelope {
using namespace detail;
namespace {

bool is_member_list(const json::value& v, std::span<const field> want) {
  const auto* arr = v.if_array();
  if (arr == nullptr || arr->size() != want.size())
    return false;
  for (size_t i = 0; i < want.size(); ++i) {
    const auto* obj = (*arr)[i].if_object();
    if (obj == nullptr || obj->size() != 2)
      return false;
    const auto* name = obj->if_contains("name");
    const auto* type = obj->if_contains("type");
    if (name == nullptr || type == nullptr || !name->is_string() || !type->is_string())
      return false;
    if (name->get_string() != want[i].name || type->get_string() != want[i].type)
      return false;
  }
  return true;
}

bool has_exactly(const json::object& obj, std::initializer_list<std::string_view> keys) {
  if (obj.size() != keys.size())
    return false;
  for (auto k : keys)
    if (!obj.contains(k))
      return false;
  return true;
}

/// An unsigned integer as eth_signTypedData_v4 takes it: an exact JSON integer below 2^53, or a
/// decimal / 0x-hex string.
std::optional<u256> read_uint(const json::value& v) {
  switch (v.kind()) {
    case json::kind::int64:
      if (v.get_int64() < 0 || static_cast<uint64_t>(v.get_int64()) > kMaxSafeInteger)
        break;
      return u256{static_cast<uint64_t>(v.get_int64())};
    case json::kind::uint64:
      if (v.get_uint64() > kMaxSafeInteger)
        break;
      return u256{v.get_uint64()};
    case json::kind::double_: {
      const double d = v.get_double();
      if (!std::isfinite(d) || std::trunc(d) != d || d < 0 || d > double(kMaxSafeInteger))
        break;
      return u256{static_cast<uint64_t>(d)};
    }
    case json::kind::string: {
      auto r = u256::from_string(v.get_string());
      if (r)
        return *r;
      break;
    }
    default:
      break;
  }
  return std::nullopt;
}

/// bytes32 as eth_signTypedData_v4 takes it here: 0x + 64 hex digits.
std::optional<hash256> read_bytes32(const json::value& v) {
  const auto* text = v.if_string();
  if (text == nullptr || text->size() != 66)
    return std::nullopt;
  auto raw = codec::hex::decode_prefixed(*text, "bytes32");
  if (!raw || raw->size() != 32)
    return std::nullopt;
  hash256 out;
  std::memcpy(out.data(), raw->data(), 32);
  return out;
}

/// The version (1 or 2) whose EIP712Domain member list `types` declares, and the declared kind.
std::optional<std::pair<unsigned, kind>> declared_struct(const json::object* types) {
  if (types == nullptr || types->size() != 2 || !types->contains("EIP712Domain"))
    return std::nullopt;
  unsigned version = 0;
  if (is_member_list(types->at("EIP712Domain"), kDomainFields))
    version = 1;
  else if (is_member_list(types->at("EIP712Domain"), kDomainFields2))
    version = 2;
  else
    return std::nullopt;
  for (const auto& kv : *types) {
    if (kv.key() == "EIP712Domain")
      continue;
    if (auto k = kind_from_name(kv.key()); k && is_member_list(kv.value(), message_fields(*k, version)))
      return std::pair{version, *k};
  }
  return std::nullopt;
}

}  // namespace

result<verified> check(std::string_view typed_data_json, std::string_view signature_hex, const expectation& want) {
  // Rule 1 before parsing, so an oversized body costs no parse.
  if (typed_data_json.size() > kMaxTypedDataSize)
    return fail(envelope_errc::too_large, "typed_data: " + std::to_string(typed_data_json.size()) + " bytes, at most " +
                                              std::to_string(kMaxTypedDataSize) + " allowed");
  std::error_code ec;
  json::value doc = json::parse(typed_data_json, ec);
  if (ec)
    return fail(envelope_errc::malformed, "typed_data: invalid JSON (" + ec.message() + ")");
  return check(doc, typed_data_json.size(), signature_hex, want);
}

result<verified> check(const json::value& doc, size_t serialized_size, std::string_view signature_hex,
                       const expectation& want) {
  if (serialized_size > kMaxTypedDataSize)
    return fail(envelope_errc::too_large, "typed_data: " + std::to_string(serialized_size) + " bytes, at most " +
                                              std::to_string(kMaxTypedDataSize) + " allowed");
  const auto* root = doc.if_object();
  if (root == nullptr || !has_exactly(*root, {"types", "primaryType", "domain", "message"}))
    return fail(envelope_errc::malformed, "typed_data: expected exactly types, primaryType, domain and message");

  // Rule 1 of the spec: the types block is part of the type hash, so it must be exact.
  const auto declared = declared_struct(root->at("types").if_object());
  if (!declared)
    return fail(envelope_errc::types_not_canonical,
                "types: not the canonical envelope types (version 2: EIP712Domain(string name,string version,"
                "uint256 chainId,address verifyingContract) and one of CreateWallet, ConvertAccount, AddUsageApiKey, "
                "BillingAuth with the members of docs/protocol.md §2; version 1: EIP712Domain(string name,string "
                "version,uint256 chainId) and one of them as (address address,uint256 issuedAt))");
  const auto [version, declared_kind] = *declared;
  const auto* primary = root->at("primaryType").if_string();
  if (primary == nullptr || *primary != primary_type_name(declared_kind))
    return fail(envelope_errc::types_not_canonical,
                "primaryType: must name the declared struct " + std::string(primary_type_name(declared_kind)));
  // Rule 2: a signature made for one flow is refused by every other.
  if (declared_kind != want.expected)
    return fail(envelope_errc::wrong_primary_type, "primaryType: expected " +
                                                       std::string(primary_type_name(want.expected)) + ", got " +
                                                       std::string(primary_type_name(declared_kind)));

  const auto* domain = root->at("domain").if_object();
  const bool domain_shape =
      domain != nullptr && (version == 1 ? has_exactly(*domain, {"name", "version", "chainId"})
                                         : has_exactly(*domain, {"name", "version", "chainId", "verifyingContract"}));
  if (!domain_shape)
    return fail(envelope_errc::domain_mismatch, version == 1 ? "domain: expected exactly name, version and chainId"
                                                             : "domain: expected exactly name, version, chainId and "
                                                               "verifyingContract");
  const auto* dname = domain->at("name").if_string();
  if (dname == nullptr || *dname != kDomainName)
    return fail(envelope_errc::domain_mismatch, "domain.name: expected \"" + std::string(kDomainName) + "\"");
  const std::string_view want_version = version == 1 ? kDomainVersion : kDomainVersion2;
  const auto* dversion = domain->at("version").if_string();
  if (dversion == nullptr || *dversion != want_version)
    return fail(envelope_errc::domain_mismatch,
                "domain.version: expected \"" + std::string(want_version) + "\" for these types");
  if (version == 1 && !want.accept_v1)
    return fail(envelope_errc::version_refused,
                std::string(primary_type_name(want.expected)) +
                    ": version 1 envelopes are refused here, they bind no account, request or deployment; sign "
                    "version 2 (docs/protocol.md §2)");
  const auto chain = read_uint(domain->at("chainId"));
  if (!chain)
    return fail(envelope_errc::malformed, "domain.chainId: expected an unsigned integer");
  if (*chain != u256{want.chain_id})
    return fail(envelope_errc::chain_id_mismatch,
                "domain.chainId: expected " + std::to_string(want.chain_id) + ", got " + chain->to_string());
  deployment dep{want.chain_id, {}};
  if (version == 2) {
    const auto* text = domain->at("verifyingContract").if_string();
    auto contract = text == nullptr ? result<address>(fail(envelope_errc::malformed, "not a string"))
                                    : parse_address_strict(*text, "domain.verifyingContract");
    if (!contract)
      return fail(envelope_errc::malformed, "domain.verifyingContract: expected an address");
    if (!want.verifying_contract)
      return fail(envelope_errc::contract_mismatch,
                  "domain.verifyingContract: this verifier has no registry address to check it against");
    if (*contract != *want.verifying_contract)
      return fail(envelope_errc::contract_mismatch,
                  "domain.verifyingContract: expected " + to_checksum_address(*want.verifying_contract) +
                      " (this deployment's registry), got " + to_checksum_address(*contract));
    dep.verifying_contract = *contract;
  }

  const auto* message = root->at("message").if_object();
  const auto fields = message_fields(declared_kind, version);
  bool message_shape = message != nullptr && message->size() == fields.size();
  for (size_t i = 0; message_shape && i < fields.size(); ++i)
    message_shape = message->contains(fields[i].name);
  if (!message_shape) {
    std::string names;
    for (const auto& f : fields)
      names += (names.empty() ? "" : ", ") + std::string(f.name);
    return fail(envelope_errc::malformed, "message: expected exactly " + names);
  }
  const auto* addr_text = message->at("address").if_string();
  if (addr_text == nullptr)
    return fail(envelope_errc::malformed, "message.address: expected an address string");
  auto stated = parse_address_strict(*addr_text, "message.address");
  if (!stated)
    return fail(envelope_errc::malformed, stated.err().message);
  const auto issued = read_uint(message->at("issuedAt"));
  if (!issued)
    return fail(envelope_errc::malformed, "message.issuedAt: expected an unsigned integer");
  message_v2 m;
  m.signer = *stated;
  if (version == 2) {
    for (const auto& f : fields) {
      if (f.type == "bytes32") {
        auto v = read_bytes32(message->at(f.name));
        if (!v)
          return fail(envelope_errc::malformed, "message." + std::string(f.name) + ": expected bytes32 (0x + 64 hex)");
        (f.name == "nonce" ? m.nonce : f.name == "account" ? m.account : m.request.body_hash) = *v;
      } else if (f.type == "string") {
        const auto* text = message->at(f.name).if_string();
        if (text == nullptr)
          return fail(envelope_errc::malformed, "message." + std::string(f.name) + ": expected a string");
        (f.name == "method" ? m.request.method : m.request.path) = std::string(*text);
      }
    }
  }

  // The issuedAt window bounds how long a signature lives (and how long a nonce is kept).
  // Written without overflow.
  const bool too_old = want.now > want.max_skew && *issued < u256{want.now - want.max_skew};
  const bool too_new = *issued > u256{want.now} + u256{want.max_skew};
  if (too_old || too_new)
    return fail(envelope_errc::expired, "message.issuedAt: " + issued->to_string() + " is outside now (" +
                                            std::to_string(want.now) + ") ± " + std::to_string(want.max_skew) + " s");
  // Within the window issuedAt fits 64 bits.
  m.issued_at = issued->w[0];

  if (version == 2 && declared_kind == kind::convert_account && (!want.account || m.account != *want.account))
    return fail(envelope_errc::account_mismatch, "message.account: this envelope converts account " + hex32(m.account) +
                                                     (want.account ? ", not this one (" + hex32(*want.account) + ")"
                                                                   : std::string(", no account given")));
  if (version == 2 && declared_kind == kind::billing_auth) {
    if (!want.request)
      return fail(envelope_errc::request_mismatch, "message: no request to check this BillingAuth against");
    if (m.request.method != want.request->method || m.request.path != want.request->path)
      return fail(envelope_errc::request_mismatch, "message: signed for " + m.request.method + " " + m.request.path +
                                                       ", not this request (" + want.request->method + " " +
                                                       want.request->path + ")");
    if (m.request.body_hash != want.request->body_hash)
      return fail(envelope_errc::request_mismatch,
                  "message.bodyHash: signed for another body (keccak256 of this one is " +
                      hex32(want.request->body_hash) + ")");
  }

  auto sig = codec::hex::decode_prefixed(signature_hex, "signature");
  if (!sig)
    return fail(envelope_errc::signature_malformed, sig.err().message);
  if (sig->size() != 65)
    return fail(envelope_errc::signature_malformed, "signature: expected 65 bytes, got " + std::to_string(sig->size()));

  // Rule 5: plain ECDSA recover over the digest of the (now known canonical) envelope.
  const hash256 h = version == 1 ? digest(want.expected, *chain, *stated, *issued) : digest(want.expected, dep, m);
  auto signer = crypto::secp256k1::recover_address(h, *sig);
  if (!signer)
    return fail(envelope_errc::signature_malformed, signer.err().message);
  if (*signer != *stated)
    return fail(envelope_errc::signer_mismatch, "signature: signed by " + to_checksum_address(*signer) +
                                                    ", not message.address " + to_checksum_address(*stated));
  if (want.expected_signer && *signer != *want.expected_signer)
    return fail(envelope_errc::signer_mismatch, "signature: signed by " + to_checksum_address(*signer) + ", expected " +
                                                    to_checksum_address(*want.expected_signer));
  verified out;
  out.signer = *signer;
  out.version = version;
  out.issued_at = m.issued_at;
  if (version == 2 && declared_kind != kind::billing_auth)
    out.nonce = m.nonce;
  return out;
}

result<address> verify(std::string_view typed_data_json, std::string_view signature_hex, const expectation& want) {
  ENACT_TRY(const auto v, check(typed_data_json, signature_hex, want));
  return v.signer;
}

result<address> verify(const json::value& doc, size_t serialized_size, std::string_view signature_hex,
                       const expectation& want) {
  ENACT_TRY(const auto v, check(doc, serialized_size, signature_hex, want));
  return v.signer;
}

hash256 nonce_id(kind k, const verified& v) {
  std::string buf(primary_type_name(k));
  buf.append(reinterpret_cast<const char*>(v.signer.data()), v.signer.size());
  if (v.nonce)
    buf.append(reinterpret_cast<const char*>(v.nonce->data()), v.nonce->size());
  return crypto::keccak256(std::string_view(buf));
}

std::string encode_wallet_auth(const signed_envelope& env) { return codec::base64::encode(as_bytes(to_json(env))); }

result<std::pair<std::string, std::string>> decode_wallet_auth(std::string_view header) {
  if (header.size() > kMaxWalletAuthSize)
    return fail(envelope_errc::too_large, "X-Wallet-Auth: " + std::to_string(header.size()) + " characters, at most " +
                                              std::to_string(kMaxWalletAuthSize) + " allowed");
  auto raw = codec::base64::decode(header, "X-Wallet-Auth");
  if (!raw)
    return fail(envelope_errc::malformed, raw.err().message);
  std::error_code ec;
  json::value doc = json::parse(as_chars(*raw), ec);
  if (ec)
    return fail(envelope_errc::malformed, "X-Wallet-Auth: invalid JSON (" + ec.message() + ")");
  const auto* obj = doc.if_object();
  if (obj == nullptr || !has_exactly(*obj, {"typed_data", "signature"}) || !obj->at("typed_data").is_object() ||
      !obj->at("signature").is_string())
    return fail(envelope_errc::malformed, R"(X-Wallet-Auth: expected {"typed_data": object, "signature": string})");
  return std::pair<std::string, std::string>(json::serialize(obj->at("typed_data")),
                                             std::string(obj->at("signature").get_string()));
}

}  // namespace enact::eip712::envelope
