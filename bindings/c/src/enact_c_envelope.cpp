// SPDX-License-Identifier: Apache-2.0
// The C API of the wallet-proof envelope (docs/protocol.md §2 "Typed-data envelope"): build, sign
// and verify, versions 1 and 2.
#include <chrono>
#include <cstring>
#include <optional>

#include "enact.h"
#include "enact/address.hpp"
#include "enact/codec/hex.hpp"
#include "enact/crypto/random.hpp"
#include "enact/eip712/envelope.hpp"
#include "entry_point.hpp"

namespace json = boost::json;
using namespace enact_c;

namespace {

// The envelope kind the argument `what` names.
enact::eip712::envelope::kind kind_of(std::string_view what, const char* primary_type) {
  if (primary_type != nullptr)
    if (const auto k = enact::eip712::envelope::kind_from_name(primary_type))
      return *k;
  refuse(ENACT_ERR_INVALID_ARGUMENT, std::string(what) + ": expected CreateWallet, ConvertAccount, AddUsageApiKey " +
                                         "or BillingAuth, got " +
                                         (primary_type ? "'" + std::string(primary_type) + "'" : std::string("NULL")));
}

uint64_t unix_now() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count());
}

enact::hash256 hash_from(const uint8_t* h32) {
  enact::hash256 h{};
  std::memcpy(h.data(), h32, h.size());
  return h;
}

std::string_view body_of(const uint8_t* body, size_t body_len) {
  if (body == nullptr && body_len != 0)
    refuse(ENACT_ERR_INVALID_ARGUMENT, "body: NULL with a non-zero length");
  return body != nullptr ? std::string_view(reinterpret_cast<const char*>(body), body_len) : std::string_view();
}

// The deployment and message of a version 2 envelope from the arguments of build_v2 / sign_v2:
// each kind takes its own members and refuses the others, so that a member given in the belief
// that it is signed never goes unsigned.
struct v2_arguments {
  enact::eip712::envelope::deployment deployment;
  enact::eip712::envelope::message_v2 message;
};

v2_arguments v2_of(enact::eip712::envelope::kind k, uint64_t issued_at, uint64_t chain_id,
                   const char* verifying_contract, const uint8_t* nonce, const uint8_t* account, const char* method,
                   const char* path, const uint8_t* body, size_t body_len) {
  using enact::eip712::envelope::kind;
  require(verifying_contract, "verifying_contract");
  v2_arguments out;
  out.deployment = {chain_id, enact::parse_address_strict(verifying_contract, "verifying_contract").value()};
  out.message.issued_at = issued_at;
  const std::string name(enact::eip712::envelope::primary_type_name(k));
  const auto absent = [&](const void* arg, const char* what) {
    if (arg != nullptr)
      refuse(ENACT_ERR_INVALID_ARGUMENT, std::string(what) + ": a " + name + " does not carry it; pass NULL");
  };
  if (k == kind::convert_account) {
    require(account, "account");
    out.message.account = hash_from(account);
  } else {
    absent(account, "account");
  }
  if (k == kind::billing_auth) {
    absent(nonce, "nonce");
    require(method, "method");
    require(path, "path");
    out.message.request = enact::eip712::envelope::bind_request(method, path, body_of(body, body_len));
  } else {
    absent(method, "method");
    absent(path, "path");
    absent(body, "body");
    if (nonce != nullptr)
      out.message.nonce = hash_from(nonce);
    else
      enact::crypto::random_bytes(out.message.nonce);
  }
  return out;
}

}  // namespace

