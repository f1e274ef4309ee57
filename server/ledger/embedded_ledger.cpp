// The embedded (SQLite) permission ledger; the rules it enforces are listed in embedded_ledger.hpp.
// Inside this file an SQLite failure is an exception (`sqlite_failure`), so the domain code reads
// straight through; every public method catches it at its transaction boundary, rolls back and
// answers ledger_errc::storage with SQLite's message. Domain failures are results, as elsewhere.
#include "ledger/embedded_ledger.hpp"

#include <sqlite3.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <iterator>
#include <limits>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include <boost/json.hpp>

#include "enact/codec/hex.hpp"
#include "enact/crypto/keccak.hpp"

namespace enact::ledger {
namespace {

constexpr size_t kMaxName = 256;
constexpr size_t kMaxDescription = 4096;
constexpr size_t kMaxEmail = 256;
constexpr size_t kMaxCid = 256;
constexpr size_t kMaxIntentId = 256;
constexpr size_t kMaxProvider = 64;
// WAL readers never block the writer; four cover the HTTP server's threads on a small machine
// (more callers wait for a free connection rather than opening without bound).
constexpr size_t kReadConnections = 4;
// Another process holding the write lock (a backup, the sqlite3 shell) is waited for this long.
constexpr int kBusyTimeoutMs = 5000;
constexpr uint64_t kMaxBalance = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());

// Schema migrations: kMigrations[i] takes user_version i to i + 1. Append, never edit.
// Accounts are referenced by a surrogate row id; lists are ordered by row id, i.e. by creation
// (group members by their row id, i.e. by insertion). Blobs: hashes 32 bytes, addresses 20 bytes.
constexpr auto kMigrations = std::to_array<const char*>({
    R"sql(
CREATE TABLE accounts (
  id                 INTEGER PRIMARY KEY,
  hash               BLOB    NOT NULL UNIQUE,
  admin              BLOB    NOT NULL UNIQUE,
  managed            INTEGER NOT NULL,
  name               TEXT    NOT NULL,
  description        TEXT    NOT NULL,
  email              TEXT    NOT NULL,
  balance            INTEGER NOT NULL DEFAULT 0 CHECK (balance >= 0),
  next_group_id      INTEGER NOT NULL DEFAULT 1,
  wallets_registered INTEGER NOT NULL DEFAULT 0,
  created_at         INTEGER NOT NULL
);
CREATE TABLE usage_keys (
  id          INTEGER PRIMARY KEY,
  hash        BLOB    NOT NULL UNIQUE,
  account_id  INTEGER NOT NULL REFERENCES accounts(id),
  wallet      BLOB    NOT NULL,
  name        TEXT    NOT NULL,
  description TEXT    NOT NULL,
  expiration  INTEGER NOT NULL,
  balance     INTEGER NOT NULL,
  permissions TEXT    NOT NULL,
  created_at  INTEGER NOT NULL
);
CREATE INDEX usage_keys_by_account ON usage_keys(account_id);
CREATE TABLE groups (
  id          INTEGER PRIMARY KEY,
  account_id  INTEGER NOT NULL REFERENCES accounts(id),
  group_id    INTEGER NOT NULL,
  name        TEXT    NOT NULL,
  description TEXT    NOT NULL,
  created_at  INTEGER NOT NULL,
  UNIQUE (account_id, group_id)
);
CREATE TABLE group_pkps (
  id        INTEGER PRIMARY KEY,
  group_row INTEGER NOT NULL REFERENCES groups(id) ON DELETE CASCADE,
  pkp       BLOB    NOT NULL,
  UNIQUE (group_row, pkp)
);
CREATE TABLE group_cids (
  id        INTEGER PRIMARY KEY,
  group_row INTEGER NOT NULL REFERENCES groups(id) ON DELETE CASCADE,
  cid_hash  BLOB    NOT NULL,
  UNIQUE (group_row, cid_hash)
);
CREATE INDEX group_cids_by_hash ON group_cids(cid_hash);
CREATE TABLE wallets (
  id              INTEGER PRIMARY KEY,
  account_id      INTEGER NOT NULL REFERENCES accounts(id),
  pkp_id          BLOB    NOT NULL,
  derivation_path BLOB    NOT NULL,
  name            TEXT    NOT NULL,
  description     TEXT    NOT NULL,
  created_at      INTEGER NOT NULL,
  UNIQUE (account_id, pkp_id)
);
CREATE INDEX wallets_by_account ON wallets(account_id);
CREATE TABLE actions (
  id          INTEGER PRIMARY KEY,
  account_id  INTEGER NOT NULL REFERENCES accounts(id),
  hashed_cid  BLOB    NOT NULL,
  cid         TEXT    NOT NULL,
  name        TEXT    NOT NULL,
  description TEXT    NOT NULL,
  created_at  INTEGER NOT NULL,
  UNIQUE (account_id, hashed_cid)
);
CREATE INDEX actions_by_account ON actions(account_id);
CREATE TABLE payments (
  id           INTEGER PRIMARY KEY,
  account_id   INTEGER NOT NULL REFERENCES accounts(id),
  intent_id    TEXT    NOT NULL UNIQUE,
  amount_cents INTEGER NOT NULL,
  provider     TEXT    NOT NULL,
  credited     INTEGER NOT NULL DEFAULT 0,
  created_at   INTEGER NOT NULL
);
-- sequence is the rowid: max + 1 on insert; writes are serialized and rows never deleted, so the
-- committed sequence has no gaps.
CREATE TABLE events (
  sequence        INTEGER PRIMARY KEY,
  name            TEXT    NOT NULL,
  account         BLOB    NOT NULL,
  sender          BLOB    NOT NULL,
  data            TEXT    NOT NULL,
  charged_credits INTEGER NOT NULL DEFAULT 0,
  created_at      INTEGER NOT NULL
);
)sql",
    // 1 → 2: the account's group count, kept by add_group / remove_group, so a page of
    // list_groups answers its total without counting the account's groups.
    R"sql(
ALTER TABLE accounts ADD COLUMN group_count INTEGER NOT NULL DEFAULT 0 CHECK (group_count >= 0);
UPDATE accounts SET group_count = (SELECT COUNT(*) FROM groups g WHERE g.account_id = accounts.id);
)sql",
});
static_assert(kMigrations.size() == embedded_ledger::kSchemaVersion, "kSchemaVersion must count the migrations");

// ---------------------------------------------------------------------------------------------
// SQLite access

struct sqlite_failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] void throw_sqlite(sqlite3* db, std::string_view what) {
  throw sqlite_failure("sqlite: " + std::string(what) + ": " + (db != nullptr ? sqlite3_errmsg(db) : "out of memory"));
}

/// One SQLite connection and its prepared statements. Used by one thread at a time.
class connection {
 public:
  connection(const std::string& path, bool writer) {
    const int flags =
        (writer ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE : SQLITE_OPEN_READONLY) | SQLITE_OPEN_NOMUTEX;
    sqlite3* db = nullptr;
    const int rc = sqlite3_open_v2(path.c_str(), &db, flags, nullptr);
    db_.reset(db);
    if (rc != SQLITE_OK)
      throw_sqlite(db, "open " + path);
    sqlite3_extended_result_codes(db, 1);
    sqlite3_busy_timeout(db, kBusyTimeoutMs);
  }
  ~connection() {
    for (auto& entry : cache_)
      sqlite3_finalize(entry.second);
  }
  connection(const connection&) = delete;
  connection& operator=(const connection&) = delete;

  [[nodiscard]] sqlite3* handle() const noexcept { return db_.get(); }

  /// The prepared statement for `sql` (a string literal: the cache keys on its text).
  [[nodiscard]] sqlite3_stmt* statement(std::string_view sql) {
    if (auto it = cache_.find(sql); it != cache_.end())
      return it->second;
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v3(db_.get(), sql.data(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT, &s,
                           nullptr) != SQLITE_OK)
      throw_sqlite(db_.get(), "prepare");
    cache_.emplace(sql, s);
    return s;
  }

  /// Runs uncached SQL text (schema scripts, pragmas).
  void exec(const std::string& sql) {
    if (sqlite3_exec(db_.get(), sql.c_str(), nullptr, nullptr, nullptr) != SQLITE_OK)
      throw_sqlite(db_.get(), "exec");
  }

  /// Rolls back the open transaction, if any; never throws (used on failure paths).
  void rollback() noexcept {
    if (sqlite3_get_autocommit(db_.get()) == 0)
      sqlite3_exec(db_.get(), "ROLLBACK", nullptr, nullptr, nullptr);
  }

 private:
  struct closer {
    void operator()(sqlite3* db) const noexcept { sqlite3_close_v2(db); }
  };
  std::unique_ptr<sqlite3, closer> db_;
  std::unordered_map<std::string_view, sqlite3_stmt*> cache_;
};

/// A cached statement in use: binds in order, steps, reads columns; reset when it goes away.
class query {
 public:
  query(connection& c, std::string_view sql) : db_(c.handle()), s_(c.statement(sql)) {}
  ~query() {
    sqlite3_reset(s_);
    sqlite3_clear_bindings(s_);
  }
  query(const query&) = delete;
  query& operator=(const query&) = delete;

