// SPDX-License-Identifier: Apache-2.0
// The SQLite kit: versioned migrations (forward, refusing a newer file, a failing step rolled
// back alone), transactions and savepoints that roll back on unwind, the typed statement helpers,
// and readers that see what the writer committed.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "storage/sqlite.hpp"

namespace enact::storage::test {
namespace {

class temp_dir {
 public:
  temp_dir() {
    std::random_device rd;
    path_ =
        std::filesystem::temp_directory_path() / ("enact-storage-" + std::to_string(rd()) + "-" + std::to_string(rd()));
    std::filesystem::create_directories(path_);
  }
  ~temp_dir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
  [[nodiscard]] std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

constexpr const char* kTwoSteps[] = {
    "CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL);",
    "ALTER TABLE items ADD COLUMN size INTEGER NOT NULL DEFAULT 0;",
};

int64_t count(connection& c, const char* sql) {
  query q(c, sql);
  REQUIRE(q.next());
  return q.i64(0);
}

bool has_table(connection& c, const std::string& name) {
  query q(c, "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?");
  q.bind(name);
  REQUIRE(q.next());
  return q.i64(0) != 0;
}

TEST_CASE("migrate: a new file goes to the last version, an older one moves forward") {
  temp_dir dir;
  const std::string path = dir.file("db.sqlite");
  {
    connection c(path);
    migrate(c, std::span<const char* const>(kTwoSteps, 1));
    CHECK(c.user_version() == 1);
    CHECK(has_table(c, "items"));
    query(c, "INSERT INTO items (name) VALUES (?)").bind("kept").run();
  }
  connection c(path);
  migrate(c, kTwoSteps);
  CHECK(c.user_version() == 2);
  query q(c, "SELECT name, size FROM items");
  REQUIRE(q.next());
  CHECK(q.text(0) == "kept");
  CHECK(q.i64(1) == 0);
  // At the last version already: nothing runs again (step 0 would fail on the existing table).
  migrate(c, kTwoSteps);
  CHECK(c.user_version() == 2);
}

TEST_CASE("migrate: a file newer than the code is refused and left as it is") {
  temp_dir dir;
  const std::string path = dir.file("db.sqlite");
  connection c(path);
  migrate(c, kTwoSteps);
  c.exec("PRAGMA user_version = 7");
  try {
    migrate(c, kTwoSteps);
    FAIL("a newer schema must be refused");
  } catch (const sqlite_error& e) {
    CHECK(std::string(e.what()) == "sqlite: " + path + ": schema version 7 is newer than this build's 2");
  }
  CHECK(c.user_version() == 7);
  CHECK_THROWS_AS(database(path, kTwoSteps), sqlite_error);
}

TEST_CASE("migrate: a failing step rolls back alone; the steps before it stay") {
  temp_dir dir;
  connection c(dir.file("db.sqlite"));
  constexpr const char* steps[] = {
      "CREATE TABLE a (x INTEGER);",
      "CREATE TABLE b (x INTEGER); INSERT INTO nowhere VALUES (1);",
  };
  CHECK_THROWS_AS(migrate(c, steps), sqlite_error);
  CHECK_FALSE(c.in_transaction());
  CHECK(c.user_version() == 1);
  CHECK(has_table(c, "a"));
  CHECK_FALSE(has_table(c, "b"));  // step 1's first statement was undone with it

  // A step's code runs in the same transaction as its SQL and its failure undoes both.
  const migration failing[] = {{"CREATE TABLE a (x INTEGER);", nullptr},
                               {"CREATE TABLE c (x INTEGER);", [](connection& conn) {
                                  query(conn, "INSERT INTO c VALUES (1)").run();
                                  throw std::runtime_error("data rewrite failed");
                                }}};
  CHECK_THROWS_WITH_AS(migrate(c, failing), "data rewrite failed", std::runtime_error);
  CHECK(c.user_version() == 1);
  CHECK_FALSE(has_table(c, "c"));
}

TEST_CASE("migrate: a step's code may carry the opener's values (the rpc store's chain identity)") {
  temp_dir dir;
  connection c(dir.file("db.sqlite"));
  const std::string chain = "chain 5";
  const migration steps[] = {{"CREATE TABLE meta (value TEXT);", [&chain](connection& conn) {
                                query(conn, "INSERT INTO meta VALUES (?)").bind(chain).run();
                              }}};
  migrate(c, steps);
  migrate(c, steps);  // at its version: the code does not run again
  query q(c, "SELECT count(*), max(value) FROM meta");
  REQUIRE(q.next());
  CHECK(q.i64(0) == 1);
  CHECK(q.text(1) == chain);
}

TEST_CASE("transaction: commit keeps, unwinding rolls back") {
  temp_dir dir;
  connection c(dir.file("db.sqlite"));
  migrate(c, kTwoSteps);
  {
    transaction tx(c);
    query(c, "INSERT INTO items (name) VALUES ('one')").run();
    tx.commit();
  }
  CHECK(count(c, "SELECT COUNT(*) FROM items") == 1);
  try {
    transaction tx(c);
    query(c, "INSERT INTO items (name) VALUES ('two')").run();
    throw std::runtime_error("domain failure");
  } catch (const std::runtime_error&) {
  }
  CHECK_FALSE(c.in_transaction());
  CHECK(count(c, "SELECT COUNT(*) FROM items") == 1);
  {
    transaction tx(c);
    query(c, "INSERT INTO items (name) VALUES ('three')").run();
    // goes away uncommitted: an early return
  }
  CHECK(count(c, "SELECT COUNT(*) FROM items") == 1);
  CHECK_THROWS_AS(query(c, "INSERT INTO items (name) VALUES (NULL)").run(), sqlite_error);
}

TEST_CASE("savepoint: one failing part rolls back, the transaction keeps the rest") {
  temp_dir dir;
  connection c(dir.file("db.sqlite"));
  migrate(c, kTwoSteps);
  transaction tx(c);
  {
    savepoint sp(c, "w");
    query(c, "INSERT INTO items (name) VALUES ('kept')").run();
    sp.release();
  }
  {
    savepoint sp(c, "w");
    query(c, "INSERT INTO items (name) VALUES ('dropped')").run();
  }
  {
    savepoint sp(c, "w");
    query(c, "INSERT INTO items (name) VALUES ('dropped too')").run();
    sp.rollback();
  }
  tx.commit();
  query q(c, "SELECT name FROM items");
  REQUIRE(q.next());
  CHECK(q.text(0) == "kept");
  CHECK_FALSE(q.next());
}

TEST_CASE("query: typed binds and columns") {
  temp_dir dir;
  connection c(dir.file("db.sqlite"));
  c.exec("CREATE TABLE v (h BLOB, a BLOB, b BLOB, t INTEGER, n INTEGER, u INTEGER, s TEXT)");
  hash256 h{};
  h[0] = 0xab;
  h[31] = 0xcd;
  const address a{1, 2, 3};
  const bytes b{9, 8, 7};
  using ms_clock = std::chrono::time_point<std::chrono::system_clock, std::chrono::milliseconds>;
  const ms_clock t{std::chrono::milliseconds{1700000000123}};
  query(c, "INSERT INTO v VALUES (?, ?, ?, ?, ?, ?, ?)")
      .bind(h, a, b, t, std::optional<int64_t>{}, std::numeric_limits<uint64_t>::max(), std::string_view("x"))
      .run();
  query q(c, "SELECT h, a, b, t, n, u, s FROM v");
  REQUIRE(q.next());
  CHECK(q.fixed<32>(0) == h);
  CHECK(q.fixed<20>(1) == a);
  CHECK(q.blob(2) == b);
  CHECK(q.time<ms_clock>(3) == t);
  CHECK(q.is_null(4));
  CHECK_FALSE(q.opt_time<ms_clock>(4).has_value());
  CHECK(q.i64(5) == std::numeric_limits<int64_t>::max());  // clamped: SQLite integers are signed
  CHECK(q.text(6) == "x");
  CHECK_THROWS_WITH_AS((void)q.fixed<32>(1), "sqlite: corrupt row: blob of 20 bytes, expected 32", sqlite_error);
  CHECK_THROWS_AS((void)q.fixed<20>(4), sqlite_error);  // NULL is not an address
}

TEST_CASE("query: an empty blob or string is stored empty, not NULL") {
  temp_dir dir;
  connection c(dir.file("db.sqlite"));
  c.exec("CREATE TABLE e (b BLOB NOT NULL, s TEXT NOT NULL)");
  query(c, "INSERT INTO e VALUES (?, ?)").bind(bytes{}, std::string_view{}).run();
  query q(c, "SELECT typeof(b), typeof(s), length(b), length(s) FROM e");
  REQUIRE(q.next());
  CHECK(q.text(0) == "blob");
  CHECK(q.text(1) == "text");
  CHECK(q.i64(2) == 0);
  CHECK(q.i64(3) == 0);
}

TEST_CASE("database: readers see what the writer committed, never what it has not") {
  temp_dir dir;
  database db(dir.file("db.sqlite"), kTwoSteps, {.read_connections = 2});
  const auto rows = [&db] {
    return db.read([](connection& c) { return count(c, "SELECT COUNT(*) FROM items"); });
  };
  CHECK(rows() == 0);
  db.write([](connection& c) { query(c, "INSERT INTO items (name) VALUES ('a')").run(); });
  CHECK(rows() == 1);

  // A write in progress is invisible to readers (WAL), and a failing write leaves nothing.
  db.write([&](connection& c) {
    query(c, "INSERT INTO items (name) VALUES ('b')").run();
    CHECK(rows() == 1);
  });
  CHECK(rows() == 2);
  CHECK_THROWS_AS(db.write([](connection& c) {
    query(c, "INSERT INTO items (name) VALUES ('c')").run();
    throw std::runtime_error("no");
  }),
                  std::runtime_error);
  CHECK(rows() == 2);

  // A result-like value holding an error rolls the write back too.
  struct outcome {
    bool ok;
    [[nodiscard]] bool has_value() const { return ok; }
  };
  const outcome r = db.write([](connection& c) {
    query(c, "INSERT INTO items (name) VALUES ('d')").run();
    return outcome{false};
  });
  CHECK_FALSE(r.has_value());
  CHECK(rows() == 2);

  // Several readers at once, each with a snapshot, while the writer keeps committing.
  std::atomic<bool> stop{false};
  std::atomic<int> bad{0};
  std::vector<std::thread> readers;
  for (int i = 0; i < 3; ++i)
    readers.emplace_back([&] {
      int64_t last = 0;
      while (!stop) {
        const int64_t n = rows();
        if (n < last)
          ++bad;  // a reader never goes back in time
        last = n;
      }
    });
  for (int i = 0; i < 50; ++i)
    db.write([](connection& c) { query(c, "INSERT INTO items (name) VALUES ('more')").run(); });
  stop = true;
  for (std::thread& t : readers)
    t.join();
  CHECK(bad == 0);
  CHECK(rows() == 52);
}

}  // namespace
}  // namespace enact::storage::test
