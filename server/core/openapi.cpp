// SPDX-License-Identifier: Apache-2.0
// The OpenAPI 3.1 document, generated from the route table that `mount` serves
// (http/openapi.hpp writes the document of both services' tables).
#include "core/errors.hpp"
#include "core/route.hpp"
#include "core/schema.hpp"
#include "http/openapi.hpp"

namespace enact::core {
namespace {

using http::error_response;

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

/// A route as the document describes it, with the error answers the core's stages may give.
http::operation operation_of(const route& r) {
  http::operation op(std::string(r.method), std::string(r.path), std::string(r.operation_id), std::string(r.tag),
                     std::string(r.summary));
  op.security = security_of(r.auth);
  for (const auto& q : r.query)
    op.parameters.push_back(http::query_parameter(q.name, q.schema, q.required));
  const auto* ref = r.response.if_contains("$ref");
  if (ref != nullptr && ref->as_string().ends_with("Page")) {
    op.parameters.push_back(
        http::query_parameter("page_number", json::object{{"type", "integer"}, {"minimum", 1}, {"default", 1}}, false));
    op.parameters.push_back(http::query_parameter(
        "page_size", json::object{{"type", "integer"}, {"minimum", 1}, {"maximum", 100}, {"default", 20}}, false));
  }
  if (r.idempotent)
    op.parameters.push_back(json::object{
        {"name", "Idempotency-Key"},
        {"in", "header"},
        {"required", false},
        {"description",
         "1 to 255 printable characters: the account's same request with the same key within 24 h answers the "
         "first answer again (Idempotent-Replayed: true), without running or charging anything"},
        {"schema", json::object{{"type", "string"}, {"minLength", 1}, {"maxLength", 255}}}});
  if (r.method == "POST")
    op.request = r.request;
  op.response = r.response;
  json::object& responses = op.responses;
  responses = {{"400", error_response("invalid_request: malformed JSON, unknown or ill-typed field, bad page")},
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
  if (r.idempotent) {
    responses["409"] = error_response(
        "conflict: duplicate, or state forbids it; or a request with the same Idempotency-Key is still in "
        "progress (Retry-After set: the seconds until its lease ends)");
    responses["422"] =
        error_response("invalid_request: the Idempotency-Key was used for a different request within 24 h" +
                       std::string(r.path == "/run_action" ? "; action_failed: the action failed" : ""));
  }
  for (const auto& kv : r.errors)
    responses[kv.key()] = error_response(kv.value().as_string());
  return op;
}

}  // namespace

json::object openapi_document(const config& cfg) {
  std::vector<http::operation> ops;
  for (const route& r : routes())
    ops.push_back(operation_of(r));
  json::object schemes{
      {"ApiKey", json::object{{"type", "apiKey"}, {"in", "header"}, {"name", "X-Api-Key"}}},
      {"Bearer", json::object{{"type", "http"}, {"scheme", "bearer"}}},
      {"WalletAuth", json::object{{"type", "apiKey"},
                                  {"in", "header"},
                                  {"name", "X-Wallet-Auth"},
                                  {"description",
                                   "base64 of {\"typed_data\": <EIP-712 envelope, primaryType BillingAuth>, "
                                   "\"signature\": \"0x…\"} signed by the account's admin wallet"}}}};
  json::object info{{"title", "enact core API"},
                    {"version", "1"},
                    {"description",
                     "Accounts, usage keys, groups, PKP wallets, actions and billing. "
                     "Chain " +
                         std::to_string(cfg.chain_id) + " (" + cfg.chain_name + ")."}};
  return http::openapi_document(std::move(info), "/core/v1", ops, components(), std::move(schemes));
}

}  // namespace enact::core
