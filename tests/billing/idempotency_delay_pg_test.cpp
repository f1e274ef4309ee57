// SPDX-License-Identifier: Apache-2.0
// A request under an Idempotency-Key delayed past its lease does not run beside the retry that
// took its claim over (docs/protocol.md §0 "Idempotency"; attack on core/idempotency.hpp's lease):
// enact-server on PostgreSQL (metering and content store); another session holds the row the
// request's code is kept under, so the request stalls between its claim and its run for longer
// than the lease. A retry with the key takes the claim over and stalls behind the same row. Once
// the row is let go, the retry runs, and the first request, whose claim is no longer its own,
// answers 409 conflict with Retry-After: the action ran once, and was charged once.
#include <doctest/doctest.h>
#include <libpq-fe.h>

#include <atomic>
#include <chrono>
#include <future>
#include <string>
#include <thread>

#include "postgres_fixture.hpp"
#include "run_test.hpp"
#include "steps.hpp"

namespace enact::itest {
namespace {

/// Counts the requests the action's Enact.fetch makes: one per run.
class run_counter {
 public:
  run_counter() {
    server_.Get("/ran", [this](const httplib::Request&, httplib::Response& res) {
      ++runs;
      res.set_content("ok", "text/plain");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    REQUIRE(port_ > 0);
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running())
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  run_counter(const run_counter&) = delete;
  run_counter& operator=(const run_counter&) = delete;
  ~run_counter() {
    server_.stop();
    thread_.join();
  }
  [[nodiscard]] std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/ran"; }
  std::atomic<int> runs{0};

 private:
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
};

/// Another session's open transaction holding the content_code row of `cid` (an insert not yet
/// committed), as a stuck transaction of another server would; rolled back when it goes away.
class row_holder {
 public:
  row_holder(const std::string& url, const std::string& cid) : c_(PQconnectdb(url.c_str())) {
    REQUIRE(PQstatus(c_) == CONNECTION_OK);
    exec("BEGIN");
    exec("INSERT INTO content_code (cid, code, created_at) VALUES ('" + cid + "', '\\x00'::bytea, 0)");
  }
  row_holder(const row_holder&) = delete;
  row_holder& operator=(const row_holder&) = delete;
  ~row_holder() { release(); }
  void release() {
    if (c_ == nullptr)
      return;
    exec("ROLLBACK");
    PQfinish(c_);
    c_ = nullptr;
  }

 private:
  void exec(const std::string& sql) {
    PGresult* r = PQexec(c_, sql.c_str());
    const ExecStatusType st = PQresultStatus(r);
    const std::string error = PQresultErrorMessage(r);
    PQclear(r);
    REQUIRE_MESSAGE((st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK), error);
  }
  PGconn* c_;
};

struct answer {
  int status = 0;
  std::string body;
  std::string retry_after;
};

/// run_action with a read timeout past the stall (the suite's client gives up after 30 s).
answer run_keyed(int port, const httplib::Headers& auth, const json::object& body) {
  httplib::Client cli("127.0.0.1", port);
  cli.set_read_timeout(180);
  httplib::Headers h = auth;
  h.emplace("Idempotency-Key", "delayed-once");
  const auto r = cli.Post("/core/v1/run_action", h, json::serialize(body), "application/json");
  if (!r)
    return answer{};
  return answer{r->status, r->body, r->get_header_value("Retry-After")};
}

}  // namespace

TEST_CASE("Idempotency-Key: a request delayed past its lease does not run beside the retry that took it over") {
  auto& pg = triggers::test::shared_postgres();
  const std::string url = pg.create_database();
  run_counter counter;
  // With a 1 s wall time the run's budget, and the claim's lease, is 5 + 1 + 1 + 30 = 37 s.
  server_process srv({"--dev", "--run-timeout-ms", "1000", "--metering-store", url, "--content-store", "postgres",
                      "--fetch-allow-loopback", "true"});
  auto c = srv.client();
  const account_keys acct = create_account(c, "delayed");
  CHECK(buy_credits(c, acct.auth(), 500) == 500);
  // Code the server has not kept: a run with it in the body keeps it first, and stalls there.
  const std::string code = "await Enact.fetch(params.url); Enact.setResponse({n: Math.random()});\n";
  const std::string cid = cid_of_code(code);
  const uint64_t gid = add_group(c, acct.auth(), "g", {}, {hashed_cid_hex(cid)});
  const usage_keys key = executor_key(c, acct.auth(), json::array{gid});
  const json::object body = by_code(code, json::object{{"url", counter.url()}});

  row_holder holder(url, cid);
  auto first = std::async(std::launch::async, [&] { return run_keyed(srv.port(), key.auth(), body); });
  std::this_thread::sleep_for(std::chrono::seconds(39));  // the first request's lease ran out
  auto retry = std::async(std::launch::async, [&] { return run_keyed(srv.port(), key.auth(), body); });
  std::this_thread::sleep_for(std::chrono::seconds(2));  // the retry took the claim over and stalls too
  CHECK(counter.runs == 0);
  holder.release();
  const answer a = first.get();
  const answer b = retry.get();
  CHECK(b.status == 200);
  CHECK(a.status == 409);
  CHECK(a.body.find("\"conflict\"") != std::string::npos);
  CHECK(std::stoi(a.retry_after.empty() ? "0" : a.retry_after) >= 1);
  CHECK(counter.runs == 1);  // one run, not two
  CHECK(balance_of(c, acct.auth()) == 499);
  // The retry's answer is the key's: replayed, not run again.
  const answer again = run_keyed(srv.port(), key.auth(), body);
  CHECK(again.status == 200);
  CHECK(again.body == b.body);
  CHECK(counter.runs == 1);
  CHECK(srv.stop().clean());
}

}  // namespace enact::itest
