// SPDX-License-Identifier: Apache-2.0
// The trigger management API, the serving modes, and a SIGKILL during a webhook flood.
#include "triggers_test.hpp"

namespace enact::itest {

TEST_CASE("triggers: the management API") {
  temp_dir dir;
  const std::string data = dir.path() + "/data";
  const std::string alice_token = issue_token(data, "alice");
  const std::string bob_token = issue_token(data, "bob");
  // A fake core that lets any key run the action "x" (and "y", with PKP 0x…aa): the usage-key
  // check has its own cases (tests/security/attacks/triggers_test.cpp).
  httplib::Server fake;
  add_key_check_routes(fake, {cid_of_code("x"), cid_of_code("y")}, {"0x00000000000000000000000000000000000000AA"});
  serving fake_served(fake);
  const int fake_port = fake_served.port();
  server_process srv({"--chain-rpc", "ethereum=http://127.0.0.1:1", "--no-core", "--core-url",
                      "http://127.0.0.1:" + std::to_string(fake_port), "--trigger-workers", "0"},
                     data);
  api_user alice(srv.port(), alice_token), bob(srv.port(), bob_token);
  const std::string cid = cid_of_code("x");
  const std::string key = random_usage_key();

  SUBCASE("authentication") {
    const response me = alice.get("/api/me");
    ITEST_REQUIRE_STATUS(me, 200);
    CHECK(s_of(me.body, "user_id") == "alice");
    CHECK(me.obj().size() == 2);
    CHECK(s_of(me.body, "token_expires_at").ends_with("Z"));
    const std::vector<httplib::Headers> refused = {
        {},
        {{"Authorization", "Bearer " + std::string(43, 'A')}},  // well-formed, unknown
        {{"Authorization", "Bearer short"}},
        {{"Authorization", "Basic " + alice_token}},
        {{"X-Api-Key", alice_token}},
    };
    for (const auto& h : refused) {
      for (const auto& [method, path] : std::vector<std::pair<std::string, std::string>>{
               {"GET", "/api/me"}, {"GET", "/api/triggers"}, {"POST", "/api/triggers"}}) {
        CAPTURE(path);
        check_error_shape(call(srv.port(), method, path, "{}", h), 401, "unauthenticated");
      }
    }
  }

  SUBCASE("create, read, list, update, delete; JSON of docs/protocol.md §4; no key ever returned") {
    const response w = alice.post("/api/triggers", webhook_body(cid, key, "first"));
    ITEST_REQUIRE_STATUS(w, 201);
    const auto& t = w.obj();
    const std::set<std::string> fields{"id",
                                       "type",
                                       "name",
                                       "enabled",
                                       "action_ipfs_cid",
                                       "usage_api_key_hash",
                                       "max_runs_per_minute",
                                       "max_queued_runs",
                                       "config",
                                       "created_at",
                                       "updated_at",
                                       "webhook_url"};
    std::set<std::string> got;
    for (const auto& kv : t)
      got.insert(std::string(kv.key()));
    CHECK(got == fields);
    CHECK(s_of(w.body, "type") == "webhook");
    CHECK(t.at("enabled") == true);
    CHECK(t.at("config") == json::object{});
    CHECK(s_of(w.body, "usage_api_key_hash") == keccak_hex(key));
    const std::string id = s_of(w.body, "id");
    CHECK(id.starts_with("trg_"));

    const json::value sched{{"type", "schedule"},     {"name", "every minute"},
                            {"action_ipfs_cid", cid}, {"pkp_id", "0x00000000000000000000000000000000000000aa"},
                            {"usage_api_key", key},   {"config", {{"cron", "* * * * *"}}},
                            {"enabled", false}};
    const response s = alice.post("/api/triggers", sched);
    ITEST_REQUIRE_STATUS(s, 201);
    CHECK(s.obj().at("config") == json::value{{"cron", "* * * * *"}, {"timezone", "UTC"}});
    CHECK(s_of(s.body, "pkp_id") == "0x00000000000000000000000000000000000000AA");
    CHECK(!s.obj().contains("webhook_url"));
    CHECK(s.obj().at("enabled") == false);
    const std::string sid = s_of(s.body, "id");

    const json::value chain{{"type", "chain-event"},
                            {"name", "transfers"},
                            {"action_ipfs_cid", cid},
                            {"usage_api_key", key},
                            {"config",
                             {{"chain", "ethereum"},
                              {"contract", "0xdac17f958d2ee523a2206206994597c13d831ec7"},
                              {"event", "Transfer(address indexed from, address indexed to, uint256 value)"},
                              {"start_block", "0x10"},
                              {"topic_filters", json::array{nullptr, json::array{"0x" + std::string(64, 'A')}}},
                              {"confirmations", 12}}}};
    const response ce = alice.post("/api/triggers", chain);
    ITEST_REQUIRE_STATUS(ce, 201);
    CHECK(ce.obj().at("config").at("contract") == "0xdAC17F958D2ee523a2206206994597C13D831ec7");
    // The config is stored typed and answered in its normal form: topics in lowercase, a filter of
    // one topic as that topic, a hex start block as its number.
    CHECK(ce.obj().at("config").at("topic_filters") == json::array{nullptr, json::value("0x" + std::string(64, 'a'))});
    CHECK(ce.obj().at("config").at("start_block") == 16);

    const response one = alice.get("/api/triggers/" + id);
    ITEST_REQUIRE_STATUS(one, 200);
    CHECK(one.body == w.body);

    const response list = alice.get("/api/triggers");
    ITEST_REQUIRE_STATUS(list, 200);
    CHECK(u_of(list.body, "total") == 3);
    CHECK(list.obj().size() == 2);
    const auto& items = list.obj().at("items").as_array();
    REQUIRE(items.size() == 3);
    CHECK(items[0].at("id") == json::value(id));  // oldest first
    const response paged = alice.get("/api/triggers?limit=1&offset=1");
    ITEST_REQUIRE_STATUS(paged, 200);
    REQUIRE(paged.obj().at("items").as_array().size() == 1);
    CHECK(paged.obj().at("items").as_array()[0].at("id") == json::value(sid));
    CHECK(u_of(paged.body, "total") == 3);

    const std::string key2 = random_usage_key();
    const response up = alice.patch("/api/triggers/" + sid, json::object{{"name", "renamed"},
                                                                         {"enabled", true},
                                                                         {"pkp_id", nullptr},
                                                                         {"usage_api_key", key2},
                                                                         {"config", {{"cron", "*/30 * * * * *"}}}});
    ITEST_REQUIRE_STATUS(up, 200);
    CHECK(s_of(up.body, "name") == "renamed");
    CHECK(up.obj().at("enabled") == true);
    CHECK(!up.obj().contains("pkp_id"));
    CHECK(s_of(up.body, "usage_api_key_hash") == keccak_hex(key2));
    CHECK(up.obj().at("config").at("cron") == "*/30 * * * * *");
    CHECK(s_of(up.body, "updated_at") >= s_of(up.body, "created_at"));

    const response del = alice.del("/api/triggers/" + id);
    CHECK(del.status == 204);
    CHECK(del.text.empty());
    check_error_shape(alice.get("/api/triggers/" + id), 404, "not_found");
    check_error_shape(alice.del("/api/triggers/" + id), 404, "not_found");

    for (const auto& text : alice.seen()) {
      CHECK(text.find(key) == std::string::npos);
      CHECK(text.find(key2) == std::string::npos);
      CHECK(text.find("usage_api_key\"") == std::string::npos);
    }
    CHECK(store_bytes(data).find(key) == std::string::npos);
    CHECK(store_bytes(data).find(key2) == std::string::npos);
  }

  SUBCASE("a user sees only their own triggers and runs") {
    const response w = alice.post("/api/triggers", webhook_body(cid, key));
    ITEST_REQUIRE_STATUS(w, 201);
    const std::string id = s_of(w.body, "id");
    const response r = call(srv.port(), "POST", "/webhook/" + id, "{}");
    ITEST_REQUIRE_STATUS(r, 202);
    const std::string run_id = s_of(r.body, "run_id");
    ITEST_CHECK_STATUS(alice.get("/api/runs/" + run_id), 200);
    const response queued = alice.get("/api/runs/" + run_id);
    CHECK(s_of(queued.body, "status") == "queued");  // no workers in this server

    check_error_shape(bob.get("/api/triggers/" + id), 404, "not_found");
    check_error_shape(bob.patch("/api/triggers/" + id, json::object{{"enabled", false}}), 404, "not_found");
    check_error_shape(bob.del("/api/triggers/" + id), 404, "not_found");
    check_error_shape(bob.get("/api/triggers/" + id + "/runs"), 404, "not_found");
    check_error_shape(bob.get("/api/runs/" + run_id), 404, "not_found");
    CHECK(u_of(bob.get("/api/triggers").body, "total") == 0);
    ITEST_CHECK_STATUS(alice.get("/api/triggers/" + id), 200);  // untouched
    CHECK(alice.get("/api/triggers/" + id).obj().at("enabled") == true);
  }

  SUBCASE("validation") {
    struct case_ {
      const char* what;
      json::value body;
      const char* message_start;
    };
    const auto with = [&](std::initializer_list<std::pair<std::string, json::value>> changes,
                          std::initializer_list<const char*> remove = {}) {
      json::object b = webhook_body(cid, key);
      for (const auto& [k, v] : changes)
        b[k] = v;
      for (const char* k : remove)
        b.erase(k);
      return json::value(std::move(b));
    };
    const json::object ev{{"chain", "ethereum"},
                          {"contract", "0xdac17f958d2ee523a2206206994597c13d831ec7"},
                          {"event", "Transfer(address indexed from, address indexed to, uint256 value)"}};
    const auto chain_with = [&](std::initializer_list<std::pair<std::string, json::value>> changes) {
      json::object c = ev;
      for (const auto& [k, v] : changes)
        c[k] = v;
      return with({{"type", "chain-event"}, {"config", c}});
    };
    const case_ cases[] = {
        {"unknown field", with({{"colour", "red"}}), "body.colour: unknown field"},
        {"missing type", with({}, {"type"}), "body.type: "},
        {"bad type", with({{"type", "cron"}}), "body.type: "},
        {"empty name", with({{"name", ""}}), "body.name: "},
        {"bad cid", with({{"action_ipfs_cid", "QmNotACid"}}), "body.action_ipfs_cid: "},
        {"missing key", with({}, {"usage_api_key"}), "body.usage_api_key: "},
        {"key of the wrong form", with({{"usage_api_key", "abc"}}), "body.usage_api_key: "},
        {"bad pkp", with({{"pkp_id", "0x12"}}), "body.pkp_id"},
        {"enabled not a bool", with({{"enabled", "yes"}}), "body.enabled: "},
        {"webhook config", with({{"config", {{"x", 1}}}}), "config.x: unknown field"},
        {"schedule under 30 s", with({{"type", "schedule"}, {"config", {{"cron", "*/10 * * * * *"}}}}),
         "config.cron: "},
        {"schedule bad cron", with({{"type", "schedule"}, {"config", {{"cron", "61 * * * *"}}}}), "config.cron: "},
        {"schedule timezone", with({{"type", "schedule"}, {"config", {{"cron", "* * * * *"}, {"timezone", "CET"}}}}),
         "config.timezone: "},
        {"chain without RPC", chain_with({{"chain", "polygon"}}), "config.chain: this deployment has no RPC"},
        {"unknown chain", chain_with({{"chain", "dogechain"}}), "config.chain: "},
        {"bad contract", chain_with({{"contract", "0x1234"}}), "config.contract"},
        {"bad event", chain_with({{"event", "Transfer(address indexed from"}}), "config.event: "},
        {"bad start_block", chain_with({{"start_block", "12"}}), "config.start_block: "},
        {"negative start_block", chain_with({{"start_block", -1}}), "config.start_block: "},
        {"four topic filters", chain_with({{"topic_filters", json::array{nullptr, nullptr, nullptr, nullptr}}}),
         "config.topic_filters: at most 3"},
        {"short topic", chain_with({{"topic_filters", json::array{"0x1234"}}}), "config.topic_filters[0]: "},
        {"topic past the indexed ones",
         chain_with({{"topic_filters", json::array{nullptr, nullptr, "0x" + std::string(64, '1')}}}),
         "config.topic_filters[2]: "},
        {"confirmations", chain_with({{"confirmations", "12"}}), "config.confirmations: "},
    };
    for (const auto& k : cases) {
      CAPTURE(k.what);
      const response r = alice.post("/api/triggers", k.body);
      check_error_shape(r, 400, "invalid_request");
      CHECK_MESSAGE(r.error_message().starts_with(k.message_start), r.error_message());
      CHECK(r.text.find(key) == std::string::npos);
    }
    check_error_shape(call(srv.port(), "POST", "/api/triggers", "{not json", alice.auth()), 400, "invalid_request");
    check_error_shape(call(srv.port(), "POST", "/api/triggers", "[]", alice.auth()), 400, "invalid_request");

    // The interval rule holds on update too.
    const response s = alice.post("/api/triggers", with({{"type", "schedule"}, {"config", {{"cron", "0 * * * *"}}}}));
    ITEST_REQUIRE_STATUS(s, 201);
    const std::string sid = s_of(s.body, "id");
    const response fast = alice.patch("/api/triggers/" + sid, json::object{{"config", {{"cron", "*/5 * * * * *"}}}});
    check_error_shape(fast, 400, "invalid_request");
    CHECK(fast.error_message().starts_with("config.cron: "));
    check_error_shape(alice.patch("/api/triggers/" + sid, json::object{{"type", "webhook"}}), 400, "invalid_request");
    CHECK(alice.get("/api/triggers/" + sid).obj().at("config").at("cron") == "0 * * * *");

    for (const char* q : {"?limit=0", "?limit=101", "?limit=x", "?offset=-1", "?page_size=5"})
      check_error_shape(alice.get(std::string("/api/triggers") + q), 400, "invalid_request");
    check_error_shape(alice.get("/api/triggers/" + sid + "/runs?limit=1000"), 400, "invalid_request");
    check_error_shape(alice.get("/api/triggers/nope"), 404, "not_found");
    check_error_shape(alice.get("/api/runs/nope"), 404, "not_found");
  }
}

TEST_CASE("triggers: serving modes") {
  SUBCASE("--triggers-listen: the trigger routes on a listener of their own") {
    temp_dir dir;
    const std::string data = dir.path() + "/data";
    const std::string token = issue_token(data, "alice");
    const int port = free_port();
    server_process srv({"--triggers-listen", "127.0.0.1:" + std::to_string(port)}, data);
    const response me = call(port, "GET", "/api/me", {}, bearer(token));
    ITEST_REQUIRE_STATUS(me, 200);
    CHECK(!me.header("X-Request-Id").empty());
    check_error_shape(call(port, "GET", "/nowhere"), 404, "not_found");
    check_error_shape(call(srv.port(), "GET", "/api/me", {}, bearer(token)), 404, "not_found");
    ITEST_CHECK_STATUS(call(srv.port(), "GET", "/core/v1/get_node_chain_config"), 200);
    ITEST_CHECK_STATUS(call(port, "GET", "/core/v1/get_node_chain_config"), 404);
    // Its requests are logged like the core's.
    check_logged(srv, me, "/api/me");
  }
  SUBCASE("--no-triggers: the core alone") {
    temp_dir dir;
    const std::string data = dir.path() + "/data";
    const std::string token = issue_token(data, "alice");
    server_process srv({"--no-triggers"}, data);
    check_error_shape(call(srv.port(), "GET", "/api/me", {}, bearer(token)), 404, "not_found");
    ITEST_CHECK_STATUS(call(srv.port(), "GET", "/core/v1/get_node_chain_config"), 200);
  }
  SUBCASE("refused settings") {
    const auto refused = [](const std::vector<std::string>& args, const char* words) {
      temp_dir d;
      std::vector<std::string> all{"--listen", "127.0.0.1:0", "--data-dir", d.path() + "/data"};
      all.insert(all.end(), args.begin(), args.end());
      const finished_run r = run_to_exit(all);
      CHECK(r.status.exited);
      CHECK(r.status.code == 2);
      CHECK_MESSAGE(r.stderr_text.find(words) != std::string::npos, r.stderr_text);
    };
    refused({"--no-core"}, "--core-url");
    refused({"--chain-rpc", "dogechain=http://x.example"}, "dogechain");
    refused({"--chain-rpc", "ethereum"}, "NAME=URL");
    refused({"--triggers-listen", "nowhere"}, "HOST:PORT");
    refused({"--trigger-sync", "sometimes"}, "full or normal");
    const finished_run usage = run_to_exit({"issue-token", "--user", "x"});
    CHECK(usage.status.code == 2);
  }
}

// Acknowledged means durable: webhooks keep arriving from several threads while the server is
// killed with SIGKILL; after a restart on the same data directory, every webhook that got a 202
// has exactly one run, and every run (including those cut off mid-call) finishes.
TEST_CASE("triggers: SIGKILL during a webhook flood loses nothing acknowledged") {
  temp_dir dir;
  const std::string data = dir.path() + "/data";
  const std::string token = issue_token(data, "alice");
  std::string trigger_id;
  std::vector<std::string> acked;
  size_t refused = 0;
  {
    // The flood is the point here: no per-address limit, and the trigger's limits at their top.
    // The subject is runs surviving a kill, not one account's share of the pool (docs/protocol.md
    // §6 "Fair share"): the burst of one account's runs is not capped.
    server_process srv({"--dev", "--sandbox-workers", "2", "--webhook-rate", "0", "--account-concurrent-runs", "0",
                        "--account-run-seconds-per-minute", "0"},
                       data);
    http_client c = srv.client();
    const core_side core = setup_core(c, {kTrivialCode}, 1500);
    api_user alice(srv.port(), token);
    json::object hook = webhook_body(core.cids.at(std::string(kTrivialCode)), core.key.value);
    hook["max_runs_per_minute"] = 6000;
    hook["max_queued_runs"] = 10000;
    const response t = alice.post("/api/triggers", hook);
    ITEST_REQUIRE_STATUS(t, 201);
    trigger_id = s_of(t.body, "id");

    constexpr int kThreads = 8, kEach = 125;  // 1,000 webhooks
    std::atomic<int> answered{0};
    std::mutex mu;
    std::vector<std::thread> senders;
    for (int k = 0; k < kThreads; ++k) {
      senders.emplace_back([&, k] {
        http_client hc("127.0.0.1", srv.port(), true);
        for (int i = 0; i < kEach; ++i) {
          const response r =
              hc.request("POST", "/webhook/" + trigger_id, json::serialize(json::value{{"k", k}, {"i", i}}));
          std::lock_guard lock(mu);
          if (r.status == 202)
            acked.push_back(s_of(r.body, "run_id"));
          else
            ++refused;  // no answer: the server is gone
          ++answered;
        }
      });
    }
    // Midway: once a third of the webhooks were answered.
    while (answered < kThreads * kEach / 3)
      std::this_thread::sleep_for(1ms);
    REQUIRE(::kill(srv.pid(), SIGKILL) == 0);
    for (auto& s : senders)
      s.join();
    const exit_status st = srv.stop();
    CHECK(st.signal == SIGKILL);
  }
  MESSAGE(acked.size() << " webhooks acknowledged before the kill, " << refused << " not");
  REQUIRE(acked.size() >= 300);
  REQUIRE(refused > 0);  // the kill did land midway

  server_process srv(
      {"--dev", "--sandbox-workers", "2", "--account-concurrent-runs", "0", "--account-run-seconds-per-minute", "0"},
      data);
  api_user alice(srv.port(), token);
  std::map<std::string, std::string> status;  // run id → status
  const auto deadline = steady::now() + 240s;
  for (;;) {
    status.clear();
    for (uint64_t offset = 0;; offset += 100) {
      const response page =
          alice.get("/api/triggers/" + trigger_id + "/runs?limit=100&offset=" + std::to_string(offset));
      REQUIRE_MESSAGE(page.status == 200, page.describe());
      const auto& items = page.obj().at("items").as_array();
      for (const auto& r : items)
        status[s_of(r, "id")] = s_of(r, "status");
      if (items.size() < 100)
        break;
    }
    const bool done = std::all_of(status.begin(), status.end(),
                                  [](const auto& kv) { return kv.second == "success" || kv.second == "failed"; });
    if (done || steady::now() > deadline)
      break;
    std::this_thread::sleep_for(200ms);
  }
  std::set<std::string> unique(acked.begin(), acked.end());
  CHECK(unique.size() == acked.size());  // one run id per 202
  size_t missing = 0, unfinished = 0;
  for (const auto& id : acked)
    missing += status.contains(id) ? 0 : 1;
  for (const auto& [id, s] : status)
    unfinished += s == "success" ? 0 : 1;
  CHECK(missing == 0);
  CHECK(unfinished == 0);
  // Runs beyond the acknowledged ones are webhooks committed whose answer the kill cut off.
  CHECK(status.size() >= acked.size());
  CHECK(status.size() <= acked.size() + refused);
}

}  // namespace enact::itest
