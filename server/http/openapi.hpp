// SPDX-License-Identifier: Apache-2.0
// The OpenAPI 3.1 document of a route table. Each service describes its routes as operations (the
// core's from core/route.hpp, the trigger service's from triggers/routes.cpp) and serves the
// document generated from the same table it mounts, so the two cannot drift apart.
#pragma once

#include <boost/json.hpp>

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>

namespace enact::http {

/// A query parameter a route declares: the only ones it accepts besides its pages'.
struct query_param {
  std::string_view name;
  boost::json::object schema;
  bool required = false;
};

/// A route as the document describes it.
struct operation {
  operation(std::string m, std::string p, std::string id, std::string t, std::string s)
      : method(std::move(m)),
        path(std::move(p)),
        operation_id(std::move(id)),
        tag(std::move(t)),
        summary(std::move(s)) {}
  std::string method;  // "GET", "POST", "PATCH", "DELETE"
  std::string path;    // as the document names it, relative to the server URL ("/api/triggers/{id}")
  std::string operation_id;
  std::string tag;
  std::string summary;
  boost::json::array security;
  boost::json::array parameters;               // OpenAPI parameter objects
  std::optional<boost::json::object> request;  // the body's schema; none: no body
  std::string success = "200";                 // the success status
  boost::json::object response;                // the success body's schema (none for a 204)
  boost::json::object responses;               // the error answers: status → error_response()
};

/// An error answer of docs/protocol.md §0: `description`, with the Error component's schema.
[[nodiscard]] boost::json::object error_response(std::string_view description);

/// A query parameter object.
[[nodiscard]] boost::json::object query_parameter(std::string_view name, boost::json::object schema, bool required);

/// The document: `info`, one server at `server_url`, the operations' paths, and the components.
[[nodiscard]] boost::json::object openapi_document(boost::json::object info, std::string_view server_url,
                                                   std::span<const operation> ops, boost::json::object schemas,
                                                   boost::json::object security_schemes);

}  // namespace enact::http
