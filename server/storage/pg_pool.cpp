// SPDX-License-Identifier: Apache-2.0
#include "storage/pg_pool.hpp"

#include <pqxx/except>

#include "enact/secret.hpp"

namespace enact::storage {

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

}  // namespace enact::storage
