// SPDX-License-Identifier: Apache-2.0
// What a run leaves behind when its server is killed, and what a request finds while the same
// request still runs (docs/protocol.md §0 "Idempotency"): on the embedded SQLite metering store a
// killed server's holds on credits go with it, so its restart finds the credits free; and a request
// under an Idempotency-Key whose first request is still leased answers 409 conflict with
// Retry-After, the seconds until the lease ends.
#include <doctest/doctest.h>

#include <signal.h>

#include <chrono>
#include <thread>

#include "run_test.hpp"
#include "steps.hpp"

namespace enact::itest {

using std::chrono::seconds;
using std::chrono::steady_clock;

TEST_CASE("a killed server's held credits are free again when it restarts on its SQLite metering store") {
  // One run costs the whole balance, so a hold left behind would refuse every other run with 402.
  // On the embedded store a hold lives in the server's process (docs/architecture.md §4 "Holds
  // live in the process on SQLite"): the run it held for died with the server, and the hold with
  // it. (On a store servers share, it lasts the run's budget: billing.lease_postgres.)
  // No per-account share (docs/protocol.md §6 "Fair share"): the runs of one account overlap here on
  // purpose.
  const std::vector<std::string> flags{"--dev", "--run-timeout-ms",  "1000", "--run-price",
                                       "500",   "--sandbox-workers", "1",    "--account-concurrent-runs",
                                       "0"};
  temp_dir data;
  const killed_mid_run k = kill_mid_run(flags, data.path());
  server_process again(flags, data.path());
  http_client c = again.client();
  CHECK(balance_of(c, k.account.auth()) == 500);  // never charged: the run did not finish
  ITEST_REQUIRE_STATUS(run(c, k.executor.auth(), by_cid(k.good_cid, json::object{{"x", 1}})), 200);
  CHECK(balance_of(c, k.account.auth()) == 0);
}

TEST_CASE("Idempotency-Key: a request while the same one is still leased answers 409 with Retry-After") {
  // A wall time of 70 s leases a run's key for 106 s: past the 60 s a second request waits for the
  // first one's answer, so it answers 409, with the seconds left of the lease.
  server_process srv(
      {"--dev", "--run-timeout-ms", "70000", "--sandbox-workers", "1", "--account-concurrent-runs", "0"});
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
  const long lease_left = std::chrono::duration_cast<seconds>(run_budget_for(seconds(70)) - waited).count();
  CHECK(retry_after >= 1);
  CHECK(retry_after <= lease_left + 1);
  CHECK(retry_after >= lease_left - 5);
  // The server is killed with the first run in progress: nothing is charged.
  REQUIRE(::kill(srv.pid(), SIGKILL) == 0);
  (void)srv.stop();
}

}  // namespace enact::itest
