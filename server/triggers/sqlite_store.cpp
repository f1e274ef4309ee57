// The SQLite trigger store (sqlite_store.hpp). Inside this file an SQLite failure is an exception
// (`sqlite_failure`), so the domain code reads straight through; the read and write wrappers
// catch it at the transaction boundary and answer store_errc::storage with SQLite's message.
#include "triggers/sqlite_store.hpp"

#include <sqlite3.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <iterator>
#include <functional>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <unordered_map>

namespace enact::triggers {
namespace {

constexpr int kBusyTimeoutMs = 5000;
constexpr size_t kMaxText = 4096;
constexpr int64_t kMaxI64 = std::numeric_limits<int64_t>::max();

// Schema migrations: kMigrations[i] takes user_version i to i + 1. Append, never edit.
// Triggers and runs have a surrogate `seq` (the rowid) that orders lists by creation; the public
// ids are random text. Instants are Unix milliseconds; hashes 32-byte blobs, addresses 20 bytes.
// A run is "ready" when no worker holds it (lease_owner NULL) and it has not finished; the
// partial index keeps the lease query proportional to the ready runs, not to the history.
constexpr const char* kMigrations[] = {
    R"sql(
CREATE TABLE triggers (
  seq              INTEGER PRIMARY KEY,
  id               TEXT    NOT NULL UNIQUE,
  owner            TEXT    NOT NULL,
  type             TEXT    NOT NULL,
  name             TEXT    NOT NULL,
  enabled          INTEGER NOT NULL,
  action_cid       TEXT    NOT NULL,
  pkp_id           BLOB,
  sealed_usage_key BLOB    NOT NULL,
  usage_key_hash   BLOB    NOT NULL,
  config           TEXT    NOT NULL,
  created_at       INTEGER NOT NULL,
  updated_at       INTEGER NOT NULL
);
CREATE INDEX triggers_by_owner ON triggers(owner, seq);
CREATE TABLE runs (
  seq              INTEGER PRIMARY KEY,
  id               TEXT    NOT NULL UNIQUE,
  trigger_id       TEXT    NOT NULL REFERENCES triggers(id) ON DELETE CASCADE,
  status           TEXT    NOT NULL CHECK (status IN ('queued', 'running', 'success', 'failed')),
  attempts         INTEGER NOT NULL DEFAULT 0,
  params           TEXT    NOT NULL,
  response         TEXT,
  error_code       TEXT,
  error_message    TEXT,
  error_stack      TEXT,
  queued_at        INTEGER NOT NULL,
  started_at       INTEGER,
  finished_at      INTEGER,
  next_attempt_at  INTEGER NOT NULL,
  lease_owner      TEXT,
  lease_expires_at INTEGER
);
CREATE INDEX runs_by_trigger ON runs(trigger_id, seq);
CREATE INDEX runs_ready ON runs(next_attempt_at, seq)
  WHERE lease_owner IS NULL AND status IN ('queued', 'running');
CREATE INDEX runs_leased ON runs(lease_expires_at) WHERE lease_owner IS NOT NULL;
CREATE TABLE schedule_state (
  trigger_id   TEXT    PRIMARY KEY REFERENCES triggers(id) ON DELETE CASCADE,
  next_due     INTEGER NOT NULL,
  last_planned INTEGER
);
CREATE TABLE chain_checkpoints (
  trigger_id TEXT    PRIMARY KEY REFERENCES triggers(id) ON DELETE CASCADE,
  block      INTEGER NOT NULL
);
CREATE TABLE chain_logs (
  trigger_id   TEXT    NOT NULL REFERENCES triggers(id) ON DELETE CASCADE,
  block_hash   BLOB    NOT NULL,
  log_index    INTEGER NOT NULL,
  block_number INTEGER NOT NULL,
  removed      INTEGER NOT NULL DEFAULT 0,
  run_id       TEXT,
  seen_at      INTEGER NOT NULL,
  PRIMARY KEY (trigger_id, block_hash, log_index)
) WITHOUT ROWID;
CREATE TABLE tokens (
  hash        BLOB    PRIMARY KEY,
  user_id     TEXT    NOT NULL,
  client_name TEXT    NOT NULL,
  created_at  INTEGER NOT NULL,
  expires_at  INTEGER NOT NULL,
  revoked     INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX tokens_by_user ON tokens(user_id, created_at);
CREATE TABLE approvals (
  challenge   TEXT    PRIMARY KEY,
  client_name TEXT    NOT NULL,
  status      TEXT    NOT NULL CHECK (status IN ('pending', 'approved', 'denied')),
  user_id     TEXT    NOT NULL DEFAULT '',
  token_hash  BLOB,
  created_at  INTEGER NOT NULL,
  expires_at  INTEGER NOT NULL
);
)sql",
    // 1 → 2: browser sessions of the approval page (handshake.hpp).
    R"sql(
CREATE TABLE browser_sessions (
  hash       BLOB    PRIMARY KEY,
  user_id    TEXT    NOT NULL,
  nonce      TEXT    NOT NULL,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
);
CREATE INDEX browser_sessions_by_expiry ON browser_sessions(expires_at);
)sql",
    // 2 → 3: per-trigger run limits (API.md §4); the partial index keeps the count of a trigger's
    // unfinished runs proportional to them, not to its history.
    R"sql(
ALTER TABLE triggers ADD COLUMN max_runs_per_minute INTEGER NOT NULL DEFAULT 60;
ALTER TABLE triggers ADD COLUMN max_queued_runs INTEGER NOT NULL DEFAULT 100;
CREATE INDEX runs_unfinished ON runs(trigger_id) WHERE status IN ('queued', 'running');
)sql",
};
static_assert(std::size(kMigrations) == sqlite_store::kSchemaVersion, "kSchemaVersion must count the migrations");

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

  [[nodiscard]] int64_t changes() const noexcept { return sqlite3_changes64(db_.get()); }

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

  [[nodiscard]] bool is_null(int col) const { return sqlite3_column_type(s_, col) == SQLITE_NULL; }
  [[nodiscard]] int64_t i64(int col) const { return sqlite3_column_int64(s_, col); }
  [[nodiscard]] uint64_t u64(int col) const { return static_cast<uint64_t>(i64(col)); }
  [[nodiscard]] bool boolean(int col) const { return i64(col) != 0; }
  [[nodiscard]] time_point time(int col) const { return time_point{std::chrono::milliseconds{i64(col)}}; }
  [[nodiscard]] std::optional<time_point> opt_time(int col) const {
    if (is_null(col))
      return std::nullopt;
    return time(col);
  }
  [[nodiscard]] std::string text(int col) const {
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(s_, col));
    return p == nullptr ? std::string() : std::string(p, sqlite3_column_bytes(s_, col));
  }
  [[nodiscard]] bytes blob(int col) const {
    const auto* p = static_cast<const uint8_t*>(sqlite3_column_blob(s_, col));
    return p == nullptr ? bytes() : bytes(p, p + sqlite3_column_bytes(s_, col));
  }
  template <size_t N>
  [[nodiscard]] std::array<uint8_t, N> fixed(int col) const {
    std::array<uint8_t, N> out{};
    const void* p = sqlite3_column_blob(s_, col);
    if (static_cast<size_t>(sqlite3_column_bytes(s_, col)) != N || p == nullptr)
      throw sqlite_failure("sqlite: corrupt row: blob of " + std::to_string(sqlite3_column_bytes(s_, col)) +
                           " bytes, expected " + std::to_string(N));
    std::copy_n(static_cast<const uint8_t*>(p), N, out.begin());
    return out;
  }
  [[nodiscard]] json::value json_value(int col) const {
    std::error_code ec;
    json::value v = json::parse(text(col), ec);
    if (ec)
      throw sqlite_failure("sqlite: corrupt row: stored JSON does not parse");
    return v;
  }

 private:
  void check(int rc) const {
    if (rc != SQLITE_OK)
      throw_sqlite(db_, "bind");
  }
  void bind_one(std::nullptr_t) { check(sqlite3_bind_null(s_, ++index_)); }
  void bind_one(int64_t v) { check(sqlite3_bind_int64(s_, ++index_, v)); }
  void bind_one(uint64_t v) { bind_one(static_cast<int64_t>(std::min<uint64_t>(v, kMaxI64))); }
  void bind_one(uint32_t v) { bind_one(static_cast<int64_t>(v)); }
  void bind_one(int v) { bind_one(static_cast<int64_t>(v)); }
  void bind_one(bool v) { bind_one(static_cast<int64_t>(v ? 1 : 0)); }
  void bind_one(time_point t) { bind_one(static_cast<int64_t>(t.time_since_epoch().count())); }
  void bind_one(std::string_view v) {
    check(sqlite3_bind_text64(s_, ++index_, v.data(), v.size(), SQLITE_TRANSIENT, SQLITE_UTF8));
  }
  void bind_one(const std::string& v) { bind_one(std::string_view(v)); }
  void bind_one(const char* v) { bind_one(std::string_view(v)); }
  void bind_one(const bytes& v) { check(sqlite3_bind_blob64(s_, ++index_, v.data(), v.size(), SQLITE_TRANSIENT)); }
  template <size_t N>
  void bind_one(const std::array<uint8_t, N>& v) {
    check(sqlite3_bind_blob64(s_, ++index_, v.data(), N, SQLITE_TRANSIENT));
  }
  template <class T>
  void bind_one(const std::optional<T>& v) {
    if (v)
      bind_one(*v);
    else
      bind_one(nullptr);
  }

  sqlite3* db_;
  sqlite3_stmt* s_;
  int index_ = 0;
};

