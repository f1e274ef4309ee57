// SPDX-License-Identifier: Apache-2.0
// `enact::tee::tee`: the trusted execution environment as the server sees it — the holder of the
// root key from which every PKP key and every server key is derived (docs/protocol.md §1). Callers hand it
// an owning account and a derivation path (or a server-key purpose) and get addresses,
// signatures and ciphertexts back; key bytes never leave it.
// Backends: `simulated` (the root key lives in a 0600 file of the data directory; attestation
// answers are a recorded real quote, marked simulated; for development and tests) and `dstack`
// (the root key and the quotes come from the dstack guest agent over its Unix socket).
// The attestation side (quote, info, evidence files) is declared in tee/attestation.hpp.
#pragma once

#include <array>
#include <chrono>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "enact/bytes.hpp"
#include "enact/crypto/ed25519.hpp"
#include "enact/crypto/secp256k1.hpp"
#include "enact/secret.hpp"
#include "enact/result.hpp"
#include "tee/attestation.hpp"
#include "tee/errors.hpp"

namespace enact::tee {

class tee {
 public:
  virtual ~tee() = default;
  /// "simulated", "dstack".
  [[nodiscard]] virtual std::string_view kind() const noexcept = 0;
  // A PKP key is named by its owning account and its derivation path (docs/protocol.md §1 "PKP signing
  // key"): the same path under another account is another key. Callers that act for an account
  // pass that account's hash, never one read from the request.

  /// The PKP wallet address of (`account`, `path`).
  [[nodiscard]] virtual result<address> wallet_address(const hash256& account, const hash256& path) const = 0;
  /// A recoverable signature of `digest` by the PKP key of (`account`, `path`).
  [[nodiscard]] virtual result<crypto::secp256k1::signature> sign_digest(const hash256& account, const hash256& path,
                                                                         const hash256& digest) const = 0;
  /// The PKP public key (64 bytes x ‖ y) of (`account`, `path`).
  [[nodiscard]] virtual result<crypto::secp256k1::public_key> public_key(const hash256& account,
                                                                         const hash256& path) const = 0;
  /// The PKP's Ed25519 public key of (`account`, `path`) (docs/protocol.md §1 "PKP Ed25519 key").
  [[nodiscard]] virtual result<crypto::ed25519::public_key> ed25519_public_key(const hash256& account,
                                                                               const hash256& path) const = 0;
  /// An Ed25519 signature (RFC 8032) of `message` by the PKP's Ed25519 key of (`account`, `path`).
  [[nodiscard]] virtual result<crypto::ed25519::signature> sign_ed25519(const hash256& account, const hash256& path,
                                                                        bytes_view message) const = 0;
  /// AES-256-GCM with the PKP's symmetric key: nonce ‖ ciphertext ‖ tag.
  [[nodiscard]] virtual result<bytes> encrypt(const hash256& account, const hash256& path,
                                              bytes_view plaintext) const = 0;
  [[nodiscard]] virtual result<bytes> decrypt(const hash256& account, const hash256& path, bytes_view sealed) const = 0;
  /// The usage key `/add_usage_api_key_with_signature` hands out for (`account`, `path`)
  /// (pkp::usage_key): derived in a domain of its own, so no key the server hands out is ever a
  /// PKP's (docs/protocol.md §1 "usage key by signature"). Every PKP key stays behind the methods above.
  [[nodiscard]] virtual result<Secret> usage_key(const hash256& account, const hash256& path) const = 0;
  /// keccak256 of the base64 text of the PKP signing key of (`account`, `path`): the usage-key
  /// hash that key has if it was handed out as a usage key, as /add_usage_api_key_with_signature
  /// did before the usage-key domain. Only the hash leaves; the key is wiped.
  [[nodiscard]] virtual result<hash256> pkp_key_usage_hash(const hash256& account, const hash256& path) const = 0;

  // --- the server's own keys (docs/protocol.md §1 "server keys") -----------------------------------------
  // Derived under a salt of their own from a purpose label, so no account's derivation reaches
  // them.

  /// The server signing key for `purpose` ("api-payer/0", …), for the relayers' transactions.
  [[nodiscard]] virtual result<Secret> server_signing_key(std::string_view purpose) const = 0;
  /// The address of `server_signing_key(purpose)`.
  [[nodiscard]] virtual result<address> server_address(std::string_view purpose) const = 0;
  /// AES-256-GCM under the server key for `purpose` ("triggers/usage-key-seal/v1").
  [[nodiscard]] virtual result<bytes> server_seal(std::string_view purpose, bytes_view plaintext) const = 0;
  [[nodiscard]] virtual result<bytes> server_unseal(std::string_view purpose, bytes_view sealed) const = 0;
  /// A public value of the deployment for `purpose` ("ledger/embedded-chain/v1"): the keccak256 of
  /// the server key for it, so the value names this root without giving out any key
  /// (docs/protocol.md §1 "server keys").
  [[nodiscard]] virtual result<hash256> server_identifier(std::string_view purpose) const = 0;

  /// The wallet the earlier path-only derivation gave at `path` (pkp::legacy_wallet_address):
  /// only for refusing a data directory from before (docs/protocol.md §1 "data from before").
  [[nodiscard]] virtual result<address> legacy_wallet_address(const hash256& path) const = 0;

