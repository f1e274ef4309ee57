// SPDX-License-Identifier: Apache-2.0
// Duktape's extended UTF-8 → UTF-8 (server/runtime/utf8.hpp).
#include <doctest/doctest.h>

#include <string>
#include <string_view>

#include "runtime/utf8.hpp"

using enact::runtime::utf8::first_invalid;
using enact::runtime::utf8::fit;
using enact::runtime::utf8::from_duktape;

TEST_CASE("utf8: from_duktape keeps UTF-8 and repairs what Duktape may hold") {
  struct case_ {
    std::string_view in;
    std::string_view out;
  };
  // Inputs: UTF-8 (RFC 3629 §3), CESU-8 surrogates (Unicode TR 26), and malformed bytes.
  const case_ cases[] = {
      {"", ""},
      {"plain ascii {\"a\":1}", "plain ascii {\"a\":1}"},
      {"h\xC3\xA9llo", "h\xC3\xA9llo"},                  // U+00E9
      {"\xE2\x82\xAC", "\xE2\x82\xAC"},                  // U+20AC
      {"\xF0\x9F\x98\x80", "\xF0\x9F\x98\x80"},          // U+1F600 as UTF-8
      {"\xED\xA0\xBD\xED\xB8\x80", "\xF0\x9F\x98\x80"},  // U+1F600 as a surrogate pair
      {"a\xED\xA0\x80"
       "b",
       "a\xEF\xBF\xBD"
       "b"},                                                                     // lone high surrogate
      {"a\xED\xB0\x80", "a\xEF\xBF\xBD"},                                        // lone low surrogate
      {"\xED\xB8\x80\xED\xA0\xBD", "\xEF\xBF\xBD\xEF\xBF\xBD"},                  // pair in the wrong order
      {"\xC0\xAF", "\xEF\xBF\xBD\xEF\xBF\xBD"},                                  // overlong '/'
      {"\xF4\x90\x80\x80", "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"},  // > U+10FFFF
      {"\xFF", "\xEF\xBF\xBD"},
      {"x\xE2\x82", "x\xEF\xBF\xBD\xEF\xBF\xBD"},  // truncated sequence
  };
  for (const auto& c : cases) {
    CAPTURE(c.in);
    CHECK(from_duktape(c.in) == c.out);
  }
}

TEST_CASE("utf8: first_invalid finds what RFC 3629 forbids") {
  struct case_ {
    std::string_view in;
    size_t at;  // npos: valid
  };
  constexpr size_t ok = std::string_view::npos;
  const case_ cases[] = {
      {"", ok},
      {"ascii", ok},
      {"h\xC3\xA9llo \xE2\x82\xAC \xF0\x9F\x98\x80", ok},
      {"ab\xC3", 2},            // truncated
      {"a\xC3(", 1},            // bad continuation
      {"\xC0\xAF", 0},          // overlong
      {"x\xED\xA0\x80", 1},     // surrogate
      {"\xF4\x90\x80\x80", 0},  // above U+10FFFF
      {"\x80", 0},              // lone continuation byte
  };
  for (const auto& c : cases) {
    CAPTURE(c.in);
    CHECK(first_invalid(c.in) == c.at);
  }
}

TEST_CASE("utf8: fit never splits a code point") {
  const std::string s = "ab\xC3\xA9\xF0\x9F\x98\x80";  // a b é 😀 (2 + 2 + 4 bytes)
  struct case_ {
    size_t max;
    size_t len;
  };
  const case_ cases[] = {{0, 0}, {1, 1}, {2, 2}, {3, 2}, {4, 4}, {5, 4}, {7, 4}, {8, 8}, {100, 8}};
  for (const auto& c : cases) {
    CAPTURE(c.max);
    CHECK(fit(s, c.max) == c.len);
  }
}
