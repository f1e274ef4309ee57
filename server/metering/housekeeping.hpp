// SPDX-License-Identifier: Apache-2.0
// The metering store's housekeeping (docs/architecture.md §4 "Request path of run action"): a
// thread that, at start and then every period (an hour in the server), deletes the reservations
// that expired (the holds of a server that died), the Idempotency-Keys older than
// kIdempotencyRetention and the single-use values whose use expired (store::use_once). All are
// also harmless to skip: an expired reservation holds nothing, an expired key is free again and
// an expired use is recorded again, so the sweep only keeps the tables small. A run's reservation
// expires after the run's budget (core/credits.hpp run_budget, 46 s by default) and a relayed
// write's after 15 minutes, so a killed server's held credits are available again from then on,
// whenever the sweep comes.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string_view>
#include <thread>

#include "metering/store.hpp"

namespace enact::metering {

class housekeeping {
 public:
  /// `on_sweep(what, deleted)` reports each sweep that deleted rows (`what` "reservations",
  /// "idempotency_keys" or "nonces") or failed (deleted holds the error).
  using report = std::function<void(std::string_view what, const result<uint64_t>& deleted)>;
  housekeeping(store& s, std::chrono::milliseconds period, report on_sweep);
  ~housekeeping();
  housekeeping(const housekeeping&) = delete;
  housekeeping& operator=(const housekeeping&) = delete;

  /// Stops the thread and waits for it (idempotent).
  void stop();

  /// One sweep, as the thread makes it.
  static void sweep(store& s, const report& on_sweep);

 private:
  void loop();

  store& store_;
  std::chrono::milliseconds period_;
  report report_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace enact::metering
