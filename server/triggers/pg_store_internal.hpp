// SPDX-License-Identifier: Apache-2.0
// libpq access of the PostgreSQL trigger store (pg_store.cpp): connections with their prepared
// statements, parameters, rows and the connection pool. Not part of the store's interface. A
// database failure is an exception (`pg_failure`, with the SQLSTATE), caught at the backend's
// call boundary and answered as a store_errc. Values travel as text, except bytea parameters
// (binary, so no escaping exists to get wrong); results are text (bytea in hex).
#pragma once

#include <libpq-fe.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "enact/codec/hex.hpp"
#include "enact/secret.hpp"
#include "storage/pool.hpp"
#include "triggers/pg_store.hpp"
#include "triggers/sql_store.hpp"

namespace enact::triggers {
namespace pg_backend {

using namespace store_rows;

inline constexpr int64_t kMaxI64 = std::numeric_limits<int64_t>::max();
inline constexpr int kWriteAttempts = 3;  // a transaction failing on a deadlock or serialization is retried

// ---------------------------------------------------------------------------------------------
// libpq access

struct pg_failure : std::runtime_error {
  pg_failure(const std::string& what, std::string state) : std::runtime_error(what), sqlstate(std::move(state)) {}
  std::string sqlstate;  // five characters; empty for client-side failures
};

inline std::string trimmed(const char* msg) {
  std::string s = msg != nullptr ? msg : "";
  while (!s.empty() && (s.back() == '\n' || s.back() == ' '))
    s.pop_back();
  return s;
}

struct result_closer {
  void operator()(PGresult* r) const noexcept { PQclear(r); }
};
using result_ptr = std::unique_ptr<PGresult, result_closer>;

/// Parameters of one statement, in order.
class args {
 public:
  template <class... A>
  explicit args(const A&... a) {
    (add(a), ...);
  }
  /// The parameters of a statement of the store's body (sql_store.hpp).
  explicit args(std::span<const sql::param> params) {
    for (const sql::param& p : params)
      std::visit([this](const auto& v) { add(v); }, p);
  }
  [[nodiscard]] int size() const noexcept { return static_cast<int>(data_.size()); }
  /// Pointers for PQexecPrepared; valid while this object lives unchanged.
  void finish() {
    ptrs_.clear();
    lens_.clear();
    for (size_t i = 0; i < data_.size(); ++i) {
      ptrs_.push_back(null_[i] ? nullptr : data_[i].data());
      lens_.push_back(static_cast<int>(data_[i].size()));
    }
  }
  [[nodiscard]] const char* const* values() const noexcept { return ptrs_.data(); }
  [[nodiscard]] const int* lengths() const noexcept { return lens_.data(); }
  [[nodiscard]] const int* formats() const noexcept { return formats_.data(); }

 private:
  void push(std::string v, bool null, int format) {
    data_.push_back(std::move(v));
    null_.push_back(null);
    formats_.push_back(format);
  }
  void add(std::nullptr_t) { push({}, true, 0); }
  void add(int64_t v) { push(std::to_string(v), false, 0); }
  void add(uint64_t v) { add(static_cast<int64_t>(std::min<uint64_t>(v, kMaxI64))); }
  void add(uint32_t v) { add(static_cast<int64_t>(v)); }
  void add(int v) { add(static_cast<int64_t>(v)); }
  void add(bool v) { push(v ? "t" : "f", false, 0); }
  void add(time_point t) { add(static_cast<int64_t>(t.time_since_epoch().count())); }
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

  std::vector<std::string> data_;
  std::vector<bool> null_;
  std::vector<int> formats_;
  std::vector<const char*> ptrs_;
  std::vector<int> lens_;
};

/// The rows of one statement, read in order with next().
class rows {
 public:
  explicit rows(result_ptr r) : r_(std::move(r)), n_(PQntuples(r_.get())) {}

  [[nodiscard]] bool next() noexcept { return ++row_ < n_; }
  [[nodiscard]] int count() const noexcept { return n_; }
  /// Rows a write changed (INSERT / UPDATE / DELETE).
  [[nodiscard]] int64_t affected() const {
    const char* s = PQcmdTuples(r_.get());
    int64_t n = 0;
    std::from_chars(s, s + std::strlen(s), n);
    return n;
  }

  [[nodiscard]] bool is_null(int col) const { return PQgetisnull(r_.get(), row_, col) != 0; }
  [[nodiscard]] std::string_view raw(int col) const {
    return {PQgetvalue(r_.get(), row_, col), static_cast<size_t>(PQgetlength(r_.get(), row_, col))};
  }
  [[nodiscard]] int64_t i64(int col) const {
    const std::string_view s = raw(col);
    int64_t v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc{} || end != s.data() + s.size())
      throw pg_failure("postgres: corrupt row: expected an integer in column " + std::to_string(col), "");
    return v;
  }
  [[nodiscard]] uint64_t u64(int col) const { return static_cast<uint64_t>(i64(col)); }
  [[nodiscard]] bool boolean(int col) const { return raw(col) == "t"; }
  [[nodiscard]] time_point time(int col) const { return time_point{std::chrono::milliseconds{i64(col)}}; }
  [[nodiscard]] std::optional<time_point> opt_time(int col) const {
    if (is_null(col))
      return std::nullopt;
    return time(col);
  }
  [[nodiscard]] std::string text(int col) const { return std::string(raw(col)); }
  /// bytea in its hex output form ("\x0a1b…").
  [[nodiscard]] bytes blob(int col) const {
    const std::string_view s = raw(col);
    if (!s.starts_with("\\x") || s.size() % 2 != 0)
      throw pg_failure("postgres: corrupt row: bytea not in hex form", "");
    auto out = codec::hex::decode(s.substr(2));
    if (!out)
      throw pg_failure("postgres: corrupt row: bad hex in bytea", "");
    return std::move(*out);
  }
  template <size_t N>
  [[nodiscard]] std::array<uint8_t, N> fixed(int col) const {
    const bytes b = blob(col);
    if (b.size() != N)
      throw pg_failure(
          "postgres: corrupt row: bytea of " + std::to_string(b.size()) + " bytes, expected " + std::to_string(N), "");
    std::array<uint8_t, N> out{};
    std::copy_n(b.begin(), N, out.begin());
    return out;
  }
  [[nodiscard]] json::value json_value(int col) const {
    std::error_code ec;
    json::value v = json::parse(raw(col), ec);
    if (ec)
      throw pg_failure("postgres: corrupt row: stored JSON does not parse", "");
    return v;
  }

