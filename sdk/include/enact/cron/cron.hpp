// SPDX-License-Identifier: Apache-2.0
// Cron schedules for the trigger service (docs/protocol.md §4 "schedule" triggers): parsing of 5-field
// (minute hour day-of-month month day-of-week; seconds = 0) and 6-field (second first)
// expressions, the next fire time in UTC, and the shortest gap between firings, which the
// service uses to refuse schedules that fire more often than every 30 s.
//
// The accepted syntax and the fire times follow the npm package cron-parser (5.x) with
// tz 'UTC', which the trigger service's JavaScript side and the interop vectors use:
//  - per field: `*` (or `?`), a value, `a-b`, with an optional step `/n` after `*`, a range or a
//    value (`a/n` means `a-max/n`), and comma lists of those; month names JAN–DEC and day names
//    SUN–SAT in any case; day of week 0–7 with 0 and 7 both Sunday;
//  - a value named twice in one field (`1,1`, `1-5,3`, `0,7` in day of week) is an error, as is
//    a day of month that no allowed month has when day of week is `*` (`0 0 30 2 *`);
//  - day of month and day of week: when both are restricted (written other than exactly `*` or
//    `?` — `*/1` counts as restricted), a day matches if either matches; when one is `*`, the
//    other decides;
//  - macros (lowercase, whole expression): @yearly, @annually, @monthly, @weekly, @daily,
//    @midnight, @hourly, and cron-parser's @minutely, @secondly, @weekdays, @weekends.
// Not supported (rejected): `L`, `W`, `#`, `H`, fewer than 5 fields (cron-parser pads those),
// an empty expression. Expressions are limited to 1024 characters.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "enact/error.hpp"
#include "enact/result.hpp"

namespace enact {

enum class cron_errc {
  bad_field_count = 1,
  empty_field,
  bad_syntax,
  out_of_range,
  reversed_range,
  bad_step,
  unknown_name,
  duplicate_value,
  impossible_date,
  too_long,
};

}  // namespace enact
ENACT_ERRC(cron_errc, cron_category, "enact.cron", "expected 5 or 6 fields", "empty field or list item",
           "invalid syntax", "value out of range", "reversed range", "invalid step", "unknown month, day or macro name",
           "duplicate value", "day of month never occurs", "expression too long")

namespace enact::cron {

/// Longest expression `parse` accepts (characters), as cron-parser.
inline constexpr size_t kMaxExpressionLength = 1024;

/// A parsed cron expression: the set of allowed values of each field, and the text it came from.
class schedule {
 public:
  /// The expression exactly as given to `parse`.
  [[nodiscard]] std::string_view text() const noexcept { return text_; }

  /// Allowed values as bit sets: bit v set when value v is allowed. Day of week uses bits 0–6
  /// (Sunday = 0; a 7 in the expression is folded into 0).
  [[nodiscard]] uint64_t seconds() const noexcept { return seconds_; }
  [[nodiscard]] uint64_t minutes() const noexcept { return minutes_; }
  [[nodiscard]] uint32_t hours() const noexcept { return hours_; }
  [[nodiscard]] uint32_t days_of_month() const noexcept { return days_of_month_; }
  [[nodiscard]] uint16_t months() const noexcept { return months_; }
  [[nodiscard]] uint8_t days_of_week() const noexcept { return days_of_week_; }
  /// Whether the day-of-month / day-of-week field was written as exactly `*` or `?`.
  [[nodiscard]] bool day_of_month_is_wildcard() const noexcept { return dom_wildcard_; }
  [[nodiscard]] bool day_of_week_is_wildcard() const noexcept { return dow_wildcard_; }

 private:
  friend result<schedule> parse(std::string_view expr);
  std::string text_;
  uint64_t seconds_ = 0;
  uint64_t minutes_ = 0;
  uint32_t hours_ = 0;
  uint32_t days_of_month_ = 0;
  uint16_t months_ = 0;
  uint8_t days_of_week_ = 0;
  bool dom_wildcard_ = false;
  bool dow_wildcard_ = false;
};

/// Parses a 5- or 6-field expression or a macro. Errors name the field and the reason
/// ("hour: 24 out of range 0-23").
[[nodiscard]] result<schedule> parse(std::string_view expr);

/// Whether the schedule fires at `t` (UTC, whole seconds).
[[nodiscard]] bool fires_at(const schedule& s, std::chrono::sys_seconds t) noexcept;

/// The first fire time strictly after `t`, in UTC. Searches field by field (month, day, hour,
/// minute, second), never second by second. Every schedule `parse` accepts fires at least once in
/// any 8 calendar years (29 February is the rarest day: 2096 → 2104); the search gives up after
/// 10 years, and returns nullopt when `t` or the answer falls outside years 1–9999.
[[nodiscard]] std::optional<std::chrono::sys_seconds> next_after(const schedule& s,
                                                                 std::chrono::sys_seconds t) noexcept;

/// The smallest gap between two consecutive fire times, over all of time (UTC, no leap seconds),
/// computed exactly rather than sampled. With T the set of fire times within one day (seconds
/// since midnight: allowed hour × minute × second) and k the smallest number of days between two
/// consecutive days the schedule fires on (over the 400-year Gregorian cycle, in which weekdays
/// repeat too), it is the smaller of
///  - the smallest gap between consecutive members of T (gaps inside one day, across minute and
///    hour boundaries: `* * * * * *` → 1 s, `0,10 * * * * *` → 10 s), and
///  - k × 86400 − (max T − min T): from the last firing of a day to the first of the next firing
///    day (`0 0,23 * * *` → 3600 s; `0 0 * * *` → 86400 s).
/// Returns seconds::max() for a schedule that never fires (parse rejects those).
[[nodiscard]] std::chrono::seconds min_interval(const schedule& s) noexcept;

}  // namespace enact::cron
