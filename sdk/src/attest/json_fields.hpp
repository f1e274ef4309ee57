// SPDX-License-Identifier: Apache-2.0
// Field readers for the JSON the attest module takes in (collateral, event logs, /info,
// evidence files): each returns result<T> with attest_errc::bad_field and a message naming the
// field as "<what>.<key>". Internal to the attest module.
#pragma once

#include <boost/json.hpp>

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "enact/attest/report.hpp"
#include "enact/codec/hex.hpp"
#include "enact/result.hpp"

namespace enact::attest::detail {

namespace json = boost::json;

inline std::string field_name(std::string_view what, std::string_view key) {
  return what.empty() ? std::string(key) : std::string(what) + "." + std::string(key);
}

/// Parses JSON text (bad_json naming `what`).
[[nodiscard]] inline result<json::value> parse_json(std::string_view text, std::string_view what) {
  boost::system::error_code ec;
  json::value v = json::parse(text, ec);
  if (ec)
    return fail(attest_errc::bad_json, std::string(what) + ": not JSON (" + ec.message() + ")");
  return v;
}

[[nodiscard]] inline result<const json::object*> as_object(const json::value& v, std::string_view what) {
  if (!v.is_object())
    return fail(attest_errc::bad_field, std::string(what) + ": expected a JSON object");
  return &v.get_object();
}

[[nodiscard]] inline result<const json::value*> member(const json::object& o, std::string_view what,
                                                       std::string_view key) {
  const json::value* v = o.if_contains(key);
  if (v == nullptr)
    return fail(attest_errc::bad_field, field_name(what, key) + ": missing");
  return v;
}

[[nodiscard]] inline result<std::string_view> get_string(const json::object& o, std::string_view what,
                                                         std::string_view key) {
  ENACT_TRY(const json::value* v, member(o, what, key));
  if (!v->is_string())
    return fail(attest_errc::bad_field, field_name(what, key) + ": expected a string");
  return std::string_view(v->get_string());
}

/// An unsigned integer field up to `max`.
[[nodiscard]] inline result<uint64_t> get_uint(const json::object& o, std::string_view what, std::string_view key,
                                               uint64_t max = std::numeric_limits<uint32_t>::max()) {
  ENACT_TRY(const json::value* v, member(o, what, key));
  uint64_t x = 0;
  if (const auto* i = v->if_int64(); i != nullptr && *i >= 0)
    x = static_cast<uint64_t>(*i);
  else if (const auto* u = v->if_uint64(); u != nullptr)
    x = *u;
  else
    return fail(attest_errc::bad_field, field_name(what, key) + ": expected a non-negative integer");
  if (x > max)
    return fail(attest_errc::bad_field,
                field_name(what, key) + ": " + std::to_string(x) + " exceeds " + std::to_string(max));
  return x;
}

/// A hex string field decoded into exactly out.size() bytes.
[[nodiscard]] inline result<void> get_hex_into(const json::object& o, std::string_view what, std::string_view key,
                                               std::span<uint8_t> out) {
  ENACT_TRY(std::string_view s, get_string(o, what, key));
  auto r = codec::hex::decode_into(s, out, field_name(what, key));
  if (!r)
    return fail(attest_errc::bad_field, r.err().message);
  return {};
}

/// A hex string field of any even length.
[[nodiscard]] inline result<bytes> get_hex(const json::object& o, std::string_view what, std::string_view key) {
  ENACT_TRY(std::string_view s, get_string(o, what, key));
  auto r = codec::hex::decode(s, field_name(what, key));
  if (!r)
    return fail(attest_errc::bad_field, r.err().message);
  return std::move(r).value();
}

}  // namespace enact::attest::detail
