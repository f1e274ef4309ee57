// SPDX-License-Identifier: Apache-2.0
// Kept Idempotency-Key answers at rest (docs/protocol.md §0 "Idempotency", docs/architecture.md
// "Idempotency-Key answers"). The first answer under a key is kept in the metering store to be
// replayed byte for byte, and it carries secrets: a payment intent's client_secret, whatever an
// action returned. Attacks, by someone who can read or write the metering database (its file, a
// backup of it):
// - read it: after create_payment_intent and a run_action whose action returns a secret, both
//   under a key, neither the client_secret nor the action's secret is in metering.sqlite or its
//   WAL, while replays still answer byte for byte (also after a restart);
// - swap it: a victim's kept answer copied into the attacker's own row (another account's, or
//   another request's of the same account) does not open there: the replay is 500 internal, the
//   request is not run again, the log names the failure without the body, and the victim's own
//   replay still works; a tampered answer is refused the same way.
// A row kept before answers were sealed (plain JSON) still replays as it is.
#include <doctest/doctest.h>
#include <sqlite3.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "run_test.hpp"
#include "steps.hpp"

namespace enact::itest {
namespace {

/// An action whose answer holds a secret the request does not carry: "idem-secret-" and random
/// characters, new on every run.
constexpr std::string_view kSecretCode =
    "Enact.setResponse({secret: 'idem-secret-' + Math.random().toString(36).slice(2) +\n"
    "                   Math.random().toString(36).slice(2), x: params.x});\n";

httplib::Headers with_key(httplib::Headers h, const std::string& key) {
  h.emplace("Idempotency-Key", key);
  return h;
}

/// The secret kSecretCode put in an answer's text.
std::string secret_of(const response& r) {
  const size_t at = r.text.find("idem-secret-");
  REQUIRE_MESSAGE(at != std::string::npos, r.describe());
  size_t end = at + 12;
  while (end < r.text.size() && std::isalnum(static_cast<unsigned char>(r.text[end])) != 0)
    ++end;
  REQUIRE(end - at > 20);
  return r.text.substr(at, end - at);
}

/// The bytes of the server's metering database as they are on disk: the file, its WAL and the
/// WAL's index.
std::string metering_files(const std::string& data_dir) {
  std::string out;
  for (const char* suffix : {"", "-wal", "-shm"}) {
    const std::string path = data_dir + "/metering.sqlite" + suffix;
    if (!std::filesystem::exists(path))
      continue;
    std::ifstream in(path, std::ios::binary);
    out.append(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  return out;
}

/// The server's metering.sqlite opened beside it, as an attacker with write access would.
class metering_db {
 public:
  explicit metering_db(const std::string& data_dir) {
    REQUIRE(sqlite3_open_v2((data_dir + "/metering.sqlite").c_str(), &db_, SQLITE_OPEN_READWRITE, nullptr) ==
            SQLITE_OK);
    sqlite3_busy_timeout(db_, 10000);
  }
  ~metering_db() { sqlite3_close(db_); }
  metering_db(const metering_db&) = delete;
  metering_db& operator=(const metering_db&) = delete;

  /// The first column of the first row of `sql` as text ("" for none or NULL).
  std::string text(const std::string& sql) {
    sqlite3_stmt* st = nullptr;
    REQUIRE_MESSAGE(sqlite3_prepare_v2(db_, sql.c_str(), -1, &st, nullptr) == SQLITE_OK, sqlite3_errmsg(db_));
    std::string out;
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
      out = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    return out;
  }
  /// Runs a write; the number of rows it changed.
  int write(const std::string& sql) {
    char* err = nullptr;
    const int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err);
    const std::string why = err != nullptr ? err : "";
    sqlite3_free(err);
    REQUIRE_MESSAGE(rc == SQLITE_OK, why);
    return sqlite3_changes(db_);
  }
  /// The kept body of the row of Idempotency-Key `key` (the tests use each key once).
  std::string body(const std::string& key) {
    return text("SELECT body FROM metering_idempotency WHERE idem_key = '" + key + "'");
  }

 private:
  sqlite3* db_ = nullptr;
};

struct runner {
  account_keys acct;
  stored_action action;
  usage_keys key;
};

runner set_up(http_client& c, const std::string& name) {
  runner r{create_account(c, name), {}, {}};
  CHECK(buy_credits(c, r.acct.auth(), 500) == 500);
  r.action = upload(c, r.acct.auth(), kSecretCode);
  const uint64_t gid = add_group(c, r.acct.auth(), "g", {}, {r.action.hashed});
  r.key = executor_key(c, r.acct.auth(), json::array{gid});
  return r;
}

/// A replay refused because its kept answer does not open: 500 internal, nothing of `secret` in
/// the answer or in the request's log lines, and a log line naming why.
void check_refused(const server_process& srv, const response& r, const std::string& secret) {
  CHECK_MESSAGE(r.status == 500, r.describe());
  CHECK(r.error_code() == "internal");
  CHECK(r.text.find(secret) == std::string::npos);
  CHECK(r.text.find("idem-secret-") == std::string::npos);
  const std::string id = r.header("X-Request-Id");
  REQUIRE_FALSE(id.empty());
  (void)srv.await_request_lines(id);
  bool named = false;
  for (const json::object& line : srv.log_lines()) {
    const auto* rid = line.if_contains("request_id");
    if (rid == nullptr || !rid->is_string() || rid->as_string() != id)
      continue;
    const std::string text = json::serialize(line);
    CHECK(text.find(secret) == std::string::npos);
    named = named || text.find("does not open") != std::string::npos;
  }
  CHECK(named);
}

TEST_CASE("kept answers are sealed at rest: no client_secret or action secret in the metering files") {
  temp_dir data;
  std::string intent_text, run_text, secret, client_secret;
  runner alice;
  {
    server_process srv({"--dev", "--key-rate", "0"}, data.path());
    auto c = srv.client();
    alice = set_up(c, "alice");
    const response intent = c.post("/billing/create_payment_intent", json::object{{"amount_cents", 700}},
                                   with_key(alice.acct.auth(), "intent-1"));
    ITEST_REQUIRE_STATUS(intent, 200);
    client_secret = s_of(intent.body, "client_secret");
    REQUIRE(client_secret.size() > 20);
    intent_text = intent.text;
    const response first =
        run(c, with_key(alice.key.auth(), "run-1"), by_cid(alice.action.cid, json::object{{"x", 1}}));
    ITEST_REQUIRE_STATUS(first, 200);
    secret = secret_of(first);
    run_text = first.text;

    // Replays answer the first answers byte for byte, from the sealed rows.
    const response intent_again = c.post("/billing/create_payment_intent", json::object{{"amount_cents", 700}},
                                         with_key(alice.acct.auth(), "intent-1"));
    ITEST_REQUIRE_STATUS(intent_again, 200);
    CHECK(intent_again.text == intent_text);
    CHECK(intent_again.header("Idempotent-Replayed") == "true");
    const response run_again =
        run(c, with_key(alice.key.auth(), "run-1"), by_cid(alice.action.cid, json::object{{"x", 1}}));
    ITEST_REQUIRE_STATUS(run_again, 200);
    CHECK(run_again.text == run_text);
    CHECK(run_again.header("Idempotent-Replayed") == "true");
    CHECK(balance_of(c, alice.acct.auth()) == 499);

    // The attack: read the database while the server runs (the file and its WAL).
    const std::string disk = metering_files(data.path());
    REQUIRE_FALSE(disk.empty());
    CHECK_MESSAGE(disk.find(client_secret) == std::string::npos, "the client_secret is readable at rest");
    CHECK_MESSAGE(disk.find(secret) == std::string::npos, "the action's answer is readable at rest");
    metering_db db(data.path());
    CHECK(db.body("intent-1").starts_with("sealed:v1:"));
    CHECK(db.body("run-1").starts_with("sealed:v1:"));
    CHECK(db.text("SELECT COUNT(*) FROM metering_idempotency WHERE body IS NOT NULL AND body NOT LIKE 'sealed:v1:%'") ==
          "0");
    CHECK(srv.stop().clean());
  }
  // After the server stopped (its WAL checkpointed into the file) the secrets are not there either.
  const std::string disk = metering_files(data.path());
  CHECK(disk.find(client_secret) == std::string::npos);
  CHECK(disk.find(secret) == std::string::npos);
  // A restarted server (the same TEE root) opens what the first one sealed.
  server_process again({"--dev", "--key-rate", "0"}, data.path());
  auto c = again.client();
  const response replayed =
      run(c, with_key(alice.key.auth(), "run-1"), by_cid(alice.action.cid, json::object{{"x", 1}}));
  ITEST_REQUIRE_STATUS(replayed, 200);
  CHECK(replayed.text == run_text);
  const response intent_replayed = c.post("/billing/create_payment_intent", json::object{{"amount_cents", 700}},
                                          with_key(alice.acct.auth(), "intent-1"));
  ITEST_REQUIRE_STATUS(intent_replayed, 200);
  CHECK(intent_replayed.text == intent_text);
  CHECK(balance_of(c, alice.acct.auth()) == 499);
  CHECK(again.stop().clean());
}

TEST_CASE("a kept answer copied into another row does not open there; the victim's own replay still works") {
  server_process srv({"--dev", "--key-rate", "0"});
  auto c = srv.client();
  runner alice = set_up(c, "alice");
  runner mallory = set_up(c, "mallory");
  const auto victim_request = by_cid(alice.action.cid, json::object{{"x", 1}});
  const response victim = run(c, with_key(alice.key.auth(), "victim-1"), victim_request);
  ITEST_REQUIRE_STATUS(victim, 200);
  const std::string victim_secret = secret_of(victim);
  const response own = run(c, with_key(mallory.key.auth(), "attacker-1"), by_cid(mallory.action.cid));
  ITEST_REQUIRE_STATUS(own, 200);
  // Another request of the victim's own account, and a payment intent of the attacker.
  const response other =
      run(c, with_key(alice.key.auth(), "victim-2"), by_cid(alice.action.cid, json::object{{"x", 2}}));
  ITEST_REQUIRE_STATUS(other, 200);
  const response intent = c.post("/billing/create_payment_intent", json::object{{"amount_cents", 600}},
                                 with_key(mallory.acct.auth(), "attacker-intent"));
  ITEST_REQUIRE_STATUS(intent, 200);
  REQUIRE(balance_of(c, alice.acct.auth()) == 498);
  REQUIRE(balance_of(c, mallory.acct.auth()) == 499);

  metering_db db(srv.data_dir());
  SUBCASE("into another account's row") {
    CHECK(db.write("UPDATE metering_idempotency SET body = (SELECT body FROM metering_idempotency WHERE idem_key = "
                   "'victim-1') WHERE idem_key = 'attacker-1'") == 1);
    for (int i = 0; i < 2; ++i)
      check_refused(srv, run(c, with_key(mallory.key.auth(), "attacker-1"), by_cid(mallory.action.cid)), victim_secret);
    // Into a row of another route (a payment intent's) as well.
    CHECK(db.write("UPDATE metering_idempotency SET body = (SELECT body FROM metering_idempotency WHERE idem_key = "
                   "'victim-1') WHERE idem_key = 'attacker-intent'") == 1);
    check_refused(srv,
                  c.post("/billing/create_payment_intent", json::object{{"amount_cents", 600}},
                         with_key(mallory.acct.auth(), "attacker-intent")),
                  victim_secret);
    // Not run again: nothing more charged.
    CHECK(balance_of(c, mallory.acct.auth()) == 499);
  }
  SUBCASE("into another request's row of the same account") {
    CHECK(db.write("UPDATE metering_idempotency SET body = (SELECT body FROM metering_idempotency WHERE idem_key = "
                   "'victim-1') WHERE idem_key = 'victim-2'") == 1);
    check_refused(srv, run(c, with_key(alice.key.auth(), "victim-2"), by_cid(alice.action.cid, json::object{{"x", 2}})),
                  victim_secret);
  }
  SUBCASE("tampered") {
    // One base64 symbol of the nonce changed.
    CHECK(db.write("UPDATE metering_idempotency SET body = substr(body, 1, 20) || (CASE substr(body, 21, 1) WHEN 'A' "
                   "THEN 'B' ELSE 'A' END) || substr(body, 22) WHERE idem_key = 'victim-2'") == 1);
    check_refused(srv, run(c, with_key(alice.key.auth(), "victim-2"), by_cid(alice.action.cid, json::object{{"x", 2}})),
                  victim_secret);
    CHECK(db.write("UPDATE metering_idempotency SET body = 'sealed:v1:not base64!' WHERE idem_key = 'attacker-1'") ==
          1);
    check_refused(srv, run(c, with_key(mallory.key.auth(), "attacker-1"), by_cid(mallory.action.cid)), victim_secret);
  }
  SUBCASE("a row kept before answers were sealed replays as it is") {
    CHECK(db.write("UPDATE metering_idempotency SET body = '{\"legacy\":1}' WHERE idem_key = 'attacker-1'") == 1);
    const response legacy = run(c, with_key(mallory.key.auth(), "attacker-1"), by_cid(mallory.action.cid));
    ITEST_REQUIRE_STATUS(legacy, 200);
    CHECK(legacy.text == "{\"legacy\":1}");
    CHECK(legacy.header("Idempotent-Replayed") == "true");
  }
  // The victim's own replay answers its first answer, byte for byte; nothing ran twice.
  const response mine = run(c, with_key(alice.key.auth(), "victim-1"), victim_request);
  ITEST_REQUIRE_STATUS(mine, 200);
  CHECK(mine.text == victim.text);
  CHECK(mine.header("Idempotent-Replayed") == "true");
  CHECK(balance_of(c, alice.acct.auth()) == 498);
  CHECK(balance_of(c, mallory.acct.auth()) == 499);
  CHECK(srv.stop().clean());
}

}  // namespace
}  // namespace enact::itest
