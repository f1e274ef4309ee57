// SPDX-License-Identifier: Apache-2.0
// secp256k1 ECDSA as Ethereum uses it, on top of bitcoin-core's libsecp256k1 (one randomised
// context, created on first use and shared). Signatures are deterministic (RFC 6979) and low-s;
// their wire form is r ‖ s ‖ v with v = 27 + recovery id. Public keys are the 64-byte x ‖ y; the
// address of a key is the last 20 bytes of keccak256(x ‖ y). libsecp256k1 headers stay in
// src/crypto/secp256k1.cpp.
#pragma once

#include <array>
#include <cstdint>

#include "enact/bytes.hpp"
#include "enact/secret.hpp"
#include "enact/error.hpp"
#include "enact/result.hpp"

namespace enact {

enum class secp256k1_errc {
  invalid_private_key = 1,  // not 32 bytes, zero, or >= the group order n
  bad_signature_length,     // a serialized signature is not 65 bytes
  bad_recovery_id,          // v not in {0, 1, 27, 28}
  r_out_of_range,           // r is zero or >= n
  s_out_of_range,           // s is zero or >= n
  high_s,                   // s > n/2 (malleable form, rejected per EIP-2)
  recovery_failed,          // no public key recovers from this signature and digest
  signing_failed,           // libsecp256k1 refused to sign (cannot happen for a valid key)
};

}  // namespace enact
ENACT_ERRC(secp256k1_errc, secp256k1_category, "enact.secp256k1", "invalid private key", "signature must be 65 bytes",
           "invalid recovery id", "r out of range", "s out of range", "s is high (EIP-2)", "public key recovery failed",
           "signing failed")

namespace enact::crypto::secp256k1 {

/// Uncompressed public key without the 0x04 prefix: x ‖ y, big-endian.
using public_key = std::array<uint8_t, 64>;

/// A recoverable ECDSA signature.
struct signature {
  std::array<uint8_t, 32> r{};
  std::array<uint8_t, 32> s{};
  uint8_t v = 0;  // recovery id, 0 or 1

  /// r ‖ s ‖ (27 + v): the Ethereum form (eth_sign, personal_sign, ecrecover).
  [[nodiscard]] std::array<uint8_t, 65> to_bytes() const;
  /// Parses r ‖ s ‖ v with v in {0, 1, 27, 28}. Rejects any other length, r or s zero or >= n,
  /// and high s (EIP-2), each with its own code.
  [[nodiscard]] static result<signature> from_bytes(bytes_view sig65);

  friend bool operator==(const signature&, const signature&) = default;
};

/// True when `key` is 32 bytes and a valid scalar (0 < key < n).
[[nodiscard]] bool is_valid_private_key(bytes_view key) noexcept;

/// Signs a 32-byte digest (RFC 6979 nonce, low-s).
[[nodiscard]] result<signature> sign(const hash256& digest, const Secret& private_key);

/// x ‖ y of the key's public point.
[[nodiscard]] result<public_key> public_key_of(const Secret& private_key);

/// The public key that produced `sig` over `digest`. Applies the same checks as `from_bytes`
/// (v in {0, 1}, r and s in range, low s).
[[nodiscard]] result<public_key> recover(const hash256& digest, const signature& sig);

/// The address that signed `digest`, from the 65-byte form (see `signature::from_bytes`).
[[nodiscard]] result<address> recover_address(const hash256& digest, bytes_view sig65);

/// keccak256(x ‖ y)[12..32].
[[nodiscard]] address to_address(const public_key& key) noexcept;

/// SEC 1 compressed form: 0x02 | parity(y), then x. Assumes `key` is a point on the curve (as
/// returned by `public_key_of` or `recover`); it is not re-validated.
[[nodiscard]] std::array<uint8_t, 33> compress(const public_key& key) noexcept;

}  // namespace enact::crypto::secp256k1
