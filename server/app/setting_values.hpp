// SPDX-License-Identifier: Apache-2.0
// The value readers of enact-server's settings (app/config.cpp, app/fetch_config.cpp): one rule
// for what a flag, an environment variable or a config-file value may spell, and one message for
// each kind of refusal (exit 2, the setting named by `what`).
#pragma once

#include <boost/json.hpp>

#include <charconv>
#include <string>
#include <system_error>

#include "core/errors.hpp"

namespace enact::app::setting {

inline error usage(std::string msg) { return fail(api_errc::invalid_request, std::move(msg)); }

/// A non-negative integer: a JSON integer, or its decimal text (flags and variables are text).
template <class T>
result<T> number(const boost::json::value& v, const std::string& what) {
  if (v.is_int64() && v.get_int64() >= 0)
    return static_cast<T>(v.get_int64());
  if (v.is_uint64())
    return static_cast<T>(v.get_uint64());
  if (v.is_string()) {
    T n{};
    const auto& t = v.get_string();
    const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), n);
    if (ec == std::errc{} && end == t.data() + t.size())
      return n;
  }
  return usage(what + ": expected a non-negative integer");
}

/// number(), between `lo` and `hi` inclusive.
template <class T>
result<T> number_in(const boost::json::value& v, const std::string& what, T lo, T hi) {
  auto n = number<T>(v, what);
  if (n && (*n < lo || *n > hi))
    return usage(what + ": expected " + std::to_string(lo) + " to " + std::to_string(hi));
  return n;
}

inline result<bool> boolean(const boost::json::value& v, const std::string& what) {
  if (v.is_bool())
    return v.get_bool();
  if (v.is_string() && (v.get_string() == "true" || v.get_string() == "false"))
    return v.get_string() == "true";
  return usage(what + ": expected true or false");
}

inline result<std::string> text(const boost::json::value& v, const std::string& what) {
  if (!v.is_string())
    return usage(what + ": expected a string");
  return std::string(v.get_string());
}

}  // namespace enact::app::setting
