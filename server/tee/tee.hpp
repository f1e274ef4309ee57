// `enact::tee::tee`: the trusted execution environment as the server sees it — the holder of the
// root key from which every PKP key is derived (API.md §1). Callers hand it a derivation path and
// get addresses, signatures and ciphertexts back; key bytes never leave it.
// Backends: `simulated` (this file: the root key lives in a 0600 file of the data directory;
// for development and tests) and `dstack` (the guest agent socket; a later issue).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "enact/bytes.hpp"
#include "enact/crypto/secp256k1.hpp"
#include "enact/crypto/secret.hpp"
#include "enact/result.hpp"

namespace enact::tee {

class tee {
 public:
  virtual ~tee() = default;
  /// "simulated", "dstack".
  [[nodiscard]] virtual std::string_view kind() const noexcept = 0;
  /// The PKP wallet address at `path`.
  [[nodiscard]] virtual result<address> wallet_address(const hash256& path) const = 0;
  /// A recoverable signature of `digest` by the PKP key at `path`.
  [[nodiscard]] virtual result<secp256k1::signature> sign_digest(const hash256& path,
                                                                 const hash256& digest) const = 0;
  /// The PKP public key (64 bytes x ‖ y) at `path`.
  [[nodiscard]] virtual result<secp256k1::public_key> public_key(const hash256& path) const = 0;
  /// AES-256-GCM with the PKP's symmetric key: nonce ‖ ciphertext ‖ tag.
  [[nodiscard]] virtual result<bytes> encrypt(const hash256& path, bytes_view plaintext) const = 0;
  [[nodiscard]] virtual result<bytes> decrypt(const hash256& path, bytes_view sealed) const = 0;
  /// The PKP signing key at `path` itself, for the one call that hands a key out on purpose:
  /// `/add_usage_api_key_with_signature` mints a usage key whose value is this key (API.md §2).
  /// Every other caller works through the methods above.
  [[nodiscard]] virtual result<Secret> export_signing_key(const hash256& path) const = 0;
};

/// Opens the simulated TEE whose root key is `<data_dir>/tee-root.key`: created once (32 bytes
/// from the CSPRNG, mode 0600, never overwritten), refused when it is readable by group or others
/// or has the wrong size. The key is held in an enact::Secret and never logged.
[[nodiscard]] result<std::unique_ptr<tee>> open_simulated(const std::string& data_dir);

}  // namespace enact::tee
