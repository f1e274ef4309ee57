// PKP (programmable key pair) derivation, API.md §1. Every PKP key is derived from the node's
// 32-byte root key and the PKP's 32-byte derivation path: the signing key by HKDF-SHA256 with
// salt "enact/pkp/v1" and info "sign" ‖ path (retried with a counter byte in the rare case the
// output is not a valid secp256k1 scalar), the AES-256-GCM key with info "sym" ‖ path. Paths are
// keccak256(abi.encode(apiKeyHash, index)) for API-mode PKPs and random for signature-minted ones.
#pragma once

#include <cstdint>
#include <string_view>

#include "enact/bytes.hpp"
#include "enact/crypto/secret.hpp"
#include "enact/error.hpp"
#include "enact/result.hpp"

namespace enact {

enum class pkp_errc {
  bad_root_key = 1,  // root key is not 32 bytes
  no_valid_scalar,   // no counter 0..255 gave a valid secp256k1 scalar (probability ~2^-120)
};

namespace detail {
inline const std::error_category& pkp_category() noexcept {
  static const errc_category<pkp_errc> c(
      "enact.pkp", {"", "root key must be 32 bytes", "no valid signing scalar derived"});
  return c;
}
}  // namespace detail
inline std::error_code make_error_code(pkp_errc e) noexcept {
  return {static_cast<int>(e), detail::pkp_category()};
}

}  // namespace enact
ENACT_ERRC_ENUM(enact::pkp_errc)

namespace enact::pkp {

using derivation_path = hash256;

/// HKDF salt shared by every PKP derivation (API.md §1).
inline constexpr std::string_view kSalt = "enact/pkp/v1";

/// The PKP's secp256k1 private key: HKDF-SHA256(ikm = root, salt = kSalt,
/// info = "sign" ‖ path [‖ counter], 32 bytes), counter 1, 2, … appended while the output is 0 or
/// >= n.
[[nodiscard]] result<Secret> signing_key(const Secret& root_key, const derivation_path& path);

/// The PKP's AES-256-GCM key: HKDF-SHA256(ikm = root, salt = kSalt, info = "sym" ‖ path, 32).
[[nodiscard]] result<Secret> symmetric_key(const Secret& root_key, const derivation_path& path);

/// The PKP's wallet address (its `pkp_id`): the address of `signing_key`.
[[nodiscard]] result<address> wallet_address(const Secret& root_key, const derivation_path& path);

/// API-mode path: keccak256(abi.encode(uint256 apiKeyHash, uint256 index)), i.e.
/// keccak256(api_key_hash ‖ 32-byte big-endian index).
[[nodiscard]] derivation_path api_mode_path(const hash256& api_key_hash, uint64_t index) noexcept;

/// 32 random bytes, the path of a signature-minted wallet. Throws enact::Error when the random
/// generator fails.
[[nodiscard]] derivation_path random_path();

}  // namespace enact::pkp
