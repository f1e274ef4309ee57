// SPDX-License-Identifier: Apache-2.0
// Idempotency-Key end to end (docs/protocol.md §0 "Idempotency"): on run_action and the billing
// writes, the same key and request within 24 hours answers the first answer — status and body
// byte for byte, marked Idempotent-Replayed — without a second run or charge, also after a
// restart and when the requests race; another request under the key is 422. Attacks: another
// account sending the same key and body gets its own run, never the first account's answer; a
// second usage key of the same account cannot read it either.
#include <doctest/doctest.h>

#include <string>
#include <thread>
#include <vector>

#include "run_test.hpp"
#include "server_support.hpp"
#include "steps.hpp"

namespace enact::itest {
namespace {

/// Code whose answer differs on every run: equal answers are one run answered twice.
constexpr std::string_view kRandomCode = "Enact.setResponse({n: Math.random(), x: params.x});\n";

httplib::Headers with_key(httplib::Headers h, const std::string& key) {
  h.emplace("Idempotency-Key", key);
  return h;
}

uint64_t charges_of(http_client& c, const httplib::Headers& auth) {
  const response r = c.get("/billing/usage?page_size=1", auth);
  ITEST_REQUIRE_STATUS(r, 200);
  return u_of(r.body, "total");
}

struct runner {
  account_keys acct;
  stored_action action;
  usage_keys key;
};

runner set_up(http_client& c, const std::string& name, uint64_t credits) {
  runner r{create_account(c, name), {}, {}};
  if (credits > 0)
    CHECK(buy_credits(c, r.acct.auth(), credits) == credits);
  r.action = upload(c, r.acct.auth(), kRandomCode);
  const uint64_t gid = add_group(c, r.acct.auth(), "g", {}, {r.action.hashed});
  r.key = executor_key(c, r.acct.auth(), json::array{gid});
  return r;
}

TEST_CASE("Idempotency-Key on run_action: one run and one charge per key; another request is 422") {
  temp_dir data;
  std::string first_text;
  runner alice;
  {
    server_process srv({"--dev"}, data.path());
    auto c = srv.client();
    alice = set_up(c, "alice", 500);
    const auto auth = with_key(alice.key.auth(), "run-1");
    const response first = run(c, auth, by_cid(alice.action.cid, json::object{{"x", 1}}));
    ITEST_REQUIRE_STATUS(first, 200);
    CHECK_FALSE(first.has_header("Idempotent-Replayed"));
    first_text = first.text;
    const response again = run(c, auth, by_cid(alice.action.cid, json::object{{"x", 1}}));
    ITEST_REQUIRE_STATUS(again, 200);
    CHECK(again.text == first_text);  // byte for byte: not a second run (its random n would differ)
    CHECK(again.header("Idempotent-Replayed") == "true");
    CHECK(again.header("X-Request-Id") != first.header("X-Request-Id"));
    CHECK(balance_of(c, alice.acct.auth()) == 499);
    CHECK(charges_of(c, alice.acct.auth()) == 1);

    // Another request under the key: other params, another route.
    const response other = run(c, auth, by_cid(alice.action.cid, json::object{{"x", 2}}));
    CHECK(other.status == 422);
    CHECK(other.error_code() == "invalid_request");
    CHECK(other.error_message().find("Idempotency-Key") != std::string::npos);
    const response elsewhere = c.post("/billing/create_payment_intent", json::object{{"amount_cents", 500}},
                                      with_key(alice.acct.auth(), "run-1"));
    CHECK(elsewhere.status == 422);
    // Attack: a second usage key of the same account, same key and body, reads nothing of it.
    const usage_keys second = executor_key(c, alice.acct.auth(), json::array{1});
    const response sibling = run(c, with_key(second.auth(), "run-1"), by_cid(alice.action.cid, json::object{{"x", 1}}));
    CHECK(sibling.status == 422);
    CHECK(sibling.text.find("\"response\"") == std::string::npos);

    // Attack: another account with the same key and the same body gets its own run.
    runner bob = set_up(c, "bob", 500);
    const response bobs = run(c, with_key(bob.key.auth(), "run-1"), by_cid(bob.action.cid, json::object{{"x", 1}}));
    ITEST_REQUIRE_STATUS(bobs, 200);
    CHECK_FALSE(bobs.has_header("Idempotent-Replayed"));
    CHECK(bobs.text != first_text);
    CHECK(balance_of(c, bob.acct.auth()) == 499);
    // A malformed key is refused before anything runs.
    check_error_shape(run(c, with_key(alice.key.auth(), std::string(256, 'k')), by_cid(alice.action.cid)), 400,
                      "invalid_request");
    check_error_shape(run(c, with_key(alice.key.auth(), "with space"), by_cid(alice.action.cid)), 400,
                      "invalid_request");
    CHECK(balance_of(c, alice.acct.auth()) == 499);
    CHECK(srv.stop().clean());
  }
  // The kept answer survives a restart (the metering store in the data directory).
  server_process again({"--dev"}, data.path());
  auto c = again.client();
  const response replayed =
      run(c, with_key(alice.key.auth(), "run-1"), by_cid(alice.action.cid, json::object{{"x", 1}}));
  ITEST_REQUIRE_STATUS(replayed, 200);
  CHECK(replayed.text == first_text);
  CHECK(balance_of(c, alice.acct.auth()) == 499);
}

TEST_CASE("Idempotency-Key: racing requests with one key run once; failures are kept, refusals are not") {
  server_process srv({"--dev", "--key-rate", "0"});
  auto c = srv.client();
  runner alice = set_up(c, "alice", 500);
  const auto auth = with_key(alice.key.auth(), "race");
  std::vector<std::string> answers(8);
  std::vector<int> statuses(8);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < answers.size(); ++i)
    threads.emplace_back([&, i] {
      http_client own("127.0.0.1", srv.port());
      const response r = run(own, auth, by_cid(alice.action.cid, json::object{{"x", 7}}));
      statuses[i] = r.status;
      answers[i] = r.text;
    });
  for (auto& t : threads)
    t.join();
  for (size_t i = 0; i < answers.size(); ++i) {
    CHECK(statuses[i] == 200);
    CHECK(answers[i] == answers[0]);
  }
  CHECK(balance_of(c, alice.acct.auth()) == 499);
  CHECK(charges_of(c, alice.acct.auth()) == 1);

