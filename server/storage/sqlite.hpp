// SPDX-License-Identifier: Apache-2.0
// The SQLite kit every server store is built on: a connection with its statement cache, typed
// statements, RAII transactions and savepoints, versioned migrations, and a pool of read-only
// connections beside one writer.
//
// Inside a store an SQLite failure is an exception (`sqlite_error`), so domain code reads straight
// through; the store catches it at its transaction boundary and answers its own error code with
// the message (`e.what()`: "sqlite: <what>: <SQLite's message>").
//
// Schema versions live in SQLite's `PRAGMA user_version`: migration i takes version i to i + 1,
// each step in an IMMEDIATE transaction of its own, and a database whose version is above the
// code's is refused. A file written by an earlier build (same `user_version` numbering) opens and
// migrates forward.
#pragma once

#include <sqlite3.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "enact/bytes.hpp"
#include "storage/pool.hpp"

namespace enact::storage {

/// An SQLite failure: `what()` is "sqlite: <what>: <SQLite's message>"; `code()` the extended
/// result code (0 when the failure is the kit's own, e.g. a corrupt row or a refused version).
class sqlite_error : public std::runtime_error {
 public:
  explicit sqlite_error(const std::string& message, int code = 0) : std::runtime_error(message), code_(code) {}
  [[nodiscard]] int code() const noexcept { return code_; }

 private:
  int code_;
};

/// Throws the last error of `db` as "sqlite: <what>: <message>".
[[noreturn]] void throw_sqlite(sqlite3* db, std::string_view what);

/// How a connection opens.
struct connection_options {
  /// Read-write, creating the file when missing (true), or read-only (false).
  bool writer = true;
  /// How long a statement waits for another connection's lock before failing with SQLITE_BUSY.
  int busy_timeout_ms = 5000;
  /// SQLITE_OPEN_FULLMUTEX instead of NOMUTEX: for a connection several threads may touch at once.
  bool serialized = false;
};

/// One SQLite connection and its prepared statements. Used by one thread at a time (unless opened
/// `serialized`).
class connection {
 public:
  /// Opens `path`; throws sqlite_error "sqlite: open <path>: ..." when it cannot.
  explicit connection(const std::string& path, connection_options options = {});
  ~connection();
  connection(const connection&) = delete;
  connection& operator=(const connection&) = delete;

  [[nodiscard]] sqlite3* handle() const noexcept { return db_.get(); }
  [[nodiscard]] const std::string& path() const noexcept { return path_; }

  /// The prepared statement for `sql`, kept for the connection's life. `sql` must outlive the
  /// connection (a string literal): the cache keys on its text.
  [[nodiscard]] sqlite3_stmt* statement(std::string_view sql);

  /// Runs uncached SQL text, possibly several statements (schema scripts, pragmas).
  void exec(const std::string& sql);

  /// Rows the last INSERT/UPDATE/DELETE changed, and the rowid the last INSERT made.
  [[nodiscard]] int64_t changes() const noexcept { return sqlite3_changes64(db_.get()); }
  [[nodiscard]] int64_t last_insert_rowid() const noexcept { return sqlite3_last_insert_rowid(db_.get()); }

  /// Whether a transaction is open on this connection.
  [[nodiscard]] bool in_transaction() const noexcept { return sqlite3_get_autocommit(db_.get()) == 0; }

  /// Rolls back the open transaction, if any; never throws (for failure paths).
  void rollback() noexcept;

  /// Switches the file to WAL (readers never wait for the writer); throws "sqlite: <path>: cannot
  /// enable WAL journal" when SQLite keeps another journal mode.
  void enable_wal();

  /// PRAGMA user_version: the schema version of the file.
  [[nodiscard]] int64_t user_version();

 private:
  struct closer {
    void operator()(sqlite3* db) const noexcept { sqlite3_close_v2(db); }
  };
  std::string path_;
  std::unique_ptr<sqlite3, closer> db_;
  std::unordered_map<std::string_view, sqlite3_stmt*> cache_;
};

/// A cached statement in use: binds in order, steps, reads columns; reset (and its bindings
/// cleared) when it goes away.
///
/// Bindable: nullptr, integers, bool, text (string, string_view, char*), bytes and fixed-size
/// byte arrays (hash256, address...) as blobs, `std::chrono::time_point`s (their tick count since
/// the epoch, in their own duration), and `std::optional` of any of these (NULL when empty).
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

  /// Steps: true with a row to read, false when done.
  [[nodiscard]] bool next();
  /// Steps to the end (a statement that returns no rows, or whose rows are not needed).
  void run() {
    while (next()) {
    }
  }

