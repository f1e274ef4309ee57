// SPDX-License-Identifier: Apache-2.0
// What a run leaves behind when its server is killed, and what a request finds while the same
// request still runs (docs/protocol.md §0 "Idempotency", core/credits.hpp run_budget): the run's
// hold on credits expires after the run's budget (the run's wall time, the wait for a sandbox
// worker, the kill grace and a 30 s margin), not after 15 minutes, so a killed instance's held
// credits come back within it; and a request under an Idempotency-Key whose first request is still
// leased answers 409 conflict with Retry-After, the seconds until the lease ends.
#include <doctest/doctest.h>

#include <signal.h>

#include <chrono>
#include <thread>

#include "run_test.hpp"
#include "steps.hpp"

namespace enact::itest {
namespace {

using std::chrono::seconds;
using std::chrono::steady_clock;

/// The run budget of a server without an IPFS gateway: queue wait 5 s + wall time + kill grace
/// 1 s + margin 30 s.
seconds budget(seconds wall) { return seconds(5) + wall + seconds(1) + seconds(30); }

}  // namespace

TEST_CASE("a killed instance's held credits come back once the run's budget has passed, not 15 minutes later") {
  // One run costs the whole balance, so a hold left behind refuses every other run with 402.
  const std::vector<std::string> flags{"--dev", "--run-timeout-ms",  "1000", "--run-price",
                                       "500",   "--sandbox-workers", "1"};
  temp_dir data;
  std::string loop_cid;
  std::string good_cid;
  account_keys acct;
  usage_keys exec;
  steady_clock::time_point held_at;
  {
    server_process srv(flags, data.path());
    http_client c = srv.client();
    acct = create_account(c, "held");
    REQUIRE(buy_credits(c, acct.auth(), 500) == 500);
    const stored_action loop = upload(c, acct.auth(), kLoopCode);
    const stored_action good = upload(c, acct.auth(), kGoodCode);
    loop_cid = loop.cid;
    good_cid = good.cid;
    const uint64_t g = add_group(c, acct.auth(), "g", {}, {loop.hashed, good.hashed});
    exec = executor_key(c, acct.auth(), json::array{g});
    // The endless loop runs for its second of wall time; the server is killed in the middle.
    held_at = steady_clock::now();
    std::thread runner([&] {
      http_client own("127.0.0.1", srv.port());
      (void)run(own, exec.auth(), by_cid(loop_cid));
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(400));
    REQUIRE(::kill(srv.pid(), SIGKILL) == 0);
    runner.join();
    (void)srv.stop();
  }
  server_process again(flags, data.path());
  http_client c = again.client();
  CHECK(balance_of(c, acct.auth()) == 500);  // never charged: the run did not finish
  // Held: the next run is refused until the dead run's hold expires.
  check_error_shape(run(c, exec.auth(), by_cid(good_cid, json::object{{"x", 1}})), 402, "insufficient_credits");
  const auto expiry = budget(seconds(1));
  response r = run(c, exec.auth(), by_cid(good_cid, json::object{{"x", 1}}));
  while (r.status == 402 && steady_clock::now() - held_at < expiry + seconds(15)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    r = run(c, exec.auth(), by_cid(good_cid, json::object{{"x", 1}}));
  }
  ITEST_REQUIRE_STATUS(r, 200);
  // Not before the budget (the run might still have been running), and within it plus slack.
  CHECK(steady_clock::now() - held_at >= expiry - seconds(1));
  CHECK(balance_of(c, acct.auth()) == 0);
}

TEST_CASE("Idempotency-Key: a request while the same one is still leased answers 409 with Retry-After") {
  // A wall time of 70 s leases a run's key for 106 s: past the 60 s a second request waits for the
  // first one's answer, so it answers 409, with the seconds left of the lease.
  server_process srv({"--dev", "--run-timeout-ms", "70000", "--sandbox-workers", "1"});
  http_client c = srv.client();
  const account_keys acct = create_account(c, "leased");
  REQUIRE(buy_credits(c, acct.auth(), 500) == 500);
  const stored_action loop = upload(c, acct.auth(), kLoopCode);
  const uint64_t g = add_group(c, acct.auth(), "g", {}, {loop.hashed});
  const usage_keys exec = executor_key(c, acct.auth(), json::array{g});
  httplib::Headers auth = exec.auth();
  auth.emplace("Idempotency-Key", "slow-run");
  const auto started = steady_clock::now();
  std::thread first([&] {
    http_client own("127.0.0.1", srv.port());
    (void)run(own, auth, by_cid(loop.cid));
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  // The second request waits 60 s for the first one's answer: a client of its own, patient enough.
  httplib::Client second("127.0.0.1", srv.port());
  second.set_read_timeout(120, 0);
  const httplib::Result busy =
      second.Post("/core/v1/run_action", auth, json::serialize(by_cid(loop.cid)), "application/json");
  const auto waited = steady_clock::now() - started;
  first.join();  // its client gave up after 30 s; the run goes on in the server
  REQUIRE(busy);
  CHECK(busy->status == 409);
  const json::value body = json::parse(busy->body);
  CHECK(body.at("error").at("code") == "conflict");
  CHECK(body.at("error").at("message") ==
        "a request with Idempotency-Key slow-run is still in progress; retry it later");
  REQUIRE(busy->has_header("Retry-After"));
  const long retry_after = std::stol(busy->get_header_value("Retry-After"));
  const long lease_left = std::chrono::duration_cast<seconds>(budget(seconds(70)) - waited).count();
  CHECK(retry_after >= 1);
  CHECK(retry_after <= lease_left + 1);
  CHECK(retry_after >= lease_left - 5);
  // The server is killed with the first run in progress: nothing is charged.
  REQUIRE(::kill(srv.pid(), SIGKILL) == 0);
  (void)srv.stop();
}

}  // namespace enact::itest
