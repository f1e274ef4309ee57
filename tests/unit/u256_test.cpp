// SPDX-License-Identifier: Apache-2.0
#include "support.hpp"

#include <string_view>

#include "enact/u256.hpp"

using namespace enact;
using namespace enact::literals;
using namespace std::string_view_literals;

namespace doctest {
template <>
struct StringMaker<enact::u256> {
  static String convert(const enact::u256& v) { return v.to_hex().c_str(); }
};
}  // namespace doctest

namespace {
u256 H(std::string_view s) { return u256::from_hex(s).value(); }
}  // namespace

// Compile-time checks: the arithmetic and the literal are constexpr.
static_assert(0xff_u256 == u256{255});
static_assert(1'000'000_u256 == u256{1000000});
static_assert((u256{1} << 255) >> 255 == u256{1});
static_assert(u256::max() + u256{1} == u256{});
static_assert(u256{7} / u256{0} == u256{} && u256{7} % u256{0} == u256{});
static_assert(115792089237316195423570985008687907853269984665640564039457584007913129639935_u256 == u256::max());
static_assert(0xffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff_u256 == u256::max());
static_assert(-u256{1} == u256::max());
static_assert(u256{3} <=> u256{5} == std::strong_ordering::less);

TEST_CASE("u256 arithmetic matches big-integer reference values") {
  struct case_ {
    std::string_view a, b, sum, diff, prod, quot, rem;
  };
  // Computed with Python 3 int arithmetic (results mod 2^256). Rows 13-14 and the last three
  // take the add-back step (D6) of Knuth's division with 32-bit digits.
  const case_ cases[] = {
      {"0x0", "0x1", "0x1", "0xffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff", "0x0", "0x0", "0x0"},
      {"0x1", "0x1", "0x2", "0x0", "0x1", "0x1", "0x0"},
      {"0xffffffffffffffff", "0xffffffffffffffff", "0x1fffffffffffffffe", "0x0", "0xfffffffffffffffe0000000000000001",
       "0x1", "0x0"},
      {"0x10000000000000000", "0xffffffffffffffff", "0x1ffffffffffffffff", "0x1", "0xffffffffffffffff0000000000000000",
       "0x1", "0x1"},
      {"0x100000000000000000000000000000005", "0x3", "0x100000000000000000000000000000008",
       "0x100000000000000000000000000000002", "0x30000000000000000000000000000000f",
       "0x55555555555555555555555555555557", "0x0"},
      {"0xffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
       "0xffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
       "0xfffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffe", "0x0", "0x1", "0x1", "0x0"},
      {"0xffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff", "0x2", "0x1",
       "0xfffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffd",
       "0xfffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffe",
       "0x7fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff", "0x1"},
      {"0xffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff", "0x10000000000000000",
       "0xffffffffffffffff", "0xfffffffffffffffffffffffffffffffffffffffffffffffeffffffffffffffff",
       "0xffffffffffffffffffffffffffffffffffffffffffffffff0000000000000000",
       "0xffffffffffffffffffffffffffffffffffffffffffffffff", "0xffffffffffffffff"},
      {"0xffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff", "0xffffffffffffffffffffffffffffffff",
       "0xfffffffffffffffffffffffffffffffe", "0xffffffffffffffffffffffffffffffff00000000000000000000000000000000",
       "0xffffffffffffffffffffffffffffffff00000000000000000000000000000001", "0x100000000000000000000000000000001",
       "0x0"},
      {"0x123456789abcdef0fedcba987654321000112233445566778899aabbccddeeff", "0xfedcba98765432100123456789abcdef",
       "0x123456789abcdef0fedcba9876543210feeddccbbaa9988789bcf0235689bcee",
       "0x123456789abcdef0fedcba987654320f0134679ace0134678776655443322110",
       "0xaa7d96161fd558dd9db26789e6498056789d19312945cafd0bd6492016e95311", "0x1249249249249238ec5397829cbc14e7",
       "0x41834279db07f62158389b86473c7056"},
      {"0xdd15fe86affad91249ef0eb713f39ebeaa987b6e6fd2a0000000000000000000", "0x4b3b4ca85a86c47a098a224000000007",
       "0xdd15fe86affad91249ef0eb713f39ebef5d3c816ca59647a098a224000000007",
       "0xdd15fe86affad91249ef0eb713f39ebe5f5d2ec6154bdb85f675ddbffffffff9",
       "0x348ff562974f0c99e850b09c2a83ccd6d81360050ec260000000000000000000", "0x2f050fe938943acc45f65567fffffffba",
       "0x1ea"},
      {"0x8000000000000000000000000000000000000000000000000000000000000000",
       "0x7fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
       "0xffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff", "0x1",
       "0x8000000000000000000000000000000000000000000000000000000000000000", "0x1", "0x1"},
      {"0x40000000000000000", "0x10000000000000001", "0x50000000000000001", "0x2ffffffffffffffff",
       "0x400000000000000040000000000000000", "0x3", "0xfffffffffffffffd"},
      {"0x100000000000000000001", "0x400000000000000001", "0x100400000000000000002", "0xffc00000000000000000",
       "0x40000000000000000100400000000000000001", "0x3ff", "0x3ffffffffffffffc02"},
      {"0xffffffff00000000ffffffff00000000ffffffff00000000ffffffff00000000", "0xffffffff00000001",
       "0xffffffff00000000ffffffff00000000ffffffff00000001fffffffe00000001",
       "0xffffffff00000000ffffffff00000000fffffffeffffffffffffffffffffffff",
       "0xfffffffd00000002fffffffd00000002fffffffd00000001ffffffff00000000",
       "0xffffffffffffffffffffffff000000000000000000000000", "0xffffffff00000000"},
      {"0x8000000000000000000000000000000000000000000000000000000000000000", "0x80000000000000000000000000000001",
       "0x8000000000000000000000000000000080000000000000000000000000000001",
       "0x7fffffffffffffffffffffffffffffff7fffffffffffffffffffffffffffffff",
       "0x8000000000000000000000000000000000000000000000000000000000000000", "0xfffffffffffffffffffffffffffffffe",
       "0x2"},
      {"0x7fffffff800000000000000000000000000000000000000000000000", "0x800000000000ffffffffffff",
       "0x7fffffff800000000000000000000000800000000000ffffffffffff",
       "0x7fffffff7fffffffffffffffffffffff7fffffffffff000000000001",
       "0xffff7fff80000000800000000000000000000000000000000000000000000000", "0xfffffffefffe000000020005fffffff9",
       "0x7ff8000000090005fffffff9"},
      {"0x800000000000000000000000000000000000000000000000000000000", "0x200000000000000000000000000000000001",
       "0x800000000000000000000200000000000000000000000000000000001",
       "0x7ffffffffffffffffffffdfffffffffffffffffffffffffffffffffff",
       "0x800000000000000000000000000000000000000000000000000000000", "0x3fffffffffffffffffffff",
       "0x1fffffffffffffc000000000000000000001"},
      {"0x80000000000000000000000000000000000000000000000000000", "0x100000000000000000000000000000000000000000001",
       "0x80000000100000000000000000000000000000000000000000001",
       "0x7fffffffeffffffffffffffffffffffffffffffffffffffffffff",
       "0x80000000000000000000000000000000000000000000000000000", "0x7ffffffff",
       "0xfffffffffffffffffffffffffffffffffff800000001"},
      {"0x100000000000000000000000000000000000000000000000001", "0x200000000000000000000001",
       "0x100000000000000000000000000200000000000000000000002", "0xffffffffffffffffffffffffffe00000000000000000000000",
       "0x100000000000000000000000000200000000000000000000001", "0x7ffffffffffffffffffffffc000", "0x4001"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.a);
    CAPTURE(c.b);
    const u256 a = H(c.a), b = H(c.b);
    CHECK((a + b).to_hex() == c.sum);
    CHECK((a - b).to_hex() == c.diff);
    CHECK((a * b).to_hex() == c.prod);
    CHECK((a / b).to_hex() == c.quot);
    CHECK((a % b).to_hex() == c.rem);
    auto qr = divmod(a, b);
    REQUIRE(qr);
    CHECK(qr->first == a / b);
    CHECK(qr->second == a % b);
    CHECK(qr->first * b + qr->second == a);
  }
}

