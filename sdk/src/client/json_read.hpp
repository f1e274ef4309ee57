// SPDX-License-Identifier: Apache-2.0
// Field readers for response bodies: each names the field in its error, which is an enact::Error
// with api_errc::bad_response (the client adds the status and request id). Ids and counts are
// JSON integers, also accepted as decimal strings (docs/protocol.md §0 allows that form for ids).
#pragma once

#include <boost/json.hpp>

#include <charconv>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include "enact/bytes.hpp"
#include "enact/api/errc.hpp"
#include "enact/codec/hex.hpp"
#include "enact/address.hpp"
#include "enact/secret.hpp"

namespace enact::client::detail::read {

namespace json = boost::json;

[[noreturn]] inline void bad(const std::string& message) {
  throw Error(make_error_code(api_errc::bad_response), message);
}

inline const json::object& expect_object(const json::value& v, std::string_view what) {
  if (!v.is_object())
    bad(std::string(what) + ": expected a JSON object");
  return v.get_object();
}

inline const json::value& require(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  if (v == nullptr)
    bad(std::string(key) + ": missing");
  return *v;
}

/// A required string.
inline std::string get_string(const json::object& o, std::string_view key) {
  const json::value& v = require(o, key);
  if (!v.is_string())
    bad(std::string(key) + ": expected a string");
  return std::string(v.get_string());
}

/// Free text (a name, a description): absent or null reads as empty.
inline std::string get_text(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  if (v == nullptr || v->is_null())
    return {};
  if (!v->is_string())
    bad(std::string(key) + ": expected a string");
  return std::string(v->get_string());
}

inline bool get_bool(const json::object& o, std::string_view key) {
  const json::value& v = require(o, key);
  if (!v.is_bool())
    bad(std::string(key) + ": expected true or false");
  return v.get_bool();
}

/// The integer a whole string spells in decimal (numbers may come as strings on the wire), or
/// nothing.
template <class Int>
std::optional<Int> decimal(std::string_view s) {
  Int out = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  if (s.empty() || ec != std::errc() || p != s.data() + s.size())
    return std::nullopt;
  return out;
}

inline uint64_t to_u64(const json::value& v, const std::string& what) {
  if (v.is_uint64())
    return v.get_uint64();
  if (v.is_int64() && v.get_int64() >= 0)
    return static_cast<uint64_t>(v.get_int64());
  if (const auto n = v.is_string() ? decimal<uint64_t>(v.get_string()) : std::nullopt)
    return *n;
  bad(what + ": expected a non-negative integer");
}

inline int64_t to_i64(const json::value& v, const std::string& what) {
  if (v.is_int64())
    return v.get_int64();
  if (v.is_uint64() && v.get_uint64() <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
    return static_cast<int64_t>(v.get_uint64());
  if (const auto n = v.is_string() ? decimal<int64_t>(v.get_string()) : std::nullopt)
    return *n;
  bad(what + ": expected an integer");
}

/// A count or id; when not `required`, absent or null reads as 0.
inline uint64_t get_u64(const json::object& o, std::string_view key, bool required = true) {
  const json::value* v = o.if_contains(key);
  if (!required && (v == nullptr || v->is_null()))
    return 0;
  return to_u64(require(o, key), std::string(key));
}

inline int64_t get_i64(const json::object& o, std::string_view key, bool required = true) {
  const json::value* v = o.if_contains(key);
  if (!required && (v == nullptr || v->is_null()))
    return 0;
  return to_i64(require(o, key), std::string(key));
}

inline address to_address(const json::value& v, const std::string& what) {
  if (!v.is_string())
    bad(what + ": expected a 0x address string");
  auto a = parse_address(v.get_string(), what);
  if (!a)
    bad(a.err().message);
  return *a;
}

inline hash256 to_hash(const json::value& v, const std::string& what) {
  if (!v.is_string())
    bad(what + ": expected a 0x hash string");
  const std::string_view s = v.get_string();
  if (!codec::hex::detail::has_prefix(s))
    bad(what + ": missing 0x prefix");
  auto h = codec::hex::decode_fixed<32>(s, what);
  if (!h)
    bad(h.err().message);
  return *h;
}

inline address get_address(const json::object& o, std::string_view key) {
  return to_address(require(o, key), std::string(key));
}

inline hash256 get_hash(const json::object& o, std::string_view key) {
  return to_hash(require(o, key), std::string(key));
}

/// A key value: non-empty text, kept only as a Secret. The message never quotes it.
inline Secret get_secret(const json::object& o, std::string_view key) {
  const json::value& v = require(o, key);
  if (!v.is_string() || v.get_string().empty())
    bad(std::string(key) + ": expected a key string");
  return Secret(as_bytes(v.get_string()));
}

}  // namespace enact::client::detail::read
