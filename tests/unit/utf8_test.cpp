// SPDX-License-Identifier: Apache-2.0
#include "support.hpp"

#include <string_view>

#include "enact/codec/utf8.hpp"

using namespace enact;
using namespace std::string_view_literals;

TEST_CASE("utf8 sequence_length measures well-formed sequences of each length") {
  CHECK(codec::utf8::sequence_length("a"sv, 0) == 1);
  CHECK(codec::utf8::sequence_length("\xC3\xA9"sv, 0) == 2);          // U+00E9
  CHECK(codec::utf8::sequence_length("\xE2\x82\xAC"sv, 0) == 3);      // U+20AC
  CHECK(codec::utf8::sequence_length("\xF0\x9F\x98\x80"sv, 0) == 4);  // U+1F600
  CHECK(codec::utf8::sequence_length("\xF4\x8F\xBF\xBF"sv, 0) == 4);  // U+10FFFF, the last code point
  CHECK(codec::utf8::sequence_length("x\xE2\x82\xAC"sv, 1) == 3);     // from an offset
  CHECK(codec::utf8::sequence_length("\xED\x9F\xBF"sv, 0) == 3);      // U+D7FF, just below the surrogates
}

TEST_CASE("utf8 sequence_length is 0 where no well-formed sequence starts") {
  const std::string_view bad[] = {
      "\x80"sv,              // a stray continuation byte
      "\xC0\xAF"sv,          // overlong '/'
      "\xE0\x80\xAF"sv,      // overlong '/' in three bytes
      "\xED\xA0\x80"sv,      // U+D800, a surrogate
      "\xF4\x90\x80\x80"sv,  // U+110000, above the range
      "\xF8\x88\x80\x80\x80"sv,
      "\xE2\x82"sv,     // cut short by the end
      "\xE2\x28\xA1"sv  // a non-continuation byte inside
  };
  for (const auto s : bad)
    CHECK(codec::utf8::sequence_length(s, 0) == 0);
}

TEST_CASE("utf8 valid_prefix and is_valid") {
  CHECK(codec::utf8::is_valid(""sv));
  CHECK(codec::utf8::is_valid("plain ascii"sv));
  CHECK(codec::utf8::is_valid("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80"sv));
  CHECK(!codec::utf8::is_valid("caf\xC3"sv));
  CHECK(codec::utf8::valid_prefix("ab\xFF"
                                  "cd"sv) == 2);
  CHECK(codec::utf8::valid_prefix("\xC3\xA9\xED\xA0\x80"sv) == 2);
  CHECK(codec::utf8::valid_prefix("all good"sv) == 8);
  static_assert(codec::utf8::is_valid("\xE2\x82\xAC"sv) && !codec::utf8::is_valid("\xC0\x80"sv));
}

TEST_CASE("utf8 replace_invalid: one U+FFFD per byte that begins no sequence") {
  CHECK(codec::utf8::replace_invalid("caf\xC3\xA9"sv) == "caf\xC3\xA9");
  CHECK(codec::utf8::replace_invalid("\xFF ok"sv) == "\xEF\xBF\xBD ok");
  CHECK(codec::utf8::replace_invalid("a\xE2\x82"sv) == "a\xEF\xBF\xBD\xEF\xBF\xBD");                // cut short
  CHECK(codec::utf8::replace_invalid("\xED\xA0\x80"sv) == "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // a surrogate
  CHECK(codec::utf8::is_valid(codec::utf8::replace_invalid("\x80\xC0\x80\xF8 \xF0\x9F\x98\x80"sv)));
}
