// The SQLite access of the embedded ledger (embedded_ledger.hpp): a connection with its prepared
// statements, a cached statement in use (`query`) and a pool of read-only connections. An SQLite
// failure is an exception (`sqlite_failure`); the store answers it as ledger_errc::storage.
#pragma once

#include <sqlite3.h>

#include <algorithm>
#include <array>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "enact/bytes.hpp"

namespace enact::ledger::embedded {

// WAL readers never block the writer; four cover the HTTP server's threads on a small machine
// (more callers wait for a free connection rather than opening without bound).
inline constexpr size_t kReadConnections = 4;
// Another process holding the write lock (a backup, the sqlite3 shell) is waited for this long.
inline constexpr int kBusyTimeoutMs = 5000;

// ---------------------------------------------------------------------------------------------
// SQLite access

struct sqlite_failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] inline void throw_sqlite(sqlite3* db, std::string_view what) {
  throw sqlite_failure("sqlite: " + std::string(what) + ": " + (db != nullptr ? sqlite3_errmsg(db) : "out of memory"));
}

/// One SQLite connection and its prepared statements. Used by one thread at a time.
class connection {
 public:
  connection(const std::string& path, bool writer) {
    const int flags =
        (writer ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE : SQLITE_OPEN_READONLY) | SQLITE_OPEN_NOMUTEX;
    sqlite3* db = nullptr;
    const int rc = sqlite3_open_v2(path.c_str(), &db, flags, nullptr);
    db_.reset(db);
    if (rc != SQLITE_OK)
      throw_sqlite(db, "open " + path);
    sqlite3_extended_result_codes(db, 1);
    sqlite3_busy_timeout(db, kBusyTimeoutMs);
  }
  ~connection() {
    for (auto& entry : cache_)
      sqlite3_finalize(entry.second);
  }
  connection(const connection&) = delete;
  connection& operator=(const connection&) = delete;

  [[nodiscard]] sqlite3* handle() const noexcept { return db_.get(); }

  /// The prepared statement for `sql` (a string literal: the cache keys on its text).
  [[nodiscard]] sqlite3_stmt* statement(std::string_view sql) {
    if (auto it = cache_.find(sql); it != cache_.end())
      return it->second;
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v3(db_.get(), sql.data(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT, &s,
                           nullptr) != SQLITE_OK)
      throw_sqlite(db_.get(), "prepare");
    cache_.emplace(sql, s);
    return s;
  }

  /// Runs uncached SQL text (schema scripts, pragmas).
  void exec(const std::string& sql) {
    if (sqlite3_exec(db_.get(), sql.c_str(), nullptr, nullptr, nullptr) != SQLITE_OK)
      throw_sqlite(db_.get(), "exec");
  }

  /// Rolls back the open transaction, if any; never throws (used on failure paths).
  void rollback() noexcept {
    if (sqlite3_get_autocommit(db_.get()) == 0)
      sqlite3_exec(db_.get(), "ROLLBACK", nullptr, nullptr, nullptr);
  }

 private:
  struct closer {
    void operator()(sqlite3* db) const noexcept { sqlite3_close_v2(db); }
  };
  std::unique_ptr<sqlite3, closer> db_;
  std::unordered_map<std::string_view, sqlite3_stmt*> cache_;
};

/// A cached statement in use: binds in order, steps, reads columns; reset when it goes away.
class query {
 public:
  query(connection& c, std::string_view sql) : db_(c.handle()), s_(c.statement(sql)) {}
  ~query() {
    sqlite3_reset(s_);
    sqlite3_clear_bindings(s_);
  }
  query(const query&) = delete;
  query& operator=(const query&) = delete;

  template <class... A>
  query& bind(const A&... args) {
    (bind_one(args), ...);
    return *this;
  }

  /// True with a row to read, false when done.
  [[nodiscard]] bool next() {
    const int rc = sqlite3_step(s_);
    if (rc == SQLITE_ROW)
      return true;
    if (rc == SQLITE_DONE)
      return false;
    throw_sqlite(db_, "step");
  }
  void run() {
    while (next()) {
    }
  }

