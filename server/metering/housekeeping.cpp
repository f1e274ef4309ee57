// SPDX-License-Identifier: Apache-2.0
#include "metering/housekeeping.hpp"

#include <utility>

namespace enact::metering {

housekeeping::housekeeping(store& s, std::chrono::milliseconds period, report on_sweep)
    : store_(s), period_(period), report_(std::move(on_sweep)) {
  thread_ = std::thread([this] { loop(); });
}

housekeeping::~housekeeping() { stop(); }

void housekeeping::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable())
    thread_.join();
}

void housekeeping::sweep(store& s, const report& on_sweep) {
  const auto one = [&](std::string_view what, const result<uint64_t>& r) {
    if (on_sweep && (!r || *r > 0))
      on_sweep(what, r);
  };
  one("reservations", s.release_expired());
  one("idempotency_keys", s.expire_idempotency());
  one("nonces", s.expire_nonces());
}

void housekeeping::loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    lock.unlock();
    sweep(store_, report_);
    lock.lock();
    wake_.wait_for(lock, period_, [this] { return stopping_; });
  }
}

}  // namespace enact::metering
