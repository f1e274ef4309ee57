// SPDX-License-Identifier: Apache-2.0
// Webhooks through the core, and retries against a fake core (triggers_test.hpp).
#include "triggers_test.hpp"

namespace enact::itest {

TEST_CASE("triggers: webhooks run actions through the core") {
  temp_dir dir;
  const std::string data = dir.path() + "/data";
  const std::string token = issue_token(data, "alice");
  server_process srv({"--dev", "--sandbox-workers", "2"}, data);
  http_client c = srv.client();
  const core_side core = setup_core(c, {kEchoCode, kThrowCode}, 500);
  api_user alice(srv.port(), token);

  const response created =
      alice.post("/api/triggers", webhook_body(core.cids.at(std::string(kEchoCode)), core.key.value));
  ITEST_REQUIRE_STATUS(created, 201);
  const std::string id = s_of(created.body, "id");
  const std::string hook = "/webhook/" + id;
  CHECK(s_of(created.body, "webhook_url") == "http://127.0.0.1:" + std::to_string(srv.port()) + hook);

  SUBCASE("a JSON body: the run succeeds with what the action echoed") {
    const std::string body = R"({"hello": "world", "n": [1, 2]})";
    const httplib::Headers h{{"X-Hub-Signature-256", "sha256=0123abcd"},
                             {"Authorization", "Bearer sender-secret"},
                             {"Cookie", "session=1"},
                             {"X-Api-Key", "not-for-the-action"},
                             {"Proxy-Authorization", "Basic eA=="},
                             {"Set-Cookie", "a=b"},
                             {"X-Custom", "one"}};
    const response r = call(srv.port(), "POST", hook, body, h, "application/json");
    ITEST_REQUIRE_STATUS(r, 202);
    CHECK(!r.header("X-Request-Id").empty());
    const std::string run_id = s_of(r.body, "run_id");
    CHECK(r.obj().size() == 1);
    const json::object run = await_run(alice, run_id);
    INFO(json::serialize(run));
    CHECK(run.at("status") == "success");
    CHECK(run.at("attempts") == 1);
    CHECK(run.at("trigger_id") == json::value(id));
    CHECK(run.at("response") == json::parse(body));
    CHECK(!run.contains("error"));
    CHECK(run.contains("queued_at"));
    CHECK(run.contains("started_at"));
    CHECK(run.contains("finished_at"));
    const auto& params = run.at("params").as_object();
    CHECK(params.at("event") == json::parse(body));
    CHECK(params.at("event_raw") == json::value(body));
    CHECK(!params.contains("event_raw_encoding"));
    const auto& headers = params.at("headers").as_object();
    CHECK(headers.at("x-hub-signature-256") == "sha256=0123abcd");
    CHECK(headers.at("x-custom") == "one");
    CHECK(headers.at("content-type") == "application/json");
    for (const char* gone : {"authorization", "cookie", "x-api-key", "proxy-authorization", "set-cookie", "remote_addr",
                             "remote_port", "local_addr", "local_port"})
      CHECK_MESSAGE(!headers.contains(gone), gone << " reached the action");
    for (const auto& kv : headers)
      CHECK_MESSAGE(
          std::string(kv.key()) ==
              [&] {
                std::string l(kv.key());
                std::transform(l.begin(), l.end(), l.begin(), [](unsigned char ch) { return std::tolower(ch); });
                return l;
              }(),
          "header name not lowercased: " << std::string(kv.key()));
    // The run is listed, newest first.
    const response runs = alice.get("/api/triggers/" + id + "/runs");
    ITEST_REQUIRE_STATUS(runs, 200);
    CHECK(u_of(runs.body, "total") == 1);
    CHECK(s_of(runs.obj().at("items").as_array()[0], "id") == run_id);
  }

  SUBCASE("text bodies stay text; bytes that are not UTF-8 arrive as base64") {
    struct case_ {
      std::string body;
      std::string content_type;
      json::value event;
      std::string raw;
      bool base64;
      json::value response;  // what the core answers for the echo (a JSON text comes back parsed)
    };
    const std::string binary("\xff\xfe\x00\x01 binary \xc3", 13);
    const case_ cases[] = {
        {"plain words", "text/plain", json::value("plain words"), "plain words", false, json::value("plain words")},
        {R"({"looks": "like json"})", "text/plain; charset=utf-8", json::value(R"({"looks": "like json"})"),
         R"({"looks": "like json"})", false, json::parse(R"({"looks": "like json"})")},
        {"not json {", "application/json", json::value("not json {"), "not json {", false, json::value("not json {")},
        {"[1,2,3]", "application/octet-stream", json::parse("[1,2,3]"), "[1,2,3]", false, json::parse("[1,2,3]")},
        {"grüße ✓", "text/plain", json::value("grüße ✓"), "grüße ✓", false, json::value("grüße ✓")},
        {binary, "application/octet-stream", json::value(nullptr), codec::base64::encode(as_bytes(binary)), true,
         nullptr},
    };
    for (const auto& k : cases) {
      CAPTURE(k.raw);
      const response r = call(srv.port(), "POST", hook, k.body, {}, k.content_type);
      ITEST_REQUIRE_STATUS(r, 202);
      const json::object run = await_run(alice, s_of(r.body, "run_id"));
      CHECK(run.at("status") == "success");
      const auto& params = run.at("params").as_object();
      CHECK(params.at("event") == k.event);
      CHECK(params.at("event_raw") == json::value(k.raw));
      CHECK(params.contains("event_raw_encoding") == k.base64);
      if (k.base64)
        CHECK(params.at("event_raw_encoding") == "base64");
      CHECK(run.at("response") == k.response);
    }
  }

  SUBCASE("404 unknown, 409 disabled, 413 over 1 MiB or over the core's run request limit") {
    const std::string unknown = "/webhook/trg_" + std::string(32, '0');
    check_error(srv, call(srv.port(), "POST", unknown, "{}"), 404, "not_found", unknown);
    check_error_shape(call(srv.port(), "POST", "/webhook/not-an-id", "{}"), 404, "not_found");

    const json::value schedule{{"type", "schedule"},
                               {"name", "s"},
                               {"action_ipfs_cid", core.cids.at(std::string(kEchoCode))},
                               {"usage_api_key", core.key.value},
                               {"config", {{"cron", "0 0 1 1 *"}}}};
    const response s = alice.post("/api/triggers", schedule);
    ITEST_REQUIRE_STATUS(s, 201);
    check_error_shape(call(srv.port(), "POST", "/webhook/" + s_of(s.body, "id"), "{}"), 404, "not_found");

    ITEST_REQUIRE_STATUS(alice.patch("/api/triggers/" + id, json::object{{"enabled", false}}), 200);
    check_error(srv, call(srv.port(), "POST", hook, "{}"), 409, "conflict", hook);
    ITEST_REQUIRE_STATUS(alice.patch("/api/triggers/" + id, json::object{{"enabled", true}}), 200);
    ITEST_CHECK_STATUS(call(srv.port(), "POST", hook, "{}"), 202);

    // The run request carries the body twice (event and event_raw) and must fit the core's
    // run_action limit of 320 KiB: a text body of 150 KiB runs; one of 170 KiB, which the core
    // would refuse on every attempt, is refused at intake, and so is one of 1 MiB.
    const response fits = call(srv.port(), "POST", hook, std::string(150 << 10, 'x'), {}, "text/plain");
    ITEST_REQUIRE_STATUS(fits, 202);
    const json::object fitted = await_run(alice, s_of(fits.body, "run_id"));
    CHECK_MESSAGE(fitted.at("status") == "success", json::serialize(fitted.at("error")));
    check_error(srv, call(srv.port(), "POST", hook, std::string(170 << 10, 'x'), {}, "text/plain"), 413,
                "payload_too_large", hook);
    const std::string max(size_t{1} << 20, 'x');
    check_error(srv, call(srv.port(), "POST", hook, max, {}, "text/plain"), 413, "payload_too_large", hook);
    check_error(srv, call(srv.port(), "POST", hook, max + "x", {}, "text/plain"), 413, "payload_too_large", hook);
    check_error_shape(call(srv.port(), "POST", hook, max + max, {}, "text/plain"), 413, "payload_too_large");
    const response runs = alice.get("/api/triggers/" + id + "/runs?limit=100");
    CHECK(u_of(runs.body, "total") == 2);  // the refused ones queued nothing
  }

  SUBCASE("a throwing action fails the run with its JavaScript stack") {
    const response t =
        alice.post("/api/triggers", webhook_body(core.cids.at(std::string(kThrowCode)), core.key.value, "thrower"));
    ITEST_REQUIRE_STATUS(t, 201);
    const response r = call(srv.port(), "POST", "/webhook/" + s_of(t.body, "id"), "{}");
    ITEST_REQUIRE_STATUS(r, 202);
    const json::object run = await_run(alice, s_of(r.body, "run_id"));
    INFO(json::serialize(run));
    CHECK(run.at("status") == "failed");
    CHECK(run.at("attempts") == 1);  // not transient: no retry
    CHECK(!run.contains("response"));
    const auto& e = run.at("error").as_object();
    CHECK(e.at("code") == "action_failed");
    CHECK(std::string(e.at("message").as_string()).find("boom") != std::string::npos);
    const std::string stack(e.at("stack").as_string());
    CHECK(stack.find("action.js:3") != std::string::npos);
  }

  // The usage key never comes back, is never logged, and is in the database only sealed.
  for (const auto& text : alice.seen())
    CHECK(text.find(core.key.value) == std::string::npos);
  CHECK(store_bytes(data).find(core.key.value) == std::string::npos);
  srv.stop();
  check_no_secret_logged(srv, {core.key.value, token});
}

TEST_CASE("triggers: transient core failures are retried, others fail at once") {
  // A fake core: per action CID, a script of answers; it records what each call carried.
  const std::string flaky = cid_of_code("flaky"), bad = cid_of_code("bad"), down = cid_of_code("down"),
                    limited = cid_of_code("limited");
  std::mutex mu;
  std::map<std::string, int> calls;
  std::vector<std::string> keys_seen;
  std::vector<json::value> params_seen;
  httplib::Server fake;
  fake.Post("/core/v1/run_action", [&](const httplib::Request& req, httplib::Response& res) {
    const json::value body = json::parse(req.body);
    const std::string cid(body.at("action_ipfs_cid").as_string());
    int n = 0;
    {
      std::lock_guard lock(mu);
      n = ++calls[cid];
      keys_seen.push_back(req.get_header_value("X-Api-Key"));
      params_seen.push_back(body.at("params"));
    }
    const auto answer = [&](int status, const json::value& b) {
      res.status = status;
      res.set_content(json::serialize(b), "application/json");
    };
    const json::value unavailable{{"error", {{"code", "unavailable"}, {"message", "saturated"}}}};
    if ((cid == flaky && n < 4) || cid == down)
      return answer(503, unavailable);
    if (cid == limited && n < 2) {
      res.set_header("Retry-After", "1");
      return answer(429, json::value{{"error", {{"code", "rate_limited"}, {"message", "slow down"}}}});
    }
    if (cid == bad)
      return answer(400, json::value{{"error", {{"code", "invalid_request"}, {"message", "params: no"}}}});
    answer(200, json::value{{"response", {{"attempt", n}}},
                            {"logs", ""},
                            {"signatures", json::object{}},
                            {"run_ms", 1},
                            {"charged_credits", 1}});
  });
  add_key_check_routes(fake, {flaky, bad, down, limited});
  serving fake_served(fake);
  const int fake_port = fake_served.port();

  temp_dir dir;
  const std::string data = dir.path() + "/data";
  const std::string token = issue_token(data, "alice");
  {
    // The trigger service alone, against the fake core.
    server_process srv(
        {"--no-core", "--core-url", "http://127.0.0.1:" + std::to_string(fake_port), "--trigger-retry-base-ms", "20"},
        data);
    api_user alice(srv.port(), token);
    ITEST_CHECK_STATUS(call(srv.port(), "GET", "/core/v1/get_node_chain_config"), 404);
    const std::string key = random_usage_key();
    const auto fire = [&](const std::string& cid) {
      const response t = alice.post("/api/triggers", webhook_body(cid, key));
      REQUIRE_MESSAGE(t.status == 201, t.describe());
      const response r = call(srv.port(), "POST", "/webhook/" + s_of(t.body, "id"), R"({"x": 1})");
      REQUIRE_MESSAGE(r.status == 202, r.describe());
      return await_run(alice, s_of(r.body, "run_id"));
    };

    const json::object ok = fire(flaky);
    INFO(json::serialize(ok));
    CHECK(ok.at("status") == "success");
    // "Retried up to 3 times": three retries after the first attempt, so the fourth succeeds.
    CHECK(ok.at("attempts") == 4);
    CHECK(ok.at("response") == json::value{{"attempt", 4}});
    CHECK(!ok.contains("error"));

    const json::object four = fire(bad);
    CHECK(four.at("status") == "failed");
    CHECK(four.at("attempts") == 1);
    CHECK(four.at("error").at("code") == "invalid_request");
    CHECK(four.at("error").at("message") == "params: no");

    const json::object gone = fire(down);
    CHECK(gone.at("status") == "failed");
    CHECK(gone.at("attempts") == 4);
    CHECK(gone.at("error").at("code") == "unavailable");

    const json::object slow = fire(limited);
    CHECK(slow.at("status") == "success");
    CHECK(slow.at("attempts") == 2);

    std::lock_guard lock(mu);
    CHECK(calls[flaky] == 4);
    CHECK(calls[bad] == 1);
    CHECK(calls[down] == 4);
    CHECK(calls[limited] == 2);
    // Each call carried the trigger's key, unsealed, and the webhook's params.
    for (const auto& k : keys_seen)
      CHECK(k == key);
    for (const auto& p : params_seen)
      CHECK(p.at("event") == json::value{{"x", 1}});
    for (const auto& text : alice.seen())
      CHECK(text.find(key) == std::string::npos);
    srv.stop();
    check_no_secret_logged(srv, {key, token});
  }
  fake_served.stop();
}

}  // namespace enact::itest
