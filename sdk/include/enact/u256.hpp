// SPDX-License-Identifier: Apache-2.0
// `enact::u256`: a 256-bit unsigned integer modelled on intx — four little-endian 64-bit limbs,
// constexpr wrapping arithmetic (mod 2^256), EVM-style division (x / 0 == 0, x % 0 == 0) with a
// checked `divmod`, decimal and 0x-hex parsing and printing, big-endian byte conversion, and the
// two's-complement helpers the ABI and EIP-712 codecs need for intN. The `_u256` literal lives in
// `enact::literals`. Header-only: every operation is small and generic.
#pragma once

#include <array>
#include <bit>
#include <compare>
#include <concepts>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "enact/bytes.hpp"
#include "enact/codec/hex.hpp"
#include "enact/error.hpp"
#include "enact/result.hpp"

namespace enact {

enum class u256_errc {
  empty = 1,         // no digits ("" or a bare "0x" / "-")
  bad_digit,         // a character that is not a digit of the base (signs, spaces, letters)
  overflow,          // value does not fit (above 2^256-1, or outside int256 for signed input)
  too_long,          // more than 32 bytes given to from_be
  division_by_zero,  // divmod with a zero divisor
};

}  // namespace enact
ENACT_ERRC(u256_errc, u256_category, "enact.u256", "no digits", "invalid digit", "value out of range",
           "more than 32 bytes", "division by zero")

namespace enact {

namespace detail {
/// Full 64x64 -> 128-bit product as {lo, hi}, written with 32-bit halves so it stays portable
/// and constexpr (no __int128).
struct u128_parts {
  uint64_t lo;
  uint64_t hi;
};
constexpr u128_parts umul(uint64_t a, uint64_t b) noexcept {
  const uint64_t al = a & 0xffffffffu, ah = a >> 32, bl = b & 0xffffffffu, bh = b >> 32;
  const uint64_t ll = al * bl, lh = al * bh, hl = ah * bl, hh = ah * bh;
  const uint64_t mid = (ll >> 32) + (lh & 0xffffffffu) + (hl & 0xffffffffu);
  return {(mid << 32) | (ll & 0xffffffffu), hh + (lh >> 32) + (hl >> 32) + (mid >> 32)};
}
}  // namespace detail

struct u256 {
  /// Little-endian limbs: w[0] is the least significant 64 bits.
  std::array<uint64_t, 4> w{};

  constexpr u256() = default;
  constexpr u256(uint64_t v) noexcept : w{v, 0, 0, 0} {}  // NOLINT: implicit, like intx

  [[nodiscard]] static constexpr u256 max() noexcept {
    u256 r;
    r.w = {~uint64_t{0}, ~uint64_t{0}, ~uint64_t{0}, ~uint64_t{0}};
    return r;
  }

  constexpr explicit operator bool() const noexcept { return (w[0] | w[1] | w[2] | w[3]) != 0; }
  /// Truncating conversion to a built-in integer (the low bits, like intx).
  template <class T>
  requires(std::is_integral_v<T> && !std::is_same_v<T, bool>) constexpr explicit operator T() const noexcept {
    return static_cast<T>(w[0]);
  }
  [[nodiscard]] constexpr bool fits_u64() const noexcept { return (w[1] | w[2] | w[3]) == 0; }

  // --- comparison -------------------------------------------------------------------------
  friend constexpr bool operator==(const u256& a, const u256& b) noexcept = default;
  friend constexpr std::strong_ordering operator<=>(const u256& a, const u256& b) noexcept {
    for (int i = 3; i >= 0; --i)
      if (a.w[i] != b.w[i])
        return a.w[i] <=> b.w[i];
    return std::strong_ordering::equal;
  }

