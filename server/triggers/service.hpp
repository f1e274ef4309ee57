// SPDX-License-Identifier: Apache-2.0
// `enact::triggers::service`: the trigger service assembled — the store, the scheduler, the run
// workers and the HTTP routes (docs/protocol.md §4): the management API under /api (bearer tokens) and the
// public webhook intake POST /webhook/<id>. enact-server mounts it on the core's listener, on a
// listener of its own, or alone against a remote core (server/app/main.cpp).
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "enact/result.hpp"
#include "triggers/clock.hpp"
#include "triggers/scheduler.hpp"
#include "triggers/store.hpp"
#include "triggers/validate.hpp"
#include "triggers/webhook.hpp"
#include "triggers/worker.hpp"

namespace httplib {
class Server;
}
namespace enact::tee {
class tee;
}
namespace enact::http {
class logger;
}
namespace enact::core {
using logger = http::logger;  // http/log.hpp
}

namespace enact::triggers {

struct service_config {
  worker_config workers;
  config_rules rules;
  /// The service's public base URL: the base of the webhook URLs in trigger JSON, and the only
  /// domain a sign-in message may name (handshake_config). Empty: webhook URLs use
  /// "http://" + the request's Host header, and sign-in accepts the loopback listen address
  /// alone (mount's `loopback_authorities`).
  std::string public_url;
  /// On a listener of its own: the origins of the pages that may call its routes from a browser
  /// (the dashboard's, docs/dashboard.md), answered with CORS for them alone: an exact
  /// Access-Control-Allow-Origin, preflights for Authorization and Content-Type, no credentials.
  /// Empty: no CORS. Never "*". Unused on a shared listener (the core's CORS applies there).
  std::vector<std::string> page_origins;
  /// Takes back, at start, every run a killed process left leased. Right for a store that only
  /// this process serves (SQLite); a shared store leaves leases to expire instead.
  bool release_leases_at_start = true;
  /// Per client address over the approval handshake's unauthenticated /auth routes
  /// (handshake_config); a rate of 0 disables the limit.
  double auth_requests_per_second = 5;
  double auth_burst = 60;
  /// Per client address over POST /webhook/<id>, before any store access; a rate of 0 disables
  /// the limit. Each trigger has its own limits besides (max_runs_per_minute, max_queued_runs).
  double webhook_requests_per_second = 20;
  double webhook_burst = 200;
  /// The body limit of the core's run_action: a webhook whose run request would be larger is
  /// refused at intake with 413 rather than queued to fail (run_request_bytes).
  size_t core_max_body = kCoreRunRequestLimit;
  /// Finished runs older than this are deleted every `retention_period` (housekeeping.hpp); 0:
  /// every run is kept.
  std::chrono::hours run_retention{24 * 30};
  std::chrono::milliseconds retention_period{std::chrono::hours(1)};
  /// Triggers one user may have: POST /api/triggers beyond it answers 403 (docs/protocol.md §4
  /// "Limits"). 0: no limit.
  uint64_t max_triggers_per_user = 100;
  /// Triggers one user may create per minute, a bucket per user id holding a minute's worth:
  /// beyond it, 429 with Retry-After. Per instance. 0: no limit.
  uint64_t creations_per_minute = 20;
  /// Longest wait for the core's answers when a trigger's usage key is checked (key_check.hpp).
  std::chrono::milliseconds key_check_timeout{10000};
};

class service {
 public:
  /// Loads the scheduler's index from the store and starts the scheduler and the run workers.
  /// `s`, `t`, `log` and `c` must outlive the service.
  [[nodiscard]] static result<std::unique_ptr<service>> start(store& s, const tee::tee& t, http::logger& log,
                                                              const clock& c, service_config cfg);
  ~service();
  service(const service&) = delete;
  service& operator=(const service&) = delete;

  /// Mounts the routes on `server`. With `own_listener` the server serves nothing else, and the
  /// service also installs what core::mount provides on a shared listener: request ids, a log
  /// line per request, JSON error bodies for unrouted requests, exceptions and oversized bodies.
  /// `loopback_authorities` (loopback_authorities() of the bound listen address) are the domains
  /// sign-in accepts when no public URL is configured; with neither, sign-in is refused.
  void mount(httplib::Server& server, bool own_listener, std::vector<std::string> loopback_authorities = {});

  /// Stops the scheduler and the run workers; runs in flight are recorded first. Idempotent.
  void stop();

  [[nodiscard]] scheduler& schedules();
  [[nodiscard]] run_workers& workers();

  struct state;

 private:
  explicit service(std::unique_ptr<state> st);
  std::unique_ptr<state> st_;
};

/// `enact-server issue-token --data-dir DIR --user NAME [--client NAME]`: stores a new bearer
/// token for NAME in DIR/triggers.sqlite and prints it (one line) on stdout. Returns the exit
/// code (0 done, 1 failure, 2 usage error).
[[nodiscard]] int issue_token_command(int argc, char** argv);

}  // namespace enact::triggers
