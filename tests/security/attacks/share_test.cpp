// SPDX-License-Identifier: Apache-2.0
// Attacks on the sandbox pool every account shares (docs/protocol.md §6 "Fair share";
// docs/security.md threat model): one account, paying one credit a run, starts as many endless
// loops as the pool has workers, so every other account's runs wait and fail with 503 while they
// last; or keeps the pool busy minute after minute. Against a real enact-server on loopback with
// a pool of two workers:
//   1. Two endless loops at once: the second is refused (429, Retry-After) and another account's
//      run is answered within a second while the first loops.
//   2. Loops back to back past the account's minute of wall time: refused with 429 and a
//      Retry-After until the minute refills, while another account still runs.
#include <doctest/doctest.h>

#include <boost/json.hpp>

#include <chrono>
#include <future>
#include <string>
#include <thread>

#include "steps.hpp"

namespace enact::itest {
namespace {

using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

constexpr std::string_view kLoop = "for (;;) {}";
constexpr std::string_view kQuick = "Enact.setResponse(6 * 7);";

/// An account with credits and a group that lets its key run `codes`.
account_keys runner(http_client& c, const std::string& name, std::initializer_list<std::string_view> codes) {
  const account_keys a = create_account(c, name);
  buy_credits(c, a.auth(), 500);
  json::array hashes;
  for (const auto code : codes)
    hashes.emplace_back(hashed_cid_hex(cid_of_code(code)));
  ITEST_REQUIRE_STATUS(
      c.post("/add_group", json::object{{"name", "runs"}, {"cid_hashes_permitted", std::move(hashes)}}, a.auth()), 200);
  return a;
}

response run(int port, const account_keys& a, std::string_view code) {
  http_client c("127.0.0.1", port);
  return c.post("/run_action", json::object{{"code", code}}, a.auth());
}

}  // namespace

TEST_CASE("one account's endless loops leave the rest of the pool to everyone else") {
  server_process srv({"--dev", "--sandbox-workers", "2", "--run-timeout-ms", "4000", "--key-rate", "0"});
  http_client c = srv.client();
  const account_keys attacker = runner(c, "looper", {kLoop});
  const account_keys victim = runner(c, "victim", {kQuick});

  // As many loops as the pool has workers, at once.
  auto first = std::async(std::launch::async, [&] { return run(srv.port(), attacker, kLoop); });
  std::this_thread::sleep_for(300ms);  // the first has its worker
  auto second_run = std::async(std::launch::async, [&] { return run(srv.port(), attacker, kLoop); });
  std::this_thread::sleep_for(300ms);

  // While they loop, the victim's runs are answered within a second each.
  for (int i = 0; i < 3; ++i) {
    const auto start = steady::now();
    const response r = run(srv.port(), victim, kQuick);
    ITEST_CHECK_STATUS(r, 200);
    CHECK(steady::now() - start < 1s);
  }
  // The second loop was refused at once: the account has half the pool in flight already.
  const response second = second_run.get();
  ITEST_CHECK_STATUS(second, 429);
  CHECK(second.error_code() == "rate_limited");
  CHECK(second.error_message().find("runs in flight") != std::string::npos);
  CHECK(second.header("Retry-After") == "1");
  const response looped = first.get();
  ITEST_CHECK_STATUS(looped, 422);  // its wall time ran out, and it was charged
  // Once the loop ended the attacker runs again: the share counts runs in flight only.
  ITEST_CHECK_STATUS(
      c.post("/add_group",
             json::object{{"name", "quick"},
                          {"cid_hashes_permitted", json::array{json::string(hashed_cid_hex(cid_of_code(kQuick)))}}},
             attacker.auth()),
      200);
  ITEST_CHECK_STATUS(run(srv.port(), attacker, kQuick), 200);
  CHECK(srv.stop().clean());
}

TEST_CASE("an account that used its minute of run time waits for it to refill") {
  // One second of wall time per minute, runs of at most 1.5 s.
  server_process srv({"--dev", "--sandbox-workers", "2", "--run-timeout-ms", "1500", "--key-rate", "0",
                      "--account-run-seconds-per-minute", "1"});
  http_client c = srv.client();
  const account_keys attacker = runner(c, "looper", {kLoop});
  const account_keys victim = runner(c, "victim", {kQuick});
  ITEST_CHECK_STATUS(run(srv.port(), attacker, kLoop), 422);  // 1.5 s used: past its minute
  const response again = run(srv.port(), attacker, kLoop);
  ITEST_CHECK_STATUS(again, 429);
  CHECK(again.error_message().find("run wall time") != std::string::npos);
  // The 0.5 s of debt and the next millisecond refill at 1 s per minute: about 31 s.
  const int wait = std::stoi(again.header("Retry-After"));
  CHECK(wait >= 25);
  CHECK(wait <= 35);
  ITEST_CHECK_STATUS(run(srv.port(), victim, kQuick), 200);
  CHECK(srv.stop().clean());
}

TEST_CASE("the share can be turned off, and is refused when out of range") {
  server_process srv({"--dev", "--sandbox-workers", "2", "--run-timeout-ms", "2000", "--key-rate", "0",
                      "--account-concurrent-runs", "0"});
  http_client c = srv.client();
  const account_keys a = runner(c, "looper", {kLoop});
  auto first = std::async(std::launch::async, [&] { return run(srv.port(), a, kLoop); });
  auto second = std::async(std::launch::async, [&] { return run(srv.port(), a, kLoop); });
  ITEST_CHECK_STATUS(first.get(), 422);
  ITEST_CHECK_STATUS(second.get(), 422);
  CHECK(srv.stop().clean());
  const finished_run bad =
      run_to_exit({"--listen", "127.0.0.1:0", "--dev", "--account-run-seconds-per-minute", "100000"});
  CHECK(bad.status.code == 2);
  CHECK(bad.stderr_text.find("account-run-seconds-per-minute") != std::string::npos);
}

}  // namespace enact::itest
