// SPDX-License-Identifier: Apache-2.0
// The wallet-proof envelope: canonical shape checks on the JSON as received, then the EIP-712
// digest of the canonical shape and an ECDSA recover (core-api spec, "Typed-data envelope" rule 5).
// Once the shape is known to be canonical the digest needs no generic encoder: it is
// crypto::keccak256(0x1901 ‖ domainSeparator ‖ structHash) over constants and the four values; the unit
// tests check it against eip712::digest and the interop vectors.
#include "enact/eip712/envelope.hpp"

#include <cmath>
#include <cstring>
#include <initializer_list>

#include "enact/codec/base64.hpp"
#include "enact/codec/hex.hpp"
#include "enact/u256.hpp"
#include "enact/address.hpp"
#include "enact/crypto/keccak.hpp"
#include "enact/crypto/random.hpp"
#include "enact/crypto/secp256k1.hpp"
#include "enact/eip712/typed_data.hpp"

namespace json = boost::json;

namespace enact::eip712::envelope {
namespace {

constexpr std::string_view kNames[] = {"CreateWallet", "ConvertAccount", "AddUsageApiKey", "BillingAuth"};
constexpr kind kKinds[] = {kind::create_wallet, kind::convert_account, kind::add_usage_api_key, kind::billing_auth};

struct field {
  std::string_view name;
  std::string_view type;
};
// core-api spec, Typed-data envelope: the member lists, in this order.
constexpr field kDomainFields[] = {{"name", "string"}, {"version", "string"}, {"chainId", "uint256"}};
constexpr field kMessageFields[] = {{"address", "address"}, {"issuedAt", "uint256"}};
// docs/protocol.md §2 "Envelope version 2": the domain names the registry, each message what it authorizes.
constexpr field kDomainFields2[] = {
    {"name", "string"}, {"version", "string"}, {"chainId", "uint256"}, {"verifyingContract", "address"}};
constexpr field kMintFields2[] = {{"address", "address"}, {"issuedAt", "uint256"}, {"nonce", "bytes32"}};
constexpr field kConvertFields2[] = {
    {"address", "address"}, {"account", "bytes32"}, {"issuedAt", "uint256"}, {"nonce", "bytes32"}};
constexpr field kBillingFields2[] = {
    {"address", "address"}, {"method", "string"}, {"path", "string"}, {"bodyHash", "bytes32"}, {"issuedAt", "uint256"}};

std::span<const field> message_fields(kind k, unsigned version) {
  if (version == 1)
    return kMessageFields;
  switch (k) {
    case kind::convert_account:
      return kConvertFields2;
    case kind::billing_auth:
      return kBillingFields2;
    default:
      return kMintFields2;
  }
}

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

constexpr uint64_t kMaxSafeInteger = (uint64_t{1} << 53) - 1;

json::value number_or_string(uint64_t v) {
  // JavaScript reads larger JSON numbers inexactly; a wallet would sign a different value.
  if (v <= kMaxSafeInteger)
    return json::value(v);
  return json::value(std::to_string(v));
}

std::string hex32(const hash256& h) { return codec::hex::encode_prefixed(bytes_view(h.data(), h.size())); }

json::array member_list(std::span<const field> fields) {
  json::array out;
  for (const auto& f : fields)
    out.push_back(json::object{{"name", f.name}, {"type", f.type}});
  return out;
}

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

result<signed_envelope> sign(kind k, uint64_t chain_id, const secret& key, uint64_t issued_at) {
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

result<signed_envelope> sign(kind k, const deployment& d, message_v2 m, const secret& key) {
  ENACT_TRY(const auto pub, crypto::secp256k1::public_key_of(key));
  m.signer = crypto::secp256k1::to_address(pub);
  ENACT_TRY(const auto sig, crypto::secp256k1::sign(digest(k, d, m), key));
  return signed_envelope{build(k, d, m), codec::hex::encode_prefixed(sig.to_bytes())};
}

result<signed_envelope> sign_v2(kind k, const deployment& d, const secret& key, uint64_t issued_at,
                                const hash256& account) {
  message_v2 m;
  m.issued_at = issued_at;
  m.account = account;
  crypto::random_bytes(m.nonce);
  return sign(k, d, std::move(m), key);
}

result<signed_envelope> sign_billing(const deployment& d, const secret& key, uint64_t issued_at,
                                     request_binding request) {
  message_v2 m;
  m.issued_at = issued_at;
  m.request = std::move(request);
  return sign(kind::billing_auth, d, std::move(m), key);
}

std::string to_json(const signed_envelope& env) {
  return json::serialize(json::object{{"typed_data", env.typed_data}, {"signature", env.signature}});
}

namespace {

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
