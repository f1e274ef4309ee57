// SPDX-License-Identifier: Apache-2.0
// enact-server's flags and the config-file settings no flag sets: the one table that app/config.cpp
// parses the command line from and writes --help and docs/configuration.md's reference from.
#pragma once

namespace enact::app {

struct flag {
  const char* name;
  const char* setting;  // dotted setting name; nullptr for --dev/--help/--version/--config
  const char* help;
};
inline constexpr flag kFlags[] = {
    {"--listen", "listen", "HOST:PORT to serve on (default 127.0.0.1:8080)"},
    {"--data-dir", "data_dir", "state directory: ledger, TEE root key, content store (default ./enact-data)"},
    {"--config", nullptr, "FILE (.json, or .toml) with the settings below; flags override it"},
    {"--dev", nullptr, "development mode: enables the dev payment provider (marked \"mode\": \"dev\")"},
    {"--billing", "billing.provider", "auto | dev | stripe | none (auto: dev with --dev, stripe with a secret key)"},
    {"--stripe-api-base", "billing.stripe_api_base", "Stripe API base URL (default https://api.stripe.com)"},
    {"--stripe-publishable-key", "billing.stripe_publishable_key",
     "Stripe publishable key (the secret key comes from STRIPE_SECRET_KEY)"},
    {"--stripe-js-url", "billing.stripe_js_url",
     "URL the dashboard loads Stripe.js from with the Stripe provider (default https://js.stripe.com/v3/, whose "
     "origins are the only ones its policy adds); https, or http on a loopback host: for tests with a stand-in, "
     "whose origin the policy then names instead"},
    {"--write-surcharge", "billing.write_surcharge_credits", "credits debited per relayed ledger write (default 0)"},
    {"--run-price", "billing.run_price_credits", "credits per run-action call (default 1)"},
    {"--metering-store", "billing.metering_store",
     "URL: postgres://… to share balances, payments and the credits held by runs in flight between instances "
     "(default: metering.sqlite in the data dir)"},
    {"--metering-store-pool", "billing.metering_store_pool",
     "connections in a postgres:// metering store's pool (default 8, 1 to 1024), plus the one that carries its "
     "batched run writes; ignored for SQLite"},
    {"--metering-lock-timeout", "billing.metering_lock_timeout_seconds",
     "seconds a postgres:// metering store's write waits on a lock another session holds (a stuck server) before "
     "it fails as unavailable (default 10, 1 to 3600; ignored for SQLite)"},
    {"--content-store", "content_store",
     "local | postgres | postgres://…: where uploaded action code is kept: files in the data dir (default), or "
     "PostgreSQL shared by a fleet, so code uploaded through one instance runs on every other (postgres: the "
     "--billing-metering-store database)"},
    {"--cors-origins", "cors_origins",
     "origins whose browser pages may call /core/v1 with credentials headers (CORS), comma-separated: "
     "https://app.example.org,http://localhost:5173, or * for any (default none: no CORS headers)"},
    {"--chain-id", "chain.chain_id",
     "chain id of the registry. --ledger evm: the node's (default 31337, checked against the node). Embedded ledger: "
     "by default each data directory's own, derived from the TEE root at its first start and recorded in "
     "<data-dir>/embedded-chain; a value given here is recorded for a new directory, and one that contradicts the "
     "record stops the server"},
    {"--chain-envelope-v1", "chain.envelope_v1",
     "accept | refuse: the specification's version 1 wallet-proof envelope for ConvertAccount and X-Wallet-Auth, "
     "which binds no account, request or deployment (default refuse; accept logs a warning at start). "
     "CreateWallet and AddUsageApiKey take version 1 either way"},
    {"--ledger", "ledger.backend", "embedded | evm: the permission ledger (default embedded)"},
    {"--rpc-url", "chain.rpc_url", "JSON-RPC endpoint of the node holding the registry (--ledger evm)"},
    {"--registry-address", "chain.contract_address",
     "address of the permission registry (--ledger evm: required, see enact-server deploy-registry; embedded ledger: "
     "as --chain-id, derived and recorded by default)"},
    {"--ledger-cache", "ledger.cache", "on | off: cache registry reads, invalidated by its events (default on)"},
    {"--chain-name", "chain.chain_name", "chain name reported by /get_node_chain_config"},
    {"--key-rate", "limits.key_rate_per_second",
     "requests per second per API key, and per admin wallet for X-Wallet-Auth; over it: 429 with Retry-After (default "
     "200; 0: unlimited)"},
    {"--new-accounts-per-minute", "limits.new_accounts_per_ip_per_minute",
     "account creations per client IP (IPv6: per /64) per minute, and calls of each *_with_signature minting route; "
     "over it: 429 with Retry-After (default 60; 0: unlimited)"},
    {"--rpc-calls-per-second", "limits.rpc_calls_per_ip_per_second",
     "eth_call and eth_estimateGas at /rpc per client IP (IPv6: per /64) per second, each of a batch counted, with ten "
     "seconds' worth as the burst: both execute a call, writes included, and roll it back; over it: HTTP 429 with "
     "Retry-After and JSON-RPC error -32005 (default 100; 0: unlimited)"},
    {"--rpc-writes-per-minute", "limits.rpc_writes_per_ip_per_minute",
     "eth_sendRawTransaction at /rpc per client IP (IPv6: per /64) per minute, each write of a batch counted; over it: "
     "HTTP 429 with Retry-After and JSON-RPC error -32005 (default 120; 0: unlimited)"},
    {"--upload-quota-bytes", "limits.upload_quota_bytes",
     "total bytes of distinct action code one account may store with /upload_action; over it: 403 forbidden (default "
     "67108864; 0: unlimited)"},
    {"--upload-quota-count", "limits.upload_quota_count",
     "distinct action codes one account may store with /upload_action; over it: 403 forbidden (default 1000; 0: "
     "unlimited)"},
    {"--sandbox-workers", "sandbox.workers", "action sandbox worker processes (default 2 per core)"},
    {"--account-concurrent-runs", "limits.account_concurrent_runs",
     "runs one account may have in flight at once, its share of the sandbox pool; over it: 429 with Retry-After "
     "(default: half the sandbox workers, at least 1; 0: no cap)"},
    {"--account-run-seconds-per-minute", "limits.account_run_seconds_per_minute",
     "seconds of run wall time one account may use per minute, refilled evenly; over it: 429 with Retry-After "
     "(default: a quarter of the pool's, 15 per sandbox worker; 0: no cap; at most 86400)"},
    {"--run-timeout-ms", "sandbox.run_timeout_ms", "wall-clock limit per action run (default 10000)"},
    {"--run-heap-mib", "sandbox.run_heap_mib", "heap limit per action run in MiB (default 64)"},
    {"--action-engine", "sandbox.action_engine",
     "spidermonkey | duktape: the JavaScript engine of actions; duktape runs ES5.1 only (default spidermonkey; "
     "docs/actions.md)"},
    {"--unsafe-allow-weak-sandbox", nullptr,
     "UNSAFE: run actions even when a sandbox worker cannot put every isolation layer in place (default: refuse every "
     "run with 503; docs/actions.md)"},
    {"--fetch-allow-hosts", "fetch.allow_hosts",
     "hosts Enact.fetch may reach, comma-separated: api.example.org, *.example.org or an IP (default: any public "
     "host)"},
    {"--fetch-max-per-run", "fetch.max_per_run", "Enact.fetch calls one run may make (default 10; 0: none)"},
    {"--fetch-max-response-bytes", "fetch.max_response_bytes",
     "bytes of response bodies one run may fetch in all (default 4194304, at most 8388608)"},
    {"--fetch-timeout-ms", "fetch.timeout_ms",
     "time per fetch, redirects included, within the run's wall time (default 5000)"},
    {"--fetch-price-credits", "fetch.price_credits", "credits per fetch made, held with the run's price (default 0)"},
    {"--fetch-allow-loopback", "fetch.allow_loopback",
     "DEVELOPMENT ONLY: true lets actions fetch from loopback addresses, over http too (default false)"},
    {"--ipfs-gateway", "sandbox.ipfs_gateway", "IPFS HTTP gateway for code not in the content store (default: off)"},
    {"--tee", "tee.backend", "simulated | dstack: where PKP keys and quotes come from (default simulated)"},
    {"--dstack-socket", "tee.dstack_socket",
     "dstack guest agent socket (default: the first that exists of /var/run/dstack.sock, /run/dstack.sock, "
     "/var/run/dstack/dstack.sock, /run/dstack/dstack.sock, as dstack's SDKs look)"},
    {"--tee-dstack-kms-root-key", "tee.dstack_kms_root_key",
     "hex of the dstack KMS root's compressed secp256k1 public key (its k256_pubkey) that the root key's signature "
     "chain must lead to; otherwise refused at start (default: shown in /info, not compared)"},
    {"--tee-allow-unstable-keys", nullptr,
     "DEVELOPMENT ONLY: serve with a dstack key provider other than kms (none, local-sgx, tpm), whose keys change "
     "at the next boot or on another host, taking every wallet with them (default: refuse to start; "
     "docs/deployment.md)"},
    {"--evidence-dir", "tee.evidence_dir", "evidence files to serve under /evidences/ (default: a development set)"},
    {"--threads", "threads", "HTTP worker threads, one per open connection (default max(64, 16 per core))"},
    {"--http-max-header-bytes", "http.max_header_bytes",
     "bytes of a request's line and header lines together; over it: 431 (default 32768, 1024 to 1048576)"},
    {"--http-max-headers", "http.max_headers", "header lines of one request; over it: 431 (default 100, 8 to 10000)"},
    {"--http-request-timeout", "http.request_timeout_seconds",
     "seconds within which a request's head and body must arrive, counted from its first byte, and its answer be "
     "read; over it: 408 and the connection closed (default 30, 1 to 3600)"},
    {"--http-max-connections-per-client", "http.max_connections_per_client",
     "connections one client IP (IPv6: per /64) may hold open at once; another is answered 429 and closed (default "
     "16; 0: no cap; behind a reverse proxy every client is the proxy)"},
    {"--log-level", "log_level", "debug | info | warn | error (default info)"},
    {"--no-core", nullptr, "serve only the trigger service, against the core at --core-url"},
    {"--no-triggers", nullptr, "serve only the core API: no trigger routes, scheduler or workers"},
    {"--triggers-listen", "triggers.listen",
     "HOST:PORT for the trigger service alone (default: the core's listener); the dashboard then finds it through "
     "GET /dashboard/settings, may connect to it (CSP connect-src), and it answers CORS for the dashboard's origin "
     "alone (docs/triggers.md \"Serving\")"},
    {"--core-url", "triggers.core_url", "core service the trigger workers call (default: this server's listener)"},
    {"--trigger-workers", "triggers.workers", "threads running trigger runs (default 4)"},
    {"--trigger-retry-base-ms", "triggers.retry_base_ms",
     "backoff before a run's second attempt, doubled after (default 1000)"},
    {"--trigger-sync", "triggers.sync", "full | normal: SQLite synchronous mode of triggers.sqlite (default full)"},
    {"--trigger-store", "triggers.store",
     "URL: postgres://… to share triggers and runs between instances (default: triggers.sqlite in the data dir)"},
    {"--trigger-store-pool", "triggers.store_pool",
     "most connections a postgres:// trigger store keeps open (default 16, 1 to 1024; ignored for SQLite)"},
    {"--triggers-public-url", "triggers.public_url",
     "public base URL of the trigger service: base of the webhook URLs, the only domain its wallet sign-in "
     "accepts, and (with --triggers-listen) the triggers_url the dashboard is told and may connect to; required when "
     "it "
     "listens on an address other than loopback (default: webhook URLs from Host, sign-in on the loopback listen "
     "address only, the dashboard told http://<--triggers-listen>)"},
    {"--triggers-max-per-user", "triggers.max_triggers_per_user",
     "triggers one user may have; a creation beyond answers 403 forbidden (default 100; 0: no limit)"},
    {"--trigger-creations-per-minute", "triggers.creations_per_minute",
     "triggers one user may create per minute on each server, a minute's worth at once; beyond it 429 with "
     "Retry-After (default 20; 0: no limit)"},
    {"--trigger-disable-after-credit-failures", "triggers.disable_after_credit_failures",
     "runs of a schedule failing in a row with insufficient_credits before the service disables it with a "
     "disabled_reason its owner sees (default 5; 0: never)"},
    {"--trigger-run-retention-days", "triggers.run_retention_days",
     "delete trigger runs finished longer ago than this many days, at start and hourly (default 30; 0: keep every "
     "run)"},
    {"--webhook-rate", "triggers.webhook_requests_per_second",
     "POST /webhook/<id> requests per second per client address; over it: 429 with Retry-After (default 20; 0: "
     "unlimited)"},
    {"--chain-rpc", "chain_rpc", "NAME=URL: JSON-RPC endpoint for chain-event triggers (repeatable)"},
    {"--chain-confirmations", "chain_confirmations",
     "NAME=N: blocks a chain-event log waits below the head, unless its trigger sets confirmations (default 0; "
     "repeatable)"},
    {"--help", nullptr, "this text"},
    {"--version", nullptr, "print the version"},
};

/// Config-file settings that no flag sets (a secret that does not belong on a command line, and
/// tuning rarely changed), for the reference; the flag-less flags' keys too.
struct file_setting {
  const char* setting;
  const char* help;
};
inline constexpr file_setting kFileOnlySettings[] = {
    {"billing.stripe_secret_key", "Stripe secret key; the STRIPE_SECRET_KEY environment variable overrides it"},
    {"billing.stripe_webhook_secret",
     "signing secret of the Stripe webhook endpoint (/core/v1/billing/stripe/webhook); the STRIPE_WEBHOOK_SECRET "
     "environment variable overrides it"},
    {"limits.max_body_bytes", "largest request body accepted, in bytes (default 1048576)"},
    {"limits.key_rate_burst",
     "token-bucket burst per API key and per X-Wallet-Auth wallet (default: twice the --key-rate; at least the "
     "--key-rate)"},
    {"limits.rpc_max_batch",
     "requests one JSON-RPC batch at /rpc may hold; a larger batch is refused whole with error -32600, and once a "
     "batch's answer passes 16 MiB its remaining requests are answered with error -32005 (default 100, at most 1000)"},
    {"limits.rate_table_entries",
     "buckets each rate-limit table keeps (per key, per wallet, per client IP and route); when full, the least "
     "recently used is evicted (default 100000)"},
    {"triggers.lease_ms",
     "how long a trigger worker holds a run before another may take it (default 30000, at least 1000)"},
    {"triggers.webhook_burst",
     "webhook requests one client address may send at once before --webhook-rate applies (default 200)"},
    {"chain_rpc.<NAME>", "URL: JSON-RPC endpoint of chain NAME, as --chain-rpc NAME=URL"},
    {"chain_confirmations.<NAME>", "N: confirmations on chain NAME, as --chain-confirmations NAME=N"},
};

}  // namespace enact::app
