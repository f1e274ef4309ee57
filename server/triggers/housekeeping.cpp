// SPDX-License-Identifier: Apache-2.0
#include "triggers/housekeeping.hpp"

namespace enact::triggers {

result<size_t> delete_expired_runs(store& s, time_point now, std::chrono::hours retention) {
  const time_point cutoff = now - retention;
  size_t total = 0;
  for (;;) {
    ENACT_TRY(const size_t n, s.delete_finished_runs(cutoff, kRetentionBatch));
    total += n;
    if (n < kRetentionBatch)
      return total;
  }
}

run_retention::run_retention(store& s, const clock& c, std::chrono::hours retention, std::chrono::milliseconds period,
                             report on_sweep)
    : store_(s), clock_(c), retention_(retention), period_(period), report_(std::move(on_sweep)) {
  thread_ = std::thread([this] { loop(); });
}

run_retention::~run_retention() { stop(); }

void run_retention::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable())
    thread_.join();
}

void run_retention::loop() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    lock.unlock();
    const result<size_t> swept = delete_expired_runs(store_, clock_.now(), retention_);
    if (report_ && (!swept || *swept > 0))
      report_(swept);
    lock.lock();
    wake_.wait_for(lock, period_, [this] { return stopping_; });
  }
}

}  // namespace enact::triggers
