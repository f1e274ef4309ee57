// SPDX-License-Identifier: Apache-2.0
// The steps of enact-server's start (startup.hpp), each as it was written inline in main() before:
// the same checks, messages and exit statuses.
#include "app/startup.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <utility>

#include "app/ledger_backend.hpp"
#include "billing/dev_provider.hpp"
#include "billing/stripe_provider.hpp"
#include "core/pg_content_store.hpp"
#include "dashboard/dashboard.hpp"
#include "ledger/embedded_chain.hpp"
#include "metering/import.hpp"
#include "metering/pg_store.hpp"
#include "metering/sqlite_store.hpp"

namespace enact::app {

namespace {

template <class T>
T value_or_fail(result<T> r, const std::string& prefix = {}, int status = 1) {
  if (!r)
    throw start_failure(prefix + r.err().message, status);
  return std::move(*r);
}

void value_or_fail(result<void> r, const std::string& prefix = {}, int status = 1) {
  if (!r)
    throw start_failure(prefix + r.err().message, status);
}

}  // namespace

storage::file_lock lock_data_dir(settings& s) {
  if (::mkdir(s.data_dir.c_str(), 0700) != 0 && errno != EEXIST)
    throw start_failure("cannot create data directory " + s.data_dir + ": " + std::strerror(errno));
  std::error_code ec;
  std::string canonical = std::filesystem::canonical(s.data_dir, ec).string();
  if (ec)
    throw start_failure("data directory " + s.data_dir + ": " + ec.message());
  const std::string named = canonical == s.data_dir ? canonical : canonical + " (--data-dir " + s.data_dir + ")";
  try {
    auto lock = storage::file_lock::for_directory(
        canonical, "server.lock",
        "data directory " + named + " is in use by another enact-server (it holds " + canonical +
            "/server.lock): a data directory serves one server at a time; stop that server or give this one a data "
            "directory of its own");
    s.data_dir = std::move(canonical);
    return lock;
  } catch (const std::exception& e) {
    throw start_failure(e.what());
  }
}

std::unique_ptr<tee::tee> open_tee(const settings& s, core::logger& log) {
  // A missing evidence directory or guest agent is a configuration error, reported like a bad flag.
  struct stat st {};
  if (!s.evidence_dir.empty() && (::stat(s.evidence_dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)))
    throw start_failure("--evidence-dir: " + s.evidence_dir + " is not a directory", 2);
  value_or_fail(tee::claim_data_dir(s.data_dir));
  result<std::unique_ptr<tee::tee>> opened = fail(api_errc::internal, "no TEE");
  if (s.tee == "dstack") {
    tee::dstack_options o;
    o.socket = s.dstack_socket;
    o.evidence_dir = s.evidence_dir;
    o.allow_unstable_keys = s.tee_allow_unstable_keys;
    o.kms_root_key = s.dstack_kms_root_key;
    opened = value_or_fail(tee::open_dstack(o), "--tee dstack: ", 2);
  } else {
    tee::simulated_options o;
    o.evidence_dir = s.evidence_dir;
    opened = tee::open_simulated(s.data_dir, o);
  }
  auto t = value_or_fail(std::move(opened));
  if (t->evidences().configured())
    log.info("evidence files", {{"dir", t->evidences().path()}});
  else
    log.warn("no evidence files: /evidences/ answers 404; set --evidence-dir");
  if (t->kind() == "dstack") {
    const auto info = t->info();
    if (info && info->key_provider != "kms")
      log.warn(
          "--tee-allow-unstable-keys: the dstack key provider is not kms; every wallet and the api payer "
          "change at the next boot or on another host (docs/deployment.md \"The TEE: dstack\")",
          {{"key_provider", info->key_provider.empty() ? "unreported" : info->key_provider}});
    else if (info)
      log.info("dstack root key", {{"key_provider", info->key_provider}, {"key_provider_id", info->key_provider_id}});
  }
  return t;
}

address claim_api_payer(const settings& s, const tee::tee& t) {
  const address payer = value_or_fail(t.server_address(api_payer_purpose(0)));
  value_or_fail(tee::claim_root_fingerprint(s.data_dir, to_checksum_address(payer)));
  return payer;
}

ledgers open_ledgers(settings& s, const tee::tee& t, const address& payer, core::logger& log) {
  ledgers out;
  if (s.ledger == "evm") {
    auto l = open_evm_ledger(s, t, payer, log);
    if (!l)
      throw start_failure(l.err().message, l.code() == api_errc::invalid_request ? 2 : 1);
    out.evm = std::move(*l);
    return out;
  }
  // The chain is claimed before the ledger opens: a ledger file already there is what marks a
  // directory from before the record (docs/protocol.md §1 "embedded chain").
  auto identifier = value_or_fail(t.server_identifier(ledger::kEmbeddedChainPurpose), "embedded chain: ");
  ledger::chain_overrides overrides;
  if (s.chain_id_set)
    overrides.chain_id = s.core.chain_id;
  if (s.core.contract_address != address{})
    overrides.registry = s.core.contract_address;
  auto chain =
      value_or_fail(ledger::claim_embedded_chain(s.data_dir, ledger::derive_embedded_chain(identifier), overrides),
                    "embedded chain: ");
  s.core.chain_id = chain.chain.chain_id;
  s.core.contract_address = chain.chain.registry;
  log.info("embedded chain", {{"chain_id", chain.chain.chain_id},
                              {"registry", to_checksum_address(chain.chain.registry)},
                              {"source", chain.source}});
  out.embedded = value_or_fail(ledger::embedded_ledger::open(s.data_dir + "/ledger.sqlite", {payer}), "ledger: ");
  out.rpc = value_or_fail(
      ledger::rpc_surface::open(*out.embedded, {s.core.chain_id, s.core.contract_address, s.data_dir + "/rpc.sqlite"}),
      "rpc: ");
  return out;
}

core::content_store open_content_store(const settings& s) {
  if (s.content_store == "local")
    return value_or_fail(core::content_store::open(s.data_dir));
  const std::string url = s.content_store == "postgres" ? s.metering_store : s.content_store;
  if (!metering::is_postgres_url(url))
    throw start_failure(
        "--content-store postgres: the metering store is not PostgreSQL; set "
        "--billing-metering-store postgres://… or --content-store postgres://…",
        2);
  return value_or_fail(
      core::open_postgres_content_store(url, {.pool_size = 4, .max_code_bytes = s.core.max_action_code_bytes}));
}

std::unique_ptr<metering::store> open_metering(const settings& s, const ledgers& l, core::logger& log) {
  auto meter = value_or_fail(
      metering::is_postgres_url(s.metering_store)
          ? metering::open_postgres(s.metering_store, {.pool_size = s.metering_store_pool,
                                                       .lock_timeout_seconds = s.metering_lock_timeout_seconds,
                                                       .now = {}})
          : metering::open_sqlite(s.metering_store.empty() ? s.data_dir + "/metering.sqlite" : s.metering_store));
  value_or_fail(meter->release_expired());
  // The evm ledger lists no accounts, so only the embedded ledger's balances are carried; a
  // restart, or a start after an interrupted import, credits no account twice.
  if (l.embedded) {
    auto balances = value_or_fail(l.embedded->balances(), "ledger: ");
    auto imported =
        value_or_fail(metering::import_balances(*meter, balances), "metering: importing the ledger's balances: ");
    if (!balances.empty())
      log.info("ledger balances imported into the metering store",
               {{"accounts", imported}, {"ledger_accounts", balances.size()}});
  }
  return meter;
}

std::unique_ptr<metering::housekeeping> start_housekeeping(metering::store& m, core::logger& log) {
  return std::make_unique<metering::housekeeping>(
      m, std::chrono::hours(1), [&log](std::string_view what, const result<uint64_t>& deleted) {
        if (deleted)
          log.info("metering housekeeping", {{"deleted", *deleted}, {"what", std::string(what)}});
        else
          log.warn("metering housekeeping failed", {{"what", std::string(what)}, {"detail", deleted.err().message}});
      });
}

std::unique_ptr<billing::payment_provider> open_payments(const settings& s, std::string& name) {
  name = s.billing;
  if (name == "auto")
    name = s.dev ? "dev" : (!s.stripe.secret_key.empty() ? "stripe" : "none");
  if (name == "dev") {
    if (!s.dev)
      throw start_failure(
          "the dev payment provider credits accounts without payment; it runs only "
          "with --dev (or dev = true in the config)");
    return value_or_fail(billing::dev_provider::open(s.data_dir + "/billing-dev.sqlite"), "billing: ");
  }
  if (name != "stripe")
    return nullptr;
  if (s.stripe.secret_key.empty())
    throw start_failure("billing: stripe needs a secret key (STRIPE_SECRET_KEY)");
  billing::stripe_config sc;
  sc.api_base = s.stripe.api_base;
  sc.secret_key = Secret(as_bytes(s.stripe.secret_key));
  sc.publishable_key = s.stripe.publishable_key;
  sc.webhook_secret = Secret(as_bytes(s.stripe.webhook_secret));
  auto p = value_or_fail(billing::stripe_provider::create(std::move(sc)), "billing: ");
  // Only with Stripe does the dashboard load Stripe.js, and only then its policy names Stripe.
  dashboard::set_stripe_js_url(s.stripe.js_url);
  return p;
}

std::unique_ptr<runtime::pool> start_sandbox(const settings& s, core::logger& log) {
  if (s.no_core)
    return nullptr;  // nothing runs actions without the core
  runtime::pool_config pc;
  pc.size = s.sandbox_workers;
  pc.defaults.wall = std::chrono::milliseconds(s.run_timeout_ms);
  pc.defaults.heap_bytes = static_cast<size_t>(s.run_heap_mib) << 20;
  (void)runtime::parse_action_engine(s.action_engine, pc.engine);  // checked by the config
  if (log.enabled(core::logger::level::debug))
    pc.on_run = [&log](std::string_view msg, boost::json::object fields) {
      log.debug(msg, std::move(fields));
    };
  // Every isolation layer is required unless the operator opted out; missing layers are an error
  // when runs are refused, a warning when they go on without them.
  pc.allow_weak_isolation = s.sandbox_allow_weak;
  pc.on_isolation = [&log, weak = s.sandbox_allow_weak](std::string_view msg, boost::json::object fields) {
    if (weak)
      log.warn(msg, std::move(fields));
    else
      log.error(msg, std::move(fields));
  };
  auto pool = value_or_fail(runtime::pool::start(pc), "action sandbox: ");
  if (log.enabled(core::logger::level::debug)) {
    boost::json::array pids;
    for (const int pid : pool->worker_pids())
      pids.push_back(pid);
    log.debug("sandbox pool started", {{"workers", pool->size()},
                                       {"worker_pids", std::move(pids)},
                                       {"wall_ms", pc.defaults.wall.count()},
                                       {"heap_bytes", pc.defaults.heap_bytes},
                                       {"queue_timeout_ms", pc.queue_timeout.count()}});
  }
  return pool;
}

void log_started(core::logger& log, const std::string& base, const std::string& billing, size_t threads,
                 const runtime::pool* sandbox) {
  const auto iso = sandbox ? sandbox->isolation() : runtime::isolation_report{};
  log.info("started", {{"listen", base},
                       {"billing", billing},
                       {"threads", threads},
                       {"sandbox_workers", sandbox ? sandbox->size() : 0},
                       {"sandbox_isolation",
                        {{"empty_environment", iso.empty_environment},
                         {"fds_closed", iso.fds_closed},
                         {"network_namespace", iso.network_namespace},
                         {"dropped_privileges", iso.dropped_privileges},
                         {"rlimits", iso.rlimits},
                         {"no_new_privs", iso.no_new_privs},
                         {"seccomp", iso.seccomp}}}});
}

}  // namespace enact::app