TEST_CASE("u256 division by zero: zero from / and %, an error from divmod") {
  CHECK(u256::max() / u256{} == u256{});
  CHECK(u256::max() % u256{} == u256{});
  CHECK(divmod(u256{5}, u256{}).code() == u256_errc::division_by_zero);
}

TEST_CASE("u256 shifts, bitwise operators and increments") {
  // Computed with Python 3 int arithmetic.
  const u256 x = H("0x0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef");
  struct case_ {
    unsigned n;
    std::string_view shl, shr;
  };
  const case_ cases[] = {
      {0, "0x123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
       "0x123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"},
      {1, "0x2468acf13579bde02468acf13579bde02468acf13579bde02468acf13579bde",
       "0x91a2b3c4d5e6f78091a2b3c4d5e6f78091a2b3c4d5e6f78091a2b3c4d5e6f7"},
      {63, "0x8091a2b3c4d5e6f78091a2b3c4d5e6f78091a2b3c4d5e6f78000000000000000",
       "0x2468acf13579bde02468acf13579bde02468acf13579bde"},
      {64, "0x123456789abcdef0123456789abcdef0123456789abcdef0000000000000000",
       "0x123456789abcdef0123456789abcdef0123456789abcdef"},
      {65, "0x2468acf13579bde02468acf13579bde02468acf13579bde0000000000000000",
       "0x91a2b3c4d5e6f78091a2b3c4d5e6f78091a2b3c4d5e6f7"},
      {128, "0x123456789abcdef0123456789abcdef00000000000000000000000000000000", "0x123456789abcdef0123456789abcdef"},
      {255, "0x8000000000000000000000000000000000000000000000000000000000000000", "0x0"},
      {256, "0x0", "0x0"},
      {1000, "0x0", "0x0"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.n);
    CHECK((x << c.n).to_hex() == c.shl);
    CHECK((x >> c.n).to_hex() == c.shr);
    CHECK((x << u256{c.n}).to_hex() == c.shl);
    CHECK((x >> u256{c.n}).to_hex() == c.shr);
  }
  CHECK((x << (u256{1} << 64)) == u256{});  // shift amount beyond 64 bits
  CHECK((x & ~x) == u256{});
  CHECK((x | ~x) == u256::max());
  CHECK((x ^ x) == u256{});
  u256 y = u256::max();
  CHECK(++y == u256{});
  CHECK(y-- == u256{});
  CHECK(y == u256::max());
  y += 2;
  CHECK(y == u256{1});
  y <<= 200;
  CHECK(y.bit_width() == 201);
}

