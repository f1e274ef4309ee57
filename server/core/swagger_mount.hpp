// SPDX-License-Identifier: Apache-2.0
// Registers the Swagger UI routes (swagger_ui.hpp) on an httplib server. Kept apart from
// swagger_ui.hpp so that code which only needs the page or the assets does not see httplib.
#pragma once

#include <string_view>

namespace httplib {
class Server;
}

namespace enact::core {

/// GET (and HEAD) `<prefix>/swagger-ui` and `<prefix>/swagger-ui/`: the page, text/html, with the
/// kSwaggerUiPagePolicy Content-Security-Policy. GET `<prefix>/swagger-ui/<asset>`: the asset with
/// its Content-Type and `Cache-Control: public, max-age=86400`, or 404
/// `{"error": {"code": "not_found", "message": …}}` for a name that is not an asset. `prefix` is
/// an absolute path without a trailing slash ("/core/v1"), or empty for the root.
void mount_swagger_ui(httplib::Server& server, std::string_view prefix = "/core/v1");

}  // namespace enact::core
