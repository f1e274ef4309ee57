// SPDX-License-Identifier: Apache-2.0
// The metering store on PostgreSQL: the conformance suite on a fresh database per case of a
// throwaway server (tests/triggers' postgres_fixture), and what belongs to this backend alone:
// two stores (two servers) on one database share the credits, and open on one schema.
#include <doctest/doctest.h>
#include <libpq-fe.h>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "conformance.hpp"
#include "enact/codec/hex.hpp"
#include "metering/pg_store.hpp"
#include "metering/session.hpp"
#include "metering/sqlite_store.hpp"
#include "must.hpp"
#include "postgres_fixture.hpp"
#include "support.hpp"

namespace enact::metering::test {
namespace {

using triggers::test::shared_postgres;

/// Another session holding account rows (a stuck transaction of another server) until it goes
/// away: every account's, or the one `account`'s.
class row_locker {
 public:
  explicit row_locker(const std::string& url, const account_hash* account = nullptr) : c_(PQconnectdb(url.c_str())) {
    REQUIRE(PQstatus(c_) == CONNECTION_OK);
    exec("BEGIN");
    const std::string where = account == nullptr ? "" : " WHERE account = '" + codec::hex::encode(*account) + "'";
    exec(("SELECT account FROM metering_accounts" + where + " FOR UPDATE").c_str());
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

TEST_CASE("metering store single-use values: postgres") {
  run_nonce_conformance([](test_clock& clock) {
    return enact::test::must_ok(
        open_postgres(shared_postgres().create_database(), {.pool_size = 8, .now = clock.fn()}));
  });
}

TEST_CASE("metering store on postgres: a nonce used on two servers at once is recorded by exactly one") {
  // Attack: one envelope sent to two servers of a fleet at once, on several connections each.
  const std::string url = shared_postgres().create_database();
  test_clock clock;
  auto a = enact::test::must_ok(open_postgres(url, {.pool_size = 4, .now = clock.fn()}));
  auto b = enact::test::must_ok(open_postgres(url, {.pool_size = 4, .now = clock.fn()}));
  const auto round = [&](const hash256& id) {
    std::atomic<int> recorded{0}, refused{0};
    race(8, [&](int t) {
      store& s = t % 2 == 0 ? *a : *b;
      const auto r = s.use_once(id, clock.now + 600'000);
      if (r)
        ++(*r ? recorded : refused);
    });
    CHECK(recorded == 1);
    CHECK(refused == 7);
  };
  for (uint8_t i = 0; i < 20; ++i)
    round(test_hash(0x50, i));
  // Expired, the id is taken over by exactly one of the racing servers as well.
  clock.now += 600'000;
  for (uint8_t i = 0; i < 5; ++i)
    round(test_hash(0x50, i));
  // One server's sweep deletes what either recorded.
  clock.now += 600'000;
  CHECK(MUST(b->expire_nonces()) == 20);
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

TEST_CASE("metering store on postgres: two servers crediting a new account's payments at once keep both") {
  // Attack: each account is new (no row yet, so nothing to lock); one server credits one payment
  // while the other credits another. A credit written as a value read before the row existed
  // would replace the other's.
  const std::string url = shared_postgres().create_database();
  auto a = enact::test::must_ok(open_postgres(url));
  auto b = enact::test::must_ok(open_postgres(url));
  constexpr int kAccounts = 150;
  const auto account_of = [](int i) {
    hash256 h{};
    h[0] = 0x5a;
    h[30] = static_cast<uint8_t>(i >> 8);
    h[31] = static_cast<uint8_t>(i);
    return h;
  };
  for (int i = 0; i < kAccounts; ++i) {
    MUST(a->record_payment(intent("pi_a" + std::to_string(i), account_of(i), 100, "stripe")));
    MUST(a->record_payment(intent("pi_b" + std::to_string(i), account_of(i), 10, "stripe")));
  }
  std::thread ta([&] {
    for (int i = 0; i < kAccounts; ++i)
      (void)MUST(a->credit_payment(account_of(i), "pi_a" + std::to_string(i)));
  });
  std::thread tb([&] {
    for (int i = 0; i < kAccounts; ++i)
      (void)MUST(b->credit_payment(account_of(i), "pi_b" + std::to_string(i)));
  });
  ta.join();
  tb.join();
  int lost = 0;
  for (int i = 0; i < kAccounts; ++i)
    lost += MUST(a->balance(account_of(i))) == 110 ? 0 : 1;
  CHECK(lost == 0);
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
  // A stuck session holding the account's row fails the write as a storage error (lock_timeout,
  // pg_options::lock_timeout_seconds: --metering-lock-timeout) instead of stalling it, and every
  // write queued behind it, for as long as the row is held.
  const std::string url = shared_postgres().create_database();
  auto s = enact::test::must_ok(open_postgres(url, {.lock_timeout_seconds = 2, .now = {}}));
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
  CHECK(waited >= std::chrono::milliseconds(1900));
  CHECK(waited < std::chrono::seconds(10));   // the setting, not the default of 10 s
  CHECK(MUST(s->available(account)) == 100);  // nothing held
  (void)MUST(s->reserve(reserve_request{account, account, 10, 0, "run", std::chrono::minutes(1)}));
}

}  // namespace
}  // namespace enact::metering::test

// The run path's writes as the store's functions (server/metering/pg_functions.hpp): the answers
// of the shared operations, message for message; races of two servers on one account; refusals
// that share a batch with writes that commit.
namespace enact::metering::test {
namespace {

/// Reserves and settles through every answer they have, each as a line "step: answer"
/// (reservation ids named by the order they were made, instants relative to the clock).
std::vector<std::string> answers(store& s, test_clock& clock) {
  std::vector<std::string> out;
  std::vector<std::string> ids;
  auto named = [&](std::string text) {
    for (size_t i = 0; i < ids.size(); ++i)
      for (size_t at = text.find(ids[i]); at != std::string::npos; at = text.find(ids[i]))
        text.replace(at, ids[i].size(), "#" + std::to_string(i));
    return text;
  };
  auto reserve = [&](const std::string& step, const reserve_request& q) {
    auto r = s.reserve(q);
    if (!r) {
      out.push_back(step + ": " + r.code().message() + ": " + r.err().message);
      return;
    }
    ids.push_back(r->id);
    CHECK(r->id.size() == 36);
    CHECK(r->id.starts_with("rsv_"));
    out.push_back(step + ": #" + std::to_string(ids.size() - 1) + " " + std::to_string(r->amount) + " for " +
                  r->run_id + " until now+" + std::to_string(r->expires_at - clock.now) +
                  (r->account == q.account && r->key == q.key ? "" : " (other account or key)"));
  };
  auto settle = [&](const std::string& step, const account_hash& a, const std::string& id, uint64_t amount) {
    auto r = s.settle(a, id, amount);
    out.push_back(step + ": " +
                  (r ? "balance " + std::to_string(*r) : r.code().message() + ": " + named(r.err().message)));
  };
  auto id = [&](size_t i) {
    return i < ids.size() ? ids[i] : std::string("rsv_missing");
  };
  const account_hash alice = test_hash(0xA1), bob = test_hash(0xB1);
  const key_hash capped = test_hash(0xA1, 2);
  reserve("no balance yet", reserve_request{alice, alice, 1, 0, "run-0"});
  MUST(s.record_payment(intent("pi_answers", alice, 100)));
  (void)MUST(s.credit_payment(alice, "pi_answers"));
  reserve("amount 0", reserve_request{alice, alice, 0, 0, "run-1"});
  reserve("amount over int64", reserve_request{alice, alice, uint64_t{1} << 63, 0, "run-1"});
  reserve("empty run id", reserve_request{alice, alice, 1, 0, ""});
  reserve("run id too long", reserve_request{alice, alice, 1, 0, std::string(257, 'r')});
  reserve("ttl 0", reserve_request{alice, alice, 1, 0, "run-1", std::chrono::milliseconds(0)});
  reserve("first", reserve_request{alice, alice, 30, 0, "run-1", std::chrono::seconds(5)});
  reserve("capped", reserve_request{alice, capped, 20, 25, "run-2"});
  reserve("over the cap", reserve_request{alice, capped, 6, 25, "run-3"});
  reserve("cap above int64", reserve_request{alice, capped, 5, ~uint64_t{0}, "run-3"});
  reserve("over the balance", reserve_request{alice, alice, 46, 0, "run-4"});
  settle("over reserved", alice, id(0), 31);
  settle("over int64", alice, id(0), ~uint64_t{0});
  settle("another account's", bob, id(0), 1);
  settle("unknown", alice, "rsv_nope", 1);
  settle("capped, part", alice, id(1), 15);
  settle("capped again", alice, id(1), 15);
  reserve("cap spent", reserve_request{alice, capped, 11, 25, "run-5"});
  reserve("cap left", reserve_request{alice, capped, 5, 25, "run-5"});
  settle("nothing charged", alice, id(3), 0);
  clock.now += 5000;  // the first hold expires
  settle("expired", alice, id(0), 30);
  reserve("after expiry", reserve_request{alice, alice, 85, 0, "run-6"});
  reserve("all that is left", reserve_request{alice, alice, 80, 0, "run-6", std::chrono::hours(1)});
  settle("all of it", alice, id(4), 80);
  reserve("nothing left", reserve_request{alice, alice, 1, 0, "run-7"});
  out.push_back("usage: " + std::to_string(MUST(s.usage(alice, {1, 10})).total) +
                ", spent by the capped key: " + std::to_string(MUST(s.spending(alice, capped)).spent));
  return out;
}

TEST_CASE("metering store on postgres: reserve and settle answer as the shared operations, message for message") {
  enact::test::temp_dir dir("enact-metering-pg");
  test_clock lite_clock, pg_clock;
  auto lite = enact::test::must_ok(open_sqlite((dir.path() / "m.sqlite").string(), {.now = lite_clock.fn()}));
  auto pg = enact::test::must_ok(open_postgres(shared_postgres().create_database(), {.now = pg_clock.fn()}));
  const std::vector<std::string> want = answers(*lite, lite_clock);
  const std::vector<std::string> got = answers(*pg, pg_clock);
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < want.size(); ++i)
    CHECK(got[i] == want[i]);
  CHECK(want[0] == "no balance yet: insufficient credits: balance 0 credits, 0 reserved by runs in progress, 1 needed");
}

TEST_CASE("metering store on postgres: two servers racing one account's holds and charges keep its books") {
  // Attack: 2 threads on each of two stores (two servers: their lone writes, not serialized by
  // the batches' advisory lock, overlap) race for one account's credits, round after round (each
  // round credits 20 more), half of them through a key capped at 40, asking
  // for more than there is: the holds answered in a round never add up to more than the round
  // had available, every one of them is paid in full when settled, the capped key never spends
  // past its cap, and the charges add up to what left the balance.
  const std::string url = shared_postgres().create_database();
  auto a = enact::test::must_ok(open_postgres(url, {.pool_size = 4, .now = system_now}));
  auto b = enact::test::must_ok(open_postgres(url, {.pool_size = 4, .now = system_now}));
  const account_hash account = test_hash(0xE1);
  const key_hash capped = test_hash(0xE1, 1);
  uint64_t charged = 0, charged_capped = 0;
  constexpr int kRounds = 10;
  for (int round = 0; round < kRounds; ++round) {
    const std::string pi = "pi_books_" + std::to_string(round);
    MUST(a->record_payment(intent(pi, account, 20)));
    (void)MUST(b->credit_payment(account, pi));
    const uint64_t available = MUST(a->available(account));
    std::mutex mu;
    std::vector<std::pair<reservation, bool>> holds;  // and whether it is the capped key's
    std::atomic<int> other{0};
    race(4, [&](int t) {
      store& s = t % 2 == 0 ? *a : *b;
      for (int i = 0; i < 12; ++i) {
        const bool use_cap = (t + i) % 2 == 0;
        const uint64_t amount = 1 + static_cast<uint64_t>((t * 7 + i) % 3);
        auto r = s.reserve(reserve_request{account, use_cap ? capped : account, amount, use_cap ? 40u : 0u, "run"});
        if (r) {
          std::lock_guard lock(mu);
          holds.emplace_back(*r, use_cap);
        } else if (r.code() != metering_errc::insufficient_credits && r.code() != metering_errc::cap_exceeded) {
          ++other;
        }
      }
    });
    CHECK(other == 0);
    uint64_t held = 0;
    for (const auto& h : holds)
      held += h.first.amount;
    CHECK(held <= available);  // no credit held twice
    // Every thread settles every hold: each is paid once, by one of the servers, and the others
    // find it closed.
    std::vector<std::atomic<int>> settled(holds.size());
    std::atomic<uint64_t> paid{0}, paid_capped{0};
    std::atomic<int> unpaid{0};
    race(4, [&](int t) {
      store& s = t % 2 == 0 ? *a : *b;
      for (size_t n = 0; n < holds.size(); ++n) {
        const size_t i = (n + static_cast<size_t>(t / 2)) % holds.size();
        const uint64_t charge = holds[i].first.amount - i % 2;  // some settle less than they held
        auto r = s.settle(account, holds[i].first.id, charge);
        if (r) {
          ++settled[i];
          paid += charge;
          if (holds[i].second)
            paid_capped += charge;
        } else if (r.code() != metering_errc::unknown_reservation) {
          ++unpaid;  // a hold that could not be paid: the credits were spent twice
        }
      }
    });
    for (const auto& n : settled)
      CHECK(n == 1);
    CHECK(unpaid == 0);
    charged += paid;
    charged_capped += paid_capped;
  }
  const uint64_t balance = MUST(a->balance(account));
  CHECK(balance == 20 * kRounds - charged);
  CHECK(MUST(b->spending(account, capped)).spent == charged_capped);
  CHECK(charged_capped <= 40);
  uint64_t in_usage = 0;
  for (uint64_t n = 1;; ++n) {
    const auto p = MUST(b->usage(account, {n, 100}));
    for (const usage_record& u : p.items)
      in_usage += u.amount;
    if (p.items.size() < 100)
      break;
  }
  CHECK(in_usage == 20 * kRounds - balance);
  CHECK(MUST(a->available(account)) == balance);  // no hold left open
}

TEST_CASE("metering store on postgres: refused reserves and settles in a batch leave their neighbours' writes") {
  // The committer is held on a write waiting for a locked row while the others queue behind it:
  // they run as one batch once it is released. The refusals (each a single statement that wrote
  // nothing) share the batch's transaction with writes that commit, and change nothing.
  const std::string url = shared_postgres().create_database();
  auto s = enact::test::must_ok(open_postgres(url));
  const account_hash alice = test_hash(0xF1), bob = test_hash(0xF2), stuck = test_hash(0xF3);
  const key_hash capped = test_hash(0xF1, 1);
  MUST(s->record_payment(intent("pi_alice", alice, 100)));
  (void)MUST(s->credit_payment(alice, "pi_alice"));
  MUST(s->record_payment(intent("pi_stuck", stuck, 10)));
  (void)MUST(s->credit_payment(stuck, "pi_stuck"));
  const reservation kept = MUST(s->reserve(reserve_request{alice, alice, 10, 0, "run-kept"}));
  const reservation paid = MUST(s->reserve(reserve_request{alice, alice, 10, 0, "run-paid"}));
  std::vector<std::future<std::string>> answers;
  auto answer = [](const auto& r) {
    return r ? std::string("ok") : r.code().message();
  };
  {
    std::optional<row_locker> lock(std::in_place, url, &stuck);
    auto first = std::async(std::launch::async, [&] {
      return answer(s->reserve(reserve_request{stuck, stuck, 1, 0, "run-stuck"}));
    });
    // The committer waits on it: a session of the database waits for a lock.
    PGconn* watch = PQconnectdb(url.c_str());
    REQUIRE(PQstatus(watch) == CONNECTION_OK);
    bool waiting = false;
    for (int i = 0; i < 200 && !waiting; ++i) {
      PGresult* r = PQexec(watch,
                           "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND "
                           "wait_event_type = 'Lock'");
      waiting = PQresultStatus(r) == PGRES_TUPLES_OK && std::string(PQgetvalue(r, 0, 0)) != "0";
      PQclear(r);
      if (!waiting)
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    PQfinish(watch);
    REQUIRE(waiting);
    auto later = [&](auto f) {
      answers.push_back(std::async(std::launch::async, f));
    };
    later([&] { return answer(s->settle(alice, kept.id, 11)); });  // over reserved
    later([&] { return answer(s->settle(alice, "rsv_nope", 1)); });
    later([&] { return answer(s->reserve(reserve_request{bob, bob, 1, 0, "run-bob"})); });
    later([&] { return answer(s->reserve(reserve_request{alice, alice, 1000, 0, "run-big"})); });
    later([&] { return answer(s->reserve(reserve_request{alice, capped, 5, 3, "run-capped"})); });
    later([&] { return answer(s->settle(alice, paid.id, 10)); });
    later([&] { return answer(s->reserve(reserve_request{alice, alice, 5, 0, "run-new"})); });
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    for (auto& f : answers)
      CHECK(f.wait_for(std::chrono::seconds(0)) == std::future_status::timeout);  // queued behind it
    lock.reset();
    CHECK(first.get() == "ok");
  }
  std::vector<std::string> got;
  for (auto& f : answers)
    got.push_back(f.get());
  CHECK(got == std::vector<std::string>{"over reserved", "unknown reservation", "insufficient credits",
                                        "insufficient credits", "spending cap exceeded", "ok", "ok"});
  CHECK(MUST(s->balance(alice)) == 90);              // the charge committed
  CHECK(MUST(s->available(alice)) == 90 - 10 - 5);   // the kept hold and the new one
  CHECK(MUST(s->settle(alice, kept.id, 10)) == 80);  // the refused settle left its reservation
  CHECK(MUST(s->usage(alice, {1, 10})).total == 2);
  CHECK(MUST(s->spending(alice, capped)).reserved == 0);
  CHECK(MUST(s->available(bob)) == 0);
}

TEST_CASE("metering store on postgres: reserves and settles work again after the store's connections were cut") {
  // Every connection of the store ended by the server (an administrator, a restart) while no
  // write was in flight: the next write notices before it sends and connects again, so none fails
  // (one in flight would fail as a storage error: whether it committed is unknown).
  const std::string url = shared_postgres().create_database();
  auto s = enact::test::must_ok(open_postgres(url));
  const account_hash account = test_hash(0xD7);
  MUST(s->record_payment(intent("pi_cut", account, 100)));
  (void)MUST(s->credit_payment(account, "pi_cut"));
  const reservation before = MUST(s->reserve(reserve_request{account, account, 5, 0, "run-before"}));
  {
    PGconn* admin = PQconnectdb(url.c_str());
    REQUIRE(PQstatus(admin) == CONNECTION_OK);
    PGresult* r = PQexec(admin,
                         "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() "
                         "AND pid <> pg_backend_pid()");
    CHECK(PQresultStatus(r) == PGRES_TUPLES_OK);
    CHECK(PQntuples(r) >= 1);
    PQclear(r);
    // pg_terminate_backend only signals: wait until the sessions are gone.
    for (int i = 0; i < 500; ++i) {
      PGresult* left = PQexec(admin,
                              "SELECT COUNT(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> "
                              "pg_backend_pid()");
      const bool gone = PQresultStatus(left) == PGRES_TUPLES_OK && std::string(PQgetvalue(left, 0, 0)) == "0";
      PQclear(left);
      if (gone)
        break;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    PQfinish(admin);
  }
  int failed = 0;
  std::optional<reservation> after;
  for (int i = 0; i < 3 && !after; ++i) {
    auto r = s->reserve(reserve_request{account, account, 5, 0, "run-after"});
    if (r)
      after = *r;
    else {
      CHECK(r.code() == metering_errc::storage);
      MESSAGE(r.err().message);
      ++failed;
    }
  }
  CHECK(failed == 0);
  REQUIRE(after.has_value());
  CHECK(MUST(s->settle(account, before.id, 5)) == 95);
  CHECK(MUST(s->settle(account, after->id, 5)) == 90);
  // Reads take the pool's connections, each cut one failing once before it is replaced.
  std::optional<uint64_t> available;
  for (int i = 0; i < 9 && !available; ++i)
    if (auto r = s->available(account); r)
      available = *r;
    else
      CHECK(r.code() == metering_errc::storage);
  CHECK(available == 90);
}

}  // namespace
}  // namespace enact::metering::test

// A batch's reserves read the store's clock when the batch is sent: a batch that then waits (for
// the batch lock another server holds, or behind a first reserve of the same account that waited
// for the account's row) must not write holds that start before the wait, or a hold may be
// written already expired and its run go unpaid. Each case moves the store's clock by a minute
// during the wait; the holds must last their 5 s from after it.
namespace enact::metering::test {
namespace {

PGconn* pg_session(const std::string& url) {
  PGconn* c = PQconnectdb(url.c_str());
  REQUIRE(PQstatus(c) == CONNECTION_OK);
  return c;
}

void pg_run(PGconn* c, const std::string& sql) {
  PGresult* r = PQexec(c, sql.c_str());
  const ExecStatusType st = PQresultStatus(r);
  PQclear(r);
  REQUIRE((st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK));
}

/// x's row held by another session, a lone reserve of x waiting for it (it leads), and two
/// reserves of y queued behind it: the next batch, two calls of one account, pipelined.
struct queued_behind_x {
  test_clock clock;
  std::unique_ptr<store> s;
  const hash256 x{1};
  const hash256 y{2};
  PGconn* rows = nullptr;
  std::future<result<reservation>> rx, ry1, ry2;

  explicit queued_behind_x(const std::string& url) {
    s = enact::test::must_ok(open_postgres(url, {.pool_size = 4, .now = clock.fn()}));
    for (const hash256& a : {x, y}) {
      const std::string id = "pi_" + codec::hex::encode(a).substr(0, 8);
      MUST(s->record_payment(intent(id, a, 100)));
      (void)MUST(s->credit_payment(a, id));
    }
    rows = pg_session(url);
    pg_run(rows, "BEGIN");
    pg_run(rows, "SELECT account FROM metering_accounts WHERE account = '" + codec::hex::encode(x) + "' FOR UPDATE");
    rx = hold(x, "run-x");
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    ry1 = hold(y, "run-y1");
    ry2 = hold(y, "run-y2");
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  }
  ~queued_behind_x() { PQfinish(rows); }
  queued_behind_x(const queued_behind_x&) = delete;
  queued_behind_x& operator=(const queued_behind_x&) = delete;

  std::future<result<reservation>> hold(const hash256& a, std::string run) {
    return std::async(std::launch::async, [this, a, run] {
      return s->reserve(reserve_request{a, a, 10, 0, run, std::chrono::seconds(5)});
    });
  }

  /// Both of y's holds last 5 s from the clock after the wait, hold their credits, and are paid.
  void check_y() {
    const reservation a = MUST(ry1.get());
    const reservation b = MUST(ry2.get());
    (void)MUST(rx.get());
    CHECK(a.expires_at == clock.now + 5000);
    CHECK(b.expires_at == clock.now + 5000);
    CHECK(MUST(s->available(y)) == 80);
    CHECK(MUST(s->settle(y, a.id, 10)) == 90);
    CHECK(MUST(s->settle(y, b.id, 10)) == 80);
  }
};

TEST_CASE("metering store on postgres: a batch that waited for the batch lock holds from after the wait") {
  const std::string url = shared_postgres().create_database();
  queued_behind_x q(url);
  PGconn* other = pg_session(url);  // another server's batch in progress
  pg_run(other, "SELECT pg_advisory_lock(6872612823553061902)");
  pg_run(q.rows, "COMMIT");  // x's write ends; y's batch is sent and waits for the batch lock
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  q.clock.now += 60000;
  pg_run(other, "SELECT pg_advisory_unlock(6872612823553061902)");
  q.check_y();
  PQfinish(other);
}

TEST_CASE("metering store on postgres: the second reserve of an account in a batch holds from after the first's wait") {
  const std::string url = shared_postgres().create_database();
  queued_behind_x q(url);
  PGconn* other = pg_session(url);  // another server's transaction on y's row
  pg_run(other, "BEGIN");
  pg_run(other, "SELECT account FROM metering_accounts WHERE account = '" + codec::hex::encode(q.y) + "' FOR UPDATE");
  pg_run(q.rows, "COMMIT");  // x's write ends; y's batch is sent and its first reserve waits for y
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  q.clock.now += 60000;
  pg_run(other, "COMMIT");
  q.check_y();
  PQfinish(other);
}

TEST_CASE("metering store on postgres: batches of different accounts do not wait for each other") {
  const std::string url = shared_postgres().create_database();
  queued_behind_x q(url);
  // Another server's batch of calls over x, in progress: the batch lock shared, x's lock its own.
  PGconn* other = pg_session(url);
  pg_run(other, "BEGIN");
  pg_run(other, "SELECT metering_batch_lock_v2('{" + codec::hex::encode(q.x) + "}')");
  pg_run(q.rows, "COMMIT");  // x's lone write ends; y's batch is sent, and takes no lock of x's
  CHECK(q.ry1.wait_for(std::chrono::seconds(5)) == std::future_status::ready);
  CHECK(q.ry2.wait_for(std::chrono::seconds(5)) == std::future_status::ready);
  // Not waited: the holds start from the clock they were sent with.
  q.check_y();

  // A batch naming x waits for x's lock, wherever x is in its list, and marks itself waited.
  PGconn* third = pg_session(url);
  pg_run(third, "SET lock_timeout = '300ms'");
  pg_run(third, "BEGIN");
  PGresult* r = PQexec(
      third,
      ("SELECT metering_batch_lock_v2('{" + codec::hex::encode(q.y) + "," + codec::hex::encode(q.x) + "}')").c_str());
  CHECK(PQresultStatus(r) == PGRES_FATAL_ERROR);
  CHECK(std::string(PQresultErrorMessage(r)).find("lock timeout") != std::string::npos);
  PQclear(r);
  pg_run(third, "ROLLBACK");
  pg_run(other, "COMMIT");
  PQfinish(third);
  PQfinish(other);
}

TEST_CASE("metering store on postgres: batches naming the same accounts in opposite orders do not deadlock") {
  const std::string url = shared_postgres().create_database();
  const auto s = enact::test::must_ok(open_postgres(url));  // creates the functions
  const std::string a = codec::hex::encode(hash256{5});
  const std::string b = codec::hex::encode(hash256{6});
  PGconn* one = pg_session(url);
  PGconn* two = pg_session(url);
  pg_run(one, "BEGIN");
  pg_run(one, "SELECT metering_batch_lock_v2('{" + a + "," + b + "}')");
  pg_run(two, "SET lock_timeout = '2s'");
  pg_run(two, "BEGIN");
  // two names them b, a: it waits for the first of them in key order, holding neither, so one
  // finishes and two then takes both.
  auto second = std::async(std::launch::async, [&] {
    PGresult* r = PQexec(two, ("SELECT metering_batch_lock_v2('{" + b + "," + a + "}')").c_str());
    const bool ok = PQresultStatus(r) == PGRES_TUPLES_OK;
    PQclear(r);
    return ok;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  PGresult* held = PQexec(one, "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted");
  REQUIRE(PQresultStatus(held) == PGRES_TUPLES_OK);
  CHECK(std::string(PQgetvalue(held, 0, 0)) == "1");  // two waits, for one lock only
  PQclear(held);
  pg_run(one, "COMMIT");
  CHECK(second.get());
  pg_run(two, "COMMIT");
  PQfinish(one);
  PQfinish(two);
}

TEST_CASE("metering store on postgres: a database of schema version 3 moves to 4, keeping its data") {
  // Version 3 is the schema before the single-use values: made by the first three steps, with a
  // credited account in it; a second server opening meanwhile finds version 4.
  const std::string url = shared_postgres().create_database();
  const std::vector<std::string> steps = sql::schema("bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY");
  REQUIRE(steps.size() >= 4);
  const hash256 account{8};
  PGconn* c = pg_session(url);
  for (size_t i = 0; i < 3; ++i)
    pg_run(c, steps[i]);
  pg_run(c, "CREATE TABLE metering_schema (version integer NOT NULL); INSERT INTO metering_schema VALUES (3)");
  pg_run(c, "INSERT INTO metering_accounts (account, balance) VALUES ('" + codec::hex::encode(account) + "', 700)");
  {
    PGresult* r = PQexec(c, "SELECT 1 FROM metering_nonces");
    CHECK(PQresultStatus(r) == PGRES_FATAL_ERROR);
    PQclear(r);
  }
  auto s = enact::test::must_ok(open_postgres(url));
  auto other = enact::test::must_ok(open_postgres(url));
  CHECK(MUST(s->balance(account)) == 700);
  const hash256 nonce{4};
  CHECK(MUST(s->use_once(nonce, system_now() + 600'000)));
  CHECK_FALSE(MUST(other->use_once(nonce, system_now() + 600'000)));
  PGresult* v = PQexec(c, "SELECT version FROM metering_schema");
  REQUIRE(PQresultStatus(v) == PGRES_TUPLES_OK);
  CHECK(std::string(PQgetvalue(v, 0, 0)) == std::to_string(steps.size()));
  PQclear(v);
  PQfinish(c);
}

TEST_CASE("metering store on postgres: a database of schema version 4 moves to 5; its payments can be reversed") {
  const std::string url = shared_postgres().create_database();
  const std::vector<std::string> steps = sql::schema("bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY");
  REQUIRE(steps.size() == 5);
  const hash256 account{9};
  const std::string a = "'" + codec::hex::encode(account) + "'";
  PGconn* c = pg_session(url);
  for (size_t i = 0; i < 4; ++i)
    pg_run(c, steps[i]);
  pg_run(c, "CREATE TABLE metering_schema (version integer NOT NULL); INSERT INTO metering_schema VALUES (4)");
  pg_run(c, "INSERT INTO metering_accounts (account, balance) VALUES (" + a + ", 300)");
  pg_run(c,
         "INSERT INTO metering_payments (id, account, amount, provider, created_at, credited_at, balance_after) "
         "VALUES ('pi_v4', " +
             a + ", 700, 'stripe', 1, 2, 700)");
  auto s = enact::test::must_ok(open_postgres(url));
  CHECK(MUST(s->balance(account)) == 300);
  const reversal_result r =
      MUST(s->reverse_payment(reversal_request{"evt_v4", "pi_v4", "stripe", reversal_kind::refund, "ch_v4", 700}));
  CHECK(r.balance == 0);
  CHECK(r.owed == 400);
  PGresult* v = PQexec(c, "SELECT version FROM metering_schema");
  REQUIRE(PQresultStatus(v) == PGRES_TUPLES_OK);
  CHECK(std::string(PQgetvalue(v, 0, 0)) == "5");
  PQclear(v);
  PQfinish(c);
}

}  // namespace
}  // namespace enact::metering::test
