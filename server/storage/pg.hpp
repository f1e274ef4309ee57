// SPDX-License-Identifier: Apache-2.0
// The server's one PostgreSQL layer (libpq): connections with their prepared statements,
// parameters, rows, the pool, transactions retried on a deadlock or a serialization failure, and
// pipelined batches (pg_pipeline.hpp). Only server/storage includes libpq; the stores go through
// this. A database failure is an exception (`failure`, with the SQLSTATE). Values travel as text,
// except bytea parameters (binary, so no escaping exists to get wrong); results are text (bytea
// in hex).
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>
#include <vector>

#include "enact/bytes.hpp"
#include "storage/pool.hpp"

struct pg_conn;
struct pg_result;

namespace enact::storage::pg {

/// A failure of the database or of the connection; `sqlstate` is PostgreSQL's five-character
/// code, empty for a client-side failure (connecting, a corrupt row).
struct failure : std::runtime_error {
  failure(const std::string& what, std::string state) : std::runtime_error(what), sqlstate(std::move(state)) {}
  std::string sqlstate;
  /// A deadlock or a serialization failure: running the transaction again may succeed.
  [[nodiscard]] bool retryable() const noexcept { return sqlstate == "40P01" || sqlstate == "40001"; }
  [[nodiscard]] bool unique_violation() const noexcept { return sqlstate == "23505"; }
};

struct result_closer {
  void operator()(pg_result* r) const noexcept;
};
using result_ptr = std::unique_ptr<pg_result, result_closer>;

/// Parameters of one statement, in order.
class args {
 public:
  template <class... A>
  explicit args(const A&... a) {
    (add(a), ...);
  }
  /// The parameters held by a range (of variants, say).
  template <class Range>
  [[nodiscard]] static args of(const Range& r) {
    args out;
    for (const auto& v : r)
      out.add(v);
    return out;
  }
  [[nodiscard]] int size() const noexcept { return static_cast<int>(data_.size()); }
  /// Pointers for libpq; valid while this object lives unchanged.
  void finish();
  [[nodiscard]] const char* const* values() const noexcept { return ptrs_.data(); }
  [[nodiscard]] const int* lengths() const noexcept { return lens_.data(); }
  [[nodiscard]] const int* formats() const noexcept { return formats_.data(); }

  void add(std::nullptr_t) { push({}, true, 0); }
  void add(int64_t v) { push(std::to_string(v), false, 0); }
  /// Clamped to the largest bigint.
  void add(uint64_t v);
  void add(uint32_t v) { add(static_cast<int64_t>(v)); }
  void add(int v) { add(static_cast<int64_t>(v)); }
  void add(bool v) { push(v ? "t" : "f", false, 0); }
  /// Unix milliseconds.
  void add(std::chrono::sys_time<std::chrono::milliseconds> t) {
    add(static_cast<int64_t>(t.time_since_epoch().count()));
  }
  void add(std::string_view v) { push(std::string(v), false, 0); }
  void add(const std::string& v) { add(std::string_view(v)); }
  void add(const char* v) { add(std::string_view(v)); }
  void add(bytes_view v) { push(std::string(v.begin(), v.end()), false, 1); }
  void add(const bytes& v) { add(bytes_view(v)); }
  template <size_t N>
  void add(const std::array<uint8_t, N>& v) {
    push(std::string(v.begin(), v.end()), false, 1);
  }
  template <class T>
  void add(const std::optional<T>& v) {
    if (v)
      add(*v);
    else
      add(nullptr);
  }
  template <class... T>
  void add(const std::variant<T...>& v) {
    std::visit([this](const auto& x) { add(x); }, v);
  }

 private:
  void push(std::string v, bool null, int format);

  std::vector<std::string> data_;
  std::vector<bool> null_;
  std::vector<int> formats_;
  std::vector<const char*> ptrs_;
  std::vector<int> lens_;
};

/// The rows of one statement, read in order with next().
class rows {
 public:
  explicit rows(result_ptr r);

  [[nodiscard]] bool next() noexcept { return ++row_ < n_; }
  [[nodiscard]] int count() const noexcept { return n_; }
  [[nodiscard]] int columns() const noexcept;
  /// Rows a write changed (INSERT / UPDATE / DELETE).
  [[nodiscard]] int64_t affected() const;

  [[nodiscard]] bool is_null(int col) const;
  [[nodiscard]] std::string_view raw(int col) const;
  /// Throws failure for a column that is not an integer.
  [[nodiscard]] int64_t i64(int col) const;
  [[nodiscard]] uint64_t u64(int col) const { return static_cast<uint64_t>(i64(col)); }
  [[nodiscard]] bool boolean(int col) const { return raw(col) == "t"; }
  [[nodiscard]] std::string text(int col) const { return std::string(raw(col)); }
  /// bytea in its hex output form ("\x0a1b…"); throws failure for anything else.
  [[nodiscard]] bytes blob(int col) const;

