// SPDX-License-Identifier: Apache-2.0
// PKP (programmable key pair) derivation, docs/protocol.md §1. A PKP key belongs to one account: it is
// derived from the node's 32-byte root key, the owning account's 32-byte hash and the PKP's
// 32-byte derivation path, by HKDF-SHA256 with salt "enact/pkp/v2" and info
// label ‖ accountHash ‖ path — "sign" for the secp256k1 key (retried with a counter byte in the
// rare case the output is not a valid scalar), "sym" for the AES-256-GCM key, "ed25519" for the
// RFC 8032 seed of the PKP's Ed25519 key (its public key in base58 is the PKP's Solana address). The same path under
// another account is another key, so a (wallet, path) pair copied into a second account derives a
// different wallet there and never signs. Paths are crypto::keccak256(abi.encode(apiKeyHash, index)) for
// API-mode PKPs and random for signature-minted ones.
//
// The usage keys minted by signature are handed out, so they too have a domain of their own
// (salt "enact/usage-key/v1"): no key that left the server is ever a PKP's.
//
// The server's own keys (api_payer relayers, the trigger store's sealing key) live in a domain of
// their own: HKDF-SHA256(root, salt "enact/server/v1", info = a purpose label), which no account
// derivation can reach.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "enact/bytes.hpp"
#include "enact/crypto/ed25519.hpp"
#include "enact/secret.hpp"
#include "enact/error.hpp"
#include "enact/result.hpp"

namespace enact {

enum class pkp_errc {
  bad_root_key = 1,  // root key is not 32 bytes
  no_valid_scalar,   // no counter 0..255 gave a valid secp256k1 scalar (probability ~2^-120)
  bad_purpose,       // a server-key purpose label that is empty or over 64 bytes
};

}  // namespace enact
ENACT_ERRC(pkp_errc, pkp_category, "enact.pkp", "root key must be 32 bytes", "no valid signing scalar derived",
           "server key purpose must be 1..64 bytes")

namespace enact::pkp {

using derivation_path = hash256;
/// The owning account's hash (`apiKeyHash`, docs/protocol.md §1).
using account_hash = hash256;

/// HKDF salt of every PKP derivation (docs/protocol.md §1 "PKP signing key").
inline constexpr std::string_view kSalt = "enact/pkp/v2";
/// HKDF salt of the earlier, path-only rule (info "sign" ‖ path): only to recognise a data
/// directory whose wallets were derived under it (docs/protocol.md §1 "data from before").
inline constexpr std::string_view kLegacySalt = "enact/pkp/v1";
/// HKDF salt of the usage keys the server hands out (docs/protocol.md §1 "usage key by signature"):
/// a domain of their own, so a key that left the server is never a PKP's key.
inline constexpr std::string_view kUsageKeySalt = "enact/usage-key/v1";
/// HKDF salt of the server's own keys (docs/protocol.md §1 "server keys").
inline constexpr std::string_view kServerSalt = "enact/server/v1";

/// The PKP's secp256k1 private key: HKDF-SHA256(ikm = root, salt = kSalt,
/// info = "sign" ‖ account ‖ path [‖ counter], 32 bytes), counter 1, 2, … appended while the
/// output is 0 or >= n.
[[nodiscard]] result<Secret> signing_key(const Secret& root_key, const account_hash& account,
                                         const derivation_path& path);

/// The usage key `/add_usage_api_key_with_signature` mints at (`account`, `path`): as
/// `signing_key`, under salt kUsageKeySalt. It is handed out, so no PKP derivation may give it:
/// the wallet the admin registers for it never passes the owning-account check.
[[nodiscard]] result<Secret> usage_key(const Secret& root_key, const account_hash& account,
                                       const derivation_path& path);

/// The PKP's AES-256-GCM key: HKDF-SHA256(ikm = root, salt = kSalt,
/// info = "sym" ‖ account ‖ path, 32 bytes).
[[nodiscard]] result<Secret> symmetric_key(const Secret& root_key, const account_hash& account,
                                           const derivation_path& path);

/// The PKP's Ed25519 key as its RFC 8032 seed: HKDF-SHA256(ikm = root, salt = kSalt,
/// info = "ed25519" ‖ account ‖ path, 32 bytes) (docs/protocol.md §1 "PKP Ed25519 key"). Every
/// 32-byte string is a valid seed, so there is no retry.
[[nodiscard]] result<Secret> ed25519_seed(const Secret& root_key, const account_hash& account,
                                          const derivation_path& path);

/// The public key of `ed25519_seed`.
[[nodiscard]] result<crypto::ed25519::public_key> ed25519_public_key(const Secret& root_key,
                                                                     const account_hash& account,
                                                                     const derivation_path& path);

/// The Solana address of an Ed25519 public key: base58 (Bitcoin alphabet) of its 32 bytes.
[[nodiscard]] std::string solana_address(const crypto::ed25519::public_key& key);

/// The PKP's wallet address (its `pkp_id`): the address of `signing_key`.
[[nodiscard]] result<address> wallet_address(const Secret& root_key, const account_hash& account,
                                             const derivation_path& path);

/// The wallet the earlier path-only rule gave at `path` (salt kLegacySalt, info "sign" ‖ path):
/// used only to refuse data from before, never to sign.
[[nodiscard]] result<address> legacy_wallet_address(const Secret& root_key, const derivation_path& path);

/// A server key: HKDF-SHA256(ikm = root, salt = kServerSalt, info = purpose, 32 bytes), e.g.
/// purpose "triggers/usage-key-seal/v1" for an AES-256-GCM key. bad_purpose for an empty label
/// or one over 64 bytes.
[[nodiscard]] result<Secret> server_key(const Secret& root_key, std::string_view purpose);

/// A server signing key: as `server_key`, with the counter retry of `signing_key` (info
/// purpose [‖ counter]), e.g. purpose "api-payer/0" for the first relayer.
[[nodiscard]] result<Secret> server_signing_key(const Secret& root_key, std::string_view purpose);

/// The hash an account created on-chain by `admin` has: crypto::keccak256(abi.encodePacked(admin))
/// (docs/protocol.md §1 `apiKeyHash`); the account a signature-minted PKP belongs to before it exists.
[[nodiscard]] account_hash canonical_account_hash(const address& admin) noexcept;

/// API-mode path: crypto::keccak256(abi.encode(uint256 apiKeyHash, uint256 index)), i.e.
/// crypto::keccak256(api_key_hash ‖ 32-byte big-endian index).
[[nodiscard]] derivation_path api_mode_path(const hash256& api_key_hash, uint64_t index) noexcept;

/// 32 random bytes, the path of a signature-minted wallet. Throws enact::Error when the random
/// generator fails.
[[nodiscard]] derivation_path random_path();

}  // namespace enact::pkp
