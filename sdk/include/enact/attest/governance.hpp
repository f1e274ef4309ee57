// SPDX-License-Identifier: Apache-2.0
// The governance check (docs/protocol.md §5 check 4): the application contract, at `0x` + app_id,
// allows the running compose hash — `allowedComposeHashes(bytes32)` returns true for
// `0x` + compose_hash. The call goes through a caller-supplied `eth_call` (a JSON-RPC client, a
// test double), so this module stays free of transport. A reverted or failed call, or an answer
// that is not an ABI bool, is a failed check with the reason.
#pragma once

#include <boost/json/value.hpp>

#include <functional>
#include <string_view>

#include "enact/attest/report.hpp"
#include "enact/bytes.hpp"
#include "enact/result.hpp"

namespace enact::attest {

/// `eth_call` of `calldata` on `to` at the latest block; returns the call's return data, or the
/// failure (a revert, the node unreachable).
using eth_call_fn = std::function<result<bytes>(const address& to, bytes_view calldata)>;

/// Call data of allowedComposeHashes(bytes32): selector ‖ the hash.
[[nodiscard]] bytes allowed_compose_hashes_calldata(const hash256& compose_hash);

struct governance_report : checklist {
  address contract{};
  hash256 compose_hash{};
  bool allowed = false;
};

/// Checks "compose_hash_allowed".
[[nodiscard]] governance_report verify_governance(const address& app_contract, const hash256& compose_hash,
                                                  const eth_call_fn& eth_call);
/// Same, from /info's hex strings: app_id (40 hex digits) and compose_hash (64), with or
/// without 0x. Fails with bad_field when either is malformed.
[[nodiscard]] result<governance_report> verify_governance(std::string_view app_id, std::string_view compose_hash,
                                                          const eth_call_fn& eth_call);

[[nodiscard]] boost::json::value to_json(const governance_report& r);

}  // namespace enact::attest
