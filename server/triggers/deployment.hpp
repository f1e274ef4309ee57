// SPDX-License-Identifier: Apache-2.0
// The trigger service as enact-server runs it (docs/triggers.md "Serving"): the SQLite store in
// the data directory, the service, and where its routes are served — on the core's listener
// (default), on a listener of their own (`--triggers-listen`), or alone on the main listener when
// the core is not served (`--no-core`, the workers then call the core at `--core-url`).
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include "enact/api/errc.hpp"
#include "enact/result.hpp"
#include "http/bounded_server.hpp"
#include "triggers/chain_watcher.hpp"
#include "triggers/clock.hpp"
#include "triggers/service.hpp"
#include "triggers/settings.hpp"
#include "triggers/sqlite_store.hpp"

namespace httplib {
class Server;
}

namespace enact::triggers {

class deployment {
 public:
  struct options {
    std::string data_dir;
    /// This server's own base URL ("http://127.0.0.1:8080"): the default core URL.
    std::string own_url;
    /// The main listener, and whether core::mount serves on it (then it has the middleware).
    httplib::Server* main_server = nullptr;
    bool main_serves_core = true;
    /// HTTP threads of a listener of its own.
    size_t http_threads = 64;
    /// The main listener's host as configured ("127.0.0.1", "0.0.0.0", …) and its bound port:
    /// whether the service is reachable from other machines, and the loopback domains sign-in
    /// accepts without a public URL.
    std::string listen_host;
    int listen_port = 0;
    /// The bounds a listener of its own puts on each connection (docs/protocol.md §6).
    http::connection_limits http_limits;
  };

  /// Opens the store, starts the service and mounts its routes (starting its own listener when
  /// the settings name one). Usage errors (a bad combination of settings) are invalid_request,
  /// among them a listen address other than loopback without a public URL (docs/protocol.md §4: sign-in
  /// would otherwise have no domain to check messages against).
  [[nodiscard]] static result<std::unique_ptr<deployment>> start(const settings& s, const tee::tee& t,
                                                                 http::logger& log, const options& o);
  ~deployment();
  deployment(const deployment&) = delete;
  deployment& operator=(const deployment&) = delete;

  /// Stops the scheduler and the run workers (runs in flight are recorded while the core still
  /// answers), then the own listener. Call before stopping the main listener. Idempotent.
  void stop();

  /// Lines for the startup banner ("  triggers http://…/api").
  [[nodiscard]] std::string banner() const;

 private:
  deployment() = default;
  system_clock clock_;
  std::unique_ptr<store> store_;  // sqlite_store, or pg_store with triggers.store = postgres://…
  std::unique_ptr<service> service_;
  std::unique_ptr<chain_watcher> watcher_;  // chain-event triggers; absent without --chain-rpc
  std::unique_ptr<http::bounded_server> own_;
  std::thread own_thread_;
  std::atomic<bool> own_done_{false};  // the own accept loop returned
  std::string url_;
  std::string core_url_;
};

}  // namespace enact::triggers