 private:
  result_ptr r_;
  int n_;
  int row_ = -1;
};

/// One libpq connection and its prepared statements. Used by one thread at a time.
class connection {
 public:
  explicit connection(const std::string& url) {
    c_ = PQconnectdb(url.c_str());
    if (c_ == nullptr)
      throw pg_failure("postgres: connect: out of memory", "");
    if (PQstatus(c_) != CONNECTION_OK) {
      // libpq's message names host and port, never the password.
      const std::string msg = "postgres: connect: " + trimmed(PQerrorMessage(c_));
      PQfinish(c_);
      throw pg_failure(msg, "");
    }
    if (PQsetClientEncoding(c_, "UTF8") != 0)
      fail_now("set client encoding");
    exec_simple("SET bytea_output = 'hex'");
    exec_simple("SET client_min_messages = warning");  // no NOTICEs of idempotent DDL on stderr
    // The store's contract: a write is durable when the call returns (store.hpp).
    rows sc = exec("SELECT current_setting('synchronous_commit')");
    if (sc.next() && sc.raw(0) == "off")
      exec_simple("SET synchronous_commit = on");
  }
  ~connection() { PQfinish(c_); }
  connection(const connection&) = delete;
  connection& operator=(const connection&) = delete;

  [[nodiscard]] bool broken() const noexcept { return PQstatus(c_) != CONNECTION_OK; }
  [[nodiscard]] bool in_transaction() const noexcept {
    return PQtransactionStatus(c_) != PQTRANS_IDLE && PQtransactionStatus(c_) != PQTRANS_UNKNOWN;
  }

  /// Runs `sql` (a string literal: the statement cache keys on its text) with `a`.
  template <class... A>
  rows exec(std::string_view sql, const A&... a) {
    return exec_args(sql, args{a...});
  }
  rows exec_args(std::string_view sql, args p) {
    p.finish();
    const std::string& name = prepared(sql, p.size());
    result_ptr r(PQexecPrepared(c_, name.c_str(), p.size(), p.values(), p.lengths(), p.formats(), 0));
    check(r.get(), "statement");
    return rows(std::move(r));
  }

  /// Runs parameterless SQL text without preparing it (transaction control, schema scripts).
  void exec_simple(const std::string& sql) {
    result_ptr r(PQexec(c_, sql.c_str()));
    check(r.get(), "exec");
  }

  /// Rolls back the open transaction, if any; never throws (used on failure paths).
  void rollback() noexcept {
    if (!broken() && in_transaction())
      PQclear(PQexec(c_, "ROLLBACK"));
  }

 private:
  [[noreturn]] void fail_now(std::string_view what) {
    throw pg_failure("postgres: " + std::string(what) + ": " + trimmed(PQerrorMessage(c_)), "");
  }
  void check(PGresult* r, std::string_view what) {
    if (r == nullptr)
      fail_now(what);
    const auto st = PQresultStatus(r);
    if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK)
      return;
    const char* state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
    throw pg_failure("postgres: " + std::string(what) + ": " + trimmed(PQresultErrorMessage(r)),
                     state != nullptr ? state : "");
  }
  const std::string& prepared(std::string_view sql, int n) {
    if (auto it = cache_.find(sql); it != cache_.end())
      return it->second;
    std::string name = "s" + std::to_string(cache_.size());
    result_ptr r(PQprepare(c_, name.c_str(), std::string(sql).c_str(), n, nullptr));
    check(r.get(), "prepare");
    return cache_.emplace(sql, std::move(name)).first->second;
  }

  PGconn* c_ = nullptr;
  std::unordered_map<std::string_view, std::string> cache_;
};

/// At most `max` connections, each handed to one caller at a time; one that broke, or that comes
/// back inside a transaction, is dropped.
class pool : public storage::pool<connection> {
 public:
  pool(std::string url, size_t max)
      : storage::pool<connection>(
            max, [this] { return std::make_unique<connection>(url_); },
            [](connection& c) { return !c.broken() && !c.in_transaction(); }),
        url_(std::move(url)) {}
  // The URL may hold a password: overwrite it before the memory is freed.
  ~pool() {
    close_idle();
    detail::secure_wipe(url_.data(), url_.size());
  }

 private:
  std::string url_;
};

}  // namespace pg_backend
}  // namespace enact::triggers
