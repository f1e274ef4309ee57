// SPDX-License-Identifier: Apache-2.0
// The bad-input sweep over the trigger service: every operation of its OpenAPI document
// (/api/openapi.json, generated from the route table it mounts, server/triggers/api.cpp) is sent
// missing and malformed tokens, undeclared query parameters, bad pages, ids of the wrong form,
// malformed bodies and, for the creation, each property with a JSON kind its schema does not
// accept. Every answer must be a 4xx with exactly the error body of docs/protocol.md §0, never a
// 5xx; afterwards the user has no trigger and the service still answers.
//
// Left out: property defects of PATCH (the trigger's type is read first, so an unknown id answers
// 404 before the body's fields are), and the webhook's body (any bytes are an event).
#include "sweep_test.hpp"

namespace enact::itest {

TEST_CASE("every operation of the trigger service's OpenAPI document refuses bad input with a §0 error") {
  server_process srv({"--dev"});
  http_client c("127.0.0.1", srv.port());
  const std::string token = issue_token(srv.data_dir(), "sweep");
  const httplib::Headers auth{{"Authorization", "Bearer " + token}};

  const response doc_r = c.request("GET", "/api/openapi.json");
  ITEST_REQUIRE_STATUS(doc_r, 200);
  const json::object& doc = doc_r.obj();
  CHECK(doc.at("openapi").as_string().starts_with("3.1"));

  // Ids of the right form that name nothing, by the path they fill.
  const auto well_formed_id = [](std::string_view path) -> std::string {
    if (path.starts_with("/api/runs/"))
      return "run_" + std::string(32, '0');
    if (path.starts_with("/auth/tokens/"))
      return std::string(43, 'A');
    return "trg_" + std::string(32, '0');
  };
  const json::object create_base{{"type", "webhook"},
                                 {"name", "sweep"},
                                 {"action_ipfs_cid", "QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG"},
                                 {"usage_api_key", std::string(43, 'A') + "="},
                                 {"config", json::object{}}};

  std::vector<std::pair<std::string, sweep_case>> cases;  // operationId, case
  size_t operations = 0;
  for (const auto& [path_v, item] : doc.at("paths").as_object()) {
    const std::string path(path_v);
    for (const auto& [method_v, op_v] : item.as_object()) {
      ++operations;
      const auto& op = op_v.as_object();
      const std::string id(op.at("operationId").as_string());
      std::string method(method_v);
      for (auto& ch : method)
        ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
      std::string target = path;
      const bool has_id = target.find("{id}") != std::string::npos;
      if (has_id)
        target.replace(target.find("{id}"), 4, well_formed_id(path));
      const bool secured = !op.at("security").as_array().empty();
      const bool has_body = op.contains("requestBody");
      bool paged = false;
      if (const auto* ps = op.if_contains("parameters"))
        for (const auto& p : ps->as_array())
          paged = paged || p.at("name").as_string() == "limit";
      const std::string body = has_body ? "{}" : "";
      const auto add = [&](std::string what, std::string m, std::string t, std::string b, httplib::Headers h,
                           codes allowed, std::string type = "application/json") {
        cases.emplace_back(id, sweep_case{std::move(what), std::move(m), std::move(t), std::move(b), std::move(type),
                                          std::move(h), expectation{std::move(allowed)}});
      };
      if (secured) {
        add("no token", method, target, body, {}, kUnauthenticated);
        add("a token of the wrong form", method, target, body, {{"Authorization", "Bearer not-a-token"}},
            kUnauthenticated);
        add("a token no one was given", method, target, body, {{"Authorization", "Bearer " + std::string(43, 'B')}},
            kUnauthenticated);
        add("another scheme", method, target, body, {{"Authorization", "Basic c3dlZXA6c3dlZXA="}}, kUnauthenticated);
        add("an undeclared query parameter", method, target + "?sweep=1", body, auth, kMalformed);
      }
      if (paged)
        for (const char* q : {"limit=0", "limit=101", "limit=x", "offset=-1", "limit=1.5"})
          add(std::string("page ") + q, method, target + "?" + q, body, auth, kMalformed);
      if (has_id)
        add("an id of the wrong form", method,
            path.substr(0, path.find("{id}")) + "x" + path.substr(path.find("{id}") + 4), body, auth, kNoRoute);
      if (has_body) {
        add("invalid JSON", method, target, "{", auth, kMalformed);
        add("an array", method, target, "[]", auth, kMalformed);
        add("text/plain", method, target, "{}", auth, kMalformed, "text/plain");
        add("an oversized body", method, target, std::string(kOversizedBody, ' '), auth, kTooLarge);
      }
      if (id == "createTrigger") {
        const json::object schema =
            resolve(doc, op.at("requestBody").at("content").at("application/json").at("schema").as_object());
        for (const auto& [name, prop] : schema.at("properties").as_object()) {
          const auto kinds = accepted_kinds(doc, prop.as_object(), create_base.if_contains(name));
          for (const auto& [kind, sample] : kSampleOfKind) {
            if (kinds.contains(kind) || (std::string_view(kind) == "number" && kinds.contains("integer")))
              continue;
            json::object b = create_base;
            b[name] = json::parse(sample);
            add("body." + std::string(name) + " as " + kind, method, target, json::serialize(b), auth, kMalformed);
          }
        }
        json::object extra = create_base;
        extra["colour"] = "red";
        add("an unknown field", method, target, json::serialize(extra), auth, kMalformed);
      }
      add("a method the path does not have", "PUT", target, body, auth, kWrongMethod);
    }
  }
  INFO("operations in the document: " << operations);
  REQUIRE(operations >= 10);

  size_t failures = 0;
  for (const auto& [id, k] : cases) {
    const response r = c.request(k.method, k.target, k.body, k.headers, k.content_type);
    if (const std::string why = verdict(r, k.want); !why.empty()) {
      ++failures;
      FAIL_CHECK(id << " — " << k.what << ": " << why << "; answer " << r.describe());
    }
  }
  std::printf("trigger bad-input sweep: %zu operations, %zu requests, %zu refused wrongly\n", operations, cases.size(),
              failures);
  CHECK(cases.size() >= operations * 5);

  // Nothing was created, and the service still answers.
  const response list = c.request("GET", "/api/triggers", {}, auth);
  ITEST_REQUIRE_STATUS(list, 200);
  CHECK(list.obj().at("total").as_int64() == 0);
  CHECK(srv.stop().clean());
  for (const auto& line : srv.log_lines()) {
    const auto* level = line.if_contains("level");
    CHECK_MESSAGE((level == nullptr || level->as_string() != "error"), json::serialize(line));
  }
}

}  // namespace enact::itest
