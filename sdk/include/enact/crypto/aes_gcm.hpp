// SPDX-License-Identifier: Apache-2.0
// AES-256-GCM authenticated encryption (NIST SP 800-38D) through OpenSSL, in the sealed form the
// SDK stores and sends: 12-byte nonce ‖ ciphertext ‖ 16-byte tag. `encrypt` draws a fresh random
// nonce for every message; `encrypt_with_nonce` takes one (for known-answer tests and callers that
// manage nonces themselves — a nonce must never repeat under one key).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "enact/bytes.hpp"
#include "enact/secret.hpp"
#include "enact/error.hpp"
#include "enact/result.hpp"

namespace enact {

enum class aes_gcm_errc {
  bad_key_size = 1,       // key is not 32 bytes
  bad_nonce_size,         // nonce is not 12 bytes
  truncated,              // sealed input shorter than nonce + tag (28 bytes)
  authentication_failed,  // tag mismatch: wrong key, wrong AAD, or tampered data
  backend_failed,         // OpenSSL reported an internal failure
};

}  // namespace enact
ENACT_ERRC(aes_gcm_errc, aes_gcm_category, "enact.aes_gcm", "key must be 32 bytes", "nonce must be 12 bytes",
           "sealed data truncated", "authentication failed", "AES-GCM backend failure")

namespace enact::crypto::aes_gcm {

inline constexpr size_t kKeySize = 32;
inline constexpr size_t kNonceSize = 12;
inline constexpr size_t kTagSize = 16;
inline constexpr size_t kOverhead = kNonceSize + kTagSize;

using nonce = std::array<uint8_t, kNonceSize>;

/// Seals `plaintext` under a fresh random nonce: nonce ‖ ciphertext ‖ tag. `aad` is authenticated
/// but not encrypted; the same `aad` must be given to `decrypt`.
[[nodiscard]] result<bytes> encrypt(const Secret& key32, bytes_view plaintext, bytes_view aad = {});

/// Seals with the given nonce (12 bytes): nonce ‖ ciphertext ‖ tag.
[[nodiscard]] result<bytes> encrypt_with_nonce(const Secret& key32, bytes_view nonce12, bytes_view plaintext,
                                               bytes_view aad = {});

/// Opens nonce ‖ ciphertext ‖ tag; fails with `authentication_failed` on any tampering.
[[nodiscard]] result<bytes> decrypt(const Secret& key32, bytes_view sealed, bytes_view aad = {});

}  // namespace enact::crypto::aes_gcm
