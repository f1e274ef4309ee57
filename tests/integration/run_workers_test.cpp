// SPDX-License-Identifier: Apache-2.0
// run_action's failure kinds, a worker killed mid-run, worker confinement, the IPFS gateway.
#include "run_test.hpp"

namespace enact::itest {

// --- failures and limits -------------------------------------------------------------------------

namespace {

struct bad_action {
  std::string_view name;
  std::string_view code;
  std::string_view kind;
};

constexpr bad_action kBadActions[] = {
    {"throw", kThrowCode, "exception"},
    {"endless loop", kLoopCode, "timeout"},
    {"1 GiB allocation", kMemoryCode, "memory"},
    {"10 MiB response", kOutputCode, "output_too_large"},
    {"deep recursion", kRecursionCode, "exception"},
};

}  // namespace

TEST_CASE("run_action: failures answer 422 with their kind, and good runs go on beside them") {
  // Many runs of one account at once, on purpose: no per-account share (docs/protocol.md §6).
  server_process srv({"--dev", "--run-timeout-ms", "1000", "--sandbox-workers", "4", "--account-concurrent-runs", "0"});
  http_client c = srv.client();
  const account_keys acct = create_account(c, "limits");
  buy_credits(c, acct.auth(), 1000);
  std::vector<std::string> hashes;
  std::map<std::string_view, std::string> cids;
  const stored_action good = upload(c, acct.auth(), kGoodCode);
  hashes.push_back(good.hashed);
  for (const auto& b : kBadActions) {
    const stored_action a = upload(c, acct.auth(), b.code);
    cids[b.name] = a.cid;
    hashes.push_back(a.hashed);
  }
  const uint64_t g = add_group(c, acct.auth(), "g", {}, hashes);
  const usage_keys exec = executor_key(c, acct.auth(), json::array{g});

  SUBCASE("each failure alone") {
    for (const auto& b : kBadActions) {
      INFO(b.name);
      const uint64_t balance = balance_of(c, acct.auth());
      const response r = run(c, exec.auth(), by_cid(cids[b.name]));
      check_error(srv, r, 422, "action_failed", kRunRoute);
      const auto d = details_of(r);
      CHECK(kind_of(r) == b.kind);
      CHECK(d.at("charged_credits").to_number<uint64_t>() == 1);
      CHECK(d.at("stack").is_string());
      CHECK(d.at("logs").is_string());
      CHECK(balance_of(c, acct.auth()) == balance - 1);  // a run that failed was still run
      if (b.name == "throw") {
        CHECK(r.error_message() == "Error: boom");
        const std::string stack(d.at("stack").as_string());
        CHECK(stack.find("action.js:3") != std::string::npos);  // the line of the throw
        CHECK(stack.find("action.js:5") != std::string::npos);  // the line of the call
      }
      if (b.name == "deep recursion") {  // SpiderMonkey's InternalError, Duktape's RangeError
        CHECK((r.error_message().find("too much recursion") != std::string::npos ||
               r.error_message().find("RangeError") != std::string::npos));
      }
    }
  }

  SUBCASE("50 good runs from several threads while the bad ones run") {
    constexpr int kGoodThreads = 5;
    constexpr int kRunsPerThread = 10;
    constexpr int kBadRounds = 2;
    const uint64_t balance = balance_of(c, acct.auth());
    std::vector<std::vector<std::string>> failures(kGoodThreads + std::size(kBadActions));
    std::vector<std::thread> threads;
    for (int t = 0; t < kGoodThreads; ++t) {
      threads.emplace_back([&, t] {
        http_client tc = srv.client(/*keep_alive=*/true);
        for (int i = 0; i < kRunsPerThread; ++i) {
          const int x = t * 1000 + i;
          const response r = run(tc, exec.auth(), by_cid(good.cid, {{"x", x}}));
          if (r.status != 200 || !r.body.is_object() ||
              r.obj().at("response") != json::value(json::object{{"ok", x + 1}}))
            failures[t].push_back("good run " + std::to_string(x) + ": " + r.describe());
        }
      });
    }
    for (size_t b = 0; b < std::size(kBadActions); ++b) {
      threads.emplace_back([&, b] {
        http_client tc = srv.client(/*keep_alive=*/true);
        const auto& bad = kBadActions[b];
        for (int i = 0; i < kBadRounds; ++i) {
          const response r = run(tc, exec.auth(), by_cid(cids.at(bad.name)));
          if (r.status != 422 || r.error_code() != "action_failed" || kind_of(r) != bad.kind)
            failures[kGoodThreads + b].push_back(std::string(bad.name) + ": " + r.describe());
        }
      });
    }
    for (auto& t : threads)
      t.join();
    for (const auto& list : failures)
      for (const auto& f : list)
        FAIL_CHECK(f);
    const uint64_t runs = kGoodThreads * kRunsPerThread + std::size(kBadActions) * kBadRounds;
    CHECK(balance_of(c, acct.auth()) == balance - runs);
  }
}

// --- a worker killed mid-run ---------------------------------------------------------------------

TEST_CASE("run_action: a worker killed mid-run fails that run, and the pool recovers") {
  // The default wall limit (10 s) leaves the kill, not the timeout, to end the run.
  constexpr size_t kWorkers = 2;
  server_process srv({"--dev", "--sandbox-workers", std::to_string(kWorkers)});
  http_client c = srv.client();
  const account_keys acct = create_account(c, "crash");
  buy_credits(c, acct.auth(), 1000);
  const stored_action loop = upload(c, acct.auth(), kLoopCode);
  const stored_action good = upload(c, acct.auth(), kGoodCode);
  add_group(c, acct.auth(), "g", {}, {loop.hashed, good.hashed});

  const activity before = settled_activity(srv.pid());
  REQUIRE(before.size() == kWorkers);
  std::optional<response> looped;
  std::thread runner([&] {
    http_client tc = srv.client();
    looped = run(tc, acct.auth(), by_cid(loop.cid));
  });

  // The worker running the loop is the one whose CPU time grows; the others sleep in read(2).
  pid_t victim = 0;
  const auto deadline = steady::now() + 20s;
  while (victim == 0 && steady::now() < deadline) {
    std::this_thread::sleep_for(50ms);
    for (const auto& [pid, now] : activity_of(srv.pid())) {
      const auto was = before.find(pid);
      if (was != before.end() && std::get<1>(now) > std::get<1>(was->second) + 1)
        victim = pid;
    }
  }
  if (victim != 0)
    ::kill(victim, SIGKILL);
  runner.join();
  REQUIRE_MESSAGE(victim != 0, "no worker was seen running the loop");
  REQUIRE(looped);
  check_error(srv, *looped, 422, "action_failed", kRunRoute);
  const std::string kind = kind_of(*looped);
  CHECK_MESSAGE((kind == "crashed" || kind == "timeout"), "kind " << kind);

  // A replacement takes the killed worker's place.
  std::vector<pid_t> now;
  const auto respawn_deadline = steady::now() + 20s;
  do {
    std::this_thread::sleep_for(50ms);
    now = workers_of(srv.pid());
  } while ((now.size() != kWorkers || std::find(now.begin(), now.end(), victim) != now.end()) &&
           steady::now() < respawn_deadline);
  CHECK(now.size() == kWorkers);
  CHECK(std::find(now.begin(), now.end(), victim) == now.end());

  // And the next runs succeed, on every worker.
  for (int x = 0; x < 4 * static_cast<int>(kWorkers); ++x) {
    const response r = run(c, acct.auth(), by_cid(good.cid, {{"x", x}}));
    ITEST_REQUIRE_STATUS(r, 200);
    CHECK(r.obj().at("response") == json::value(json::object{{"ok", x + 1}}));
  }
  // The server itself never went down.
  CHECK(srv.stop().clean());
}

// --- confinement of the workers ------------------------------------------------------------------

TEST_CASE("sandbox workers: empty environment, no new privileges, the seccomp filter") {
  server_process srv({"--dev", "--sandbox-workers", "2"});
  const json::object iso = isolation_of(srv);
  INFO("sandbox_isolation " << json::serialize(iso));
  for (const std::string field : {"empty_environment", "fds_closed", "network_namespace", "dropped_privileges",
                                  "rlimits", "no_new_privs", "seccomp"}) {
    INFO(field);
    REQUIRE(iso.contains(field));
    CHECK(iso.at(field).is_bool());
  }
  // These two never depend on the host (docs/actions.md).
  CHECK(iso.at("empty_environment").as_bool());
  CHECK(iso.at("no_new_privs").as_bool());

  // Check the workers after a run too: a worker confines itself before its first run.
  http_client c = srv.client();
  const account_keys acct = create_account(c, "confined");
  buy_credits(c, acct.auth(), 500);
  const stored_action good = upload(c, acct.auth(), kGoodCode);
  add_group(c, acct.auth(), "g", {}, {good.hashed});
  for (int x = 0; x < 4; ++x)
    ITEST_REQUIRE_STATUS(run(c, acct.auth(), by_cid(good.cid, {{"x", x}})), 200);

  const auto workers = workers_of(srv.pid());
  REQUIRE(workers.size() == 2);
  for (const pid_t w : workers) {
    INFO("worker " << w);
    const std::string base = "/proc/" + std::to_string(w);
    REQUIRE(std::filesystem::exists(base + "/environ"));
    CHECK(read_text(base + "/environ").empty());
    CHECK(status_field(w, "NoNewPrivs") == "1");
    if (iso.at("seccomp").as_bool())
      CHECK(status_field(w, "Seccomp") == "2");  // SECCOMP_MODE_FILTER
    if (iso.at("dropped_privileges").as_bool())
      CHECK(status_field(w, "Uid").starts_with("65534\t65534\t65534\t65534"));
    if (iso.at("fds_closed").as_bool()) {
      // Only the channel to the server remains open.
      size_t fds = 0;
      for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(base + "/fd"))
        ++fds;
      CHECK(fds <= 2);
    }
  }
}