  // --- attestation (docs/protocol.md §2 "Attestation") ---------------------------------------
  // Not pure, so a TEE that cannot attest need not say so three times: the defaults answer
  // unavailable and serve no evidence.

  /// A TDX quote binding `data`, with its event log and VM configuration.
  [[nodiscard]] virtual result<quote_response> quote(const report_data& data) const;
  /// The application's identity: app_id, compose_hash, tcb_info (with app_compose).
  [[nodiscard]] virtual result<app_info> info() const;
  /// The evidence files served under /evidences/.
  [[nodiscard]] virtual const evidence_dir& evidences() const noexcept;
};

/// Claims `data_dir` for the PKP derivation of docs/protocol.md §1 (salt "enact/pkp/v2"): records it in
/// `<data_dir>/key-derivation` on first use, and refuses (invalid_request, with a message that
/// says why and what to do) a directory that holds keys or ledger state but no such record — one
/// from before keys were bound to their account — or a record of another rule. Nothing is
/// re-keyed. Call before opening a TEE or a store in the directory.
[[nodiscard]] result<void> claim_data_dir(const std::string& data_dir);

/// Claims `data_dir` for the TEE root whose fingerprint is `fingerprint` (the api payer's
/// checksummed address; docs/protocol.md §1 "root key"): records it in
/// `<data_dir>/root-fingerprint` on first use and refuses (invalid_argument, naming both) a
/// directory that recorded another, whose wallets and sealed keys came from another root.
[[nodiscard]] result<void> claim_root_fingerprint(const std::string& data_dir, std::string_view fingerprint);

struct simulated_options {
  /// A directory of evidence files to serve as it is (written by a TLS terminator).
  std::string evidence_dir;
  /// Without `evidence_dir`: write a development evidence set into <data_dir>/evidences and serve
  /// it (attestation.hpp); false serves none.
  bool write_evidence = true;
  /// The certificate domain of the development set (cert-<domain>.pem).
  std::string domain = "localhost";
};

/// Opens the simulated TEE whose root key is `<data_dir>/tee-root.key`: created once (32 bytes
/// from the CSPRNG, mode 0600, never overwritten), refused when it is readable by group or others
/// or has the wrong size. The key is held in an enact::Secret and never logged.
/// Serves no evidence files (simulated_options::write_evidence false).
[[nodiscard]] result<std::unique_ptr<tee>> open_simulated(const std::string& data_dir);
/// The same root key, with the evidence set `opts` asks for. Its quote and info are the recorded
/// fixture of tee/fixtures (a real TDX quote of another machine) and its vm_config says
/// `"simulated": true`.
[[nodiscard]] result<std::unique_ptr<tee>> open_simulated(const std::string& data_dir, const simulated_options& opts);

/// Where dstack's SDKs look for the guest agent's socket, in their order (Dstack-TEE/dstack
/// sdk/python dstack_client.py get_endpoint, sdk/js index.ts): the legacy paths first, then the
/// namespaced ones dstack OS 0.5.6+ uses without systemd.
inline constexpr std::array<std::string_view, 4> kDstackSocketPaths{
    "/var/run/dstack.sock", "/run/dstack.sock", "/var/run/dstack/dstack.sock", "/run/dstack/dstack.sock"};

/// The first of `candidates` that exists (as the SDKs test it); unavailable, naming every
/// candidate, when none does.
[[nodiscard]] result<std::string> find_dstack_socket(std::span<const std::string_view> candidates = kDstackSocketPaths);

struct dstack_options {
  /// The guest agent's Unix socket; empty: the first of kDstackSocketPaths that exists.
  std::string socket;
  /// Serve with a key provider other than dstack's KMS, whose keys change at the next boot or on
  /// another host (docs/deployment.md "The TEE: dstack"). For development only.
  bool allow_unstable_keys = false;
  /// The KMS root's secp256k1 public key (hex of the 33-byte compressed form) the GetKey
  /// signature chain must lead to; empty: the recovered key is shown, not compared.
  std::string kms_root_key;
  /// How long an Info answer is served before it is asked again: RTMR3 can be extended while
  /// the app runs.
  std::chrono::milliseconds info_max_age{10000};
  /// A directory of evidence files to serve (dstack-ingress writes /evidences); empty: none.
  std::string evidence_dir;
  /// GetKey path of the PKP root key. Changing it changes every PKP address.
  std::string root_key_path = "enact/pkp-root";
  /// Limit of one guest-agent call.
  std::chrono::milliseconds timeout{30000};
};

/// Opens the dstack TEE: asks the guest agent for the app info (Info) and the PKP root key
/// (GetKey, secp256k1, at `root_key_path`; held in an enact::Secret, never logged), so a socket
/// that cannot be reached fails here, at startup, with a message naming it. Refuses (unavailable)
/// a key provider other than "kms" unless `allow_unstable_keys`, and a GetKey signature chain
/// that does not verify (docs/protocol.md §1 "root key"). Quotes are asked of the agent per call
/// (GetQuote), the all-zero one of /attestation at most every 10 s; Info at most every
/// `info_max_age`.
[[nodiscard]] result<std::unique_ptr<tee>> open_dstack(const dstack_options& opts);

}  // namespace enact::tee
