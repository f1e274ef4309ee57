// The small shared parts: names of the approval states, identifiers, the clocks and RFC 3339 times.
#include <array>
#include <charconv>
#include <thread>

#include "enact/codec/hex.hpp"
#include "enact/crypto/random.hpp"
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
  random_bytes(b);
  return std::string(prefix) + hex::encode(b);
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
  using namespace std::chrono;
  const auto day = floor<days>(t);
  const year_month_day ymd{day};
  const auto ms = (t - day).count();  // milliseconds into the day
  const auto secs = ms / 1000;
  char buf[40];
  const int y = static_cast<int>(ymd.year());
  int n = std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02lld:%02lld:%02lld", y, static_cast<unsigned>(ymd.month()),
                        static_cast<unsigned>(ymd.day()), static_cast<long long>(secs / 3600),
                        static_cast<long long>(secs / 60 % 60), static_cast<long long>(secs % 60));
  if (millis)
    n += std::snprintf(buf + n, sizeof buf - n, ".%03lld", static_cast<long long>(ms % 1000));
  std::string out(buf, static_cast<size_t>(n));
  out += 'Z';
  return out;
}

std::optional<time_point> from_rfc3339(std::string_view s) {
  using namespace std::chrono;
  const auto num = [&](size_t at, size_t len, int& out) {
    if (at + len > s.size())
      return false;
    const auto [end, ec] = std::from_chars(s.data() + at, s.data() + at + len, out);
    return ec == std::errc{} && end == s.data() + at + len;
  };
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, se = 0;
  if (s.size() < 20 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' || !num(0, 4, y) ||
      !num(5, 2, mo) || !num(8, 2, d) || !num(11, 2, h) || !num(14, 2, mi) || !num(17, 2, se))
    return std::nullopt;
  const year_month_day ymd{year{y}, month{static_cast<unsigned>(mo)}, day{static_cast<unsigned>(d)}};
  if (!ymd.ok() || h > 23 || mi > 59 || se > 59)
    return std::nullopt;
  size_t at = 19;
  int64_t frac_ms = 0;
  if (at < s.size() && s[at] == '.') {
    ++at;
    size_t digits = 0;
    int64_t scale = 100;
    while (at < s.size() && s[at] >= '0' && s[at] <= '9' && digits < 9) {
      frac_ms += (s[at] - '0') * scale;
      scale /= 10;
      ++at;
      ++digits;
    }
    if (digits == 0)
      return std::nullopt;
  }
  if (at + 1 != s.size() || s[at] != 'Z')
    return std::nullopt;
  return time_point{sys_days{ymd}.time_since_epoch() + hours{h} + minutes{mi} + seconds{se} + milliseconds{frac_ms}};
}

}  // namespace enact::triggers
