// SPDX-License-Identifier: Apache-2.0
// enact-server: the reference server on its embedded defaults (docs/architecture.md §4). Wires the SQLite
// ledger, the TEE (simulated, or the dstack guest agent), the content store and a payment
// provider into the core routes and the attestation endpoints, serves them until SIGINT or
// SIGTERM, then stops accepting, finishes the requests in flight and closes the ledger.
#include <httplib.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "app/config.hpp"
#include "app/ledger_backend.hpp"
#include "billing/dev_provider.hpp"
#include "billing/stripe_provider.hpp"
#include "core/content_store.hpp"
#include "core/pg_content_store.hpp"
#include "core/log.hpp"
#include "core/routes_rpc.hpp"
#include "core/run_share.hpp"
#include "core/service.hpp"
#include "enact/address.hpp"
#include "enact/crypto/keccak.hpp"
#include "enact/secret.hpp"
#include "ledger/embedded_chain.hpp"
#include "ledger/embedded_ledger.hpp"
#include "ledger/rpc_surface.hpp"
#include "metering/housekeeping.hpp"
#include "metering/import.hpp"
#include "metering/pg_store.hpp"
#include "metering/sqlite_store.hpp"
#include "runtime/runtime.hpp"
#include "storage/file_lock.hpp"
#include "tee/tee.hpp"
#include "triggers/deployment.hpp"

namespace {

using namespace enact;

constexpr const char* kVersion = ENACT_VERSION;  // the project version (CMake)

int fatal(const std::string& msg) {
  std::fprintf(stderr, "enact-server: %s\n", msg.c_str());
  return 1;
}

core::logger::level level_of(const std::string& s) {
  if (s == "debug")
    return core::logger::level::debug;
  if (s == "warn")
    return core::logger::level::warn;
  if (s == "error")
    return core::logger::level::error;
  return core::logger::level::info;
}

/// The api_payer keys are server keys of the TEE (docs/protocol.md §1 "server keys"), so the relay
/// addresses are stable for a root key, no further key file is needed, and no account's PKP
/// derivation reaches them.
result<address> api_payer_address(const tee::tee& t, int index) {
  return t.server_address(app::api_payer_purpose(index));
}

/// The TEE the settings name.
result<std::unique_ptr<tee::tee>> open_tee(const app::settings& s) {
  if (s.tee == "dstack") {
    tee::dstack_options o;
    o.socket = s.dstack_socket;
    o.evidence_dir = s.evidence_dir;
    o.allow_unstable_keys = s.tee_allow_unstable_keys;
    o.kms_root_key = s.dstack_kms_root_key;
    return tee::open_dstack(o);
  }
  tee::simulated_options o;
  o.evidence_dir = s.evidence_dir;
  return tee::open_simulated(s.data_dir, o);
}

/// The exclusive lock of the data directory `dir` (`<canonical dir>/server.lock`) and the canonical
/// path it was taken on.
std::pair<storage::file_lock, std::string> lock_data_dir(const std::string& dir) {
  std::error_code ec;
  std::string canonical = std::filesystem::canonical(dir, ec).string();
  if (ec)
    throw std::runtime_error("data directory " + dir + ": " + ec.message());
  const std::string named = canonical == dir ? canonical : canonical + " (--data-dir " + dir + ")";
  auto lock = storage::file_lock::for_directory(
      canonical, "server.lock",
      "data directory " + named + " is in use by another enact-server (it holds " + canonical +
          "/server.lock): a data directory serves one server at a time; stop that server or give this one a data "
          "directory of its own");
  return {std::move(lock), std::move(canonical)};
}

}  // namespace

