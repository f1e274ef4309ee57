// SPDX-License-Identifier: Apache-2.0
// The metering store on PostgreSQL: the conformance suite on a fresh database per case of a
// throwaway server (tests/triggers' postgres_fixture), and what belongs to this backend alone:
// two stores (two servers) on one database share the credits, and open on one schema.
#include <doctest/doctest.h>
#include <libpq-fe.h>

#include <chrono>
#include <future>
#include <thread>
#include <vector>

#include "conformance.hpp"
#include "metering/pg_store.hpp"
#include "must.hpp"
#include "postgres_fixture.hpp"

namespace enact::metering::test {
namespace {

using triggers::test::shared_postgres;

/// Another session holding every account row (a stuck transaction of another server) until it
/// goes away.
class row_locker {
 public:
  explicit row_locker(const std::string& url) : c_(PQconnectdb(url.c_str())) {
    REQUIRE(PQstatus(c_) == CONNECTION_OK);
    exec("BEGIN");
    exec("SELECT account FROM metering_accounts FOR UPDATE");
  }
  row_locker(const row_locker&) = delete;
  row_locker& operator=(const row_locker&) = delete;
  ~row_locker() {
    exec("COMMIT");
    PQfinish(c_);
  }

 private:
  void exec(const char* sql) {
    PGresult* r = PQexec(c_, sql);
    const ExecStatusType st = PQresultStatus(r);
    PQclear(r);
    REQUIRE((st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK));
  }
  PGconn* c_;
};

TEST_CASE("metering store conformance: postgres") {
  run_conformance([](test_clock& clock) {
    return enact::test::must_ok(
        open_postgres(shared_postgres().create_database(), {.pool_size = 8, .now = clock.fn()}));
  });
}

TEST_CASE("metering store idempotency keys: postgres") {
  run_idempotency_conformance([](test_clock& clock) {
    return enact::test::must_ok(
        open_postgres(shared_postgres().create_database(), {.pool_size = 8, .now = clock.fn()}));
  });
}

TEST_CASE("metering store concurrent writes in batches: postgres") {
  run_group_commit_conformance([](test_clock& clock) {
    return enact::test::must_ok(
        open_postgres(shared_postgres().create_database(), {.pool_size = 8, .now = clock.fn()}));
  });
}

TEST_CASE("metering store on postgres: two servers on one database never spend a credit twice") {
  const std::string url = shared_postgres().create_database();
  auto a = enact::test::must_ok(open_postgres(url));
  auto b = enact::test::must_ok(open_postgres(url));  // the schema exists: opened, not created again
  const hash256 account{7};
  MUST(a->record_payment(intent("pi_fleet", account, 100, "stripe")));
  CHECK_ERRC(b->record_payment(intent("pi_fleet", account, 100, "stripe")), metering_errc::duplicate_payment);
  (void)MUST(b->credit_payment(account, "pi_fleet"));
  CHECK_FALSE(MUST(a->credit_payment(account, "pi_fleet")).credited_now);
  std::atomic<uint64_t> settled{0};
  std::vector<std::thread> servers;
  for (store* s : {a.get(), b.get(), a.get(), b.get()})
    servers.emplace_back([s, &settled, &account] {
      for (int i = 0; i < 40; ++i) {
        auto r = s->reserve(reserve_request{account, account, 1, 0, "run", std::chrono::minutes(10)});
        if (r && s->settle(account, r->id, 1))
          ++settled;
      }
    });
  for (auto& t : servers)
    t.join();
  CHECK(settled == 100);  // 160 attempts for 100 credits: exactly the balance was spent
  CHECK(MUST(a->balance(account)) == 0);
  CHECK(MUST(b->usage(account, {1, 1})).total == 100);

  CHECK_ERRC(open_postgres(shared_postgres().url("no_such_database")), metering_errc::storage);
}

TEST_CASE("metering store on postgres: two servers' batches over two accounts lose and double nothing") {
  // Each server's batches lock the two accounts' rows in arrival order, so the servers' batches
  // may deadlock; an aborted batch runs again write by write, and every write is answered once.
  const std::string url = shared_postgres().create_database();
  auto a = enact::test::must_ok(open_postgres(url));
  auto b = enact::test::must_ok(open_postgres(url));
  const hash256 first{0x31}, second{0x32};
  MUST(a->record_payment(intent("pi_first", first, 200)));
  MUST(b->record_payment(intent("pi_second", second, 200)));
  (void)MUST(a->credit_payment(first, "pi_first"));
  (void)MUST(b->credit_payment(second, "pi_second"));
  std::atomic<int> settled{0}, failed{0};
  std::vector<std::thread> servers;
  for (int t = 0; t < 8; ++t)
    servers.emplace_back([s = t % 2 == 0 ? a.get() : b.get(), t, &settled, &failed, &first, &second] {
      for (int i = 0; i < 30; ++i) {
        const hash256& account = (t + i) % 2 == 0 ? first : second;
        auto r = s->reserve(reserve_request{account, account, 1, 0, "run", std::chrono::minutes(10)});
        if (r && s->settle(account, r->id, 1))
          ++settled;
        else
          ++failed;
      }
    });
  for (auto& t : servers)
    t.join();
  CHECK(failed == 0);
  CHECK(settled == 240);
  CHECK(MUST(a->balance(first)) == 80);
  CHECK(MUST(b->balance(second)) == 80);
  CHECK(MUST(a->usage(second, {1, 1})).total == 120);
  CHECK(MUST(b->usage(first, {1, 1})).total == 120);
}

}  // namespace
}  // namespace enact::metering::test

