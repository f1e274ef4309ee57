// SPDX-License-Identifier: Apache-2.0
#include "core/swagger_mount.hpp"

#include <httplib.h>
#include <boost/json.hpp>

#include <memory>
#include <string>

#include "core/swagger_ui.hpp"

namespace enact::core {

namespace {

// httplib route patterns are ECMAScript regular expressions matched against the whole path.
std::string regex_escape(std::string_view text) {
  std::string out;
  for (const char c : text) {
    if (std::string_view{R"(\^$.|?*+()[]{}/-)"}.find(c) != std::string_view::npos)
      out += '\\';
    out += c;
  }
  return out;
}

}  // namespace

void mount_swagger_ui(httplib::Server& server, std::string_view prefix) {
  // The page depends only on the prefix: build it once.
  auto page = std::make_shared<const std::string>(swagger_ui_page(prefix));
  const std::string base = regex_escape(prefix) + "/swagger-ui";

  server.Get(base + "/?", [page](const httplib::Request&, httplib::Response& res) {
    res.set_header("Cache-Control", "no-cache");
    res.set_header("Content-Security-Policy", std::string(kSwaggerUiPagePolicy));
    res.set_header("X-Content-Type-Options", "nosniff");
    res.set_content(*page, "text/html; charset=utf-8");
  });

  server.Get(base + "/(.+)", [](const httplib::Request& req, httplib::Response& res) {
    const std::string name = req.matches[1].str();
    res.set_header("X-Content-Type-Options", "nosniff");
    if (const auto asset = swagger_asset(name)) {
      res.set_header("Cache-Control", "public, max-age=86400");
      res.set_content(asset->body.data(), asset->body.size(), std::string(asset->content_type));
      return;
    }
    // docs/protocol.md §0 error shape; the name is echoed through the JSON serializer, never raw.
    const boost::json::object body{
        {"error", {{"code", "not_found"}, {"message", "no Swagger UI asset named \"" + name + "\""}}}};
    res.status = 404;
    res.set_content(boost::json::serialize(body), "application/json");
  });
}

}  // namespace enact::core
