// SPDX-License-Identifier: Apache-2.0
#include "storage/pg_pool.hpp"

#include <pqxx/except>
#include <pqxx/nontransaction>
#include <pqxx/result>

#include <stdexcept>
#include <string>

#include "enact/secret.hpp"

namespace enact::storage {

std::string lock_timeout_statement(int seconds) {
  if (seconds < 1)
    throw std::invalid_argument("lock timeout: at least 1 second, not " + std::to_string(seconds));
  return "SET lock_timeout = '" + std::to_string(seconds) + "s'";
}

std::function<void(pqxx::connection&)> lock_timeout(int seconds) {
  return [statement = lock_timeout_statement(seconds)](pqxx::connection& c) {
    pqxx::nontransaction n(c);
    n.exec(statement);
  };
}

pg_pool::pg_pool(std::string url, pg_pool_options options)
    : pool<pqxx::connection>(
          options.size, [this] { return connect(); }, [](pqxx::connection& c) { return c.is_open(); }),
      url_(std::move(url)),
      on_connect_(std::move(options.on_connect)) {}

pg_pool::~pg_pool() {
  close_idle();
  detail::secure_wipe(url_.data(), url_.size());
}

std::unique_ptr<pqxx::connection> pg_pool::connect() {
  auto c = std::make_unique<pqxx::connection>(url_);
  if (on_connect_)
    on_connect_(*c);
  return c;
}

void transact(pg_pool& pool, const std::function<bool(pqxx::work&)>& body, const pg_retry& retry) {
  for (int attempt = 1;; ++attempt) {
    try {
      auto lease = pool.acquire();
      try {
        pqxx::work w(*lease);
        if (body(w))
          w.commit();
        return;  // otherwise `w` rolls back
      } catch (const pqxx::broken_connection&) {
        lease.discard();
        throw;
      }
    } catch (const pqxx::deadlock_detected&) {
      if (attempt >= retry.attempts)
        throw;
    } catch (const pqxx::serialization_failure&) {
      if (attempt >= retry.attempts)
        throw;
    } catch (const pqxx::unique_violation&) {
      if (!retry.unique_violation || attempt >= retry.attempts)
        throw;
    }
  }
}

void migrate(pg_pool& pool, const std::string& lock, const std::string& version_table,
             const std::vector<std::string>& steps) {
  auto lease = pool.acquire();
  pqxx::work w(*lease);
  w.exec(lock);
  w.exec("CREATE TABLE IF NOT EXISTS " + version_table + " (version integer NOT NULL)");
  const pqxx::result v = w.exec("SELECT version FROM " + version_table);
  int version = v.empty() ? 0 : v[0][0].as<int>();
  const int latest = static_cast<int>(steps.size());
  if (version > latest)
    throw std::runtime_error("schema version " + std::to_string(version) + " is newer than this build's " +
                             std::to_string(latest));
  for (; version < latest; ++version)
    w.exec(steps[static_cast<size_t>(version)]);
  if (v.empty())
    w.exec("INSERT INTO " + version_table + " (version) VALUES (" + std::to_string(latest) + ")");
  else
    w.exec("UPDATE " + version_table + " SET version = " + std::to_string(latest));
  w.commit();
}

}  // namespace enact::storage
