// SPDX-License-Identifier: Apache-2.0
#include "core/swagger_ui.hpp"

#include "core/swagger/embedded_files.hpp"
#include "http/html.hpp"

namespace enact::core {

namespace {

std::string_view content_type_of(std::string_view name) noexcept {
  if (name.ends_with(".js"))
    return "text/javascript; charset=utf-8";
  if (name.ends_with(".css"))
    return "text/css; charset=utf-8";
  if (name.ends_with(".png"))
    return "image/png";
  return "text/plain; charset=utf-8";  // LICENSE, *.LICENSE.txt
}

// The prefix is configuration, not request input, but it lands in attribute values all the same.
using http::append_html_escaped;

// `$` stands for the prefix. The page has no inline script: swagger-init.js reads the document's
// URL from data-openapi-url, so the Content-Security-Policy can keep script-src to 'self'.
constexpr std::string_view kPage = R"(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>enact core API</title>
<link rel="stylesheet" href="$/swagger-ui/swagger-ui.css">
<link rel="stylesheet" href="$/swagger-ui/index.css">
<link rel="icon" type="image/png" href="$/swagger-ui/favicon-32x32.png" sizes="32x32">
<link rel="icon" type="image/png" href="$/swagger-ui/favicon-16x16.png" sizes="16x16">
</head>
<body>
<div id="swagger-ui" data-openapi-url="$/openapi.json"></div>
<script src="$/swagger-ui/swagger-ui-bundle.js"></script>
<script src="$/swagger-ui/swagger-init.js"></script>
</body>
</html>
)";

}  // namespace

std::optional<static_asset> swagger_asset(std::string_view name) noexcept {
  for (const auto& file : detail::swagger_ui_files()) {
    if (file.name == name)
      return static_asset{content_type_of(name), file.body};
  }
  return std::nullopt;
}

std::string swagger_ui_page(std::string_view prefix) {
  std::string page;
  page.reserve(kPage.size() + 16 * prefix.size());
  for (const char c : kPage) {
    if (c == '$') {
      append_html_escaped(page, prefix);
    } else {
      page += c;
    }
  }
  return page;
}

}  // namespace enact::core
