// SPDX-License-Identifier: Apache-2.0
// The relayer's nonce lock in PostgreSQL (pg_nonce_lock.hpp).
#include "ledger/pg_nonce_lock.hpp"

#include <cstdint>
#include <exception>
#include <functional>
#include <string>
#include <utility>

#include "enact/codec/hex.hpp"
#include "ledger/ledger.hpp"
#include "storage/pg.hpp"

namespace enact::ledger {
namespace {

// The first key of pg_advisory_xact_lock(int, int); the second is PostgreSQL's hash of the address
// in hex (hashtext: the same for every server on one database).
constexpr int kNonceLockClass = 0x6e6f6e63;  // "nonc"

class pg_lock final : public chain::nonce_lock {
 public:
  pg_lock(const std::string& url, pg_nonce_lock_options o)
      : wait_(o.wait), pool_(url, {.size = o.pool_size, .setup = {}}) {}

  result<hash256> exclusive(const address& from, const std::function<result<hash256>()>& send) override {
    try {
      auto lease = pool_.acquire();
      storage::pg::connection& c = *lease;
      try {
        c.exec_simple("BEGIN; SET LOCAL lock_timeout = " + std::to_string(wait_.count()));
        (void)c.exec("SELECT pg_advisory_xact_lock($1, hashtext($2))", kNonceLockClass, codec::hex::encode(from));
      } catch (...) {
        c.rollback();  // a connection that broke is not pooled again
        throw;
      }
      auto sent = send();
      try {
        c.exec_simple("COMMIT");  // releases the lock
      } catch (const std::exception&) {
        // The session is gone, and its lock with it; the send's answer stands.
        lease.discard();
      }
      return sent;
    } catch (const std::exception& e) {
      return fail(ledger_errc::storage, std::string("nonce lock: ") + e.what());
    }
  }

 private:
  std::chrono::milliseconds wait_;
  storage::pg::pool pool_;
};

}  // namespace

std::shared_ptr<chain::nonce_lock> pg_nonce_lock(const std::string& url, pg_nonce_lock_options options) {
  return std::make_shared<pg_lock>(url, options);
}

}  // namespace enact::ledger
