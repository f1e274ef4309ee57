// SPDX-License-Identifier: Apache-2.0
// The SQLite trigger store: the store suite on a database in a fresh temporary directory, and what
// belongs to this backend alone — usage keys are in the file only sealed, a schema newer than the
// build is refused, and concurrent intakes all commit through the group-commit writer.
#include <doctest/doctest.h>

#include <sqlite3.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include "enact/codec/base64.hpp"
#include "enact/crypto/aes_gcm.hpp"
#include "enact/crypto/keccak.hpp"
#include "enact/crypto/random.hpp"
#include "store_suite.hpp"
#include "must.hpp"
#include "support.hpp"
#include "triggers/ids.hpp"
#include "triggers/sqlite_store.hpp"

namespace enact::triggers::test {
namespace {

using namespace std::chrono_literals;

using enact::test::temp_dir;

class sqlite_backend final : public backend {
 public:
  explicit sqlite_backend(bool full) : full_(full) {}
  std::unique_ptr<store> open() override {
    sqlite_options o;
    o.synchronous_full = full_;
    return enact::test::must_ok(sqlite_store::open(db_path(), o));
  }
  [[nodiscard]] std::string db_path() const { return (dir_.path() / "triggers.sqlite").string(); }

 private:
  temp_dir dir_{"enact-triggers"};
  bool full_;
};

std::string file_bytes(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

/// Every file of the database: the main file, the WAL and the shared-memory index.
std::string database_bytes(const std::string& db) {
  std::string all;
  for (const char* suffix : {"", "-wal", "-shm"})
    if (std::filesystem::exists(db + suffix))
      all += file_bytes(db + suffix);
  return all;
}

/// A webhook trigger of alice's named `name`, created at t0, with the default run limits.
trigger alice_trigger(std::string name) {
  trigger t;
  t.id = new_trigger_id();
  t.owner = "alice";
  t.name = std::move(name);
  t.action_cid = "QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG";
  t.sealed_usage_key = bytes{1};
  t.created_at = t.updated_at = t0;
  return t;
}

}  // namespace

TEST_CASE("trigger store: sqlite, synchronous FULL") {
  run_store_suite([] { return std::make_unique<sqlite_backend>(true); });
}

TEST_CASE("trigger store: sqlite, synchronous NORMAL") {
  run_store_suite([] { return std::make_unique<sqlite_backend>(false); });
}

TEST_CASE("trigger store de-duplication: sqlite") {
  run_dedup_suite([] { return std::make_unique<sqlite_backend>(true); });
}

TEST_CASE("sqlite store: usage keys are in the database file only sealed") {
  sqlite_backend b(true);
  // A usage key as the core issues it (32 random bytes, base64), sealed with AES-256-GCM the way
  // the service seals it (seal.hpp: the TEE's PKP symmetric key; here a random key stands in).
  Secret raw = crypto::random_secret(32);
  const std::string key = codec::base64::encode(raw.view());
  Secret sealing_key = crypto::random_secret(32);
  const bytes sealed = crypto::aes_gcm::encrypt(sealing_key, as_bytes(key)).value();
  std::string trigger_id;
  {
    auto s = b.open();
    trigger t;
    t.id = new_trigger_id();
    trigger_id = t.id;
    t.owner = "alice";
    t.name = "sealed";
    t.action_cid = "QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG";
    t.sealed_usage_key = sealed;
    t.usage_key_hash = crypto::keccak256(std::string_view(key));
    t.created_at = t.updated_at = t0;
    REQUIRE(s->create_trigger(t, std::nullopt).has_value());
    REQUIRE(s->get_trigger("alice", t.id)->sealed_usage_key == sealed);
    // Checked while the WAL still holds the write, and again after close (checkpointed).
    const std::string open_bytes = database_bytes(b.db_path());
    CHECK(open_bytes.find(trigger_id) != std::string::npos);  // the search itself works
    CHECK(open_bytes.find(key) == std::string::npos);
    CHECK(open_bytes.find(std::string(as_chars(raw.view()))) == std::string::npos);
  }
  const std::string closed_bytes = database_bytes(b.db_path());
  CHECK(closed_bytes.find(trigger_id) != std::string::npos);
  CHECK(closed_bytes.find(key) == std::string::npos);
  CHECK(closed_bytes.find(key.substr(0, 20)) == std::string::npos);
  CHECK(closed_bytes.find(std::string(as_chars(raw.view()))) == std::string::npos);
  // What is there opens again with the sealing key.
  const auto opened = crypto::aes_gcm::decrypt(sealing_key, sealed);
  REQUIRE(opened.has_value());
  CHECK(std::string(as_chars(*opened)) == key);
}

TEST_CASE("sqlite store: a schema newer than this build is refused") {
  sqlite_backend b(true);
  { auto s = b.open(); }
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(b.db_path().c_str(), &db) == SQLITE_OK);
  REQUIRE(sqlite3_exec(db, "PRAGMA user_version = 99", nullptr, nullptr, nullptr) == SQLITE_OK);
  sqlite3_close(db);
  auto s = sqlite_store::open(b.db_path());
  REQUIRE(!s);
  CHECK(s.code() == store_errc::storage);
  CHECK(s.err().message.find("newer") != std::string::npos);
}

TEST_CASE("sqlite store: concurrent intakes all commit, each once") {
  sqlite_backend b(true);
  auto opened = b.open();
  auto& s = dynamic_cast<sqlite_store&>(*opened);
  trigger t = alice_trigger("busy");
  t.max_runs_per_minute = kMaxRunsPerMinuteLimit;  // 480 runs at one instant
  t.max_queued_runs = kMaxQueuedRunsLimit;
  REQUIRE(s.create_trigger(t, std::nullopt).has_value());
  trigger off = t;
  off.id = new_trigger_id();
  off.enabled = false;
  REQUIRE(s.create_trigger(off, std::nullopt).has_value());

  // Good and refused writes interleave in the same groups; a refused one rolls back alone.
  constexpr int kThreads = 16, kEach = 40;
  std::atomic<int> ok{0}, refused{0}, other{0};
  std::vector<std::thread> threads;
  for (int k = 0; k < kThreads; ++k)
    threads.emplace_back([&, k] {
      for (int i = 0; i < kEach; ++i) {
        const bool good = (i + k) % 4 != 0;
        new_run r{new_run_id(), good ? t.id : off.id, json::object{{"k", k}, {"i", i}}, t0};
        const auto q = s.enqueue_run(r, trigger_type::webhook);
        if (q)
          ++ok;
        else if (q.code() == store_errc::disabled)
          ++refused;
        else
          ++other;
      }
    });
  for (auto& th : threads)
    th.join();
  CHECK(other == 0);
  CHECK(ok == kThreads * kEach * 3 / 4);
  CHECK(refused == kThreads * kEach / 4);
  CHECK(s.list_runs("alice", t.id, page{1, 0})->total == static_cast<uint64_t>(ok.load()));
  CHECK(s.list_runs("alice", off.id, page{1, 0})->total == 0);
  const auto stats = s.stats();
  CHECK(stats.writes >= static_cast<uint64_t>(kThreads * kEach));
  MESSAGE("group commit: " << stats.writes << " writes in " << stats.commits << " transactions");
}

namespace {

/// Runs `sql` on the database file with a connection of its own; the store must be closed.
void exec_sql(const std::string& path, const char* sql) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  char* err = nullptr;
  const int rc = sqlite3_exec(db, sql, nullptr, nullptr, &err);
  const std::string message = err != nullptr ? err : "";
  sqlite3_free(err);
  sqlite3_close(db);
  REQUIRE_MESSAGE(rc == SQLITE_OK, message);
}

/// The first column of the first row of `sql`, as text ("" without a row).
std::string sql_text(const std::string& path, const char* sql) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  REQUIRE(sqlite3_prepare_v2(db, sql, -1, &st, nullptr) == SQLITE_OK);
  std::string out;
  if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0) != nullptr)
    out = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
  sqlite3_finalize(st);
  sqlite3_close(db);
  return out;
}

}  // namespace

