// SPDX-License-Identifier: Apache-2.0
// The OpenAPI 3.1 document, generated from the route table that `mount` serves.
#include "core/errors.hpp"
#include "core/route.hpp"
#include "core/schema.hpp"

namespace enact::core {
namespace {

json::object error_response(std::string_view description) {
  return json::object{{"description", description},
                      {"content", json::object{{"application/json", json::object{{"schema", schema::ref("Error")}}}}}};
}

json::array security_of(auth_kind a) {
  switch (a) {
    case auth_kind::none:
      return {};
    case auth_kind::key:
    case auth_kind::owner:
      return {json::object{{"ApiKey", json::array{}}}, json::object{{"Bearer", json::array{}}}};
    case auth_kind::billing:
      return {json::object{{"ApiKey", json::array{}}}, json::object{{"Bearer", json::array{}}},
              json::object{{"WalletAuth", json::array{}}}};
  }
  return {};
}

}  // namespace

json::object openapi_document(const config& cfg) {
  json::object paths;
  for (const route& r : routes()) {
    json::object op{{"operationId", r.operation_id},
                    {"tags", json::array{json::string(r.tag)}},
                    {"summary", r.summary},
                    {"security", security_of(r.auth)}};
    json::array params;
    for (const auto& q : r.query)
      params.push_back(json::object{{"name", q.name}, {"in", "query"}, {"required", q.required}, {"schema", q.schema}});
    const auto* ref = r.response.if_contains("$ref");
    if (ref != nullptr && ref->as_string().ends_with("Page")) {
      params.push_back(json::object{{"name", "page_number"},
                                    {"in", "query"},
                                    {"required", false},
                                    {"schema", json::object{{"type", "integer"}, {"minimum", 1}, {"default", 1}}}});
      params.push_back(json::object{
          {"name", "page_size"},
          {"in", "query"},
          {"required", false},
          {"schema", json::object{{"type", "integer"}, {"minimum", 1}, {"maximum", 100}, {"default", 20}}}});
    }
    if (r.idempotent)
      params.push_back(json::object{
          {"name", "Idempotency-Key"},
          {"in", "header"},
          {"required", false},
          {"description",
           "1 to 255 printable characters: the account's same request with the same key within 24 h answers the "
           "first answer again (Idempotent-Replayed: true), without running or charging anything"},
          {"schema", json::object{{"type", "string"}, {"minLength", 1}, {"maxLength", 255}}}});
    if (!params.empty())
      op["parameters"] = std::move(params);
    if (r.method == "POST")
      op["requestBody"] = json::object{
          {"required", true}, {"content", json::object{{"application/json", json::object{{"schema", r.request}}}}}};
    json::object responses{
        {"200", json::object{{"description", "OK"},
                             {"content", json::object{{"application/json", json::object{{"schema", r.response}}}}}}},
        {"400", error_response("invalid_request: malformed JSON, unknown or ill-typed field, bad page")},
        {"500", error_response("internal")},
        {"503", error_response("unavailable: the ledger or the payment provider is unreachable")}};
    // Which bucket a 429 comes from (mount.cpp); routes without one answer no 429.
    if (r.auth == auth_kind::billing)
      responses["429"] = error_response(
          "rate_limited: over the per-key limit, or per-wallet for X-Wallet-Auth "
          "(limits.key_rate_per_second); Retry-After set");
    else if (r.auth != auth_kind::none)
      responses["429"] =
          error_response("rate_limited: over the per-key limit (limits.key_rate_per_second); Retry-After set");
    else if (r.path == "/new_account" || r.per_ip_limited)
      responses["429"] = error_response(
          "rate_limited: over the per-client-IP limit of this route "
          "(limits.new_accounts_per_ip_per_minute); Retry-After set");
    if (r.auth != auth_kind::none) {
      responses["401"] = error_response("unauthenticated: credential missing, unknown, deleted or expired");
      responses["403"] = error_response("forbidden: the key lacks the scope (named in the message)");
      responses["404"] = error_response("not_found: unknown group, PKP, action or payment intent");
      responses["409"] = error_response("conflict: duplicate, or state forbids it");
      responses["402"] = error_response("insufficient_credits: balance below the write surcharge");
    }
    if (r.method == "POST")
      responses["413"] = error_response("payload_too_large");
    if (r.idempotent)
      responses["409"] = error_response(
          "conflict: duplicate, or state forbids it; or a request with the same Idempotency-Key is still in "
          "progress (Retry-After set: the seconds until its lease ends)");
    if (r.idempotent)
      responses["422"] =
          error_response("invalid_request: the Idempotency-Key was used for a different request within 24 h" +
                         std::string(r.path == "/run_action" ? "; action_failed: the action failed" : ""));
    for (const auto& kv : r.errors)
      responses[kv.key()] = error_response(kv.value().as_string());
    op["responses"] = std::move(responses);
    std::string method(r.method);
    for (auto& ch : method)
      ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    auto& item = paths[std::string(r.path)];
    if (!item.is_object())
      item = json::object{};
    item.as_object()[method] = std::move(op);
  }
  json::object schemes{
      {"ApiKey", json::object{{"type", "apiKey"}, {"in", "header"}, {"name", "X-Api-Key"}}},
      {"Bearer", json::object{{"type", "http"}, {"scheme", "bearer"}}},
      {"WalletAuth", json::object{{"type", "apiKey"},
                                  {"in", "header"},
                                  {"name", "X-Wallet-Auth"},
                                  {"description",
                                   "base64 of {\"typed_data\": <EIP-712 envelope, primaryType BillingAuth>, "
                                   "\"signature\": \"0x…\"} signed by the account's admin wallet"}}}};
  return json::object{{"openapi", "3.1.0"},
                      {"info", json::object{{"title", "enact core API"},
                                            {"version", "1"},
                                            {"description",
                                             "Accounts, usage keys, groups, PKP wallets, actions and billing. "
                                             "Chain " +
                                                 std::to_string(cfg.chain_id) + " (" + cfg.chain_name + ")."}}},
                      {"servers", json::array{json::object{{"url", "/core/v1"}}}},
                      {"paths", std::move(paths)},
                      {"components", json::object{{"schemas", components()}, {"securitySchemes", std::move(schemes)}}}};
}

}  // namespace enact::core
