// SPDX-License-Identifier: Apache-2.0
// The trigger service's route table (docs/protocol.md §4) on the request pipeline
// (http/pipeline.hpp): the management API under /api and /auth/tokens behind bearer tokens, and
// the public webhook intake POST /webhook/<id>. Its stages — request id, the webhook's per-address
// limit, the bearer token, the query, the path's id, the JSON body, the handler, the answer and
// the debug line — are the core's with the trigger service's own authentication and paging
// (limit/offset); the same table gives the OpenAPI document at /api/openapi.json.
#include "triggers/api.hpp"

#include <httplib.h>

#include <array>
#include <optional>
#include <vector>

#include "enact/secret.hpp"
#include "http/openapi.hpp"
#include "http/request.hpp"
#include "http/schema.hpp"
#include "triggers/api_handlers.hpp"
#include "triggers/respond.hpp"

namespace enact::triggers {

namespace {

using namespace routes;
using steady = std::chrono::steady_clock;
namespace s = http::schema;

constexpr size_t kMaxManagementBody = size_t{1} << 20;

struct api_route {
  http::operation doc;
  std::string pattern;  // httplib's, with the path's id as its one group
  answer (*handle)(api_call&) = nullptr;
  result<std::string> (*path_id)(const httplib::Request&) = nullptr;
  bool bearer = true;      // a trigger token in Authorization (triggers/tokens.hpp)
  bool json_body = false;  // a JSON object body (docs/protocol.md §0), with a usage key to wipe
  bool any_query = false;  // the webhook and the pages (limit, offset: read by the handler)
  bool per_ip = false;     // the webhook's per-address bucket, before any store access
  bool no_store = false;   // Cache-Control: no-store (the /auth routes)
  std::string_view failed = "trigger request failed";  // the log line of a server failure
};

// --- the documents' schemas ----------------------------------------------------------------------

json::object config_schema() {
  return json::object{{"type", "object"},
                      {"description",
                       "of the trigger's type: webhook {dedup_header?}, schedule {cron, timezone?}, chain-event "
                       "{chain, contract, event, start_block?, topic_filters?, confirmations?}"}};
}

json::object trigger_body(bool create) {
  const bool req = create;
  return s::object({{"type", s::string("webhook, schedule or chain-event; fixed once created", 32), false},
                    {"name", s::name(), req},
                    {"enabled", s::boolean()},
                    {"action_ipfs_cid", s::string("the action run on each firing", 256), req},
                    {"pkp_id", s::any_of({s::address(), json::object{{"type", "null"}}}, "the PKP the runs use")},
                    {"usage_api_key", s::string("a usage key of the core that may execute the action", 44), req},
                    {"config", config_schema(), req},
                    {"max_runs_per_minute", s::integer("1 to 6000", 1)},
                    {"max_queued_runs", s::integer("1 to 10000", 1)}});
}

json::object listing_of(std::string_view item) {
  return s::object({{"items", s::array(s::ref(item), "", 100), true}, {"total", s::integer(), true}});
}

json::object components() {
  json::object o;
  o["Error"] = s::error_body();
  o["Trigger"] = json::object{{"type", "object"}, {"description", "docs/protocol.md §4 \"Triggers\""}};
  o["Run"] = json::object{{"type", "object"}, {"description", "docs/protocol.md §4 \"Runs\""}};
  o["TokenSummary"] = s::object({{"id", s::string(), true},
                                 {"client_name", s::string(), true},
                                 {"created_at", s::string(), true},
                                 {"expires_at", s::string(), true}});
  o["TriggerPage"] = listing_of("Trigger");
  o["RunPage"] = listing_of("Run");
  o["TokenPage"] = listing_of("TokenSummary");
  return o;
}

json::array paging() {
  return {http::query_parameter("limit", s::integer("page size, 1 to 100 (default 20)", 1), false),
          http::query_parameter("offset", s::integer("items to skip (default 0)"), false)};
}

/// A route's document entry, with the error answers its stages may give.
http::operation op(std::string method, std::string path, std::string id, std::string summary, bool bearer,
                   std::string success, json::object response) {
  http::operation o(std::move(method), std::move(path), std::move(id), bearer ? "triggers" : "webhooks",
                    std::move(summary));
  if (bearer)
    o.security = {json::object{{"TriggerToken", json::array{}}}};
  o.success = std::move(success);
  o.response = std::move(response);
  o.responses = {{"400", http::error_response("invalid_request: malformed JSON, unknown or ill-typed field")},
                 {"404", http::error_response("not_found: no such trigger, run, token or webhook")},
                 {"500", http::error_response("internal")},
                 {"503", http::error_response("unavailable: the trigger store or the core is unreachable")}};
  if (bearer)
    o.responses["401"] = http::error_response("unauthenticated: missing, unknown, revoked or expired token");
  return o;
}

std::vector<api_route> table() {
  std::vector<api_route> t;
  const auto add = [&t](http::operation doc, std::string pattern, answer (*h)(api_call&)) -> api_route& {
    t.push_back(api_route{std::move(doc), std::move(pattern), h});
    return t.back();
  };
  add(op("GET", "/api/me", "getTokenUser", "The token's user and expiry.", true, "200",
         s::object({{"user_id", s::string(), true}, {"expires_at", s::string(), true}})),
      "/api/me", me);
  auto& create =
      add(op("POST", "/api/triggers", "createTrigger",
             "Create a trigger; its usage key is checked against the core and sealed.", true, "201", s::ref("Trigger")),
          "/api/triggers", create_trigger);
  create.json_body = true;
  create.doc.request = trigger_body(true);
  create.doc.responses["403"] = http::error_response("forbidden: the key may not run the action, or too many triggers");
  create.doc.responses["413"] = http::error_response("payload_too_large");
  create.doc.responses["429"] = http::error_response("rate_limited: creations per minute (Retry-After set)");
  auto& list = add(op("GET", "/api/triggers", "listTriggers", "The user's triggers, newest first.", true, "200",
                      s::ref("TriggerPage")),
                   "/api/triggers", list_triggers);
  list.any_query = true;
  list.doc.parameters = paging();
  const std::string one = R"(/api/triggers/([^/]+))";
  add(op("GET", "/api/triggers/{id}", "getTrigger", "One trigger.", true, "200", s::ref("Trigger")), one, get_trigger)
      .path_id = trigger_id;
  auto& patch = add(
      op("PATCH", "/api/triggers/{id}", "updateTrigger", "Change a trigger's fields.", true, "200", s::ref("Trigger")),
      one, patch_trigger);
  patch.path_id = trigger_id;
  patch.json_body = true;
  patch.doc.request = trigger_body(false);
  patch.doc.responses["413"] = http::error_response("payload_too_large");
  add(op("DELETE", "/api/triggers/{id}", "deleteTrigger", "Delete a trigger and its runs.", true, "204", {}), one,
      delete_trigger)
      .path_id = trigger_id;
  auto& runs = add(op("GET", "/api/triggers/{id}/runs", "listRuns", "A trigger's runs, newest first.", true, "200",
                      s::ref("RunPage")),
                   R"(/api/triggers/([^/]+)/runs)", list_runs);
  runs.path_id = trigger_id;
  runs.any_query = true;
  runs.doc.parameters = paging();
  add(op("GET", "/api/runs/{id}", "getRun", "One run.", true, "200", s::ref("Run")), R"(/api/runs/([^/]+))", get_run)
      .path_id = run_id;
  auto& tokens =
      add(op("GET", "/auth/tokens", "listTokens", "The user's live tokens.", true, "200", s::ref("TokenPage")),
          "/auth/tokens", list_tokens);
  tokens.no_store = true;
  tokens.failed = "auth request failed";
  auto& revoking =
      add(op("DELETE", "/auth/tokens/{id}", "revokeToken", "Revoke one of the user's tokens.", true, "204", {}),
          R"(/auth/tokens/([^/]+))", revoke);
  revoking.no_store = true;
  revoking.failed = "auth request failed";
  revoking.path_id = [](const httplib::Request& req) -> result<std::string> {
    return std::string(req.matches[1]);
  };
  auto& hook = add(op("POST", "/webhook/{id}", "fireWebhook",
                      "Queue a run of a webhook trigger with the request as its event (any body).", false, "202",
                      s::object({{"run_id", s::string(), true}})),
                   R"(/webhook/([^/]+))", webhook);
  hook.bearer = false;
  hook.any_query = true;
  hook.per_ip = true;
  hook.path_id = webhook_id;
  hook.doc.responses["409"] = http::error_response("conflict: the trigger is disabled");
  hook.doc.responses["413"] = http::error_response("payload_too_large");
  hook.doc.responses["429"] = http::error_response("rate_limited: per address, per minute or queue full");
  return t;
}

const std::vector<api_route>& api_routes() {
  static const std::vector<api_route> t = table();
  return t;
}

// --- the stages (docs/architecture.md "The request pipeline") ------------------------------------

struct api_exchange : http::exchange<> {
  const api_route& r;
  api_call call;
  std::optional<token_record> who;
  steady::time_point start = steady::now();
  steady::time_point authed_at{};
  api_exchange(const api_route& route, state& st, const httplib::Request& req, httplib::Response& res)
      : http::exchange<>(req, res), r(route), call{st, req} {}
};

result<void> request_id(api_exchange& x) {
  http::take_request_id(x.req, x.res, x.request_id);
  return {};
}

/// The webhook's per-address bucket comes first: a flood of one sender costs no store access.
result<void> per_ip_limit(api_exchange& x) {
  auto& limiter = x.call.st.webhook_per_ip;
  if (!x.r.per_ip || !limiter || !limiter->enabled())
    return {};
  const int wait = limiter->take(x.req.remote_addr);
  if (wait == 0)
    return {};
  x.out.retry_after = wait;
  return fail(api_errc::rate_limited,
              "too many webhook requests from this address; retry in " + std::to_string(wait) + " s");
}

result<void> authenticated(api_exchange& x) {
  if (!x.r.bearer)
    return {};
  state& st = x.call.st;
  ENACT_TRY(x.who, authenticate(st.db, x.req.get_header_value("Authorization"), st.clk.now()));
  x.call.who = &*x.who;
  x.authed_at = steady::now();
  return {};
}

/// docs/protocol.md §0: no query parameter but those a route declares.
result<void> query(api_exchange& x) {
  if (x.r.any_query)
    return {};
  return http::only_query(x.req, {});
}

result<void> path_id(api_exchange& x) {
  if (x.r.path_id == nullptr)
    return {};
  ENACT_TRY(x.call.id, x.r.path_id(x.req));
  return {};
}

/// A JSON object body, as the core has them; its bytes (which carry a usage key) are wiped once
/// parsed, and the handler wipes the key's text once read into its typed request.
result<void> body(api_exchange& x) {
  if (!x.r.json_body)
    return {};
  ENACT_TRY(json::object parsed, http::json_object_body(x.req, kMaxManagementBody));
  auto& raw = const_cast<std::string&>(x.req.body);
  detail::secure_wipe(raw.data(), raw.size());
  x.call.body = std::move(parsed);
  return {};
}

result<void> handle(api_exchange& x) {
  x.out = x.r.handle(x.call);
  return {};
}

result<void> answer_stage(api_exchange& x) {
  const bool no_body = x.out.ok() && x.out.status == 204;
  if (x.r.no_store && !no_body)
    x.res.set_header("Cache-Control", "no-store");
  if (x.out.ok()) {
    http::send_value(x.res, x.out.status, *x.out.value);
    return {};
  }
  const error& e = x.out.value.err();
  const http::http_error h = wire_error(e);
  http::send_failure(x.res, h, x.out.details, x.out.error_status, x.out.retry_after);
  if (is_server_failure(h))
    x.call.st.log.error(x.r.failed, {{"method", x.req.method}, {"path", x.req.path}, {"detail", e.message}});
  return {};
}

/// At debug level, an authenticated request's line: the caller by its user id (the token's
/// owner, never the token) and the time spent authenticating and after.
result<void> log_line(api_exchange& x) {
  state& st = x.call.st;
  if (!x.who || !st.log.enabled(http::logger::level::debug))
    return {};
  using std::chrono::duration_cast;
  using std::chrono::microseconds;
  st.log.debug("trigger api request",
               {{"method", x.req.method},
                {"route", http::well_formed_utf8(x.req.path)},
                {"user_id", x.who->user_id},
                {"request_bytes", x.req.body.size()},
                {"response_bytes", x.res.body.size()},
                {"status", x.res.status},
                {"auth_us", duration_cast<microseconds>(x.authed_at - x.start).count()},
                {"handler_us", duration_cast<microseconds>(steady::now() - x.authed_at).count()}});
  return {};
}

constexpr std::array<http::stage<api_exchange>, 9> kStages{{
    {"request id", request_id, true},
    {"per-IP limit", per_ip_limit},
    {"authenticate", authenticated},
    {"query", query},
    {"path id", path_id},
    {"body", body},
    {"handler", handle},
    {"answer", answer_stage, true},
    {"log", log_line, true},
}};

}  // namespace

json::object api_openapi_document() {
  std::vector<http::operation> ops;
  for (const auto& r : api_routes())
    ops.push_back(r.doc);
  json::object schemes{{"TriggerToken", json::object{{"type", "http"},
                                                     {"scheme", "bearer"},
                                                     {"description",
                                                      "a token of the trigger service (docs/triggers.md \"Signing in a "
                                                      "client\"; enact-server issue-token)"}}}};
  json::object info{{"title", "enact trigger service API"},
                    {"version", "1"},
                    {"description", "Triggers (webhook, schedule, chain event) that run actions of the core."}};
  return http::openapi_document(std::move(info), "/", ops, components(), std::move(schemes));
}

void mount_api(httplib::Server& server, service::state& st) {
  for (const api_route& r : api_routes()) {
    auto fn = [&r, &st](const httplib::Request& req, httplib::Response& res) {
      api_exchange x(r, st, req, res);
      http::run_stages<api_exchange>(kStages, x);
    };
    if (r.doc.method == "GET")
      server.Get(r.pattern, fn);
    else if (r.doc.method == "POST")
      server.Post(r.pattern, fn);
    else if (r.doc.method == "PATCH")
      server.Patch(r.pattern, fn);
    else
      server.Delete(r.pattern, fn);
  }
  server.Get("/api/openapi.json", [](const httplib::Request&, httplib::Response& res) {
    static const std::string doc = json::serialize(api_openapi_document());
    res.set_content(doc, "application/json");
  });
}

}  // namespace enact::triggers
