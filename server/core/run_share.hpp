// SPDX-License-Identifier: Apache-2.0
// Each account's share of the action sandbox (docs/protocol.md §6 "Fair share"): the runs one account
// may have in flight at once, and the run wall time it may use per minute. The pool is shared by
// every account, so without a share one account's endless loops, one per worker, would make
// every other account's runs wait and fail with 503 while they last.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <unordered_map>

#include "enact/bytes.hpp"
#include "enact/result.hpp"

namespace enact::core {

struct run_share_limits {
  /// Runs of one account in flight at once; 0: no cap.
  size_t concurrent = 0;
  /// Run wall time one account may use per minute (a token bucket refilled evenly over the
  /// minute, a minute's worth deep); 0: no cap.
  std::chrono::milliseconds wall_per_minute{0};
};

class run_share {
 public:
  explicit run_share(run_share_limits limits) : limits_(limits) {}
  run_share(const run_share&) = delete;
  run_share& operator=(const run_share&) = delete;

  /// One admitted run: counted in flight until destroyed; ran() charges its wall time.
  class ticket {
   public:
    ticket() = default;
    ticket(ticket&& o) noexcept : owner_(o.owner_), account_(o.account_) { o.owner_ = nullptr; }
    ticket& operator=(ticket&&) = delete;
    ticket(const ticket&) = delete;
    ~ticket();
    /// The run took `wall` of a worker's time: charged against the account's minute.
    void ran(std::chrono::milliseconds wall);

   private:
    friend class run_share;
    ticket(run_share* owner, const hash256& account) : owner_(owner), account_(account) {}
    run_share* owner_ = nullptr;
    hash256 account_{};
  };

  /// Admits a run of `account`, or refuses it with rate_limited: the account has `concurrent`
  /// runs in flight, or has used its minute of wall time. `retry_after` is set to the seconds
  /// after which a retry may be admitted (at least 1).
  [[nodiscard]] result<ticket> enter(const hash256& account, int& retry_after);

  [[nodiscard]] const run_share_limits& limits() const { return limits_; }

 private:
  using steady = std::chrono::steady_clock;
  struct entry {
    size_t running = 0;
    double budget_ms = 0;  // may go below zero: a run's wall time is known only once it ran
    steady::time_point refilled{};
  };
  struct hash_of {
    size_t operator()(const hash256& h) const noexcept;
  };
  void refill(entry& e, steady::time_point now) const;
  /// Nothing in flight and a full minute: the entry holds nothing worth keeping.
  bool forgettable(entry& e, steady::time_point now) const;
  void leave(const hash256& account);
  /// Drops the accounts with nothing in flight and a full minute; called now and then by enter.
  void forget_idle(steady::time_point now);
  void charge(const hash256& account, std::chrono::milliseconds wall);

  run_share_limits limits_;
  std::mutex mu_;
  std::unordered_map<hash256, entry, hash_of> accounts_;
  uint64_t enters_ = 0;
};

}  // namespace enact::core
