// SPDX-License-Identifier: Apache-2.0
// The PostgreSQL trigger store: the store suite on a real PostgreSQL server (postgres_fixture.hpp,
// one fresh database per case), and what belongs to a shared store alone — two store instances
// (two enact-server processes) on one database never lease the same run, a lease that expired
// with its worker is taken over by the other instance, a server restart keeps everything
// (including leases: a shared store never releases them at start), concurrent opens create the
// schema once, a newer schema is refused, usage keys reach the database only sealed, a failed
// connection never reports the URL's password, and creations of one owner's triggers on several
// instances at once never pass the owner's limit.
#include <doctest/doctest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include "enact/codec/base64.hpp"
#include "enact/crypto/aes_gcm.hpp"
#include "enact/crypto/keccak.hpp"
#include "enact/crypto/random.hpp"
#include "enact/crypto/sha2.hpp"
#include "postgres_fixture.hpp"
#include "store_suite.hpp"
#include "must.hpp"
#include "support.hpp"
#include "triggers/ids.hpp"
#include "triggers/pg_store.hpp"

namespace enact::triggers::test {
namespace {

using namespace std::chrono_literals;

std::unique_ptr<pg_store> open_store(const std::string& url, size_t connections = 4) {
  pg_options o;
  o.connections = connections;
  return enact::test::must_ok(pg_store::open(url, o));
}

class pg_backend final : public backend {
 public:
  pg_backend() : url_(shared_postgres().create_database()) {}
  std::unique_ptr<store> open() override { return open_store(url_); }

