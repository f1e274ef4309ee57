// SPDX-License-Identifier: Apache-2.0
// Usage API keys at rest: a trigger keeps its core usage key sealed with AES-256-GCM under a
// server key of the TEE (docs/protocol.md §1 "server keys", purpose "triggers/usage-key-seal/v1"), so the
// key is readable only inside the server that holds the TEE root, never from the database file
// (nor from a backup of it), and no account's PKP derivation can produce the sealing key.
#pragma once

#include <string_view>

#include "enact/bytes.hpp"
#include "enact/crypto/keccak.hpp"
#include "enact/secret.hpp"
#include "enact/result.hpp"

namespace enact::tee {
class tee;
}

namespace enact::triggers {

/// The purpose label of the sealing key (HKDF info under the server salt).
inline constexpr std::string_view kUsageKeySealPurpose = "triggers/usage-key-seal/v1";

/// nonce ‖ ciphertext ‖ tag of the key's text.
[[nodiscard]] result<bytes> seal_usage_key(const tee::tee& t, std::string_view usage_api_key);
/// The key's text, in a Secret (wiped when dropped).
[[nodiscard]] result<Secret> unseal_usage_key(const tee::tee& t, bytes_view sealed);

}  // namespace enact::triggers
