// SPDX-License-Identifier: Apache-2.0
// A bounded pool of connections of any kind (SQLite readers, PostgreSQL sessions): each handed to
// one caller at a time, at most `max` open, opened lazily by a factory, and checked on return so a
// connection in an unknown state (broken, inside a transaction) is closed instead of reused.
#pragma once

#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

namespace enact::storage {

template <class Connection>
class pool {
 public:
  /// Opens a connection; may throw (acquire() passes the exception on).
  using opener = std::function<std::unique_ptr<Connection>()>;
  /// Called on return; false closes the connection. Must not throw.
  using reusable = std::function<bool(Connection&)>;

  pool(size_t max, opener open, reusable keep = {})
      : max_(std::max<size_t>(1, max)), open_fn_(std::move(open)), keep_(std::move(keep)) {}
  pool(const pool&) = delete;
  pool& operator=(const pool&) = delete;

  /// One connection while it lives; back to the pool when it goes away.
  class lease {
   public:
    lease(pool& p, std::unique_ptr<Connection> c) : pool_(p), c_(std::move(c)) {}
    ~lease() { pool_.release(std::move(c_), discard_); }
    lease(const lease&) = delete;
    lease& operator=(const lease&) = delete;
    Connection& operator*() const noexcept { return *c_; }
    Connection* operator->() const noexcept { return c_.get(); }
    /// Closes the connection on return instead of pooling it (its state is unknown).
    void discard() noexcept { discard_ = true; }

   private:
    pool& pool_;
    std::unique_ptr<Connection> c_;
    bool discard_ = false;
  };

  /// Waits for an idle connection, or opens one while fewer than `max` are open.
  [[nodiscard]] lease acquire() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return !idle_.empty() || open_ < max_; });
    if (!idle_.empty()) {
      std::unique_ptr<Connection> c = std::move(idle_.back());
      idle_.pop_back();
      return {*this, std::move(c)};
    }
    ++open_;
    lock.unlock();
    try {
      return {*this, open_fn_()};
    } catch (...) {
      lock.lock();
      --open_;
      cv_.notify_one();
      throw;
    }
  }

  [[nodiscard]] size_t max() const noexcept { return max_; }
  /// Connections open now (idle or leased).
  [[nodiscard]] size_t open() const {
    std::lock_guard lock(mu_);
    return open_;
  }

 protected:
  /// Closes the idle connections (for a derived pool whose opener's state goes away first).
  void close_idle() {
    std::lock_guard lock(mu_);
    open_ -= idle_.size();
    idle_.clear();
  }

 private:
  void release(std::unique_ptr<Connection> c, bool discard) {
    if (!c)
      return;
    const bool keep = !discard && (!keep_ || keep_(*c));
    std::lock_guard lock(mu_);
    if (keep) {
      idle_.push_back(std::move(c));
    } else {
      c.reset();
      --open_;
    }
    cv_.notify_one();
  }

  size_t max_;
  opener open_fn_;
  reusable keep_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::unique_ptr<Connection>> idle_;
  size_t open_ = 0;
};

}  // namespace enact::storage
