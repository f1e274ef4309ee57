// SPDX-License-Identifier: Apache-2.0
// The wallet-proof envelope, built and signed (docs/protocol.md §2 "Typed-data envelope"). Its shape
// being fixed, the digest needs no generic encoder: keccak256(0x1901 ‖ domainSeparator ‖ structHash)
// over constants and the values; the unit tests check it against eip712::digest and the interop vectors.
#include "enact/eip712/envelope.hpp"

#include <cstring>

#include "enact/address.hpp"
#include "enact/codec/hex.hpp"
#include "enact/crypto/keccak.hpp"
#include "enact/crypto/random.hpp"
#include "enact/crypto/secp256k1.hpp"
#include "enact/u256.hpp"
#include "envelope_fields.hpp"

namespace json = boost::json;

namespace enact::eip712::envelope {
using namespace detail;
namespace {

constexpr std::string_view kNames[] = {"CreateWallet", "ConvertAccount", "AddUsageApiKey", "BillingAuth"};
constexpr kind kKinds[] = {kind::create_wallet, kind::convert_account, kind::add_usage_api_key, kind::billing_auth};

/// "Primary(type name,…)", the EIP-712 encodeType of a struct.
std::string encode_type(std::string_view name, std::span<const field> fields) {
  std::string out(name);
  out += '(';
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i != 0)
      out += ',';
    out.append(fields[i].type).append(" ").append(fields[i].name);
  }
  out += ')';
  return out;
}

json::value number_or_string(uint64_t v) {
  if (v <= kMaxSafeInteger)
    return json::value(v);
  return json::value(std::to_string(v));
}

json::array member_list(std::span<const field> fields) {
  json::array out;
  for (const auto& f : fields)
    out.push_back(json::object{{"name", f.name}, {"type", f.type}});
  return out;
}

/// The constant parts of the digest, hashed once.
struct digest_constants {
  hash256 domain_type_hash;  // crypto::keccak256("EIP712Domain(string name,string version,uint256 chainId)")
  hash256 name_hash;         // crypto::keccak256(kDomainName)
  hash256 version_hash;      // crypto::keccak256(kDomainVersion)
  hash256 struct_type_hash[std::size(kKinds)];  // crypto::keccak256("<Primary>(address address,uint256 issuedAt)")
  hash256 domain_type_hash2;                    // the same for version 2
  hash256 version2_hash;
  hash256 struct_type_hash2[std::size(kKinds)];
};

const digest_constants& constants() {
  static const digest_constants c = [] {
    digest_constants d{};
    d.domain_type_hash =
        crypto::keccak256(std::string_view("EIP712Domain(string name,string version,uint256 chainId)"));
    d.name_hash = crypto::keccak256(kDomainName);
    d.version_hash = crypto::keccak256(kDomainVersion);
    for (size_t i = 0; i < std::size(kNames); ++i)
      d.struct_type_hash[i] = crypto::keccak256(std::string(kNames[i]) + "(address address,uint256 issuedAt)");
    d.domain_type_hash2 = crypto::keccak256(std::string_view(encode_type("EIP712Domain", kDomainFields2)));
    d.version2_hash = crypto::keccak256(kDomainVersion2);
    for (size_t i = 0; i < std::size(kNames); ++i)
      d.struct_type_hash2[i] =
          crypto::keccak256(std::string_view(encode_type(kNames[i], message_fields(kKinds[i], 2))));
    return d;
  }();
  return c;
}

size_t kind_index(kind k) {
  for (size_t i = 0; i < std::size(kKinds); ++i)
    if (kKinds[i] == k)
      return i;
  return 0;
}

}  // namespace

hash256 digest(kind k, const u256& chain_id, const address& signer, const u256& issued_at) {
  const auto& c = constants();
  uint8_t buf[4 * 32];
  // domainSeparator = crypto::keccak256(typeHash ‖ keccak(name) ‖ keccak(version) ‖ chainId)
  std::memcpy(buf, c.domain_type_hash.data(), 32);
  std::memcpy(buf + 32, c.name_hash.data(), 32);
  std::memcpy(buf + 64, c.version_hash.data(), 32);
  chain_id.store_be(buf + 96);
  const hash256 domain_separator = crypto::keccak256(bytes_view(buf, 128));
  // structHash = crypto::keccak256(typeHash ‖ address left-padded to 32 bytes ‖ issuedAt)
  std::memcpy(buf, c.struct_type_hash[kind_index(k)].data(), 32);
  std::memset(buf + 32, 0, 12);
  std::memcpy(buf + 44, signer.data(), 20);
  issued_at.store_be(buf + 64);
  const hash256 struct_hash = crypto::keccak256(bytes_view(buf, 96));
  uint8_t outer[66] = {0x19, 0x01};
  std::memcpy(outer + 2, domain_separator.data(), 32);
  std::memcpy(outer + 34, struct_hash.data(), 32);
  return crypto::keccak256(bytes_view(outer, sizeof outer));
}

std::string_view primary_type_name(kind k) noexcept {
  for (size_t i = 0; i < std::size(kKinds); ++i)
    if (kKinds[i] == k)
      return kNames[i];
  return {};
}

std::optional<kind> kind_from_name(std::string_view name) noexcept {
  for (size_t i = 0; i < std::size(kNames); ++i)
    if (kNames[i] == name)
      return kKinds[i];
  return std::nullopt;
}

json::object build(kind k, uint64_t chain_id, const address& signer, uint64_t issued_at) {
  const std::string_view primary = primary_type_name(k);
  json::object types;
  types.emplace("EIP712Domain", member_list(kDomainFields));
  types.emplace(primary, member_list(kMessageFields));
  return json::object{
      {"types", std::move(types)},
      {"primaryType", primary},
      {"domain",
       json::object{{"name", kDomainName}, {"version", kDomainVersion}, {"chainId", number_or_string(chain_id)}}},
      {"message", json::object{{"address", to_checksum_address(signer)}, {"issuedAt", number_or_string(issued_at)}}}};
}