  [[nodiscard]] bool is_null(int col) const { return sqlite3_column_type(s_, col) == SQLITE_NULL; }
  [[nodiscard]] int64_t i64(int col) const { return sqlite3_column_int64(s_, col); }
  [[nodiscard]] uint64_t u64(int col) const { return static_cast<uint64_t>(i64(col)); }
  [[nodiscard]] bool boolean(int col) const { return i64(col) != 0; }
  [[nodiscard]] std::string text(int col) const;
  [[nodiscard]] bytes blob(int col) const;
  /// A blob of exactly N bytes; throws "sqlite: corrupt row: ..." otherwise (NULL included).
  template <size_t N>
  [[nodiscard]] std::array<uint8_t, N> fixed(int col) const {
    std::array<uint8_t, N> out{};
    copy_fixed(col, out.data(), N);
    return out;
  }
  /// An instant stored as the tick count of `TimePoint`'s duration since the epoch.
  template <class TimePoint>
  [[nodiscard]] TimePoint time(int col) const {
    return TimePoint{typename TimePoint::duration{i64(col)}};
  }
  template <class TimePoint>
  [[nodiscard]] std::optional<TimePoint> opt_time(int col) const {
    if (is_null(col))
      return std::nullopt;
    return time<TimePoint>(col);
  }

  [[nodiscard]] sqlite3_stmt* handle() const noexcept { return s_; }

 private:
  void check(int rc) const;
  void copy_fixed(int col, uint8_t* out, size_t n) const;

  void bind_one(std::nullptr_t) { check(sqlite3_bind_null(s_, ++index_)); }
  void bind_one(int64_t v) { check(sqlite3_bind_int64(s_, ++index_, v)); }
  /// Unsigned values above INT64_MAX are stored as INT64_MAX (SQLite integers are signed).
  void bind_one(uint64_t v) {
    bind_one(static_cast<int64_t>(std::min<uint64_t>(v, std::numeric_limits<int64_t>::max())));
  }
  void bind_one(uint32_t v) { bind_one(static_cast<int64_t>(v)); }
  void bind_one(int v) { bind_one(static_cast<int64_t>(v)); }
  void bind_one(bool v) { bind_one(static_cast<int64_t>(v ? 1 : 0)); }
  // An empty string or blob is bound as an empty value, never as NULL: SQLite binds NULL for a null
  // data pointer, which an empty std::string_view or std::vector may have.
  static const char* non_null(const char* p) noexcept { return p != nullptr ? p : ""; }
  void bind_one(std::string_view v) {
    check(sqlite3_bind_text64(s_, ++index_, non_null(v.data()), v.size(), SQLITE_TRANSIENT, SQLITE_UTF8));
  }
  void bind_one(const std::string& v) { bind_one(std::string_view(v)); }
  void bind_one(const char* v) { bind_one(std::string_view(v)); }
  void bind_one(bytes_view v) {
    const void* p = v.data() != nullptr ? static_cast<const void*>(v.data()) : "";
    check(sqlite3_bind_blob64(s_, ++index_, p, v.size(), SQLITE_TRANSIENT));
  }
  void bind_one(const bytes& v) { bind_one(bytes_view(v)); }
  template <size_t N>
  void bind_one(const std::array<uint8_t, N>& v) {
    bind_one(bytes_view(v));
  }
  template <class Clock, class Duration>
  void bind_one(std::chrono::time_point<Clock, Duration> t) {
    bind_one(static_cast<int64_t>(t.time_since_epoch().count()));
  }
  template <class T>
  void bind_one(const std::optional<T>& v) {
    if (v)
      bind_one(*v);
    else
      bind_one(nullptr);
  }

  sqlite3* db_;
  sqlite3_stmt* s_;
  int index_ = 0;
};

/// A transaction on one connection: begun on construction, committed by commit(), rolled back
/// when it goes away uncommitted (an early return, an exception).
class transaction {
 public:
  enum class kind {
    deferred,   // BEGIN: a read snapshot, upgraded on the first write
    immediate,  // BEGIN IMMEDIATE: takes the write lock now (no SQLITE_BUSY on upgrade later)
  };
  explicit transaction(connection& c, kind k = kind::immediate);
  ~transaction();
  transaction(const transaction&) = delete;
  transaction& operator=(const transaction&) = delete;

  /// Commits; throws sqlite_error when SQLite refuses (the transaction is rolled back then).
  void commit();
  /// Rolls back now; never throws.
  void rollback() noexcept;

 private:
  connection& c_;
  bool open_ = true;
};

