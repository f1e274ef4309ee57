// SPDX-License-Identifier: Apache-2.0
#include "core/content_store.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iterator>
#include <mutex>

#include "core/errors.hpp"
#include "enact/ipfs/cid.hpp"
#include "storage/atomic_file.hpp"
#include "storage/sqlite.hpp"

namespace enact::core {

namespace {

// Schema steps (storage::migrate, PRAGMA user_version); append, never edit. Step 1 creates the
// table only when missing: files of builds before versioning have it at version 0.
constexpr const char* kMigrations[] = {R"sql(
CREATE TABLE IF NOT EXISTS uploads (
  account    BLOB NOT NULL,     -- the account hash, 32 bytes
  cid        TEXT NOT NULL,     -- CIDv0 of the code
  bytes      INTEGER NOT NULL,  -- size of the code
  created_at INTEGER NOT NULL,  -- unix seconds
  PRIMARY KEY (account, cid)
) WITHOUT ROWID;
)sql"};

std::string human_bytes(uint64_t n) { return std::to_string(n) + " bytes"; }

/// The local backend: one file per CID under `dir`, and the upload record in SQLite.
class local_backend final : public content_backend {
 public:
  local_backend(std::string dir, const std::string& record_path) : dir_(std::move(dir)), db_(record_path) {}

  /// Opens the record's schema (WAL, migrations).
  void migrate() {
    db_.exec("PRAGMA journal_mode = WAL");
    storage::migrate(db_, kMigrations);
  }

  result<void> put(const std::string& cid, bytes_view code) const override {
    const std::string final_path = dir_ + "/" + cid;
    // A file already there is kept only when it holds this code: one changed on disk (which get
    // refuses) is replaced, so storing the code again repairs it, as on PostgreSQL.
    if (holds(final_path, code))
      return {};
    // The message names no path: the answer goes to the client.
    if (storage::write_file_atomically(final_path, code))
      return fail(api_errc::unavailable, "content store: write failed");
    return {};
  }

  result<void> put_for(const hash256& account, const std::string& cid, bytes_view code,
                       const upload_quota& quota) const override {
    std::lock_guard lock(mu_);
    try {
      // One IMMEDIATE transaction from the check to the insert: a second process on the same file
      // (or this one, after a crash between the file and the row) never counts past the quota.
      storage::transaction tx(db_);
      const auto [known, used] = read(account, cid);
      if (!known)
        if (auto refused = quota_refusal(used, code.size(), quota))
          return std::move(*refused);
      ENACT_TRY_VOID(put(cid, code));
      if (!known)
        storage::query(db_, "INSERT INTO uploads (account, cid, bytes, created_at) VALUES (?1, ?2, ?3, ?4)")
            .bind(account, cid, static_cast<uint64_t>(code.size()),
                  std::chrono::time_point_cast<std::chrono::seconds>(std::chrono::system_clock::now()))
            .run();
      tx.commit();
      return {};
    } catch (const std::exception& e) {
      return failure(e);
    }
  }

  result<upload_usage> usage(const hash256& account) const override {
    std::lock_guard lock(mu_);
    try {
      return read(account, std::string()).second;
    } catch (const std::exception& e) {
      return failure(e);
    }
  }

  result<bool> stored_by(const hash256& account, const std::string& cid) const override {
    std::lock_guard lock(mu_);
    try {
      return read(account, cid).first;
    } catch (const std::exception& e) {
      return failure(e);
    }
  }

  result<std::optional<bytes>> get(const std::string& cid) const override {
    std::ifstream f(dir_ + "/" + cid, std::ios::binary);
    if (!f)
      return std::optional<bytes>{};
    return std::optional<bytes>(bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>()));
  }