/// Read-only connections handed out one caller at a time.
class reader_pool {
 public:
  reader_pool(std::string path, size_t max) : path_(std::move(path)), max_(std::max<size_t>(1, max)) {}

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
    cv_.wait(lock, [&] { return !idle_.empty() || open_ < max_; });
    if (!idle_.empty()) {
      std::unique_ptr<connection> c = std::move(idle_.back());
      idle_.pop_back();
      return {*this, std::move(c)};
    }
    ++open_;
    lock.unlock();
    try {
      return {*this, std::make_unique<connection>(path_, false)};
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
  size_t max_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::unique_ptr<connection>> idle_;
  size_t open_ = 0;
};

/// The writer thread and its queue (group commit). A caller hands in a write and blocks; the
/// thread takes every queued write (up to max_batch), runs them in one transaction, each inside
/// a savepoint (a write that fails is rolled back alone and reported to its caller), commits
/// once, and wakes the callers. A commit that fails fails every write of its group.
class write_queue {
 public:
  /// Runs inside the transaction; returns whether to keep its changes. Must not throw.
  using op = std::function<bool(connection&)>;

  write_queue(connection& c, size_t max_batch) : c_(c), max_batch_(std::max<size_t>(1, max_batch)) {
    thread_ = std::thread([this] { loop(); });
  }
  ~write_queue() {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    wake_writer_.notify_one();
    thread_.join();
  }
  write_queue(const write_queue&) = delete;
  write_queue& operator=(const write_queue&) = delete;

  /// Returns true once `fn`'s transaction committed; false with `error` when it did not.
  bool submit(op fn, std::string& error) {
    job j;
    j.fn = std::move(fn);
    {
      std::lock_guard lock(mu_);
      queue_.push_back(&j);
    }
    wake_writer_.notify_one();
    std::unique_lock lock(mu_);
    done_.wait(lock, [&] { return j.done; });
    error = std::move(j.error);
    return error.empty();
  }

  /// Hands in several writes at once, in order, so that they share transactions; `errors[i]` is
  /// empty once write i's transaction committed.
  void submit_all(std::vector<op> fns, std::vector<std::string>& errors) {
    std::vector<job> jobs(fns.size());
    {
      std::lock_guard lock(mu_);
      for (size_t i = 0; i < fns.size(); ++i) {
        jobs[i].fn = std::move(fns[i]);
        queue_.push_back(&jobs[i]);
      }
    }
    wake_writer_.notify_one();
    std::unique_lock lock(mu_);
    done_.wait(lock, [&] {
      for (const job& j : jobs)
        if (!j.done)
          return false;
      return true;
    });
    errors.clear();
    for (job& j : jobs)
      errors.push_back(std::move(j.error));
  }

  sqlite_store::commit_stats stats() const {
    return {commits_.load(std::memory_order_relaxed), writes_.load(std::memory_order_relaxed)};
  }

 private:
  struct job {
    op fn;
    bool done = false;
    std::string error;
  };

  void loop() {
    std::vector<job*> batch;
    for (;;) {
      batch.clear();
      {
        std::unique_lock lock(mu_);
        wake_writer_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
        if (queue_.empty())
          return;  // stopping, and every submitted write is answered
        while (!queue_.empty() && batch.size() < max_batch_) {
          batch.push_back(queue_.front());
          queue_.pop_front();
        }
      }
      const std::string error = commit(batch);
      {
        std::lock_guard lock(mu_);
        for (job* j : batch) {
          j->error = error;
          j->done = true;
        }
      }
      done_.notify_all();
    }
  }

  std::string commit(const std::vector<job*>& batch) {
    try {
      query(c_, "BEGIN IMMEDIATE").run();
      for (job* j : batch) {
        query(c_, "SAVEPOINT w").run();
        const bool keep = j->fn(c_);
        // Some errors (I/O, full disk) roll the whole transaction back: nothing of the group holds.
        if (sqlite3_get_autocommit(c_.handle()) != 0)
          throw sqlite_failure("sqlite: the transaction was rolled back by an error");
        if (!keep)
          query(c_, "ROLLBACK TO w").run();
        query(c_, "RELEASE w").run();
      }
      query(c_, "COMMIT").run();
      commits_.fetch_add(1, std::memory_order_relaxed);
      writes_.fetch_add(batch.size(), std::memory_order_relaxed);
      return {};
    } catch (const std::exception& e) {
      c_.rollback();
      return e.what();
    }
  }