  template <class... A>
  query& bind(const A&... args) {
    (bind_one(args), ...);
    return *this;
  }

  /// True with a row to read, false when done.
  [[nodiscard]] bool next() {
    const int rc = sqlite3_step(s_);
    if (rc == SQLITE_ROW)
      return true;
    if (rc == SQLITE_DONE)
      return false;
    throw_sqlite(db_, "step");
  }
  void run() {
    while (next()) {
    }
  }

  [[nodiscard]] int64_t i64(int col) const { return sqlite3_column_int64(s_, col); }
  [[nodiscard]] uint64_t u64(int col) const { return static_cast<uint64_t>(i64(col)); }
  [[nodiscard]] bool boolean(int col) const { return i64(col) != 0; }
  [[nodiscard]] std::string text(int col) const {
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(s_, col));
    return p == nullptr ? std::string() : std::string(p, sqlite3_column_bytes(s_, col));
  }
  template <size_t N>
  [[nodiscard]] std::array<uint8_t, N> fixed(int col) const {
    std::array<uint8_t, N> out{};
    const void* p = sqlite3_column_blob(s_, col);
    if (p == nullptr && sqlite3_column_type(s_, col) == SQLITE_NULL)
      return out;  // LEFT JOIN without a match
    if (static_cast<size_t>(sqlite3_column_bytes(s_, col)) != N)
      throw sqlite_failure("sqlite: corrupt row: blob of " + std::to_string(sqlite3_column_bytes(s_, col)) +
                           " bytes, expected " + std::to_string(N));
    std::copy_n(static_cast<const uint8_t*>(p), N, out.begin());
    return out;
  }
  [[nodiscard]] hash256 hash(int col) const { return fixed<32>(col); }
  [[nodiscard]] address addr(int col) const { return fixed<20>(col); }

 private:
  void check(int rc) const {
    if (rc != SQLITE_OK)
      throw_sqlite(db_, "bind");
  }
  void bind_one(int64_t v) { check(sqlite3_bind_int64(s_, ++index_, v)); }
  // uint64 values (expirations, key balances, group ids) keep their bits in SQLite's int64.
  void bind_one(uint64_t v) { bind_one(static_cast<int64_t>(v)); }
  void bind_one(int v) { bind_one(static_cast<int64_t>(v)); }
  void bind_one(bool v) { bind_one(static_cast<int64_t>(v ? 1 : 0)); }
  void bind_one(std::string_view v) {
    check(sqlite3_bind_text64(s_, ++index_, v.data(), v.size(), SQLITE_TRANSIENT, SQLITE_UTF8));
  }
  void bind_one(const std::string& v) { bind_one(std::string_view(v)); }
  template <size_t N>
  void bind_one(const std::array<uint8_t, N>& v) {
    check(sqlite3_bind_blob64(s_, ++index_, v.data(), N, SQLITE_TRANSIENT));
  }

  sqlite3* db_;
  sqlite3_stmt* s_;
  int index_ = 0;
};

/// Read-only connections handed out one caller at a time.
class reader_pool {
 public:
  explicit reader_pool(std::string path) : path_(std::move(path)) {}

  class lease {
   public:
    lease(reader_pool& pool, std::unique_ptr<connection> c) : pool_(pool), c_(std::move(c)) {}
    ~lease() { pool_.release(std::move(c_)); }
    lease(const lease&) = delete;
    lease& operator=(const lease&) = delete;
    connection& operator*() const noexcept { return *c_; }

   private:
    reader_pool& pool_;
    std::unique_ptr<connection> c_;
  };

  [[nodiscard]] lease acquire() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return !idle_.empty() || open_ < kReadConnections; });
    if (!idle_.empty()) {
      std::unique_ptr<connection> c = std::move(idle_.back());
      idle_.pop_back();
      return {*this, std::move(c)};
    }
    ++open_;
    lock.unlock();
    try {
      auto c = std::make_unique<connection>(path_, false);
      return {*this, std::move(c)};
    } catch (...) {
      lock.lock();
      --open_;
      cv_.notify_one();
      throw;
    }
  }

 private:
  void release(std::unique_ptr<connection> c) {
    if (!c)
      return;
    std::lock_guard lock(mu_);
    idle_.push_back(std::move(c));
    cv_.notify_one();
  }

  std::string path_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::unique_ptr<connection>> idle_;
  size_t open_ = 0;
};

// ---------------------------------------------------------------------------------------------
// Small domain helpers

[[nodiscard]] int64_t now_seconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

template <size_t N>
[[nodiscard]] std::string hx(const std::array<uint8_t, N>& v) {
  return hex::encode_prefixed(v);
}

template <size_t N>
[[nodiscard]] bool is_zero(const std::array<uint8_t, N>& v) {
  return std::all_of(v.begin(), v.end(), [](uint8_t b) { return b == 0; });
}

[[nodiscard]] error storage_error(const std::exception& e) { return fail(ledger_errc::storage, e.what()); }

[[nodiscard]] result<void> check_name(std::string_view field, std::string_view v) {
  if (v.empty())
    return fail(ledger_errc::invalid_argument, std::string(field) + ": must not be empty");
  if (v.size() > kMaxName)
    return fail(ledger_errc::invalid_argument, std::string(field) + ": longer than " + std::to_string(kMaxName) +
                                                   " bytes (" + std::to_string(v.size()) + ")");
  return {};
}

[[nodiscard]] result<void> check_length(std::string_view field, std::string_view v, size_t max) {
  if (v.size() > max)
    return fail(ledger_errc::invalid_argument, std::string(field) + ": longer than " + std::to_string(max) +
                                                   " bytes (" + std::to_string(v.size()) + ")");
  return {};
}

[[nodiscard]] result<void> check_metadata(std::string_view name, std::string_view description) {
  ENACT_TRY_VOID(check_name("name", name));
  return check_length("description", description, kMaxDescription);
}

/// The page's LIMIT and OFFSET (API.md §0 pages are 1-based).
[[nodiscard]] result<std::pair<int64_t, int64_t>> page_bounds(page_request p) {
  if (p.number == 0 || p.size == 0)
    return fail(ledger_errc::invalid_argument, "page: number and size must be at least 1");
  const uint64_t size = std::min(p.size, kMaxBalance);
  const uint64_t skip = p.number - 1;
  const uint64_t offset = skip > kMaxBalance / size ? kMaxBalance : skip * size;
  return std::pair{static_cast<int64_t>(size), static_cast<int64_t>(offset)};
}

[[nodiscard]] error unknown_account(const account_hash& h) {
  return fail(ledger_errc::unknown_account, "account " + hx(h) + ": no such account");
}
[[nodiscard]] error unknown_group(const account_hash& h, group_id id) {
  return fail(ledger_errc::unknown_group, "group_id " + std::to_string(id) + ": no such group in account " + hx(h));
}

struct account_row {
  int64_t id = 0;
  account acct;
  uint64_t balance = 0;
  uint64_t next_group_id = 1;
  uint64_t wallets_registered = 0;
  uint64_t group_count = 0;
};

#define ENACT_ACCOUNT_SELECT                                                         \
  "SELECT id, hash, admin, managed, name, description, email, created_at, balance, " \
  "next_group_id, wallets_registered, group_count FROM accounts "

[[nodiscard]] account_row read_account(const query& q) {
  account_row r;
  r.id = q.i64(0);
  r.acct.hash = q.hash(1);
  r.acct.admin = q.addr(2);
  r.acct.managed = q.boolean(3);
  r.acct.name = q.text(4);
  r.acct.description = q.text(5);
  r.acct.email = q.text(6);
  r.acct.created_at = q.i64(7);
  r.balance = q.u64(8);
  r.next_group_id = q.u64(9);
  r.wallets_registered = q.u64(10);
  r.group_count = q.u64(11);
  return r;
}

[[nodiscard]] std::optional<account_row> load_account(connection& c, const account_hash& h) {
  query q(c, ENACT_ACCOUNT_SELECT "WHERE hash = ?");
  q.bind(h);
  if (!q.next())
    return std::nullopt;
  return read_account(q);
}

[[nodiscard]] std::optional<account_row> load_account_by_admin(connection& c, const address& a) {
  query q(c, ENACT_ACCOUNT_SELECT "WHERE admin = ?");
  q.bind(a);
  if (!q.next())
    return std::nullopt;
  return read_account(q);
}
#undef ENACT_ACCOUNT_SELECT

[[nodiscard]] result<account_row> require_account(connection& c, const account_hash& h) {
  std::optional<account_row> r = load_account(c, h);
  if (!r)
    return unknown_account(h);
  return std::move(*r);
}

[[nodiscard]] uint64_t count(connection& c, std::string_view sql, int64_t key) {
  query q(c, sql);
  q.bind(key);
  return q.next() ? q.u64(0) : 0;
}

// --- usage keys --------------------------------------------------------------------------------

#define ENACT_USAGE_KEY_SELECT                                                        \
  "SELECT k.hash, a.hash, k.wallet, k.name, k.description, k.expiration, k.balance, " \
  "k.permissions, k.created_at FROM usage_keys k JOIN accounts a ON a.id = k.account_id "

