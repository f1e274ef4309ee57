// SPDX-License-Identifier: Apache-2.0
// The Solidity ABI's JSON and command-line bridge (abi_json.hpp, codec::abi::from_cli_arg): values read
// from ethers-style JSON or command-line text, and written as JSON.
#include "enact/codec/abi_json.hpp"

#include <boost/json.hpp>

#include <cmath>

#include "abi_detail.hpp"
#include "enact/codec/hex.hpp"
#include "enact/address.hpp"

namespace enact::codec::abi {

using detail::check_type;
using detail::mismatch;
using detail::npos;
using detail::path;
using detail::wrong_count;

namespace {

/// An integer written as text: optional '-', then decimal or 0x hex.
result<value> int_from_text(const type& t, std::string_view s, const path& p) {
  const bool negative = !s.empty() && s[0] == '-';
  if (negative)
    s.remove_prefix(1);
  const std::string where = p.str();
  auto mag = u256::from_string(s, where);
  if (!mag)
    return fail(abi_errc::bad_value, mag.err().message);
  const u256 m = *mag;
  bool ok = false;
  if (t.kind == type_kind::uint_n) {
    ok = (!negative || !m) && m.fits_bits(t.bits);
  } else {
    const u256 limit = u256{1} << (t.bits - 1);
    ok = negative ? m <= limit : m < limit;
  }
  if (!ok)
    return fail(abi_errc::out_of_range,
                where + ": " + (negative ? "-" : "") + m.to_string() + " out of range for " + t.canonical());
  return value::number(negative ? -m : m);
}

const char* json_kind(const boost::json::value& v) {
  switch (v.kind()) {
    case boost::json::kind::null:
      return "null";
    case boost::json::kind::bool_:
      return "a bool";
    case boost::json::kind::int64:
    case boost::json::kind::uint64:
    case boost::json::kind::double_:
      return "a number";
    case boost::json::kind::string:
      return "a string";
    case boost::json::kind::array:
      return "an array";
    case boost::json::kind::object:
      return "an object";
  }
  return "?";
}

error json_mismatch(const type& t, const boost::json::value& v, const path& p) {
  return fail(abi_errc::type_mismatch, p.str() + ": expected " + t.canonical() + ", got " + json_kind(v));
}

result<value> int_from_json(const type& t, const boost::json::value& v, const path& p) {
  if (v.is_string())
    return int_from_text(t, std::string_view(v.get_string()), p);
  if (v.is_int64()) {
    const int64_t i = v.get_int64();
    const std::string text = std::to_string(i);
    return int_from_text(t, text, p);
  }
  if (v.is_uint64())
    return int_from_text(t, std::to_string(v.get_uint64()), p);
  if (v.is_double()) {
    // Boost.JSON reads integers beyond 64 bits (and 1e3) as doubles; accept only those a double
    // holds exactly (|x| <= 2^53), as ethers refuses unsafe JavaScript integers.
    const double d = v.get_double();
    constexpr double kMaxExact = 9007199254740992.0;
    if (!std::isfinite(d) || std::trunc(d) != d || std::fabs(d) > kMaxExact)
      return fail(abi_errc::bad_value, p.str() + ": number is not an exact integer (write large integers as strings)");
    const auto mag = static_cast<uint64_t>(std::fabs(d));
    return int_from_text(t, (d < 0 ? "-" : "") + std::to_string(mag), p);
  }
  return json_mismatch(t, v, p);
}

result<value> address_from_text(std::string_view s, const path& p) {
  auto a = parse_address(s, p.str());
  if (!a)
    return fail(abi_errc::bad_value, a.err().message);
  return value::addr(*a);
}

result<value> bytes_from_text(const type& t, std::string_view s, const path& p) {
  auto b = codec::hex::decode_prefixed(s, p.str());
  if (!b)
    return fail(abi_errc::bad_value, b.err().message);
  if (t.kind == type_kind::fixed_bytes && b->size() != t.size)
    return wrong_count(p, "bytes", t.size, b->size());
  return value::blob(std::move(b).value());
}

result<value> from_json_at(const type& t, const boost::json::value& v, const path& p) {
  switch (t.kind) {
    case type_kind::uint_n:
    case type_kind::int_n:
      return int_from_json(t, v, p);
    case type_kind::boolean:
      if (!v.is_bool())
        return json_mismatch(t, v, p);
      return value::boolean(v.get_bool());
    case type_kind::address:
      if (!v.is_string())
        return json_mismatch(t, v, p);
      return address_from_text(std::string_view(v.get_string()), p);
    case type_kind::fixed_bytes:
    case type_kind::bytes:
      if (!v.is_string())
        return json_mismatch(t, v, p);
      return bytes_from_text(t, std::string_view(v.get_string()), p);
    case type_kind::string:
      if (!v.is_string())
        return json_mismatch(t, v, p);
      return value::text(std::string(v.get_string()));
    case type_kind::array:
    case type_kind::fixed_array:
    case type_kind::tuple: {
      if (!v.is_array())
        return json_mismatch(t, v, p);
      const auto& a = v.get_array();
      const bool tuple = t.kind == type_kind::tuple;
      if (t.kind == type_kind::fixed_array && a.size() != t.size)
        return wrong_count(p, "elements", t.size, a.size());
      if (tuple && a.size() != t.components.size())
        return wrong_count(p, "tuple components", t.components.size(), a.size());
      std::vector<value> items;
      items.reserve(a.size());
      for (size_t i = 0; i < a.size(); ++i) {
        ENACT_TRY(value item, from_json_at(tuple ? t.components[i] : t.element(), a[i], p.child(i, tuple)));
        items.push_back(std::move(item));
      }
      return value::list(std::move(items));
    }
  }
  return fail(abi_errc::bad_type, p.str() + ": unknown type kind");
}

boost::json::value to_json_at(const type& t, const value& v, const path& p) {
  const auto check = [&](bool ok) {
    if (!ok)
      throw Error(mismatch(t, v, p));
  };
  switch (t.kind) {
    case type_kind::uint_n:
      check(v.is_number());
      return boost::json::value(std::get<u256>(v.node).to_string());
    case type_kind::int_n:
      check(v.is_number());
      return boost::json::value(std::get<u256>(v.node).to_signed_string());
    case type_kind::address:
      check(v.is_address());
      return boost::json::value(to_checksum_address(std::get<address>(v.node)));
    case type_kind::boolean:
      check(v.is_bool());
      return boost::json::value(std::get<bool>(v.node));
    case type_kind::fixed_bytes:
    case type_kind::bytes:
      check(v.is_bytes());
      return boost::json::value(codec::hex::encode_prefixed(std::get<bytes>(v.node)));
    case type_kind::string:
      check(v.is_string());
      return boost::json::value(std::get<std::string>(v.node));
    case type_kind::array:
    case type_kind::fixed_array:
    case type_kind::tuple: {
      check(v.is_list());
      const auto& items = std::get<std::vector<value>>(v.node);
      const bool tuple = t.kind == type_kind::tuple;
      check(!tuple || items.size() == t.components.size());
      boost::json::array a;
      a.reserve(items.size());
      for (size_t i = 0; i < items.size(); ++i)
        a.push_back(to_json_at(tuple ? t.components[i] : t.element(), items[i], p.child(i, tuple)));
      return a;
    }
  }
  throw Error(fail(abi_errc::bad_type, p.str() + ": unknown type kind"));
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// JSON and command line

result<value> from_json(const type& t, const boost::json::value& v, std::string_view what) {
  ENACT_TRY_VOID(check_type(t));
  return from_json_at(t, v, path{nullptr, what, npos, false});
}

boost::json::value to_json(const type& t, const value& v) {
  if (auto ok = check_type(t); !ok)
    throw Error(ok.err());
  return to_json_at(t, v, path{nullptr, "value", npos, false});
}

result<value> from_cli_arg(const type& t, std::string_view arg, std::string_view what) {
  ENACT_TRY_VOID(check_type(t));
  const path p{nullptr, what, npos, false};
  switch (t.kind) {
    case type_kind::uint_n:
    case type_kind::int_n:
      return int_from_text(t, arg, p);
    case type_kind::boolean:
      if (arg == "true")
        return value::boolean(true);
      if (arg == "false")
        return value::boolean(false);
      return fail(abi_errc::bad_value, p.str() + ": expected true or false");
    case type_kind::address:
      return address_from_text(arg, p);
    case type_kind::fixed_bytes:
    case type_kind::bytes:
      return bytes_from_text(t, arg, p);
    case type_kind::string:
      return value::text(std::string(arg));
    case type_kind::array:
    case type_kind::fixed_array:
    case type_kind::tuple: {
      boost::json::parse_options opt;
      opt.max_depth = kMaxTypeDepth + 1;
      boost::system::error_code ec;
      const boost::json::value v = boost::json::parse(arg, ec, {}, opt);
      if (ec)
        return fail(abi_errc::bad_value,
                    p.str() + ": " + t.canonical() + " must be written as JSON (" + ec.message() + ")");
      return from_json_at(t, v, p);
    }
  }
  return fail(abi_errc::bad_type, p.str() + ": unknown type kind");
}

}  // namespace enact::codec::abi
