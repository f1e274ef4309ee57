// SPDX-License-Identifier: Apache-2.0
#include "storage/pg_pool.hpp"

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

}  // namespace enact::storage
