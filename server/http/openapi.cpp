// SPDX-License-Identifier: Apache-2.0
#include "http/openapi.hpp"

#include <cctype>

#include "http/schema.hpp"

namespace enact::http {

namespace json = boost::json;

json::object error_response(std::string_view description) {
  return json::object{{"description", description},
                      {"content", json::object{{"application/json", json::object{{"schema", schema::ref("Error")}}}}}};
}

json::object query_parameter(std::string_view name, json::object schema, bool required) {
  return json::object{{"name", name}, {"in", "query"}, {"required", required}, {"schema", std::move(schema)}};
}

namespace {

json::object operation_object(const operation& o) {
  json::object op{{"operationId", o.operation_id},
                  {"tags", json::array{json::string(o.tag)}},
                  {"summary", o.summary},
                  {"security", o.security}};
  if (!o.parameters.empty())
    op["parameters"] = o.parameters;
  if (o.request)
    op["requestBody"] = json::object{
        {"required", true}, {"content", json::object{{"application/json", json::object{{"schema", *o.request}}}}}};
  json::object success{{"description", o.success == "204" ? "No Content" : "OK"}};
  if (o.success != "204")
    success["content"] = json::object{{"application/json", json::object{{"schema", o.response}}}};
  json::object responses{{o.success, std::move(success)}};
  for (const auto& kv : o.responses)
    responses[kv.key()] = kv.value();
  op["responses"] = std::move(responses);
  return op;
}

}  // namespace

json::object openapi_document(json::object info, std::string_view server_url, std::span<const operation> ops,
                              json::object schemas, json::object security_schemes) {
  json::object paths;
  for (const operation& o : ops) {
    std::string method = o.method;
    for (auto& ch : method)
      ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    auto& item = paths[o.path];
    if (!item.is_object())
      item = json::object{};
    item.as_object()[method] = operation_object(o);
  }
  return json::object{
      {"openapi", "3.1.0"},
      {"info", std::move(info)},
      {"servers", json::array{json::object{{"url", server_url}}}},
      {"paths", std::move(paths)},
      {"components", json::object{{"schemas", std::move(schemas)}, {"securitySchemes", std::move(security_schemes)}}}};
}

}  // namespace enact::http
