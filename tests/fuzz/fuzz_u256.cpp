// SPDX-License-Identifier: Apache-2.0
// u256 text parsing (codec/u256.hpp): decimal, hex, either by prefix, and signed. Never crashes;
// a parsed value prints back as the input without leading zeros, and from_string agrees with the
// decimal or hex parser its prefix selects. When the input holds at least 64 bytes, its first 64
// are also read as two big-endian numbers a and b, and divmod is checked: a = q·b + r with r < b.
#include <algorithm>
#include <cctype>

#include "enact/u256.hpp"
#include "fuzz.hpp"

using namespace enact;

namespace {

std::string strip_zeros(std::string_view digits) {
  const size_t first = digits.find_first_not_of('0');
  return first == std::string_view::npos ? "0" : std::string(digits.substr(first));
}

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); });
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view s = fuzz::text(data, size);
  const bool prefixed = codec::hex::detail::has_prefix(s);

  const auto dec = u256::from_dec(s);
  if (dec) {
    fuzz::require(dec->to_string() == strip_zeros(s), "u256: from_dec then to_string");
    fuzz::require(u256::from_dec(dec->to_string()).value() == *dec, "u256: to_string round trip");
  } else {
    fuzz::require(dec.code().category() == make_error_code(u256_errc::empty).category(),
                  "u256: from_dec error outside u256_errc");
  }
  const auto hx = u256::from_hex(s);
  if (hx) {
    fuzz::require(hx->to_hex() == "0x" + strip_zeros(lower(prefixed ? s.substr(2) : s)), "u256: from_hex then to_hex");
    fuzz::require(u256::from_hex(hx->to_hex()).value() == *hx, "u256: to_hex round trip");
  }
  const auto any = u256::from_string(s);
  const auto& expected = prefixed ? hx : dec;
  fuzz::require(any.has_value() == expected.has_value() && (!any || *any == *expected),
                "u256: from_string disagrees with from_dec / from_hex");

  if (const auto sgn = u256::from_signed_string(s)) {
    fuzz::require(u256::from_signed_string(sgn->to_signed_string()).value() == *sgn,
                  "u256: to_signed_string round trip");
    const bool negative = !s.empty() && s[0] == '-';
    if (!negative)
      fuzz::require(any && *any == *sgn, "u256: non-negative signed parse differs");
  }

  if (size >= 64) {
    const u256 a = u256::load_be(data);
    const u256 b = u256::load_be(data + 32);
    const auto qr = divmod(a, b);
    if (!b) {
      fuzz::require(!qr && qr.code() == u256_errc::division_by_zero, "u256: divmod by zero");
    } else {
      const auto [q, r] = *qr;
      fuzz::require(r < b, "u256: remainder not below divisor");
      fuzz::require(q * b + r == a, "u256: q*b + r != a");
      fuzz::require(q <= a && r <= a, "u256: quotient or remainder above the dividend");
      fuzz::require(a / b == q && a % b == r, "u256: operators disagree with divmod");
    }
    fuzz::require(u256::from_be(a.to_be()).value() == a, "u256: from_be(to_be(a))");
  }
  return 0;
}
