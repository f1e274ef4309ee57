// SPDX-License-Identifier: Apache-2.0
// The PostgreSQL layer (storage/pg.hpp) against a throwaway server (tests/triggers'
// postgres_fixture): the pool (at most `size` connections, waiters served when one comes back,
// session settings on every new connection, a discarded connection replaced, a failed connect not
// counted), transactions, pipelined batches and the migration runner.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "postgres_fixture.hpp"
#include "storage/pg.hpp"

namespace enact::storage::pg::test {
namespace {

using namespace std::chrono_literals;

std::string value(connection& c, const std::string& sql) {
  rows r = c.exec_params(sql, args{});
  REQUIRE(r.next());
  return r.text(0);
}

TEST_CASE("pg pool: bounded, lazily opened, session settings on each new connection") {
  triggers::test::postgres_server server;
  const std::string url = server.create_database();
  pool p(url, {.size = 2, .setup = "SET application_name = 'enact-pool-test'"});
  CHECK(p.max() == 2);
  CHECK(p.open() == 0);
  std::atomic<bool> served{false};
  std::thread waiter;
  std::string first_pid;
  {
    auto a = p.acquire();
    auto b = p.acquire();
    CHECK(p.open() == 2);
    CHECK(value(*a, "SELECT current_setting('application_name')") == "enact-pool-test");
    CHECK(value(*a, "SELECT current_setting('bytea_output')") == "hex");
    first_pid = value(*a, "SELECT pg_backend_pid()");
    CHECK(first_pid != value(*b, "SELECT pg_backend_pid()"));
    // A third caller waits until one of the two comes back.
    waiter = std::thread([&] {
      auto c = p.acquire();
      served = true;
    });
    std::this_thread::sleep_for(100ms);
    CHECK_FALSE(served.load());
  }
  waiter.join();
  CHECK(served.load());
  CHECK(p.open() == 2);  // idle connections are reused, not reopened
}

TEST_CASE("pg pool: a discarded connection is closed and replaced; a failed connect counts nothing") {
  triggers::test::postgres_server server;
  const std::string url = server.create_database();
  pool p(url, {.size = 1, .setup = {}});
  std::string first;
  {
    auto a = p.acquire();
    first = value(*a, "SELECT pg_backend_pid()");
    a.discard();
  }
  CHECK(p.open() == 0);
  {
    auto a = p.acquire();
    CHECK(value(*a, "SELECT pg_backend_pid()") != first);
  }
  {
    // One given back inside a transaction is not reused.
    auto a = p.acquire();
    first = value(*a, "SELECT pg_backend_pid()");
    a->exec_simple("BEGIN");
  }
  CHECK(p.open() == 0);

  pool bad(server.url("no_such_database"), {.size = 1, .setup = {}});
  CHECK_THROWS_AS((void)bad.acquire(), failure);
  CHECK(bad.open() == 0);
  CHECK_THROWS_AS((void)bad.acquire(), failure);  // the slot was given back
}

TEST_CASE("pg transact: committed when the body says so, rolled back otherwise; SQLSTATE kept") {
  triggers::test::postgres_server server;
  const std::string url = server.create_database();
  pool p(url, {.size = 1, .setup = {}});
  transact(p, [](connection& c) {
    c.exec_simple("CREATE TABLE t (k text PRIMARY KEY, v bytea)");
    (void)c.exec("INSERT INTO t (k, v) VALUES ($1, $2)", "kept", bytes{0x00, 0xff});
    return true;
  });
  transact(p, [](connection& c) {
    (void)c.exec("INSERT INTO t (k, v) VALUES ($1, $2)", "dropped", nullptr);
    return false;
  });
  int attempts = 0;
  try {
    transact(p, [&](connection& c) {
      ++attempts;
      (void)c.exec("INSERT INTO t (k, v) VALUES ($1, $2)", "kept", nullptr);
      return true;
    });
    FAIL("a duplicate key was inserted");
  } catch (const failure& e) {
    CHECK(e.unique_violation());
  }
  CHECK(attempts == 1);  // a unique violation is retried only when asked
  auto c = p.acquire();
  rows r = c->exec("SELECT k, v FROM t ORDER BY k");
  REQUIRE(r.next());
  CHECK(r.text(0) == "kept");
  CHECK(r.blob(1) == bytes{0x00, 0xff});
  CHECK_FALSE(r.next());
}

TEST_CASE("pg pipeline: one implicit transaction, committed whole or rolled back whole") {
  triggers::test::postgres_server server;
  const std::string url = server.create_database();
  connection c(url);
  c.exec_simple("CREATE TABLE t (n bigint PRIMARY KEY)");
  const std::string insert = "INSERT INTO t (n) VALUES ($1) RETURNING n";
  const std::string count = "SELECT count(*) FROM t";
  pipeline_outcome ok = c.pipeline({{&insert, args{int64_t{1}}}, {&insert, args{int64_t{2}}}, {&count, args{}}});
  REQUIRE(ok.committed);
  REQUIRE(ok.answers.size() == 3);
  REQUIRE(ok.answers[2].next());
  CHECK(ok.answers[2].i64(0) == 2);
  pipeline_outcome refused = c.pipeline({{&insert, args{int64_t{3}}}, {&insert, args{int64_t{1}}}});
  CHECK_FALSE(refused.committed);
  CHECK_FALSE(refused.retryable);
  CHECK(refused.error.find("duplicate key") != std::string::npos);
  CHECK(value(c, count) == "2");  // the 3 went with the batch
}

// The runner each PostgreSQL store migrates with: a database at the previous version upgrades in
// one transaction, and one of a later build is refused with a clear error and left as it is.
TEST_CASE("pg migrate: the previous version upgrades; a newer version is refused") {
  triggers::test::postgres_server server;
  const std::string url = server.create_database();
  pool p(url, {.size = 1, .setup = {}});
  const std::string lock = "SELECT pg_advisory_xact_lock(42)";
  const std::vector<const char*> v1 = {"CREATE TABLE items (id bigint PRIMARY KEY)"};
  std::vector<const char*> v2 = v1;
  v2.push_back("ALTER TABLE items ADD COLUMN label text NOT NULL DEFAULT 'none'");
  migrate(p, lock, "test_schema", v1);
  {
    auto c = p.acquire();
    (void)c->exec("INSERT INTO items (id) VALUES ($1)", int64_t{7});
    CHECK(value(*c, "SELECT version FROM test_schema") == "1");
  }
  migrate(p, lock, "test_schema", v2);
  migrate(p, lock, "test_schema", v2);  // at its version: nothing to run
  {
    auto c = p.acquire();
    CHECK(value(*c, "SELECT id || ':' || label FROM items") == "7:none");  // the row kept
    CHECK(value(*c, "SELECT version FROM test_schema") == "2");
    CHECK(value(*c, "SELECT count(*) FROM test_schema") == "1");
  }
  try {
    migrate(p, lock, "test_schema", v1);
    FAIL("a newer schema was accepted");
  } catch (const failure& e) {
    CHECK(std::string(e.what()) == "postgres: schema version 2 is newer than this build's 1");
  }
  // A step that fails leaves the database at the version before it.
  std::vector<const char*> broken = v2;
  broken.push_back("ALTER TABLE no_such_table ADD COLUMN x text");
  CHECK_THROWS_AS(migrate(p, lock, "test_schema", broken), failure);
  auto c = p.acquire();
  CHECK(value(*c, "SELECT version FROM test_schema") == "2");
}

}  // namespace
}  // namespace enact::storage::pg::test