  // --- additive ---------------------------------------------------------------------------
  friend constexpr u256 operator+(const u256& a, const u256& b) noexcept {
    u256 r;
    uint64_t carry = 0;
    for (int i = 0; i < 4; ++i) {
      const uint64_t s = a.w[i] + b.w[i];
      const uint64_t s2 = s + carry;
      carry = static_cast<uint64_t>(s < a.w[i]) | static_cast<uint64_t>(s2 < s);
      r.w[i] = s2;
    }
    return r;
  }
  friend constexpr u256 operator-(const u256& a, const u256& b) noexcept {
    u256 r;
    uint64_t borrow = 0;
    for (int i = 0; i < 4; ++i) {
      const uint64_t d = a.w[i] - b.w[i];
      const uint64_t d2 = d - borrow;
      borrow = static_cast<uint64_t>(a.w[i] < b.w[i]) | static_cast<uint64_t>(d < borrow);
      r.w[i] = d2;
    }
    return r;
  }
  constexpr u256 operator~() const noexcept {
    u256 r;
    for (int i = 0; i < 4; ++i)
      r.w[i] = ~w[i];
    return r;
  }
  constexpr u256 operator-() const noexcept { return ~*this + u256{1}; }

  // --- multiplicative ---------------------------------------------------------------------
  friend constexpr u256 operator*(const u256& a, const u256& b) noexcept {
    u256 r;
    for (int i = 0; i < 4; ++i) {
      uint64_t carry = 0;
      for (int j = 0; i + j < 4; ++j) {
        auto [lo, hi] = detail::umul(a.w[i], b.w[j]);
        const uint64_t t = r.w[i + j] + lo;
        hi += static_cast<uint64_t>(t < lo);
        const uint64_t t2 = t + carry;
        hi += static_cast<uint64_t>(t2 < t);
        r.w[i + j] = t2;
        carry = hi;
      }
    }
    return r;
  }