 private:
  std::string url_;
};

trigger webhook_trigger(std::string owner) {
  trigger t;
  t.id = new_trigger_id();
  t.owner = std::move(owner);
  t.name = "shared";
  t.action_cid = "QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG";
  t.sealed_usage_key = bytes{7, 7, 7};
  t.usage_key_hash = crypto::keccak256(std::string_view("key of " + t.id));
  t.created_at = t.updated_at = t0;
  // These cases queue hundreds of runs at one instant; the limits have their own suite case.
  t.max_runs_per_minute = kMaxRunsPerMinuteLimit;
  t.max_queued_runs = kMaxQueuedRunsLimit;
  return t;
}

/// The database name of a fixture URL ("postgresql:///<name>?host=…").
std::string database_of(const std::string& url) {
  const size_t from = std::string_view("postgresql:///").size();
  return url.substr(from, url.find('?') - from);
}

std::string file_bytes(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

}  // namespace

TEST_CASE("trigger store: postgres") {
  run_store_suite([] { return std::make_unique<pg_backend>(); });
}

TEST_CASE("trigger store de-duplication: postgres") {
  run_dedup_suite([] { return std::make_unique<pg_backend>(); });
}

TEST_CASE("postgres store: two instances on one database never lease the same run") {
  const std::string url = shared_postgres().create_database();
  auto a = open_store(url);
  auto b = open_store(url);
  const trigger t = webhook_trigger("alice");
  REQUIRE(a->create_trigger(t, std::nullopt).has_value());
  constexpr int kRuns = 400;
  for (int i = 0; i < kRuns; ++i) {
    // Written through either instance: both see one queue.
    store& via = i % 2 == 0 ? *a : *b;
    REQUIRE(via.enqueue_run(new_run{new_run_id(), t.id, json::object{{"i", i}}, t0}, trigger_type::webhook));
  }

  // Four workers per instance, each leasing a few runs at a time and completing them.
  constexpr int kWorkersEach = 4;
  std::mutex mu;
  std::map<std::string, int> handed;
  std::map<std::string, int> per_instance;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int k = 0; k < 2 * kWorkersEach; ++k)
    threads.emplace_back([&, k] {
      store& s = k < kWorkersEach ? *a : *b;
      const std::string me = std::string(k < kWorkersEach ? "a-" : "b-") + std::to_string(k);
      for (;;) {
        auto got = s.lease_runs(lease(me, t0 + 1s, 3));
        if (!got) {
          ++failures;
          return;
        }
        if (got->empty())
          return;
        for (const auto& l : *got) {
          {
            std::lock_guard lock(mu);
            ++handed[l.r.id];
            ++per_instance[me.substr(0, 1)];
          }
          if (!s.complete_run(ref_of(l), json::value(k), t0 + 2s))
            ++failures;
        }
      }
    });
  for (auto& th : threads)
    th.join();
  CHECK(failures == 0);
  CHECK(handed.size() == kRuns);
  int twice = 0;
  for (const auto& [id, n] : handed)
    if (n != 1)
      ++twice;
  CHECK_MESSAGE(twice == 0, twice << " runs were handed out more than once");
  MESSAGE("runs leased by instance a: " << per_instance["a"] << ", by b: " << per_instance["b"]);
  const auto all = b->list_runs("alice", t.id, page{kRuns, 0});
  REQUIRE(all.has_value());
  CHECK(all->total == kRuns);
  int done = 0;
  for (const auto& r : all->items)
    done += r.status == run_status::success && r.attempts == 1 ? 1 : 0;
  CHECK(done == kRuns);
}

TEST_CASE("postgres store: an expired lease is taken over by another instance") {
  const std::string url = shared_postgres().create_database();
  auto dead = open_store(url);
  auto live = open_store(url);
  const trigger t = webhook_trigger("alice");
  REQUIRE(dead->create_trigger(t, std::nullopt).has_value());
  const auto queued = live->enqueue_run(new_run{new_run_id(), t.id, json::object{}, t0}, trigger_type::webhook);
  REQUIRE(queued.has_value());

  const auto first = dead->lease_runs(lease("instance-a/0", t0, 1, 5s));
  REQUIRE(first.has_value());
  REQUIRE(first->size() == 1);
  // Held: the other instance finds nothing while the lease lasts.
  CHECK(live->lease_runs(lease("instance-b/0", t0 + 4999ms, 1))->empty());
  // Instance a stops answering; once its lease expired, b takes the run as attempt 2.
  const auto second = live->lease_runs(lease("instance-b/0", t0 + 5s, 1, 5s));
  REQUIRE(second.has_value());
  REQUIRE(second->size() == 1);
  CHECK(second->at(0).r.id == queued->id);
  CHECK(second->at(0).r.attempts == 2);
  CHECK(second->at(0).r.lease_owner == "instance-b/0");
  CHECK(second->at(0).r.started_at == t0);
  // a's late answer is fenced off; b's is recorded.
  CHECK(dead->complete_run(ref_of(first->at(0)), json::value("late"), t0 + 6s).code() == store_errc::lease_lost);
  REQUIRE(live->complete_run(ref_of(second->at(0)), json::value("done"), t0 + 6s).has_value());
  const auto r = dead->get_run("alice", queued->id);
  REQUIRE(r.has_value());
  CHECK(r->status == run_status::success);
  CHECK(r->response == std::optional<json::value>(json::value("done")));
  CHECK(r->attempts == 2);
}

TEST_CASE("postgres store: a browser session signed in on one instance, out on another") {
  // The session cases of the store suite run on one store; here two instances share them.
  const std::string url = shared_postgres().create_database();
  auto a = open_store(url);
  auto b = open_store(url);
  const hash256 pre = crypto::sha256(as_bytes(std::string_view("pre")));
  const hash256 in = crypto::sha256(as_bytes(std::string_view("in")));
  REQUIRE(a->create_session({pre, "", "nonce0001", t0, t0 + 10min}).has_value());
  CHECK(b->create_session({pre, "", "nonce0002", t0, t0 + 10min}).code() == store_errc::conflict);
  const browser_session signed_in{in, "0xabc", "", t0, t0 + 30min};
  REQUIRE(b->sign_in_session(pre, "nonce0001", signed_in, t0 + 1min).has_value());
  CHECK(a->sign_in_session(pre, "nonce0001", signed_in, t0 + 1min).code() == store_errc::not_found);
  CHECK(a->find_session(in).value().user_id == "0xabc");
  REQUIRE(a->end_session(in).has_value());
  CHECK(b->find_session(in).code() == store_errc::not_found);
  CHECK(b->end_session(in).code() == store_errc::not_found);
}

TEST_CASE("postgres store: a server restart keeps everything, leases included") {
  postgres_server server(postgres_server::options{true});  // fsync on: a real commit path
  const std::string url = server.create_database();
  const trigger t = webhook_trigger("alice");
  std::string leased_id, done_id, waiting_id;
  const hash256 token_hash = crypto::keccak256(std::string_view("restart token"));
  {
    auto s = open_store(url);
    REQUIRE(s->create_trigger(t, std::nullopt).has_value());
    for (int i = 0; i < 3; ++i)
      REQUIRE(s->enqueue_run(new_run{new_run_id(), t.id, json::object{{"i", i}}, t0 + std::chrono::seconds(i)},
                             trigger_type::webhook));
    const auto got = s->lease_runs(lease("w", t0 + 10s, 2, 1h));
    REQUIRE(got.has_value());
    REQUIRE(got->size() == 2);
    done_id = got->at(0).r.id;
    leased_id = got->at(1).r.id;
    REQUIRE(s->complete_run(ref_of(got->at(0)), json::object{{"ok", true}}, t0 + 11s).has_value());
    REQUIRE(s->insert_token(token_record{token_hash, "alice", "cli", t0, t0 + 720h, false}).has_value());
    const auto all = s->list_runs("alice", t.id, page{});
    REQUIRE(all.has_value());
    waiting_id = all->items.front().id;  // the newest: still queued
  }
  server.stop();
  server.start();
  auto s = open_store(url);
  CHECK(s->get_trigger("alice", t.id)->name == "shared");
  const auto done = s->get_run("alice", done_id);
  REQUIRE(done.has_value());
  CHECK(done->status == run_status::success);
  CHECK(done->response == std::optional<json::value>(json::value(json::object{{"ok", true}})));
  // The lease survives: another instance's worker may still be running it.
  const auto leased = s->get_run("alice", leased_id);
  REQUIRE(leased.has_value());
  CHECK(leased->status == run_status::running);
  CHECK(leased->lease_owner == "w");
  CHECK(leased->lease_expires_at == t0 + 10s + 1h);
  CHECK(s->get_run("alice", waiting_id)->status == run_status::queued);
  CHECK(s->find_token(token_hash)->user_id == "alice");
  // Only the queued run is handed out before the lease expires.
  const auto next = s->lease_runs(lease("w2", t0 + 20s, 5));
  REQUIRE(next.has_value());
  REQUIRE(next->size() == 1);
  CHECK(next->at(0).r.id == waiting_id);
}

TEST_CASE("postgres store: instances opening at once create the schema once") {
  const std::string url = shared_postgres().create_database();
  constexpr int kInstances = 4;
  std::vector<std::unique_ptr<pg_store>> stores(kInstances);
  std::vector<std::string> errors(kInstances);
  std::vector<std::thread> threads;
  for (int k = 0; k < kInstances; ++k)
    threads.emplace_back([&, k] {
      auto s = pg_store::open(url);
      if (s)
        stores[k] = std::move(s).value();
      else
        errors[k] = s.err().message;
    });
  for (auto& th : threads)
    th.join();
  for (int k = 0; k < kInstances; ++k) {
    CHECK_MESSAGE(errors[k].empty(), errors[k]);
    REQUIRE(stores[k] != nullptr);
  }
  const trigger t = webhook_trigger("alice");
  REQUIRE(stores[0]->create_trigger(t, std::nullopt).has_value());
  CHECK(stores[kInstances - 1]->find_trigger(t.id)->id == t.id);
}

TEST_CASE("postgres store: instances creating one owner's triggers at once never pass its limit") {
  // docs/triggers.md "PostgreSQL store": the owner's count is taken under an advisory lock held to
  // the commit, so the limit holds across a fleet, not only in one process.
  const std::string url = shared_postgres().create_database();
  constexpr int kInstances = 3;
  constexpr int kThreads = 4;
  constexpr int kEach = 5;
  constexpr uint64_t kLimit = 7;
  std::vector<std::unique_ptr<pg_store>> stores;
  for (int k = 0; k < kInstances; ++k)
    stores.push_back(open_store(url, kThreads));
  std::atomic<int> made{0}, refused{0};
  std::mutex mu;
  std::vector<std::string> errors;
  std::vector<std::thread> threads;
  for (int k = 0; k < kInstances * kThreads; ++k)
    threads.emplace_back([&, k] {
      for (int i = 0; i < kEach; ++i) {
        const auto r = stores[k % kInstances]->create_trigger(webhook_trigger("mallory"), std::nullopt, kLimit);
        if (r)
          ++made;
        else if (r.code() == store_errc::limit_reached)
          ++refused;
        else {
          std::lock_guard lock(mu);
          errors.push_back(r.err().message);
        }
      }
    });
  for (auto& th : threads)
    th.join();
  CHECK_MESSAGE(errors.empty(), (errors.empty() ? "" : errors.front()));
  CHECK(made.load() == static_cast<int>(kLimit));
  CHECK(refused.load() == kInstances * kThreads * kEach - static_cast<int>(kLimit));
  CHECK(stores[0]->list_triggers("mallory", page{100, 0})->total == kLimit);
  // Another owner is not held up by mallory's limit.
  CHECK(stores[1]->create_trigger(webhook_trigger("alice"), std::nullopt, kLimit).has_value());
}

TEST_CASE("postgres store: a schema newer than this build is refused") {
  const std::string url = shared_postgres().create_database();
  { auto s = open_store(url); }
  shared_postgres().exec(database_of(url), "UPDATE trigger_store_schema SET version = 99");
  auto s = pg_store::open(url);
  REQUIRE(!s);
  CHECK(s.code() == store_errc::storage);
  CHECK(s.err().message.find("newer") != std::string::npos);
}

TEST_CASE("postgres store: a version 4 schema migrates, de-duplication kept, keyless runs out of its index") {
  const std::string url = shared_postgres().create_database();
  const std::string db = database_of(url);
  trigger hook = webhook_trigger("alice");
  hook.config = api::webhook_config{"x-delivery"};
  const auto delivery = [&](const char* id) {
    return new_run{new_run_id(), hook.id,
                   json::object{{"headers", json::object{{"x-delivery", id}}}, {"event", json::object{}}}, t0};
  };
  std::string first_delivery;
  {
    auto s = open_store(url);
    REQUIRE(s->create_trigger(hook, std::nullopt).has_value());
    first_delivery = s->enqueue_run(delivery("d-1"), trigger_type::webhook).value().id;
  }
  // Back to version 4's index over every run, and its triggers without disabled_reason and
  // credit_failures (version 6).
  shared_postgres().exec(db,
                         "DROP INDEX runs_dedup; CREATE UNIQUE INDEX runs_dedup ON runs(trigger_id, dedup_key); "
                         "ALTER TABLE triggers DROP COLUMN disabled_reason, DROP COLUMN credit_failures; "
                         "UPDATE trigger_store_schema SET version = 4");
  CHECK(shared_postgres()
            .query_value(db, "SELECT indexdef FROM pg_indexes WHERE indexname = 'runs_dedup'")
            .find("WHERE") == std::string::npos);
  auto s = open_store(url);
  CHECK(shared_postgres().query_value(db, "SELECT version FROM trigger_store_schema") ==
        std::to_string(pg_store::kSchemaVersion));
  CHECK(shared_postgres()
            .query_value(db, "SELECT indexdef FROM pg_indexes WHERE indexname = 'runs_dedup'")
            .find("WHERE (dedup_key IS NOT NULL)") != std::string::npos);
  // A delivery seen before the migration still answers its first run; a new one queues once,
  // also when its deliveries race (the partial index's ON CONFLICT decides).
  CHECK(s->enqueue_run(delivery("d-1"), trigger_type::webhook).value().id == first_delivery);
  const trigger migrated = s->get_trigger("alice", hook.id).value();
  CHECK(migrated.enabled);
  CHECK(!migrated.disabled_reason);
  CHECK(migrated.credit_failures == 0);
  constexpr int kRacers = 8;
  std::vector<std::string> ids(kRacers);
  std::vector<std::thread> threads;
  for (int k = 0; k < kRacers; ++k)
    threads.emplace_back([&, k] {
      const auto r = s->enqueue_run(delivery("d-2"), trigger_type::webhook);
      ids[k] = r ? r->id : "error: " + r.err().message;
    });
  for (auto& th : threads)
    th.join();
  for (const auto& id : ids)
    CHECK(id == ids.front());
  CHECK(is_id(ids.front(), "run_"));
  // A trigger without the setting queues every delivery.
  const trigger plain = webhook_trigger("alice");
  REQUIRE(s->create_trigger(plain, std::nullopt).has_value());
  for (int i = 0; i < 3; ++i)
    REQUIRE(s->enqueue_run(new_run{new_run_id(), plain.id, json::object{{"i", i}}, t0}, trigger_type::webhook));
  CHECK(s->list_runs("alice", hook.id, page{10, 0})->total == 2);
  CHECK(s->list_runs("alice", plain.id, page{10, 0})->total == 3);
}

TEST_CASE("postgres store: usage keys are in the database files only sealed") {
  const std::string url = shared_postgres().create_database();
  Secret raw = crypto::random_secret(32);
  const std::string key = codec::base64::encode(raw.view());
  Secret sealing_key = crypto::random_secret(32);
  const bytes sealed = crypto::aes_gcm::encrypt(sealing_key, as_bytes(key)).value();
  trigger t = webhook_trigger("alice");
  t.sealed_usage_key = sealed;
  t.usage_key_hash = crypto::keccak256(std::string_view(key));
  {
    auto s = open_store(url);
    REQUIRE(s->create_trigger(t, std::nullopt).has_value());
    CHECK(s->get_trigger("alice", t.id)->sealed_usage_key == sealed);
  }
  postgres_server& pg = shared_postgres();
  pg.exec("postgres", "CHECKPOINT");  // table pages written to the data files
  // This database's files, and the write-ahead log that carried the insert.
  const std::string oid =
      pg.query_value("postgres", "SELECT oid FROM pg_database WHERE datname = '" + database_of(url) + "'");
  std::string all;
  for (const auto& dir : {pg.data_dir() / "base" / oid, pg.data_dir() / "pg_wal"})
    for (const auto& e : std::filesystem::recursive_directory_iterator(dir))
      if (e.is_regular_file())
        all += file_bytes(e.path());
  CHECK(all.find(t.id) != std::string::npos);  // the search itself works
  CHECK(all.find(key) == std::string::npos);
  CHECK(all.find(std::string(as_chars(raw.view()))) == std::string::npos);
}

TEST_CASE("postgres store: bad URLs and unreachable servers fail without showing the password") {
  struct case_ {
    const char* url;
    store_errc want;
  };
  const case_ cases[] = {
      {"mysql://user:hunter2-secret@127.0.0.1/x", store_errc::invalid_argument},
      {"", store_errc::invalid_argument},
      // Port 1 on loopback: nothing listens there.
      {"postgresql://enact:hunter2-secret@127.0.0.1:1/triggers?connect_timeout=5", store_errc::storage},
  };
  for (const auto& c : cases) {
    INFO(c.url);
    auto s = pg_store::open(c.url);
    REQUIRE(!s);
    CHECK(s.code() == c.want);
    CHECK(s.err().message.find("hunter2-secret") == std::string::npos);
  }
}

}  // namespace enact::triggers::test