result<signed_envelope> sign(kind k, uint64_t chain_id, const Secret& key, uint64_t issued_at) {
  ENACT_TRY(const auto pub, crypto::secp256k1::public_key_of(key));
  signed_envelope env{build(k, chain_id, crypto::secp256k1::to_address(pub), issued_at), {}};
  const hash256 h = digest(k, u256{chain_id}, crypto::secp256k1::to_address(pub), u256{issued_at});
  ENACT_TRY(const auto sig, crypto::secp256k1::sign(h, key));
  env.signature = codec::hex::encode_prefixed(sig.to_bytes());
  return env;
}

request_binding bind_request(std::string_view method, std::string_view path, std::string_view body) {
  return request_binding{std::string(method), std::string(path), crypto::keccak256(body)};
}

hash256 digest(kind k, const deployment& d, const message_v2& m) {
  const auto& c = constants();
  // domainSeparator = keccak256(typeHash ‖ keccak(name) ‖ keccak(version) ‖ chainId ‖ verifyingContract)
  uint8_t buf[6 * 32];
  std::memcpy(buf, c.domain_type_hash2.data(), 32);
  std::memcpy(buf + 32, c.name_hash.data(), 32);
  std::memcpy(buf + 64, c.version2_hash.data(), 32);
  u256{d.chain_id}.store_be(buf + 96);
  std::memset(buf + 128, 0, 12);
  std::memcpy(buf + 140, d.verifying_contract.data(), 20);
  const hash256 domain_separator = crypto::keccak256(bytes_view(buf, 160));
  // structHash = keccak256(typeHash ‖ each member encoded: address padded, strings hashed, words as they are)
  size_t n = 0;
  auto put = [&](const uint8_t* p) {
    std::memcpy(buf + n, p, 32);
    n += 32;
  };
  put(c.struct_type_hash2[kind_index(k)].data());
  std::memset(buf + n, 0, 12);
  std::memcpy(buf + n + 12, m.signer.data(), 20);
  n += 32;
  uint8_t issued[32];
  u256{m.issued_at}.store_be(issued);
  switch (k) {
    case kind::convert_account:
      put(m.account.data());
      put(issued);
      put(m.nonce.data());
      break;
    case kind::billing_auth:
      put(crypto::keccak256(std::string_view(m.request.method)).data());
      put(crypto::keccak256(std::string_view(m.request.path)).data());
      put(m.request.body_hash.data());
      put(issued);
      break;
    default:
      put(issued);
      put(m.nonce.data());
      break;
  }
  const hash256 struct_hash = crypto::keccak256(bytes_view(buf, n));
  uint8_t outer[66] = {0x19, 0x01};
  std::memcpy(outer + 2, domain_separator.data(), 32);
  std::memcpy(outer + 34, struct_hash.data(), 32);
  return crypto::keccak256(bytes_view(outer, sizeof outer));
}

json::object build(kind k, const deployment& d, const message_v2& m) {
  const std::string_view primary = primary_type_name(k);
  json::object types;
  types.emplace("EIP712Domain", member_list(kDomainFields2));
  types.emplace(primary, member_list(message_fields(k, 2)));
  json::object message{{"address", to_checksum_address(m.signer)}};
  switch (k) {
    case kind::convert_account:
      message.emplace("account", hex32(m.account));
      message.emplace("issuedAt", number_or_string(m.issued_at));
      message.emplace("nonce", hex32(m.nonce));
      break;
    case kind::billing_auth:
      message.emplace("method", m.request.method);
      message.emplace("path", m.request.path);
      message.emplace("bodyHash", hex32(m.request.body_hash));
      message.emplace("issuedAt", number_or_string(m.issued_at));
      break;
    default:
      message.emplace("issuedAt", number_or_string(m.issued_at));
      message.emplace("nonce", hex32(m.nonce));
      break;
  }
  return json::object{{"types", std::move(types)},
                      {"primaryType", primary},
                      {"domain", json::object{{"name", kDomainName},
                                              {"version", kDomainVersion2},
                                              {"chainId", number_or_string(d.chain_id)},
                                              {"verifyingContract", to_checksum_address(d.verifying_contract)}}},
                      {"message", std::move(message)}};
}

result<signed_envelope> sign(kind k, const deployment& d, message_v2 m, const Secret& key) {
  ENACT_TRY(const auto pub, crypto::secp256k1::public_key_of(key));
  m.signer = crypto::secp256k1::to_address(pub);
  ENACT_TRY(const auto sig, crypto::secp256k1::sign(digest(k, d, m), key));
  return signed_envelope{build(k, d, m), codec::hex::encode_prefixed(sig.to_bytes())};
}

result<signed_envelope> sign_v2(kind k, const deployment& d, const Secret& key, uint64_t issued_at,
                                const hash256& account) {
  message_v2 m;
  m.issued_at = issued_at;
  m.account = account;
  crypto::random_bytes(m.nonce);
  return sign(k, d, std::move(m), key);
}

result<signed_envelope> sign_billing(const deployment& d, const Secret& key, uint64_t issued_at,
                                     request_binding request) {
  message_v2 m;
  m.issued_at = issued_at;
  m.request = std::move(request);
  return sign(kind::billing_auth, d, std::move(m), key);
}

std::string to_json(const signed_envelope& env) {
  return json::serialize(json::object{{"typed_data", env.typed_data}, {"signature", env.signature}});
}
}  // namespace enact::eip712::envelope
