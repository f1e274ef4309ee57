// SPDX-License-Identifier: Apache-2.0
// The PostgreSQL metering store (pg_store.hpp): the schema, and a session (session.hpp) on a
// pooled libpqxx connection.
#include "metering/pg_store.hpp"

#include <pqxx/except>
#include <pqxx/result>
#include <pqxx/prepared_statement>
#include <pqxx/transaction>

#include <exception>
#include <utility>

#include "metering/session.hpp"
#include "storage/pg_pool.hpp"

namespace enact::metering {
namespace {

// Serializes schema creation between servers opening at once (pg_advisory_xact_lock key).
constexpr const char* kSchemaLock = "SELECT pg_advisory_xact_lock(6872612823553061901)";

// kMigrations[i] takes the schema from version i to i + 1 (metering_schema.version). Append,
// never edit. The same tables as the SQLite store (sqlite_store.cpp).
constexpr const char* kMigrations[] = {R"sql(
CREATE TABLE metering_accounts (
  account text PRIMARY KEY,
  balance bigint NOT NULL CHECK (balance >= 0)
);
CREATE TABLE metering_key_spending (
  account  text   NOT NULL,
  key_hash text   NOT NULL,
  spent    bigint NOT NULL CHECK (spent >= 0),
  PRIMARY KEY (account, key_hash)
);
CREATE TABLE metering_reservations (
  id         text   PRIMARY KEY,
  account    text   NOT NULL,
  key_hash   text   NOT NULL,
  amount     bigint NOT NULL CHECK (amount > 0),
  run_id     text   NOT NULL,
  expires_at bigint NOT NULL
);
CREATE INDEX metering_reservations_by_account ON metering_reservations(account, key_hash);
CREATE INDEX metering_reservations_by_expiry ON metering_reservations(expires_at);
CREATE TABLE metering_charges (
  seq      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  account  text   NOT NULL,
  run_id   text   NOT NULL,
  key_hash text   NOT NULL,
  amount   bigint NOT NULL,
  at       bigint NOT NULL
);
CREATE INDEX metering_charges_by_account ON metering_charges(account, seq);
CREATE TABLE metering_payments (
  seq           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  id            text   NOT NULL UNIQUE,
  account       text   NOT NULL,
  amount        bigint NOT NULL CHECK (amount > 0),
  provider      text   NOT NULL,
  created_at    bigint NOT NULL,
  credited_at   bigint,
  balance_after bigint NOT NULL DEFAULT 0
);
CREATE INDEX metering_payments_by_account ON metering_payments(account, seq);
)sql"};

/// `?N` placeholders as PostgreSQL's `$N`, and FOR UPDATE on a locking read.
std::string dialect(const sql::statement& s) {
  std::string out(s.text);
  for (char& ch : out)
    if (ch == '?')
      ch = '$';
  if (s.lock)
    out += " FOR UPDATE";
  return out;
}

class pg_session final : public sql::session {
 public:
  explicit pg_session(pqxx::work& w) : w_(w) {}

  sql::rows exec(const sql::statement& s, const std::vector<sql::param>& params) override {
    std::vector<std::string> text;
    text.reserve(params.size());
    for (const sql::param& p : params)
      text.push_back(std::holds_alternative<int64_t>(p) ? std::to_string(std::get<int64_t>(p))
                                                        : std::get<std::string>(p));
    const pqxx::result r = w_.exec_params(dialect(s), pqxx::prepare::make_dynamic_params(text));
    sql::rows out;
    out.affected = static_cast<int64_t>(r.affected_rows());
    for (const auto& row : r) {
      auto& o = out.data.emplace_back();
      for (const auto& f : row)
        o.push_back(f.is_null() ? std::nullopt : std::optional<std::string>(f.c_str()));
    }
    return out;
  }

 private:
  pqxx::work& w_;
};

class pg_store final : public store {
 public:
  pg_store(const std::string& url, pg_options o)
      : pool_(url, {.size = o.pool_size, .on_connect = {}}), now_(o.now ? std::move(o.now) : clock_fn(system_now)) {}

