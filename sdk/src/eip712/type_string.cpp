// SPDX-License-Identifier: Apache-2.0
// EIP-712 type strings (https://eips.ethereum.org/EIPS/eip-712): atomic types, struct and member
// names, array suffixes.
#include "type_string.hpp"

namespace enact::eip712::detail {
namespace {

bool all_digits(std::string_view s) noexcept {
  if (s.empty())
    return false;
  for (char c : s)
    if (c < '0' || c > '9')
      return false;
  return true;
}

/// A decimal without leading zeros and at most 9 digits (so it fits any integer type used here).
std::optional<unsigned> small_decimal(std::string_view s) noexcept {
  if (!all_digits(s) || s.size() > 9 || (s.size() > 1 && s[0] == '0'))
    return std::nullopt;
  unsigned v = 0;
  for (char c : s)
    v = v * 10 + static_cast<unsigned>(c - '0');
  return v;
}

/// An identifier: letters, digits, '_' and the characters of `also`, not starting with a digit.
bool is_identifier(std::string_view s, std::string_view also) noexcept {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9'))
    return false;
  for (char c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                    also.find(c) != std::string_view::npos;
    if (!ok)
      return false;
  }
  return true;
}

}  // namespace

std::optional<atomic> parse_atomic(std::string_view t) noexcept {
  if (t == "address")
    return atomic{atomic_kind::address};
  if (t == "bool")
    return atomic{atomic_kind::bool_};
  if (t == "string")
    return atomic{atomic_kind::string};
  if (t == "bytes")
    return atomic{atomic_kind::bytes};
  if (t.starts_with("bytes")) {
    auto n = small_decimal(t.substr(5));
    if (n && *n >= 1 && *n <= 32)
      return atomic{atomic_kind::bytes_fixed, *n};
    return std::nullopt;
  }
  const bool is_uint = t.starts_with("uint");
  if (is_uint || t.starts_with("int")) {
    auto n = small_decimal(t.substr(is_uint ? 4 : 3));
    if (n && *n >= 8 && *n <= 256 && *n % 8 == 0)
      return atomic{is_uint ? atomic_kind::uint_ : atomic_kind::int_, *n};
  }
  return std::nullopt;
}

bool looks_atomic(std::string_view t) noexcept {
  if (t == "address" || t == "bool" || t == "string")
    return true;
  for (std::string_view prefix : {"uint", "int", "bytes"}) {
    if (t.starts_with(prefix)) {
      const auto rest = t.substr(prefix.size());
      if (rest.empty() || all_digits(rest))
        return true;
    }
  }
  return false;
}

bool is_struct_name(std::string_view s) noexcept { return is_identifier(s, ""); }

bool is_member_name(std::string_view s) noexcept { return is_identifier(s, "$"); }

split_status split_array(std::string_view t, array_split& out) noexcept {
  if (t.empty() || t.back() != ']')
    return split_status::not_array;
  const size_t open = t.rfind('[');
  if (open == std::string_view::npos || open == 0)
    return split_status::malformed;
  const auto inside = t.substr(open + 1, t.size() - open - 2);
  out.element = t.substr(0, open);
  if (inside.empty()) {
    out.count.reset();
    return split_status::ok;
  }
  auto n = small_decimal(inside);
  if (!n || *n == 0)
    return split_status::malformed;
  out.count = *n;
  return split_status::ok;
}

std::optional<std::string_view> base_of(std::string_view t) noexcept {
  array_split s;
  for (;;) {
    switch (split_array(t, s)) {
      case split_status::not_array:
        if (t.find_first_of("[]") != std::string_view::npos)
          return std::nullopt;
        return t;
      case split_status::malformed:
        return std::nullopt;
      case split_status::ok:
        t = s.element;
    }
  }
}

bool has_dynamic_dimension(std::string_view t) noexcept { return t.find("[]") != t.npos; }

std::string quoted(std::string_view s) { return "'" + std::string(s) + "'"; }
}  // namespace enact::eip712::detail
