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
  trigger t;
  t.id = new_trigger_id();
  t.owner = "alice";
  t.name = "busy";
  t.action_cid = "QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG";
  t.sealed_usage_key = bytes{1};
  t.created_at = t.updated_at = t0;
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

}  // namespace enact::triggers::test