[[nodiscard]] usage_key read_usage_key(const query& q) {
  usage_key k;
  k.hash = q.hash(0);
  k.account = q.hash(1);
  k.wallet = q.addr(2);
  k.name = q.text(3);
  k.description = q.text(4);
  k.expiration = q.u64(5);
  k.balance = q.u64(6);
  const boost::json::value v = boost::json::parse(q.text(7));
  result<scope::permission_set> perms = scope::permission_set_from_json(v.as_object());
  if (!perms)
    throw sqlite_failure("corrupt usage key permissions: " + perms.err().message);
  k.permissions = std::move(perms).value();
  k.created_at = q.i64(8);
  return k;
}

/// Whether the account holds the usage key (checked before a write charges, as every write does).
[[nodiscard]] bool usage_key_in(connection& c, int64_t account_id, const hash256& key_hash) {
  query q(c, "SELECT 1 FROM usage_keys WHERE account_id = ? AND hash = ?");
  q.bind(account_id, key_hash);
  return q.next();
}

[[nodiscard]] error unknown_usage_key(const account_hash& h, const hash256& key_hash) {
  return fail(ledger_errc::unknown_usage_key, "usage key " + hx(key_hash) + ": no such key in account " + hx(h));
}

[[nodiscard]] std::string permissions_text(const scope::permission_set& p) {
  return boost::json::serialize(boost::json::value_from(p));
}

// --- groups ------------------------------------------------------------------------------------

struct group_row {
  int64_t row = 0;
  group g;
};

[[nodiscard]] std::optional<int64_t> find_group_row(connection& c, int64_t account_id, group_id id) {
  query q(c, "SELECT id FROM groups WHERE account_id = ? AND group_id = ?");
  q.bind(account_id, id);
  if (!q.next())
    return std::nullopt;
  return q.i64(0);
}

/// Groups of the account with group_id in [lo, hi], in id order, `limit` from `offset`, with their
/// members: three queries whatever the number of groups. The member queries walk the page's groups
/// and reach their members by index (CROSS JOIN fixes that order: SQLite would otherwise scan every
/// member row of every account and join them to the groups).
[[nodiscard]] std::vector<group> load_groups(connection& c, int64_t account_id, group_id lo, group_id hi, int64_t limit,
                                             int64_t offset) {
  std::vector<group> out;
  std::unordered_map<int64_t, size_t> by_row;
  {
    query q(c,
            "SELECT id, group_id, name, description FROM groups WHERE account_id = ? AND "
            "group_id BETWEEN ? AND ? ORDER BY group_id LIMIT ? OFFSET ?");
    q.bind(account_id, static_cast<int64_t>(lo), static_cast<int64_t>(hi), limit, offset);
    while (q.next()) {
      group g;
      g.id = q.u64(1);
      g.name = q.text(2);
      g.description = q.text(3);
      by_row.emplace(q.i64(0), out.size());
      out.push_back(std::move(g));
    }
  }
  if (out.empty())
    return out;
  const auto first = static_cast<int64_t>(out.front().id);
  const auto last = static_cast<int64_t>(out.back().id);
  {
    query q(c,
            "SELECT m.group_row, m.pkp FROM groups g CROSS JOIN group_pkps m ON m.group_row = "
            "g.id WHERE g.account_id = ? AND g.group_id BETWEEN ? AND ? ORDER BY m.id");
    q.bind(account_id, first, last);
    while (q.next())
      if (auto it = by_row.find(q.i64(0)); it != by_row.end())
        out[it->second].pkps.push_back(q.addr(1));
  }
  {
    query q(c,
            "SELECT m.group_row, m.cid_hash FROM groups g CROSS JOIN group_cids m ON m.group_row "
            "= g.id WHERE g.account_id = ? AND g.group_id BETWEEN ? AND ? ORDER BY m.id");
    q.bind(account_id, first, last);
    while (q.next())
      if (auto it = by_row.find(q.i64(0)); it != by_row.end())
        out[it->second].cid_hashes.push_back(q.hash(1));
  }
  return out;
}

// Group ids are stored as SQLite int64; ids beyond that range cannot exist (they count from 1).
constexpr group_id kMaxGroupId = static_cast<group_id>(std::numeric_limits<int64_t>::max());

[[nodiscard]] std::optional<group> load_group(connection& c, int64_t account_id, group_id id) {
  if (id == 0 || id > kMaxGroupId)
    return std::nullopt;
  std::vector<group> v = load_groups(c, account_id, id, id, 1, 0);
  if (v.empty())
    return std::nullopt;
  return std::move(v.front());
}

[[nodiscard]] bool wallet_registered(connection& c, int64_t account_id, const address& pkp) {
  query q(c, "SELECT 1 FROM wallets WHERE account_id = ? AND pkp_id = ?");
  q.bind(account_id, pkp);
  return q.next();
}

template <size_t N>
[[nodiscard]] boost::json::array hex_array(const std::vector<std::array<uint8_t, N>>& v) {
  boost::json::array a;
  a.reserve(v.size());
  for (const auto& x : v)
    a.emplace_back(hx(x));
  return a;
}

/// Group sets as add_group / update_group take them: every PKP registered, nothing twice.
[[nodiscard]] result<void> check_group_sets(connection& c, const account_row& a, const group& g) {
  for (size_t i = 0; i < g.pkps.size(); ++i)
    if (std::find(g.pkps.begin(), g.pkps.begin() + static_cast<ptrdiff_t>(i), g.pkps[i]) !=
        g.pkps.begin() + static_cast<ptrdiff_t>(i))
      return fail(ledger_errc::invalid_argument,
                  "pkp_ids_permitted[" + std::to_string(i) + "]: " + hx(g.pkps[i]) + " listed twice");
  for (size_t i = 0; i < g.cid_hashes.size(); ++i)
    if (std::find(g.cid_hashes.begin(), g.cid_hashes.begin() + static_cast<ptrdiff_t>(i), g.cid_hashes[i]) !=
        g.cid_hashes.begin() + static_cast<ptrdiff_t>(i))
      return fail(ledger_errc::invalid_argument,
                  "cid_hashes_permitted[" + std::to_string(i) + "]: " + hx(g.cid_hashes[i]) + " listed twice");
  for (size_t i = 0; i < g.pkps.size(); ++i)
    if (!wallet_registered(c, a.id, g.pkps[i]))
      return fail(ledger_errc::unknown_wallet, "pkp_ids_permitted[" + std::to_string(i) + "]: " + hx(g.pkps[i]) +
                                                   " is not registered in account " + hx(a.acct.hash));
  return {};
}

void insert_group_members(connection& c, int64_t row, const group& g) {
  for (const address& p : g.pkps)
    query(c, "INSERT INTO group_pkps (group_row, pkp) VALUES (?, ?)").bind(row, p).run();
  for (const hash256& h : g.cid_hashes)
    query(c, "INSERT INTO group_cids (group_row, cid_hash) VALUES (?, ?)").bind(row, h).run();
}

[[nodiscard]] boost::json::object group_event(const account_hash& h, const group& g) {
  return {{"accountHash", hx(h)},
          {"groupId", g.id},
          {"name", g.name},
          {"description", g.description},
          {"pkpIds", hex_array(g.pkps)},
          {"cidHashes", hex_array(g.cid_hashes)}};
}

// --- wallets and actions -----------------------------------------------------------------------

[[nodiscard]] wallet read_wallet(const query& q) {
  wallet w;
  w.pkp_id = q.addr(0);
  w.derivation_path = q.hash(1);
  w.name = q.text(2);
  w.description = q.text(3);
  w.created_at = q.i64(4);
  return w;
}

[[nodiscard]] action read_action(const query& q) {
  action a;
  a.hashed_cid = q.hash(0);
  a.cid = q.text(1);
  a.name = q.text(2);
  a.description = q.text(3);
  a.created_at = q.i64(4);
  return a;
}

[[nodiscard]] std::optional<action> load_action(connection& c, int64_t account_id, const hash256& hashed_cid) {
  query q(c,
          "SELECT hashed_cid, cid, name, description, created_at FROM actions "
          "WHERE account_id = ? AND hashed_cid = ?");
  q.bind(account_id, hashed_cid);
  if (!q.next())
    return std::nullopt;
  return read_action(q);
}

[[nodiscard]] error unknown_action(const account_hash& h, const hash256& cid) {
  return fail(ledger_errc::unknown_action, "hashed_cid " + hx(cid) + ": no such action in account " + hx(h));
}

// --- payments ----------------------------------------------------------------------------------

struct payment_row {
  int64_t id = 0;
  payment p;
};

[[nodiscard]] std::optional<payment_row> load_payment(connection& c, const account_row& a, std::string_view intent_id) {
  query q(c,
          "SELECT id, intent_id, amount_cents, provider, credited, created_at FROM payments "
          "WHERE account_id = ? AND intent_id = ?");
  q.bind(a.id, intent_id);
  if (!q.next())
    return std::nullopt;
  payment_row r;
  r.id = q.i64(0);
  r.p.intent_id = q.text(1);
  r.p.account = a.acct.hash;
  r.p.amount_cents = q.u64(2);
  r.p.provider = q.text(3);
  r.p.credited = q.boolean(4);
  r.p.created_at = q.i64(5);
  return r;
}

}  // namespace

