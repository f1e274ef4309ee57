// SPDX-License-Identifier: Apache-2.0
#pragma once
// RFC 3339 date-times: the one parser and formatter the SDK, the server and the CLI share.
//
// parse() takes what people and programs write: JavaScript's toISOString()
// ("2026-11-01T12:00:30.250Z"), whole seconds ("2026-11-01T12:00:30Z"), a lowercase "t"/"z", a
// fraction of 1 to 9 digits, and a numeric offset ("+02:00", "-05:30"), which it converts to UTC.
// A leap second (":60") counts as the first instant of the next minute, as POSIX time has no
// leap seconds. Anything else (a date-only string, a missing zone, a space for "T", an offset
// beyond ±23:59, a day that does not exist) is refused with nullopt: the caller names the field.
// format() always writes UTC with "Z", with 0, 3, 6 or 9 fraction digits.

#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

namespace enact::codec::rfc3339 {

using time_point = std::chrono::sys_time<std::chrono::nanoseconds>;

namespace detail {

inline bool digits(std::string_view s, size_t at, size_t len, int& out) noexcept {
  if (at + len > s.size())
    return false;
  for (size_t i = at; i < at + len; ++i)
    if (s[i] < '0' || s[i] > '9')
      return false;
  const auto [end, ec] = std::from_chars(s.data() + at, s.data() + at + len, out);
  return ec == std::errc{} && end == s.data() + at + len;
}

}  // namespace detail

/// Parses an RFC 3339 date-time (see the file comment); nullopt when `s` is not one.
[[nodiscard]] inline std::optional<time_point> parse(std::string_view s) noexcept {
  using namespace std::chrono;
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, se = 0;
  if (s.size() < 20 || !detail::digits(s, 0, 4, y) || s[4] != '-' || !detail::digits(s, 5, 2, mo) || s[7] != '-' ||
      !detail::digits(s, 8, 2, d) || (s[10] != 'T' && s[10] != 't') || !detail::digits(s, 11, 2, h) || s[13] != ':' ||
      !detail::digits(s, 14, 2, mi) || s[16] != ':' || !detail::digits(s, 17, 2, se))
    return std::nullopt;
  const year_month_day ymd{year{y}, month{static_cast<unsigned>(mo)}, day{static_cast<unsigned>(d)}};
  if (!ymd.ok() || h > 23 || mi > 59 || se > 60)
    return std::nullopt;
  size_t at = 19;
  int64_t frac_ns = 0;
  if (at < s.size() && s[at] == '.') {
    ++at;
    int64_t scale = 100'000'000;
    size_t n = 0;
    while (at < s.size() && s[at] >= '0' && s[at] <= '9') {
      if (++n > 9)
        return std::nullopt;
      frac_ns += (s[at] - '0') * scale;
      scale /= 10;
      ++at;
    }
    if (n == 0)
      return std::nullopt;
  }
  minutes offset{0};
  const std::string_view zone = s.substr(at);
  if (zone != "Z" && zone != "z") {
    int oh = 0, om = 0;
    if (zone.size() != 6 || (zone[0] != '+' && zone[0] != '-') || !detail::digits(zone, 1, 2, oh) || zone[3] != ':' ||
        !detail::digits(zone, 4, 2, om) || oh > 23 || om > 59)
      return std::nullopt;
    offset = minutes{(zone[0] == '-' ? -1 : 1) * (oh * 60 + om)};
  }
  // Local time minus the offset is UTC ("12:00+02:00" is 10:00Z).
  return time_point{sys_days{ymd}} + hours{h} + minutes{mi} + seconds{se} + nanoseconds{frac_ns} - offset;
}

/// `t` in UTC as "YYYY-MM-DDTHH:MM:SS[.f]Z" with `fraction_digits` (0, 3, 6 or 9; others are
/// rounded down to the nearest of those) digits after the seconds, truncated, not rounded.
[[nodiscard]] inline std::string format(time_point t, unsigned fraction_digits = 0) {
  using namespace std::chrono;
  const auto day_start = floor<days>(t);
  const year_month_day ymd{day_start};
  const auto in_day = t - day_start;
  const auto secs = duration_cast<seconds>(in_day).count();
  const auto ns = (in_day - seconds{secs}).count();
  char buf[48];
  int n = std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02lld:%02lld:%02lld", static_cast<int>(ymd.year()),
                        static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()),
                        static_cast<long long>(secs / 3600), static_cast<long long>(secs / 60 % 60),
                        static_cast<long long>(secs % 60));
  std::string out(buf, static_cast<size_t>(n));
  const unsigned keep = fraction_digits >= 9 ? 9 : fraction_digits >= 6 ? 6 : fraction_digits >= 3 ? 3 : 0;
  if (keep != 0) {
    n = std::snprintf(buf, sizeof buf, ".%09lld", static_cast<long long>(ns));
    out.append(buf, 1 + keep);
  }
  out += 'Z';
  return out;
}

/// Convenience: parse() truncated to a coarser clock (seconds, milliseconds, microseconds).
template <class Duration>
[[nodiscard]] std::optional<std::chrono::sys_time<Duration>> parse_as(std::string_view s) noexcept {
  const auto t = parse(s);
  if (!t)
    return std::nullopt;
  return std::chrono::floor<Duration>(*t);
}

}  // namespace enact::codec::rfc3339