  [[nodiscard]] int64_t i64(int col) const { return sqlite3_column_int64(s_, col); }
  [[nodiscard]] uint64_t u64(int col) const { return static_cast<uint64_t>(i64(col)); }
  [[nodiscard]] bool boolean(int col) const { return i64(col) != 0; }
  [[nodiscard]] std::string text(int col) const {
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(s_, col));
    return p == nullptr ? std::string() : std::string(p, sqlite3_column_bytes(s_, col));
  }
  template <size_t N>
  [[nodiscard]] std::array<uint8_t, N> fixed(int col) const {
    std::array<uint8_t, N> out{};
    const void* p = sqlite3_column_blob(s_, col);
    if (p == nullptr && sqlite3_column_type(s_, col) == SQLITE_NULL)
      return out;  // LEFT JOIN without a match
    if (static_cast<size_t>(sqlite3_column_bytes(s_, col)) != N)
      throw sqlite_failure("sqlite: corrupt row: blob of " + std::to_string(sqlite3_column_bytes(s_, col)) +
                           " bytes, expected " + std::to_string(N));
    std::copy_n(static_cast<const uint8_t*>(p), N, out.begin());
    return out;
  }
  [[nodiscard]] hash256 hash(int col) const { return fixed<32>(col); }
  [[nodiscard]] address addr(int col) const { return fixed<20>(col); }

 private:
  void check(int rc) const {
    if (rc != SQLITE_OK)
      throw_sqlite(db_, "bind");
  }
  void bind_one(int64_t v) { check(sqlite3_bind_int64(s_, ++index_, v)); }
  // uint64 values (expirations, key balances, group ids) keep their bits in SQLite's int64.
  void bind_one(uint64_t v) { bind_one(static_cast<int64_t>(v)); }
  void bind_one(int v) { bind_one(static_cast<int64_t>(v)); }
  void bind_one(bool v) { bind_one(static_cast<int64_t>(v ? 1 : 0)); }
  void bind_one(std::string_view v) {
    check(sqlite3_bind_text64(s_, ++index_, v.data(), v.size(), SQLITE_TRANSIENT, SQLITE_UTF8));
  }
  void bind_one(const std::string& v) { bind_one(std::string_view(v)); }
  template <size_t N>
  void bind_one(const std::array<uint8_t, N>& v) {
    check(sqlite3_bind_blob64(s_, ++index_, v.data(), N, SQLITE_TRANSIENT));
  }

  sqlite3* db_;
  sqlite3_stmt* s_;
  int index_ = 0;
};

/// Read-only connections handed out one caller at a time.
class reader_pool {
 public:
  explicit reader_pool(std::string path) : path_(std::move(path)) {}

  class lease {
   public:
    lease(reader_pool& pool, std::unique_ptr<connection> c) : pool_(pool), c_(std::move(c)) {}
    ~lease() { pool_.release(std::move(c_)); }
    lease(const lease&) = delete;
    lease& operator=(const lease&) = delete;
    connection& operator*() const noexcept { return *c_; }

   private:
    reader_pool& pool_;
    std::unique_ptr<connection> c_;
  };

  [[nodiscard]] lease acquire() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return !idle_.empty() || open_ < kReadConnections; });
    if (!idle_.empty()) {
      std::unique_ptr<connection> c = std::move(idle_.back());
      idle_.pop_back();
      return {*this, std::move(c)};
    }
    ++open_;
    lock.unlock();
    try {
      auto c = std::make_unique<connection>(path_, false);
      return {*this, std::move(c)};
    } catch (...) {
      lock.lock();
      --open_;
      cv_.notify_one();
      throw;
    }
  }

 private:
  void release(std::unique_ptr<connection> c) {
    if (!c)
      return;
    std::lock_guard lock(mu_);
    idle_.push_back(std::move(c));
    cv_.notify_one();
  }

  std::string path_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::unique_ptr<connection>> idle_;
  size_t open_ = 0;
};

}  // namespace enact::ledger::embedded
