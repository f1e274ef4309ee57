// SPDX-License-Identifier: Apache-2.0
// The scheduler of schedule triggers (docs/architecture.md §4): due times in an ordered index — a min-heap in
// memory, rebuilt from the store's persisted next-due times at start — and one thread that sleeps
// until the earliest due time or a change, so it never scans all triggers.
//
// Firing rules:
//  - a firing writes its run and the trigger's next due time in one transaction
//    (store::fire_schedule), conditional on the due time it read, so a firing is never lost or
//    doubled by a concurrent change (or, with a shared store, by another instance);
//  - `scheduled_at` is the planned fire time (RFC 3339 UTC, whole seconds), not the time the
//    thread woke;
//  - firings missed while the service was down (or stalled) are collapsed: the trigger fires ONCE,
//    for the latest planned time that has passed, and is next due at its first fire time after
//    now. No burst after a restart.
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <queue>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "enact/cron/cron.hpp"
#include "triggers/clock.hpp"
#include "triggers/store.hpp"

namespace enact::triggers {

enum class severity { debug, info, warn, error };
/// Where the trigger components report what they did and what went wrong (the server log).
using event_sink = std::function<void(severity, std::string_view message, json::object fields)>;

/// The params of a schedule firing: {"source": "schedule", "scheduled_at", "cron"} (docs/protocol.md §4).
[[nodiscard]] json::object schedule_params(time_point planned, std::string_view cron);

/// The latest fire time of `s` that is at or before `now`, given `due` (a fire time ≤ now).
[[nodiscard]] std::chrono::sys_seconds latest_fire(const cron::schedule& s, std::chrono::sys_seconds due,
                                                   std::chrono::sys_seconds now);

class scheduler {
 public:
  /// `on_fired` runs after each firing's commit (it wakes the run workers); `log` gets failures.
  scheduler(store& s, const clock& c, std::function<void()> on_fired = {}, event_sink log = {});
  ~scheduler();
  scheduler(const scheduler&) = delete;
  scheduler& operator=(const scheduler&) = delete;

  /// Builds the index from the store (every enabled schedule trigger). A trigger without a stored
  /// state gets its first due time after now, written back.
  [[nodiscard]] result<void> load();
  /// Starts the thread that fires due triggers as the clock reaches them.
  void start();
  /// Stops the thread (idempotent); the index stays.
  void stop();

  /// Fires every trigger due at the clock's now; returns the number of runs queued. The thread
  /// calls this; tests call it directly after moving a manual clock.
  size_t fire_due();

  /// Called (under the scheduler's lock: it must be quick) for every firing once its run is
  /// committed, with the planned time and the clock's time after the commit: firing lateness,
  /// for metrics and bench/scheduler_bench.
  void set_observer(std::function<void(time_point planned, time_point committed)> f);

  /// Re-reads one trigger from the store after a create, update or delete, and wakes the thread.
  void refresh(std::string_view trigger_id);

  /// The earliest due time in the index.
  [[nodiscard]] std::optional<time_point> next_due() const;
  /// Triggers in the index.
  [[nodiscard]] size_t size() const;

 private:
  struct entry {
    cron::schedule schedule;
    time_point due{};
    uint64_t generation = 0;
  };
  struct slot {
    time_point due;
    std::string trigger_id;
    uint64_t generation;
    /// Slots due together in the order their triggers were indexed (generations are unique),
    /// which compares integers where the ids would compare strings.
    bool operator>(const slot& o) const { return due != o.due ? due > o.due : generation > o.generation; }
  };

  /// Puts `t` into the index (mu_ held).
  void index(const scheduled_trigger& t);
  void refresh_locked(std::string_view trigger_id);
  void run();
  void report(std::string_view msg, json::object fields) const;  // warn

  store& store_;
  const clock& clock_;
  std::function<void()> on_fired_;
  event_sink log_;
  std::function<void(time_point, time_point)> observer_;

  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::unordered_map<std::string, entry> entries_;
  std::priority_queue<slot, std::vector<slot>, std::greater<slot>> heap_;
  uint64_t generation_ = 0;
  bool changed_ = false;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace enact::triggers