// --- the IPFS gateway ----------------------------------------------------------------------------

namespace {

/// A minimal IPFS HTTP gateway: GET /ipfs/<cid> answers the bytes registered for the CID (right
/// or wrong), 404 otherwise, and counts requests per CID.
class fake_gateway {
 public:
  fake_gateway() {
    server_.Get(R"(/ipfs/([^/]+))", [this](const httplib::Request& req, httplib::Response& res) {
      const std::string cid = req.matches[1];
      std::lock_guard lock(mu_);
      ++hits_[cid];
      if (const auto it = content_.find(cid); it != content_.end())
        res.set_content(it->second, "application/octet-stream");
      else
        res.status = 404;
    });
    serving_.emplace(server_);
  }
  fake_gateway(const fake_gateway&) = delete;
  fake_gateway& operator=(const fake_gateway&) = delete;

  void serve(const std::string& cid, std::string bytes) {
    std::lock_guard lock(mu_);
    content_[cid] = std::move(bytes);
  }
  int hits(const std::string& cid) {
    std::lock_guard lock(mu_);
    return hits_[cid];
  }
  [[nodiscard]] std::string url() const { return serving_->url(); }
  void stop() { serving_->stop(); }

 private:
  httplib::Server server_;
  std::mutex mu_;
  std::map<std::string, std::string> content_;
  std::map<std::string, int> hits_;
  std::optional<serving> serving_;  // last: stopped before the state its routes use
};

}  // namespace

