// SPDX-License-Identifier: Apache-2.0
// The trigger service's housekeeping (docs/triggers.md "Runs and retries"): run history
// retention. With `[triggers] run_retention_days` set, runs that finished (success or failed)
// longer ago than that are deleted, at start and then every hour, in batches so that no
// transaction holds the store for long. Queued and running runs are never deleted.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <thread>

#include "enact/result.hpp"
#include "triggers/clock.hpp"
#include "triggers/store.hpp"

namespace enact::triggers {

/// Runs deleted per store transaction.
inline constexpr size_t kRetentionBatch = 1000;

/// Deletes every run that finished before `now - retention`; returns how many.
[[nodiscard]] result<size_t> delete_expired_runs(store& s, time_point now, std::chrono::hours retention);

/// A thread that calls delete_expired_runs at start and every `period` until stopped.
class run_retention {
 public:
  /// `on_sweep(deleted, error)` reports each sweep that deleted something or failed.
  using report = std::function<void(const result<size_t>&)>;
  run_retention(store& s, const clock& c, std::chrono::hours retention, std::chrono::milliseconds period,
                report on_sweep);
  ~run_retention();
  run_retention(const run_retention&) = delete;
  run_retention& operator=(const run_retention&) = delete;

  /// Stops the thread and waits for it (idempotent).
  void stop();

 private:
  void loop();

  store& store_;
  const clock& clock_;
  std::chrono::hours retention_;
  std::chrono::milliseconds period_;
  report report_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace enact::triggers
