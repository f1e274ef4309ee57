// SPDX-License-Identifier: Apache-2.0
// The trigger service's route table on the request pipeline (http/pipeline.hpp), and the OpenAPI
// document generated from it (docs/triggers.md "Serving").
#pragma once

#include <boost/json.hpp>

#include "triggers/service_state.hpp"

namespace httplib {
class Server;
}

namespace enact::triggers {

/// Mounts /api/me, /api/triggers…, /api/runs/<id>, /auth/tokens…, POST /webhook/<id> and
/// GET /api/openapi.json on `server`; `st` must outlive it.
void mount_api(httplib::Server& server, service::state& st);

/// The OpenAPI 3.1 document of the routes mount_api serves.
[[nodiscard]] boost::json::object api_openapi_document();

}  // namespace enact::triggers