TEST_CASE("u256 comparison is numeric across limbs") {
  CHECK(u256{1} < (u256{1} << 64));
  CHECK((u256{1} << 192) > (u256::max() >> 64));
  CHECK(u256{5} == 5);
  CHECK(u256{5} != u256{6});
  CHECK(u256::max() >= u256::max());
}

TEST_CASE("u256 decimal and hex text round-trips") {
  struct case_ {
    std::string_view dec, hex;
  };
  // Computed with Python 3 int arithmetic (str() and hex()).
  const case_ cases[] = {
      {"0", "0x0"},
      {"1", "0x1"},
      {"999999999", "0x3b9ac9ff"},
      {"1000000000", "0x3b9aca00"},
      {"18446744073709551615", "0xffffffffffffffff"},
      {"18446744073709551616", "0x10000000000000000"},
      {"100000000000000000000000000000000000000000000000000000000000000000000000000000",
       "0xdd15fe86affad91249ef0eb713f39ebeaa987b6e6fd2a0000000000000000000"},
      {"57896044618658097711785492504343953926634992332820282019728792003956564819968",
       "0x8000000000000000000000000000000000000000000000000000000000000000"},
      {"115792089237316195423570985008687907853269984665640564039457584007913129639935",
       "0xffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.dec);
    const auto d = u256::from_string(c.dec);
    REQUIRE(d);
    CHECK(d->to_string() == c.dec);
    CHECK(d->to_hex() == c.hex);
    CHECK(*u256::from_string(c.hex) == *d);
    CHECK(*u256::from_hex(c.hex.substr(2)) == *d);
    CHECK(*u256::from_dec(c.dec) == *d);
  }
  CHECK(*u256::from_string("0XABCdef") == u256{0xabcdef});
  CHECK(*u256::from_string("000123") == u256{123});
  CHECK(*u256::from_hex("0x" + std::string(70, '0') + "1") == u256{1});  // leading zeros are no overflow
}

TEST_CASE("u256 parsing rejects malformed text with a typed error") {
  test::check_refusals<u256_errc>(
      {
          {"", u256_errc::empty},
          {"0x", u256_errc::empty},
          {"0X", u256_errc::empty},
          {"-1", u256_errc::bad_digit},
          {"+1", u256_errc::bad_digit},
          {" 1", u256_errc::bad_digit},
          {"1 ", u256_errc::bad_digit},
          {"12a", u256_errc::bad_digit},
          {"0x1g", u256_errc::bad_digit},
          {"0x-1", u256_errc::bad_digit},
          {"1_000", u256_errc::bad_digit},
          {"1e3", u256_errc::bad_digit},
          // 2^256 in decimal and hex, and a larger decimal
          {"115792089237316195423570985008687907853269984665640564039457584007913129639936", u256_errc::overflow},
          {"0x10000000000000000000000000000000000000000000000000000000000000000", u256_errc::overflow},
          {"999999999999999999999999999999999999999999999999999999999999999999999999999999", u256_errc::overflow},
      },
      [](std::string_view in) { return u256::from_string(in); });
  CHECK(u256::from_dec("0x10").code() == u256_errc::bad_digit);
  CHECK(u256::from_hex("").code() == u256_errc::empty);
  CHECK(u256::from_string("12x4", "amount").err().message == "amount: invalid decimal digit 'x' at offset 2");
}

TEST_CASE("u256 big-endian bytes") {
  const u256 v = H("0x0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f20");
  const hash256 be = v.to_be();
  for (size_t i = 0; i < 32; ++i)
    CHECK(be[i] == i + 1);
  CHECK(u256::load_be(be.data()) == v);
  CHECK(*u256::from_be(be) == v);
  const bytes two{0x01, 0x00};
  CHECK(*u256::from_be(two) == u256{256});
  CHECK(*u256::from_be(bytes{}) == u256{});
  CHECK(u256::from_be(bytes(33, 0)).code() == u256_errc::too_long);
  uint8_t out[32];
  u256{0xabcd}.store_be(out);
  CHECK(out[30] == 0xab);
  CHECK(out[31] == 0xcd);
  CHECK(out[0] == 0);
}

TEST_CASE("u256 conversions and bit queries") {
  const u256 big = (u256{1} << 64) + u256{7};
  CHECK(static_cast<uint64_t>(big) == 7);  // truncates
  CHECK(!big.fits_u64());
  CHECK(u256{~uint64_t{0}}.fits_u64());
  CHECK(!u256{});
  CHECK(static_cast<bool>(big));
  CHECK(u256{}.bit_width() == 0);
  CHECK(u256{1}.bit_width() == 1);
  CHECK(u256::max().bit_width() == 256);
  CHECK(u256{255}.fits_bits(8));
  CHECK(!u256{256}.fits_bits(8));
  CHECK(u256{}.fits_bits(0));
  CHECK(u256::max().fits_bits(256));
}

TEST_CASE("u256 two's complement helpers") {
  struct case_ {
    std::string_view text;  // signed decimal
    std::string_view twos;  // 256-bit two's complement, computed with Python 3: hex(x % 2**256)
  };
  const case_ cases[] = {
      {"0", "0x0"},
      {"1", "0x1"},
      {"-1", "0xffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"},
      {"-123456789", "0xfffffffffffffffffffffffffffffffffffffffffffffffffffffffff8a432eb"},
      {"-57896044618658097711785492504343953926634992332820282019728792003956564819968",
       "0x8000000000000000000000000000000000000000000000000000000000000000"},
      {"57896044618658097711785492504343953926634992332820282019728792003956564819967",
       "0x7fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.text);
    auto v = u256::from_signed_string(c.text);
    REQUIRE(v);
    CHECK(v->to_hex() == c.twos);
    CHECK(v->to_signed_string() == c.text);
    CHECK(v->is_negative_twos() == (c.text[0] == '-'));
  }
  CHECK(*u256::from_signed_string("-0x10") == -u256{16});
  CHECK(*u256::from_signed_string("-0") == u256{});
  // 2^255 is out of range as a positive int256, and -(2^255 + 1) as a negative one.
  CHECK(u256::from_signed_string("57896044618658097711785492504343953926634992332820282019728792003956564819968")
            .code() == u256_errc::overflow);
  CHECK(u256::from_signed_string("-57896044618658097711785492504343953926634992332820282019728792003956564819969")
            .code() == u256_errc::overflow);
  CHECK(u256::from_signed_string("-").code() == u256_errc::empty);
  CHECK(u256::from_signed_string("--1").code() == u256_errc::bad_digit);
  CHECK(u256::from_signed_string("+1").code() == u256_errc::bad_digit);

  // int8 range is [-128, 127].
  CHECK(u256{127}.fits_signed_bits(8));
  CHECK(!u256{128}.fits_signed_bits(8));
  CHECK((-u256{128}).fits_signed_bits(8));
  CHECK(!(-u256{129}).fits_signed_bits(8));
  CHECK(u256::max().fits_signed_bits(1));  // a 1-bit two's complement holds [-1, 0]
  CHECK(!u256{1}.fits_signed_bits(1));
  CHECK((u256{1} << 255).fits_signed_bits(256));
  CHECK(!(u256{1} << 255).fits_signed_bits(255));
  CHECK(!u256{}.fits_signed_bits(0));
}

TEST_CASE("u256 division identity holds on pseudo-random operands") {
  // Operands from a fixed splitmix64 stream, masked to varied widths and limb patterns so every
  // divisor length (1..8 32-bit digits) occurs; checks a == q*b + r and r < b.
  uint64_t state = 0x9e3779b97f4a7c15;
  const auto next = [&state] {
    uint64_t z = (state += 0x9e3779b97f4a7c15);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9;
    z = (z ^ (z >> 27)) * 0x94d049bb133111eb;
    return z ^ (z >> 31);
  };
  const auto operand = [&] {
    u256 v;
    for (auto& limb : v.w) {
      const uint64_t r = next();
      limb = (r & 3) == 0 ? 0 : (r & 3) == 1 ? ~uint64_t{0} : next();
    }
    return v >> (next() % 256);
  };
  for (int i = 0; i < 5000; ++i) {
    const u256 a = operand();
    u256 b = operand();
    if (!b)
      b = u256{1};
    const auto [q, r] = divmod(a, b).value();
    CHECK(r < b);
    CHECK(q * b + r == a);
    CHECK(u256::from_dec(a.to_string()).value() == a);
  }
}