int main(int argc, char** argv) {
  // Every file and directory the server or its subcommands create is the server user's alone
  // (docs/deployment.md "The data directory and backups"), whatever umask started it: the
  // databases hold API key hashes and sealed keys, and the data directory's 0700 is not the only
  // guard (a directory given with looser modes, a copy made of it).
  ::umask(077);
  if (argc > 1 && std::string_view(argv[1]) == "issue-token")
    return triggers::issue_token_command(argc - 1, argv + 1);
  if (argc > 1 && std::string_view(argv[1]) == "deploy-registry")
    return app::deploy_registry_command(argc - 1, argv + 1);
  if (argc > 1 && std::string_view(argv[1]) == "config-reference") {
    std::fputs(app::config_reference().c_str(), stdout);
    return 0;
  }
  auto cl = app::parse_command_line(argc, argv);
  if (!cl) {
    std::fprintf(stderr, "enact-server: %s\n", cl.err().message.c_str());
    return 2;
  }
  if (cl->help) {
    std::fputs(app::help_text().c_str(), stdout);
    return 0;
  }
  if (cl->version) {
    std::printf("enact-server %s\n", kVersion);
    return 0;
  }
  // The core sizes the holds and Idempotency-Key leases of runs from the run's wall time
  // (core/credits.hpp run_budget).
  cl->s.core.run_timeout_ms = cl->s.run_timeout_ms;
  const app::settings& s = cl->s;

  // Stop signals are taken by one thread (below); every other thread has them blocked.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  if (::mkdir(s.data_dir.c_str(), 0700) != 0 && errno != EEXIST)
    return fatal("cannot create data directory " + s.data_dir + ": " + std::strerror(errno));
  // One server per data directory (docs/deployment.md "The data directory and backups"), held
  // for the server's life and taken before anything writes there: a second server, by any path to
  // the directory, exits here instead of rewriting the evidence files the first one serves and
  // opening its stores beside it.
  // From here on the directory is named by the path the lock was taken on: a symbolic link or a
  // `..` in --data-dir, moved while the server runs, never leads a later open (an evidence file,
  // an upload) to a directory no lock guards.
  std::optional<storage::file_lock> data_dir_lock;
  try {
    auto [lock, canonical] = lock_data_dir(s.data_dir);
    data_dir_lock.emplace(std::move(lock));
    cl->s.data_dir = std::move(canonical);
  } catch (const std::exception& e) {
    return fatal(e.what());
  }

  core::logger log(stderr, level_of(s.log_level));
  // As root, a flaw in the server would reach the whole machine: say how to run it as its own
  // user, as the systemd unit of the enact-server package always does (docs/packaging.md).
  if (::geteuid() == 0)
    log.warn("running as root: run enact-server as its own user",
             {{"how",
               "the enact-server package's systemd unit runs it as the system user enact; by hand: "
               "adduser --system --group enact, then runuser -u enact -- enact-server ..."}});

  // An evidence directory or a guest agent that is not there is a configuration error, reported
  // like a bad flag (exit 2).
  struct stat evidence_st {};
  if (!s.evidence_dir.empty() && (::stat(s.evidence_dir.c_str(), &evidence_st) != 0 || !S_ISDIR(evidence_st.st_mode))) {
    std::fprintf(stderr, "enact-server: --evidence-dir: %s is not a directory\n", s.evidence_dir.c_str());
    return 2;
  }
  // docs/protocol.md §1 "data from before": refused here, before a TEE or a store touches the directory.
  if (auto claimed = tee::claim_data_dir(s.data_dir); !claimed)
    return fatal(claimed.err().message);
  auto the_tee = open_tee(s);
  if (!the_tee) {
    if (s.tee != "dstack")
      return fatal(the_tee.err().message);
    std::fprintf(stderr, "enact-server: --tee dstack: %s\n", the_tee.err().message.c_str());
    return 2;
  }
  if ((*the_tee)->evidences().configured())
    log.info("evidence files", {{"dir", (*the_tee)->evidences().path()}});
  else
    log.warn("no evidence files: /evidences/ answers 404; set --evidence-dir");
  if ((*the_tee)->kind() == "dstack") {
    const auto info = (*the_tee)->info();
    if (info && info->key_provider != "kms")
      log.warn(
          "--tee-allow-unstable-keys: the dstack key provider is not kms; every wallet and the api payer "
          "change at the next boot or on another host (docs/deployment.md \"The TEE: dstack\")",
          {{"key_provider", info->key_provider.empty() ? "unreported" : info->key_provider}});
    else if (info)
      log.info("dstack root key", {{"key_provider", info->key_provider}, {"key_provider_id", info->key_provider_id}});
  }
  auto payer = api_payer_address(**the_tee, 0);
  if (!payer)
    return fatal(payer.err().message);
  // docs/protocol.md §1 "root key": a root that changed under the data directory is refused
  // before a store opens.
  if (auto claimed = tee::claim_root_fingerprint(s.data_dir, to_checksum_address(*payer)); !claimed)
    return fatal(claimed.err().message);

  // --ledger evm: the registry on a node (app/ledger_backend.hpp), whose own JSON-RPC clients
  // use; otherwise the embedded ledger and its JSON-RPC surface.
  std::unique_ptr<ledger::permission_ledger> evm_ledger;
  std::unique_ptr<ledger::embedded_ledger> embedded;
  std::unique_ptr<ledger::rpc_surface> rpc;
  if (s.ledger == "evm") {
    auto l = app::open_evm_ledger(s, **the_tee, *payer, log);
    if (!l) {
      std::fprintf(stderr, "enact-server: %s\n", l.err().message.c_str());
      return l.code() == enact::api_errc::invalid_request ? 2 : 1;
    }
    evm_ledger = std::move(*l);
  } else {
    // The chain this deployment's ledger is (docs/protocol.md §1 "embedded chain"): claimed before
    // the ledger opens, since a ledger file already there is what marks a directory from before
    // the record.
    auto identifier = (*the_tee)->server_identifier(ledger::kEmbeddedChainPurpose);
    if (!identifier)
      return fatal("embedded chain: " + identifier.err().message);
    ledger::chain_overrides overrides;
    if (s.chain_id_set)
      overrides.chain_id = s.core.chain_id;
    if (s.core.contract_address != address{})
      overrides.registry = s.core.contract_address;
    auto chain = ledger::claim_embedded_chain(s.data_dir, ledger::derive_embedded_chain(*identifier), overrides);
    if (!chain)
      return fatal("embedded chain: " + chain.err().message);
    cl->s.core.chain_id = chain->chain.chain_id;
    cl->s.core.contract_address = chain->chain.registry;
    log.info("embedded chain", {{"chain_id", chain->chain.chain_id},
                                {"registry", to_checksum_address(chain->chain.registry)},
                                {"source", chain->source}});
    auto ledger = ledger::embedded_ledger::open(s.data_dir + "/ledger.sqlite", {*payer});
    if (!ledger)
      return fatal("ledger: " + ledger.err().message);
    embedded = std::move(*ledger);
    auto surface =
        ledger::rpc_surface::open(*embedded, {s.core.chain_id, s.core.contract_address, s.data_dir + "/rpc.sqlite"});
    if (!surface)
      return fatal("rpc: " + surface.err().message);
    rpc = std::move(*surface);
  }
  // Uploaded action code: files in the data directory, or PostgreSQL shared by a fleet
  // (core/pg_content_store.hpp), by default the metering store's database.
  result<core::content_store> store = fail(api_errc::internal, "no content store");
  if (s.content_store == "local") {
    store = core::content_store::open(s.data_dir);
  } else {
    const std::string url = s.content_store == "postgres" ? s.metering_store : s.content_store;
    if (!metering::is_postgres_url(url)) {
      std::fprintf(stderr,
                   "enact-server: --content-store postgres: the metering store is not PostgreSQL; set "
                   "--billing-metering-store postgres://… or --content-store postgres://…\n");
      return 2;
    }
    store = core::open_postgres_content_store(url, {.pool_size = 4, .max_code_bytes = s.core.max_action_code_bytes});
  }
  if (!store)
    return fatal(store.err().message);

  // Balances, payments and the holds of runs in flight (server/metering): SQLite in the data
  // directory, or a PostgreSQL database several servers share. The holds a crashed run left
  // behind are released at start, uncharged.
  auto meter =
      metering::is_postgres_url(s.metering_store)
          ? metering::open_postgres(s.metering_store, {.pool_size = s.metering_store_pool,
                                                       .lock_timeout_seconds = s.metering_lock_timeout_seconds,
                                                       .now = {}})
          : metering::open_sqlite(s.metering_store.empty() ? s.data_dir + "/metering.sqlite" : s.metering_store);
  if (!meter)
    return fatal(meter.err().message);
  if (auto expired = (*meter)->release_expired(); !expired)
    return fatal(expired.err().message);
  // Hourly: expired holds, Idempotency-Keys past their 24 hours and expired single-use nonces
  // (metering/housekeeping.hpp).
  metering::housekeeping meter_housekeeping(
      **meter, std::chrono::hours(1), [&log](std::string_view what, const result<uint64_t>& deleted) {
        if (deleted)
          log.info("metering housekeeping", {{"deleted", *deleted}, {"what", std::string(what)}});
        else
          log.warn("metering housekeeping failed", {{"what", std::string(what)}, {"detail", deleted.err().message}});
      });
  // Credits a data directory of an earlier version keeps in the embedded ledger move into the
  // store once (metering/import.hpp); a restart, or a start after an interrupted import, credits
  // no account twice. The evm ledger lists no accounts, so its balances are not carried.
  if (embedded) {
    auto balances = embedded->balances();
    if (!balances)
      return fatal("ledger: " + balances.err().message);
    auto imported = metering::import_balances(**meter, *balances);
    if (!imported)
      return fatal("metering: importing the ledger's balances: " + imported.err().message);
    if (!balances->empty())
      log.info("ledger balances imported into the metering store",
               {{"accounts", *imported}, {"ledger_accounts", balances->size()}});
  }

  std::unique_ptr<billing::payment_provider> payments;
  std::string billing = s.billing;
  if (billing == "auto")
    billing = s.dev ? "dev" : (!s.stripe.secret_key.empty() ? "stripe" : "none");
  if (billing == "dev") {
    if (!s.dev)
      return fatal(
          "the dev payment provider credits accounts without payment; it runs only "
          "with --dev (or dev = true in the config)");
    auto p = billing::dev_provider::open(s.data_dir + "/billing-dev.sqlite");
    if (!p)
      return fatal("billing: " + p.err().message);
    payments = std::move(*p);
  } else if (billing == "stripe") {
    if (s.stripe.secret_key.empty())
      return fatal("billing: stripe needs a secret key (STRIPE_SECRET_KEY)");
    billing::stripe_config sc;
    sc.api_base = s.stripe.api_base;
    sc.secret_key = Secret(as_bytes(s.stripe.secret_key));
    sc.publishable_key = s.stripe.publishable_key;
    sc.webhook_secret = Secret(as_bytes(s.stripe.webhook_secret));
    auto p = billing::stripe_provider::create(std::move(sc));
    if (!p)
      return fatal("billing: " + p.err().message);
    payments = std::move(*p);
    // Only with Stripe does the dashboard load Stripe.js, and only then its policy names Stripe.
    dashboard::set_stripe_js_url(s.stripe.js_url);
  }

  // The sandbox workers are started before any request thread exists.
  runtime::pool_config pc;
  pc.size = s.sandbox_workers;
  pc.defaults.wall = std::chrono::milliseconds(s.run_timeout_ms);
  pc.defaults.heap_bytes = static_cast<size_t>(s.run_heap_mib) << 20;
  (void)runtime::parse_action_engine(s.action_engine, pc.engine);  // checked by the config
  if (log.enabled(core::logger::level::debug))
    pc.on_run = [&log](std::string_view msg, boost::json::object fields) {
      log.debug(msg, std::move(fields));
    };
  // Every isolation layer is required unless the operator opted out; the pool reports missing
  // layers once (then at most once a minute while it refuses runs): an error when runs are
  // refused, a warning when they go on without them.
  pc.allow_weak_isolation = s.sandbox_allow_weak;
  pc.on_isolation = [&log, weak = s.sandbox_allow_weak](std::string_view msg, boost::json::object fields) {
    if (weak)
      log.warn(msg, std::move(fields));
    else
      log.error(msg, std::move(fields));
  };
  // Without the core (--no-core) there is nothing to run actions for.
  auto sandbox =
      s.no_core ? result<std::unique_ptr<runtime::pool>>(std::unique_ptr<runtime::pool>()) : runtime::pool::start(pc);
  if (!sandbox)
    return fatal("action sandbox: " + sandbox.err().message);
  if (log.enabled(core::logger::level::debug)) {
    boost::json::array pids;
    if (*sandbox)
      for (const int pid : (*sandbox)->worker_pids())
        pids.push_back(pid);
    log.debug("sandbox pool started", {{"workers", *sandbox ? (*sandbox)->size() : 0},
                                       {"worker_pids", std::move(pids)},
                                       {"wall_ms", pc.defaults.wall.count()},
                                       {"heap_bytes", pc.defaults.heap_bytes},
                                       {"queue_timeout_ms", pc.queue_timeout.count()}});
    log.debug("settings", {{"data_dir", s.data_dir},
                           {"tee", std::string((*the_tee)->kind())},
                           {"no_core", s.no_core},
                           {"run_timeout_ms", s.run_timeout_ms},
                           {"run_heap_mib", s.run_heap_mib}});
  }

  core::services svc;
  svc.ledger = evm_ledger ? evm_ledger.get() : embedded.get();
  svc.metering = meter->get();
  svc.tee = the_tee->get();
  svc.payments = payments.get();
  svc.store = &*store;
  svc.log = &log;
  svc.api_payer = *payer;
  svc.sandbox = sandbox->get();
  // docs/protocol.md §6 "Fair share": by default half the pool at once, so one account's endless
  // loops leave the other half to everyone else, and a quarter of the pool's time over a minute.
  const size_t workers = *sandbox ? (*sandbox)->size() : 0;
  core::run_share share({s.account_concurrent_runs.value_or(std::max<size_t>(1, workers / 2)),
                         std::chrono::seconds(s.account_run_seconds_per_minute.value_or(15 * workers))});
  svc.share = &share;
  svc.fetch = &s.fetch;
  if (s.fetch.policy.allow_loopback)
    log.warn("Enact.fetch may reach loopback addresses over http (--fetch-allow-loopback): development only");
  if (s.core.accept_envelope_v1)
    log.warn(
        "version 1 wallet-proof envelopes are accepted for ConvertAccount and X-Wallet-Auth "
        "(--chain-envelope-v1 accept): they bind no account, request or deployment, so one seen anywhere "
        "converts another account or authorizes any billing request (docs/protocol.md §2)");

  http::bounded_server server(s.http);
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  // httplib serves a keep-alive connection on one pool thread for its lifetime, so the pool must
  // be larger than the number of concurrent clients expected, not the number of cores.
  const size_t threads = s.threads > 0 ? static_cast<size_t>(s.threads) : std::max<size_t>(64, 16 * cores);
  server.new_task_queue = [threads] {
    return new httplib::ThreadPool(threads);
  };
  server.set_keep_alive_max_count(1000);
  if (!s.no_core) {
    core::mount(server, svc, s.core);
    if (rpc)
      core::mount_rpc(server, *rpc, s.core, log);
  }

  // Port 0 asks for any free port; the banner prints the one bound.
  int port = s.listen_port;
  if (port == 0)
    port = server.bind_to_any_port(s.listen_host);
  else if (!server.bind_to_port(s.listen_host, port))
    port = -1;
  if (port <= 0)
    return fatal("cannot listen on " + s.listen_host + ":" + std::to_string(s.listen_port) +
                 " (in use, or not an address of this machine)");

  std::unique_ptr<triggers::deployment> trig;
  if (s.triggers.enabled) {
    const std::string host = s.listen_host == "0.0.0.0" ? "127.0.0.1" : s.listen_host;
    auto t = triggers::deployment::start(s.triggers, **the_tee, log,
                                         {s.data_dir, "http://" + host + ":" + std::to_string(port), &server,
                                          !s.no_core, threads, s.listen_host, port, s.http});
    if (!t) {
      std::fprintf(stderr, "enact-server: %s\n", t.err().message.c_str());
      return t.code() == enact::api_errc::invalid_request ? 2 : 1;
    }
    trig = std::move(*t);
  }

  // Set once the accept loop has returned (stopped by the signal, or failed).
  std::atomic<bool> serving_done{false};
  std::thread stopper([&server, &log, &serving_done, &trig, stop_signals] {
    int sig = 0;
    sigwait(&stop_signals, &sig);
    log.info("stopping", {{"signal", sig == SIGINT ? "SIGINT" : "SIGTERM"}});
    // httplib's stop() does nothing until the accept loop runs: a signal that arrives between
    // the banner and listen_after_bind() would be lost and the server would never stop. Wait
    // until it runs (or has ended) first.
    while (!server.is_running() && !serving_done.load())
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    if (trig)
      trig->stop();  // runs in flight finish while the core still answers
    server.stop();
  });

  const std::string base = "http://" + s.listen_host + ":" + std::to_string(port);
  std::printf(
      "enact-server %s listening on %s\n  API      %s/core/v1\n  OpenAPI  %s/core/v1/openapi.json\n"
      "  docs     %s/core/v1/swagger-ui\n  data     %s (ledger: %s, TEE: %s, "
      "billing: %s)\n",
      kVersion, base.c_str(), base.c_str(), base.c_str(), base.c_str(), s.data_dir.c_str(),
      app::ledger_banner(s).c_str(), std::string((*the_tee)->kind()).c_str(), billing.c_str());
  if (trig)
    std::fputs(trig->banner().c_str(), stdout);
  std::fflush(stdout);
  const auto iso = *sandbox ? (*sandbox)->isolation() : runtime::isolation_report{};
  log.info("started", {{"listen", base},
                       {"billing", billing},
                       {"threads", threads},
                       {"sandbox_workers", *sandbox ? (*sandbox)->size() : 0},
                       {"sandbox_isolation",
                        {{"empty_environment", iso.empty_environment},
                         {"fds_closed", iso.fds_closed},
                         {"network_namespace", iso.network_namespace},
                         {"dropped_privileges", iso.dropped_privileges},
                         {"rlimits", iso.rlimits},
                         {"no_new_privs", iso.no_new_privs},
                         {"seccomp", iso.seccomp}}}});

  server.listen_after_bind();
  serving_done = true;
  // listen_after_bind returns once stop() was called and the workers finished.
  if (stopper.joinable()) {
    pthread_kill(stopper.native_handle(), SIGTERM);  // wakes the waiter if we stopped otherwise
    stopper.join();
  }
  if (trig)
    trig->stop();
  log.info("stopped");
  return 0;
}
