// SPDX-License-Identifier: Apache-2.0
// The PostgreSQL content store (pg_content_store.hpp): the schema, and the backend on the storage
// layer's pool of connections (storage/pg.hpp). Code travels as hex text (decode/encode in SQL), so no
// escaping of binary parameters exists to get wrong.
#include "core/pg_content_store.hpp"

#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "core/errors.hpp"
#include "enact/codec/hex.hpp"
#include "storage/pg.hpp"

namespace enact::core {
namespace {

namespace pg = storage::pg;

// Serializes schema creation between servers opening at once (pg_advisory_xact_lock key).
constexpr const char* kSchemaLock = "SELECT pg_advisory_xact_lock(6872612823553061917)";
// The first key of the per-account upload lock (pg_advisory_xact_lock(int, int)); the second is
// PostgreSQL's hash of the account hash in hex (hashtext: the same for every server on one database).
constexpr int kUploadLockClass = 0x656e6163;  // "enac"

// Schema steps; content_schema.version counts those applied. Append, never edit.
constexpr const char* kMigrations[] = {R"sql(
CREATE TABLE content_code (
  cid        text   PRIMARY KEY,  -- CIDv0 of the code
  code       bytea  NOT NULL,
  created_at bigint NOT NULL      -- unix seconds
);
CREATE TABLE content_uploads (
  account    bytea  NOT NULL,     -- the account hash, 32 bytes
  cid        text   NOT NULL,
  bytes      bigint NOT NULL,
  created_at bigint NOT NULL,
  PRIMARY KEY (account, cid)
);
)sql"};

int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

error unavailable(const std::exception& e) {
  return fail(api_errc::unavailable, std::string("content store: ") + e.what());
}

class pg_backend final : public content_backend {
 public:
  pg_backend(const std::string& url, pg_content_options o)
      : max_(o.max_code_bytes),
        pool_(url, {.size = o.pool_size, .setup = storage::pg::lock_timeout_statement(o.lock_timeout_seconds)}) {}

  void migrate() { storage::pg::migrate(pool_, kSchemaLock, "content_schema", kMigrations); }

  result<void> put(const std::string& cid, bytes_view code) const override {
    ENACT_TRY_VOID(fits(code));
    try {
      transact([&](pg::connection& w) { store(w, cid, code); });
      return {};
    } catch (const std::exception& e) {
      return unavailable(e);
    }
  }

  result<void> put_for(const hash256& account, const std::string& cid, bytes_view code,
                       const upload_quota& quota) const override {
    ENACT_TRY_VOID(fits(code));
    const std::string who = codec::hex::encode(account);
    try {
      std::optional<error> refused;
      transact([&](pg::connection& w) {
        refused.reset();
        // Instances uploading for one account at once take turns from the count to the insert.
        w.exec("SELECT pg_advisory_xact_lock($1, hashtext($2))", kUploadLockClass, who);
        pg::rows r = w.exec(
            "SELECT COUNT(*), COALESCE(SUM(bytes), 0), COALESCE(BOOL_OR(cid = $2), false) "
            "FROM content_uploads WHERE account = decode($1, 'hex')",
            who, cid);
        (void)r.next();  // an aggregate: one row
        const bool known = r.boolean(2);
        if (!known) {
          refused = quota_refusal({r.u64(1), r.u64(0)}, code.size(), quota);
          if (refused)
            return;  // rolled back
        }
        store(w, cid, code);
        if (!known)
          w.exec(
              "INSERT INTO content_uploads (account, cid, bytes, created_at) VALUES (decode($1, 'hex'), $2, $3, $4) "
              "ON CONFLICT DO NOTHING",
              who, cid, static_cast<int64_t>(code.size()), unix_now());
      });
      if (refused)
        return std::move(*refused);
      return {};
    } catch (const std::exception& e) {
      return unavailable(e);
    }
  }

  result<upload_usage> usage(const hash256& account) const override {
    try {
      upload_usage out;
      transact([&](pg::connection& w) {
        pg::rows r =
            w.exec("SELECT COUNT(*), COALESCE(SUM(bytes), 0) FROM content_uploads WHERE account = decode($1, 'hex')",
                   codec::hex::encode(account));
        (void)r.next();  // an aggregate: one row
        out = {r.u64(1), r.u64(0)};
      });
      return out;
    } catch (const std::exception& e) {
      return unavailable(e);
    }
  }

  result<bool> stored_by(const hash256& account, const std::string& cid) const override {
    try {
      bool out = false;
      transact([&](pg::connection& w) {
        out = w.exec("SELECT 1 FROM content_uploads WHERE account = decode($1, 'hex') AND cid = $2",
                     codec::hex::encode(account), cid)
                  .next();
      });
      return out;
    } catch (const std::exception& e) {
      return unavailable(e);
    }
  }

  result<std::optional<bytes>> get(const std::string& cid) const override {
    std::optional<std::string> hex;
    try {
      transact([&](pg::connection& w) {
        hex.reset();
        pg::rows r = w.exec("SELECT octet_length(code), encode(code, 'hex') FROM content_code WHERE cid = $1", cid);
        if (!r.next())
          return;
        if (max_ != 0 && r.u64(0) > max_)
          throw std::runtime_error(cid + " is larger than the largest code kept (" + std::to_string(max_) + " bytes)");
        hex = r.text(1);
      });
    } catch (const std::exception& e) {
      return unavailable(e);
    }
    if (!hex)
      return std::optional<bytes>{};
    ENACT_TRY(bytes code, codec::hex::decode(*hex, "content_code.code"));
    return std::optional<bytes>(std::move(code));
  }

 private:
  result<void> fits(bytes_view code) const {
    if (max_ != 0 && code.size() > max_)
      return fail(api_errc::invalid_request, "content store: code of " + std::to_string(code.size()) +
                                                 " bytes is larger than the largest kept (" + std::to_string(max_) +
                                                 " bytes)");
    return {};
  }

  /// Keeps `code` under `cid` in `w` and commits nothing. A row already there is left as it is
  /// when it holds these bytes and repaired when it holds others (a row changed in the database).
  static void store(pg::connection& w, const std::string& cid, bytes_view code) {
    w.exec(
        "INSERT INTO content_code (cid, code, created_at) VALUES ($1, decode($2, 'hex'), $3) "
        "ON CONFLICT (cid) DO UPDATE SET code = EXCLUDED.code WHERE content_code.code <> EXCLUDED.code",
        cid, codec::hex::encode(code), unix_now());
  }

  /// `body` in one transaction on a pooled connection (committed when it returns), run again a few times when
  /// PostgreSQL aborts it as a deadlock, a serialization failure or a unique violation (two first uploads of one CID).
  void transact(const std::function<void(pg::connection&)>& body) const {
    pg::transact(pool_,
                 [&](pg::connection& w) {
                   body(w);
                   return true;
                 },
                 {.unique_violation = true});
  }

  size_t max_;
  mutable pg::pool pool_;
};

}  // namespace

result<content_store> open_postgres_content_store(const std::string& url, pg_content_options options) {
  try {
    auto b = std::make_shared<pg_backend>(url, options);
    b->migrate();
    return content_store(std::shared_ptr<const content_backend>(std::move(b)));
  } catch (const std::exception& e) {
    return unavailable(e);
  }
}

}  // namespace enact::core
