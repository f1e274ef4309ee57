// SPDX-License-Identifier: Apache-2.0
// The run workers (docs/architecture.md §4): a pool of threads that lease due runs from the store and run
// each through the core service's POST /core/v1/run_action over HTTP, with the trigger's usage
// key (unsealed for the call, wiped after it, never logged), its action CID and PKP, and the run's
// params. Outcomes:
//  - 200: success, `response` recorded;
//  - 422 action_failed: failed, error {code, message, stack} (the JavaScript stack);
//  - transient (5xx, 429, connection failure, timeout): retried with exponential backoff and
//    jitter (a Retry-After is honoured): the specification's "retried up to 3 times" is 3 retries
//    after the first attempt, max_attempts (4) attempts in all, then failed with the last error;
//  - any other 4xx: failed at once; a schedule whose runs fail so for lack of credits
//    (402 insufficient_credits) disable_after_credit_failures times in a row is disabled.
// Every attempt of a run carries the run's id as its Idempotency-Key (docs/protocol.md §0
// "Idempotency"), so a retry after an answer that was lost in transit gets that answer again
// instead of a second run and charge; a 409 conflict with Retry-After (an earlier attempt still
// leased on the core) is waited for within core_timeout, neither an attempt nor a failure.
// A lease is renewed while its call runs, so a slow action is not taken by another worker; a
// worker that dies leaves its lease to expire and the run to be picked up again.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "triggers/clock.hpp"
#include "triggers/scheduler.hpp"
#include "triggers/store.hpp"

namespace enact::tee {
class tee;
}

namespace enact::triggers {

struct worker_config {
  /// Base URL of the core service ("http://127.0.0.1:8080"); /core/v1/run_action is under it.
  std::string core_url;
  size_t threads = 4;
  /// Attempts in all: the first one and up to kMaxRunRetries retries.
  uint32_t max_attempts = kMaxRunAttempts;
  /// Backoff before the second attempt; doubled for each further one, with jitter.
  std::chrono::milliseconds retry_base{1000};
  std::chrono::milliseconds retry_cap{60000};
  std::chrono::milliseconds lease{30000};
  /// Longest wait for the core's answer to one attempt.
  std::chrono::milliseconds core_timeout{120000};
  /// Longest idle sleep: runs queued by another process are seen within this.
  std::chrono::milliseconds idle_poll{5000};
  /// Names this process's workers in leases ("<instance>/<n>"); empty: random.
  std::string instance_id;
  /// A schedule trigger whose runs failed this many times in a row with insufficient_credits is
  /// disabled (store::fail_run; docs/protocol.md §4 "Limits"). 0: never.
  uint32_t disable_after_credit_failures = 5;
};

/// The wait before attempt `attempts + 1`: base × 2^(attempts − 1), drawn uniformly from its upper
/// half (jitter, so retries of many runs spread out), at most `cap`.
[[nodiscard]] std::chrono::milliseconds retry_backoff(std::chrono::milliseconds base, uint32_t attempts,
                                                      std::chrono::milliseconds cap);

class run_context;

class run_workers {
 public:
  run_workers(store& s, const tee::tee& t, const clock& c, worker_config cfg, event_sink log = {});
  ~run_workers();
  run_workers(const run_workers&) = delete;
  run_workers& operator=(const run_workers&) = delete;

  void start();
  /// Stops leasing; returns when every run in flight has been recorded (idempotent).
  void stop();
  /// A run was queued: wakes an idle worker.
  void notify();

 private:
  void work(size_t index);
  void renew_leases();
  void execute(run_context& ctx, leased_run& l);
  /// Sleeps `wait` on the service's clock; false (at once) when stop() is called.
  bool wait_unless_stopping(std::chrono::milliseconds wait);
  void report(severity level, std::string_view msg, json::object fields) const;

  store& store_;
  const tee::tee& tee_;
  const clock& clock_;
  worker_config cfg_;
  event_sink log_;

  std::mutex mu_;
  std::condition_variable wake_;  // idle workers
  std::condition_variable wake_renewer_;
  uint64_t signals_ = 0;
  bool stopping_ = false;
  std::map<std::string, lease_ref> in_flight_;  // run id → lease
  std::vector<std::thread> threads_;
  std::thread renewer_;
};

}  // namespace enact::triggers
