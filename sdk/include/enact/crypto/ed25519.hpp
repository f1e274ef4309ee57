// SPDX-License-Identifier: Apache-2.0
// Ed25519 (RFC 8032, pure EdDSA over edwards25519 with SHA-512) through OpenSSL's EVP interface.
// A private key is the RFC's 32-byte seed; the public key is the 32-byte encoded point A, which
// Solana uses as an account address (base58 of these bytes, pkp::solana_address). Signatures
// are the 64-byte R ‖ S and deterministic: the same seed and message always give the same
// signature. `verify` follows OpenSSL, which refuses S ≥ L and a non-canonical point encoding.
// OpenSSL headers stay in src/crypto/ed25519.cpp.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "enact/bytes.hpp"
#include "enact/error.hpp"
#include "enact/result.hpp"
#include "enact/secret.hpp"

namespace enact {

enum class ed25519_errc {
  bad_seed_size = 1,   // the private key (seed) is not 32 bytes
  bad_public_key,      // a public key that is not 32 bytes or does not decode to a point
  bad_signature_size,  // a signature that is not 64 bytes
  backend_failed,      // OpenSSL reported an internal failure
};

}  // namespace enact
ENACT_ERRC(ed25519_errc, ed25519_category, "enact.ed25519", "Ed25519 seed must be 32 bytes",
           "invalid Ed25519 public key", "Ed25519 signature must be 64 bytes", "Ed25519 backend failure")

namespace enact::crypto::ed25519 {

inline constexpr size_t kSeedSize = 32;
inline constexpr size_t kPublicKeySize = 32;
inline constexpr size_t kSignatureSize = 64;

/// The encoded public point A of RFC 8032 §5.1.5.
using public_key = std::array<uint8_t, kPublicKeySize>;
/// R ‖ S (RFC 8032 §5.1.6).
using signature = std::array<uint8_t, kSignatureSize>;

/// The public key of a 32-byte seed (bad_seed_size for any other length).
[[nodiscard]] result<public_key> public_key_of(const Secret& seed);

/// Signs `message` (any length, hashed inside as the RFC specifies) with the key of `seed`.
[[nodiscard]] result<signature> sign(bytes_view message, const Secret& seed);

/// True when `sig` is a valid signature of `message` by `key`. False for a signature that does
/// not verify, a key that is not a point, and a signature of the wrong size.
[[nodiscard]] bool verify(bytes_view message, bytes_view sig, const public_key& key) noexcept;

}  // namespace enact::crypto::ed25519