TEST_CASE("sqlite store: a version 5 file migrates with its schedules, de-duplication and triggers kept") {
  sqlite_backend b(true);
  const std::string path = b.db_path();
  trigger sched = alice_trigger("every minute");
  sched.type = trigger_type::schedule;
  sched.config = api::schedule_config{"0 * * * * *", "UTC"};
  trigger hook = alice_trigger("deliveries");
  hook.config = api::webhook_config{"x-delivery"};
  const auto delivery = [&](const char* id) {
    return new_run{new_run_id(), hook.id,
                   json::object{{"headers", json::object{{"x-delivery", id}}}, {"event", json::object{}}}, t0};
  };
  std::string first_delivery;
  {
    auto s = b.open();
    REQUIRE(s->create_trigger(sched, schedule_state{t0 + 60s, t0}).has_value());
    REQUIRE(s->create_trigger(hook, std::nullopt).has_value());
    first_delivery = s->enqueue_run(delivery("d-1"), trigger_type::webhook).value().id;
  }
  // Back to version 5's layout: schedule_state a rowid table, runs_dedup over every run, no
  // disabled_reason or credit_failures (version 7).
  exec_sql(path, R"sql(
ALTER TABLE triggers DROP COLUMN disabled_reason;
ALTER TABLE triggers DROP COLUMN credit_failures;
CREATE TABLE schedule_state_5 (
  trigger_id   TEXT    PRIMARY KEY REFERENCES triggers(id) ON DELETE CASCADE,
  next_due     INTEGER NOT NULL,
  last_planned INTEGER
);
INSERT INTO schedule_state_5 SELECT trigger_id, next_due, last_planned FROM schedule_state;
DROP TABLE schedule_state;
ALTER TABLE schedule_state_5 RENAME TO schedule_state;
DROP INDEX runs_dedup;
CREATE UNIQUE INDEX runs_dedup ON runs(trigger_id, dedup_key);
PRAGMA user_version = 5;
)sql");
  CHECK(sql_text(path, "SELECT sql FROM sqlite_master WHERE name = 'schedule_state'").find("WITHOUT ROWID") ==
        std::string::npos);
  {
    auto s = b.open();
    // The schedule's state came across: it fires once for its due time, then not again.
    const auto st = s->get_schedule(sched.id).value();
    REQUIRE(st.has_value());
    REQUIRE(st->state.has_value());
    CHECK(st->state->next_due == t0 + 60s);
    CHECK(st->state->last_planned == std::optional<time_point>(t0));
    const new_run r{new_run_id(), sched.id, json::object{{"n", 1}}, t0 + 60s};
    const auto fired = s->fire_schedule(sched.id, t0 + 60s, t0 + 60s, r, t0 + 120s).value();
    REQUIRE(fired.has_value());
    CHECK(fired->id == r.id);
    const new_run again{new_run_id(), sched.id, json::object{{"n", 2}}, t0 + 60s};
    CHECK(!s->fire_schedule(sched.id, t0 + 60s, t0 + 60s, again, t0 + 120s).value().has_value());
    CHECK(s->get_schedule(sched.id).value()->state->next_due == t0 + 120s);
    // A delivery seen before the migration still answers its first run; a new one queues.
    CHECK(s->enqueue_run(delivery("d-1"), trigger_type::webhook).value().id == first_delivery);
    const new_run d2 = delivery("d-2");
    CHECK(s->enqueue_run(d2, trigger_type::webhook).value().id == d2.id);
    CHECK(s->enqueue_run(delivery("d-2"), trigger_type::webhook).value().id == d2.id);
    CHECK(s->list_runs("alice", hook.id, page{10, 0})->total == 2);
    // Triggers from before version 7: none disabled by the service, no credit failures counted.
    const trigger migrated = s->get_trigger("alice", sched.id).value();
    CHECK(migrated.enabled);
    CHECK(!migrated.disabled_reason);
    CHECK(migrated.credit_failures == 0);
    // Deleting the trigger still takes its schedule state along (the foreign key's cascade).
    REQUIRE(s->delete_trigger("alice", sched.id).has_value());
    CHECK(!s->get_schedule(sched.id).value().has_value());
  }
  CHECK(sql_text(path, "PRAGMA user_version") == std::to_string(sqlite_store::kSchemaVersion));
  CHECK(sql_text(path, "SELECT sql FROM sqlite_master WHERE name = 'schedule_state'").find("WITHOUT ROWID") !=
        std::string::npos);
  CHECK(sql_text(path, "SELECT sql FROM sqlite_master WHERE name = 'runs_dedup'").find("WHERE dedup_key IS NOT NULL") !=
        std::string::npos);
}

TEST_CASE("sqlite store: runs without a de-duplication key are not in its index") {
  sqlite_backend b(true);
  const trigger hook = alice_trigger("plain");
  {
    auto s = b.open();
    REQUIRE(s->create_trigger(hook, std::nullopt).has_value());
    for (int i = 0; i < 3; ++i)
      REQUIRE(s->enqueue_run(new_run{new_run_id(), hook.id, json::object{{"i", i}}, t0}, trigger_type::webhook));
  }
  CHECK(sql_text(b.db_path(), "SELECT COUNT(*) FROM runs") == "3");
  // The index's pages hold no entry for them (version 5's index over every run held 3).
  CHECK(sql_text(b.db_path(),
                 "SELECT COALESCE(SUM(ncell), 0) FROM dbstat WHERE name = 'runs_dedup' AND "
                 "pagetype = 'leaf'") == "0");
  CHECK(sql_text(b.db_path(),
                 "SELECT COALESCE(SUM(ncell), 0) FROM dbstat WHERE name = 'runs_by_trigger' AND "
                 "pagetype = 'leaf'") == "3");
}

}  // namespace enact::triggers::test
