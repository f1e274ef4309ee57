#include "storage/pg_pool.hpp"

#include <algorithm>

#include "enact/crypto/secret.hpp"

namespace enact::storage {

pg_pool::pg_pool(std::string url, pg_pool_options options)
    : url_(std::move(url)), max_(std::max<size_t>(1, options.size)), on_connect_(std::move(options.on_connect)) {}

pg_pool::~pg_pool() {
  idle_.clear();
  detail::secure_wipe(url_.data(), url_.size());
}

pg_pool::lease pg_pool::acquire() {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return !idle_.empty() || open_ < max_; });
  if (!idle_.empty()) {
    std::unique_ptr<pqxx::connection> c = std::move(idle_.back());
    idle_.pop_back();
    return {*this, std::move(c)};
  }
  ++open_;
  lock.unlock();
  try {
    auto c = std::make_unique<pqxx::connection>(url_);
    if (on_connect_)
      on_connect_(*c);
    return {*this, std::move(c)};
  } catch (...) {
    lock.lock();
    --open_;
    cv_.notify_one();
    throw;
  }
}

size_t pg_pool::open() const {
  std::lock_guard lock(mu_);
  return open_;
}

void pg_pool::release(std::unique_ptr<pqxx::connection> c, bool discard) {
  if (!c)
    return;
  std::lock_guard lock(mu_);
  if (discard || !c->is_open()) {
    c.reset();
    --open_;
  } else {
    idle_.push_back(std::move(c));
  }
  cv_.notify_one();
}

}  // namespace enact::storage
