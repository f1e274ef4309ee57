// SPDX-License-Identifier: Apache-2.0
#include "support.hpp"

#include <chrono>
#include <string>
#include <string_view>

#include "enact/cron/cron.hpp"

using namespace enact;
using namespace std::chrono;
using namespace std::string_view_literals;

namespace {
/// "YYYY-MM-DDTHH:MM:SSZ" → sys_seconds (the test's own fixed-format reader).
sys_seconds at(std::string_view iso) {
  const auto num = [&](size_t pos, size_t len) {
    return std::stoi(std::string(iso.substr(pos, len)));
  };
  const year_month_day ymd{year{num(0, 4)}, month{static_cast<unsigned>(num(5, 2))},
                           day{static_cast<unsigned>(num(8, 2))}};
  return sys_days{ymd} + hours{num(11, 2)} + minutes{num(14, 2)} + seconds{num(17, 2)};
}

cron::schedule must_parse(std::string_view expr) {
  auto s = cron::parse(expr);
  REQUIRE_MESSAGE(s, (std::string(expr) + " → " + (s ? "" : s.err().message)));
  return *s;
}
}  // namespace

TEST_CASE("next_after matches cron-parser in UTC") {
  struct case_ {
    std::string_view expr;
    std::string_view from;
    std::string_view next[3];
  };
  // cron-parser 5.10.5: CronExpressionParser.parse(expr, {tz: 'UTC', currentDate: from}),
  // then next() three times.
  const case_ cases[] = {
      {"* * * * *", "2024-01-01T00:00:00Z", {"2024-01-01T00:01:00Z", "2024-01-01T00:02:00Z", "2024-01-01T00:03:00Z"}},
      {"*/15 * * * *",
       "2024-01-01T00:07:30Z",
       {"2024-01-01T00:15:00Z", "2024-01-01T00:30:00Z", "2024-01-01T00:45:00Z"}},
      {"0 9 * * 1-5", "2024-01-05T09:00:00Z", {"2024-01-08T09:00:00Z", "2024-01-09T09:00:00Z", "2024-01-10T09:00:00Z"}},
      // Day of month and day of week both restricted: either one matching is enough.
      {"0 0 1 * MON", "2024-01-01T00:00:00Z", {"2024-01-08T00:00:00Z", "2024-01-15T00:00:00Z", "2024-01-22T00:00:00Z"}},
      {"0 0 13 * 5", "2024-09-01T00:00:00Z", {"2024-09-06T00:00:00Z", "2024-09-13T00:00:00Z", "2024-09-20T00:00:00Z"}},
      {"0 0 1-7 * 1", "2024-01-01T00:00:00Z", {"2024-01-02T00:00:00Z", "2024-01-03T00:00:00Z", "2024-01-04T00:00:00Z"}},
      {"0 0 0 29 2 1",
       "2024-02-01T00:00:00Z",
       {"2024-02-05T00:00:00Z", "2024-02-12T00:00:00Z", "2024-02-19T00:00:00Z"}},
      // `*/1` is a restriction (it is not written `*`), so it is OR-ed with Monday: every day.
      {"0 0 */1 * MON",
       "2024-01-01T00:00:00Z",
       {"2024-01-02T00:00:00Z", "2024-01-03T00:00:00Z", "2024-01-04T00:00:00Z"}},
      {"0 0 ? * MON", "2024-01-01T00:00:00Z", {"2024-01-08T00:00:00Z", "2024-01-15T00:00:00Z", "2024-01-22T00:00:00Z"}},
      {"30 2 29 2 *", "2024-03-01T00:00:00Z", {"2028-02-29T02:30:00Z", "2032-02-29T02:30:00Z", "2036-02-29T02:30:00Z"}},
      // 2100 is not a leap year: the longest wait there is.
      {"0 0 29 2 *", "2097-03-01T00:00:00Z", {"2104-02-29T00:00:00Z", "2108-02-29T00:00:00Z", "2112-02-29T00:00:00Z"}},
      {"0 0 31 * *", "2024-01-31T00:00:00Z", {"2024-03-31T00:00:00Z", "2024-05-31T00:00:00Z", "2024-07-31T00:00:00Z"}},
      {"0 12 * * 7", "2024-01-01T00:00:00Z", {"2024-01-07T12:00:00Z", "2024-01-14T12:00:00Z", "2024-01-21T12:00:00Z"}},
      {"0 0 * * 5-7", "2024-01-05T00:00:00Z", {"2024-01-06T00:00:00Z", "2024-01-07T00:00:00Z", "2024-01-12T00:00:00Z"}},
      // MON/2 is 1-7/2, which reaches 7: Sunday.
      {"0 0 * * MON/2",
       "2024-01-01T00:00:00Z",
       {"2024-01-03T00:00:00Z", "2024-01-05T00:00:00Z", "2024-01-07T00:00:00Z"}},
      {"0 0 * * */2", "2024-01-01T00:00:00Z", {"2024-01-02T00:00:00Z", "2024-01-04T00:00:00Z", "2024-01-06T00:00:00Z"}},
      {"5 4 * * sun", "2024-02-28T12:00:00Z", {"2024-03-03T04:05:00Z", "2024-03-10T04:05:00Z", "2024-03-17T04:05:00Z"}},
      {"23 0-20/2 * * *",
       "2024-01-01T19:00:00Z",
       {"2024-01-01T20:23:00Z", "2024-01-02T00:23:00Z", "2024-01-02T02:23:00Z"}},
      {"0 0,12 1 */2 *",
       "2024-02-15T00:00:00Z",
       {"2024-03-01T00:00:00Z", "2024-03-01T12:00:00Z", "2024-05-01T00:00:00Z"}},
      {"0 0 1 jan-mar *",
       "2024-03-02T00:00:00Z",
       {"2025-01-01T00:00:00Z", "2025-02-01T00:00:00Z", "2025-03-01T00:00:00Z"}},
      {"15 10 * DEC *",
       "2023-12-31T23:59:59Z",
       {"2024-12-01T10:15:00Z", "2024-12-02T10:15:00Z", "2024-12-03T10:15:00Z"}},
      {"59 23 31 12 *",
       "2024-12-31T23:59:00Z",
       {"2025-12-31T23:59:00Z", "2026-12-31T23:59:00Z", "2027-12-31T23:59:00Z"}},
      {"*/30 * * * * *",
       "2024-01-01T00:00:10Z",
       {"2024-01-01T00:00:30Z", "2024-01-01T00:01:00Z", "2024-01-01T00:01:30Z"}},
      {"0,10 * * * * *",
       "2024-01-01T00:00:10Z",
       {"2024-01-01T00:01:00Z", "2024-01-01T00:01:10Z", "2024-01-01T00:02:00Z"}},
      {"45 59 23 * * *",
       "2024-02-28T23:59:45Z",
       {"2024-02-29T23:59:45Z", "2024-03-01T23:59:45Z", "2024-03-02T23:59:45Z"}},
      {"*/7 5/20 * * * *",
       "2024-01-01T00:59:59Z",
       {"2024-01-01T01:05:00Z", "2024-01-01T01:05:07Z", "2024-01-01T01:05:14Z"}},
      {"@yearly", "2024-06-01T00:00:00Z", {"2025-01-01T00:00:00Z", "2026-01-01T00:00:00Z", "2027-01-01T00:00:00Z"}},
      {"@monthly", "2024-01-31T12:00:00Z", {"2024-02-01T00:00:00Z", "2024-03-01T00:00:00Z", "2024-04-01T00:00:00Z"}},
      {"@weekly", "2024-01-01T00:00:00Z", {"2024-01-07T00:00:00Z", "2024-01-14T00:00:00Z", "2024-01-21T00:00:00Z"}},
      {"@daily", "2024-02-28T12:00:00Z", {"2024-02-29T00:00:00Z", "2024-03-01T00:00:00Z", "2024-03-02T00:00:00Z"}},
      {"@hourly", "2024-01-01T00:59:59Z", {"2024-01-01T01:00:00Z", "2024-01-01T02:00:00Z", "2024-01-01T03:00:00Z"}},
      {"0 0 * * 1,3,5",
       "1999-12-31T00:00:00Z",
       {"2000-01-03T00:00:00Z", "2000-01-05T00:00:00Z", "2000-01-07T00:00:00Z"}},
      {"0 8-18/3 * * mon-fri",
       "2024-01-06T00:00:00Z",
       {"2024-01-08T08:00:00Z", "2024-01-08T11:00:00Z", "2024-01-08T14:00:00Z"}},
  };
  for (const auto& c : cases) {
    const auto s = must_parse(c.expr);
    sys_seconds t = at(c.from);
    for (const auto& expected : c.next) {
      const auto n = cron::next_after(s, t);
      REQUIRE_MESSAGE(n, c.expr);
      CHECK_MESSAGE(*n == at(expected), (std::string(c.expr) + " after " + std::string(c.from)));
      CHECK(cron::fires_at(s, *n));
      CHECK((!cron::fires_at(s, *n - seconds{1}) || *n - seconds{1} == t));
      t = *n;
    }
  }
}

