// SPDX-License-Identifier: Apache-2.0
// enact::codec::rfc3339: the instants people and programs write, and the ones refused. The
// expected milliseconds are what JavaScript's Date.parse gives for the same strings (Node 20).
#include <doctest/doctest.h>

#include <chrono>
#include <string>

#include "enact/codec/rfc3339.hpp"

using namespace enact::codec;
using namespace std::chrono;

namespace {
int64_t ms_of(const char* s) {
  const auto t = rfc3339::parse_as<milliseconds>(s);
  REQUIRE_MESSAGE(t.has_value(), s);
  return t->time_since_epoch().count();
}
}  // namespace

TEST_CASE("rfc3339::parse accepts what toISOString, people and other zones write") {
  CHECK(ms_of("2026-11-01T12:00:30.250Z") == 1793534430250);  // toISOString()
  CHECK(ms_of("2026-11-01T12:00:30Z") == 1793534430000);
  CHECK(ms_of("2026-11-01t12:00:30.123456789z") == 1793534430123);
  CHECK(ms_of("2026-11-01T12:00:30+02:00") == 1793527230000);  // east of UTC: earlier in UTC
  CHECK(ms_of("2026-11-01T00:30:00-05:30") == 1793512800000);
  CHECK(ms_of("2024-02-29T00:00:00.5Z") == 1709164800500);  // a leap day; one fraction digit
  // Nanoseconds survive parse() itself.
  CHECK(rfc3339::parse("1970-01-01T00:00:00.000000001Z")->time_since_epoch().count() == 1);
  // A leap second is the first instant of the next minute (Date.parse refuses it; POSIX has none).
  CHECK(ms_of("2016-12-31T23:59:60Z") == ms_of("2017-01-01T00:00:00Z"));
}

TEST_CASE("rfc3339::parse refuses what is not an RFC 3339 date-time") {
  for (const char* bad :
       {"", "2026-11-01", "2026-11-01T12:00:30", "2026-11-01 12:00:30Z", "2026-11-01T12:00Z", "2026-02-30T00:00:00Z",
        "2026-13-01T00:00:00Z", "2026-11-01T24:00:00Z", "2026-11-01T12:60:00Z", "2026-11-01T12:00:61Z",
        "2026-11-01T12:00:30.Z", "2026-11-01T12:00:30.1234567890Z", "2026-11-01T12:00:30+2:00",
        "2026-11-01T12:00:30+24:00", "2026-11-01T12:00:30+02:60", "2026-11-01T12:00:30Zjunk", "+026-11-01T12:00:30Z",
        "2026-11-01T12:00:30 Z", "2026-1a-01T12:00:30Z"}) {
    CAPTURE(bad);
    CHECK_FALSE(rfc3339::parse(bad).has_value());
  }
}

TEST_CASE("rfc3339::format writes UTC with Z and the asked number of digits; parse gives it back") {
  const auto t = *rfc3339::parse("2026-11-01T12:00:30.123456789+01:00");
  CHECK(rfc3339::format(t) == "2026-11-01T11:00:30Z");
  CHECK(rfc3339::format(t, 3) == "2026-11-01T11:00:30.123Z");
  CHECK(rfc3339::format(t, 6) == "2026-11-01T11:00:30.123456Z");
  CHECK(rfc3339::format(t, 9) == "2026-11-01T11:00:30.123456789Z");
  CHECK(rfc3339::format(t, 4) == "2026-11-01T11:00:30.123Z");  // rounded down to 3
  CHECK(rfc3339::parse(rfc3339::format(t, 9)) == t);
  CHECK(rfc3339::format(rfc3339::time_point{}) == "1970-01-01T00:00:00Z");
}