/// A savepoint inside an open transaction: release() keeps its changes; going away unreleased
/// rolls back to it (and releases it), leaving the enclosing transaction open. Its three
/// statements are prepared once per connection and name (connection::statement), not parsed per
/// savepoint: a store may open one per write.
class savepoint {
 public:
  /// `name` must be an SQL identifier (a literal: it is spliced into the statement text).
  explicit savepoint(connection& c, std::string_view name = "sp");
  ~savepoint();
  savepoint(const savepoint&) = delete;
  savepoint& operator=(const savepoint&) = delete;

  void release();
  /// Rolls back to the savepoint and releases it; throws when SQLite refuses.
  void rollback();

 private:
  void undo();

  connection& c_;
  const std::string& release_;      // "RELEASE <name>", kept for the process's life
  const std::string& rollback_to_;  // "ROLLBACK TO <name>"
  bool open_ = true;
};

/// One schema step: SQL text, then (optionally) code run in the same transaction (data rewrites
/// SQL alone cannot express).
struct migration {
  const char* sql = nullptr;
  std::function<void(connection&)> apply;
};

/// Brings `c`'s schema to version `steps.size()`: runs steps[v] for every version v from the
/// file's `user_version` up, each with its version bump in one IMMEDIATE transaction, so a failing
/// step leaves the file at the version before it. Throws sqlite_error "sqlite: <path>: schema
/// version N is newer than this build's M" for a file of a later build (another process that
/// migrated meanwhile is seen: the version is read again under the write lock).
void migrate(connection& c, std::span<const migration> steps);
/// The same for steps that are SQL only.
void migrate(connection& c, std::span<const char* const> steps);

/// Read-only connections handed out one caller at a time, at most `max` open; opened lazily. A
/// connection handed back inside a transaction is rolled back first, so the next caller never
/// inherits an old snapshot. `acquire()` throws sqlite_error when opening fails.
class reader_pool : public pool<connection> {
 public:
  reader_pool(std::string path, size_t max, int busy_timeout_ms = 5000);
};

/// How a database opens.
struct database_options {
  /// PRAGMA synchronous FULL (true: a commit is fsynced) or NORMAL (false: fsynced at checkpoints).
  bool synchronous_full = false;
  bool foreign_keys = true;
  /// Read-only connections for concurrent reads (at least one).
  size_t read_connections = 4;
  int busy_timeout_ms = 5000;
};

/// A database file in WAL mode: one writer connection (writes serialized by a mutex), a pool of
/// readers, and the schema migrated on open.
class database {
 public:
  /// Opens (creating) `path`, enables WAL, sets the pragmas, migrates to `steps.size()`, and opens
  /// one reader (so a file readers cannot open fails here rather than on first use). Throws
  /// sqlite_error.
  database(const std::string& path, std::span<const migration> steps, database_options options = {});
  database(const std::string& path, std::span<const char* const> steps, database_options options = {});

  [[nodiscard]] const std::string& path() const noexcept { return writer_.path(); }
  /// The writer connection, for a caller that serializes its writes itself (e.g. a write thread).
  [[nodiscard]] connection& writer() noexcept { return writer_; }
  [[nodiscard]] reader_pool& readers() noexcept { return readers_; }

  /// Runs `f(connection&)` on the writer, under the write mutex, inside one IMMEDIATE
  /// transaction: committed when `f` returns, rolled back when it throws (rethrown) or when it
  /// returns a result-like value (anything with `has_value()`) that holds an error.
  template <class F>
  auto write(F&& f) -> decltype(f(std::declval<connection&>())) {
    std::lock_guard lock(write_mu_);
    transaction tx(writer_, transaction::kind::immediate);
    if constexpr (std::is_void_v<decltype(f(writer_))>) {
      f(writer_);
      tx.commit();
    } else {
      auto r = f(writer_);
      if constexpr (requires { r.has_value(); }) {
        if (!r.has_value())
          return r;  // tx rolls back
      }
      tx.commit();
      return r;
    }
  }

  /// Runs `f(connection&)` on a pooled reader, inside one read transaction (a consistent snapshot
  /// across its statements) when `snapshot`.
  template <class F>
  auto read(F&& f, bool snapshot = true) -> decltype(f(std::declval<connection&>())) {
    reader_pool::lease l = readers_.acquire();
    if (!snapshot)
      return f(*l);
    transaction tx(*l, transaction::kind::deferred);
    if constexpr (std::is_void_v<decltype(f(*l))>) {
      f(*l);
      tx.commit();
    } else {
      auto r = f(*l);
      tx.commit();
      return r;
    }
  }

 private:
  database(const std::string& path, database_options options);

  connection writer_;
  std::mutex write_mu_;
  reader_pool readers_;
};

}  // namespace enact::storage
