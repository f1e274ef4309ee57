// Usage API keys at rest: a trigger keeps its core usage key sealed with AES-256-GCM under the
// TEE's PKP symmetric key at one fixed derivation path, so the key is readable only inside the
// server that holds the TEE root, never from the database file (nor from a backup of it).
#pragma once

#include <string_view>

#include "enact/bytes.hpp"
#include "enact/crypto/keccak.hpp"
#include "enact/crypto/secret.hpp"
#include "enact/result.hpp"

namespace enact::tee {
class tee;
}

namespace enact::triggers {

/// keccak256("enact/triggers/usage-key-seal/v1"): the derivation path of the sealing key.
[[nodiscard]] hash256 usage_key_seal_path();

/// nonce ‖ ciphertext ‖ tag of the key's text.
[[nodiscard]] result<bytes> seal_usage_key(const tee::tee& t, std::string_view usage_api_key);
/// The key's text, in a Secret (wiped when dropped).
[[nodiscard]] result<Secret> unseal_usage_key(const tee::tee& t, bytes_view sealed);

}  // namespace enact::triggers