TEST_CASE("next_after is strictly after t and handles macros and whitespace") {
  const auto s = must_parse("0 0 * * *");
  CHECK(*cron::next_after(s, at("2024-01-01T00:00:00Z")) == at("2024-01-02T00:00:00Z"));
  CHECK(*cron::next_after(s, at("2023-12-31T23:59:59Z")) == at("2024-01-01T00:00:00Z"));
  CHECK(*cron::next_after(s, at("1969-12-31T12:00:00Z")) == at("1970-01-01T00:00:00Z"));
  CHECK(*cron::next_after(must_parse("@midnight"), at("2024-01-01T00:00:00Z")) == at("2024-01-02T00:00:00Z"));
  CHECK(*cron::next_after(must_parse(" \t0  12 * *\tTUE "), at("2024-01-01T00:00:00Z")) == at("2024-01-02T12:00:00Z"));
  // The answer must lie in years 1–9999.
  CHECK(!cron::next_after(must_parse("0 0 1 1 *"), at("9999-06-01T00:00:00Z")));
  CHECK(*cron::next_after(must_parse("59 23 31 12 *"), at("9999-06-01T00:00:00Z")) == at("9999-12-31T23:59:00Z"));
  CHECK(!cron::next_after(s, sys_seconds{seconds{std::numeric_limits<int64_t>::max()}}));
  CHECK(!cron::next_after(s, sys_seconds{seconds{std::numeric_limits<int64_t>::min()}}));
}