extern "C" {

int enact_envelope_build(const char* primary_type, const char* address, uint64_t issued_at, uint64_t chain_id,
                         char** out_json) {
  return guarded([&] {
    output(out_json, "out_json");
    const auto k = kind_of("primary_type", primary_type);
    require(address, "address");
    const auto signer = enact::parse_address_strict(address, "address").value();
    *out_json = new_string(json::serialize(enact::eip712::envelope::build(k, chain_id, signer, issued_at)));
    return ENACT_OK;
  });
}

int enact_envelope_sign(const char* primary_type, const uint8_t private_key[32], uint64_t issued_at, uint64_t chain_id,
                        char** out_json) {
  return guarded([&] {
    output(out_json, "out_json");
    const auto k = kind_of("primary_type", primary_type);
    require(private_key, "private_key");
    const auto env = enact::eip712::envelope::sign(k, chain_id, key_from(private_key), issued_at).value();
    *out_json = new_string(enact::eip712::envelope::to_json(env));
    return ENACT_OK;
  });
}

int enact_envelope_build_v2(const char* primary_type, const char* address, uint64_t issued_at, uint64_t chain_id,
                            const char* verifying_contract, const uint8_t nonce[32], const uint8_t account[32],
                            const char* method, const char* path, const uint8_t* body, size_t body_len,
                            char** out_json) {
  return guarded([&] {
    output(out_json, "out_json");
    const auto k = kind_of("primary_type", primary_type);
    require(address, "address");
    const auto signer = enact::parse_address_strict(address, "address").value();
    auto [d, m] = v2_of(k, issued_at, chain_id, verifying_contract, nonce, account, method, path, body, body_len);
    m.signer = signer;
    *out_json = new_string(json::serialize(enact::eip712::envelope::build(k, d, m)));
    return ENACT_OK;
  });
}

int enact_envelope_sign_v2(const char* primary_type, const uint8_t private_key[32], uint64_t issued_at,
                           uint64_t chain_id, const char* verifying_contract, const uint8_t nonce[32],
                           const uint8_t account[32], const char* method, const char* path, const uint8_t* body,
                           size_t body_len, char** out_json) {
  return guarded([&] {
    output(out_json, "out_json");
    const auto k = kind_of("primary_type", primary_type);
    require(private_key, "private_key");
    auto [d, m] = v2_of(k, issued_at, chain_id, verifying_contract, nonce, account, method, path, body, body_len);
    const auto env = enact::eip712::envelope::sign(k, d, std::move(m), key_from(private_key)).value();
    *out_json = new_string(enact::eip712::envelope::to_json(env));
    return ENACT_OK;
  });
}

int enact_envelope_verify_v2(const char* typed_data_json, const char* signature_hex, const char* expected_primary_type,
                             uint64_t chain_id, const char* verifying_contract, const uint8_t account[32],
                             const char* method, const char* path, const uint8_t* body, size_t body_len, int accept_v1,
                             uint64_t now, uint64_t max_skew, const char* expected_signer,
                             char out_address[ENACT_ADDRESS_SIZE], int* out_version, uint8_t out_nonce[32]) {
  return guarded([&] {
    output(out_address, "out_address");
    if (out_version != nullptr)
      *out_version = 0;
    if (out_nonce != nullptr)
      std::memset(out_nonce, 0, 32);
    require(typed_data_json, "typed_data_json");
    require(signature_hex, "signature_hex");
    enact::eip712::envelope::expectation want{};
    want.expected = kind_of("expected_primary_type", expected_primary_type);
    want.chain_id = chain_id;
    require(verifying_contract, "verifying_contract");
    want.verifying_contract = enact::parse_address_strict(verifying_contract, "verifying_contract").value();
    if (account != nullptr)
      want.account = hash_from(account);
    if ((method == nullptr) != (path == nullptr))
      return invalid("method and path: give both (the request a BillingAuth authorizes) or neither");
    if (method != nullptr)
      want.request = enact::eip712::envelope::bind_request(method, path, body_of(body, body_len));
    else if (body != nullptr)
      return invalid("body: given without method and path");
    want.accept_v1 = accept_v1 != 0;
    want.now = now != 0 ? now : unix_now();
    want.max_skew = max_skew != 0 ? max_skew : enact::eip712::envelope::kDefaultMaxSkew;
    if (expected_signer != nullptr)
      want.expected_signer = enact::parse_address_strict(expected_signer, "expected_signer").value();
    const auto v = enact::eip712::envelope::check(typed_data_json, signature_hex, want).value();
    copy_fixed(enact::to_checksum_address(v.signer), out_address, ENACT_ADDRESS_SIZE);
    if (out_version != nullptr)
      *out_version = static_cast<int>(v.version);
    if (out_nonce != nullptr && v.nonce)
      std::memcpy(out_nonce, v.nonce->data(), 32);
    return ENACT_OK;
  });
}

int enact_envelope_verify(const char* typed_data_json, const char* signature_hex, const char* expected_primary_type,
                          uint64_t chain_id, uint64_t now, uint64_t max_skew, const char* expected_signer,
                          char out_address[ENACT_ADDRESS_SIZE]) {
  return guarded([&] {
    output(out_address, "out_address");
    require(typed_data_json, "typed_data_json");
    require(signature_hex, "signature_hex");
    enact::eip712::envelope::expectation want{};
    want.expected = kind_of("expected_primary_type", expected_primary_type);
    want.chain_id = chain_id;
    want.now = now != 0 ? now : unix_now();
    want.max_skew = max_skew != 0 ? max_skew : enact::eip712::envelope::kDefaultMaxSkew;
    if (expected_signer != nullptr)
      want.expected_signer = enact::parse_address_strict(expected_signer, "expected_signer").value();
    const auto signer = enact::eip712::envelope::verify(typed_data_json, signature_hex, want).value();
    copy_fixed(enact::to_checksum_address(signer), out_address, ENACT_ADDRESS_SIZE);
    return ENACT_OK;
  });
}

}  // extern "C"