  // An action that fails ran: its 422 is kept and answered again, byte for byte.
  constexpr std::string_view kThrows = "throw new Error('boom ' + Math.random());\n";
  const stored_action thrower = upload(c, alice.acct.auth(), kThrows);
  (void)add_group(c, alice.acct.auth(), "throws", {}, {thrower.hashed});
  const auto fail_auth = with_key(alice.acct.auth(), "throws");
  const response failed = run(c, fail_auth, by_cid(thrower.cid));
  CHECK(failed.status == 422);
  CHECK(failed.error_code() == "action_failed");
  const response failed_again = run(c, fail_auth, by_cid(thrower.cid));
  CHECK(failed_again.status == 422);
  CHECK(failed_again.text == failed.text);
  CHECK(failed_again.header("Idempotent-Replayed") == "true");

  // A 402 had no effect: not kept, so the same request runs once credits are bought.
  const runner poor = set_up(c, "poor", 0);
  const auto poor_auth = with_key(poor.acct.auth(), "when-paid");
  check_error_shape(run(c, poor_auth, by_cid(poor.action.cid)), 402, "insufficient_credits");
  CHECK(buy_credits(c, poor.acct.auth(), 500) == 500);
  const response paid = run(c, poor_auth, by_cid(poor.action.cid));
  ITEST_REQUIRE_STATUS(paid, 200);
  CHECK_FALSE(paid.has_header("Idempotent-Replayed"));
  CHECK(balance_of(c, poor.acct.auth()) == 499);
}

TEST_CASE("Idempotency-Key on the billing writes: one intent and one confirmation per key") {
  server_process srv({"--dev"});
  auto c = srv.client();
  const account_keys alice = create_account(c, "alice");
  const auto create_auth = with_key(alice.auth(), "buy-1");
  const response created = c.post("/billing/create_payment_intent", json::object{{"amount_cents", 600}}, create_auth);
  ITEST_REQUIRE_STATUS(created, 200);
  const response created_again =
      c.post("/billing/create_payment_intent", json::object{{"amount_cents", 600}}, create_auth);
  ITEST_REQUIRE_STATUS(created_again, 200);
  CHECK(created_again.text == created.text);
  const response pays = c.get("/billing/payments", alice.auth());
  ITEST_REQUIRE_STATUS(pays, 200);
  CHECK(u_of(pays.body, "total") == 1);  // one intent, not two

  const json::object confirm{{"payment_intent_id", s_of(created.body, "payment_intent_id")}};
  const auto confirm_auth = with_key(alice.auth(), "confirm-1");
  const response confirmed = c.post("/billing/confirm_payment", confirm, confirm_auth);
  ITEST_REQUIRE_STATUS(confirmed, 200);
  // The retry of a confirmation whose answer was lost: the same 200, not 409.
  const response retried = c.post("/billing/confirm_payment", confirm, confirm_auth);
  ITEST_REQUIRE_STATUS(retried, 200);
  CHECK(retried.text == confirmed.text);
  CHECK(balance_of(c, alice.auth()) == 600);
  // Without the key a second confirmation is still 409, and credits nothing.
  check_error_shape(c.post("/billing/confirm_payment", confirm, alice.auth()), 409, "conflict");
  // Attack: another account sending Alice's keys reads none of her answers.
  const account_keys mallory = create_account(c, "mallory");
  const response stolen = c.post("/billing/confirm_payment", confirm, with_key(mallory.auth(), "confirm-1"));
  check_error_shape(stolen, 404, "not_found");
  CHECK(stolen.text.find("balance_credits") == std::string::npos);
  CHECK(balance_of(c, mallory.auth()) == 0);
  CHECK(balance_of(c, alice.auth()) == 600);
}

}  // namespace
}  // namespace enact::itest
