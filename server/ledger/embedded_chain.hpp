// SPDX-License-Identifier: Apache-2.0
// The identity of the embedded ledger's chain: its chain id and the registry's address
// (docs/protocol.md §1 "embedded chain"). Each deployment has its own, so a wallet's registry
// transaction (EIP-155 signed) or wallet-proof envelope made for one deployment is refused by
// every other. A data directory records its pair in `<data_dir>/embedded-chain` at first start;
// later starts use the record, so a root key that changes never moves a ledger to another chain.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "enact/bytes.hpp"
#include "enact/result.hpp"

namespace enact::ledger {

struct embedded_chain {
  uint64_t chain_id = 0;
  address registry{};
  bool operator==(const embedded_chain&) const = default;
};

/// The server-identifier purpose (tee::tee::server_identifier) the pair is derived from.
inline constexpr std::string_view kEmbeddedChainPurpose = "ledger/embedded-chain/v1";
/// Derived chain ids lie in [kDerivedChainIdMin, kDerivedChainIdMin + kDerivedChainIdSpan), that is
/// [2^32, 2^52 − 2^32): above the ids public chains use, below what wallets accept (MetaMask
/// refuses ids above 4503599627370476).
inline constexpr uint64_t kDerivedChainIdMin = uint64_t{1} << 32;
inline constexpr uint64_t kDerivedChainIdSpan = (uint64_t{1} << 52) - (uint64_t{1} << 33);
/// The chain id every data directory had before the record existed.
inline constexpr uint64_t kLegacyChainId = 31337;
/// The largest chain id the record and an explicit setting may carry: what a JavaScript number
/// holds exactly, as wallets and the run API read chain ids (core/run_signing.hpp).
inline constexpr uint64_t kMaxEmbeddedChainId = (uint64_t{1} << 53) - 1;

/// The pair `identifier` names (docs/protocol.md §1 "embedded chain"): chain id 2^32 + (its first
/// 8 bytes, big-endian, mod kDerivedChainIdSpan); registry its last 20 bytes, with the first
/// byte set to 0x01 when they would be an address at or below 0xffff (precompiles live there).
[[nodiscard]] embedded_chain derive_embedded_chain(const hash256& identifier) noexcept;

/// The pair of every data directory from before the record: chain id 31337 and
/// embedded_registry_address() (rpc_surface.hpp).
[[nodiscard]] embedded_chain legacy_embedded_chain();

/// What claim_embedded_chain settled on, and why (for the startup log).
struct claimed_chain {
  embedded_chain chain;
  /// "recorded" (the directory's record), "derived" (a new directory: from the TEE root),
  /// "kept" (a ledger from before the record: chain id 31337 and the fixed address), each
  /// followed by " and configured" when an explicit setting replaced a part before recording.
  std::string source;
};

/// The explicit settings of the embedded chain (--chain-id, --registry-address), when given.
struct chain_overrides {
  std::optional<uint64_t> chain_id;
  std::optional<address> registry;
};

/// The embedded chain of `data_dir`. With a record (`<data_dir>/embedded-chain`): the recorded
/// pair; an override that differs from it is invalid_argument naming both. Without one, for a
/// directory that already holds a ledger (one from before the record): the chain its rpc.sqlite
/// was written for (an override that differs is invalid_argument, as that file would refuse it),
/// or with ledger.sqlite alone the legacy pair; for a new directory `derived`. The overrides
/// replace their parts, and the pair is recorded atomically before it is returned. A record that
/// cannot be read or parsed, a chain id of 0 or above kMaxEmbeddedChainId, or a zero registry
/// address is invalid_argument; nothing is rewritten.
[[nodiscard]] result<claimed_chain> claim_embedded_chain(const std::string& data_dir, const embedded_chain& derived,
                                                         const chain_overrides& overrides);

}  // namespace enact::ledger
