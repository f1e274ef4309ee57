// SPDX-License-Identifier: Apache-2.0
// The trigger store's one body over SQL (docs/architecture.md §4 "Trigger service"): every method
// of store.hpp written once, against a small interface each SQL backend implements — statements
// with parameters, the rows they return, and the transactions they run in. The SQLite store
// (sqlite_store.hpp) and the PostgreSQL store (pg_store.hpp) are this body over their backend;
// each keeps only what truly differs: its schema and connections, how a transaction runs (a group-
// committing writer thread, a pool of libpq connections), and a few statements one database does
// better on its own (PostgreSQL queues a webhook run in one statement and leases runs with SKIP
// LOCKED; SQLite commits a second's schedule firings together).
//
// Statements are written once, in PostgreSQL's spelling: parameters `$1`, `$2`, … (each given once,
// in order, however often the text names it), and row locks (`FOR UPDATE`, `SKIP LOCKED`) where
// instances sharing a database need them. The SQLite backend reads `$n` as its `?n` and drops the
// row locks: its single writer already holds the whole database in every write transaction.
#pragma once

#include <algorithm>
#include <array>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "triggers/store.hpp"
#include "triggers/store_rows.hpp"

namespace enact::triggers {

namespace sql {

/// A statement parameter: NULL, an integer, a boolean, text or a blob (viewed: a parameter lives
/// for the one call that binds it).
using param = std::variant<std::nullptr_t, int64_t, bool, std::string_view, bytes_view>;

[[nodiscard]] inline param to_param(std::nullptr_t) { return nullptr; }
[[nodiscard]] inline param to_param(int64_t v) { return v; }
/// Unsigned values above INT64_MAX are stored as INT64_MAX (both databases' integers are signed).
[[nodiscard]] inline param to_param(uint64_t v) {
  return static_cast<int64_t>(std::min<uint64_t>(v, uint64_t{std::numeric_limits<int64_t>::max()}));
}
[[nodiscard]] inline param to_param(uint32_t v) { return int64_t{v}; }
[[nodiscard]] inline param to_param(int v) { return int64_t{v}; }
[[nodiscard]] inline param to_param(bool v) { return v; }
/// Instants as Unix milliseconds (store_rows.hpp).
[[nodiscard]] inline param to_param(time_point t) { return static_cast<int64_t>(t.time_since_epoch().count()); }
[[nodiscard]] inline param to_param(std::string_view v) { return v; }
[[nodiscard]] inline param to_param(const std::string& v) { return std::string_view(v); }
[[nodiscard]] inline param to_param(const char* v) { return std::string_view(v); }
[[nodiscard]] inline param to_param(const bytes& v) { return bytes_view(v); }
template <size_t N>
[[nodiscard]] param to_param(const std::array<uint8_t, N>& v) {
  return bytes_view(v);
}
template <class T>
[[nodiscard]] param to_param(const std::optional<T>& v) {
  return v ? to_param(*v) : param(nullptr);
}

/// The rows of one statement as a backend reads them, in order with next(); a statement that
/// returns none (a write) has run when the backend hands these back.
class rows {
 public:
  virtual ~rows() = default;
  [[nodiscard]] virtual bool next() = 0;
  [[nodiscard]] virtual bool is_null(int col) const = 0;
  [[nodiscard]] virtual int64_t i64(int col) const = 0;
  [[nodiscard]] virtual bool boolean(int col) const = 0;
  [[nodiscard]] virtual std::string text(int col) const = 0;
  [[nodiscard]] virtual bytes blob(int col) const = 0;
  /// Rows the statement changed (INSERT / UPDATE / DELETE).
  [[nodiscard]] virtual int64_t affected() const = 0;
};

/// A statement's rows with the accessors of store_rows.hpp's row mapping.
class cursor {
 public:
  explicit cursor(std::unique_ptr<rows> r) : r_(std::move(r)) {}

  [[nodiscard]] bool next() { return r_->next(); }
  [[nodiscard]] bool is_null(int col) const { return r_->is_null(col); }
  [[nodiscard]] int64_t i64(int col) const { return r_->i64(col); }
  [[nodiscard]] uint64_t u64(int col) const { return static_cast<uint64_t>(i64(col)); }
  [[nodiscard]] bool boolean(int col) const { return r_->boolean(col); }
  [[nodiscard]] std::string text(int col) const { return r_->text(col); }
  [[nodiscard]] bytes blob(int col) const { return r_->blob(col); }
  /// A blob of exactly N bytes; throws store_rows::corrupt_row otherwise.
  template <size_t N>
  [[nodiscard]] std::array<uint8_t, N> fixed(int col) const {
    const bytes b = blob(col);
    if (b.size() != N)
      throw store_rows::corrupt_row("a blob of " + std::to_string(b.size()) + " bytes, expected " + std::to_string(N));
    std::array<uint8_t, N> out{};
    std::copy(b.begin(), b.end(), out.begin());
    return out;
  }
  [[nodiscard]] int64_t affected() const { return r_->affected(); }

