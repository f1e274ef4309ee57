// SPDX-License-Identifier: Apache-2.0
// `enact::ledger::rpc::call_executor`: registry calldata applied to the embedded ledger, the
// execution half of its JSON-RPC surface (rpc_surface.hpp, "Execution"). A call is decoded with
// the registry ABI (chain/registry.hpp) and run by the overload for its call type with the sender
// as msg.sender; a ledger refusal becomes the registry's custom error, views are ledger reads
// encoded as the contract returns them, and writes run inside one ledger batch (a multicall
// atomically), committed or rolled back (dry runs).
#pragma once

#include "enact/bytes.hpp"
#include "enact/u256.hpp"
#include "enact/result.hpp"

namespace enact::ledger {

class embedded_ledger;

namespace rpc {

/// What a call did: return data, or revert data.
struct outcome {
  bool reverted = false;
  bytes data;
};

class call_executor {
 public:
  explicit call_executor(embedded_ledger& ledger) : ledger_(ledger) {}

  /// Executes calldata sent to the registry by `sender` with `value` wei attached: applied to
  /// the ledger when `commit`, a dry run otherwise. The error is a storage failure.
  [[nodiscard]] result<outcome> execute(bytes_view calldata, const address& sender, const u256& value,
                                        bool commit) const;

 private:
  embedded_ledger& ledger_;
};

}  // namespace rpc
}  // namespace enact::ledger