  /// Quotient and remainder; the caller guarantees b != 0 (see enact::divmod for the checked
  /// form). Knuth's Algorithm D (TAOCP vol. 2 §4.3.1) on 32-bit digits, so every intermediate
  /// fits in 64 bits without compiler extensions.
  [[nodiscard]] static constexpr std::pair<u256, u256> divmod_unchecked(const u256& a, const u256& b) noexcept {
    if (a < b)
      return {u256{}, a};
    uint32_t u[8]{}, v[8]{};
    for (int i = 0; i < 4; ++i) {
      u[2 * i] = static_cast<uint32_t>(a.w[i]);
      u[2 * i + 1] = static_cast<uint32_t>(a.w[i] >> 32);
      v[2 * i] = static_cast<uint32_t>(b.w[i]);
      v[2 * i + 1] = static_cast<uint32_t>(b.w[i] >> 32);
    }
    int m = 8, n = 8;
    while (m > 0 && u[m - 1] == 0)
      --m;
    while (n > 0 && v[n - 1] == 0)
      --n;
    uint32_t q[8]{}, r[8]{};
    if (n <= 1) {
      // Short division by a single digit.
      const uint64_t d = v[0];
      uint64_t rem = 0;
      for (int i = m - 1; i >= 0; --i) {
        const uint64_t cur = (rem << 32) | u[i];
        q[i] = static_cast<uint32_t>(cur / d);
        rem = cur % d;
      }
      r[0] = static_cast<uint32_t>(rem);
    } else {
      // D1: normalise so the divisor's top digit has its high bit set.
      const int s = std::countl_zero(v[n - 1]);
      uint32_t vn[8]{}, un[9]{};
      for (int i = n - 1; i > 0; --i)
        vn[i] = static_cast<uint32_t>((uint64_t{v[i]} << s) | (uint64_t{v[i - 1]} >> (32 - s)));
      vn[0] = static_cast<uint32_t>(uint64_t{v[0]} << s);
      un[m] = static_cast<uint32_t>(uint64_t{u[m - 1]} >> (32 - s));
      for (int i = m - 1; i > 0; --i)
        un[i] = static_cast<uint32_t>((uint64_t{u[i]} << s) | (uint64_t{u[i - 1]} >> (32 - s)));
      un[0] = static_cast<uint32_t>(uint64_t{u[0]} << s);
      constexpr uint64_t base = uint64_t{1} << 32;
      for (int j = m - n; j >= 0; --j) {
        // D3: estimate the quotient digit from the top two dividend digits.
        const uint64_t num = (uint64_t{un[j + n]} << 32) | un[j + n - 1];
        uint64_t qhat = num / vn[n - 1];
        uint64_t rhat = num % vn[n - 1];
        while (qhat >= base || qhat * vn[n - 2] > ((rhat << 32) | un[j + n - 2])) {
          --qhat;
          rhat += vn[n - 1];
          if (rhat >= base)
            break;
        }
        // D4: multiply and subtract.
        uint64_t borrow = 0;
        for (int i = 0; i < n; ++i) {
          const uint64_t p = qhat * vn[i];
          const uint64_t sub = (p & 0xffffffffu) + borrow;
          const uint64_t cur = un[i + j];
          un[i + j] = static_cast<uint32_t>(cur - sub);
          borrow = (p >> 32) + (sub >> 32) + static_cast<uint64_t>((cur & 0xffffffffu) < (sub & 0xffffffffu));
        }
        const uint64_t top = un[j + n];
        un[j + n] = static_cast<uint32_t>(top - borrow);
        if (top < borrow) {
          // D6: the estimate was one too large; add the divisor back.
          --qhat;
          uint64_t carry = 0;
          for (int i = 0; i < n; ++i) {
            const uint64_t t = uint64_t{un[i + j]} + vn[i] + carry;
            un[i + j] = static_cast<uint32_t>(t);
            carry = t >> 32;
          }
          un[j + n] = static_cast<uint32_t>(un[j + n] + carry);
        }
        q[j] = static_cast<uint32_t>(qhat);
      }
      // D8: unnormalise the remainder.
      for (int i = 0; i < n; ++i)
        r[i] = static_cast<uint32_t>((uint64_t{un[i]} >> s) | (uint64_t{un[i + 1]} << (32 - s)));
    }
    u256 qq, rr;
    for (int i = 0; i < 4; ++i) {
      qq.w[i] = uint64_t{q[2 * i]} | (uint64_t{q[2 * i + 1]} << 32);
      rr.w[i] = uint64_t{r[2 * i]} | (uint64_t{r[2 * i + 1]} << 32);
    }
    return {qq, rr};
  }

  // EVM semantics (Yellow Paper, DIV and MOD): a zero divisor yields zero.
  friend constexpr u256 operator/(const u256& a, const u256& b) noexcept {
    return b ? divmod_unchecked(a, b).first : u256{};
  }
  friend constexpr u256 operator%(const u256& a, const u256& b) noexcept {
    return b ? divmod_unchecked(a, b).second : u256{};
  }

  // --- bitwise ----------------------------------------------------------------------------
  friend constexpr u256 operator&(const u256& a, const u256& b) noexcept {
    u256 r;
    for (int i = 0; i < 4; ++i)
      r.w[i] = a.w[i] & b.w[i];
    return r;
  }
  friend constexpr u256 operator|(const u256& a, const u256& b) noexcept {
    u256 r;
    for (int i = 0; i < 4; ++i)
      r.w[i] = a.w[i] | b.w[i];
    return r;
  }
  friend constexpr u256 operator^(const u256& a, const u256& b) noexcept {
    u256 r;
    for (int i = 0; i < 4; ++i)
      r.w[i] = a.w[i] ^ b.w[i];
    return r;
  }
  /// Shifts of 256 or more give zero (EVM SHL/SHR).
  friend constexpr u256 operator<<(const u256& a, uint64_t n) noexcept {
    if (n >= 256)
      return {};
    const int ws = static_cast<int>(n / 64), bs = static_cast<int>(n % 64);
    u256 r;
    for (int i = 3; i >= ws; --i) {
      r.w[i] = a.w[i - ws] << bs;
      if (bs != 0 && i - ws > 0)
        r.w[i] |= a.w[i - ws - 1] >> (64 - bs);
    }
    return r;
  }
  friend constexpr u256 operator>>(const u256& a, uint64_t n) noexcept {
    if (n >= 256)
      return {};
    const int ws = static_cast<int>(n / 64), bs = static_cast<int>(n % 64);
    u256 r;
    for (int i = 0; i + ws < 4; ++i) {
      r.w[i] = a.w[i + ws] >> bs;
      if (bs != 0 && i + ws < 3)
        r.w[i] |= a.w[i + ws + 1] << (64 - bs);
    }
    return r;
  }
  friend constexpr u256 operator<<(const u256& a, const u256& n) noexcept {
    return n.fits_u64() ? a << n.w[0] : u256{};
  }
  friend constexpr u256 operator>>(const u256& a, const u256& n) noexcept {
    return n.fits_u64() ? a >> n.w[0] : u256{};
  }

