// SPDX-License-Identifier: Apache-2.0
// The small shared parts: names of the approval states, identifiers, the clocks and RFC 3339 times.
#include <array>
#include <thread>

#include "enact/codec/hex.hpp"
#include "enact/crypto/random.hpp"
#include "enact/siwe/siwe.hpp"
#include "triggers/clock.hpp"
#include "triggers/ids.hpp"
#include "triggers/store.hpp"

namespace enact::triggers {

std::string_view to_string(approval_status s) noexcept {
  switch (s) {
    case approval_status::pending:
      return "pending";
    case approval_status::approved:
      return "approved";
    case approval_status::denied:
      return "denied";
  }
  return "pending";
}

// --- ids ---------------------------------------------------------------------------------------

namespace {
std::string random_id(std::string_view prefix) {
  std::array<uint8_t, 16> b{};
  crypto::random_bytes(b);
  return std::string(prefix) + codec::hex::encode(b);
}
}  // namespace

std::string new_trigger_id() { return random_id("trg_"); }
std::string new_run_id() { return random_id("run_"); }

bool is_id(std::string_view s, std::string_view prefix) noexcept {
  if (s.size() != prefix.size() + 32 || !s.starts_with(prefix))
    return false;
  for (char c : s.substr(prefix.size()))
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
      return false;
  return true;
}

// --- clocks ------------------------------------------------------------------------------------

time_point system_clock::now() const {
  return std::chrono::time_point_cast<std::chrono::milliseconds>(std::chrono::system_clock::now());
}

void system_clock::wait_until(std::unique_lock<std::mutex>& lock, std::condition_variable& cv,
                              time_point deadline) const {
  cv.wait_until(lock, deadline);
}

time_point manual_clock::now() const {
  std::lock_guard l(mu_);
  return now_;
}

void manual_clock::wait_until(std::unique_lock<std::mutex>& lock, std::condition_variable& cv,
                              time_point deadline) const {
  if (now() >= deadline)
    return;
  // The waiter's own mutex is not ours to notify under, so a short real-time wait stands in for
  // a wakeup by advance(): the caller re-checks the (simulated) time on return.
  cv.wait_for(lock, std::chrono::milliseconds(2));
}

void manual_clock::advance(std::chrono::milliseconds d) {
  std::lock_guard l(mu_);
  now_ += d;
}

void manual_clock::set(time_point t) {
  std::lock_guard l(mu_);
  now_ = t;
}

// --- RFC 3339 ----------------------------------------------------------------------------------

std::string to_rfc3339(time_point t, bool millis) {
  std::string out = siwe::format_time(t);  // "…T12:00:30.250Z"
  if (!millis)
    out.erase(out.size() - 5, 4);  // drops ".250"
  return out;
}

std::optional<time_point> from_rfc3339(std::string_view s) { return siwe::parse_time(s); }

}  // namespace enact::triggers
