// SPDX-License-Identifier: Apache-2.0
#include "support.hpp"

#include <string>

#include "enact/codec/hex.hpp"
#include "enact/result.hpp"

namespace {
enact::result<int> parse_digit(char c) {
  if (c < '0' || c > '9')
    return enact::fail(enact::hex_errc::bad_digit, "digit: not 0-9");
  return c - '0';
}
enact::result<int> twice(char c) {
  ENACT_TRY(int v, parse_digit(c));
  return 2 * v;
}
}  // namespace

TEST_CASE("result carries a value or an error") {
  auto ok = parse_digit('7');
  REQUIRE(ok.has_value());
  CHECK(*ok == 7);
  CHECK(!ok.code());

  auto bad = parse_digit('x');
  REQUIRE(!bad.has_value());
  CHECK(bad.code() == enact::hex_errc::bad_digit);
  CHECK(bad.err().message == "digit: not 0-9");
  CHECK(bad.value_or(-1) == -1);
}

TEST_CASE("value() on failure throws enact::Error with the code and message") {
  auto bad = parse_digit('x');
  try {
    (void)bad.value();
    FAIL("expected enact::Error");
  } catch (const enact::Error& e) {
    CHECK(e.code() == enact::hex_errc::bad_digit);
    CHECK(std::string(e.what()) == "digit: not 0-9");
  }
}

TEST_CASE("ENACT_TRY propagates failures and unwraps values") {
  CHECK(*twice('4') == 8);
  auto bad = twice('q');
  REQUIRE(!bad);
  CHECK(bad.code() == enact::hex_errc::bad_digit);
}

TEST_CASE("error categories name their domain") {
  std::error_code ec = enact::hex_errc::odd_length;
  CHECK(std::string(ec.category().name()) == "enact.hex");
  CHECK(ec.message() == "odd number of hex digits");
}