  // --- compound assignment and increments -------------------------------------------------
  constexpr u256& operator+=(const u256& b) noexcept { return *this = *this + b; }
  constexpr u256& operator-=(const u256& b) noexcept { return *this = *this - b; }
  constexpr u256& operator*=(const u256& b) noexcept { return *this = *this * b; }
  constexpr u256& operator/=(const u256& b) noexcept { return *this = *this / b; }
  constexpr u256& operator%=(const u256& b) noexcept { return *this = *this % b; }
  constexpr u256& operator&=(const u256& b) noexcept { return *this = *this & b; }
  constexpr u256& operator|=(const u256& b) noexcept { return *this = *this | b; }
  constexpr u256& operator^=(const u256& b) noexcept { return *this = *this ^ b; }
  constexpr u256& operator<<=(uint64_t n) noexcept { return *this = *this << n; }
  constexpr u256& operator>>=(uint64_t n) noexcept { return *this = *this >> n; }
  constexpr u256& operator++() noexcept { return *this += u256{1}; }
  constexpr u256& operator--() noexcept { return *this -= u256{1}; }
  constexpr u256 operator++(int) noexcept {
    const u256 old = *this;
    ++*this;
    return old;
  }
  constexpr u256 operator--(int) noexcept {
    const u256 old = *this;
    --*this;
    return old;
  }

  // --- bit queries and two's complement ---------------------------------------------------
  /// Number of significant bits (0 for zero).
  [[nodiscard]] constexpr unsigned bit_width() const noexcept {
    for (int i = 3; i >= 0; --i)
      if (w[i] != 0)
        return static_cast<unsigned>(64 * i) + static_cast<unsigned>(std::bit_width(w[i]));
    return 0;
  }
  /// The unsigned value is below 2^n.
  [[nodiscard]] constexpr bool fits_bits(unsigned n) const noexcept { return bit_width() <= n; }
  /// Read as two's complement, the value lies in [-2^(n-1), 2^(n-1)-1]. n == 0 fits nothing.
  [[nodiscard]] constexpr bool fits_signed_bits(unsigned n) const noexcept {
    if (n == 0)
      return false;
    const u256 mag = is_negative_twos() ? ~*this : *this;  // ~x == -x-1 for negative x
    return mag.bit_width() <= n - 1;
  }
  /// The top bit (the sign of the value read as int256).
  [[nodiscard]] constexpr bool is_negative_twos() const noexcept { return (w[3] >> 63) != 0; }