 private:
  std::unique_ptr<rows> r_;
};

/// One connection of a backend, used by one thread at a time. A failure is an exception (the
/// backend's own), which the backend's transaction runner answers.
class connection {
 public:
  virtual ~connection() = default;

  /// Runs `sql` (a string literal: backends cache its prepared form on its address) with `args`.
  template <class... A>
  cursor exec(const char* sql, const A&... args) {
    const std::array<param, sizeof...(A)> p{to_param(args)...};
    return cursor(run(sql, p));
  }

 protected:
  [[nodiscard]] virtual std::unique_ptr<rows> run(const char* sql, std::span<const param> params) = 0;
};

/// How a backend runs work on its connections. An exception out of the work (a database failure,
/// a corrupt row) is answered as the backend's store_errc (storage, or conflict / not_found for
/// the races a statement could not rule out in advance).
class backend {
 public:
  using work = std::function<result<void>(connection&)>;
  virtual ~backend() = default;
  /// Reads.
  [[nodiscard]] virtual result<void> read(const work& f) const = 0;
  /// `f` in one transaction, committed when it returns a value and rolled back otherwise.
  [[nodiscard]] virtual result<void> write(const work& f) = 0;
  /// A write of one statement, which a backend whose statements commit on their own runs without
  /// a transaction around it.
  [[nodiscard]] virtual result<void> write_one(const work& f) { return write(f); }
};

}  // namespace sql

/// store.hpp over an SQL backend. The backends derive from it (sqlite_store.hpp, pg_store.hpp).
class sql_store : public store {
 public:
  ENACT_TRIGGER_STORE_OVERRIDES
  using store::create_trigger;

 protected:
  explicit sql_store(std::unique_ptr<sql::backend> db) : db_(std::move(db)) {}
  [[nodiscard]] sql::backend& backend() noexcept { return *db_; }

  /// `f(connection&) -> result<T>` run by the backend's read, write or write_one.
  template <class F>
  auto read(F&& f) const {
    return through([this](const sql::backend::work& w) { return db_->read(w); }, std::forward<F>(f));
  }
  template <class F>
  auto write(F&& f) {
    return through([this](const sql::backend::work& w) { return db_->write(w); }, std::forward<F>(f));
  }
  template <class F>
  auto write_one(F&& f) {
    return through([this](const sql::backend::work& w) { return db_->write_one(w); }, std::forward<F>(f));
  }

  /// lease_runs' step inside its transaction, after the expired leases were taken back: moves up
  /// to `r.max_runs` due runs, oldest due first, to running under a lease until `until`.
  [[nodiscard]] virtual std::vector<leased_run> lease_due(sql::connection& c, const lease_request& r, time_point until);
  /// Inside create_trigger's transaction, before the owner's triggers are counted: holds off the
  /// other creations of `owner` until the transaction ends, so that none counts before this one's
  /// insert is visible. Nothing here: a backend whose writes run one at a time needs no lock.
  virtual void lock_owner(sql::connection& c, std::string_view owner) { (void)c, (void)owner; }
  /// One firing of fire_schedule inside its transaction (`params`: the run's params as stored).
  [[nodiscard]] std::optional<run> fire(sql::connection& c, const schedule_firing& f, const std::string& params);

 private:
  template <class Run, class F>
  static auto through(Run&& on_backend, F&& f) -> decltype(f(std::declval<sql::connection&>())) {
    using R = decltype(f(std::declval<sql::connection&>()));
    std::optional<R> out;
    auto done = on_backend([&](sql::connection& c) -> result<void> {
      out.emplace(f(c));
      if (!out->has_value())
        return out->err();
      return {};
    });
    if (out && !out->has_value())
      return std::move(*out);  // the work's own refusal
    if (!done)
      return done.err();  // the backend failed (or the commit did)
    return std::move(*out);
  }

  std::unique_ptr<sql::backend> db_;
};

}  // namespace enact::triggers