  connection& c_;
  size_t max_batch_;
  std::mutex mu_;
  std::condition_variable wake_writer_;
  std::condition_variable done_;
  std::deque<job*> queue_;
  bool stopping_ = false;
  std::atomic<uint64_t> commits_{0};
  std::atomic<uint64_t> writes_{0};
  std::thread thread_;
};

// ---------------------------------------------------------------------------------------------
// Rows

[[nodiscard]] error storage_error(const std::exception& e) { return fail(store_errc::storage, e.what()); }

[[nodiscard]] result<void> check_text(std::string_view field, std::string_view v, size_t max = kMaxText) {
  if (v.size() > max)
    return fail(store_errc::invalid_argument, std::string(field) + ": longer than " + std::to_string(max) + " bytes");
  return {};
}

[[nodiscard]] error no_trigger(std::string_view id) {
  return fail(store_errc::not_found, "trigger " + std::string(id) + ": no such trigger");
}
[[nodiscard]] error no_run(std::string_view id) {
  return fail(store_errc::not_found, "run " + std::string(id) + ": no such run");
}
[[nodiscard]] error lease_lost(const lease_ref& l) {
  return fail(store_errc::lease_lost,
              "run " + l.run_id + ": worker " + l.worker_id + " no longer holds attempt " + std::to_string(l.attempt));
}

#define TRIGGER_COLUMNS                                                                    \
  "t.id, t.owner, t.type, t.name, t.enabled, t.action_cid, t.pkp_id, t.sealed_usage_key, " \
  "t.usage_key_hash, t.config, t.created_at, t.updated_at, t.max_runs_per_minute, "        \
  "t.max_queued_runs "

trigger read_trigger(const query& q, int at = 0) {
  trigger t;
  t.id = q.text(at);
  t.owner = q.text(at + 1);
  const auto type = trigger_type_from(q.text(at + 2));
  if (!type)
    throw sqlite_failure("sqlite: corrupt row: unknown trigger type");
  t.type = *type;
  t.name = q.text(at + 3);
  t.enabled = q.boolean(at + 4);
  t.action_cid = q.text(at + 5);
  if (!q.is_null(at + 6))
    t.pkp_id = q.fixed<20>(at + 6);
  t.sealed_usage_key = q.blob(at + 7);
  t.usage_key_hash = q.fixed<32>(at + 8);
  json::value cfg = q.json_value(at + 9);
  if (!cfg.is_object())
    throw sqlite_failure("sqlite: corrupt row: trigger config is not an object");
  t.config = std::move(cfg.as_object());
  t.created_at = q.time(at + 10);
  t.updated_at = q.time(at + 11);
  t.max_runs_per_minute = static_cast<uint32_t>(q.i64(at + 12));
  t.max_queued_runs = static_cast<uint32_t>(q.i64(at + 13));
  return t;
}

#define RUN_COLUMNS                                                                               \
  "r.id, r.trigger_id, r.status, r.attempts, r.params, r.response, r.error_code, "                \
  "r.error_message, r.error_stack, r.queued_at, r.started_at, r.finished_at, r.next_attempt_at, " \
  "r.lease_owner, r.lease_expires_at "
constexpr int kRunColumns = 15;

run read_run(const query& q, int at = 0) {
  run r;
  r.id = q.text(at);
  r.trigger_id = q.text(at + 1);
  const auto status = run_status_from(q.text(at + 2));
  if (!status)
    throw sqlite_failure("sqlite: corrupt row: unknown run status");
  r.status = *status;
  r.attempts = static_cast<uint32_t>(q.i64(at + 3));
  r.params = q.json_value(at + 4);
  if (!q.is_null(at + 5))
    r.response = q.json_value(at + 5);
  if (!q.is_null(at + 6)) {
    run_error e;
    e.code = q.text(at + 6);
    e.message = q.text(at + 7);
    if (!q.is_null(at + 8))
      e.stack = q.text(at + 8);
    r.error = std::move(e);
  }
  r.queued_at = q.time(at + 9);
  r.started_at = q.opt_time(at + 10);
  r.finished_at = q.opt_time(at + 11);
  r.next_attempt_at = q.time(at + 12);
  r.lease_owner = q.text(at + 13);
  r.lease_expires_at = q.opt_time(at + 14);
  return r;
}

token_record read_token(const query& q) {
  token_record t;
  t.hash = q.fixed<32>(0);
  t.user_id = q.text(1);
  t.client_name = q.text(2);
  t.created_at = q.time(3);
  t.expires_at = q.time(4);
  t.revoked = q.boolean(5);
  return t;
}

approval read_approval(const query& q) {
  approval a;
  a.challenge = q.text(0);
  a.client_name = q.text(1);
  const std::string s = q.text(2);
  a.status = s == "approved" ? approval_status::approved
             : s == "denied" ? approval_status::denied
                             : approval_status::pending;
  a.user_id = q.text(3);
  if (!q.is_null(4))
    a.token_hash = q.fixed<32>(4);
  a.created_at = q.time(5);
  a.expires_at = q.time(6);
  return a;
}

std::optional<trigger> load_trigger(connection& c, std::string_view id) {
  query q(c, "SELECT " TRIGGER_COLUMNS "FROM triggers t WHERE t.id = ?");
  q.bind(id);
  if (!q.next())
    return std::nullopt;
  return read_trigger(q);
}

/// Inserts a queued run (the caller has checked its trigger).
run insert_run(connection& c, const new_run& r, const std::string& params_json) {
  query(c,
        "INSERT INTO runs (id, trigger_id, status, params, queued_at, next_attempt_at) "
        "VALUES (?, ?, 'queued', ?, ?, ?)")
      .bind(r.id, r.trigger_id, params_json, r.queued_at, r.queued_at)
      .run();
  run out;
  out.id = r.id;
  out.trigger_id = r.trigger_id;
  out.status = run_status::queued;
  out.params = r.params;
  out.queued_at = r.queued_at;
  out.next_attempt_at = r.queued_at;
  return out;
}

/// The run limits of API.md §4, checked in the transaction that would queue a run of trigger
/// `id` at `at`: nullopt when it may be queued, otherwise why not. The minute is the calendar
/// minute of `at`; runs refused by the limits (failed, never attempted) do not count.
std::optional<error> over_limits(connection& c, std::string_view id, int64_t per_minute, int64_t queued,
                                 time_point at) {
  const time_point minute = std::chrono::floor<std::chrono::minutes>(at);
  {
    // The trigger's newest runs by seq (the runs_by_trigger index), at most the limit of them.
    query q(c,
            "SELECT COUNT(*) FROM (SELECT queued_at FROM runs WHERE trigger_id = ? AND "
            "NOT (status = 'failed' AND attempts = 0) ORDER BY seq DESC LIMIT ?) WHERE queued_at >= ?");
    q.bind(id, per_minute, minute);
    if (q.next() && q.i64(0) >= per_minute)
      return fail(store_errc::rate_limited, "trigger " + std::string(id) + ": " + std::to_string(per_minute) +
                                                " runs queued in this minute already (max_runs_per_minute)");
  }
  query q(c,
          "SELECT COUNT(*) FROM (SELECT 1 FROM runs WHERE trigger_id = ? AND "
          "status IN ('queued', 'running') LIMIT ?)");
  q.bind(id, queued);
  if (q.next() && q.i64(0) >= queued)
    return fail(store_errc::queue_full, "trigger " + std::string(id) + ": " + std::to_string(queued) +
                                            " runs queued or running already (max_queued_runs)");
  return std::nullopt;
}

/// Records a firing the run limits refused: a run failed at once, never attempted.
run insert_refused_run(connection& c, const new_run& r, const std::string& params_json, const error& why) {
  query(c,
        "INSERT INTO runs (id, trigger_id, status, params, error_code, error_message, queued_at, "
        "finished_at, next_attempt_at) VALUES (?, ?, 'failed', ?, ?, ?, ?, ?, ?)")
      .bind(r.id, r.trigger_id, params_json, kRateLimitedCode, why.message, r.queued_at, r.queued_at, r.queued_at)
      .run();
  run out;
  out.id = r.id;
  out.trigger_id = r.trigger_id;
  out.status = run_status::failed;
  out.params = r.params;
  out.error = run_error{std::string(kRateLimitedCode), why.message, std::nullopt};
  out.queued_at = r.queued_at;
  out.finished_at = r.queued_at;
  out.next_attempt_at = r.queued_at;
  return out;
}

/// Queues `r`, or records it refused when the trigger is over its run limits.
run insert_or_refuse(connection& c, const new_run& r, const std::string& params_json, int64_t per_minute,
                     int64_t queued) {
  if (auto over = over_limits(c, r.trigger_id, per_minute, queued, r.queued_at))
    return insert_refused_run(c, r, params_json, *over);
  return insert_run(c, r, params_json);
}

[[nodiscard]] result<void> check_new_run(const new_run& r) {
  if (r.id.empty() || r.trigger_id.empty())
    return fail(store_errc::invalid_argument, "run: id and trigger_id must not be empty");
  ENACT_TRY_VOID(check_text("run.id", r.id, 128));
  return {};
}

/// Fails (after max_attempts) or requeues runs whose lease expired by `now`; everything leased
/// when `all` is set.
size_t expire(connection& c, time_point now, uint32_t max_attempts, bool all) {
  const time_point cutoff = all ? time_point::max() : now;
  query(c,
        "UPDATE runs SET status = 'failed', finished_at = ?, lease_owner = NULL, "
        "lease_expires_at = NULL, error_code = 'lease_expired', error_message = "
        "'the worker running this attempt stopped answering, and no attempt is left', "
        "error_stack = NULL "
        "WHERE lease_owner IS NOT NULL AND lease_expires_at <= ? AND attempts >= ?")
      .bind(now, cutoff, max_attempts)
      .run();
  size_t n = static_cast<size_t>(c.changes());
  query(c,
        "UPDATE runs SET status = 'queued', lease_owner = NULL, lease_expires_at = NULL "
        "WHERE lease_owner IS NOT NULL AND lease_expires_at <= ?")
      .bind(cutoff)
      .run();
  n += static_cast<size_t>(c.changes());
  return n;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// impl

/// Checkpoints on a thread of their own. SQLite's automatic checkpoint runs in the committing
/// connection, i.e. in the writer thread, where the checkpoint's fsync of the database file would
/// hold up every write queued behind it (with synchronous FULL, hundreds of milliseconds at the
/// 99th percentile of webhook intake). Here the writer's WAL hook only signals; this thread runs
/// PASSIVE checkpoints, which never block the writer. Should the WAL still grow past
/// kWalBackpressurePages, the writer checkpoints itself (backpressure).
class checkpointer {
 public:
  static constexpr int kWalPages = 1000;                // SQLite's default auto-checkpoint size
  static constexpr int kWalBackpressurePages = 100000;  // ~400 MiB of 4 KiB pages

  checkpointer(const std::string& path, connection& writer, bool full) : c_(path, true), writer_(writer) {
    c_.exec(full ? "PRAGMA synchronous = FULL" : "PRAGMA synchronous = NORMAL");
    sqlite3_wal_hook(writer_.handle(), &checkpointer::on_commit, this);  // replaces the auto-checkpoint
    thread_ = std::thread([this] { loop(); });
  }
  ~checkpointer() {
    sqlite3_wal_hook(writer_.handle(), nullptr, nullptr);
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    cv_.notify_one();
    thread_.join();
  }
  checkpointer(const checkpointer&) = delete;
  checkpointer& operator=(const checkpointer&) = delete;

 private:
  static int on_commit(void* self, sqlite3* db, const char*, int pages) {
    auto* me = static_cast<checkpointer*>(self);
    if (pages >= kWalBackpressurePages) {
      sqlite3_wal_checkpoint_v2(db, nullptr, SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr);
    } else if (pages >= kWalPages) {
      {
        std::lock_guard lock(me->mu_);
        me->pending_ = true;
      }
      me->cv_.notify_one();
    }
    return SQLITE_OK;
  }

  void loop() {
    std::unique_lock lock(mu_);
    for (;;) {
      cv_.wait(lock, [&] { return pending_ || stopping_; });
      if (stopping_)
        return;
      pending_ = false;
      lock.unlock();
      // Failures (a reader holding an old snapshot, a busy lock) leave frames for the next one.
      sqlite3_wal_checkpoint_v2(c_.handle(), nullptr, SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr);
      lock.lock();
    }
  }

  connection c_;
  connection& writer_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool pending_ = false;
  bool stopping_ = false;
  std::thread thread_;
};

struct sqlite_store::impl {
  impl(const std::string& path, const sqlite_options& o)
      : writer(path, true), readers(path, o.read_connections), options(o) {}
  ~impl() {
    queue.reset();  // answers queued writes before the connections close
    checkpoints.reset();
  }

  connection writer;
  mutable reader_pool readers;
  sqlite_options options;
  std::unique_ptr<write_queue> queue;  // started after migrations
  std::unique_ptr<checkpointer> checkpoints;

  template <class F>
  auto read(F&& f) const -> decltype(f(std::declval<connection&>())) {
    try {
      reader_pool::lease l = readers.acquire();
      return f(*l);
    } catch (const std::exception& e) {
      return storage_error(e);
    }
  }

  template <class F>
  auto write(F&& f) -> decltype(f(std::declval<connection&>())) {
    using R = decltype(f(std::declval<connection&>()));
    std::optional<R> out;
    std::string error;
    const bool committed = queue->submit(
        [&](connection& c) -> bool {
          try {
            out.emplace(f(c));
          } catch (const std::exception& e) {
            out.emplace(storage_error(e));
          }
          return out->has_value();
        },
        error);
    if (!committed)
      return fail(store_errc::storage, error);
    return std::move(*out);
  }
};

result<std::unique_ptr<sqlite_store>> sqlite_store::open(const std::string& path, sqlite_options options) {
  std::unique_ptr<impl> s;
  try {
    s = std::make_unique<impl>(path, options);
    connection& c = s->writer;
    {
      query q(c, "PRAGMA journal_mode = WAL");
      if (!q.next() || q.text(0) != "wal")
        return fail(store_errc::storage, "sqlite: " + path + ": cannot enable WAL journal");
    }
    c.exec(options.synchronous_full ? "PRAGMA synchronous = FULL" : "PRAGMA synchronous = NORMAL");
    c.exec("PRAGMA foreign_keys = ON");

    const auto user_version = [&c] {
      query q(c, "PRAGMA user_version");
      return q.next() ? q.i64(0) : 0;
    };
    const auto refuse_newer = [&](int64_t v) {
      return fail(store_errc::storage, "sqlite: " + path + ": schema version " + std::to_string(v) +
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
    { reader_pool::lease l = s->readers.acquire(); }
    s->checkpoints = std::make_unique<checkpointer>(path, s->writer, options.synchronous_full);
    s->queue = std::make_unique<write_queue>(s->writer, options.max_batch);
  } catch (const std::exception& e) {
    return storage_error(e);
  }
  return std::unique_ptr<sqlite_store>(new sqlite_store(std::move(s)));
}

sqlite_store::sqlite_store(std::unique_ptr<impl> i) : impl_(std::move(i)) {}
sqlite_store::~sqlite_store() = default;

sqlite_store::commit_stats sqlite_store::stats() const { return impl_->queue->stats(); }

// ---------------------------------------------------------------------------------------------
// triggers

result<trigger> sqlite_store::create_trigger(const trigger& t, const std::optional<schedule_state>& s) {
  if (t.id.empty() || t.owner.empty())
    return fail(store_errc::invalid_argument, "trigger: id and owner must not be empty");
  ENACT_TRY_VOID(check_text("trigger.id", t.id, 128));
  ENACT_TRY_VOID(check_text("trigger.owner", t.owner, 256));
  ENACT_TRY_VOID(check_text("trigger.name", t.name));
  ENACT_TRY_VOID(check_text("trigger.action_cid", t.action_cid, 256));
  const std::string config = json::serialize(t.config);
  return impl_->write([&](connection& c) -> result<trigger> {
    if (load_trigger(c, t.id))
      return fail(store_errc::conflict, "trigger " + t.id + ": exists already");
    std::optional<bytes> pkp;
    if (t.pkp_id)
      pkp = bytes(t.pkp_id->begin(), t.pkp_id->end());
    query(c,
          "INSERT INTO triggers (id, owner, type, name, enabled, action_cid, pkp_id, "
          "sealed_usage_key, usage_key_hash, config, created_at, updated_at, max_runs_per_minute, "
          "max_queued_runs) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
        .bind(t.id, t.owner, to_string(t.type), t.name, t.enabled, t.action_cid, pkp, t.sealed_usage_key,
              t.usage_key_hash, config, t.created_at, t.updated_at, t.max_runs_per_minute, t.max_queued_runs)
        .run();
    if (s)
      query(c, "INSERT INTO schedule_state (trigger_id, next_due, last_planned) VALUES (?, ?, ?)")
          .bind(t.id, s->next_due, s->last_planned)
          .run();
    return t;
  });
}

result<trigger> sqlite_store::get_trigger(std::string_view owner, std::string_view id) const {
  return impl_->read([&](connection& c) -> result<trigger> {
    auto t = load_trigger(c, id);
    if (!t || t->owner != owner)
      return no_trigger(id);
    return std::move(*t);
  });
}

result<trigger> sqlite_store::find_trigger(std::string_view id) const {
  return impl_->read([&](connection& c) -> result<trigger> {
    auto t = load_trigger(c, id);
    if (!t)
      return no_trigger(id);
    return std::move(*t);
  });
}

result<listing<trigger>> sqlite_store::list_triggers(std::string_view owner, page p) const {
  return impl_->read([&](connection& c) -> result<listing<trigger>> {
    listing<trigger> out;
    {
      query q(c, "SELECT COUNT(*) FROM triggers WHERE owner = ?");
      q.bind(owner);
      if (q.next())
        out.total = q.u64(0);
    }
    query q(c, "SELECT " TRIGGER_COLUMNS "FROM triggers t WHERE t.owner = ? ORDER BY t.seq LIMIT ? OFFSET ?");
    q.bind(owner, p.limit, p.offset);
    while (q.next())
      out.items.push_back(read_trigger(q));
    return out;
  });
}

result<trigger> sqlite_store::update_trigger(std::string_view owner, std::string_view id, const trigger_patch& patch) {
  if (patch.name)
    ENACT_TRY_VOID(check_text("trigger.name", *patch.name));
  if (patch.action_cid)
    ENACT_TRY_VOID(check_text("trigger.action_cid", *patch.action_cid, 256));
  if (patch.sealed_usage_key.has_value() != patch.usage_key_hash.has_value())
    return fail(store_errc::invalid_argument, "trigger patch: sealed_usage_key and usage_key_hash change together");
  std::optional<std::string> config;
  if (patch.config)
    config = json::serialize(*patch.config);
  return impl_->write([&](connection& c) -> result<trigger> {
    auto t = load_trigger(c, id);
    if (!t || t->owner != owner)
      return no_trigger(id);
    if (patch.name)
      t->name = *patch.name;
    if (patch.enabled)
      t->enabled = *patch.enabled;
    if (patch.config)
      t->config = *patch.config;
    if (patch.action_cid)
      t->action_cid = *patch.action_cid;
    if (patch.pkp_id)
      t->pkp_id = *patch.pkp_id;
    if (patch.sealed_usage_key) {
      t->sealed_usage_key = *patch.sealed_usage_key;
      t->usage_key_hash = *patch.usage_key_hash;
    }
    if (patch.max_runs_per_minute)
      t->max_runs_per_minute = *patch.max_runs_per_minute;
    if (patch.max_queued_runs)
      t->max_queued_runs = *patch.max_queued_runs;
    t->updated_at = patch.now;
    std::optional<bytes> pkp;
    if (t->pkp_id)
      pkp = bytes(t->pkp_id->begin(), t->pkp_id->end());
    query(c,
          "UPDATE triggers SET name = ?, enabled = ?, config = ?, action_cid = ?, pkp_id = ?, "
          "sealed_usage_key = ?, usage_key_hash = ?, updated_at = ?, max_runs_per_minute = ?, "
          "max_queued_runs = ? WHERE id = ?")
        .bind(t->name, t->enabled, config ? *config : json::serialize(t->config), t->action_cid, pkp,
              t->sealed_usage_key, t->usage_key_hash, t->updated_at, t->max_runs_per_minute, t->max_queued_runs, t->id)
        .run();
    if (patch.schedule)
      query(c,
            "INSERT INTO schedule_state (trigger_id, next_due, last_planned) VALUES (?, ?, ?) "
            "ON CONFLICT (trigger_id) DO UPDATE SET next_due = excluded.next_due, "
            "last_planned = excluded.last_planned")
          .bind(t->id, patch.schedule->next_due, patch.schedule->last_planned)
          .run();
    return std::move(*t);
  });
}

result<void> sqlite_store::delete_trigger(std::string_view owner, std::string_view id) {
  return impl_->write([&](connection& c) -> result<void> {
    query(c, "DELETE FROM triggers WHERE id = ? AND owner = ?").bind(id, owner).run();
    if (c.changes() == 0)
      return no_trigger(id);
    return {};
  });
}

// ---------------------------------------------------------------------------------------------
// runs

result<run> sqlite_store::enqueue_run(const new_run& r, trigger_type expected) {
  ENACT_TRY_VOID(check_new_run(r));
  const std::string params = json::serialize(r.params);  // outside the writer thread
  return impl_->write([&](connection& c) -> result<run> {
    query q(c, "SELECT type, enabled, max_runs_per_minute, max_queued_runs FROM triggers WHERE id = ?");
    q.bind(r.trigger_id);
    if (!q.next())
      return no_trigger(r.trigger_id);
    if (q.text(0) != to_string(expected))
      return fail(store_errc::wrong_type,
                  "trigger " + r.trigger_id + ": not a " + std::string(to_string(expected)) + " trigger");
    if (!q.boolean(1))
      return fail(store_errc::disabled, "trigger " + r.trigger_id + ": disabled");
    if (auto over = over_limits(c, r.trigger_id, q.i64(2), q.i64(3), r.queued_at))
      return *over;
    return insert_run(c, r, params);
  });
}

result<run> sqlite_store::get_run(std::string_view owner, std::string_view run_id) const {
  return impl_->read([&](connection& c) -> result<run> {
    query q(c, "SELECT " RUN_COLUMNS
               ", t.owner FROM runs r JOIN triggers t ON t.id = r.trigger_id "
               "WHERE r.id = ?");
    q.bind(run_id);
    if (!q.next() || q.text(kRunColumns) != owner)
      return no_run(run_id);
    return read_run(q);
  });
}

result<listing<run>> sqlite_store::list_runs(std::string_view owner, std::string_view trigger_id, page p) const {
  return impl_->read([&](connection& c) -> result<listing<run>> {
    auto t = load_trigger(c, trigger_id);
    if (!t || t->owner != owner)
      return no_trigger(trigger_id);
    listing<run> out;
    {
      query q(c, "SELECT COUNT(*) FROM runs WHERE trigger_id = ?");
      q.bind(trigger_id);
      if (q.next())
        out.total = q.u64(0);
    }
    query q(c, "SELECT " RUN_COLUMNS "FROM runs r WHERE r.trigger_id = ? ORDER BY r.seq DESC LIMIT ? OFFSET ?");
    q.bind(trigger_id, p.limit, p.offset);
    while (q.next())
      out.items.push_back(read_run(q));
    return out;
  });
}

result<std::vector<leased_run>> sqlite_store::lease_runs(const lease_request& req) {
  if (req.worker_id.empty() || req.max_runs == 0)
    return fail(store_errc::invalid_argument, "lease: worker_id must not be empty, max_runs ≥ 1");
  // A read first: an idle worker polling an empty queue never takes the write lock.
  auto anything = impl_->read([&](connection& c) -> result<bool> {
    query q(c,
            "SELECT EXISTS (SELECT 1 FROM runs WHERE lease_owner IS NULL AND status IN "
            "('queued', 'running') AND next_attempt_at <= ?) OR EXISTS (SELECT 1 FROM runs "
            "WHERE lease_owner IS NOT NULL AND lease_expires_at <= ?)");
    q.bind(req.now, req.now);
    return q.next() && q.boolean(0);
  });
  if (!anything)
    return anything.err();
  if (!*anything)
    return std::vector<leased_run>{};
  const time_point until = req.now + req.duration;
  return impl_->write([&](connection& c) -> result<std::vector<leased_run>> {
    expire(c, req.now, req.max_attempts, false);
    std::vector<int64_t> picked;
    {
      query q(c,
              "SELECT seq FROM runs WHERE lease_owner IS NULL AND status IN ('queued', 'running') "
              "AND next_attempt_at <= ? ORDER BY next_attempt_at, seq LIMIT ?");
      q.bind(req.now, static_cast<uint64_t>(req.max_runs));
      while (q.next())
        picked.push_back(q.i64(0));
    }
    std::vector<leased_run> out;
    out.reserve(picked.size());
    for (const int64_t seq : picked) {
      query(c,
            "UPDATE runs SET status = 'running', attempts = attempts + 1, lease_owner = ?, "
            "lease_expires_at = ?, started_at = COALESCE(started_at, ?) WHERE seq = ?")
          .bind(req.worker_id, until, req.now, seq)
          .run();
      query q(c, "SELECT " RUN_COLUMNS
                 ", t.owner, t.action_cid, t.pkp_id, t.sealed_usage_key "
                 "FROM runs r JOIN triggers t ON t.id = r.trigger_id WHERE r.seq = ?");
      q.bind(seq);
      if (!q.next())
        throw sqlite_failure("sqlite: leased run vanished");
      leased_run l;
      l.r = read_run(q);
      l.owner = q.text(kRunColumns);
      l.action_cid = q.text(kRunColumns + 1);
      if (!q.is_null(kRunColumns + 2))
        l.pkp_id = q.fixed<20>(kRunColumns + 2);
      l.sealed_usage_key = q.blob(kRunColumns + 3);
      out.push_back(std::move(l));
    }
    return out;
  });
}

result<void> sqlite_store::renew_lease(const lease_ref& l, time_point expires_at) {
  return impl_->write([&](connection& c) -> result<void> {
    query(c,
          "UPDATE runs SET lease_expires_at = ? WHERE id = ? AND lease_owner = ? AND attempts = ? "
          "AND status = 'running'")
        .bind(expires_at, l.run_id, l.worker_id, l.attempt)
        .run();
    if (c.changes() == 0)
      return lease_lost(l);
    return {};
  });
}

result<void> sqlite_store::complete_run(const lease_ref& l, const json::value& response, time_point now) {
  const std::string body = json::serialize(response);
  return impl_->write([&](connection& c) -> result<void> {
    query(c,
          "UPDATE runs SET status = 'success', response = ?, error_code = NULL, error_message = "
          "NULL, error_stack = NULL, finished_at = ?, lease_owner = NULL, lease_expires_at = NULL "
          "WHERE id = ? AND lease_owner = ? AND attempts = ? AND status = 'running'")
        .bind(body, now, l.run_id, l.worker_id, l.attempt)
        .run();
    if (c.changes() == 0)
      return lease_lost(l);
    return {};
  });
}

result<void> sqlite_store::fail_run(const lease_ref& l, const run_error& e, time_point now) {
  return impl_->write([&](connection& c) -> result<void> {
    query(c,
          "UPDATE runs SET status = 'failed', error_code = ?, error_message = ?, error_stack = ?, "
          "finished_at = ?, lease_owner = NULL, lease_expires_at = NULL "
          "WHERE id = ? AND lease_owner = ? AND attempts = ? AND status = 'running'")
        .bind(e.code, e.message, e.stack, now, l.run_id, l.worker_id, l.attempt)
        .run();
    if (c.changes() == 0)
      return lease_lost(l);
    return {};
  });
}

result<void> sqlite_store::retry_run_later(const lease_ref& l, const run_error& e, time_point next_attempt_at) {
  return impl_->write([&](connection& c) -> result<void> {
    query(c,
          "UPDATE runs SET error_code = ?, error_message = ?, error_stack = ?, next_attempt_at = ?, "
          "lease_owner = NULL, lease_expires_at = NULL "
          "WHERE id = ? AND lease_owner = ? AND attempts = ? AND status = 'running'")
        .bind(e.code, e.message, e.stack, next_attempt_at, l.run_id, l.worker_id, l.attempt)
        .run();
    if (c.changes() == 0)
      return lease_lost(l);
    return {};
  });
}

result<size_t> sqlite_store::expire_leases(time_point now, uint32_t max_attempts) {
  return impl_->write([&](connection& c) -> result<size_t> { return expire(c, now, max_attempts, false); });
}

result<size_t> sqlite_store::release_all_leases(time_point now, uint32_t max_attempts) {
  return impl_->write([&](connection& c) -> result<size_t> { return expire(c, now, max_attempts, true); });
}

result<std::optional<time_point>> sqlite_store::next_run_wakeup() const {
  return impl_->read([&](connection& c) -> result<std::optional<time_point>> {
    std::optional<time_point> out;
    const auto consider = [&](query& q) {
      if (q.next() && !q.is_null(0)) {
        const time_point t = q.time(0);
        if (!out || t < *out)
          out = t;
      }
    };
    {
      query q(c,
              "SELECT MIN(next_attempt_at) FROM runs WHERE lease_owner IS NULL AND status IN "
              "('queued', 'running')");
      consider(q);
    }
    {
      query q(c, "SELECT MIN(lease_expires_at) FROM runs WHERE lease_owner IS NOT NULL");
      consider(q);
    }
    return out;
  });
}

// ---------------------------------------------------------------------------------------------
// schedules

namespace {
std::optional<scheduled_trigger> read_schedule(const query& q) {
  scheduled_trigger s;
  s.trigger_id = q.text(0);
  const json::value cfg = q.json_value(1);
  const auto* cron = cfg.is_object() ? cfg.as_object().if_contains("cron") : nullptr;
  if (cron == nullptr || !cron->is_string())
    return std::nullopt;  // not a valid schedule: the API never stores one
  s.cron = std::string(cron->get_string());
  if (!q.is_null(2))
    s.state = schedule_state{q.time(2), q.opt_time(3)};
  return s;
}
}  // namespace

result<std::vector<scheduled_trigger>> sqlite_store::list_schedules() const {
  return impl_->read([&](connection& c) -> result<std::vector<scheduled_trigger>> {
    std::vector<scheduled_trigger> out;
    query q(c,
            "SELECT t.id, t.config, s.next_due, s.last_planned FROM triggers t LEFT JOIN "
            "schedule_state s ON s.trigger_id = t.id WHERE t.type = 'schedule' AND t.enabled = 1 "
            "ORDER BY t.seq");
    while (q.next())
      if (auto s = read_schedule(q))
        out.push_back(std::move(*s));
    return out;
  });
}

result<std::optional<scheduled_trigger>> sqlite_store::get_schedule(std::string_view trigger_id) const {
  return impl_->read([&](connection& c) -> result<std::optional<scheduled_trigger>> {
    query q(c,
            "SELECT t.id, t.config, s.next_due, s.last_planned FROM triggers t LEFT JOIN "
            "schedule_state s ON s.trigger_id = t.id WHERE t.id = ? AND t.type = 'schedule' AND "
            "t.enabled = 1");
    q.bind(trigger_id);
    if (!q.next())
      return std::optional<scheduled_trigger>{};
    return read_schedule(q);
  });
}

result<std::optional<run>> sqlite_store::fire_schedule(std::string_view trigger_id, time_point expected_due,
                                                       time_point planned, const new_run& r, time_point next_due) {
  ENACT_TRY_VOID(check_new_run(r));
  const std::string params = json::serialize(r.params);
  return impl_->write([&](connection& c) -> result<std::optional<run>> {
    query q(c,
            "SELECT s.next_due, t.max_runs_per_minute, t.max_queued_runs FROM schedule_state s "
            "JOIN triggers t ON t.id = s.trigger_id "
            "WHERE s.trigger_id = ? AND t.type = 'schedule' AND t.enabled = 1");
    q.bind(trigger_id);
    if (!q.next() || q.time(0) != expected_due)
      return std::optional<run>{};
    run out = insert_or_refuse(c, r, params, q.i64(1), q.i64(2));
    query(c, "UPDATE schedule_state SET next_due = ?, last_planned = ? WHERE trigger_id = ?")
        .bind(next_due, planned, trigger_id)
        .run();
    return std::optional<run>(std::move(out));
  });
}

std::vector<result<std::optional<run>>> sqlite_store::fire_schedules(const std::vector<schedule_firing>& firings) {
  using outcome = result<std::optional<run>>;
  std::vector<std::optional<outcome>> outs(firings.size());
  std::vector<std::string> params(firings.size());
  std::vector<write_queue::op> ops;
  std::vector<size_t> submitted;
  for (size_t i = 0; i < firings.size(); ++i) {
    if (auto ok = check_new_run(firings[i].r); !ok) {
      outs[i].emplace(ok.err());
      continue;
    }
    params[i] = json::serialize(firings[i].r.params);
    submitted.push_back(i);
    ops.push_back([&, i](connection& c) -> bool {
      const schedule_firing& f = firings[i];
      try {
        query q(c,
                "SELECT s.next_due, t.max_runs_per_minute, t.max_queued_runs FROM schedule_state s "
                "JOIN triggers t ON t.id = s.trigger_id "
                "WHERE s.trigger_id = ? AND t.type = 'schedule' AND t.enabled = 1");
        q.bind(f.trigger_id);
        if (!q.next() || q.time(0) != f.expected_due) {
          outs[i].emplace(std::optional<run>{});
          return true;
        }
        run out = insert_or_refuse(c, f.r, params[i], q.i64(1), q.i64(2));
        query(c, "UPDATE schedule_state SET next_due = ?, last_planned = ? WHERE trigger_id = ?")
            .bind(f.next_due, f.planned, f.trigger_id)
            .run();
        outs[i].emplace(std::optional<run>(std::move(out)));
        return true;
      } catch (const std::exception& e) {
        outs[i].emplace(storage_error(e));
        return false;
      }
    });
  }
  std::vector<std::string> errors;
  impl_->queue->submit_all(std::move(ops), errors);
  std::vector<outcome> result_list;
  result_list.reserve(firings.size());
  for (size_t k = 0; k < submitted.size(); ++k)
    if (!errors[k].empty())
      outs[submitted[k]].emplace(fail(store_errc::storage, errors[k]));
  for (auto& o : outs)
    result_list.push_back(o ? std::move(*o) : outcome(fail(store_errc::storage, "not written")));
  return result_list;
}

result<void> sqlite_store::set_schedule_state(std::string_view trigger_id, const schedule_state& s) {
  return impl_->write([&](connection& c) -> result<void> {
    if (!load_trigger(c, trigger_id))
      return no_trigger(trigger_id);
    query(c,
          "INSERT INTO schedule_state (trigger_id, next_due, last_planned) VALUES (?, ?, ?) "
          "ON CONFLICT (trigger_id) DO UPDATE SET next_due = excluded.next_due, "
          "last_planned = excluded.last_planned")
        .bind(trigger_id, s.next_due, s.last_planned)
        .run();
    return {};
  });
}

// ---------------------------------------------------------------------------------------------
// chain watcher

result<std::optional<uint64_t>> sqlite_store::chain_checkpoint(std::string_view trigger_id) const {
  return impl_->read([&](connection& c) -> result<std::optional<uint64_t>> {
    query q(c, "SELECT block FROM chain_checkpoints WHERE trigger_id = ?");
    q.bind(trigger_id);
    if (!q.next())
      return std::optional<uint64_t>{};
    return std::optional<uint64_t>(q.u64(0));
  });
}

result<std::vector<run>> sqlite_store::record_chain_batch(const chain_batch& b) {
  std::vector<std::string> params;
  params.reserve(b.logs.size());
  for (const auto& e : b.logs) {
    if (e.log.trigger_id != b.trigger_id || (!e.fire.id.empty() && e.fire.trigger_id != b.trigger_id))
      return fail(store_errc::invalid_argument, "chain batch: every log and run must name trigger " + b.trigger_id);
    params.push_back(json::serialize(e.fire.params));
  }
  return impl_->write([&](connection& c) -> result<std::vector<run>> {
    query q(c, "SELECT type, enabled, max_runs_per_minute, max_queued_runs FROM triggers WHERE id = ?");
    q.bind(b.trigger_id);
    if (!q.next())
      return no_trigger(b.trigger_id);
    if (q.text(0) != to_string(trigger_type::chain_event))
      return fail(store_errc::wrong_type, "trigger " + b.trigger_id + ": not a chain-event trigger");
    if (!q.boolean(1))
      return fail(store_errc::disabled, "trigger " + b.trigger_id + ": disabled");
    const int64_t per_minute = q.i64(2);
    const int64_t queued = q.i64(3);
    std::vector<run> out;
    for (size_t i = 0; i < b.logs.size(); ++i) {
      const auto& e = b.logs[i];
      const std::optional<std::string> run_id =
          e.fire.id.empty() ? std::nullopt : std::optional<std::string>(e.fire.id);
      query(c,
            "INSERT INTO chain_logs (trigger_id, block_hash, log_index, block_number, removed, "
            "run_id, seen_at) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING")
          .bind(b.trigger_id, e.log.block_hash, e.log.log_index, e.log.block_number, e.log.removed, run_id,
                e.log.seen_at)
          .run();
      if (c.changes() == 1 && run_id)
        out.push_back(insert_or_refuse(c, e.fire, params[i], per_minute, queued));
    }
    if (b.checkpoint_block)
      query(c,
            "INSERT INTO chain_checkpoints (trigger_id, block) VALUES (?, ?) "
            "ON CONFLICT (trigger_id) DO UPDATE SET block = excluded.block")
          .bind(b.trigger_id, *b.checkpoint_block)
          .run();
    return out;
  });
}

result<size_t> sqlite_store::mark_logs_removed(std::string_view trigger_id, const hash256& block_hash) {
  return impl_->write([&](connection& c) -> result<size_t> {
    query(c, "UPDATE chain_logs SET removed = 1 WHERE trigger_id = ? AND block_hash = ? AND removed = 0")
        .bind(trigger_id, block_hash)
        .run();
    return static_cast<size_t>(c.changes());
  });
}

result<std::optional<seen_log>> sqlite_store::find_seen_log(std::string_view trigger_id, const hash256& block_hash,
                                                            uint64_t log_index) const {
  return impl_->read([&](connection& c) -> result<std::optional<seen_log>> {
    query q(c,
            "SELECT block_number, removed, run_id, seen_at FROM chain_logs WHERE trigger_id = ? "
            "AND block_hash = ? AND log_index = ?");
    q.bind(trigger_id, block_hash, log_index);
    if (!q.next())
      return std::optional<seen_log>{};
    seen_log l;
    l.trigger_id = std::string(trigger_id);
    l.block_hash = block_hash;
    l.log_index = log_index;
    l.block_number = q.u64(0);
    l.removed = q.boolean(1);
    l.run_id = q.text(2);
    l.seen_at = q.time(3);
    return std::optional<seen_log>(std::move(l));
  });
}

result<std::vector<trigger>> sqlite_store::list_chain_triggers() const {
  return impl_->read([&](connection& c) -> result<std::vector<trigger>> {
    query q(c, "SELECT " TRIGGER_COLUMNS
               "FROM triggers t WHERE t.type = ? AND t.enabled = 1 "
               "ORDER BY t.seq");
    q.bind(to_string(trigger_type::chain_event));
    std::vector<trigger> out;
    while (q.next())
      out.push_back(read_trigger(q));
    return out;
  });
}

result<std::vector<seen_log>> sqlite_store::list_seen_logs(std::string_view trigger_id, uint64_t from_block) const {
  return impl_->read([&](connection& c) -> result<std::vector<seen_log>> {
    query q(c,
            "SELECT block_hash, log_index, block_number, run_id, seen_at FROM chain_logs "
            "WHERE trigger_id = ? AND block_number >= ? AND removed = 0 "
            "ORDER BY block_number, log_index");
    q.bind(trigger_id, from_block);
    std::vector<seen_log> out;
    while (q.next()) {
      seen_log l;
      l.trigger_id = std::string(trigger_id);
      l.block_hash = q.fixed<32>(0);
      l.log_index = q.u64(1);
      l.block_number = q.u64(2);
      l.run_id = q.text(3);
      l.seen_at = q.time(4);
      out.push_back(std::move(l));
    }
    return out;
  });
}

// ---------------------------------------------------------------------------------------------
// tokens and approvals

result<void> sqlite_store::insert_token(const token_record& t) {
  ENACT_TRY_VOID(check_text("token.user_id", t.user_id, 256));
  ENACT_TRY_VOID(check_text("token.client_name", t.client_name, 256));
  if (t.user_id.empty())
    return fail(store_errc::invalid_argument, "token.user_id: must not be empty");
  return impl_->write([&](connection& c) -> result<void> {
    query(c,
          "INSERT INTO tokens (hash, user_id, client_name, created_at, expires_at, revoked) "
          "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING")
        .bind(t.hash, t.user_id, t.client_name, t.created_at, t.expires_at, t.revoked)
        .run();
    if (c.changes() == 0)
      return fail(store_errc::conflict, "token: a token with this hash exists");
    return {};
  });
}

result<token_record> sqlite_store::find_token(const hash256& hash) const {
  return impl_->read([&](connection& c) -> result<token_record> {
    query q(c, "SELECT hash, user_id, client_name, created_at, expires_at, revoked FROM tokens WHERE hash = ?");
    q.bind(hash);
    if (!q.next())
      return fail(store_errc::not_found, "token: unknown");
    return read_token(q);
  });
}

result<void> sqlite_store::revoke_token(const hash256& hash, std::string_view user_id) {
  return impl_->write([&](connection& c) -> result<void> {
    query(c, "UPDATE tokens SET revoked = 1 WHERE hash = ? AND user_id = ?").bind(hash, user_id).run();
    if (c.changes() == 0)
      return fail(store_errc::not_found, "token: unknown");
    return {};
  });
}

result<std::vector<token_record>> sqlite_store::list_tokens(std::string_view user_id) const {
  return impl_->read([&](connection& c) -> result<std::vector<token_record>> {
    std::vector<token_record> out;
    query q(c,
            "SELECT hash, user_id, client_name, created_at, expires_at, revoked FROM tokens "
            "WHERE user_id = ? ORDER BY created_at DESC, hash");
    q.bind(user_id);
    while (q.next())
      out.push_back(read_token(q));
    return out;
  });
}

#define APPROVAL_SELECT \
  "SELECT challenge, client_name, status, user_id, token_hash, created_at, expires_at FROM approvals "

result<void> sqlite_store::create_approval(const approval& a) {
  if (a.challenge.empty())
    return fail(store_errc::invalid_argument, "approval.challenge: must not be empty");
  ENACT_TRY_VOID(check_text("approval.challenge", a.challenge, 128));
  ENACT_TRY_VOID(check_text("approval.client_name", a.client_name, 256));
  return impl_->write([&](connection& c) -> result<void> {
    query(c,
          "INSERT INTO approvals (challenge, client_name, status, user_id, token_hash, created_at, "
          "expires_at) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING")
        .bind(a.challenge, a.client_name, to_string(a.status), a.user_id, a.token_hash, a.created_at, a.expires_at)
        .run();
    if (c.changes() == 0)
      return fail(store_errc::conflict, "approval: this challenge exists already");
    return {};
  });
}

result<approval> sqlite_store::get_approval(std::string_view challenge) const {
  return impl_->read([&](connection& c) -> result<approval> {
    query q(c, APPROVAL_SELECT "WHERE challenge = ?");
    q.bind(challenge);
    if (!q.next())
      return fail(store_errc::not_found, "approval: unknown challenge");
    return read_approval(q);
  });
}

result<approval> sqlite_store::decide_approval(std::string_view challenge, std::string_view user_id, bool approve,
                                               time_point now) {
  if (user_id.empty())
    return fail(store_errc::invalid_argument, "approval: user_id must not be empty");
  return impl_->write([&](connection& c) -> result<approval> {
    query(c,
          "UPDATE approvals SET status = ?, user_id = ? WHERE challenge = ? AND status = "
          "'pending' AND expires_at > ?")
        .bind(approve ? "approved" : "denied", user_id, challenge, now)
        .run();
    const bool changed = c.changes() == 1;
    query q(c, APPROVAL_SELECT "WHERE challenge = ?");
    q.bind(challenge);
    if (!q.next())
      return fail(store_errc::not_found, "approval: unknown challenge");
    if (!changed)
      return fail(store_errc::conflict, "approval: decided already, or expired");
    return read_approval(q);
  });
}

result<token_record> sqlite_store::claim_approval(std::string_view challenge, const token_record& t, time_point now) {
  return impl_->write([&](connection& c) -> result<token_record> {
    std::optional<approval> a;
    {
      query q(c, APPROVAL_SELECT "WHERE challenge = ?");
      q.bind(challenge);
      if (!q.next())
        return fail(store_errc::not_found, "approval: unknown challenge");
      a = read_approval(q);
    }
    if (a->status != approval_status::approved || a->token_hash || a->expires_at <= now)
      return fail(store_errc::conflict, "approval: not approved, claimed already, or expired");
    if (a->user_id != t.user_id)
      return fail(store_errc::invalid_argument, "approval: the token must belong to the approver");
    query(c,
          "INSERT INTO tokens (hash, user_id, client_name, created_at, expires_at, revoked) "
          "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING")
        .bind(t.hash, t.user_id, t.client_name, t.created_at, t.expires_at, t.revoked)
        .run();
    if (c.changes() == 0)
      return fail(store_errc::conflict, "token: a token with this hash exists");
    query(c, "UPDATE approvals SET token_hash = ? WHERE challenge = ?").bind(t.hash, challenge).run();
    return t;
  });
}

// ---------------------------------------------------------------------------------------------
// browser sessions

result<void> sqlite_store::create_session(const browser_session& s) {
  ENACT_TRY_VOID(check_text("session.user_id", s.user_id, 256));
  ENACT_TRY_VOID(check_text("session.nonce", s.nonce, 128));
  return impl_->write([&](connection& c) -> result<void> {
    query(c, "DELETE FROM browser_sessions WHERE expires_at <= ?").bind(s.created_at).run();
    query(c,
          "INSERT INTO browser_sessions (hash, user_id, nonce, created_at, expires_at) "
          "VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING")
        .bind(s.hash, s.user_id, s.nonce, s.created_at, s.expires_at)
        .run();
    if (c.changes() == 0)
      return fail(store_errc::conflict, "session: a session with this hash exists");
    return {};
  });
}

result<browser_session> sqlite_store::find_session(const hash256& hash) const {
  return impl_->read([&](connection& c) -> result<browser_session> {
    query q(c, "SELECT hash, user_id, nonce, created_at, expires_at FROM browser_sessions WHERE hash = ?");
    q.bind(hash);
    if (!q.next())
      return fail(store_errc::not_found, "session: unknown");
    browser_session s;
    s.hash = q.fixed<32>(0);
    s.user_id = q.text(1);
    s.nonce = q.text(2);
    s.created_at = q.time(3);
    s.expires_at = q.time(4);
    return s;
  });
}

result<void> sqlite_store::sign_in_session(const hash256& pre, std::string_view nonce, const browser_session& signed_in,
                                           time_point now) {
  if (nonce.empty())
    return fail(store_errc::not_found, "session: no sign-in nonce");
  ENACT_TRY_VOID(check_text("session.user_id", signed_in.user_id, 256));
  ENACT_TRY_VOID(check_text("session.nonce", signed_in.nonce, 128));
  return impl_->write([&](connection& c) -> result<void> {
    query(c, "DELETE FROM browser_sessions WHERE hash = ? AND nonce = ? AND expires_at > ?")
        .bind(pre, nonce, now)
        .run();
    if (c.changes() == 0)
      return fail(store_errc::not_found, "session: unknown or expired, or its nonce was used or differs");
    query(c,
          "INSERT INTO browser_sessions (hash, user_id, nonce, created_at, expires_at) "
          "VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING")
        .bind(signed_in.hash, signed_in.user_id, signed_in.nonce, signed_in.created_at, signed_in.expires_at)
        .run();
    if (c.changes() == 0)
      return fail(store_errc::conflict, "session: a session with this hash exists");
    return {};
  });
}

result<void> sqlite_store::end_session(const hash256& hash) {
  return impl_->write([&](connection& c) -> result<void> {
    query(c, "DELETE FROM browser_sessions WHERE hash = ?").bind(hash).run();
    if (c.changes() == 0)
      return fail(store_errc::not_found, "session: unknown");
    return {};
  });
}

}  // namespace enact::triggers