TEST_CASE("parse keeps the text and the value sets") {
  const auto s = must_parse("*/20 1,2 * * *");
  CHECK(s.text() == "*/20 1,2 * * *");
  CHECK(s.seconds() == 1);  // 5 fields: second 0
  CHECK(s.minutes() == ((1ull << 0) | (1ull << 20) | (1ull << 40)));
  CHECK(s.hours() == 0b110);
  CHECK(s.days_of_month() == 0xfffffffeu);
  CHECK(s.months() == 0x1ffe);
  CHECK(s.days_of_week() == 0x7f);
  CHECK(s.day_of_month_is_wildcard());
  CHECK(s.day_of_week_is_wildcard());
  CHECK(must_parse("@weekly").text() == "@weekly");
  // 7 and 0 are both Sunday; a range reaching 7 includes Sunday.
  CHECK(must_parse("0 0 * * 7").days_of_week() == 0b0000001);
  CHECK(must_parse("0 0 * * 6-7").days_of_week() == 0b1000001);
  CHECK(must_parse("0 0 * * 0-7").days_of_week() == 0x7f);
  CHECK(must_parse("0 0 * * 1/2").days_of_week() == 0b0101011);
  // Names in any case.
  CHECK(must_parse("0 0 * Jan,feb,MAR *").months() == 0b1110);
  CHECK(must_parse("0 0 * * sun-TUE").days_of_week() == 0b111);
  CHECK(!must_parse("0 0 */1 * *").day_of_month_is_wildcard());
  // A step larger than the field just keeps the start (cron-parser does the same).
  CHECK(must_parse("*/100 * * * *").minutes() == 1);
}