// -----------------------------------------------------------------------------------------------
// The store: one writer, a pool of readers, and the transaction boundaries.

struct embedded_ledger::store {
  store(std::string p, std::vector<address> payers)
      : path(std::move(p)), api_payers(std::move(payers)), readers(path) {}

  std::string path;
  std::vector<address> api_payers;
  std::mutex write_mu;
  std::unique_ptr<connection> writer;
  reader_pool readers;

  /// Runs `f(connection&)` (returning result<T>) as one write transaction: committed when it
  /// succeeds, rolled back when it fails or SQLite does. Inside batch() on this thread it is a
  /// savepoint of the batch's transaction instead, released or rolled back on its own.
  template <class F>
  auto write(F&& f) -> decltype(f(std::declval<connection&>())) {
    if (t_batch_store == this)
      return write_in_batch(std::forward<F>(f));
    std::lock_guard lock(write_mu);
    connection& c = *writer;
    try {
      query(c, "BEGIN IMMEDIATE").run();
      auto r = f(c);
      if (!r) {
        c.rollback();
        return r;
      }
      query(c, "COMMIT").run();
      return r;
    } catch (const std::exception& e) {
      c.rollback();
      return storage_error(e);
    }
  }

  template <class F>
  auto write_in_batch(F&& f) -> decltype(f(std::declval<connection&>())) {
    connection& c = *writer;
    try {
      query(c, "SAVEPOINT batch_write").run();
      auto r = f(c);
      if (!r)
        query(c, "ROLLBACK TO batch_write").run();
      query(c, "RELEASE batch_write").run();
      return r;
    } catch (const std::exception& e) {
      batch_failed = true;  // the savepoint's state is unknown: the batch rolls back
      return storage_error(e);
    }
  }

  /// The store whose batch() runs on this thread (its writes are savepoints, the lock is held).
  static thread_local const store* t_batch_store;
  bool batch_failed = false;  // guarded by write_mu

  /// Runs `f(connection&)` on a read connection; inside one read transaction (a consistent
  /// snapshot) when it reads more than one statement.
  template <class F>
  auto read(F&& f, bool snapshot = true) -> decltype(f(std::declval<connection&>())) {
    try {
      reader_pool::lease lease = readers.acquire();
      connection& c = *lease;
      try {
        if (snapshot)
          query(c, "BEGIN").run();
        auto r = f(c);
        if (snapshot)
          query(c, "COMMIT").run();
        return r;
      } catch (...) {
        c.rollback();
        throw;
      }
    } catch (const std::exception& e) {
      return storage_error(e);
    }
  }

  /// The sender rule of API.md §3: the admin, or an api_payer relaying for a managed account.
  [[nodiscard]] result<void> check_sender(const address& sender, const address& admin, bool managed,
                                          const account_hash& h) const {
    if (sender == admin)
      return {};
    if (std::find(api_payers.begin(), api_payers.end(), sender) != api_payers.end()) {
      if (managed)
        return {};
      return fail(ledger_errc::relay_not_allowed,
                  "sender " + hx(sender) + ": api_payer relay refused for unmanaged account " + hx(h));
    }
    return fail(ledger_errc::not_admin, "sender " + hx(sender) + ": not the admin of account " + hx(h));
  }

  [[nodiscard]] bool is_api_payer(const address& a) const {
    return std::find(api_payers.begin(), api_payers.end(), a) != api_payers.end();
  }
};

thread_local const embedded_ledger::store* embedded_ledger::store::t_batch_store = nullptr;

namespace {

/// A write on an existing account, past the sender rule: debits the charge, appends the event.
struct account_write {
  connection& c;
  const write_context& w;
  account_row& a;

  [[nodiscard]] result<void> charge() {
    if (w.charge_credits == 0)
      return {};
    if (a.balance < w.charge_credits)
      return fail(ledger_errc::insufficient_credits, "account " + hx(a.acct.hash) + ": balance " +
                                                         std::to_string(a.balance) + " below the charge of " +
                                                         std::to_string(w.charge_credits) + " credits");
    query(c, "UPDATE accounts SET balance = balance - ? WHERE id = ?").bind(w.charge_credits, a.id).run();
    a.balance -= w.charge_credits;
    return {};
  }

  void emit(std::string_view name, const boost::json::object& data) {
    query(c,
          "INSERT INTO events (name, account, sender, data, charged_credits, created_at) "
          "VALUES (?, ?, ?, ?, ?, ?)")
        .bind(name, a.acct.hash, w.sender, boost::json::serialize(data), w.charge_credits, now_seconds())
        .run();
  }
};

}  // namespace

// -----------------------------------------------------------------------------------------------
// open

result<std::unique_ptr<embedded_ledger>> embedded_ledger::open(const std::string& sqlite_path,
                                                               std::vector<address> api_payers) {
  auto s = std::make_unique<store>(sqlite_path, std::move(api_payers));
  try {
    s->writer = std::make_unique<connection>(sqlite_path, true);
    connection& c = *s->writer;
    {
      query q(c, "PRAGMA journal_mode = WAL");
      if (!q.next() || q.text(0) != "wal")
        return fail(ledger_errc::storage, "sqlite: " + sqlite_path + ": cannot enable WAL journal");
    }
    c.exec("PRAGMA synchronous = NORMAL");
    c.exec("PRAGMA foreign_keys = ON");

    const auto user_version = [&c] {
      query q(c, "PRAGMA user_version");
      return q.next() ? q.i64(0) : 0;
    };
    const auto refuse_newer = [&](int64_t v) {
      return fail(ledger_errc::storage, "sqlite: " + sqlite_path + ": schema version " + std::to_string(v) +
                                            " is newer than this build's " + std::to_string(kSchemaVersion));
    };
    int64_t version = user_version();
    if (version > kSchemaVersion)
      return refuse_newer(version);
    if (version < kSchemaVersion) {
      try {
        c.exec("BEGIN IMMEDIATE");
        version = user_version();  // another process may have migrated meanwhile
        if (version > kSchemaVersion) {
          c.rollback();
          return refuse_newer(version);
        }
        for (int64_t v = version; v < kSchemaVersion; ++v)
          c.exec(kMigrations[v]);
        c.exec("PRAGMA user_version = " + std::to_string(kSchemaVersion));
        c.exec("COMMIT");
      } catch (...) {
        c.rollback();
        throw;
      }
    }
    // One reader now, so that a file readers cannot open fails here rather than on first use.
    { reader_pool::lease l = s->readers.acquire(); }
  } catch (const std::exception& e) {
    return storage_error(e);
  }
  return std::unique_ptr<embedded_ledger>(new embedded_ledger(std::move(s)));
}

embedded_ledger::embedded_ledger(std::unique_ptr<store> s) : store_(std::move(s)) {}
embedded_ledger::~embedded_ledger() = default;

std::vector<address> embedded_ledger::api_payers() const { return store_->api_payers; }

// -----------------------------------------------------------------------------------------------
// accounts

result<void> embedded_ledger::new_account(const write_context& w, const account& a) {
  return store_->write([&](connection& c) -> result<void> {
    ENACT_TRY_VOID(store_->check_sender(w.sender, a.admin, a.managed, a.hash));
    // API.md §3 identity rules: a wallet (past check_sender, it is the admin) creates only its
    // own ChainSecured account under the hash every client derives from its address, so no one
    // squats another wallet's account or creates one under a hash of its choosing (a victim's
    // usage-key hash, say).
    if (!store_->is_api_payer(w.sender)) {
      if (a.managed)
        return fail(ledger_errc::managed_not_allowed,
                    "sender " + hx(w.sender) +
                        ": a wallet creates only an unmanaged (ChainSecured) account; API-mode "
                        "accounts are created by the server");
      if (a.hash != keccak256(bytes_view(a.admin)))
        return fail(ledger_errc::hash_not_canonical,
                    "account " + hx(a.hash) + ": a wallet's account hash must be " +
                        "keccak256(abi.encodePacked(admin)) = " + hx(keccak256(bytes_view(a.admin))));
    }
    if (is_zero(a.admin))
      return fail(ledger_errc::invalid_argument, "admin: must not be the zero address");
    ENACT_TRY_VOID(check_metadata(a.name, a.description));
    ENACT_TRY_VOID(check_length("email", a.email, kMaxEmail));
    if (load_account(c, a.hash))
      return fail(ledger_errc::duplicate, "account " + hx(a.hash) + ": exists already");
    // One namespace: an account under a usage key's hash would take that key over.
    {
      query q(c, "SELECT 1 FROM usage_keys WHERE hash = ?");
      q.bind(a.hash);
      if (q.next())
        return fail(ledger_errc::hash_is_usage_key, "account " + hx(a.hash) + ": the hash is a usage key's");
    }
    if (std::optional<account_row> other = load_account_by_admin(c, a.admin))
      return fail(ledger_errc::duplicate,
                  "admin " + hx(a.admin) + ": administers account " + hx(other->acct.hash) + " already");
    if (w.charge_credits > 0)
      return fail(ledger_errc::insufficient_credits, "account " + hx(a.hash) + ": balance 0 below the charge of " +
                                                         std::to_string(w.charge_credits) + " credits");
    const int64_t now = now_seconds();
    query(c,
          "INSERT INTO accounts (hash, admin, managed, name, description, email, created_at) "
          "VALUES (?, ?, ?, ?, ?, ?, ?)")
        .bind(a.hash, a.admin, a.managed, a.name, a.description, a.email, now)
        .run();
    account_row row;
    row.acct = a;
    account_write tx{c, w, row};
    tx.emit("AccountCreated", {{"accountHash", hx(a.hash)},
                               {"adminWalletAddress", hx(a.admin)},
                               {"managed", a.managed},
                               {"name", a.name},
                               {"description", a.description}});
    return {};
  });
}

