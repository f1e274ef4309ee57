// SPDX-License-Identifier: Apache-2.0
#include "dashboard/dashboard.hpp"

#include <httplib.h>
#include <boost/json.hpp>

#include <string>

#include "dashboard/attestation.hpp"

namespace enact::dashboard {

namespace {

void common_headers(httplib::Response& res) {
  res.set_header("Content-Security-Policy", std::string(kPolicy));
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
