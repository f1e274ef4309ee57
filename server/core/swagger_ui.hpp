// SPDX-License-Identifier: Apache-2.0
// The Swagger UI page for the core API (docs/protocol.md §2 "Public utility": "an interactive UI at
// {base_url}/core/v1/swagger-ui"). The page and its assets (swagger-ui-dist, pinned in
// server/core/swagger/package.json) are compiled into the binary, so the page loads nothing from
// any host but the server itself. The OpenAPI document it shows is served by the core routes at
// `<prefix>/openapi.json`; mount_swagger_ui (swagger_mount.hpp) registers the page's routes.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace enact::core {

struct static_asset {
  std::string_view content_type;
  std::string_view body;  // points into the binary; valid for the program's lifetime
};

/// The asset served at `<prefix>/swagger-ui/<name>`, e.g. "swagger-ui-bundle.js"; nullopt for any
/// name that is not one of the compiled-in files (no directories, no leading slash).
[[nodiscard]] std::optional<static_asset> swagger_asset(std::string_view name) noexcept;

/// The HTML page served at `<prefix>/swagger-ui` (with or without a trailing slash). It refers to
/// its assets and to the OpenAPI document by absolute path — `<prefix>/swagger-ui/<asset>` and
/// `<prefix>/openapi.json` — so both spellings of the page's URL resolve them alike. `prefix` is
/// an absolute path without a trailing slash ("/core/v1"), or empty for the root.
[[nodiscard]] std::string swagger_ui_page(std::string_view prefix = "/core/v1");

/// The Content-Security-Policy the page is served with: scripts and everything else only from the
/// server itself; inline styles are allowed because Swagger UI's React components set style
/// attributes. The page has no inline script and no inline event handler.
inline constexpr std::string_view kSwaggerUiPagePolicy =
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; connect-src 'self'; font-src 'self' data:; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'self'";

}  // namespace enact::core