result<account> embedded_ledger::get_account(const account_hash& h) const {
  return store_->read(
      [&](connection& c) -> result<account> {
        ENACT_TRY(account_row r, require_account(c, h));
        return std::move(r.acct);
      },
      false);
}

result<account> embedded_ledger::account_by_admin(const address& admin) const {
  return store_->read(
      [&](connection& c) -> result<account> {
        std::optional<account_row> r = load_account_by_admin(c, admin);
        if (!r)
          return fail(ledger_errc::unknown_account, "admin " + hx(admin) + ": administers no account");
        return std::move(r->acct);
      },
      false);
}

result<void> embedded_ledger::convert_to_chain_secured(const write_context& w, const account_hash& h,
                                                       const address& new_admin) {
  return store_->write([&](connection& c) -> result<void> {
    ENACT_TRY(account_row a, require_account(c, h));
    ENACT_TRY_VOID(store_->check_sender(w.sender, a.acct.admin, a.acct.managed, h));
    if (is_zero(new_admin))
      return fail(ledger_errc::invalid_argument, "new_admin: must not be the zero address");
    if (!a.acct.managed)
      return fail(ledger_errc::already_unmanaged, "account " + hx(h) + ": converted to ChainSecured already");
    // Consent of the new admin: a wallet converts its account only to itself; handing it to
    // another wallet (which then could not create its own account, and whose mints and billing
    // would land here) needs that wallet's signature, which only the api_payer's relay carries.
    if (new_admin != w.sender && !store_->is_api_payer(w.sender))
      return fail(ledger_errc::new_admin_not_sender,
                  "account " + hx(h) + ": new_admin " + hx(new_admin) +
                      " is not the sender; the admin converts only to its own address (another "
                      "wallet consents through the core service's ConvertAccount envelope)");
    if (new_admin != a.acct.admin)
      if (std::optional<account_row> other = load_account_by_admin(c, new_admin))
        return fail(ledger_errc::duplicate,
                    "new_admin " + hx(new_admin) + ": administers account " + hx(other->acct.hash) + " already");
    account_write tx{c, w, a};
    ENACT_TRY_VOID(tx.charge());
    query(c, "UPDATE accounts SET admin = ?, managed = 0 WHERE id = ?").bind(new_admin, a.id).run();
    tx.emit("AccountConverted",
            {{"accountHash", hx(h)}, {"previousAdmin", hx(a.acct.admin)}, {"newAdmin", hx(new_admin)}});
    return {};
  });
}

// -----------------------------------------------------------------------------------------------
// usage keys

result<void> embedded_ledger::set_usage_key(const write_context& w, const usage_key& k) {
  return store_->write([&](connection& c) -> result<void> {
    ENACT_TRY(account_row a, require_account(c, k.account));
    ENACT_TRY_VOID(store_->check_sender(w.sender, a.acct.admin, a.acct.managed, k.account));
    ENACT_TRY_VOID(check_metadata(k.name, k.description));
    // One namespace (API.md §3): a key under an account's hash, or under another account's key
    // hash, would make that credential authenticate here.
    if (load_account(c, k.hash))
      return fail(ledger_errc::hash_is_account, "usage key " + hx(k.hash) + ": the hash is an account's");
    account_write tx{c, w, a};
    std::optional<int64_t> existing;
    {
      query q(c, "SELECT id, account_id FROM usage_keys WHERE hash = ?");
      q.bind(k.hash);
      if (q.next()) {
        if (q.i64(1) != a.id)
          return fail(ledger_errc::usage_key_of_another_account,
                      "usage key " + hx(k.hash) + ": another account holds a key with this hash");
        existing = q.i64(0);
      }
    }
    ENACT_TRY_VOID(tx.charge());
    const std::string perms = permissions_text(k.permissions);
    if (existing) {
      query(c,
            "UPDATE usage_keys SET wallet = ?, name = ?, description = ?, expiration = ?, "
            "balance = ?, permissions = ? WHERE id = ?")
          .bind(k.wallet, k.name, k.description, k.expiration, k.balance, perms, *existing)
          .run();
    } else {
      query(c,
            "INSERT INTO usage_keys (hash, account_id, wallet, name, description, expiration, "
            "balance, permissions, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)")
          .bind(k.hash, a.id, k.wallet, k.name, k.description, k.expiration, k.balance, perms, now_seconds())
          .run();
    }
    tx.emit("UsageApiKeySet", {{"accountHash", hx(k.account)},
                               {"usageKeyHash", hx(k.hash)},
                               {"wallet", hx(k.wallet)},
                               {"expiration", k.expiration},
                               {"balance", k.balance},
                               {"name", k.name},
                               {"description", k.description},
                               {"permissions", boost::json::value_from(k.permissions)}});
    return {};
  });
}

result<void> embedded_ledger::update_usage_key_metadata(const write_context& w, const account_hash& account,
                                                        const hash256& key_hash, std::string_view name,
                                                        std::string_view description) {
  return store_->write([&](connection& c) -> result<void> {
    ENACT_TRY(account_row a, require_account(c, account));
    ENACT_TRY_VOID(store_->check_sender(w.sender, a.acct.admin, a.acct.managed, account));
    ENACT_TRY_VOID(check_metadata(name, description));
    account_write tx{c, w, a};
    if (!usage_key_in(c, a.id, key_hash))
      return unknown_usage_key(account, key_hash);
    ENACT_TRY_VOID(tx.charge());
    query(c, "UPDATE usage_keys SET name = ?, description = ? WHERE account_id = ? AND hash = ?")
        .bind(name, description, a.id, key_hash)
        .run();
    tx.emit(
        "UsageApiKeyMetadataUpdated",
        {{"accountHash", hx(account)}, {"usageKeyHash", hx(key_hash)}, {"name", name}, {"description", description}});
    return {};
  });
}

result<void> embedded_ledger::remove_usage_key(const write_context& w, const account_hash& account,
                                               const hash256& key_hash) {
  return store_->write([&](connection& c) -> result<void> {
    ENACT_TRY(account_row a, require_account(c, account));
    ENACT_TRY_VOID(store_->check_sender(w.sender, a.acct.admin, a.acct.managed, account));
    account_write tx{c, w, a};
    if (!usage_key_in(c, a.id, key_hash))
      return unknown_usage_key(account, key_hash);
    ENACT_TRY_VOID(tx.charge());
    query(c, "DELETE FROM usage_keys WHERE account_id = ? AND hash = ?").bind(a.id, key_hash).run();
    tx.emit("UsageApiKeyRemoved", {{"accountHash", hx(account)}, {"usageKeyHash", hx(key_hash)}});
    return {};
  });
}

result<usage_key> embedded_ledger::find_usage_key(const hash256& key_hash) const {
  return store_->read(
      [&](connection& c) -> result<usage_key> {
        query q(c, ENACT_USAGE_KEY_SELECT "WHERE k.hash = ?");
        q.bind(key_hash);
        if (!q.next())
          return fail(ledger_errc::unknown_usage_key, "usage key " + hx(key_hash) + ": no such key");
        return read_usage_key(q);
      },
      false);
}

result<page<usage_key>> embedded_ledger::list_usage_keys(const account_hash& account, page_request p) const {
  ENACT_TRY(const auto bounds, page_bounds(p));
  return store_->read([&](connection& c) -> result<page<usage_key>> {
    ENACT_TRY(account_row a, require_account(c, account));
    page<usage_key> out;
    out.total = count(c, "SELECT COUNT(*) FROM usage_keys WHERE account_id = ?", a.id);
    query q(c, ENACT_USAGE_KEY_SELECT "WHERE k.account_id = ? ORDER BY k.id LIMIT ? OFFSET ?");
    q.bind(a.id, bounds.first, bounds.second);
    while (q.next())
      out.items.push_back(read_usage_key(q));
    return out;
  });
}
#undef ENACT_USAGE_KEY_SELECT

// -----------------------------------------------------------------------------------------------
// groups

result<group> embedded_ledger::add_group(const write_context& w, const account_hash& account, const group& g) {
  return store_->write([&](connection& c) -> result<group> {
    ENACT_TRY(account_row a, require_account(c, account));
    ENACT_TRY_VOID(store_->check_sender(w.sender, a.acct.admin, a.acct.managed, account));
    ENACT_TRY_VOID(check_metadata(g.name, g.description));
    account_write tx{c, w, a};
    ENACT_TRY_VOID(check_group_sets(c, a, g));
    ENACT_TRY_VOID(tx.charge());
    group out = g;
    out.id = a.next_group_id;
    query(c,
          "INSERT INTO groups (account_id, group_id, name, description, created_at) "
          "VALUES (?, ?, ?, ?, ?)")
        .bind(a.id, out.id, g.name, g.description, now_seconds())
        .run();
    const int64_t row = sqlite3_last_insert_rowid(c.handle());
    insert_group_members(c, row, g);
    query(c,
          "UPDATE accounts SET next_group_id = next_group_id + 1, group_count = group_count + 1 "
          "WHERE id = ?")
        .bind(a.id)
        .run();
    tx.emit("GroupAdded", group_event(account, out));
    return out;
  });
}