  // --- bytes ------------------------------------------------------------------------------
  /// Writes the 32-byte big-endian form to out32.
  constexpr void store_be(uint8_t* out32) const noexcept {
    for (int i = 0; i < 4; ++i)
      be::store64(out32 + 8 * i, w[3 - i]);
  }
  [[nodiscard]] constexpr hash256 to_be() const noexcept {
    hash256 out{};
    store_be(out.data());
    return out;
  }
  /// Reads exactly 32 big-endian bytes.
  [[nodiscard]] static constexpr u256 load_be(const uint8_t* in32) noexcept {
    u256 r;
    for (int i = 0; i < 4; ++i)
      r.w[3 - i] = be::load64(in32 + 8 * i);
    return r;
  }
  /// Big-endian bytes of any length up to 32 (shorter input is left-padded with zeros).
  [[nodiscard]] static result<u256> from_be(bytes_view in, std::string_view what = "uint256") {
    if (in.size() > 32)
      return fail(u256_errc::too_long,
                  std::string(what) + ": " + std::to_string(in.size()) + " bytes, at most 32 allowed");
    hash256 buf{};
    for (size_t i = 0; i < in.size(); ++i)
      buf[32 - in.size() + i] = in[i];
    return load_be(buf.data());
  }

  // --- text -------------------------------------------------------------------------------
  /// Decimal, or hex after `0x`/`0X`. No signs, spaces or separators.
  [[nodiscard]] static result<u256> from_string(std::string_view s, std::string_view what = "uint256");
  /// Decimal digits only.
  [[nodiscard]] static result<u256> from_dec(std::string_view s, std::string_view what = "uint256");
  /// Hex digits, with or without `0x`.
  [[nodiscard]] static result<u256> from_hex(std::string_view s, std::string_view what = "uint256");
  /// An int256 written as decimal or 0x-hex with an optional leading '-'; returns its 256-bit
  /// two's complement. Accepts exactly [-2^255, 2^255-1].
  [[nodiscard]] static result<u256> from_signed_string(std::string_view s, std::string_view what = "int256");

  [[nodiscard]] std::string to_string() const;
  /// "0x" + minimal lowercase hex ("0x0" for zero).
  [[nodiscard]] std::string to_hex() const;
  /// Decimal of the value read as int256 ("-1" for max()).
  [[nodiscard]] std::string to_signed_string() const {
    return is_negative_twos() ? "-" + (-*this).to_string() : to_string();
  }
};

/// Quotient and remainder; a zero divisor is an error rather than the EVM's silent zero.
[[nodiscard]] inline result<std::pair<u256, u256>> divmod(const u256& a, const u256& b) {
  if (!b)
    return fail(u256_errc::division_by_zero, "divmod: division by zero");
  return u256::divmod_unchecked(a, b);
}

namespace detail {
/// Parsing core shared by the runtime parsers and the consteval literal. On failure returns the
/// error and sets `at` to the offending offset.
constexpr u256_errc parse_digits(std::string_view s, bool hex, u256& out, size_t& at) noexcept {
  out = u256{};
  at = 0;
  if (s.empty())
    return u256_errc::empty;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    int d = -1;
    if (hex) {
      d = enact::codec::hex::detail::nibble(c);
    } else if (c >= '0' && c <= '9') {
      d = c - '0';
    }
    if (d < 0) {
      at = i;
      return u256_errc::bad_digit;
    }
    if (hex) {
      if (out.w[3] >> 60) {
        at = i;
        return u256_errc::overflow;
      }
      out = (out << 4) | u256{static_cast<uint64_t>(d)};
    } else {
      uint64_t carry = static_cast<uint64_t>(d);
      for (int k = 0; k < 4; ++k) {
        auto [lo, hi] = umul(out.w[k], 10);
        lo += carry;
        hi += static_cast<uint64_t>(lo < carry);
        out.w[k] = lo;
        carry = hi;
      }
      if (carry != 0) {
        at = i;
        return u256_errc::overflow;
      }
    }
  }
  return u256_errc{};
}

inline result<u256> parse_checked(std::string_view s, bool hex, size_t prefix, std::string_view what) {
  u256 v;
  size_t at = 0;
  switch (parse_digits(s.substr(prefix), hex, v, at)) {
    case u256_errc::empty:
      return fail(u256_errc::empty, std::string(what) + ": no digits");
    case u256_errc::bad_digit: {
      const char c = s[prefix + at];
      std::string shown =
          (c >= 0x21 && c < 0x7f) ? std::string("'") + c + "'" : "byte " + std::to_string(static_cast<uint8_t>(c));
      return fail(u256_errc::bad_digit, std::string(what) + ": invalid " + (hex ? "hex" : "decimal") + " digit " +
                                            shown + " at offset " + std::to_string(prefix + at));
    }
    case u256_errc::overflow:
      return fail(u256_errc::overflow, std::string(what) + ": value exceeds 2^256-1");
    default:
      return v;
  }
}
}  // namespace detail