 private:
  /// Whether the file at `path` exists and holds exactly `code`.
  [[nodiscard]] static bool holds(const std::string& path, bytes_view code) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0 || static_cast<uint64_t>(st.st_size) != code.size())
      return false;
    std::ifstream f(path, std::ios::binary);
    const bytes kept((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    return std::equal(kept.begin(), kept.end(), code.begin(), code.end());
  }
  [[nodiscard]] static error failure(const std::exception& e) {
    return fail(api_errc::unavailable, "upload record: " + std::string(e.what()));
  }
  /// Whether `account` recorded `cid`, and what it recorded in all.
  std::pair<bool, upload_usage> read(const hash256& account, const std::string& cid) const {
    storage::query q(db_,
                     "SELECT COUNT(*), COALESCE(SUM(bytes), 0), COALESCE(SUM(cid = ?2), 0) "
                     "FROM uploads WHERE account = ?1");
    q.bind(account, cid);
    if (!q.next())
      throw storage::sqlite_error("sqlite: read: no row");
    return std::pair{q.i64(2) != 0, upload_usage{q.u64(1), q.u64(0)}};
  }

  std::string dir_;
  mutable storage::connection db_;
  mutable std::mutex mu_;  // one connection; uploads are rare next to runs
};

}  // namespace

std::optional<error> quota_refusal(const upload_usage& used, uint64_t size, const upload_quota& quota) {
  if (quota.max_count != 0 && used.count + 1 > quota.max_count)
    return fail(api_errc::forbidden, "upload quota: this account stores " + std::to_string(used.count) +
                                         " actions, at most " + std::to_string(quota.max_count) +
                                         " (limits.upload_quota_count); code it stored before uploads again freely");
  if (quota.max_bytes != 0 && used.bytes + size > quota.max_bytes)
    return fail(api_errc::forbidden, "upload quota: this account stores " + human_bytes(used.bytes) + " of code; " +
                                         human_bytes(size) + " more would exceed its " + human_bytes(quota.max_bytes) +
                                         " (limits.upload_quota_bytes)");
  return std::nullopt;
}

result<content_store> content_store::open(const std::string& data_dir) {
  const std::string dir = data_dir + "/actions";
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
    return fail(api_errc::internal, "cannot create " + dir + ": " + std::strerror(errno));
  const std::string path = data_dir + "/uploads.sqlite";
  std::shared_ptr<local_backend> b;
  try {
    b = std::make_shared<local_backend>(dir, path);
  } catch (const std::exception& e) {
    return fail(api_errc::internal, "upload record: cannot open " + path + ": " + e.what());
  }
  try {
    b->migrate();
  } catch (const std::exception& e) {
    return fail(api_errc::internal, "upload record: " + std::string(e.what()) + " (" + path + ")");
  }
  return content_store(std::move(b));
}

result<std::string> content_store::put(bytes_view code) const {
  std::string cid = ipfs::cid_of(code);
  ENACT_TRY_VOID(backend_->put(cid, code));
  return cid;
}

result<std::string> content_store::put_for(const hash256& account, bytes_view code, const upload_quota& quota) const {
  std::string cid = ipfs::cid_of(code);
  ENACT_TRY_VOID(backend_->put_for(account, cid, code, quota));
  return cid;
}

result<upload_usage> content_store::usage(const hash256& account) const { return backend_->usage(account); }

namespace {

/// The CIDv0 under which the code `cid_text` names is kept; nullopt for a CID of other content
/// (not dag-pb), which the store never holds.
result<std::optional<ipfs::cid>> kept_as(std::string_view cid_text) {
  ENACT_TRY(const auto wanted, ipfs::parse(cid_text));
  // Code is kept under its CIDv0; a v1 dag-pb CID names the same code.
  ipfs::cid v0{0, ipfs::kCodecDagPb, wanted.multihash};
  if (!ipfs::same_content(wanted, v0))
    return std::optional<ipfs::cid>{};
  return std::optional<ipfs::cid>(std::move(v0));
}

}  // namespace

result<bool> content_store::stored_by(const hash256& account, std::string_view cid_text) const {
  ENACT_TRY(const auto v0, kept_as(cid_text));
  if (!v0)
    return false;
  return backend_->stored_by(account, v0->to_string());
}

result<std::optional<bytes>> content_store::get(std::string_view cid_text) const {
  ENACT_TRY(const auto kept, kept_as(cid_text));
  if (!kept)
    return std::optional<bytes>{};
  const ipfs::cid& v0 = *kept;
  ENACT_TRY(std::optional<bytes> code, backend_->get(v0.to_string()));
  if (!code)
    return code;
  // Whatever the backend handed back (a file or a row changed behind the server's back) runs
  // only when it is the code the CID names.
  if (ipfs::cid_v0_of(*code) != v0)
    return fail(api_errc::internal, "content store: " + v0.to_string() + " does not match its CID");
  return code;
}

}  // namespace enact::core
