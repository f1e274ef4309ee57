// SPDX-License-Identifier: Apache-2.0
// PKP key derivation (docs/protocol.md §1). The HKDF info buffers hold only public data (a label, the
// account hash and the path); the root key and every derived key stay inside Secrets.
#include "enact/pkp/pkp.hpp"

#include <algorithm>
#include <array>
#include <string>

#include "enact/codec/base58.hpp"
#include "enact/crypto/hkdf.hpp"
#include "enact/crypto/keccak.hpp"
#include "enact/crypto/random.hpp"
#include "enact/crypto/secp256k1.hpp"

namespace enact::pkp {
namespace {

constexpr size_t kRootKeySize = 32;
constexpr size_t kDerivedKeySize = 32;
constexpr size_t kMaxPurpose = 64;

result<void> check_root(const Secret& root) {
  if (root.size() != kRootKeySize)
    return fail(pkp_errc::bad_root_key, "root key: must be 32 bytes, got " + std::to_string(root.size()));
  return {};
}

result<void> check_purpose(std::string_view purpose) {
  if (purpose.empty() || purpose.size() > kMaxPurpose)
    return fail(pkp_errc::bad_purpose,
                "server key purpose: must be 1..64 bytes, got " + std::to_string(purpose.size()));
  return {};
}

/// label ‖ account ‖ path, with room for one optional counter byte.
bytes info_for(std::string_view label, const account_hash& account, const derivation_path& path) {
  bytes info;
  info.reserve(label.size() + account.size() + path.size() + 1);
  info.insert(info.end(), label.begin(), label.end());
  info.insert(info.end(), account.begin(), account.end());
  info.insert(info.end(), path.begin(), path.end());
  return info;
}

/// The first HKDF output under `salt` and `info` [‖ counter 1, 2, …] that is a valid secp256k1
/// scalar.
result<Secret> first_valid_scalar(const Secret& root, std::string_view salt, bytes info) {
  for (unsigned counter = 0; counter <= 255; ++counter) {
    if (counter == 1)
      info.push_back(1);
    if (counter > 1)
      info.back() = static_cast<uint8_t>(counter);
    ENACT_TRY(Secret key, crypto::hkdf_sha256(root.view(), as_bytes(salt), info, kDerivedKeySize));
    if (crypto::secp256k1::is_valid_private_key(key.view()))
      return key;
  }
  return fail(pkp_errc::no_valid_scalar, "signing key: no valid secp256k1 scalar derived");
}

result<address> address_of(const Secret& key) {
  ENACT_TRY(const crypto::secp256k1::public_key pub, crypto::secp256k1::public_key_of(key));
  return crypto::secp256k1::to_address(pub);
}

}  // namespace

result<Secret> signing_key(const Secret& root_key, const account_hash& account, const derivation_path& path) {
  ENACT_TRY_VOID(check_root(root_key));
  return first_valid_scalar(root_key, kSalt, info_for("sign", account, path));
}

result<Secret> usage_key(const Secret& root_key, const account_hash& account, const derivation_path& path) {
  ENACT_TRY_VOID(check_root(root_key));
  return first_valid_scalar(root_key, kUsageKeySalt, info_for("sign", account, path));
}

result<Secret> symmetric_key(const Secret& root_key, const account_hash& account, const derivation_path& path) {
  ENACT_TRY_VOID(check_root(root_key));
  return crypto::hkdf_sha256(root_key.view(), as_bytes(kSalt), info_for("sym", account, path), kDerivedKeySize);
}

result<Secret> ed25519_seed(const Secret& root_key, const account_hash& account, const derivation_path& path) {
  ENACT_TRY_VOID(check_root(root_key));
  return crypto::hkdf_sha256(root_key.view(), as_bytes(kSalt), info_for("ed25519", account, path), kDerivedKeySize);
}

result<crypto::ed25519::public_key> ed25519_public_key(const Secret& root_key, const account_hash& account,
                                                       const derivation_path& path) {
  ENACT_TRY(const Secret seed, ed25519_seed(root_key, account, path));
  return crypto::ed25519::public_key_of(seed);
}

std::string solana_address(const crypto::ed25519::public_key& key) { return codec::base58::encode(bytes_view(key)); }

result<address> wallet_address(const Secret& root_key, const account_hash& account, const derivation_path& path) {
  ENACT_TRY(const Secret key, signing_key(root_key, account, path));
  return address_of(key);
}

result<address> legacy_wallet_address(const Secret& root_key, const derivation_path& path) {
  ENACT_TRY_VOID(check_root(root_key));
  bytes info{'s', 'i', 'g', 'n'};
  info.insert(info.end(), path.begin(), path.end());
  ENACT_TRY(const Secret key, first_valid_scalar(root_key, kLegacySalt, std::move(info)));
  return address_of(key);
}

result<Secret> server_key(const Secret& root_key, std::string_view purpose) {
  ENACT_TRY_VOID(check_root(root_key));
  ENACT_TRY_VOID(check_purpose(purpose));
  return crypto::hkdf_sha256(root_key.view(), as_bytes(kServerSalt), as_bytes(purpose), kDerivedKeySize);
}

result<Secret> server_signing_key(const Secret& root_key, std::string_view purpose) {
  ENACT_TRY_VOID(check_root(root_key));
  ENACT_TRY_VOID(check_purpose(purpose));
  return first_valid_scalar(root_key, kServerSalt, bytes(purpose.begin(), purpose.end()));
}

account_hash canonical_account_hash(const address& admin) noexcept { return crypto::keccak256(bytes_view(admin)); }

derivation_path api_mode_path(const hash256& api_key_hash, uint64_t index) noexcept {
  std::array<uint8_t, 64> encoded{};
  std::copy(api_key_hash.begin(), api_key_hash.end(), encoded.begin());
  be::store64(encoded.data() + 56, index);
  return crypto::keccak256(bytes_view(encoded));
}

derivation_path random_path() {
  derivation_path p{};
  crypto::random_bytes(p);
  return p;
}

}  // namespace enact::pkp
