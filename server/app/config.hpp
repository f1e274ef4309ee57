// SPDX-License-Identifier: Apache-2.0
// enact-server's configuration: defaults that run fully offline, overridden by a config file
// (JSON, or TOML read with toml++), then by ENACT_<FLAG> environment variables, then by flags
// (parsed with CLI11).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/service.hpp"
#include "dashboard/dashboard.hpp"
#include "enact/result.hpp"
#include "http/bounded_server.hpp"
#include "runtime/fetch.hpp"
#include "triggers/settings.hpp"

namespace enact::app {

struct stripe_settings {
  std::string api_base = "https://api.stripe.com";
  std::string publishable_key;
  /// Where the dashboard loads Stripe.js from (dashboard::stripe_js_origin checks it).
  std::string js_url{dashboard::kStripeJsUrl};
  /// Read from the config file or, preferably, the STRIPE_SECRET_KEY environment variable; never
  /// printed.
  std::string secret_key;
  /// The webhook endpoint's signing secret (POST /core/v1/billing/stripe/webhook), from the config
  /// file or, preferably, STRIPE_WEBHOOK_SECRET; never printed. Empty: the webhook answers 404.
  std::string webhook_secret;
};

struct settings {
  std::string listen_host = "127.0.0.1";
  int listen_port = 8080;
  std::string data_dir = "./enact-data";
  bool dev = false;
  /// "auto" (dev with --dev, stripe when a secret key is set, else none), "dev", "stripe", "none".
  std::string billing = "auto";
  stripe_settings stripe;
  /// Where balances, payments and the holds of runs in flight live: empty for metering.sqlite in
  /// the data directory, or a "postgres://…" URL for a database several servers share.
  std::string metering_store;
  /// A postgres:// metering store: the connections of its pool at most (its pipeline keeps one
  /// more), and how long one of its writes waits on a lock another session holds (a stuck server)
  /// before it fails (SET lock_timeout).
  size_t metering_store_pool = 8;
  int metering_lock_timeout_seconds = 10;
  /// Where uploaded action code lives: "local" (files in the data directory), "postgres" (the
  /// metering store's PostgreSQL database) or a "postgres://…" URL (core/pg_content_store.hpp).
  std::string content_store = "local";
  std::string log_level = "info";
  int threads = 0;  // HTTP worker threads; 0 = max(64, 16 × cores)
  /// What one connection may make a listener read, and for how long (`[http]`, app/http_config.hpp).
  http::connection_limits http;
  /// Action sandbox: worker processes (0 = 2 × cores), and per-run limits.
  size_t sandbox_workers = 0;
  uint64_t run_timeout_ms = 10000;
  uint64_t run_heap_mib = 64;
  /// Each account's share of the sandbox pool (core/run_share.hpp): runs in flight at once, and
  /// run wall time per minute. Unset: half the pool, and a quarter of the pool's wall time per
  /// minute; 0: no cap.
  std::optional<size_t> account_concurrent_runs;
  std::optional<uint64_t> account_run_seconds_per_minute;
  /// --action-engine: "spidermonkey" (modern JavaScript) or "duktape" (ES5.1).
  std::string action_engine = "spidermonkey";
  /// --unsafe-allow-weak-sandbox: run actions even when a worker cannot put every isolation
  /// layer in place (otherwise /run_action answers 503 and the log names the missing layers).
  bool sandbox_allow_weak = false;
  /// Enact.fetch: the egress policy, the per-run limits and the price per fetch (`[fetch]`,
  /// app/fetch_config.hpp).
  runtime::fetch_settings fetch;
  /// TEE backend: "simulated" (root key in the data directory, recorded quote) or "dstack".
  std::string tee = "simulated";
  /// The dstack guest agent's Unix socket; empty: looked up as dstack's SDKs do
  /// (tee::kDstackSocketPaths).
  std::string dstack_socket;
  /// --tee-allow-unstable-keys: serve with a dstack key provider other than the KMS, whose keys
  /// change at the next boot or on another host (development only; logged as a warning).
  bool tee_allow_unstable_keys = false;
  /// The KMS root key the dstack root key's signature chain must lead to (hex, compressed);
  /// empty: not pinned.
  std::string dstack_kms_root_key;
  /// Evidence files written by the TLS terminator, served under /evidences/; empty: a development
  /// set in <data_dir>/evidences (simulated) or none (dstack).
  std::string evidence_dir;
  /// Permission ledger: "embedded" (SQLite in the data directory) or "evm" (the registry at
  /// core.contract_address on the node at rpc_url, chain core.chain_id; app/ledger_backend.hpp).
  std::string ledger = "embedded";
  std::string rpc_url;
  /// core.chain_id was configured (flag, environment or file) rather than left at its default:
  /// the embedded ledger records such a value for a new data directory and refuses one that
  /// contradicts its record (ledger/embedded_chain.hpp).
  bool chain_id_set = false;
  /// evm: reads through the ledger's event-invalidated cache.
  bool ledger_cache = true;
  core::config core;
  /// The trigger service (docs/triggers.md); `no_core` runs it alone against a remote core.
  triggers::settings triggers;
  bool no_core = false;
};

/// What the command line asked for.
struct command_line {
  settings s;
  bool help = false;
  bool version = false;
};

/// Parses argv: the config files (--config FILE, wherever it appears, or ENACT_CONFIG) first, then
/// each flag's environment variable when the flag is absent, then the flags. Usage errors name the
/// flag, the variable, or the file, line and key.
[[nodiscard]] result<command_line> parse_command_line(int argc, char** argv);

/// The text of `enact-server --help`.
[[nodiscard]] std::string help_text();

/// The configuration reference in Markdown (`enact-server config-reference`; docs/configuration.md):
/// every flag with its config key and description, the file-only keys, the subcommands.
[[nodiscard]] std::string config_reference();

}  // namespace enact::app
