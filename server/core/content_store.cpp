#include "core/content_store.hpp"

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iterator>
#include <mutex>

#include "core/errors.hpp"
#include "enact/crypto/random.hpp"
#include "enact/codec/hex.hpp"
#include "enact/ipfs/cid.hpp"

namespace enact::core {

namespace {

constexpr int kBusyTimeoutMs = 5000;

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS uploads (
  account    BLOB NOT NULL,     -- the account hash, 32 bytes
  cid        TEXT NOT NULL,     -- CIDv0 of the code
  bytes      INTEGER NOT NULL,  -- size of the code
  created_at INTEGER NOT NULL,  -- unix seconds
  PRIMARY KEY (account, cid)
) WITHOUT ROWID;
)sql";

/// One prepared statement, finalized on scope exit.
class statement {
 public:
  statement(sqlite3* db, const char* sql) { sqlite3_prepare_v2(db, sql, -1, &st_, nullptr); }
  ~statement() { sqlite3_finalize(st_); }
  statement(const statement&) = delete;
  statement& operator=(const statement&) = delete;
  [[nodiscard]] bool ok() const { return st_ != nullptr; }
  void bind(int i, bytes_view b) { sqlite3_bind_blob(st_, i, b.data(), static_cast<int>(b.size()), SQLITE_TRANSIENT); }
  void bind(int i, const std::string& s) {
    sqlite3_bind_text(st_, i, s.data(), static_cast<int>(s.size()), SQLITE_TRANSIENT);
  }
  void bind(int i, int64_t n) { sqlite3_bind_int64(st_, i, n); }
  int step() { return sqlite3_step(st_); }
  [[nodiscard]] int64_t column(int i) const { return sqlite3_column_int64(st_, i); }

 private:
  sqlite3_stmt* st_ = nullptr;
};

std::string human_bytes(uint64_t n) { return std::to_string(n) + " bytes"; }

}  // namespace

struct content_store::record {
  sqlite3* db = nullptr;
  std::mutex mu;  // one connection; uploads are rare next to runs
  ~record() { sqlite3_close_v2(db); }

  [[nodiscard]] error failure(std::string_view what) const {
    return fail(api_errc::unavailable,
                "upload record: " + std::string(what) + ": " + (db != nullptr ? sqlite3_errmsg(db) : "out of memory"));
  }
  result<void> exec(const char* sql, std::string_view what) const {
    char* msg = nullptr;
    const int rc = sqlite3_exec(db, sql, nullptr, nullptr, &msg);
    sqlite3_free(msg);
    if (rc != SQLITE_OK)
      return failure(what);
    return {};
  }
  /// Whether `account` recorded `cid`, and what it recorded in all.
  result<std::pair<bool, upload_usage>> read(const hash256& account, const std::string& cid) const {
    statement st(db,
                 "SELECT COUNT(*), COALESCE(SUM(bytes), 0), COALESCE(SUM(cid = ?2), 0) "
                 "FROM uploads WHERE account = ?1");
    if (!st.ok())
      return failure("prepare");
    st.bind(1, bytes_view(account));
    st.bind(2, cid);
    if (st.step() != SQLITE_ROW)
      return failure("read");
    return std::pair{st.column(2) != 0,
                     upload_usage{static_cast<uint64_t>(st.column(1)), static_cast<uint64_t>(st.column(0))}};
  }
};

result<content_store> content_store::open(const std::string& data_dir) {
  const std::string dir = data_dir + "/actions";
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
    return fail(api_errc::internal, "cannot create " + dir + ": " + std::strerror(errno));
  auto rec = std::make_shared<record>();
  const std::string path = data_dir + "/uploads.sqlite";
  const int rc = sqlite3_open_v2(path.c_str(), &rec->db,
                                 SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, nullptr);
  if (rc != SQLITE_OK)
    return fail(api_errc::internal, "upload record: cannot open " + path + ": " +
                                        (rec->db != nullptr ? sqlite3_errmsg(rec->db) : "out of memory"));
  sqlite3_busy_timeout(rec->db, kBusyTimeoutMs);
  if (auto r = rec->exec("PRAGMA journal_mode = WAL", "enable WAL"); !r)
    return fail(api_errc::internal, r.err().message + " (" + path + ")");
  if (auto r = rec->exec(kSchema, "create schema"); !r)
    return fail(api_errc::internal, r.err().message + " (" + path + ")");
  return content_store(dir, std::move(rec));
}