result<group> embedded_ledger::update_group(const write_context& w, const account_hash& account, const group& g) {
  return store_->write([&](connection& c) -> result<group> {
    ENACT_TRY(account_row a, require_account(c, account));
    ENACT_TRY_VOID(store_->check_sender(w.sender, a.acct.admin, a.acct.managed, account));
    ENACT_TRY_VOID(check_metadata(g.name, g.description));
    account_write tx{c, w, a};
    const std::optional<int64_t> row = g.id == 0 || g.id > kMaxGroupId ? std::nullopt : find_group_row(c, a.id, g.id);
    if (!row)
      return unknown_group(account, g.id);
    ENACT_TRY_VOID(check_group_sets(c, a, g));
    ENACT_TRY_VOID(tx.charge());
    query(c, "UPDATE groups SET name = ?, description = ? WHERE id = ?").bind(g.name, g.description, *row).run();
    query(c, "DELETE FROM group_pkps WHERE group_row = ?").bind(*row).run();
    query(c, "DELETE FROM group_cids WHERE group_row = ?").bind(*row).run();
    insert_group_members(c, *row, g);
    tx.emit("GroupUpdated", group_event(account, g));
    return g;
  });
}

result<void> embedded_ledger::remove_group(const write_context& w, const account_hash& account, group_id id) {
  return store_->write([&](connection& c) -> result<void> {
    ENACT_TRY(account_row a, require_account(c, account));
    ENACT_TRY_VOID(store_->check_sender(w.sender, a.acct.admin, a.acct.managed, account));
    account_write tx{c, w, a};
    const std::optional<int64_t> row = id == 0 || id > kMaxGroupId ? std::nullopt : find_group_row(c, a.id, id);
    if (!row)
      return unknown_group(account, id);
    ENACT_TRY_VOID(tx.charge());
    // group_pkps and group_cids follow by ON DELETE CASCADE.
    query(c, "DELETE FROM groups WHERE id = ?").bind(*row).run();
    query(c, "UPDATE accounts SET group_count = group_count - 1 WHERE id = ?").bind(a.id).run();
    tx.emit("GroupRemoved", {{"accountHash", hx(account)}, {"groupId", id}});
    return {};
  });
}

result<group> embedded_ledger::get_group(const account_hash& account, group_id id) const {
  return store_->read([&](connection& c) -> result<group> {
    ENACT_TRY(account_row a, require_account(c, account));
    std::optional<group> g = load_group(c, a.id, id);
    if (!g)
      return unknown_group(account, id);
    return std::move(*g);
  });
}

result<page<group>> embedded_ledger::list_groups(const account_hash& account, page_request p) const {
  ENACT_TRY(const auto bounds, page_bounds(p));
  return store_->read([&](connection& c) -> result<page<group>> {
    ENACT_TRY(account_row a, require_account(c, account));
    page<group> out;
    out.total = a.group_count;
    out.items = load_groups(c, a.id, 1, kMaxGroupId, bounds.first, bounds.second);
    return out;
  });
}

result<std::vector<group>> embedded_ledger::all_groups(const account_hash& account) const {
  return store_->read([&](connection& c) -> result<std::vector<group>> {
    ENACT_TRY(account_row a, require_account(c, account));
    return load_groups(c, a.id, 1, kMaxGroupId, std::numeric_limits<int64_t>::max(), 0);
  });
}

result<std::vector<group>> embedded_ledger::groups_listing(const account_hash& account,
                                                           const hash256& hashed_cid) const {
  // By the group_cids_by_hash index (CROSS JOIN keeps it the outer loop): the groups listing the
  // CID, then their PKPs, one indexed lookup each; the account's other groups are never read.
  return store_->read([&](connection& c) -> result<std::vector<group>> {
    ENACT_TRY(account_row a, require_account(c, account));
    std::vector<std::pair<int64_t, group>> rows;
    {
      query q(c,
              "SELECT g.id, g.group_id, g.name, g.description FROM group_cids m CROSS JOIN groups "
              "g ON g.id = m.group_row WHERE m.cid_hash = ? AND g.account_id = ? ORDER BY "
              "g.group_id");
      q.bind(hashed_cid, a.id);
      while (q.next()) {
        group g;
        g.id = q.u64(1);
        g.name = q.text(2);
        g.description = q.text(3);
        g.cid_hashes = {hashed_cid};
        rows.emplace_back(q.i64(0), std::move(g));
      }
    }
    std::vector<group> out;
    out.reserve(rows.size());
    for (auto& [row, g] : rows) {
      query q(c, "SELECT pkp FROM group_pkps WHERE group_row = ? ORDER BY id");
      q.bind(row);
      while (q.next())
        g.pkps.push_back(q.addr(0));
      out.push_back(std::move(g));
    }
    return out;
  });
}

result<group> embedded_ledger::add_pkp_to_group(const write_context& w, const account_hash& account, group_id id,
                                                const address& pkp) {
  return store_->write([&](connection& c) -> result<group> {
    ENACT_TRY(account_row a, require_account(c, account));
    ENACT_TRY_VOID(store_->check_sender(w.sender, a.acct.admin, a.acct.managed, account));
    account_write tx{c, w, a};
    std::optional<group> g = load_group(c, a.id, id);
    if (!g)
      return unknown_group(account, id);
    if (!wallet_registered(c, a.id, pkp))
      return fail(ledger_errc::unknown_wallet, "pkp_id " + hx(pkp) + ": not registered in account " + hx(account));
    if (std::find(g->pkps.begin(), g->pkps.end(), pkp) != g->pkps.end())
      return fail(ledger_errc::duplicate, "pkp_id " + hx(pkp) + ": in group " + std::to_string(id) + " already");
    ENACT_TRY_VOID(tx.charge());
    const std::optional<int64_t> row = find_group_row(c, a.id, id);
    query(c, "INSERT INTO group_pkps (group_row, pkp) VALUES (?, ?)").bind(*row, pkp).run();
    g->pkps.push_back(pkp);
    tx.emit("PkpAddedToGroup", {{"accountHash", hx(account)}, {"groupId", id}, {"pkpId", hx(pkp)}});
    return std::move(*g);
  });
}

result<group> embedded_ledger::remove_pkp_from_group(const write_context& w, const account_hash& account, group_id id,
                                                     const address& pkp) {
  return store_->write([&](connection& c) -> result<group> {
    ENACT_TRY(account_row a, require_account(c, account));
    ENACT_TRY_VOID(store_->check_sender(w.sender, a.acct.admin, a.acct.managed, account));
    account_write tx{c, w, a};
    std::optional<group> g = load_group(c, a.id, id);
    if (!g)
      return unknown_group(account, id);
    auto it = std::find(g->pkps.begin(), g->pkps.end(), pkp);
    if (it == g->pkps.end())
      return fail(ledger_errc::unknown_wallet, "pkp_id " + hx(pkp) + ": not in group " + std::to_string(id));
    ENACT_TRY_VOID(tx.charge());
    const std::optional<int64_t> row = find_group_row(c, a.id, id);
    query(c, "DELETE FROM group_pkps WHERE group_row = ? AND pkp = ?").bind(*row, pkp).run();
    g->pkps.erase(it);
    tx.emit("PkpRemovedFromGroup", {{"accountHash", hx(account)}, {"groupId", id}, {"pkpId", hx(pkp)}});
    return std::move(*g);
  });
}

result<group> embedded_ledger::add_action_to_group(const write_context& w, const account_hash& account, group_id id,
                                                   const hash256& hashed_cid) {
  return store_->write([&](connection& c) -> result<group> {
    ENACT_TRY(account_row a, require_account(c, account));
    ENACT_TRY_VOID(store_->check_sender(w.sender, a.acct.admin, a.acct.managed, account));
    account_write tx{c, w, a};
    std::optional<group> g = load_group(c, a.id, id);
    if (!g)
      return unknown_group(account, id);
    if (std::find(g->cid_hashes.begin(), g->cid_hashes.end(), hashed_cid) != g->cid_hashes.end())
      return fail(ledger_errc::duplicate,
                  "hashed_cid " + hx(hashed_cid) + ": in group " + std::to_string(id) + " already");
    ENACT_TRY_VOID(tx.charge());
    const std::optional<int64_t> row = find_group_row(c, a.id, id);
    query(c, "INSERT INTO group_cids (group_row, cid_hash) VALUES (?, ?)").bind(*row, hashed_cid).run();
    g->cid_hashes.push_back(hashed_cid);
    tx.emit("ActionAddedToGroup", {{"accountHash", hx(account)}, {"groupId", id}, {"hashedCid", hx(hashed_cid)}});
    return std::move(*g);
  });
}

