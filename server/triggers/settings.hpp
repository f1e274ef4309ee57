// SPDX-License-Identifier: Apache-2.0
// The trigger service's part of enact-server's configuration: the `[triggers]` and `[chain_rpc]`
// sections of the config file and their flags (docs/triggers.md "Configuration"). app/config.cpp
// hands every setting to `apply_setting` first.
#pragma once

#include <boost/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "enact/result.hpp"

namespace enact::triggers {

struct settings {
  /// false: no trigger routes, scheduler or workers (--no-triggers).
  bool enabled = true;
  /// HOST:PORT of a listener of their own; empty: the trigger routes share the core's listener.
  std::string listen;
  /// Base URL of the core service the workers call; empty: this server's own listener.
  std::string core_url;
  size_t workers = 4;
  uint64_t retry_base_ms = 1000;
  uint64_t lease_ms = 30000;
  /// The trigger service's public base URL ("https://triggers.example.org"): the base of the
  /// webhook URLs the API returns, and the only domain the approval page's sign-in accepts.
  /// Empty: webhook URLs from the request's Host header over http, sign-in on the loopback
  /// listen address only; required when the service listens on any other address.
  std::string public_url;
  /// SQLite synchronous mode of triggers.sqlite: "full" (default) or "normal".
  std::string sync = "full";
  /// Where triggers and runs live: empty (or "sqlite") for triggers.sqlite in the data directory;
  /// a "postgres://…" URL for a PostgreSQL database that several instances share. May hold a
  /// password: never printed.
  std::string store;
  /// Most connections a PostgreSQL store keeps open at once (--trigger-store-pool,
  /// ENACT_TRIGGER_STORE_POOL, `[triggers] store_pool`): calls beyond it wait for a connection.
  /// Each instance of a fleet opens its own, so the database's max_connections must exceed their
  /// sum. Ignored for triggers.sqlite.
  size_t store_pool = 16;
  /// Chain name → JSON-RPC URL for chain-event triggers.
  std::map<std::string, std::string> chain_rpc;
  /// Chain name → confirmations a chain-event log waits for unless its trigger sets its own
  /// (`--chain-confirmations NAME=N`, `[chain_confirmations] NAME = N`); absent: 0.
  std::map<std::string, uint64_t> chain_confirmations;
  /// The run_action body limit of the core the workers call (`[triggers] core_max_body_bytes`),
  /// for a core elsewhere that differs; 0: this server's core's, kCoreRunRequestLimit (320 KiB).
  /// A webhook whose run request would not fit is refused with 413.
  uint64_t core_max_body_bytes = 0;
  /// Run history retention (`[triggers] run_retention_days`): runs that finished longer ago are
  /// deleted by the service's housekeeping (housekeeping.hpp); 0 keeps every run.
  uint64_t run_retention_days = 30;
  /// Triggers one user may have (`[triggers] max_triggers_per_user`); a creation beyond is refused
  /// with 403. 0: no limit.
  uint64_t max_triggers_per_user = 100;
  /// Triggers one user may create per minute on this instance (`[triggers] creations_per_minute`),
  /// a token bucket holding a minute's worth; beyond, 429 with Retry-After. 0: no limit.
  uint64_t creations_per_minute = 20;
  /// Runs of a schedule trigger failing in a row for lack of credits after which the service
  /// disables it (`[triggers] disable_after_credit_failures`). 0: never.
  uint64_t disable_after_credit_failures = 5;
  /// How often the chain watcher asks each chain for its head.
  uint64_t chain_poll_ms = 2000;
  /// POST /webhook/<id> requests per second per client address, with `webhook_burst` at once
  /// (0: unlimited); over it, 429 with Retry-After before any store access.
  double webhook_requests_per_second = 20;
  double webhook_burst = 200;
};

/// Applies `key` if it is a trigger setting: "triggers.<name>", "chain_rpc" (value NAME=URL, the
/// repeatable --chain-rpc flag), "chain_rpc.<NAME>" (value URL, the config file's section),
/// "chain_confirmations" (value NAME=N, the repeatable --chain-confirmations flag) or
/// "chain_confirmations.<NAME>" (value N).
/// nullopt when `key` is not one of these; otherwise the result of applying it (usage errors
/// name `what`).
[[nodiscard]] std::optional<result<void>> apply_setting(settings& s, std::string_view key, const boost::json::value& v,
                                                        const std::string& what);

/// HOST and PORT of a "HOST:PORT" value.
[[nodiscard]] std::optional<std::pair<std::string, int>> split_listen(std::string_view v);

}  // namespace enact::triggers
