// SPDX-License-Identifier: Apache-2.0
// A killed instance's held credits on a metering store servers share (PostgreSQL) come back once
// the run's budget has passed, not 15 minutes later (core/credits.hpp run_budget: the run's wall
// time, the wait for a sandbox worker, the kill grace and a 30 s margin): another instance cannot
// know the run died, so the hold stands for as long as the run might still be running, and no
// longer.
#include <doctest/doctest.h>
#include <signal.h>

#include <chrono>
#include <string>
#include <thread>

#include "postgres_fixture.hpp"
#include "run_test.hpp"
#include "steps.hpp"

namespace enact::itest {

using std::chrono::seconds;
using std::chrono::steady_clock;

TEST_CASE("a killed instance's held credits on PostgreSQL come back once the run's budget has passed") {
  auto& pg = triggers::test::shared_postgres();
  const std::string url = pg.create_database();
  // One run costs the whole balance, so a hold left behind refuses every other run with 402.
  // The runs of one account overlap on purpose: no per-account share (docs/protocol.md §6).
  const std::vector<std::string> flags{"--dev", "--run-timeout-ms",          "1000", "--run-price",
                                       "500",   "--sandbox-workers",         "1",    "--metering-store",
                                       url,     "--account-concurrent-runs", "0"};
  temp_dir data;
  const killed_mid_run k = kill_mid_run(flags, data.path());
  server_process again(flags, data.path());
  http_client c = again.client();
  CHECK(balance_of(c, k.account.auth()) == 500);  // never charged: the run did not finish
  // Held: the next run is refused until the dead run's hold expires.
  check_error_shape(run(c, k.executor.auth(), by_cid(k.good_cid, json::object{{"x", 1}})), 402, "insufficient_credits");
  const auto expiry = run_budget_for(seconds(1));
  response r = run(c, k.executor.auth(), by_cid(k.good_cid, json::object{{"x", 1}}));
  while (r.status == 402 && steady_clock::now() - k.held_at < expiry + seconds(15)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    r = run(c, k.executor.auth(), by_cid(k.good_cid, json::object{{"x", 1}}));
  }
  ITEST_REQUIRE_STATUS(r, 200);
  // Not before the budget (the run might still have been running), and within it plus slack.
  CHECK(steady_clock::now() - k.held_at >= expiry - seconds(1));
  CHECK(balance_of(c, k.account.auth()) == 0);
}

}  // namespace enact::itest
