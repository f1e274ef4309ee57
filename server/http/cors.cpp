// SPDX-License-Identifier: Apache-2.0
#include "http/cors.hpp"

#include <httplib.h>

#include <algorithm>

#include "http/errors.hpp"

namespace enact::http {
namespace {

bool equal_ignoring_case(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

bool listed(const std::vector<std::string>& list, std::string_view item) {
  return std::any_of(list.begin(), list.end(), [&](const std::string& s) { return equal_ignoring_case(s, item); });
}

std::string joined(const std::vector<std::string>& list) {
  std::string out;
  for (const auto& s : list)
    out += (out.empty() ? "" : ", ") + s;
  return out;
}

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
    s.remove_suffix(1);
  return s;
}

}  // namespace

std::optional<std::string> cors_policy::allowed_origin(std::string_view origin) const {
  if (!enabled() || origin.empty())
    return std::nullopt;
  if (std::find(origins.begin(), origins.end(), "*") != origins.end())
    return std::string("*");
  if (listed(origins, origin))
    return std::string(origin);
  return std::nullopt;
}

bool cors_policy::apply(const httplib::Request& req, httplib::Response& res) const {
  const auto allowed = allowed_origin(req.get_header_value("Origin"));
  if (!allowed)
    return false;
  res.set_header("Access-Control-Allow-Origin", *allowed);
  if (*allowed != "*")
    res.set_header("Vary", "Origin");
  if (!expose.empty())
    res.set_header("Access-Control-Expose-Headers", joined(expose));
  return true;
}

void cors_policy::preflight(const httplib::Request& req, httplib::Response& res) const {
  const auto allowed = allowed_origin(req.get_header_value("Origin"));
  bool ok = allowed.has_value() && listed(methods, req.get_header_value("Access-Control-Request-Method"));
  const std::string requested = req.get_header_value("Access-Control-Request-Headers");
  std::string_view wanted = requested;
  while (ok && !wanted.empty()) {
    const auto comma = wanted.find(',');
    const std::string_view name = trimmed(wanted.substr(0, comma));
    wanted = comma == std::string_view::npos ? std::string_view() : wanted.substr(comma + 1);
    ok = name.empty() || listed(headers, name);
  }
  if (!ok) {
    send_error(res, make_error(api_errc::forbidden,
                               "CORS preflight refused: the origin, the method or a header is not allowed"));
    return;
  }
  res.status = 204;
  res.set_header("Access-Control-Allow-Origin", *allowed);
  if (*allowed != "*")
    res.set_header("Vary", "Origin");
  res.set_header("Access-Control-Allow-Methods", joined(methods));
  res.set_header("Access-Control-Allow-Headers", joined(headers));
  res.set_header("Access-Control-Max-Age", std::to_string(max_age.count()));
}

}  // namespace enact::http