TEST_CASE("parse rejects malformed expressions with a typed error") {
  // cron-parser 5.10.5 rejects each of these too, except those marked "(accepted by
  // cron-parser)": it supports L, H and #, pads fewer than 5 fields with `*`, and reads "" as
  // every minute.
  test::check_refusals<cron_errc>(
      {
          {"0 24 * * *"sv, cron_errc::out_of_range},
          {"60 * * * *"sv, cron_errc::out_of_range},
          {"* * 0 * *"sv, cron_errc::out_of_range},
          {"* * 32 * *"sv, cron_errc::out_of_range},
          {"* * * 0 *"sv, cron_errc::out_of_range},
          {"* * * 13 *"sv, cron_errc::out_of_range},
          {"* * * * 8"sv, cron_errc::out_of_range},
          {"60 * * * * *"sv, cron_errc::out_of_range},
          {"0-60 * * * *"sv, cron_errc::out_of_range},
          {"99999999999999999999 * * * *"sv, cron_errc::out_of_range},
          {"5-1 * * * *"sv, cron_errc::reversed_range},
          {"* * * * SAT-SUN"sv, cron_errc::reversed_range},
          {"*/0 * * * *"sv, cron_errc::bad_step},
          {"1-5/0 * * * *"sv, cron_errc::bad_step},
          {"5/0 * * * *"sv, cron_errc::bad_step},
          {"*/ * * * *"sv, cron_errc::bad_step},
          {"*/x * * * *"sv, cron_errc::bad_syntax},
          {"1,,2 * * * *"sv, cron_errc::empty_field},
          {"1, * * * *"sv, cron_errc::empty_field},
          {",1 * * * *"sv, cron_errc::empty_field},
          {"a * * * *"sv, cron_errc::bad_syntax},
          {"1x * * * *"sv, cron_errc::bad_syntax},
          {"1-2-3 * * * *"sv, cron_errc::bad_syntax},
          {"1/2/3 * * * *"sv, cron_errc::bad_syntax},
          {"*-5 * * * *"sv, cron_errc::bad_syntax},
          {"5-* * * * *"sv, cron_errc::bad_syntax},
          {"-5 * * * *"sv, cron_errc::bad_syntax},
          {"5- * * * *"sv, cron_errc::bad_syntax},
          {"* * * * * -1"sv, cron_errc::bad_syntax},
          {"0 0 1W * *"sv, cron_errc::bad_syntax},
          {"0 0 L * *"sv, cron_errc::bad_syntax},    // (accepted by cron-parser)
          {"H * * * *"sv, cron_errc::bad_syntax},    // (accepted by cron-parser)
          {"* * * * 1#2"sv, cron_errc::bad_syntax},  // (accepted by cron-parser)
          {"* * * JANUARY *"sv, cron_errc::unknown_name},
          {"* * * FOO *"sv, cron_errc::unknown_name},
          {"* * * * FUNDAY"sv, cron_errc::unknown_name},
          {"* * * * MON-FOO"sv, cron_errc::unknown_name},
          {"@every"sv, cron_errc::unknown_name},
          {"@reboot"sv, cron_errc::unknown_name},
          {"@WEEKLY"sv, cron_errc::unknown_name},
          {"@daily *"sv, cron_errc::unknown_name},
          {"1,1 * * * *"sv, cron_errc::duplicate_value},
          {"1-5,3 * * * *"sv, cron_errc::duplicate_value},
          {"*,5 * * * *"sv, cron_errc::duplicate_value},
          {"* * * * 0,7"sv, cron_errc::duplicate_value},
          {"* * * * 5-7,0"sv, cron_errc::duplicate_value},
          {"0 0 * * 7,SUN"sv, cron_errc::duplicate_value},
          {"0 0 * * MON,mon"sv, cron_errc::duplicate_value},
          {"0 0 30 2 *"sv, cron_errc::impossible_date},
          {"0 0 31 4,6,9,11 *"sv, cron_errc::impossible_date},
          {"* * * * * * *"sv, cron_errc::bad_field_count},
          {"* * * *"sv, cron_errc::bad_field_count},  // (accepted by cron-parser)
          {""sv, cron_errc::bad_field_count},         // (accepted by cron-parser)
          {"   "sv, cron_errc::bad_field_count},
      },
      [](std::string_view in) { return cron::parse(in); });
  CHECK(cron::parse(std::string(cron::kMaxExpressionLength + 1, ' ')).code() == cron_errc::too_long);

  const test::text_vector messages[] = {
      {"0 24 * * *"sv, "hour: 24 out of range 0-23"sv},
      {"0 0 * * 8"sv, "day of week: 8 out of range 0-7"sv},
      {"60 0 0 * * *"sv, "second: 60 out of range 0-59"sv},
      {"5-1 * * * *"sv, "minute: reversed range '5-1'"sv},
      {"*/0 * * * *"sv, "minute: step 0 in '*/0'"sv},
      {"0 0 1,,2 * *"sv, "day of month: empty list item in '1,,2'"sv},
      {"0 0 * FOO *"sv, "month: unknown name 'FOO'"sv},
      {"0 0 * * 0,7"sv, "day of week: duplicate value 0"sv},
      {"0 0 30 2 *"sv, "day of month: day 30 never occurs in the allowed months"sv},
      {"* * * *"sv, "cron: expected 5 or 6 fields, got 4"sv},
  };
  for (const auto& m : messages)
    CHECK(cron::parse(m.in).err().message == m.out);
}