inline result<u256> u256::from_dec(std::string_view s, std::string_view what) {
  return detail::parse_checked(s, false, 0, what);
}
inline result<u256> u256::from_hex(std::string_view s, std::string_view what) {
  return detail::parse_checked(s, true, codec::hex::detail::has_prefix(s) ? 2 : 0, what);
}
inline result<u256> u256::from_string(std::string_view s, std::string_view what) {
  return codec::hex::detail::has_prefix(s) ? detail::parse_checked(s, true, 2, what)
                                           : detail::parse_checked(s, false, 0, what);
}
inline result<u256> u256::from_signed_string(std::string_view s, std::string_view what) {
  constexpr u256 kMinMagnitude = u256{1} << 255;
  const bool negative = !s.empty() && s[0] == '-';
  const size_t sign = negative ? 1 : 0;
  const bool hex = codec::hex::detail::has_prefix(s.substr(sign));
  auto mag = detail::parse_checked(s, hex, sign + (hex ? 2 : 0), what);
  if (!mag)
    return mag;
  if (negative ? *mag > kMinMagnitude : *mag >= kMinMagnitude)
    return fail(u256_errc::overflow, std::string(what) + ": value outside [-2^255, 2^255-1]");
  return negative ? -*mag : *mag;
}

inline std::string u256::to_string() const {
  if (!*this)
    return "0";
  // Peel off nine decimal digits at a time with a short division by 10^9.
  std::string out;
  u256 v = *this;
  while (v) {
    auto [q, r] = divmod_unchecked(v, u256{1000000000});
    auto chunk = static_cast<uint32_t>(r.w[0]);
    for (int i = 0; i < 9; ++i) {
      out.push_back(static_cast<char>('0' + chunk % 10));
      chunk /= 10;
      if (!q && chunk == 0)
        break;
    }
    v = q;
  }
  return {out.rbegin(), out.rend()};
}

inline std::string u256::to_hex() const {
  const unsigned digits = bit_width() == 0 ? 1 : (bit_width() + 3) / 4;
  std::string out = "0x";
  for (int i = static_cast<int>(digits) - 1; i >= 0; --i)
    out.push_back(codec::hex::detail::kDigits[(w[static_cast<size_t>(i) / 16] >> (4 * (i % 16))) & 0xf]);
  return out;
}

namespace literals {
/// `115792089237316195423570985008687907853269984665640564039457584007913129639935_u256`,
/// `0xff_u256`; digit separators (') are allowed. A malformed or too large literal does not
/// compile.
consteval u256 operator""_u256(const char* s) {
  std::string_view sv(s);
  char buf[80]{};
  size_t n = 0;
  const bool hex = sv.size() > 2 && sv[0] == '0' && (sv[1] == 'x' || sv[1] == 'X');
  if (hex)
    sv.remove_prefix(2);
  for (char c : sv) {
    if (c == '\'')
      continue;
    if (n == sizeof buf)
      throw "u256 literal too long";
    buf[n++] = c;
  }
  u256 v;
  size_t at = 0;
  if (detail::parse_digits(std::string_view(buf, n), hex, v, at) != u256_errc{})
    throw "invalid u256 literal";
  return v;
}
}  // namespace literals

}  // namespace enact
