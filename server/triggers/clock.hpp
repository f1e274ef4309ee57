// SPDX-License-Identifier: Apache-2.0
// Time for the trigger service: a `clock` the scheduler and the run workers read and sleep on, so
// that tests drive time with a `manual_clock` instead of sleeping (a 30-second schedule is tested
// in microseconds), and RFC 3339 formatting of the instants the API returns.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "triggers/store.hpp"

namespace enact::triggers {

class clock {
 public:
  virtual ~clock() = default;
  [[nodiscard]] virtual time_point now() const = 0;
  /// Blocks on `cv` (whose mutex `lock` holds, on entry and on return) until `deadline` on this
  /// clock, a notification of `cv`, or a spurious wakeup; callers re-check their condition.
  virtual void wait_until(std::unique_lock<std::mutex>& lock, std::condition_variable& cv,
                          time_point deadline) const = 0;
};

/// The system's UTC clock.
class system_clock final : public clock {
 public:
  [[nodiscard]] time_point now() const override;
  void wait_until(std::unique_lock<std::mutex>& lock, std::condition_variable& cv, time_point deadline) const override;
};

/// A clock that moves only when told to. A waiter wakes when `advance`/`set` pass its deadline;
/// it also re-checks every few real milliseconds, so a notification that races a wait is never
/// lost for long.
class manual_clock final : public clock {
 public:
  explicit manual_clock(time_point start) : now_(start) {}
  [[nodiscard]] time_point now() const override;
  void wait_until(std::unique_lock<std::mutex>& lock, std::condition_variable& cv, time_point deadline) const override;
  void advance(std::chrono::milliseconds d);
  void set(time_point t);

 private:
  mutable std::mutex mu_;
  time_point now_;
};

/// "2024-05-01T12:00:30.250Z" (milliseconds) or, with `millis` false, "2024-05-01T12:00:30Z".
[[nodiscard]] std::string to_rfc3339(time_point t, bool millis = true);
/// Parses what to_rfc3339 writes (UTC "Z" only, optional fraction of up to 9 digits).
[[nodiscard]] std::optional<time_point> from_rfc3339(std::string_view s);

}  // namespace enact::triggers
