// SPDX-License-Identifier: Apache-2.0
// Webhook de-duplication end to end (docs/triggers.md "Webhooks"): enact-server with a webhook
// trigger whose config.dedup_header names the sender's delivery id. The same delivery sent again
// answers 200 with the first run's id and runs the action once; another delivery id, or none, is a
// run of its own; the setting is set and cleared by PATCH, and a credential header is refused.
#include <doctest/doctest.h>

#include <set>
#include <thread>
#include <vector>

#include "triggers_test.hpp"

namespace enact::itest {
namespace {

response deliver(const server_process& srv, const std::string& hook, const std::string& body,
                 const std::optional<std::string>& delivery) {
  httplib::Headers h;
  if (delivery)
    h.emplace("X-GitHub-Delivery", *delivery);
  return call(srv.port(), "POST", hook, body, h, "application/json");
}

TEST_CASE("triggers: a webhook delivered twice under its dedup_header runs once") {
  temp_dir dir;
  const std::string data = dir.path() + "/data";
  const std::string token = issue_token(data, "alice");
  server_process srv({"--dev", "--sandbox-workers", "2"}, data);
  http_client c = srv.client();
  const core_side core = setup_core(c, {kEchoCode}, 500);
  api_user alice(srv.port(), token);

  json::object body = webhook_body(core.cids.at(std::string(kEchoCode)), core.key.value);
  body["config"] = json::object{{"dedup_header", "X-GitHub-Delivery"}};
  const response created = alice.post("/api/triggers", body);
  ITEST_REQUIRE_STATUS(created, 201);
  CHECK(created.body.at("config") == json::parse(R"({"dedup_header":"X-GitHub-Delivery"})"));
  const std::string id = s_of(created.body, "id");
  const std::string hook = "/webhook/" + id;

  const response first = deliver(srv, hook, R"({"n": 1})", "d-1");
  ITEST_REQUIRE_STATUS(first, 202);
  const std::string run_id = s_of(first.body, "run_id");
  // The provider's retry: the first run's id, 200, nothing queued.
  const response retry = deliver(srv, hook, R"({"n": 1})", "d-1");
  ITEST_REQUIRE_STATUS(retry, 200);
  CHECK(s_of(retry.body, "run_id") == run_id);
  CHECK(retry.obj().size() == 1);
  // Racing redeliveries: all answer the first run.
  std::vector<std::string> ids(6);
  std::vector<std::thread> senders;
  for (size_t i = 0; i < ids.size(); ++i)
    senders.emplace_back([&, i] {
      const response r = deliver(srv, hook, R"({"n": 2})", "d-2");
      ids[i] = r.body.is_object() ? s_of(r.body, "run_id") : std::to_string(r.status);
    });
  for (auto& t : senders)
    t.join();
  CHECK(std::set<std::string>(ids.begin(), ids.end()).size() == 1);
  // Without the header: a run each time.
  const response bare1 = deliver(srv, hook, R"({"n": 3})", std::nullopt);
  const response bare2 = deliver(srv, hook, R"({"n": 3})", std::nullopt);
  ITEST_REQUIRE_STATUS(bare1, 202);
  ITEST_REQUIRE_STATUS(bare2, 202);
  CHECK(s_of(bare1.body, "run_id") != s_of(bare2.body, "run_id"));

  const json::object run = await_run(alice, run_id);
  CHECK(run.at("status") == "success");
  CHECK(run.at("attempts") == 1);
  const response runs = alice.get("/api/triggers/" + id + "/runs?limit=100");
  ITEST_REQUIRE_STATUS(runs, 200);
  CHECK(u_of(runs.body, "total") == 4);  // d-1, d-2 and the two without the header

  // PATCH clears the setting: the same delivery id now queues a run; a credential header is 400.
  const response cleared = alice.patch("/api/triggers/" + id, json::object{{"config", json::object{}}});
  ITEST_REQUIRE_STATUS(cleared, 200);
  ITEST_REQUIRE_STATUS(deliver(srv, hook, R"({"n": 1})", "d-1"), 202);
  const response bad =
      alice.patch("/api/triggers/" + id, json::object{{"config", json::object{{"dedup_header", "Authorization"}}}});
  CHECK(bad.status == 400);
  CHECK(bad.error_message().find("config.dedup_header") != std::string::npos);
  CHECK(srv.stop().clean());
}

}  // namespace
}  // namespace enact::itest