result<group> embedded_ledger::remove_action_from_group(const write_context& w, const account_hash& account,
                                                        group_id id, const hash256& hashed_cid) {
  return store_->write([&](connection& c) -> result<group> {
    ENACT_TRY(account_row a, require_account(c, account));
    ENACT_TRY_VOID(store_->check_sender(w.sender, a.acct.admin, a.acct.managed, account));
    account_write tx{c, w, a};
    std::optional<group> g = load_group(c, a.id, id);
    if (!g)
      return unknown_group(account, id);
    auto it = std::find(g->cid_hashes.begin(), g->cid_hashes.end(), hashed_cid);
    if (it == g->cid_hashes.end())
      return fail(ledger_errc::unknown_action, "hashed_cid " + hx(hashed_cid) + ": not in group " + std::to_string(id));
    ENACT_TRY_VOID(tx.charge());
    const std::optional<int64_t> row = find_group_row(c, a.id, id);
    query(c, "DELETE FROM group_cids WHERE group_row = ? AND cid_hash = ?").bind(*row, hashed_cid).run();
    g->cid_hashes.erase(it);
    tx.emit("ActionRemovedFromGroup", {{"accountHash", hx(account)}, {"groupId", id}, {"hashedCid", hx(hashed_cid)}});
    return std::move(*g);
  });
}

// -----------------------------------------------------------------------------------------------
// PKP registry

result<void> embedded_ledger::register_wallet(const write_context& w, const account_hash& account, const wallet& wl) {
  return store_->write([&](connection& c) -> result<void> {
    ENACT_TRY(account_row a, require_account(c, account));
    ENACT_TRY_VOID(store_->check_sender(w.sender, a.acct.admin, a.acct.managed, account));
    if (is_zero(wl.pkp_id))
      return fail(ledger_errc::invalid_argument, "pkp_id: must not be the zero address");
    ENACT_TRY_VOID(check_metadata(wl.name, wl.description));
    account_write tx{c, w, a};
    if (wallet_registered(c, a.id, wl.pkp_id))
      return fail(ledger_errc::duplicate,
                  "pkp_id " + hx(wl.pkp_id) + ": registered in account " + hx(account) + " already");
    ENACT_TRY_VOID(tx.charge());
    query(c,
          "INSERT INTO wallets (account_id, pkp_id, derivation_path, name, description, "
          "created_at) VALUES (?, ?, ?, ?, ?, ?)")
        .bind(a.id, wl.pkp_id, wl.derivation_path, wl.name, wl.description, now_seconds())
        .run();
    query(c, "UPDATE accounts SET wallets_registered = wallets_registered + 1 WHERE id = ?").bind(a.id).run();
    tx.emit("WalletDerivationRegistered", {{"accountHash", hx(account)},
                                           {"wallet", hx(wl.pkp_id)},
                                           {"derivationPath", hx(wl.derivation_path)},
                                           {"name", wl.name},
                                           {"description", wl.description}});
    return {};
  });
}

#define ENACT_WALLET_COLUMNS "w.pkp_id, w.derivation_path, w.name, w.description, w.created_at "

result<wallet> embedded_ledger::get_wallet(const account_hash& account, const address& pkp_id) const {
  return store_->read([&](connection& c) -> result<wallet> {
    ENACT_TRY(account_row a, require_account(c, account));
    query q(c, "SELECT " ENACT_WALLET_COLUMNS "FROM wallets w WHERE w.account_id = ? AND w.pkp_id = ?");
    q.bind(a.id, pkp_id);
    if (!q.next())
      return fail(ledger_errc::unknown_wallet, "pkp_id " + hx(pkp_id) + ": not registered in account " + hx(account));
    return read_wallet(q);
  });
}

result<page<wallet>> embedded_ledger::list_wallets(const account_hash& account, page_request p) const {
  ENACT_TRY(const auto bounds, page_bounds(p));
  return store_->read([&](connection& c) -> result<page<wallet>> {
    ENACT_TRY(account_row a, require_account(c, account));
    page<wallet> out;
    out.total = count(c, "SELECT COUNT(*) FROM wallets WHERE account_id = ?", a.id);
    query q(c, "SELECT " ENACT_WALLET_COLUMNS "FROM wallets w WHERE w.account_id = ? ORDER BY w.id LIMIT ? OFFSET ?");
    q.bind(a.id, bounds.first, bounds.second);
    while (q.next())
      out.items.push_back(read_wallet(q));
    return out;
  });
}

result<page<wallet>> embedded_ledger::list_wallets_in_group(const account_hash& account, group_id id,
                                                            page_request p) const {
  ENACT_TRY(const auto bounds, page_bounds(p));
  return store_->read([&](connection& c) -> result<page<wallet>> {
    ENACT_TRY(account_row a, require_account(c, account));
    const std::optional<int64_t> row = id == 0 || id > kMaxGroupId ? std::nullopt : find_group_row(c, a.id, id);
    if (!row)
      return unknown_group(account, id);
    page<wallet> out;
    out.total = count(c, "SELECT COUNT(*) FROM group_pkps WHERE group_row = ?", *row);
    query q(c, "SELECT " ENACT_WALLET_COLUMNS
               "FROM group_pkps m JOIN wallets w ON w.account_id = ? AND w.pkp_id = m.pkp "
               "WHERE m.group_row = ? ORDER BY m.id LIMIT ? OFFSET ?");
    q.bind(a.id, *row, bounds.first, bounds.second);
    while (q.next())
      out.items.push_back(read_wallet(q));
    return out;
  });
}
#undef ENACT_WALLET_COLUMNS

result<uint64_t> embedded_ledger::wallet_count(const account_hash& account) const {
  return store_->read(
      [&](connection& c) -> result<uint64_t> {
        ENACT_TRY(account_row a, require_account(c, account));
        return a.wallets_registered;
      },
      false);
}

// -----------------------------------------------------------------------------------------------
// actions

result<void> embedded_ledger::add_action(const write_context& w, const account_hash& account, const action& act) {
  return store_->write([&](connection& c) -> result<void> {
    ENACT_TRY(account_row a, require_account(c, account));
    ENACT_TRY_VOID(store_->check_sender(w.sender, a.acct.admin, a.acct.managed, account));
    if (act.cid.empty())
      return fail(ledger_errc::invalid_argument, "cid: must not be empty");
    ENACT_TRY_VOID(check_length("cid", act.cid, kMaxCid));
    if (keccak256(std::string_view(act.cid)) != act.hashed_cid)
      return fail(ledger_errc::invalid_argument, "hashed_cid: " + hx(act.hashed_cid) + " is not keccak256 of the CID");
    ENACT_TRY_VOID(check_metadata(act.name, act.description));
    account_write tx{c, w, a};
    if (load_action(c, a.id, act.hashed_cid))
      return fail(ledger_errc::duplicate,
                  "hashed_cid " + hx(act.hashed_cid) + ": registered in account " + hx(account) + " already");
    ENACT_TRY_VOID(tx.charge());
    query(c,
          "INSERT INTO actions (account_id, hashed_cid, cid, name, description, created_at) "
          "VALUES (?, ?, ?, ?, ?, ?)")
        .bind(a.id, act.hashed_cid, act.cid, act.name, act.description, now_seconds())
        .run();
    tx.emit("ActionAdded", {{"accountHash", hx(account)},
                            {"hashedCid", hx(act.hashed_cid)},
                            {"cid", act.cid},
                            {"name", act.name},
                            {"description", act.description}});
    return {};
  });
}

result<action> embedded_ledger::update_action_metadata(const write_context& w, const account_hash& account,
                                                       const hash256& hashed_cid, std::string_view name,
                                                       std::string_view description) {
  return store_->write([&](connection& c) -> result<action> {
    ENACT_TRY(account_row a, require_account(c, account));
    ENACT_TRY_VOID(store_->check_sender(w.sender, a.acct.admin, a.acct.managed, account));
    ENACT_TRY_VOID(check_metadata(name, description));
    account_write tx{c, w, a};
    std::optional<action> act = load_action(c, a.id, hashed_cid);
    if (!act)
      return unknown_action(account, hashed_cid);
    ENACT_TRY_VOID(tx.charge());
    query(c, "UPDATE actions SET name = ?, description = ? WHERE account_id = ? AND hashed_cid = ?")
        .bind(name, description, a.id, hashed_cid)
        .run();
    act->name = std::string(name);
    act->description = std::string(description);
    tx.emit(
        "ActionMetadataUpdated",
        {{"accountHash", hx(account)}, {"hashedCid", hx(hashed_cid)}, {"name", name}, {"description", description}});
    return std::move(*act);
  });
}

result<void> embedded_ledger::delete_action(const write_context& w, const account_hash& account,
                                            const hash256& hashed_cid) {
  return store_->write([&](connection& c) -> result<void> {
    ENACT_TRY(account_row a, require_account(c, account));
    ENACT_TRY_VOID(store_->check_sender(w.sender, a.acct.admin, a.acct.managed, account));
    account_write tx{c, w, a};
    if (!load_action(c, a.id, hashed_cid))
      return unknown_action(account, hashed_cid);
    ENACT_TRY_VOID(tx.charge());
    query(c, "DELETE FROM actions WHERE account_id = ? AND hashed_cid = ?").bind(a.id, hashed_cid).run();
    query(c,
          "DELETE FROM group_cids WHERE cid_hash = ? AND group_row IN "
          "(SELECT id FROM groups WHERE account_id = ?)")
        .bind(hashed_cid, a.id)
        .run();
    tx.emit("ActionDeleted", {{"accountHash", hx(account)}, {"hashedCid", hx(hashed_cid)}});
    return {};
  });
}

