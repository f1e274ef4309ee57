// A pool of PostgreSQL connections (libpqxx) for a store shared by several server instances.
//
// A libpqxx connection serves one thread at a time: a caller takes one connection for the length
// of its work (never two at once, so callers cannot deadlock on the pool) and hands it back; at
// most `size` are open, opened lazily, and one that broke (the server restarted, the network
// dropped) is closed on return and replaced by the next caller that needs one.
#pragma once

#include <pqxx/connection>

#include <condition_variable>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace enact::storage {

struct pg_pool_options {
  /// Most connections open at once (and so most callers served at once); at least one.
  size_t size = 16;
  /// Runs on every new connection before it is handed out (session settings); may throw, and the
  /// connection is then dropped and the exception passed to the caller of acquire().
  std::function<void(pqxx::connection&)> on_connect;
};

class pg_pool {
 public:
  /// `url`: a libpq connection string or URI ("postgres://…"); it may hold a password, so the pool
  /// overwrites its copy when it goes away. Connects nothing yet.
  pg_pool(std::string url, pg_pool_options options);
  ~pg_pool();
  pg_pool(const pg_pool&) = delete;
  pg_pool& operator=(const pg_pool&) = delete;

  /// One connection while it lives; back to the pool when it goes away.
  class lease {
   public:
    lease(pg_pool& pool, std::unique_ptr<pqxx::connection> c) : pool_(pool), c_(std::move(c)) {}
    ~lease() { pool_.release(std::move(c_), discard_); }
    lease(const lease&) = delete;
    lease& operator=(const lease&) = delete;
    pqxx::connection& operator*() const noexcept { return *c_; }
    pqxx::connection* operator->() const noexcept { return c_.get(); }
    /// Closes the connection instead of pooling it (its session state is unknown).
    void discard() noexcept { discard_ = true; }

   private:
    pg_pool& pool_;
    std::unique_ptr<pqxx::connection> c_;
    bool discard_ = false;
  };

  /// Waits for an idle connection, or opens one while fewer than `size` are open. Throws what
  /// libpqxx throws when connecting fails (pqxx::broken_connection: its message names host and
  /// port, never the password).
  [[nodiscard]] lease acquire();

  [[nodiscard]] size_t size() const noexcept { return max_; }
  /// Connections open now (idle or leased).
  [[nodiscard]] size_t open() const;

 private:
  void release(std::unique_ptr<pqxx::connection> c, bool discard = false);

  std::string url_;
  size_t max_;
  std::function<void(pqxx::connection&)> on_connect_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::unique_ptr<pqxx::connection>> idle_;
  size_t open_ = 0;
};

}  // namespace enact::storage
