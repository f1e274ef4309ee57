// SPDX-License-Identifier: Apache-2.0
#include "support.hpp"

#include <string>
#include <string_view>

#include "enact/address.hpp"

using namespace enact;
using namespace std::string_view_literals;

// EIP-55 §"Test Cases": all caps, all lower, and normal mixed-case addresses (cross-checked with
// ethers v6 getAddress).
constexpr std::string_view kEip55[] = {
    "0x52908400098527886E0F7030069857D2E4169EE7", "0x8617E340B3D01FA5F11F306F4090FD50E238070D",
    "0xde709f2102306220921060314715629080e2fb77", "0x27b1fdb04752bbc536007a920d24acb045561c26",
    "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359",
    "0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB", "0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb",
};

namespace {
std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'F')
      c = static_cast<char>(c - 'A' + 'a');
  return out;
}
std::string upper_digits(std::string_view s) {
  std::string out(s);
  for (size_t i = 2; i < out.size(); ++i)
    if (out[i] >= 'a' && out[i] <= 'f')
      out[i] = static_cast<char>(out[i] - 'a' + 'A');
  return out;
}
}  // namespace

TEST_CASE("EIP-55 checksum encoding") {
  for (const std::string_view s : kEip55) {
    const auto a = parse_address(s);
    REQUIRE_MESSAGE(a, s);
    CHECK(to_checksum_address(*a) == s);
    // Any case parses to the same bytes.
    CHECK(*parse_address(lower(s)) == *a);
    CHECK(*parse_address(upper_digits(s)) == *a);
    CHECK(*parse_address_strict(s) == *a);
    CHECK(*parse_address_strict(lower(s)) == *a);
    CHECK(*parse_address_strict(upper_digits(s)) == *a);
  }
}

TEST_CASE("parse_address rejects malformed input with a typed error") {
  struct bad {
    std::string_view in;
    address_errc code;
  };
  const bad cases[] = {
      {""sv, address_errc::missing_prefix},
      {"0"sv, address_errc::missing_prefix},
      {"5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"sv, address_errc::missing_prefix},
      {"0X5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"sv, address_errc::missing_prefix},
      {"x05aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"sv, address_errc::missing_prefix},
      {"0x"sv, address_errc::wrong_length},
      {"0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAe"sv, address_errc::wrong_length},
      {"0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed0"sv, address_errc::wrong_length},
      {"0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed00"sv, address_errc::wrong_length},
      {"0xgaAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"sv, address_errc::bad_digit},
      {"0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAe "sv, address_errc::bad_digit},
      {"0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeA\xff\x01"sv, address_errc::bad_digit},
  };
  for (const auto& c : cases) {
    const auto r = parse_address(c.in);
    REQUIRE_MESSAGE(!r, c.in);
    CHECK_MESSAGE(r.code() == c.code, c.in);
    CHECK(parse_address_strict(c.in).code() == c.code);
  }
  CHECK(parse_address("0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeZ", "pkp_id").err().message ==
        "pkp_id: invalid hex digit at offset 41");
}

TEST_CASE("parse_address_strict rejects a mixed-case string with a wrong checksum") {
  // One letter's case flipped in each EIP-55 vector with mixed case.
  const std::string_view bad[] = {
      "0x5AAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"sv,
      "0xfB6916095ca1df60bB79Ce92cE3Ea74c37C5d359"sv,
      "0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6Fb"sv,
      "0xd1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb"sv,
  };
  for (const std::string_view s : bad) {
    CHECK_MESSAGE(parse_address(s), s);  // the lenient parser takes any case
    const auto r = parse_address_strict(s, "new_admin_wallet_address");
    REQUIRE_MESSAGE(!r, s);
    CHECK(r.code() == address_errc::bad_checksum);
    CHECK(r.err().message == "new_admin_wallet_address: EIP-55 checksum mismatch");
  }
}
