// SPDX-License-Identifier: Apache-2.0
// The steps of enact-server's start, in the order main() takes them (docs/architecture.md §4). Each
// opens one backend from the settings and throws `start_failure` when it cannot, so main() reads
// as the list of steps and a failure's exit status is decided where it is found.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>

#include "app/config.hpp"
#include "core/content_store.hpp"
#include "core/log.hpp"
#include "enact/address.hpp"
#include "ledger/embedded_ledger.hpp"
#include "ledger/ledger.hpp"
#include "ledger/rpc_surface.hpp"
#include "metering/housekeeping.hpp"
#include "metering/store.hpp"
#include "billing/payment_provider.hpp"
#include "runtime/runtime.hpp"
#include "storage/file_lock.hpp"
#include "tee/tee.hpp"

namespace enact::app {

/// A start that cannot go on: main() prints "enact-server: <what()>" and exits with `status`
/// (2 for a configuration error, as a bad flag; 1 otherwise).
class start_failure : public std::runtime_error {
 public:
  explicit start_failure(const std::string& message, int status = 1) : std::runtime_error(message), status(status) {}
  int status;
};

/// Creates the data directory, takes its exclusive lock (one server per data directory,
/// docs/deployment.md "The data directory and backups") and from then on names it by the
/// canonical path the lock was taken on, so a link moved while the server runs leads nowhere
/// unguarded.
[[nodiscard]] storage::file_lock lock_data_dir(settings& s);

/// Claims the data directory for this TEE (docs/protocol.md §1 "data from before") and opens the
/// TEE the settings name, logging what it reports about its evidence and root key.
[[nodiscard]] std::unique_ptr<tee::tee> open_tee(const settings& s, core::logger& log);

/// The api_payer's address (docs/protocol.md §1 "server keys"), after checking that the root key
/// is the one the data directory was made with (§1 "root key").
[[nodiscard]] address claim_api_payer(const settings& s, const tee::tee& t);

/// The permission ledger: the registry on a node (--ledger evm), or the embedded ledger with its
/// JSON-RPC surface on the chain the data directory claims (docs/protocol.md §1 "embedded chain";
/// the chain id and registry it settles are written back into `s.core`).
struct ledgers {
  std::unique_ptr<ledger::permission_ledger> evm;
  std::unique_ptr<ledger::embedded_ledger> embedded;
  std::unique_ptr<ledger::rpc_surface> rpc;
  [[nodiscard]] ledger::permission_ledger* get() const {
    return evm ? evm.get() : static_cast<ledger::permission_ledger*>(embedded.get());
  }
};
[[nodiscard]] ledgers open_ledgers(settings& s, const tee::tee& t, const address& payer, core::logger& log);

/// Uploaded action code: files in the data directory, or PostgreSQL shared by a fleet.
[[nodiscard]] core::content_store open_content_store(const settings& s);

/// The metering store (SQLite in the data directory, or PostgreSQL), with the holds a crashed run
/// left released and, once, the credits an earlier version kept in the embedded ledger imported
/// (metering/import.hpp).
[[nodiscard]] std::unique_ptr<metering::store> open_metering(const settings& s, const ledgers& l, core::logger& log);

/// The hourly sweep of expired holds, Idempotency-Keys and nonces, reporting to `log`.
[[nodiscard]] std::unique_ptr<metering::housekeeping> start_housekeeping(metering::store& m, core::logger& log);

/// The payment provider `--billing` names (auto: dev with --dev, Stripe with a secret key, else
/// none); `name` receives the one chosen. Null for none.
[[nodiscard]] std::unique_ptr<billing::payment_provider> open_payments(const settings& s, std::string& name);

/// The sandbox pool, started before any request thread exists; null with --no-core.
[[nodiscard]] std::unique_ptr<runtime::pool> start_sandbox(const settings& s, core::logger& log);

/// The log line "started" with what the server listens on and how its sandbox is isolated.
void log_started(core::logger& log, const std::string& base, const std::string& billing, size_t threads,
                 const runtime::pool* sandbox);

}  // namespace enact::app
