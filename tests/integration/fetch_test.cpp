// SPDX-License-Identifier: Apache-2.0
// Enact.fetch through the real server (docs/actions.md "Fetching from the outside world"): the
// server process fetches a JSON price feed on 127.0.0.1 for the action (the development setting
// --fetch-allow-loopback), each fetch is charged through the run's metering hold (which holds the
// price of the most fetches a run may make and debits those made), an account that cannot cover
// that hold is refused before the run, the log names each fetch without its query, body or
// header values, and a server without the setting refuses loopback before any connection.
#include <doctest/doctest.h>

#include <httplib.h>

#include <atomic>
#include <string>
#include <thread>

#include "run_test.hpp"
#include "server_process.hpp"
#include "steps.hpp"

namespace enact::itest {
namespace {

// The price feed, on 127.0.0.1; counts its requests.
class price_feed {
 public:
  price_feed() {
    server_.Get("/price", [this](const httplib::Request&, httplib::Response& res) {
      ++requests;
      res.set_content(R"({"symbol":"ETH","price":"3012.55"})", "application/json");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    REQUIRE(port_ > 0);
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running())
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~price_feed() {
    server_.stop();
    thread_.join();
  }
  [[nodiscard]] std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/price"; }
  std::atomic<int> requests{0};

 private:
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
};

// Fetches params.url params.n times (each with a secret in its query and a header) and answers
// the prices; a refusal is answered as its message.
constexpr std::string_view kFetchCode = R"(
const prices = [];
try {
  for (let i = 0; i < params.n; i++) {
    const res = await Enact.fetch(params.url + '?apikey=query-secret-7', {headers: {'X-Api-Key': 'header-secret-7'}});
    prices.push((await res.json()).price);
  }
  Enact.setResponse({prices});
} catch (e) {
  Enact.setResponse({refused: e.message});
}
)";

TEST_CASE("fetch: the server fetches for the action, each fetch charged through the run's hold") {
  price_feed feed;
  server_process srv({"--dev", "--run-price", "3", "--fetch-price-credits", "150", "--fetch-max-per-run", "4",
                      "--fetch-allow-loopback", "true"});
  auto c = srv.client();
  const account_keys acct = create_account(c, "oracle");
  CHECK(buy_credits(c, acct.auth(), 1000) == 1000);
  const stored_action a = upload(c, acct.auth(), kFetchCode);
  const uint64_t gid = add_group(c, acct.auth(), "g", {}, {a.hashed});
  const usage_keys runner = executor_key(c, acct.auth(), json::array{gid});

  response r = c.post("/run_action", by_cid(a.cid, json::object{{"url", feed.url()}, {"n", 2}}), runner.auth());
  ITEST_REQUIRE_STATUS(r, 200);
  CHECK(json::serialize(r.obj().at("response")) == R"({"prices":["3012.55","3012.55"]})");
  CHECK(u_of(r.body, "charged_credits") == 3 + 2 * 150);
  CHECK(feed.requests == 2);
  CHECK(balance_of(c, acct.auth()) == 1000 - 303);
  const std::string run_id = r.header("X-Request-Id");

  // No fetch: the run's price only, though the hold covered four fetches.
  r = c.post("/run_action", by_cid(a.cid, json::object{{"url", feed.url()}, {"n", 0}}), runner.auth());
  ITEST_REQUIRE_STATUS(r, 200);
  CHECK(u_of(r.body, "charged_credits") == 3);
  CHECK(balance_of(c, acct.auth()) == 1000 - 303 - 3);

  // Past the per-run count: the fifth fetch is refused, the four made are charged.
  r = c.post("/run_action", by_cid(a.cid, json::object{{"url", feed.url()}, {"n", 5}}), runner.auth());
  ITEST_REQUIRE_STATUS(r, 200);
  CHECK(s_of(r.obj().at("response"), "refused") == "fetch: a run may make at most 4 fetches");
  CHECK(u_of(r.body, "charged_credits") == 3 + 4 * 150);
  CHECK(balance_of(c, acct.auth()) == 1000 - 303 - 3 - 603);

  // Each fetch in the log, without the query, the body or a header's value.
  std::vector<json::object> fetches;
  for (int i = 0; i < 100 && fetches.size() < 2; ++i) {
    fetches.clear();
    for (const json::object& line : srv.log_lines())
      if (line.if_contains("msg") != nullptr && line.at("msg") == "action fetch" &&
          line.if_contains("request_id") != nullptr && line.at("request_id") == json::value(run_id))
        fetches.push_back(line);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  REQUIRE(fetches.size() == 2);
  CHECK(fetches[0].at("url") == json::value(feed.url()));
  CHECK(fetches[0].at("status") == 200);
  CHECK(fetches[0].at("outcome") == "ok");
  const std::string log = srv.log_text();
  CHECK(log.find("query-secret-7") == std::string::npos);
  CHECK(log.find("header-secret-7") == std::string::npos);
  CHECK(log.find("3012.55") == std::string::npos);

  // An account that cannot cover the run and its most fetches is refused before anything runs.
  const account_keys poor = create_account(c, "poor");
  CHECK(buy_credits(c, poor.auth(), 500) == 500);  // under 3 + 4 × 150
  const stored_action b = upload(c, poor.auth(), kFetchCode);
  const uint64_t pg = add_group(c, poor.auth(), "g", {}, {b.hashed});
  const usage_keys poor_runner = executor_key(c, poor.auth(), json::array{pg});
  const int before = feed.requests;
  check_error_shape(
      c.post("/run_action", by_cid(b.cid, json::object{{"url", feed.url()}, {"n", 1}}), poor_runner.auth()), 402,
      "insufficient_credits");
  CHECK(feed.requests == before);
  CHECK(balance_of(c, poor.auth()) == 500);
  CHECK(srv.stop().clean());
}

TEST_CASE("fetch: without the development setting the server refuses loopback before any connection") {
  price_feed feed;
  server_process srv({"--dev"});
  auto c = srv.client();
  const account_keys acct = create_account(c, "plain");
  CHECK(buy_credits(c, acct.auth(), 500) == 500);
  const stored_action a = upload(c, acct.auth(), kFetchCode);
  const uint64_t gid = add_group(c, acct.auth(), "g", {}, {a.hashed});
  const usage_keys runner = executor_key(c, acct.auth(), json::array{gid});
  for (const std::string& url :
       std::vector<std::string>{feed.url(), "https://localhost:1/", "https://[::1]:1/", "https://0x7f000001:1/",
                                "https://169.254.169.254/latest/meta-data/"}) {
    CAPTURE(url);
    const response r = c.post("/run_action", by_cid(a.cid, json::object{{"url", url}, {"n", 1}}), runner.auth());
    ITEST_REQUIRE_STATUS(r, 200);
    CHECK(s_of(r.obj().at("response"), "refused").find("which actions may not reach") != std::string::npos);
    CHECK(u_of(r.body, "charged_credits") == 1);  // the run's price; no fetch was made
  }
  CHECK(feed.requests == 0);
  CHECK(srv.stop().clean());
}

}  // namespace
}  // namespace enact::itest
