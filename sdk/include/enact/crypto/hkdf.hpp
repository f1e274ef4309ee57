// SPDX-License-Identifier: Apache-2.0
// HKDF with SHA-256 (RFC 5869): extract-then-expand key derivation, computed by OpenSSL behind
// src/crypto/openssl.cpp. The output is a `Secret`. Used for PKP key derivation (docs/protocol.md §1).
#pragma once

#include <cstddef>

#include "enact/bytes.hpp"
#include "enact/secret.hpp"
#include "enact/error.hpp"
#include "enact/result.hpp"

namespace enact {

enum class hkdf_errc {
  bad_length = 1,  // output length 0 or over 255 * 32 bytes (RFC 5869 §2.3)
  backend_failed,  // OpenSSL reported an internal failure
};

}  // namespace enact
ENACT_ERRC(hkdf_errc, hkdf_category, "enact.hkdf", "invalid output length", "HKDF backend failure")

namespace enact::crypto {

/// Largest output HKDF-SHA256 can produce: 255 blocks of 32 bytes (RFC 5869 §2.3).
inline constexpr size_t kHkdfSha256MaxLength = size_t{255} * 32;

/// HKDF-SHA256(ikm, salt, info) → `length` bytes (1 ≤ length ≤ 8160). An empty salt means the
/// RFC's default (32 zero bytes), which gives the same output.
[[nodiscard]] result<Secret> hkdf_sha256(bytes_view ikm, bytes_view salt, bytes_view info, size_t length);

}  // namespace enact::crypto
