// SPDX-License-Identifier: Apache-2.0
// The SQLite metering store (sqlite_store.hpp): the schema, and a session (session.hpp) on the
// kit's connections.
#include "metering/sqlite_store.hpp"

#include <exception>
#include <utility>

#include "metering/session.hpp"
#include "storage/sqlite.hpp"

namespace enact::metering {
namespace {

// kMigrations[i] takes the schema from version i to i + 1. Append, never edit.
constexpr const char* kMigrations[] = {R"sql(
CREATE TABLE metering_accounts (
  account TEXT PRIMARY KEY,
  balance INTEGER NOT NULL CHECK (balance >= 0)
);
CREATE TABLE metering_key_spending (
  account  TEXT NOT NULL,
  key_hash TEXT NOT NULL,
  spent    INTEGER NOT NULL CHECK (spent >= 0),
  PRIMARY KEY (account, key_hash)
);
CREATE TABLE metering_reservations (
  id         TEXT PRIMARY KEY,
  account    TEXT NOT NULL,
  key_hash   TEXT NOT NULL,
  amount     INTEGER NOT NULL CHECK (amount > 0),
  run_id     TEXT NOT NULL,
  expires_at INTEGER NOT NULL
);
CREATE INDEX metering_reservations_by_account ON metering_reservations(account, key_hash);
CREATE INDEX metering_reservations_by_expiry ON metering_reservations(expires_at);
CREATE TABLE metering_charges (
  seq      INTEGER PRIMARY KEY AUTOINCREMENT,
  account  TEXT NOT NULL,
  run_id   TEXT NOT NULL,
  key_hash TEXT NOT NULL,
  amount   INTEGER NOT NULL,
  at       INTEGER NOT NULL
);
CREATE INDEX metering_charges_by_account ON metering_charges(account, seq);
CREATE TABLE metering_payments (
  seq           INTEGER PRIMARY KEY AUTOINCREMENT,
  id            TEXT NOT NULL UNIQUE,
  account       TEXT NOT NULL,
  amount        INTEGER NOT NULL CHECK (amount > 0),
  provider      TEXT NOT NULL,
  created_at    INTEGER NOT NULL,
  credited_at   INTEGER,
  balance_after INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX metering_payments_by_account ON metering_payments(account, seq);
)sql"};

class sqlite_session final : public sql::session {
 public:
  explicit sqlite_session(storage::connection& c) : c_(c) {}

  sql::rows exec(const sql::statement& s, const std::vector<sql::param>& params) override {
    storage::query q(c_, s.text);
    for (const sql::param& p : params)
      std::visit([&q](const auto& v) { q.bind(v); }, p);
    sql::rows out;
    const int columns = sqlite3_column_count(q.handle());
    while (q.next()) {
      auto& row = out.data.emplace_back();
      for (int i = 0; i < columns; ++i)
        row.push_back(q.is_null(i) ? std::nullopt : std::optional<std::string>(q.text(i)));
    }
    out.affected = columns == 0 ? c_.changes() : 0;
    return out;
  }

 private:
  storage::connection& c_;
};

class sqlite_store final : public store {
 public:
  sqlite_store(const std::string& path, clock_fn now)
      : db_(path, kMigrations, storage::database_options{.synchronous_full = true}),
        now_(now ? std::move(now) : clock_fn(system_now)) {}

  result<uint64_t> balance(const account_hash& a) const override {
    return read([&](sql::session& s) { return sql::operations::balance(s, a); });
  }
  result<uint64_t> available(const account_hash& a) const override {
    return read([&](sql::session& s) { return sql::operations::available(s, a, now_()); });
  }
  result<void> record_payment(const payment& p) override {
    return write([&](sql::session& s) { return sql::operations::record_payment(s, p, now_()); });
  }
  result<payment> get_payment(const account_hash& a, std::string_view id) const override {
    return read([&](sql::session& s) { return sql::operations::get_payment(s, a, id); });
  }
  result<credit_result> credit_payment(const account_hash& a, std::string_view id) override {
    return write([&](sql::session& s) { return sql::operations::credit_payment(s, a, id, now_()); });
  }
  result<reservation> reserve(const reserve_request& r) override {
    return write([&](sql::session& s) { return sql::operations::reserve(s, r, now_()); });
  }
  result<uint64_t> settle(const account_hash& a, std::string_view id, uint64_t amount) override {
    return write([&](sql::session& s) { return sql::operations::settle(s, a, id, amount, now_()); });
  }
  result<void> release(const account_hash& a, std::string_view id) override {
    return write([&](sql::session& s) { return sql::operations::release(s, a, id); });
  }
  result<uint64_t> release_expired() override {
    return write([&](sql::session& s) { return sql::operations::release_expired(s, now_()); });
  }
  result<key_spending> spending(const account_hash& a, const key_hash& k) const override {
    return read([&](sql::session& s) { return sql::operations::spending(s, a, k, now_()); });
  }
  result<page<usage_record>> usage(const account_hash& a, page_request p) const override {
    return read([&](sql::session& s) { return sql::operations::usage(s, a, p); });
  }
  result<page<payment>> payments(const account_hash& a, page_request p) const override {
    return read([&](sql::session& s) { return sql::operations::payments(s, a, p); });
  }

 private:
  /// `f` in the writer's transaction (rolled back when it fails); an SQLite failure is storage.
  template <class F>
  auto write(F&& f) -> decltype(f(std::declval<sql::session&>())) {
    try {
      return db_.write([&](storage::connection& c) {
        sqlite_session s(c);
        return f(s);
      });
    } catch (const std::exception& e) {
      return fail(metering_errc::storage, std::string("metering store: ") + e.what());
    }
  }
  template <class F>
  auto read(F&& f) const -> decltype(f(std::declval<sql::session&>())) {
    try {
      return db_.read([&](storage::connection& c) {
        sqlite_session s(c);
        return f(s);
      });
    } catch (const std::exception& e) {
      return fail(metering_errc::storage, std::string("metering store: ") + e.what());
    }
  }

  mutable storage::database db_;
  clock_fn now_;
};

}  // namespace

result<std::unique_ptr<store>> open_sqlite(const std::string& path, sqlite_options options) {
  try {
    return std::unique_ptr<store>(std::make_unique<sqlite_store>(path, std::move(options.now)));
  } catch (const std::exception& e) {
    return fail(metering_errc::storage, std::string("metering store: ") + e.what());
  }
}

}  // namespace enact::metering
