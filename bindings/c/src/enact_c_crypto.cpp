// SPDX-License-Identifier: Apache-2.0
// The C API's hashing, EIP-712 typed data, accounts, EIP-191 messages and PKP derivation.
#include <cstring>

#include "enact.h"
#include "enact/address.hpp"
#include "enact/codec/hex.hpp"
#include "enact/crypto/eip191.hpp"
#include "enact/crypto/keccak.hpp"
#include "enact/crypto/secp256k1.hpp"
#include "enact/eip712/typed_data.hpp"
#include "enact/pkp/pkp.hpp"
#include "entry_point.hpp"

using namespace enact_c;

namespace {

// The typed-data document of the argument typed_data_json.
enact::eip712::typed_data typed_data_of(const char* typed_data_json) {
  require(typed_data_json, "typed_data_json");
  return enact::eip712::parse(typed_data_json).value();
}

}  // namespace

extern "C" {

int enact_keccak256(const uint8_t* data, size_t len, uint8_t out[32]) {
  return guarded([&] {
    require(out, "out");
    if (data == nullptr && len != 0)
      return invalid("data: NULL with a non-zero length");
    const enact::hash256 h = enact::crypto::keccak256(enact::bytes_view(data, data ? len : 0));
    std::memcpy(out, h.data(), h.size());
    return ENACT_OK;
  });
}

int enact_typed_data_hash(const char* typed_data_json, uint8_t out[32]) {
  return guarded([&] {
    require(out, "out");
    std::memset(out, 0, 32);
    const auto digest = enact::eip712::digest(typed_data_of(typed_data_json)).value();
    std::memcpy(out, digest.data(), digest.size());
    return ENACT_OK;
  });
}

int enact_typed_data_sign(const char* typed_data_json, const uint8_t private_key[32],
                          char out_signature[ENACT_SIGNATURE_HEX_SIZE]) {
  return guarded([&] {
    output(out_signature, "out_signature");
    require(private_key, "private_key");
    const auto td = typed_data_of(typed_data_json);
    const auto sig = enact::eip712::sign(td, key_from(private_key)).value();
    copy_fixed(enact::codec::hex::encode_prefixed(sig.to_bytes()), out_signature, ENACT_SIGNATURE_HEX_SIZE);
    return ENACT_OK;
  });
}

int enact_typed_data_recover(const char* typed_data_json, const char* signature_hex,
                             char out_address[ENACT_ADDRESS_SIZE]) {
  return guarded([&] {
    output(out_address, "out_address");
    require(signature_hex, "signature_hex");
    const auto td = typed_data_of(typed_data_json);
    const auto sig =
        value_or_refuse(enact::codec::hex::decode_prefixed(signature_hex, "signature"), ENACT_ERR_SIGNATURE_INVALID);
    copy_fixed(enact::to_checksum_address(enact::eip712::recover(td, sig).value()), out_address, ENACT_ADDRESS_SIZE);
    return ENACT_OK;
  });
}

// ---- accounts and EIP-191 messages ----------------------------------------------------------------

int enact_private_key_address(const uint8_t private_key[32], char out_address[ENACT_ADDRESS_SIZE]) {
  return guarded([&] {
    output(out_address, "out_address");
    require(private_key, "private_key");
    const auto pub = enact::crypto::secp256k1::public_key_of(key_from(private_key)).value();
    copy_fixed(enact::to_checksum_address(enact::crypto::secp256k1::to_address(pub)), out_address, ENACT_ADDRESS_SIZE);
    return ENACT_OK;
  });
}

int enact_message_sign(const uint8_t* message, size_t len, const uint8_t private_key[32],
                       char out_signature[ENACT_SIGNATURE_HEX_SIZE]) {
  return guarded([&] {
    output(out_signature, "out_signature");
    if (message == nullptr && len != 0)
      return invalid("message: NULL with a non-zero length");
    require(private_key, "private_key");
    const auto digest = enact::crypto::personal_message_hash(enact::bytes_view(message, message ? len : 0));
    const auto sig = enact::crypto::secp256k1::sign(digest, key_from(private_key)).value();
    copy_fixed(enact::codec::hex::encode_prefixed(sig.to_bytes()), out_signature, ENACT_SIGNATURE_HEX_SIZE);
    return ENACT_OK;
  });
}

int enact_message_recover(const uint8_t* message, size_t len, const char* signature_hex,
                          char out_address[ENACT_ADDRESS_SIZE]) {
  return guarded([&] {
    output(out_address, "out_address");
    if (message == nullptr && len != 0)
      return invalid("message: NULL with a non-zero length");
    require(signature_hex, "signature_hex");
    const auto digest = enact::crypto::personal_message_hash(enact::bytes_view(message, message ? len : 0));
    const auto sig =
        value_or_refuse(enact::codec::hex::decode_prefixed(signature_hex, "signature"), ENACT_ERR_SIGNATURE_INVALID);
    copy_fixed(enact::to_checksum_address(enact::crypto::secp256k1::recover_address(digest, sig).value()), out_address,
               ENACT_ADDRESS_SIZE);
    return ENACT_OK;
  });
}

int enact_pkp_account_wallet_address(const uint8_t root_key[32], const uint8_t account_hash[32],
                                     const uint8_t derivation_path[32], char out_address[ENACT_ADDRESS_SIZE]) {
  return guarded([&] {
    output(out_address, "out_address");
    require(root_key, "root_key");
    require(account_hash, "account_hash");
    require(derivation_path, "derivation_path");
    enact::pkp::account_hash account{};
    std::memcpy(account.data(), account_hash, account.size());
    enact::pkp::derivation_path path{};
    std::memcpy(path.data(), derivation_path, path.size());
    const auto wallet = enact::pkp::wallet_address(key_from(root_key), account, path).value();
    copy_fixed(enact::to_checksum_address(wallet), out_address, ENACT_ADDRESS_SIZE);
    return ENACT_OK;
  });
}

int enact_pkp_api_mode_path(const uint8_t api_key_hash[32], uint64_t index, uint8_t out_path[32]) {
  return guarded([&] {
    require(out_path, "out_path");
    require(api_key_hash, "api_key_hash");
    enact::hash256 key_hash{};
    std::memcpy(key_hash.data(), api_key_hash, key_hash.size());
    const enact::pkp::derivation_path path = enact::pkp::api_mode_path(key_hash, index);
    std::memcpy(out_path, path.data(), path.size());
    return ENACT_OK;
  });
}

}  // extern "C"