 private:
  result_ptr r_;
  int n_;
  int row_ = -1;
};

/// One statement of a pipelined batch (connection::pipeline): its text in PostgreSQL's spelling
/// ($N placeholders), living as long as the connection (it names its prepared statement), and its
/// parameters.
struct pipelined {
  const std::string* text;
  args params;
};

/// What a pipelined batch came to: committed (every statement succeeded) with each statement's
/// rows in order, or not (one failed: PostgreSQL rolled back the whole transaction), with its
/// error and whether that was a deadlock or a serialization failure.
struct pipeline_outcome {
  bool committed = false;
  std::vector<rows> answers;
  std::string error;
  bool retryable = false;
};

/// One libpq connection and its prepared statements, in UTF-8, bytea as hex, NOTICEs unsent.
/// Used by one thread at a time.
class connection {
 public:
  /// Connects to `url` (libpq's message on failure names host and port, never the password) and
  /// runs `setup` (SQL, may be empty) once.
  explicit connection(const std::string& url, const std::string& setup = {});
  ~connection();
  connection(const connection&) = delete;
  connection& operator=(const connection&) = delete;

  [[nodiscard]] bool broken() const noexcept;
  [[nodiscard]] bool in_transaction() const noexcept;
  /// Whether the idle session has something to read (or its socket failed): a server that ended
  /// the session (restarted, terminated it) is seen only by reading.
  [[nodiscard]] bool readable() const noexcept;

  /// Runs `sql` (a string literal: the statement cache keys on its text) prepared, with `a`.
  template <class... A>
  rows exec(std::string_view sql, const A&... a) {
    return exec_args(sql, args{a...});
  }
  rows exec_args(std::string_view sql, args p);
  /// Runs `sql` with `p` unprepared (text built at run time).
  rows exec_params(const std::string& sql, args p);
  /// Runs parameterless SQL text without preparing it, several statements at once allowed
  /// (transaction control, schema scripts).
  void exec_simple(const std::string& sql);
  /// Rolls back the open transaction, if any; never throws (used on failure paths).
  void rollback() noexcept;

  /// Runs `batch` in pipeline mode: all sent at once and followed by one Sync, so they run in ONE
  /// implicit transaction that commits at the Sync (or, when one fails, rolls back whole),
  /// answered in one round trip. Throws failure when the connection fails (whether the batch
  /// committed is then unknown, as with a commit whose answer was lost).
  [[nodiscard]] pipeline_outcome pipeline(const std::vector<pipelined>& batch);

 private:
  [[noreturn]] void fail_now(std::string_view what) const;
  void check(pg_result* r, std::string_view what) const;
  const std::string& prepared(std::string_view sql, int n);

  pg_conn* c_ = nullptr;
  std::unordered_map<std::string, std::string> cache_;
};

/// The statement that bounds every wait of a connection's statements for a row or table lock to
/// `seconds` (SET lock_timeout): a statement waiting on a lock another session holds (a stuck
/// transaction of another server) fails instead of stalling its caller and every caller behind
/// it. Throws std::invalid_argument for `seconds` below 1 (0 would turn the bound off).
[[nodiscard]] std::string lock_timeout_statement(int seconds);

struct pool_options {
  /// Most connections open at once (and so most callers served at once); at least one.
  size_t size = 16;
  /// SQL run on every new connection before it is handed out (session settings).
  std::string setup;
};

/// At most `size` connections, each handed to one caller at a time (never two at once, so callers
/// cannot deadlock on the pool), opened lazily; one that broke, or that comes back inside a
/// transaction, is closed and replaced by the next caller that needs one.
class pool : public storage::pool<connection> {
 public:
  /// `url`: a libpq connection string or URI ("postgres://…"); it may hold a password, so the pool
  /// overwrites its copy when it goes away. Connects nothing yet; acquire() throws failure when
  /// connecting fails.
  pool(std::string url, pool_options options);
  ~pool();

 private:
  std::string url_;
  std::string setup_;
};

/// When `transact` runs its body again.
struct retry {
  /// Attempts in all, the first included.
  int attempts = 5;
  /// Also on a unique violation (two first inserts of one key racing: the loser's next attempt
  /// sees the winner's row).
  bool unique_violation = false;
};

/// Runs `body` between BEGIN and COMMIT on a connection of `p`: committed when `body` returns
/// true, rolled back otherwise or when it throws. Run again, up to `r.attempts` times in all, when
/// PostgreSQL aborts it as a deadlock or a serialization failure (and a unique violation, when `r`
/// says so); any other exception is passed on.
void transact(pool& p, const std::function<bool(connection&)>& body, const retry& r = {});

/// Brings a store's schema to `steps.size()` (steps[v] takes version v to v + 1; append, never
/// edit): under `lock` (a statement taking the store's transaction-level advisory lock, so
/// instances opening at once take turns), reads the version kept in `version_table` (created when
/// missing; none yet is 0), runs the steps after it and records the new version, all in one
/// transaction. Throws failure "postgres: schema version N is newer than this build's M" for a
/// database of a later build, and changes nothing then.
void migrate(pool& p, const std::string& lock, const std::string& version_table, std::span<const char* const> steps);

}  // namespace enact::storage::pg