  void migrate() {
    auto lease = pool_.acquire();
    pqxx::work w(*lease);
    w.exec(kSchemaLock);
    w.exec("CREATE TABLE IF NOT EXISTS metering_schema (version integer NOT NULL)");
    const pqxx::result v = w.exec("SELECT version FROM metering_schema");
    int version = v.empty() ? 0 : v[0][0].as<int>();
    constexpr int latest = static_cast<int>(std::size(kMigrations));
    if (version > latest)
      throw std::runtime_error("schema version " + std::to_string(version) + " is newer than this build's " +
                               std::to_string(latest));
    for (; version < latest; ++version)
      w.exec(kMigrations[version]);
    if (v.empty())
      w.exec("INSERT INTO metering_schema (version) VALUES (" + std::to_string(latest) + ")");
    else
      w.exec("UPDATE metering_schema SET version = " + std::to_string(latest));
    w.commit();
  }

  result<uint64_t> balance(const account_hash& a) const override {
    return run([&](sql::session& s) { return sql::operations::balance(s, a); });
  }
  result<uint64_t> available(const account_hash& a) const override {
    return run([&](sql::session& s) { return sql::operations::available(s, a, now_()); });
  }
  result<void> record_payment(const payment& p) override {
    return run([&](sql::session& s) { return sql::operations::record_payment(s, p, now_()); });
  }
  result<payment> get_payment(const account_hash& a, std::string_view id) const override {
    return run([&](sql::session& s) { return sql::operations::get_payment(s, a, id); });
  }
  result<credit_result> credit_payment(const account_hash& a, std::string_view id) override {
    return run([&](sql::session& s) { return sql::operations::credit_payment(s, a, id, now_()); });
  }
  result<reservation> reserve(const reserve_request& r) override {
    return run([&](sql::session& s) { return sql::operations::reserve(s, r, now_()); });
  }
  result<uint64_t> settle(const account_hash& a, std::string_view id, uint64_t amount) override {
    return run([&](sql::session& s) { return sql::operations::settle(s, a, id, amount, now_()); });
  }
  result<void> release(const account_hash& a, std::string_view id) override {
    return run([&](sql::session& s) { return sql::operations::release(s, a, id); });
  }
  result<uint64_t> release_expired() override {
    return run([&](sql::session& s) { return sql::operations::release_expired(s, now_()); });
  }
  result<key_spending> spending(const account_hash& a, const key_hash& k) const override {
    return run([&](sql::session& s) { return sql::operations::spending(s, a, k, now_()); });
  }
  result<page<usage_record>> usage(const account_hash& a, page_request p) const override {
    return run([&](sql::session& s) { return sql::operations::usage(s, a, p); });
  }
  result<page<payment>> payments(const account_hash& a, page_request p) const override {
    return run([&](sql::session& s) { return sql::operations::payments(s, a, p); });
  }

 private:
  /// `f` in one transaction on a pooled connection: committed when it succeeds, rolled back when
  /// it fails; run again (a few times) when PostgreSQL aborts it as a deadlock or a serialization
  /// failure; any other database failure is storage (a broken connection is not pooled again).
  template <class F>
  auto run(F&& f) const -> decltype(f(std::declval<sql::session&>())) {
    constexpr int kAttempts = 5;
    for (int attempt = 1;; ++attempt) {
      try {
        auto lease = pool_.acquire();
        try {
          pqxx::work w(*lease);
          pg_session s(w);
          auto r = f(s);
          if (r.has_value())
            w.commit();
          return r;  // a failed result: `w` rolls back
        } catch (const pqxx::broken_connection&) {
          lease.discard();
          throw;
        }
      } catch (const pqxx::deadlock_detected&) {
        if (attempt == kAttempts)
          return fail(metering_errc::storage, "metering store: deadlock, gave up after retries");
      } catch (const pqxx::serialization_failure&) {
        if (attempt == kAttempts)
          return fail(metering_errc::storage, "metering store: serialization failure, gave up after retries");
      } catch (const std::exception& e) {
        return fail(metering_errc::storage, std::string("metering store: ") + e.what());
      }
    }
  }

  mutable storage::pg_pool pool_;
  clock_fn now_;
};

}  // namespace

bool is_postgres_url(std::string_view s) noexcept {
  return s.starts_with("postgres://") || s.starts_with("postgresql://");
}

result<std::unique_ptr<store>> open_postgres(const std::string& url, pg_options options) {
  try {
    auto s = std::make_unique<pg_store>(url, std::move(options));
    s->migrate();
    return std::unique_ptr<store>(std::move(s));
  } catch (const std::exception& e) {
    return fail(metering_errc::storage, std::string("metering store: ") + e.what());
  }
}

}  // namespace enact::metering