result<std::string> content_store::put(bytes_view code) const {
  const std::string cid = ipfs::cid_of(code);
  const std::string final_path = dir_ + "/" + cid;
  struct stat st {};
  if (::stat(final_path.c_str(), &st) == 0)
    return cid;
  std::array<uint8_t, 8> suffix{};
  random_bytes(suffix);
  const std::string tmp = final_path + ".tmp-" + hex::encode(suffix);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0)
    return fail(api_errc::unavailable, "content store: cannot create a file");
  size_t done = 0;
  while (done < code.size()) {
    const ssize_t n = ::write(fd, code.data() + done, code.size() - done);
    if (n <= 0)
      break;
    done += static_cast<size_t>(n);
  }
  const bool ok = done == code.size() && ::fsync(fd) == 0;
  ::close(fd);
  if (!ok || ::rename(tmp.c_str(), final_path.c_str()) != 0) {
    ::unlink(tmp.c_str());
    return fail(api_errc::unavailable, "content store: write failed");
  }
  return cid;
}

result<std::string> content_store::put_for(const hash256& account, bytes_view code, const upload_quota& quota) const {
  const std::string cid = ipfs::cid_of(code);
  std::lock_guard lock(record_->mu);
  // One IMMEDIATE transaction from the check to the insert: a second process on the same file
  // (or this one, after a crash between the file and the row) never counts past the quota.
  ENACT_TRY_VOID(record_->exec("BEGIN IMMEDIATE", "begin"));
  const auto rollback = [&] {
    (void)record_->exec("ROLLBACK", "rollback");
  };
  auto seen = record_->read(account, cid);
  if (!seen) {
    rollback();
    return seen.err();
  }
  const auto [known, used] = *seen;
  if (!known) {
    const uint64_t size = code.size();
    if (quota.max_count != 0 && used.count + 1 > quota.max_count) {
      rollback();
      return fail(api_errc::forbidden, "upload quota: this account stores " + std::to_string(used.count) +
                                           " actions, at most " + std::to_string(quota.max_count) +
                                           " (limits.upload_quota_count); code it stored before uploads again freely");
    }
    if (quota.max_bytes != 0 && used.bytes + size > quota.max_bytes) {
      rollback();
      return fail(api_errc::forbidden, "upload quota: this account stores " + human_bytes(used.bytes) + " of code; " +
                                           human_bytes(size) + " more would exceed its " +
                                           human_bytes(quota.max_bytes) + " (limits.upload_quota_bytes)");
    }
  }
  auto stored = put(code);
  if (!stored) {
    rollback();
    return stored.err();
  }
  if (!known) {
    statement ins(record_->db, "INSERT INTO uploads (account, cid, bytes, created_at) VALUES (?1, ?2, ?3, ?4)");
    if (!ins.ok()) {
      rollback();
      return record_->failure("prepare insert");
    }
    ins.bind(1, bytes_view(account));
    ins.bind(2, cid);
    ins.bind(3, static_cast<int64_t>(code.size()));
    ins.bind(4, static_cast<int64_t>(std::chrono::duration_cast<std::chrono::seconds>(
                                         std::chrono::system_clock::now().time_since_epoch())
                                         .count()));
    if (ins.step() != SQLITE_DONE) {
      const error e = record_->failure("insert");
      rollback();
      return e;
    }
  }
  if (auto done = record_->exec("COMMIT", "commit"); !done) {
    rollback();
    return done.err();
  }
  return cid;
}

result<upload_usage> content_store::usage(const hash256& account) const {
  std::lock_guard lock(record_->mu);
  ENACT_TRY(const auto seen, record_->read(account, std::string()));
  return seen.second;
}

result<std::optional<bytes>> content_store::get(std::string_view cid_text) const {
  ENACT_TRY(const auto wanted, ipfs::parse(cid_text));
  // Files are named by CIDv0; a v1 dag-pb CID names the same file.
  const ipfs::cid v0{0, ipfs::kCodecDagPb, wanted.multihash};
  if (!ipfs::same_content(wanted, v0))
    return std::optional<bytes>{};
  std::ifstream f(dir_ + "/" + v0.to_string(), std::ios::binary);
  if (!f)
    return std::optional<bytes>{};
  bytes code((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (ipfs::cid_v0_of(code) != v0)
    return fail(api_errc::internal, "content store: " + v0.to_string() + " does not match its CID");
  return std::optional<bytes>(std::move(code));
}

}  // namespace enact::core