namespace enact::metering::test {
namespace {

TEST_CASE("metering store on postgres: a hold reserved after a wait for the account's row is not expired") {
  // Its expiry counts from when it is made, not from before the wait: a run that waited past the
  // hold's ttl for the row would otherwise start with a hold already expired, and go unpaid.
  const std::string url = shared_postgres().create_database();
  test_clock clock;
  auto s = enact::test::must_ok(open_postgres(url, {.pool_size = 4, .now = clock.fn()}));
  const hash256 account{9};
  MUST(s->record_payment(intent("pi_wait", account, 100)));
  (void)MUST(s->credit_payment(account, "pi_wait"));
  std::future<result<reservation>> held;
  {
    row_locker lock(url);
    held = std::async(std::launch::async, [&] {
      return s->reserve(reserve_request{account, account, 10, 0, "run", std::chrono::seconds(5)});
    });
    CHECK(held.wait_for(std::chrono::milliseconds(500)) == std::future_status::timeout);  // waits for the row
    clock.now += 60000;                                                                   // the wait outlasts the ttl
  }
  const reservation r = MUST(held.get());
  CHECK(r.expires_at == clock.now + 5000);
  CHECK(MUST(s->available(account)) == 90);  // held, not expired
  CHECK(MUST(s->settle(account, r.id, 10)) == 90);
}

TEST_CASE("metering store on postgres: a write waiting on a locked row fails after the lock timeout") {
  // A stuck session holding the account's row fails the write as a storage error (lock_timeout)
  // instead of stalling it, and every write queued behind it, for as long as the row is held.
  const std::string url = shared_postgres().create_database();
  auto s = enact::test::must_ok(open_postgres(url));
  const hash256 account{10};
  MUST(s->record_payment(intent("pi_stuck", account, 100)));
  (void)MUST(s->credit_payment(account, "pi_stuck"));
  const auto start = std::chrono::steady_clock::now();
  {
    row_locker lock(url);
    CHECK_ERRC(s->reserve(reserve_request{account, account, 10, 0, "run", std::chrono::minutes(1)}),
               metering_errc::storage);
  }
  const auto waited = std::chrono::steady_clock::now() - start;
  CHECK(waited >= std::chrono::seconds(9));
  CHECK(waited < std::chrono::seconds(60));
  CHECK(MUST(s->available(account)) == 100);  // nothing held
  (void)MUST(s->reserve(reserve_request{account, account, 10, 0, "run", std::chrono::minutes(1)}));
}

}  // namespace
}  // namespace enact::metering::test
