// SPDX-License-Identifier: Apache-2.0
// What a client can make the server keep with Idempotency-Keys (docs/protocol.md §0
// "Idempotency"). Attack on the metering store's size: requests without a valid credential,
// with a malformed key or body, or answered with no effect (402) keep nothing, however many keys
// they carry; an authenticated request answered with an effect or a refusal keeps one row for its
// own account, and the same request again keeps no second one. The rows are counted in the
// server's metering.sqlite while it runs.
#include <doctest/doctest.h>
#include <sqlite3.h>

#include <string>

#include "run_test.hpp"
#include "server_support.hpp"
#include "steps.hpp"

namespace enact::itest {
namespace {

/// Rows of metering_idempotency in the server's store: all of them, or the distinct accounts.
int64_t count(const std::string& data_dir, const char* what) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open_v2((data_dir + "/metering.sqlite").c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
  sqlite3_busy_timeout(db, 5000);
  sqlite3_stmt* st = nullptr;
  const std::string sql = std::string("SELECT ") + what + " FROM metering_idempotency";
  REQUIRE(sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) == SQLITE_OK);
  REQUIRE(sqlite3_step(st) == SQLITE_ROW);
  const int64_t n = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(db);
  return n;
}

httplib::Headers with_key(httplib::Headers h, const std::string& key) {
  h.emplace("Idempotency-Key", key);
  return h;
}

TEST_CASE("Idempotency-Key: only an authenticated request answered with an effect or a refusal is kept") {
  temp_dir data;
  server_process srv({"--dev", "--key-rate", "0"}, data.path());
  auto c = srv.client();
  // An account without credits: its runs answer 402 and keep nothing.
  const account_keys acct = create_account(c, "mallory");
  const stored_action action = upload(c, acct.auth(), "Enact.setResponse(1);\n");
  const uint64_t gid = add_group(c, acct.auth(), "g", {}, {action.hashed});
  const usage_keys runner = executor_key(c, acct.auth(), json::array{gid});
  const usage_keys powerless = create_usage_key(c, acct.auth());
  const auto rows = [&] {
    return count(data.path(), "COUNT(*)");
  };
  REQUIRE(rows() == 0);

  for (int i = 0; i < 20; ++i) {
    const std::string k = "anon-" + std::to_string(i);
    // No credential, and a credential that is no key.
    CHECK(run(c, with_key({}, k), by_cid(action.cid)).status == 401);
    CHECK(run(c, with_key(api_key("not-a-key-" + std::to_string(i)), k), by_cid(action.cid)).status == 401);
    // A body that is not JSON, or misses what the route requires.
    CHECK(c.post_raw("/run_action", "{not json", with_key(runner.auth(), k)).status == 400);
    // A key the server refuses.
    CHECK(run(c, with_key(runner.auth(), k + std::string(256, 'k')), by_cid(action.cid)).status == 400);
    // Nothing to pay with: 402, no effect, not kept (a retry runs).
    CHECK(run(c, with_key(runner.auth(), k), by_cid(action.cid)).status == 402);
    CHECK(run(c, with_key(runner.auth(), k), by_cid(action.cid)).status == 402);
  }
  CHECK(rows() == 0);

  // A refusal is an answer: a 403 (the key may execute nowhere) or the handler's 400 (a body
  // naming no action) keeps one row per key, for this account alone, and the same request again
  // is replayed without a second row.
  for (int i = 0; i < 5; ++i) {
    const auto auth = with_key(powerless.auth(), "refused-" + std::to_string(i));
    CHECK(run(c, auth, by_cid(action.cid)).status == 403);
    const response again = run(c, auth, by_cid(action.cid));
    CHECK(again.status == 403);
    CHECK(again.header("Idempotent-Replayed") == "true");
    const auto nameless = with_key(runner.auth(), "nameless-" + std::to_string(i));
    CHECK(run(c, nameless, json::object{{"params", json::object{}}}).status == 400);
    CHECK(run(c, nameless, json::object{{"params", json::object{}}}).header("Idempotent-Replayed") == "true");
  }
  CHECK(rows() == 10);
  CHECK(count(data.path(), "COUNT(DISTINCT account)") == 1);
  CHECK(srv.stop().clean());
}

TEST_CASE("Idempotency-Key: a payment intent created again under its key is the first intent, not a second") {
  // The request that created the intent lost its kept answer (its server was killed after the
  // provider answered, or its claim's lease ran out during a slow provider call and a retry took
  // it over): the retry runs again. The provider must hand back the intent the first run created,
  // so the account never holds two intents for one purchase; another account's same key is its own.
  temp_dir data;
  server_process srv({"--dev", "--key-rate", "0"}, data.path());
  auto c = srv.client();
  const account_keys alice = create_account(c, "alice");
  const account_keys mallory = create_account(c, "mallory");
  const json::object body{{"amount_cents", 700}};
  const response first = c.post("/billing/create_payment_intent", body, with_key(alice.auth(), "buy-once"));
  ITEST_REQUIRE_STATUS(first, 200);
  {
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open((data.path() + "/metering.sqlite").c_str(), &db) == SQLITE_OK);
    sqlite3_busy_timeout(db, 5000);
    REQUIRE(sqlite3_exec(db, "DELETE FROM metering_idempotency", nullptr, nullptr, nullptr) == SQLITE_OK);
    CHECK(sqlite3_changes(db) == 1);
    sqlite3_close(db);
  }
  const response again = c.post("/billing/create_payment_intent", body, with_key(alice.auth(), "buy-once"));
  ITEST_REQUIRE_STATUS(again, 200);
  CHECK(again.header("Idempotent-Replayed").empty());  // run again, not replayed
  CHECK(s_of(again.body, "payment_intent_id") == s_of(first.body, "payment_intent_id"));
  const response pays = c.get("/billing/payments", alice.auth());
  ITEST_REQUIRE_STATUS(pays, 200);
  CHECK(u_of(pays.body, "total") == 1);
  // Mallory's request with Alice's key and body: an intent of Mallory's own.
  const response other = c.post("/billing/create_payment_intent", body, with_key(mallory.auth(), "buy-once"));
  ITEST_REQUIRE_STATUS(other, 200);
  CHECK(s_of(other.body, "payment_intent_id") != s_of(first.body, "payment_intent_id"));
  CHECK(srv.stop().clean());
}

}  // namespace
}  // namespace enact::itest
