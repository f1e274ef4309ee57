// SPDX-License-Identifier: Apache-2.0
// The PKP half both backends share (internal to server/tee): every key is derived from one 32-byte
// root key by the rules of docs/protocol.md §1 (enact::pkp). The backends differ only in where the root key
// comes from — a file of the data directory (simulated) or the guest agent's GetKey (dstack) —
// and in how they attest.
#pragma once

#include <utility>

#include "enact/codec/base64.hpp"
#include "enact/crypto/aes_gcm.hpp"
#include "enact/crypto/keccak.hpp"
#include "enact/secret.hpp"
#include "enact/pkp/pkp.hpp"
#include "tee/tee.hpp"

namespace enact::tee::detail {

class pkp_tee : public tee {
 public:
  explicit pkp_tee(Secret root) : root_(std::move(root)) {}

  result<address> wallet_address(const hash256& account, const hash256& path) const override {
    return pkp::wallet_address(root_, account, path);
  }

  result<crypto::secp256k1::signature> sign_digest(const hash256& account, const hash256& path,
                                                   const hash256& digest) const override {
    ENACT_TRY(const Secret key, pkp::signing_key(root_, account, path));
    return crypto::secp256k1::sign(digest, key);
  }

  result<crypto::secp256k1::public_key> public_key(const hash256& account, const hash256& path) const override {
    ENACT_TRY(const Secret key, pkp::signing_key(root_, account, path));
    return crypto::secp256k1::public_key_of(key);
  }

  result<crypto::ed25519::public_key> ed25519_public_key(const hash256& account, const hash256& path) const override {
    return pkp::ed25519_public_key(root_, account, path);
  }

  result<crypto::ed25519::signature> sign_ed25519(const hash256& account, const hash256& path,
                                                  bytes_view message) const override {
    ENACT_TRY(const Secret seed, pkp::ed25519_seed(root_, account, path));
    return crypto::ed25519::sign(message, seed);
  }

  result<bytes> encrypt(const hash256& account, const hash256& path, bytes_view plaintext) const override {
    ENACT_TRY(const Secret key, pkp::symmetric_key(root_, account, path));
    return crypto::aes_gcm::encrypt(key, plaintext);
  }

  result<bytes> decrypt(const hash256& account, const hash256& path, bytes_view sealed) const override {
    ENACT_TRY(const Secret key, pkp::symmetric_key(root_, account, path));
    return crypto::aes_gcm::decrypt(key, sealed);
  }

  result<Secret> usage_key(const hash256& account, const hash256& path) const override {
    return pkp::usage_key(root_, account, path);
  }

  result<hash256> pkp_key_usage_hash(const hash256& account, const hash256& path) const override {
    ENACT_TRY(const Secret key, pkp::signing_key(root_, account, path));
    std::string text = codec::base64::encode(key.view());
    const wipe_on_exit wipe(text);
    return crypto::keccak256(std::string_view(text));
  }

  result<Secret> server_signing_key(std::string_view purpose) const override {
    return pkp::server_signing_key(root_, purpose);
  }

  result<address> server_address(std::string_view purpose) const override {
    ENACT_TRY(const Secret key, pkp::server_signing_key(root_, purpose));
    ENACT_TRY(const auto pub, crypto::secp256k1::public_key_of(key));
    return crypto::secp256k1::to_address(pub);
  }

  result<bytes> server_seal(std::string_view purpose, bytes_view plaintext) const override {
    ENACT_TRY(const Secret key, pkp::server_key(root_, purpose));
    return crypto::aes_gcm::encrypt(key, plaintext);
  }

  result<bytes> server_unseal(std::string_view purpose, bytes_view sealed) const override {
    ENACT_TRY(const Secret key, pkp::server_key(root_, purpose));
    return crypto::aes_gcm::decrypt(key, sealed);
  }

  result<hash256> server_identifier(std::string_view purpose) const override {
    ENACT_TRY(const Secret key, pkp::server_key(root_, purpose));
    return crypto::keccak256(key.view());
  }

  result<address> legacy_wallet_address(const hash256& path) const override {
    return pkp::legacy_wallet_address(root_, path);
  }

 private:
  Secret root_;
};

}  // namespace enact::tee::detail
