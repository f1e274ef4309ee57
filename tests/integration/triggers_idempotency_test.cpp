// SPDX-License-Identifier: Apache-2.0
// A trigger run is charged once however its calls to the core fail in transit (docs/triggers.md
// "Runs", docs/protocol.md §0 "Idempotency"). The trigger service runs alone (--no-core) against a
// real core through a proxy of the test's that plays the network between them: it loses the
// answer of a run the core made and charged (a load balancer's 502 after its upstream answered),
// and it answers 409 with Retry-After (the run still leased on the core). Attack: before the
// worker sent its run id as Idempotency-Key, the lost answer's retry ran and charged again.
#include "triggers_test.hpp"

namespace enact::itest {

namespace {

/// Forwards every request to the core at `core_port`, except what `intercept` answers itself:
/// it gets the request and, when it lets it through, the core's answer.
class core_proxy {
 public:
  /// Returns true when it set `res` itself (not forwarded); `upstream` is null before forwarding.
  using rule = std::function<bool(const httplib::Request&, const httplib::Result* upstream, httplib::Response& res)>;

  core_proxy(int core_port, rule intercept) : core_port_(core_port), intercept_(std::move(intercept)) {
    const auto forward = [this](const httplib::Request& req, httplib::Response& res) {
      handle(req, res);
    };
    server_.Get(R"(/.*)", forward);
    server_.Post(R"(/.*)", forward);
    served_.emplace(server_);
  }
  ~core_proxy() { stop(); }
  [[nodiscard]] std::string url() const { return served_->url(); }
  void stop() {
    if (served_)
      served_->stop();
  }

 private:
  void handle(const httplib::Request& req, httplib::Response& res) {
    if (intercept_(req, nullptr, res))
      return;
    httplib::Client up("127.0.0.1", core_port_);
    up.set_read_timeout(120, 0);
    httplib::Headers h;
    for (const auto& [k, v] : req.headers)
      if (k != "Host" && k != "Content-Length" && k != "REMOTE_ADDR" && k != "REMOTE_PORT" && k != "LOCAL_ADDR" &&
          k != "LOCAL_PORT")
        h.emplace(k, v);
    const std::string type = req.get_header_value("Content-Type");
    const std::string target = req.target.empty() ? req.path : req.target;
    httplib::Result r = req.method == "GET" ? up.Get(target, h) : up.Post(target, h, req.body, type);
    if (intercept_(req, &r, res))
      return;
    if (!r) {
      res.status = 502;
      return;
    }
    res.status = r->status;
    for (const auto& [k, v] : r->headers)
      if (k != "Content-Length" && k != "Transfer-Encoding" && k != "Connection" && k != "Keep-Alive")
        res.set_header(k, v);
    res.body = r->body;
  }

  int core_port_;
  rule intercept_;
  httplib::Server server_;
  std::optional<serving> served_;
};

void answer(httplib::Response& res, int status, std::string_view code, std::string_view message) {
  res.status = status;
  res.set_content(json::serialize(json::value{{"error", {{"code", code}, {"message", message}}}}), "application/json");
}

}  // namespace

TEST_CASE("triggers: a run whose answer was lost in transit is charged once; 409 Retry-After is waited for") {
  server_process core_srv({"--dev", "--sandbox-workers", "2"});
  http_client c = core_srv.client();
  const core_side core = setup_core(c, {kEchoCode}, 500);
  const std::string cid = core.cids.at(std::string(kEchoCode));
  const uint64_t start_balance = balance_of(c, core.acct.auth());

  std::mutex mu;
  std::vector<std::string> keys_seen;     // the Idempotency-Key of each run_action call
  std::vector<std::string> replayed;      // the core's Idempotent-Replayed of each answer
  std::vector<std::string> mode{"lose"};  // what the proxy does to the next run_action calls
  size_t next = 0;
  core_proxy proxy(
      core_srv.port(), [&](const httplib::Request& req, const httplib::Result* up, httplib::Response& res) {
        if (req.path != "/core/v1/run_action")
          return false;
        std::lock_guard lock(mu);
        const std::string what = next < mode.size() ? mode[next] : "pass";
        if (up == nullptr) {
          keys_seen.push_back(req.get_header_value("Idempotency-Key"));
          if (what != "busy")
            return false;
          ++next;
          res.set_header("Retry-After", "1");
          answer(res, 409, "conflict", "a request with this Idempotency-Key is still in progress; retry it later");
          return true;
        }
        ++next;
        replayed.push_back(*up ? (*up)->get_header_value("Idempotent-Replayed") : "no answer");
        if (what != "lose")
          return false;
        // The core ran the action and charged it; its answer never reaches the worker.
        answer(res, 502, "unavailable", "upstream connection lost");
        return true;
      });

  temp_dir dir;
  const std::string data = dir.path() + "/data";
  const std::string token = issue_token(data, "alice");
  server_process trig({"--no-core", "--core-url", proxy.url(), "--trigger-retry-base-ms", "20"}, data);
  api_user alice(trig.port(), token);
  const response created = alice.post("/api/triggers", webhook_body(cid, core.key.value));
  ITEST_REQUIRE_STATUS(created, 201);
  const std::string hook = "/webhook/" + s_of(created.body, "id");
  const auto fire = [&](const std::string& body) {
    const response r = call(trig.port(), "POST", hook, body);
    REQUIRE_MESSAGE(r.status == 202, r.describe());
    const std::string run_id = s_of(r.body, "run_id");
    return std::make_pair(run_id, await_run(alice, run_id, std::chrono::seconds(60)));
  };

  // The first attempt's answer is lost after the core charged it: the retry carries the same
  // key and is answered the first run's result, not run and charged again.
  {
    const auto [run_id, run] = fire(R"({"n": 1})");
    INFO(json::serialize(run));
    CHECK(run.at("status") == "success");
    CHECK(run.at("attempts") == 2);
    CHECK(run.at("response") == json::parse(R"({"n": 1})"));
    std::lock_guard lock(mu);
    REQUIRE(keys_seen.size() == 2);
    CHECK(keys_seen[0] == run_id);  // the run id, the same for every attempt of the run
    CHECK(keys_seen[1] == run_id);
    REQUIRE(replayed.size() == 2);
    CHECK(replayed[0].empty());
    CHECK(replayed[1] == "true");
  }
  CHECK(balance_of(c, core.acct.auth()) == start_balance - 1);  // charged once, not twice

  // The core answers 409 with Retry-After twice (an attempt still leased there): the worker
  // waits and asks again, neither counting an attempt nor recording a failure.
  {
    std::lock_guard lock(mu);
    mode = {"busy", "busy"};
    next = 0;
    keys_seen.clear();
    replayed.clear();
  }
  {
    const auto started = std::chrono::steady_clock::now();
    const auto [run_id, run] = fire(R"({"n": 2})");
    INFO(json::serialize(run));
    CHECK(run.at("status") == "success");
    CHECK(run.at("attempts") == 1);
    CHECK(!run.contains("error"));
    CHECK(std::chrono::steady_clock::now() - started >= std::chrono::seconds(2));  // Retry-After honoured
    std::lock_guard lock(mu);
    CHECK(keys_seen == std::vector<std::string>{run_id, run_id, run_id});
    CHECK(replayed == std::vector<std::string>{""});
  }
  CHECK(balance_of(c, core.acct.auth()) == start_balance - 2);
  trig.stop();
  proxy.stop();
}

}  // namespace enact::itest
