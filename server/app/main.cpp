// SPDX-License-Identifier: Apache-2.0
// enact-server: the reference server on its embedded defaults (docs/architecture.md §4). Opens each
// backend the settings name (app/startup.hpp), mounts the core routes, the attestation endpoints
// and the trigger service, serves them until SIGINT or SIGTERM, then stops accepting and finishes
// the requests in flight.
#include <httplib.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "app/config.hpp"
#include "app/ledger_backend.hpp"
#include "app/startup.hpp"
#include "core/log.hpp"
#include "core/routes_rpc.hpp"
#include "core/run_share.hpp"
#include "core/service.hpp"
#include "triggers/deployment.hpp"

namespace {

using namespace enact;

constexpr const char* kVersion = ENACT_VERSION;  // the project version (CMake)

core::logger::level level_of(const std::string& s) {
  if (s == "debug")
    return core::logger::level::debug;
  if (s == "warn")
    return core::logger::level::warn;
  if (s == "error")
    return core::logger::level::error;
  return core::logger::level::info;
}

/// The subcommands and the flags that answer without serving; nullopt when the server is to run.
std::optional<int> answer_without_serving(int argc, char** argv, result<app::command_line>& cl) {
  if (argc > 1 && std::string_view(argv[1]) == "issue-token")
    return triggers::issue_token_command(argc - 1, argv + 1);
  if (argc > 1 && std::string_view(argv[1]) == "deploy-registry")
    return app::deploy_registry_command(argc - 1, argv + 1);
  if (argc > 1 && std::string_view(argv[1]) == "config-reference") {
    std::fputs(app::config_reference().c_str(), stdout);
    return 0;
  }
  cl = app::parse_command_line(argc, argv);
  if (!cl) {
    std::fprintf(stderr, "enact-server: %s\n", cl.err().message.c_str());
    return 2;
  }
  if (cl->help)
    std::fputs(app::help_text().c_str(), stdout);
  else if (cl->version)
    std::printf("enact-server %s\n", kVersion);
  else
    return std::nullopt;
  return 0;
}

/// The listener: httplib serves a keep-alive connection on one pool thread for its lifetime, so
/// the pool must be larger than the number of concurrent clients expected, not the number of cores.
size_t configure_listener(http::bounded_server& server, const app::settings& s) {
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const size_t threads = s.threads > 0 ? static_cast<size_t>(s.threads) : std::max<size_t>(64, 16 * cores);
  server.new_task_queue = [threads] {
    return new httplib::ThreadPool(threads);
  };
  server.set_keep_alive_max_count(1000);
  return threads;
}

/// Binds the listener (port 0: any free port) and returns the port bound.
int bind_listener(http::bounded_server& server, const app::settings& s) {
  int port = s.listen_port;
  if (port == 0)
    port = server.bind_to_any_port(s.listen_host);
  else if (!server.bind_to_port(s.listen_host, port))
    port = -1;
  if (port <= 0)
    throw app::start_failure("cannot listen on " + s.listen_host + ":" + std::to_string(s.listen_port) +
                             " (in use, or not an address of this machine)");
  return port;
}

/// docs/protocol.md §6 "Fair share": by default half the pool at once and a quarter of its time
/// over a minute, so one account's endless loops leave the rest to everyone else.
core::run_share_limits share_limits(const app::settings& s, size_t workers) {
  return {s.account_concurrent_runs.value_or(std::max<size_t>(1, workers / 2)),
          std::chrono::seconds(s.account_run_seconds_per_minute.value_or(15 * workers))};
}

void warn_of_risky_settings(const app::settings& s, core::logger& log) {
  // As root, a flaw in the server would reach the whole machine (docs/packaging.md).
  if (::geteuid() == 0)
    log.warn("running as root: run enact-server as its own user",
             {{"how",
               "the enact-server package's systemd unit runs it as the system user enact; by hand: "
               "adduser --system --group enact, then runuser -u enact -- enact-server ..."}});
  if (s.fetch.policy.allow_loopback)
    log.warn("Enact.fetch may reach loopback addresses over http (--fetch-allow-loopback): development only");
  if (s.core.accept_envelope_v1)
    log.warn(
        "version 1 wallet-proof envelopes are accepted for ConvertAccount and X-Wallet-Auth "
        "(--chain-envelope-v1 accept): they bind no account, request or deployment, so one seen anywhere "
        "converts another account or authorizes any billing request (docs/protocol.md §2)");
}

void print_banner(const app::settings& s, const std::string& base, const tee::tee& t, const std::string& billing,
                  const triggers::deployment* trig) {
  std::printf(
      "enact-server %s listening on %s\n  API      %s/core/v1\n  OpenAPI  %s/core/v1/openapi.json\n"
      "  docs     %s/core/v1/swagger-ui\n  data     %s (ledger: %s, TEE: %s, "
      "billing: %s)\n",
      kVersion, base.c_str(), base.c_str(), base.c_str(), base.c_str(), s.data_dir.c_str(),
      app::ledger_banner(s).c_str(), std::string(t.kind()).c_str(), billing.c_str());
  if (trig)
    std::fputs(trig->banner().c_str(), stdout);
  std::fflush(stdout);
}

/// The thread that takes SIGINT or SIGTERM (blocked in every other thread) and stops the trigger
/// service (runs in flight finish while the core still answers), then the listener.
std::thread start_stopper(http::bounded_server& server, core::logger& log, const std::atomic<bool>& serving_done,
                          std::unique_ptr<triggers::deployment>& trig, sigset_t stop_signals) {
  return std::thread([&server, &log, &serving_done, &trig, stop_signals] {
    int sig = 0;
    sigwait(&stop_signals, &sig);
    log.info("stopping", {{"signal", sig == SIGINT ? "SIGINT" : "SIGTERM"}});
    // httplib's stop() does nothing until the accept loop runs: a signal between the banner and
    // listen_after_bind() would be lost, so wait until it runs (or has ended) first.
    while (!server.is_running() && !serving_done.load())
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    if (trig)
      trig->stop();
    server.stop();
  });
}

int serve(app::settings& s, sigset_t stop_signals) {
  auto data_dir_lock = app::lock_data_dir(s);
  core::logger log(stderr, level_of(s.log_level));
  warn_of_risky_settings(s, log);
  auto the_tee = app::open_tee(s, log);
  const address payer = app::claim_api_payer(s, *the_tee);
  auto ledgers = app::open_ledgers(s, *the_tee, payer, log);
  auto store = app::open_content_store(s);
  auto meter = app::open_metering(s, ledgers, log);
  auto meter_housekeeping = app::start_housekeeping(*meter, log);
  std::string billing;
  auto payments = app::open_payments(s, billing);
  auto sandbox = app::start_sandbox(s, log);
  if (log.enabled(core::logger::level::debug))
    log.debug("settings", {{"data_dir", s.data_dir},
                           {"tee", std::string(the_tee->kind())},
                           {"no_core", s.no_core},
                           {"run_timeout_ms", s.run_timeout_ms},
                           {"run_heap_mib", s.run_heap_mib}});
  core::run_share share(share_limits(s, sandbox ? sandbox->size() : 0));
  const core::services svc{.ledger = ledgers.get(),
                           .metering = meter.get(),
                           .tee = the_tee.get(),
                           .payments = payments.get(),
                           .store = &store,
                           .sandbox = sandbox.get(),
                           .fetch = &s.fetch,
                           .log = &log,
                           .api_payer = payer,
                           .share = &share};

  http::bounded_server server(s.http);
  const size_t threads = configure_listener(server, s);
  if (!s.no_core) {
    core::mount(server, svc, s.core);
    if (ledgers.rpc)
      core::mount_rpc(server, *ledgers.rpc, s.core, log);
  }
  const int port = bind_listener(server, s);
  std::unique_ptr<triggers::deployment> trig;
  if (s.triggers.enabled) {
    const std::string host = s.listen_host == "0.0.0.0" ? "127.0.0.1" : s.listen_host;
    auto t = triggers::deployment::start(s.triggers, *the_tee, log,
                                         {s.data_dir, "http://" + host + ":" + std::to_string(port), &server,
                                          !s.no_core, threads, s.listen_host, port, s.http});
    if (!t)
      throw app::start_failure(t.err().message, t.code() == api_errc::invalid_request ? 2 : 1);
    trig = std::move(*t);
  }

  std::atomic<bool> serving_done{false};  // set once the accept loop has returned
  std::thread stopper = start_stopper(server, log, serving_done, trig, stop_signals);
  const std::string base = "http://" + s.listen_host + ":" + std::to_string(port);
  print_banner(s, base, *the_tee, billing, trig.get());
  app::log_started(log, base, billing, threads, sandbox.get());
  server.listen_after_bind();  // returns once stop() was called and the workers finished
  serving_done = true;
  pthread_kill(stopper.native_handle(), SIGTERM);  // wakes the waiter if we stopped otherwise
  stopper.join();
  if (trig)
    trig->stop();
  log.info("stopped");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // Every file the server or its subcommands create is the server user's alone, whatever umask
  // started it (docs/deployment.md "The data directory and backups").
  ::umask(077);
  result<app::command_line> cl = fail(api_errc::internal, "unparsed");
  if (auto answered = answer_without_serving(argc, argv, cl))
    return *answered;
  // The core sizes the holds and Idempotency-Key leases of runs from the run's wall time
  // (core/credits.hpp run_budget).
  cl->s.core.run_timeout_ms = cl->s.run_timeout_ms;

  // Stop signals are taken by one thread (start_stopper); every other thread has them blocked.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  signal(SIGPIPE, SIG_IGN);
  try {
    return serve(cl->s, stop_signals);
  } catch (const app::start_failure& e) {
    std::fprintf(stderr, "enact-server: %s\n", e.what());
    return e.status;
  }
}
