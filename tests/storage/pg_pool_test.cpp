// SPDX-License-Identifier: Apache-2.0
// The PostgreSQL pool (storage/pg_pool.hpp) against a throwaway server (tests/triggers'
// postgres_fixture): at most `size` connections, waiters served when one comes back, session
// settings on every new connection, a discarded connection replaced, a failed connect not counted.
#include <doctest/doctest.h>

#include <pqxx/nontransaction>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "postgres_fixture.hpp"
#include "storage/pg_pool.hpp"

namespace enact::storage::test {
namespace {

using namespace std::chrono_literals;

std::string value(pqxx::connection& c, const std::string& sql) {
  pqxx::nontransaction tx(c);
  return tx.exec1(sql)[0].as<std::string>();
}

TEST_CASE("pg_pool: bounded, lazily opened, session settings on each new connection") {
  triggers::test::postgres_server server;
  const std::string url = server.create_database();
  std::atomic<int> connects{0};
  pg_pool pool(url, {.size = 2, .on_connect = [&connects](pqxx::connection& c) {
                       ++connects;
                       pqxx::nontransaction tx(c);
                       tx.exec("SET application_name = 'enact-pool-test'");
                     }});
  CHECK(pool.max() == 2);
  CHECK(pool.open() == 0);
  std::atomic<bool> served{false};
  std::thread waiter;
  {
    auto a = pool.acquire();
    auto b = pool.acquire();
    CHECK(pool.open() == 2);
    CHECK(value(*a, "SELECT current_setting('application_name')") == "enact-pool-test");
    CHECK(value(*a, "SELECT pg_backend_pid()") != value(*b, "SELECT pg_backend_pid()"));
    // A third caller waits until one of the two comes back.
    waiter = std::thread([&] {
      auto c = pool.acquire();
      served = true;
    });
    std::this_thread::sleep_for(100ms);
    CHECK_FALSE(served.load());
  }
  waiter.join();
  CHECK(served.load());
  CHECK(pool.open() == 2);
  CHECK(connects == 2);  // idle connections are reused, not reopened
  {
    auto a = pool.acquire();
    CHECK(connects == 2);
  }
}

TEST_CASE("pg_pool: a discarded connection is closed and replaced; a failed connect counts nothing") {
  triggers::test::postgres_server server;
  const std::string url = server.create_database();
  pg_pool pool(url, {.size = 1, .on_connect = {}});
  std::string first;
  {
    auto a = pool.acquire();
    first = value(*a, "SELECT pg_backend_pid()");
    a.discard();
  }
  CHECK(pool.open() == 0);
  {
    auto a = pool.acquire();
    CHECK(value(*a, "SELECT pg_backend_pid()") != first);
  }

  pg_pool bad(server.url("no_such_database"), {.size = 1, .on_connect = {}});
  CHECK_THROWS_AS((void)bad.acquire(), pqxx::broken_connection);
  CHECK(bad.open() == 0);
  CHECK_THROWS_AS((void)bad.acquire(), pqxx::broken_connection);  // the slot was given back
}

}  // namespace
}  // namespace enact::storage::test
