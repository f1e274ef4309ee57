// SPDX-License-Identifier: Apache-2.0
// The PostgreSQL metering store (pg_store.hpp): the schema, and a session (session.hpp) on a
// pooled libpqxx connection.
#include "metering/pg_store.hpp"

#include <pqxx/except>
#include <pqxx/result>
#include <pqxx/prepared_statement>
#include <pqxx/transaction>

#include <exception>
#include <functional>
#include <string>
#include <vector>
#include <utility>

#include "metering/session.hpp"
#include "storage/pg_pool.hpp"

namespace enact::metering {
namespace {

// Serializes schema creation between servers opening at once (pg_advisory_xact_lock key).
constexpr const char* kSchemaLock = "SELECT pg_advisory_xact_lock(6872612823553061901)";

// The schema versions in PostgreSQL's spelling (session.hpp); metering_schema.version counts them.
const std::vector<std::string>& migrations() {
  static const std::vector<std::string> m = sql::schema("bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY");
  return m;
}

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

class pg_store final : public sql::session_store {
 public:
  pg_store(const std::string& url, pg_options o)
      : session_store(std::move(o.now)), pool_(url, {.size = o.pool_size, .on_connect = {}}) {}

  void migrate() {
    auto lease = pool_.acquire();
    pqxx::work w(*lease);
    w.exec(kSchemaLock);
    w.exec("CREATE TABLE IF NOT EXISTS metering_schema (version integer NOT NULL)");
    const pqxx::result v = w.exec("SELECT version FROM metering_schema");
    int version = v.empty() ? 0 : v[0][0].as<int>();
    const int latest = static_cast<int>(migrations().size());
    if (version > latest)
      throw std::runtime_error("schema version " + std::to_string(version) + " is newer than this build's " +
                               std::to_string(latest));
    for (; version < latest; ++version)
      w.exec(migrations()[static_cast<size_t>(version)]);
    if (v.empty())
      w.exec("INSERT INTO metering_schema (version) VALUES (" + std::to_string(latest) + ")");
    else
      w.exec("UPDATE metering_schema SET version = " + std::to_string(latest));
    w.commit();
  }

 private:
  /// `body` in one READ COMMITTED transaction on a pooled connection, run again (a few times)
  /// when PostgreSQL aborts it as a deadlock or a serialization failure; a broken connection is
  /// not pooled again.
  void transact(bool, const std::function<bool(sql::session&)>& body) const override {
    constexpr int kAttempts = 5;
    for (int attempt = 1;; ++attempt) {
      try {
        auto lease = pool_.acquire();
        try {
          pqxx::work w(*lease);
          pg_session s(w);
          if (body(s))
            w.commit();
          return;  // otherwise `w` rolls back
        } catch (const pqxx::broken_connection&) {
          lease.discard();
          throw;
        }
      } catch (const pqxx::deadlock_detected&) {
        if (attempt == kAttempts)
          throw;
      } catch (const pqxx::serialization_failure&) {
        if (attempt == kAttempts)
          throw;
      }
    }
  }

  mutable storage::pg_pool pool_;
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