result<action> embedded_ledger::get_action(const account_hash& account, const hash256& hashed_cid) const {
  return store_->read([&](connection& c) -> result<action> {
    ENACT_TRY(account_row a, require_account(c, account));
    std::optional<action> act = load_action(c, a.id, hashed_cid);
    if (!act)
      return unknown_action(account, hashed_cid);
    return std::move(*act);
  });
}

result<page<action>> embedded_ledger::list_actions(const account_hash& account, std::optional<group_id> group,
                                                   page_request p) const {
  ENACT_TRY(const auto bounds, page_bounds(p));
  return store_->read([&](connection& c) -> result<page<action>> {
    ENACT_TRY(account_row a, require_account(c, account));
    page<action> out;
    if (!group) {
      out.total = count(c, "SELECT COUNT(*) FROM actions WHERE account_id = ?", a.id);
      query q(c,
              "SELECT hashed_cid, cid, name, description, created_at FROM actions "
              "WHERE account_id = ? ORDER BY id LIMIT ? OFFSET ?");
      q.bind(a.id, bounds.first, bounds.second);
      while (q.next())
        out.items.push_back(read_action(q));
      return out;
    }
    const std::optional<int64_t> row =
        *group == 0 || *group > kMaxGroupId ? std::nullopt : find_group_row(c, a.id, *group);
    if (!row)
      return unknown_group(account, *group);
    out.total = count(c, "SELECT COUNT(*) FROM group_cids WHERE group_row = ?", *row);
    // A group may list CIDs that are not registered actions: those come with empty metadata.
    query q(c,
            "SELECT m.cid_hash, a.cid, a.name, a.description, a.created_at FROM group_cids m "
            "LEFT JOIN actions a ON a.account_id = ? AND a.hashed_cid = m.cid_hash "
            "WHERE m.group_row = ? ORDER BY m.id LIMIT ? OFFSET ?");
    q.bind(a.id, *row, bounds.first, bounds.second);
    while (q.next())
      out.items.push_back(read_action(q));
    return out;
  });
}

// -----------------------------------------------------------------------------------------------
// credits

result<uint64_t> embedded_ledger::balance(const account_hash& account) const {
  return store_->read(
      [&](connection& c) -> result<uint64_t> {
        ENACT_TRY(account_row a, require_account(c, account));
        return a.balance;
      },
      false);
}

result<uint64_t> embedded_ledger::debit(const account_hash& account, uint64_t amount) {
  if (amount == 0)
    return fail(ledger_errc::invalid_argument, "amount: must be at least 1 credit");
  const write_context w{};  // server-side bookkeeping: no registry sender
  return store_->write([&](connection& c) -> result<uint64_t> {
    ENACT_TRY(account_row a, require_account(c, account));
    if (a.balance < amount)
      return fail(ledger_errc::insufficient_credits, "account " + hx(account) + ": balance " +
                                                         std::to_string(a.balance) + " below " +
                                                         std::to_string(amount) + " credits");
    query(c, "UPDATE accounts SET balance = balance - ? WHERE id = ?").bind(amount, a.id).run();
    a.balance -= amount;
    account_write tx{c, w, a};
    tx.emit("CreditsDebited", {{"accountHash", hx(account)}, {"amount", amount}, {"balance", a.balance}});
    return a.balance;
  });
}

result<void> embedded_ledger::record_payment(const payment& p) {
  if (p.intent_id.empty())
    return fail(ledger_errc::invalid_argument, "intent_id: must not be empty");
  ENACT_TRY_VOID(check_length("intent_id", p.intent_id, kMaxIntentId));
  if (p.provider.empty())
    return fail(ledger_errc::invalid_argument, "provider: must not be empty");
  ENACT_TRY_VOID(check_length("provider", p.provider, kMaxProvider));
  if (p.amount_cents == 0 || p.amount_cents > kMaxBalance)
    return fail(ledger_errc::invalid_argument, "amount_cents: " + std::to_string(p.amount_cents) + " out of range");
  if (p.credited)
    return fail(ledger_errc::invalid_argument,
                "credited: a payment is recorded uncredited and credited by credit_payment");
  return store_->write([&](connection& c) -> result<void> {
    ENACT_TRY(account_row a, require_account(c, p.account));
    {
      query q(c, "SELECT 1 FROM payments WHERE intent_id = ?");
      q.bind(p.intent_id);
      if (q.next())
        return fail(ledger_errc::duplicate, "intent_id " + p.intent_id + ": recorded already");
    }
    query(c,
          "INSERT INTO payments (account_id, intent_id, amount_cents, provider, created_at) "
          "VALUES (?, ?, ?, ?, ?)")
        .bind(a.id, p.intent_id, p.amount_cents, p.provider, now_seconds())
        .run();
    return {};
  });
}

result<payment> embedded_ledger::get_payment(const account_hash& account, std::string_view intent_id) const {
  return store_->read([&](connection& c) -> result<payment> {
    ENACT_TRY(account_row a, require_account(c, account));
    std::optional<payment_row> r = load_payment(c, a, intent_id);
    if (!r)
      return fail(ledger_errc::unknown_payment,
                  "intent_id " + std::string(intent_id) + ": no such payment for account " + hx(account));
    return std::move(r->p);
  });
}

result<uint64_t> embedded_ledger::credit_payment(const account_hash& account, std::string_view intent_id) {
  const write_context w{};  // server-side bookkeeping: no registry sender
  return store_->write([&](connection& c) -> result<uint64_t> {
    ENACT_TRY(account_row a, require_account(c, account));
    std::optional<payment_row> r = load_payment(c, a, intent_id);
    if (!r)
      return fail(ledger_errc::unknown_payment,
                  "intent_id " + std::string(intent_id) + ": no such payment for account " + hx(account));
    if (r->p.credited)
      return fail(ledger_errc::already_credited, "intent_id " + std::string(intent_id) + ": credited already");
    if (r->p.amount_cents > kMaxBalance - a.balance)
      return fail(ledger_errc::invalid_argument, "amount_cents: balance would overflow");
    query(c, "UPDATE payments SET credited = 1 WHERE id = ?").bind(r->id).run();
    query(c, "UPDATE accounts SET balance = balance + ? WHERE id = ?").bind(r->p.amount_cents, a.id).run();
    a.balance += r->p.amount_cents;
    account_write tx{c, w, a};
    tx.emit("PaymentCredited", {{"accountHash", hx(account)},
                                {"paymentIntentId", r->p.intent_id},
                                {"amountCents", r->p.amount_cents},
                                {"provider", r->p.provider},
                                {"balance", a.balance}});
    return a.balance;
  });
}

// -----------------------------------------------------------------------------------------------
// batches

result<void> embedded_ledger::batch(bool commit, const std::function<result<void>()>& writes) {
  store& s = *store_;
  if (store::t_batch_store == &s)
    return fail(ledger_errc::invalid_argument, "batch: already inside a batch of this ledger");
  std::lock_guard lock(s.write_mu);
  connection& c = *s.writer;
  try {
    query(c, "BEGIN IMMEDIATE").run();
  } catch (const std::exception& e) {
    c.rollback();
    return storage_error(e);
  }
  s.batch_failed = false;
  store::t_batch_store = &s;
  result<void> r;
  try {
    r = writes();
  } catch (...) {
    store::t_batch_store = nullptr;
    c.rollback();
    throw;
  }
  store::t_batch_store = nullptr;
  if (r && s.batch_failed)
    r = fail(ledger_errc::storage, "batch: a write failed in storage");
  try {
    if (r && commit)
      query(c, "COMMIT").run();
    else
      c.rollback();
  } catch (const std::exception& e) {
    c.rollback();
    return storage_error(e);
  }
  return r;
}

// -----------------------------------------------------------------------------------------------
// events

result<std::vector<event>> embedded_ledger::events_after(uint64_t after, size_t limit) const {
  if (limit == 0 || after >= kMaxBalance)
    return std::vector<event>{};
  return store_->read(
      [&](connection& c) -> result<std::vector<event>> {
        std::vector<event> out;
        query q(c,
                "SELECT sequence, name, account, sender, data, created_at FROM events "
                "WHERE sequence > ? ORDER BY sequence LIMIT ?");
        q.bind(after, static_cast<int64_t>(std::min<uint64_t>(limit, kMaxBalance)));
        while (q.next()) {
          event e;
          e.sequence = q.u64(0);
          e.name = q.text(1);
          e.account = q.hash(2);
          e.sender = q.addr(3);
          e.data = boost::json::parse(q.text(4)).as_object();
          e.created_at = q.i64(5);
          out.push_back(std::move(e));
        }
        return out;
      },
      false);
}

}  // namespace enact::ledger
