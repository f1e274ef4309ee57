// SPDX-License-Identifier: Apache-2.0
#include "dashboard/dashboard.hpp"

#include <httplib.h>
#include <boost/json.hpp>

#include <algorithm>
#include <cctype>
#include <mutex>
#include <string>

#include "dashboard/attestation.hpp"

namespace enact::dashboard {

namespace {

/// The process's page settings and the policy made from them (configure).
struct configured {
  std::mutex mu;
  page_settings settings;
  std::string policy{kPolicy};
};

configured& current() {
  static configured c;
  return c;
}

std::string current_policy() {
  configured& c = current();
  const std::lock_guard lock(c.mu);
  return c.policy;
}

void common_headers(httplib::Response& res) {
  res.set_header("Content-Security-Policy", current_policy());
  res.set_header("X-Content-Type-Options", "nosniff");
  res.set_header("X-Frame-Options", "DENY");
  res.set_header("Referrer-Policy", "no-referrer");
}

void send_file(httplib::Response& res, const file& f) {
  common_headers(res);
  res.set_header("Cache-Control", "no-cache");
  res.set_content(f.body.data(), f.body.size(), std::string(content_type_of(f.name)));
}

}  // namespace

std::string origin_of(std::string_view url) {
  std::string lower(url);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  const size_t scheme_end = lower.find("://");
  if (scheme_end == std::string::npos)
    return {};
  const std::string scheme = lower.substr(0, scheme_end);
  if (scheme != "http" && scheme != "https")
    return {};
  const size_t host_start = scheme_end + 3;
  const size_t host_end = lower.find_first_of("/?#", host_start);
  const std::string authority =
      lower.substr(host_start, host_end == std::string::npos ? std::string::npos : host_end - host_start);
  // An origin is only a host and a port: no user information, no characters a policy or a header
  // would read as a separator.
  const bool plain = !authority.empty() && std::all_of(authority.begin(), authority.end(), [](unsigned char ch) {
    return std::isalnum(ch) != 0 || ch == '.' || ch == '-' || ch == ':' || ch == '[' || ch == ']';
  });
  return plain ? scheme + "://" + authority : std::string();
}

std::string policy_for(const page_settings& s) {
  std::string connect = "'self'";
  if (s.triggers_url) {
    if (const std::string origin = origin_of(*s.triggers_url); !origin.empty())
      connect += " " + origin;
  }
  return "default-src 'none'; script-src 'self'; style-src 'self'; connect-src " + connect +
         "; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
}

void configure(page_settings s) {
  configured& c = current();
  const std::lock_guard lock(c.mu);
  c.policy = policy_for(s);
  c.settings = std::move(s);
}

std::optional<file> find(std::string_view name) noexcept {
  for (const file& f : files())
    if (f.name == name)
      return f;
  return std::nullopt;
}

std::string_view content_type_of(std::string_view name) noexcept {
  if (name.ends_with(".html"))
    return "text/html; charset=utf-8";
  if (name.ends_with(".js"))
    return "text/javascript; charset=utf-8";
  if (name.ends_with(".css"))
    return "text/css; charset=utf-8";
  return "application/octet-stream";
}

void mount(httplib::Server& server) {
  mount_attestation_checks(server);
  server.Get("/dashboard", [](const httplib::Request&, httplib::Response& res) {
    common_headers(res);
    res.set_redirect("/dashboard/", 302);
  });
  server.Get("/dashboard/",
             [](const httplib::Request&, httplib::Response& res) { send_file(res, *find("index.html")); });
  server.Get("/dashboard/settings", [](const httplib::Request&, httplib::Response& res) {
    boost::json::object body{{"triggers_url", nullptr}};
    {
      configured& c = current();
      const std::lock_guard lock(c.mu);
      if (c.settings.triggers_url)
        body["triggers_url"] = *c.settings.triggers_url;
    }
    common_headers(res);
    res.set_header("Cache-Control", "no-cache");
    res.set_content(boost::json::serialize(body), "application/json");
  });
  server.Get("/dashboard/([A-Za-z0-9._-]+)", [](const httplib::Request& req, httplib::Response& res) {
    const std::string name = req.matches[1].str();
    if (const auto f = find(name)) {
      send_file(res, *f);
      return;
    }
    // docs/protocol.md §0 error shape; the name is echoed through the JSON serializer, never raw.
    const boost::json::object body{
        {"error", {{"code", "not_found"}, {"message", "no dashboard file named \"" + name + "\""}}}};
    common_headers(res);
    res.status = 404;
    res.set_content(boost::json::serialize(body), "application/json");
  });
}

}  // namespace enact::dashboard
