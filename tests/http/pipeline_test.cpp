// SPDX-License-Identifier: Apache-2.0
// The request pipeline (server/http/pipeline.hpp): stages run in order, a failure skips to the
// `always` stages with its Retry-After and details, an answered exchange (done) skips the rest the
// same way; answers are written as docs/protocol.md §0 has them; and the OpenAPI document of a
// route table lists each operation with its parameters, body, success and error answers.
#include <doctest/doctest.h>
#include <httplib.h>

#include <string>
#include <vector>

#include "http/openapi.hpp"
#include "http/pipeline.hpp"
#include "http/schema.hpp"

namespace enact::http {
namespace {

namespace json = boost::json;

struct probe : exchange<int> {
  std::vector<std::string> ran;
  bool fail_at_body = false;
  bool answered_early = false;
  probe(const httplib::Request& q, httplib::Response& r) : exchange<int>(q, r) {}
};

result<void> first(probe& x) {
  x.ran.push_back("first");
  x.done = x.answered_early;
  return {};
}
result<void> body(probe& x) {
  x.ran.push_back("body");
  if (!x.fail_at_body)
    return {};
  x.out.retry_after = 3;
  return fail(api_errc::rate_limited, "slow down");
}
result<void> handler(probe& x) {
  x.ran.push_back("handler");
  x.out = answer<int>(json::value(json::object{{"ok", true}}), 201);
  x.out.charge = 7;
  return {};
}
result<void> settle(probe& x) {
  x.ran.push_back(x.out.charge ? "charge " + std::to_string(*x.out.charge) : "charge none");
  return {};
}
result<void> send(probe& x) {
  x.ran.push_back("answer");
  if (x.out.ok())
    send_value(x.res, x.out.status, *x.out.value);
  else
    send_failure(x.res, to_http(x.out.value.err()), x.out.details, x.out.error_status, x.out.retry_after);
  return {};
}

constexpr std::array<stage<probe>, 5> kStages{{
    {"first", first, true},
    {"body", body},
    {"handler", handler},
    {"charge", settle, true},
    {"answer", send, true},
}};

TEST_CASE("stages run in order; a failure or an early answer leaves only the always stages") {
  httplib::Request req;
  SUBCASE("every stage") {
    httplib::Response res;
    probe x(req, res);
    run_stages<probe>(kStages, x);
    CHECK(x.ran == std::vector<std::string>{"first", "body", "handler", "charge 7", "answer"});
    CHECK(res.status == 201);
    CHECK(res.body == R"({"ok":true})");
  }
  SUBCASE("a failing stage") {
    httplib::Response res;
    probe x(req, res);
    x.fail_at_body = true;
    run_stages<probe>(kStages, x);
    CHECK(x.ran == std::vector<std::string>{"first", "body", "charge none", "answer"});
    CHECK(res.status == 429);
    CHECK(res.get_header_value("Retry-After") == "3");
    CHECK(json::parse(res.body).at("error").at("code") == "rate_limited");
  }
  SUBCASE("answered early") {
    httplib::Response res;
    probe x(req, res);
    x.answered_early = true;
    run_stages<probe>(kStages, x);
    CHECK(x.ran == std::vector<std::string>{"first", "charge none", "answer"});
  }
}

TEST_CASE("answers: 204 has no body; an error keeps its details and its own status") {
  httplib::Response none;
  send_value(none, 204, nullptr);
  CHECK(none.status == 204);
  CHECK(none.body.empty());
  answer<> a(fail(api_errc::invalid_request, "used for another request"));
  a.error_status = 422;
  a.details = json::object{{"kind", "x"}};
  httplib::Response res;
  send_failure(res, to_http(a.value.err()), a.details, a.error_status, a.retry_after);
  CHECK(res.status == 422);
  CHECK(!res.has_header("Retry-After"));
  const json::value body = json::parse(res.body);
  CHECK(body.at("error").at("code") == "invalid_request");
  CHECK(body.at("error").at("details").at("kind") == "x");
  // fail() replaces the value and what only that error carried, not the money owed.
  answer<int> owed(json::value(1), 200);
  owed.charge = 5;
  owed.details = json::object{{"old", 1}};
  owed.fail(fail(api_errc::unavailable, "store down"));
  CHECK(!owed.ok());
  CHECK(owed.details.is_null());
  CHECK(owed.charge == 5);
}

TEST_CASE("the OpenAPI document of a route table") {
  operation get("GET", "/things/{id}", "getThing", "things", "One thing.");
  get.security = {json::object{{"Token", json::array{}}}};
  get.parameters.push_back(query_parameter("limit", schema::integer("", 1), false));
  get.response = schema::object({{"id", schema::string(), true}});
  get.responses = {{"404", error_response("not_found")}};
  operation del("DELETE", "/things/{id}", "deleteThing", "things", "Delete it.");
  del.success = "204";
  operation post("POST", "/things", "addThing", "things", "Add one.");
  post.request = schema::object({{"name", schema::name(), true}});
  const std::vector<operation> ops{get, del, post};
  const json::object doc = openapi_document(json::object{{"title", "t"}, {"version", "1"}}, "/v1", ops,
                                            json::object{{"Error", schema::error_body()}}, json::object{});
  CHECK(doc.at("openapi") == "3.1.0");
  CHECK(doc.at("servers").at(0).at("url") == "/v1");
  const auto& item = doc.at("paths").at("/things/{id}").as_object();
  CHECK(item.at("get").at("operationId") == "getThing");
  CHECK(item.at("get").at("parameters").at(0).at("name") == "limit");
  CHECK(item.at("get").at("responses").at("200").as_object().contains("content"));
  CHECK(item.at("get").at("responses").at("404").at("content").at("application/json").at("schema").at("$ref") ==
        "#/components/schemas/Error");
  CHECK(!item.at("get").as_object().contains("requestBody"));
  CHECK(!item.at("delete").at("responses").at("204").as_object().contains("content"));
  CHECK(doc.at("paths").at("/things").at("post").at("requestBody").at("required") == true);
}

}  // namespace
}  // namespace enact::http
