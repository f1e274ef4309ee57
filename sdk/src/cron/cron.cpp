// SPDX-License-Identifier: Apache-2.0
// Cron parsing and fire-time search. Field values are kept as bit sets so that "next allowed
// value at or after v" is one mask and one count-trailing-zeros. Calendar arithmetic uses the
// days-from-civil algorithms (proleptic Gregorian, day 0 = 1970-01-01), in 64-bit integers.
#include "enact/cron/cron.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <limits>
#include <vector>

namespace enact::cron {

namespace {

using std::chrono::seconds;
using std::chrono::sys_seconds;

constexpr int64_t kSecondsPerDay = 86400;
/// Every accepted schedule fires within 8 calendar years; the search stops after this many.
constexpr int64_t kHorizonYears = 10;
constexpr int64_t kMinYear = 1;
constexpr int64_t kMaxYear = 9999;
/// Days in the 400-year Gregorian cycle (a multiple of 7, so weekdays repeat with it).
constexpr int64_t kDaysPer400Years = 146097;

struct field_spec {
  const char* name;
  unsigned min;
  unsigned max;
  const char* const* names;  // 3-letter names for values names_base, names_base + 1, …
  unsigned names_count;
  unsigned names_base;
  bool day_of_week;
};

constexpr const char* kMonthNames[] = {"jan", "feb", "mar", "apr", "may", "jun",
                                       "jul", "aug", "sep", "oct", "nov", "dec"};
constexpr const char* kDayNames[] = {"sun", "mon", "tue", "wed", "thu", "fri", "sat"};

constexpr field_spec kSecond{"second", 0, 59, nullptr, 0, 0, false};
constexpr field_spec kMinute{"minute", 0, 59, nullptr, 0, 0, false};
constexpr field_spec kHour{"hour", 0, 23, nullptr, 0, 0, false};
constexpr field_spec kDayOfMonth{"day of month", 1, 31, nullptr, 0, 0, false};
constexpr field_spec kMonth{"month", 1, 12, kMonthNames, 12, 1, false};
constexpr field_spec kDayOfWeek{"day of week", 0, 7, kDayNames, 7, 0, true};

// cron-parser's predefined expressions, plus @midnight (Vixie cron's name for @daily).
struct macro {
  std::string_view name;
  std::string_view expansion;
};
constexpr macro kMacros[] = {
    {"@yearly", "0 0 0 1 1 *"},     {"@annually", "0 0 0 1 1 *"},   {"@monthly", "0 0 0 1 * *"},
    {"@weekly", "0 0 0 * * 0"},     {"@daily", "0 0 0 * * *"},      {"@midnight", "0 0 0 * * *"},
    {"@hourly", "0 0 * * * *"},     {"@minutely", "0 * * * * *"},   {"@secondly", "* * * * * *"},
    {"@weekdays", "0 0 0 * * 1-5"}, {"@weekends", "0 0 0 * * 0,6"},
};

bool is_space(char c) noexcept { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }
bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }
char lower(char c) noexcept { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

std::string quoted(std::string_view s) { return "'" + std::string(s) + "'"; }

error field_error(cron_errc code, const field_spec& f, const std::string& reason) {
  return fail(code, std::string(f.name) + ": " + reason);
}

/// A number (decimal digits; saturates far above any field maximum) or, where the field has
/// them, a 3-letter name in any case.
result<unsigned> parse_value(std::string_view s, const field_spec& f) {
  if (s.empty())
    return field_error(cron_errc::bad_syntax, f, "missing value");
  if (is_digit(s[0])) {
    unsigned v = 0;
    for (const char c : s) {
      if (!is_digit(c))
        return field_error(cron_errc::bad_syntax, f, "invalid value " + quoted(s));
      v = std::min(v * 10 + static_cast<unsigned>(c - '0'), 1000000u);
    }
    return v;
  }
  const bool letters = std::all_of(s.begin(), s.end(), [](char c) { return lower(c) >= 'a' && lower(c) <= 'z'; });
  if (f.names != nullptr && letters) {
    if (s.size() == 3) {
      const std::string l{lower(s[0]), lower(s[1]), lower(s[2])};
      for (unsigned i = 0; i < f.names_count; ++i)
        if (l == f.names[i])
          return f.names_base + i;
    }
    return field_error(cron_errc::unknown_name, f, "unknown name " + quoted(s));
  }
  return field_error(cron_errc::bad_syntax, f, "invalid value " + quoted(s));
}

result<void> check_range(unsigned v, const field_spec& f) {
  if (v < f.min || v > f.max)
    return field_error(cron_errc::out_of_range, f,
                       std::to_string(v) + " out of range " + std::to_string(f.min) + "-" + std::to_string(f.max));
  return {};
}

/// The value set of one list item: `*`, `v`, `a-b`, each optionally followed by `/step`.
result<uint64_t> parse_item(std::string_view item, const field_spec& f) {
  std::string_view base = item;
  unsigned step = 1;
  bool stepped = false;
  if (const size_t slash = item.find('/'); slash != std::string_view::npos) {
    base = item.substr(0, slash);
    const std::string_view step_text = item.substr(slash + 1);
    if (step_text.find('/') != std::string_view::npos)
      return field_error(cron_errc::bad_syntax, f, "more than one step in " + quoted(item));
    if (step_text.empty() || !std::all_of(step_text.begin(), step_text.end(), is_digit))
      return field_error(cron_errc::bad_step, f, "invalid step " + quoted(step_text));
    ENACT_TRY(step, parse_value(step_text, f));
    if (step == 0)
      return field_error(cron_errc::bad_step, f, "step 0 in " + quoted(item));
    stepped = true;
  }
  if (base.empty())
    return field_error(cron_errc::bad_syntax, f, "missing value in " + quoted(item));

  unsigned lo = 0;
  unsigned hi = 0;
  if (base == "*" || base == "?") {
    lo = f.min;
    hi = f.max;
  } else if (const size_t dash = base.find('-'); dash != std::string_view::npos) {
    const std::string_view a = base.substr(0, dash);
    const std::string_view b = base.substr(dash + 1);
    if (a.empty() || b.empty() || b.find('-') != std::string_view::npos)
      return field_error(cron_errc::bad_syntax, f, "invalid range " + quoted(base));
    ENACT_TRY(lo, parse_value(a, f));
    ENACT_TRY(hi, parse_value(b, f));
    ENACT_TRY_VOID(check_range(lo, f));
    ENACT_TRY_VOID(check_range(hi, f));
    if (lo > hi)
      return field_error(cron_errc::reversed_range, f, "reversed range " + quoted(base));
  } else {
    ENACT_TRY(lo, parse_value(base, f));
    ENACT_TRY_VOID(check_range(lo, f));
    if (!stepped) {
      // A lone 7 in day of week is Sunday.
      const unsigned v = f.day_of_week ? lo % 7 : lo;
      return uint64_t{1} << v;
    }
    hi = f.max;  // `a/n` is `a-max/n`
  }

  uint64_t mask = 0;
  for (uint64_t v = lo; v <= hi; v += step)
    mask |= uint64_t{1} << v;
  // cron-parser: a day-of-week range that lands on 7 also holds Sunday as 0, so `5-7,0` names
  // Sunday twice while `0-7` does not.
  if (f.day_of_week && hi % 7 == 0 && (hi - lo) % step == 0)
    mask |= 1;
  return mask;
}

struct parsed_field {
  uint64_t mask = 0;
  bool wildcard = false;
};

result<parsed_field> parse_field(std::string_view text, const field_spec& f) {
  parsed_field out;
  out.wildcard = text == "*" || text == "?";
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    const std::string_view item =
        text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    if (item.empty())
      return field_error(cron_errc::empty_field, f, "empty list item in " + quoted(text));
    for (const char c : item) {
      const bool ok = is_digit(c) || c == '*' || c == '?' || c == '-' || c == '/' ||
                      (f.names != nullptr && lower(c) >= 'a' && lower(c) <= 'z');
      if (!ok)
        return field_error(cron_errc::bad_syntax, f,
                           "unexpected character " + quoted(std::string_view(&c, 1)) + " in " + quoted(text));
    }
    if ((item.find('*') != std::string_view::npos || item.find('?') != std::string_view::npos) &&
        !(item.starts_with("*") || item.starts_with("?")))
      return field_error(cron_errc::bad_syntax, f, "misplaced wildcard in " + quoted(item));
    ENACT_TRY(const uint64_t m, parse_item(item, f));
    if (const uint64_t dup = m & out.mask; dup != 0)
      return field_error(cron_errc::duplicate_value, f, "duplicate value " + std::to_string(std::countr_zero(dup)));
    out.mask |= m;
    if (comma == std::string_view::npos)
      break;
    start = comma + 1;
  }
  if (f.day_of_week)
    out.mask = (out.mask | (out.mask >> 7)) & 0x7f;  // 7 is Sunday
  return out;
}

// ---- calendar ------------------------------------------------------------------------------

int64_t floor_div(int64_t a, int64_t b) noexcept { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

int64_t days_from_civil(int64_t y, unsigned m, unsigned d) noexcept {
  y -= m <= 2;
  const int64_t era = floor_div(y, 400);
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * kDaysPer400Years + static_cast<int64_t>(doe) - 719468;
}

struct civil {
  int64_t y;
  unsigned m;
  unsigned d;
};

civil civil_from_days(int64_t z) noexcept {
  z += 719468;
  const int64_t era = floor_div(z, kDaysPer400Years);
  const auto doe = static_cast<unsigned>(z - era * kDaysPer400Years);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  const unsigned d = doy - (153 * mp + 2) / 5 + 1;
  const unsigned m = mp < 10 ? mp + 3 : mp - 9;
  return {static_cast<int64_t>(yoe) + era * 400 + (m <= 2), m, d};
}

bool is_leap(int64_t y) noexcept { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

unsigned days_in_month(int64_t y, unsigned m) noexcept {
  constexpr unsigned kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && is_leap(y) ? 29 : kDays[m - 1];
}

/// 0 = Sunday.
unsigned weekday(int64_t z) noexcept {
  const int64_t r = (z + 4) % 7;  // 1970-01-01 was a Thursday
  return static_cast<unsigned>(r < 0 ? r + 7 : r);
}

/// Lowest set bit of `mask` at or above `from`, or -1.
int next_bit(uint64_t mask, unsigned from) noexcept {
  if (from >= 64)
    return -1;
  const uint64_t m = mask & (~uint64_t{0} << from);
  return m == 0 ? -1 : std::countr_zero(m);
}

bool day_matches(const schedule& s, unsigned dom, unsigned dow) noexcept {
  const bool dom_hit = (s.days_of_month() >> dom) & 1u;
  const bool dow_hit = (s.days_of_week() >> dow) & 1u;
  // cron-parser CronExpression#matchDayOfMonth: both restricted → either; otherwise the
  // restricted one (day of month when both are wildcards, which then matches every day).
  if (!s.day_of_month_is_wildcard() && !s.day_of_week_is_wildcard())
    return dom_hit || dow_hit;
  if (s.day_of_week_is_wildcard())
    return dom_hit;
  return dow_hit;
}

// Fire times are kept within years kMinYear..kMaxYear.
const int64_t kMinSeconds = days_from_civil(kMinYear, 1, 1) * kSecondsPerDay;
const int64_t kMaxSeconds = days_from_civil(kMaxYear + 1, 1, 1) * kSecondsPerDay - 1;

}  // namespace

result<schedule> parse(std::string_view expr) {
  if (expr.size() > kMaxExpressionLength)
    return fail(cron_errc::too_long, "cron: " + std::to_string(expr.size()) + " characters, at most " +
                                         std::to_string(kMaxExpressionLength));
  std::string_view body = expr;
  while (!body.empty() && is_space(body.front()))
    body.remove_prefix(1);
  while (!body.empty() && is_space(body.back()))
    body.remove_suffix(1);

  if (body.starts_with("@")) {
    const auto it =
        std::find_if(std::begin(kMacros), std::end(kMacros), [&](const macro& m) { return m.name == body; });
    if (it == std::end(kMacros))
      return fail(cron_errc::unknown_name, "cron: unknown macro " + quoted(body));
    body = it->expansion;
  }

  std::vector<std::string_view> fields;
  for (size_t i = 0; i < body.size();) {
    if (is_space(body[i])) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < body.size() && !is_space(body[j]))
      ++j;
    fields.push_back(body.substr(i, j - i));
    i = j;
  }
  if (fields.size() != 5 && fields.size() != 6)
    return fail(cron_errc::bad_field_count, "cron: expected 5 or 6 fields, got " + std::to_string(fields.size()));
  const bool has_seconds = fields.size() == 6;
  const size_t o = has_seconds ? 1 : 0;

  schedule s;
  s.text_ = std::string(expr);
  if (has_seconds) {
    ENACT_TRY(const parsed_field sec, parse_field(fields[0], kSecond));
    s.seconds_ = sec.mask;
  } else {
    s.seconds_ = 1;  // second 0
  }
  ENACT_TRY(const parsed_field min, parse_field(fields[o + 0], kMinute));
  ENACT_TRY(const parsed_field hour, parse_field(fields[o + 1], kHour));
  ENACT_TRY(const parsed_field dom, parse_field(fields[o + 2], kDayOfMonth));
  ENACT_TRY(const parsed_field mon, parse_field(fields[o + 3], kMonth));
  ENACT_TRY(const parsed_field dow, parse_field(fields[o + 4], kDayOfWeek));
  s.minutes_ = min.mask;
  s.hours_ = static_cast<uint32_t>(hour.mask);
  s.days_of_month_ = static_cast<uint32_t>(dom.mask);
  s.months_ = static_cast<uint16_t>(mon.mask);
  s.days_of_week_ = static_cast<uint8_t>(dow.mask);
  s.dom_wildcard_ = dom.wildcard;
  s.dow_wildcard_ = dow.wildcard;

  // cron-parser rejects a day of month that none of the months has, unless day of week (OR-ed
  // with it) can still match: `0 0 30 2 *` would never fire.
  if (s.dow_wildcard_) {
    unsigned longest = 0;
    for (unsigned m = 1; m <= 12; ++m)
      if ((s.months_ >> m) & 1u)
        longest = std::max(longest, m == 2 ? 29u : days_in_month(2001, m));
    const int first_day = std::countr_zero(s.days_of_month_);
    if (static_cast<unsigned>(first_day) > longest)
      return fail(cron_errc::impossible_date,
                  "day of month: day " + std::to_string(first_day) + " never occurs in the allowed months");
  }
  return s;
}

bool fires_at(const schedule& s, sys_seconds t) noexcept {
  const int64_t secs = t.time_since_epoch().count();
  if (secs < kMinSeconds || secs > kMaxSeconds)
    return false;
  const int64_t z = floor_div(secs, kSecondsPerDay);
  const auto sod = static_cast<unsigned>(secs - z * kSecondsPerDay);
  const civil c = civil_from_days(z);
  return ((s.seconds() >> (sod % 60)) & 1u) && ((s.minutes() >> (sod / 60 % 60)) & 1u) &&
         ((s.hours() >> (sod / 3600)) & 1u) && ((s.months() >> c.m) & 1u) && day_matches(s, c.d, weekday(z));
}

std::optional<sys_seconds> next_after(const schedule& s, sys_seconds t) noexcept {
  const int64_t t0 = t.time_since_epoch().count();
  if (t0 < kMinSeconds - 1 || t0 >= kMaxSeconds)
    return std::nullopt;
  const int64_t start = t0 + 1;
  int64_t z = floor_div(start, kSecondsPerDay);
  const auto sod = static_cast<unsigned>(start - z * kSecondsPerDay);
  civil c = civil_from_days(z);
  unsigned h = sod / 3600;
  unsigned mi = sod / 60 % 60;
  unsigned sec = sod % 60;
  const int64_t last_year = std::min(c.y + kHorizonYears, kMaxYear);

  const auto next_day = [&] {
    ++c.d;
    h = mi = sec = 0;
  };
  const auto next_month = [&] {
    if (++c.m > 12) {
      c.m = 1;
      ++c.y;
    }
    c.d = 1;
    h = mi = sec = 0;
  };

  while (c.y <= last_year) {
    if (!((s.months() >> c.m) & 1u)) {
      const int m = next_bit(s.months(), c.m);
      if (m < 0) {
        c.m = 12;  // next_month() moves to January of the next year
      } else {
        c.m = static_cast<unsigned>(m) - 1;
      }
      next_month();
      continue;
    }
    if (c.d > days_in_month(c.y, c.m)) {
      next_month();
      continue;
    }
    z = days_from_civil(c.y, c.m, c.d);
    if (!day_matches(s, c.d, weekday(z))) {
      next_day();
      continue;
    }
    const int hh = next_bit(s.hours(), h);
    if (hh < 0) {
      next_day();
      continue;
    }
    if (static_cast<unsigned>(hh) != h) {
      h = static_cast<unsigned>(hh);
      mi = sec = 0;
    }
    const int mm = next_bit(s.minutes(), mi);
    if (mm < 0) {
      ++h;
      mi = sec = 0;
      continue;
    }
    if (static_cast<unsigned>(mm) != mi) {
      mi = static_cast<unsigned>(mm);
      sec = 0;
    }
    const int ss = next_bit(s.seconds(), sec);
    if (ss < 0) {
      ++mi;
      sec = 0;
      continue;
    }
    const int64_t at = z * kSecondsPerDay + int64_t{h} * 3600 + int64_t{mi} * 60 + ss;
    if (at > kMaxSeconds)
      return std::nullopt;
    return sys_seconds{seconds{at}};
  }
  return std::nullopt;
}

seconds min_interval(const schedule& s) noexcept {
  // Fire times within one day, ascending: the smallest gap between neighbours, and the span.
  int64_t first = -1;
  int64_t prev = -1;
  int64_t within = std::numeric_limits<int64_t>::max();
  for (unsigned h = 0; h < 24; ++h) {
    if (!((s.hours() >> h) & 1u))
      continue;
    for (unsigned m = 0; m < 60; ++m) {
      if (!((s.minutes() >> m) & 1u))
        continue;
      for (unsigned sec = 0; sec < 60; ++sec) {
        if (!((s.seconds() >> sec) & 1u))
          continue;
        const int64_t tod = h * 3600 + m * 60 + sec;
        if (prev >= 0)
          within = std::min(within, tod - prev);
        if (first < 0)
          first = tod;
        prev = tod;
      }
    }
  }
  if (first < 0)
    return seconds::max();

  // Smallest gap between consecutive firing days over one 400-year cycle, wrapping around.
  int64_t day_gap = std::numeric_limits<int64_t>::max();
  if (s.months() == 0x1ffe && s.day_of_month_is_wildcard() && s.day_of_week_is_wildcard()) {
    day_gap = 1;
  } else {
    const int64_t z0 = days_from_civil(2000, 1, 1);
    civil c{2000, 1, 1};
    unsigned dow = weekday(z0);
    int64_t first_day = -1;
    int64_t prev_day = -1;
    for (int64_t i = 0; i < kDaysPer400Years && day_gap > 1; ++i) {
      if (((s.months() >> c.m) & 1u) && day_matches(s, c.d, dow)) {
        if (prev_day >= 0)
          day_gap = std::min(day_gap, i - prev_day);
        if (first_day < 0)
          first_day = i;
        prev_day = i;
      }
      dow = dow == 6 ? 0 : dow + 1;
      if (++c.d > days_in_month(c.y, c.m)) {
        c.d = 1;
        if (++c.m > 12) {
          c.m = 1;
          ++c.y;
        }
      }
    }
    if (first_day < 0)
      return seconds::max();
    if (day_gap > 1)
      day_gap = std::min(day_gap, first_day + kDaysPer400Years - prev_day);
  }
  const int64_t across = day_gap * kSecondsPerDay - (prev - first);
  return seconds{std::min(within, across)};
}

}  // namespace enact::cron
