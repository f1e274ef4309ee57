// SPDX-License-Identifier: Apache-2.0
// Cron expressions (cron/cron.hpp): parse, then next_after from a start time. Input: 8 bytes of
// start time (big-endian two's complement Unix seconds, any value) then the expression. Never
// crashes; a parsed expression fires at the time next_after gives, later than the start, and two
// consecutive firings are at least min_interval apart; the text parses again to the same sets.
#include <chrono>

#include "enact/cron/cron.hpp"
#include "fuzz.hpp"

using namespace enact;
using std::chrono::seconds;
using std::chrono::sys_seconds;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 8)
    return 0;
  const auto start = sys_seconds{seconds{static_cast<int64_t>(be::load64(data))}};
  const auto s = cron::parse(fuzz::text(data + 8, size - 8));
  if (!s) {
    fuzz::require(s.code().category() == make_error_code(cron_errc::bad_syntax).category(),
                  "cron: parse error outside cron_errc");
    return 0;
  }
  const auto again = cron::parse(s->text());
  fuzz::require(again && again->seconds() == s->seconds() && again->minutes() == s->minutes() &&
                    again->hours() == s->hours() && again->days_of_month() == s->days_of_month() &&
                    again->months() == s->months() && again->days_of_week() == s->days_of_week(),
                "cron: parsing the text again gives other sets");
  fuzz::require(s->seconds() != 0 && s->minutes() != 0 && s->hours() != 0 && s->days_of_month() != 0 &&
                    s->months() != 0 && s->days_of_week() != 0,
                "cron: an accepted schedule with an empty field");
  const seconds gap = cron::min_interval(*s);
  fuzz::require(gap > seconds{0} && gap != seconds::max(), "cron: min_interval of a parsed schedule");

  const auto first = cron::next_after(*s, start);
  if (!first)
    return 0;
  fuzz::require(*first > start, "cron: next_after not after the start");
  fuzz::require(cron::fires_at(*s, *first), "cron: does not fire at next_after");
  if (*first - start > seconds{1})
    fuzz::require(!cron::fires_at(*s, *first - seconds{1}), "cron: fires before next_after");
  const auto second = cron::next_after(*s, *first);
  if (second) {
    fuzz::require(*second - *first >= gap, "cron: two firings closer than min_interval");
    fuzz::require(cron::next_after(*s, *second - seconds{1}) == second, "cron: next_after just before a firing");
  }
  return 0;
}