TEST_CASE("min_interval is the exact smallest gap between firings") {
  struct case_ {
    std::string_view expr;
    int64_t seconds;
  };
  // Worked out from the definition in cron.hpp (the next test cross-checks them by iteration).
  const case_ cases[] = {
      {"* * * * * *"sv, 1},           {"*/30 * * * * *"sv, 30}, {"0,10 * * * * *"sv, 10},
      {"0,50 * * * * *"sv, 10},  // :50 → :00 of the next minute
      {"0,50 * 0 * * *"sv, 10},       {"50 0,1 * * * *"sv, 60}, {"59 0 * * * *"sv, 3600},
      {"0,59 0,1 * * * *"sv, 1},  // 00:00:59 → 00:01:00
      {"0,59 0,2 * * * *"sv, 59},     {"* * * * *"sv, 60},      {"*/30 * * * *"sv, 1800},
      {"0 0 * * *"sv, 86400},         {"0 0,23 * * *"sv, 3600},  // 23:00 → 00:00 the next day
      {"59 23 * * 1"sv, 604800},      {"0 0 * * 1-5"sv, 86400}, {"0 0 * * 0,6"sv, 86400},  // Saturday → Sunday
      {"0 0 * * 1,4"sv, 3 * 86400},                                                        // Thursday → Monday
      {"0 0 13 * 5"sv, 86400},         // Thursday the 13th → Friday the 14th
      {"0 0 1 * *"sv, 28 * 86400},     // 1 Feb → 1 Mar in a common year
      {"0 0 31 * *"sv, 31 * 86400},    // 31 Dec → 31 Jan
      {"0 0 29 2 *"sv, 1461 * 86400},  // leap day to leap day
      {"0 0 1 1 *"sv, 365 * 86400},   {"@hourly"sv, 3600},      {"@weekly"sv, 604800},
      {"@weekends"sv, 86400},
  };
  for (const auto& c : cases)
    CHECK_MESSAGE(cron::min_interval(must_parse(c.expr)) == seconds{c.seconds}, c.expr);
}

TEST_CASE("min_interval equals the smallest gap next_after produces") {
  const std::string_view exprs[] = {
      "*/7 * * * * *"sv,  "0,50 */3 * * * *"sv, "15,45 59 * * * *"sv, "0 */25 * * *"sv, "0 0 * * 2,3"sv,
      "30 22 1,15 * *"sv, "0 6 * * 0"sv,        "0 0 1 */2 *"sv,      "0 0 * * 1 "sv,   "5 0 1-3 * sat"sv,
  };
  for (const auto e : exprs) {
    const auto s = must_parse(e);
    sys_seconds t = at("2000-01-01T00:00:00Z");
    auto prev = *cron::next_after(s, t);
    seconds smallest = seconds::max();
    for (int i = 0; i < 20000; ++i) {
      const auto n = *cron::next_after(s, prev);
      smallest = std::min(smallest, n - prev);
      prev = n;
    }
    CHECK_MESSAGE(cron::min_interval(s) == smallest, e);
  }
}