TEST_CASE("run_action by CID from an IPFS gateway: verified, then kept; wrong bytes refused") {
  fake_gateway gw;
  const std::string right_code = "Enact.setResponse({from: \"gateway\", x: params.x});\n";
  const std::string right_cid = cid_of_code(right_code);
  const std::string claimed_code = "Enact.setResponse(\"what the CID names\");\n";
  const std::string wrong_cid = cid_of_code(claimed_code);
  const std::string absent_cid = cid_of_code("// on no gateway\n");
  gw.serve(right_cid, right_code);
  gw.serve(wrong_cid, "Enact.setResponse(\"something else\");\n");

  server_process srv({"--dev", "--sandbox-workers", "2", "--ipfs-gateway", gw.url()});
  http_client c = srv.client();
  const account_keys acct = create_account(c, "gateway");
  buy_credits(c, acct.auth(), 500);
  add_group(c, acct.auth(), "g", {},
            {hashed_cid_hex(right_cid), hashed_cid_hex(wrong_cid), hashed_cid_hex(absent_cid)});

  // Bytes that do not hash to the CID: 503, nothing charged, nothing kept.
  for (int attempt = 0; attempt < 2; ++attempt) {
    const response r = run(c, acct.auth(), by_cid(wrong_cid));
    check_error(srv, r, 503, "unavailable", kRunRoute);
    CHECK(r.error_message().find("do not hash to " + wrong_cid) != std::string::npos);
    CHECK(balance_of(c, acct.auth()) == 500);
  }
  CHECK(gw.hits(wrong_cid) == 2);  // refused bytes are not kept: the second run asked again

  // A CID the gateway does not have: 404, nothing charged.
  const response absent = run(c, acct.auth(), by_cid(absent_cid));
  check_error(srv, absent, 404, "not_found", kRunRoute);
  CHECK(balance_of(c, acct.auth()) == 500);

  // The right bytes run, and are kept in the content store.
  const response first = run(c, acct.auth(), by_cid(right_cid, {{"x", 1}}));
  ITEST_REQUIRE_STATUS(first, 200);
  CHECK(first.obj().at("response") == json::value(json::object{{"from", "gateway"}, {"x", 1}}));
  CHECK(gw.hits(right_cid) == 1);
  CHECK(balance_of(c, acct.auth()) == 499);

  gw.stop();
  const response second = run(c, acct.auth(), by_cid(right_cid, {{"x", 2}}));
  ITEST_REQUIRE_STATUS(second, 200);
  CHECK(second.obj().at("response") == json::value(json::object{{"from", "gateway"}, {"x", 2}}));
  CHECK(gw.hits(right_cid) == 1);
  CHECK(balance_of(c, acct.auth()) == 498);

  // With the gateway gone, code it never served cleanly is unavailable, and still not charged.
  const response gone = run(c, acct.auth(), by_cid(wrong_cid));
  check_error(srv, gone, 503, "unavailable", kRunRoute);
  CHECK(balance_of(c, acct.auth()) == 498);
}

}  // namespace enact::itest
