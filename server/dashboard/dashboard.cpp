// SPDX-License-Identifier: Apache-2.0
#include "dashboard/dashboard.hpp"

#include <httplib.h>
#include <boost/json.hpp>

#include <algorithm>
#include <cctype>
#include <mutex>
#include <string>

#include "dashboard/attestation.hpp"
#include "enact/api/errc.hpp"

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

namespace {

bool is_loopback_host(std::string_view host) {
  if (host == "localhost" || host == "[::1]")
    return true;
  // 127.0.0.0/8 written as four decimal octets; "127.0.0.1.example.org" is a name, not loopback.
  int octets = 0;
  size_t at = 0;
  while (at <= host.size()) {
    const size_t dot = std::min(host.find('.', at), host.size());
    const std::string_view part = host.substr(at, dot - at);
    if (part.empty() || part.size() > 3 ||
        !std::all_of(part.begin(), part.end(), [](unsigned char c) { return std::isdigit(c) != 0; }))
      return false;
    if (octets == 0 && part != "127")
      return false;
    if (std::stoi(std::string(part)) > 255)
      return false;
    ++octets;
    at = dot + 1;
  }
  return octets == 4;
}

/// The host of an authority "host[:port]" (an IPv6 literal keeps its brackets).
std::string_view host_of(std::string_view authority) {
  if (authority.starts_with('['))
    return authority.substr(0, authority.find(']') + 1);
  return authority.substr(0, authority.find(':'));
}

}  // namespace

result<std::string> stripe_js_origin(std::string_view url) {
  const bool https = url.starts_with("https://");
  if (!https && !url.starts_with("http://"))
    return fail(api_errc::invalid_request, "expected an https:// URL (http:// only on a loopback host)");
  const std::string_view rest = url.substr(https ? 8 : 7);
  const size_t slash = rest.find('/');
  const std::string_view authority = rest.substr(0, slash);
  const std::string_view path = slash == std::string_view::npos ? std::string_view{} : rest.substr(slash);
  if (authority.empty())
    return fail(api_errc::invalid_request, "missing host");
  if (authority.find('@') != std::string_view::npos)
    return fail(api_errc::invalid_request, "host: no user information allowed");
  // The origin goes into a policy header: nothing a policy would read as a separator.
  const std::string origin = origin_of(url.substr(0, (https ? 8 : 7) + authority.size()));
  if (origin.empty())
    return fail(api_errc::invalid_request, "host: only letters, digits, '.', '-', ':' and an [IPv6] literal");
  if (!std::all_of(path.begin(), path.end(), [](unsigned char c) { return c > 0x20 && c < 0x7f; }) ||
      path.find_first_of("?#") != std::string_view::npos)
    return fail(api_errc::invalid_request, "path: no query, fragment, space or control character");
  if (!https && !is_loopback_host(host_of(origin.substr(7))))
    return fail(api_errc::invalid_request, "http only on a loopback host (127.0.0.0/8, [::1], localhost)");
  return origin;
}

std::string policy_for(const page_settings& s) {
  std::string script = "'self'";
  std::string connect = "'self'";
  std::string frame;
  if (s.triggers_url) {
    if (const std::string origin = origin_of(*s.triggers_url); !origin.empty())
      connect += " " + origin;
  }
  if (s.stripe_js_url) {
    if (const auto origin = stripe_js_origin(*s.stripe_js_url); !origin) {
      // Checked when the setting was read; a URL refused here adds nothing to the policy.
    } else if (*origin == "https://js.stripe.com") {
      // Exactly what Stripe's integration security guide lists for Stripe.js and the Payment
      // Element (https://docs.stripe.com/security/guide#content-security-policy).
      script += " https://js.stripe.com https://*.js.stripe.com";
      frame = "https://js.stripe.com https://*.js.stripe.com https://hooks.stripe.com";
      connect += " https://api.stripe.com";
    } else {
      // A stand-in (tests) serves the script, its frames and its API from its one origin.
      script += " " + *origin;
      frame = *origin;
      connect += " " + *origin;
    }
  }
  return "default-src 'none'; script-src " + script + "; style-src 'self'; connect-src " + connect +
         "; img-src 'self' data:; " + (frame.empty() ? std::string() : "frame-src " + frame + "; ") +
         "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
}

void configure(page_settings s) {
  configured& c = current();
  const std::lock_guard lock(c.mu);
  c.policy = policy_for(s);
  c.settings = std::move(s);
}

void set_triggers_url(std::optional<std::string> url) {
  configured& c = current();
  const std::lock_guard lock(c.mu);
  c.settings.triggers_url = std::move(url);
  c.policy = policy_for(c.settings);
}

void set_stripe_js_url(std::optional<std::string> url) {
  configured& c = current();
  const std::lock_guard lock(c.mu);
  c.settings.stripe_js_url = std::move(url);
  c.policy = policy_for(c.settings);
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
    boost::json::object body{{"triggers_url", nullptr}, {"stripe_js_url", nullptr}};
    {
      configured& c = current();
      const std::lock_guard lock(c.mu);
      if (c.settings.triggers_url)
        body["triggers_url"] = *c.settings.triggers_url;
      if (c.settings.stripe_js_url)
        body["stripe_js_url"] = *c.settings.stripe_js_url;
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
