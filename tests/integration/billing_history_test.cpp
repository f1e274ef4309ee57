// SPDX-License-Identifier: Apache-2.0
// Credits in the metering store, end to end (docs/architecture.md §4 "Request path of run
// action"): runs and relayed writes charged there, the balance read from there, the usage and
// payment histories (GET /billing/usage, /billing/payments) paged like every list, and runs that
// cannot pay refused before they run.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "run_test.hpp"
#include "server_process.hpp"
#include "steps.hpp"

namespace enact::itest {
namespace {

/// One page of a billing history.
json::object history(http_client& c, const httplib::Headers& auth, const std::string& which, uint64_t number,
                     uint64_t size) {
  const response r = c.get(
      "/billing/" + which + "?page_number=" + std::to_string(number) + "&page_size=" + std::to_string(size), auth);
  ITEST_REQUIRE_STATUS(r, 200);
  return r.body.as_object();
}

TEST_CASE("runs and write surcharges are charged in the metering store and listed in the usage history") {
  server_process srv({"--dev", "--write-surcharge", "2", "--run-price", "3"});
  auto c = srv.client();
  const account_keys acct = create_account(c, "metered");
  // Unpaid: a write and a run are refused with 402, and nothing is charged or listed.
  check_error_shape(c.post("/add_group", json::object{{"name", "g"}}, acct.auth()), 402, "insufficient_credits");
  CHECK(history(c, acct.auth(), "usage", 1, 20).at("total").to_number<uint64_t>() == 0);

  CHECK(buy_credits(c, acct.auth(), 500) == 500);
  const stored_action a = upload(c, acct.auth(), kGoodCode);
  const uint64_t gid = add_group(c, acct.auth(), "g", {}, {a.hashed});       // 2 credits
  const usage_keys runner = executor_key(c, acct.auth(), json::array{gid});  // 2 credits
  std::vector<std::string> run_ids;
  for (int i = 0; i < 3; ++i) {
    const response r = c.post("/run_action", by_cid(a.cid, json::object{{"x", i}}), runner.auth());
    ITEST_REQUIRE_STATUS(r, 200);
    CHECK(u_of(r.body, "charged_credits") == 3);
    run_ids.push_back(r.header("X-Request-Id"));
  }
  CHECK(balance_of(c, acct.auth()) == 500 - 2 - 2 - 3 * 3);

  const json::object first = history(c, acct.auth(), "usage", 1, 2);
  CHECK(first.at("total").to_number<uint64_t>() == 5);
  CHECK(first.at("page_number").to_number<uint64_t>() == 1);
  CHECK(first.at("page_size").to_number<uint64_t>() == 2);
  const json::array& items = first.at("items").as_array();
  REQUIRE(items.size() == 2);
  // Newest first: the last run, paid by the usage key.
  CHECK(s_of(items[0], "run_id") == run_ids[2]);
  CHECK(s_of(items[0], "key_hash") == runner.hash);
  CHECK(u_of(items[0], "charged_credits") == 3);
  CHECK(u_of(items[0], "charged_at") > 0);
  const json::object third = history(c, acct.auth(), "usage", 3, 2);
  const json::array& last = third.at("items").as_array();
  REQUIRE(last.size() == 1);
  // The oldest: the group's surcharge, paid by the account key, named after its request.
  CHECK(s_of(last[0], "run_id").starts_with("write "));
  CHECK(s_of(last[0], "key_hash") == acct.api_key_hash);
  CHECK(u_of(last[0], "charged_credits") == 2);

  // The usage key reads its account's history too; another account sees nothing of it.
  CHECK(history(c, runner.auth(), "usage", 1, 20).at("total").to_number<uint64_t>() == 5);
  const account_keys other = create_account(c, "other");
  CHECK(history(c, other.auth(), "usage", 1, 20).at("total").to_number<uint64_t>() == 0);
  CHECK(history(c, other.auth(), "payments", 1, 20).at("total").to_number<uint64_t>() == 0);
  // Pages as every list: out of range is invalid_request, unknown parameters too.
  check_error_shape(c.get("/billing/usage?page_size=101", acct.auth()), 400, "invalid_request");
  check_error_shape(c.get("/billing/payments?page_number=0", acct.auth()), 400, "invalid_request");
  check_error_shape(c.get("/billing/usage?limit=5", acct.auth()), 400, "invalid_request");
  check_error_shape(c.get("/billing/usage"), 401, "unauthenticated");
  CHECK(srv.stop().clean());
}

TEST_CASE("the payment history lists each intent once, credited or open; a confirmed intent credits once") {
  server_process srv({"--dev"});
  auto c = srv.client();
  const account_keys acct = create_account(c, "payer");
  CHECK(buy_credits(c, acct.auth(), 500) == 500);
  const response open = c.post("/billing/create_payment_intent", json::object{{"amount_cents", 700}}, acct.auth());
  ITEST_REQUIRE_STATUS(open, 200);
  const json::object page = history(c, acct.auth(), "payments", 1, 20);
  CHECK(page.at("total").to_number<uint64_t>() == 2);
  const json::array& items = page.at("items").as_array();
  REQUIRE(items.size() == 2);
  CHECK(s_of(items[0], "payment_intent_id") == s_of(open.body, "payment_intent_id"));
  CHECK(u_of(items[0], "amount_cents") == 700);
  CHECK(s_of(items[0], "provider") == "dev");
  CHECK_FALSE(items[0].at("credited").as_bool());
  CHECK(u_of(items[0], "credited_at") == 0);
  CHECK(items[1].at("credited").as_bool());
  CHECK(u_of(items[1], "credited_at") >= u_of(items[1], "created_at"));
  // A replayed confirmation credits nothing more.
  const std::string id = s_of(items[1], "payment_intent_id");
  check_error_shape(c.post("/billing/confirm_payment", json::object{{"payment_intent_id", id}}, acct.auth()), 409,
                    "conflict");
  CHECK(balance_of(c, acct.auth()) == 500);
  CHECK(srv.stop().clean());
}

TEST_CASE("balances survive a restart in the metering store of the data directory") {
  std::string key;
  temp_dir data;
  {
    server_process srv({"--dev"}, data.path());
    auto c = srv.client();
    const account_keys acct = create_account(c, "durable");
    CHECK(buy_credits(c, acct.auth(), 600) == 600);
    CHECK(srv.stop().clean());
    key = acct.api_key;
  }
  CHECK(std::filesystem::exists(data.path() + "/metering.sqlite"));
  server_process again({"--dev"}, data.path());
  auto c = again.client();
  CHECK(balance_of(c, api_key(key)) == 600);
  CHECK(again.stop().clean());
}

}  // namespace
}  // namespace enact::itest
