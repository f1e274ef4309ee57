// SPDX-License-Identifier: Apache-2.0
// The evm permission ledger of enact-server (docs/architecture.md §4 "Permission ledger", `--ledger evm`):
// the registry at `--registry-address` on the node at `--rpc-url`, written as the server's
// api_payer (the TEE's server key "api-payer/0", docs/protocol.md §1 "server keys"); and `enact-server
// deploy-registry`, which deploys a registry whose api payer is that wallet.
#pragma once

#include <memory>
#include <string>

#include "app/config.hpp"
#include "core/log.hpp"
#include "enact/bytes.hpp"
#include "enact/result.hpp"
#include "ledger/ledger.hpp"
#include "tee/tee.hpp"

namespace enact::app {

/// The server-key purpose of api_payer `index` (0 relays API-mode writes): "api-payer/<index>".
[[nodiscard]] std::string api_payer_purpose(int index);

/// Opens the evm ledger (`--ledger evm`) with api payer `payer`, whose key the TEE holds: the
/// node's chain id must be `s.core.chain_id`, the registry must have code at
/// `s.core.contract_address` and `payer` must be one of its api payers; any of these refused is
/// api_errc::invalid_request (a configuration error: exit 2), with a message naming the fix. A
/// node that cannot be reached is ledger_errc::storage.
[[nodiscard]] result<std::unique_ptr<ledger::permission_ledger>> open_evm_ledger(const settings& s, const tee::tee& t,
                                                                                 const address& payer,
                                                                                 core::logger& log);

/// A one-line description for the start banner ("embedded SQLite", "evm registry 0x… on …").
[[nodiscard]] std::string ledger_banner(const settings& s);

/// `enact-server deploy-registry --rpc-url URL --key-file FILE [--api-payer ADDR]...
/// [--data-dir DIR] [--tee simulated|dstack] [--dstack-socket PATH]`: deploys the permission
/// registry from the key in FILE (its owner) with the data directory's api_payer and the given
/// addresses as api payers, and prints the registry's address. Returns the exit code.
[[nodiscard]] int deploy_registry_command(int argc, char** argv);

}  // namespace enact::app
