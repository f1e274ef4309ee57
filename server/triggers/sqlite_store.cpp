// SPDX-License-Identifier: Apache-2.0
// The SQLite trigger store (sqlite_store.hpp): its schema, the writer thread, and the SQL backend
// (sql_store.hpp) the store's body runs on — statements in SQLite's spelling, reads on the pool
// of read-only connections, writes through the writer thread. An SQLite failure is an exception
// (storage::sqlite_error) inside the body; the backend catches it at the transaction boundary and
// answers store_errc::storage with SQLite's message.
#include <sqlite3.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <iterator>
#include <mutex>
#include <thread>

#include "storage/sqlite.hpp"
#include "triggers/sqlite_store.hpp"
#include "triggers/sql_store_internal.hpp"

namespace enact::triggers {
namespace sqlite_backend {

using storage::connection;
using storage::query;

namespace {

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
    // 2 → 3: per-trigger run limits (docs/protocol.md §4); the partial index keeps the count of a trigger's
    // unfinished runs proportional to them, not to its history.
    R"sql(
ALTER TABLE triggers ADD COLUMN max_runs_per_minute INTEGER NOT NULL DEFAULT 60;
ALTER TABLE triggers ADD COLUMN max_queued_runs INTEGER NOT NULL DEFAULT 100;
CREATE INDEX runs_unfinished ON runs(trigger_id) WHERE status IN ('queued', 'running');
)sql",
    // 3 → 4: the hash of a chain checkpoint's block, so that a restart resumes from the checkpoint
    // when the chain still has that block (chain_watcher.hpp).
    R"sql(
ALTER TABLE chain_checkpoints ADD COLUMN block_hash BLOB;
)sql",
    // 4 → 5: a webhook run's de-duplication key (config.dedup_header), unique per trigger; NULL
    // (no key) is never equal to another NULL.
    R"sql(
ALTER TABLE runs ADD COLUMN dedup_key TEXT;
CREATE UNIQUE INDEX runs_dedup ON runs(trigger_id, dedup_key);
)sql",
    // 5 → 6: the firing path's pages (docs/benchmarks.md "Scheduler at 100,000 schedules"). Every
    // index keyed by a random id costs a page write per run inserted, so:
    //  - runs_dedup holds only the runs that have a key (webhooks whose trigger names
    //    config.dedup_header); schedule and chain runs, and most webhook runs, skip it;
    //  - schedule_state is keyed by its trigger id alone (WITHOUT ROWID): a firing reads and
    //    updates one B-tree instead of the id's index and then the table.
    R"sql(
DROP INDEX runs_dedup;
CREATE UNIQUE INDEX runs_dedup ON runs(trigger_id, dedup_key) WHERE dedup_key IS NOT NULL;
CREATE TABLE schedule_state_6 (
  trigger_id   TEXT    PRIMARY KEY REFERENCES triggers(id) ON DELETE CASCADE,
  next_due     INTEGER NOT NULL,
  last_planned INTEGER
) WITHOUT ROWID;
INSERT INTO schedule_state_6 (trigger_id, next_due, last_planned)
  SELECT trigger_id, next_due, last_planned FROM schedule_state;
DROP TABLE schedule_state;
ALTER TABLE schedule_state_6 RENAME TO schedule_state;
)sql",
    // 6 → 7: why the service disabled a trigger, and a schedule's runs failed in a row for lack of
    // credits (docs/protocol.md §4 "Limits").
    R"sql(
ALTER TABLE triggers ADD COLUMN disabled_reason TEXT;
ALTER TABLE triggers ADD COLUMN credit_failures INTEGER NOT NULL DEFAULT 0;
)sql",
};
static_assert(std::size(kMigrations) == sqlite_store::kSchemaVersion, "kSchemaVersion must count the migrations");

}  // namespace

// ---------------------------------------------------------------------------------------------
// The writer thread

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
      storage::transaction tx(c_);
      for (job* j : batch) {
        storage::savepoint sp(c_, "w");
        const bool keep = j->fn(c_);
        // Some errors (I/O, full disk) roll the whole transaction back: nothing of the group holds.
        if (!c_.in_transaction())
          throw storage::sqlite_error("sqlite: the transaction was rolled back by an error");
        if (keep)
          sp.release();
        else
          sp.rollback();
      }
      tx.commit();
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

/// Checkpoints on a thread of their own. SQLite's automatic checkpoint runs in the committing
/// connection, i.e. in the writer thread, where the checkpoint's fsync of the database file would
/// hold up every write queued behind it (with synchronous FULL, hundreds of milliseconds at the
/// 99th percentile of webhook intake). Here the writer's WAL hook only signals; this thread runs
/// PASSIVE checkpoints, which never block the writer. Should the WAL still grow past
/// kWalBackpressurePages, the writer checkpoints itself (backpressure).
class checkpointer {
 public:
  // A page written again before the checkpoint is copied into the database once: a firing second
  // rewrites most leaf pages of the runs' indexes keyed by random ids, so checkpoints of SQLite's
  // default 1,000 pages copied each of them after nearly every commit.
  static constexpr int kWalPages = 8000;                // 32 MiB of 4 KiB pages
  static constexpr int kWalBackpressurePages = 100000;  // ~400 MiB of 4 KiB pages

  checkpointer(const std::string& path, connection& writer, bool full) : c_(path), writer_(writer) {
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

// ---------------------------------------------------------------------------------------------
// The SQL backend

/// store_errc::storage with the failure's message.
error storage_error(const std::exception& e) {
  if (dynamic_cast<const store_rows::corrupt_row*>(&e) != nullptr)
    return fail(store_errc::storage, "sqlite: " + std::string(e.what()));
  return fail(store_errc::storage, e.what());
}

/// A statement of the store's body in SQLite's spelling (sql_store.hpp): `$n` is `?n`, and row
/// locks are dropped — the writer thread's transaction holds the whole database. Kept for the
/// process's life, per statement literal, so connections cache the prepared statements on it.
const std::string& dialect(const char* sql) {
  static std::mutex mu;
  static std::unordered_map<const char*, std::unique_ptr<const std::string>> done;
  std::lock_guard lock(mu);
  auto& out = done[sql];
  if (!out) {
    std::string s = sql;
    for (size_t at = s.find('$'); at != std::string::npos; at = s.find('$', at + 1))
      s[at] = '?';
    for (size_t at = s.find(" FOR UPDATE"); at != std::string::npos; at = s.find(" FOR UPDATE", at)) {
      const size_t close = s.find(')', at);
      s.erase(at, (close == std::string::npos ? s.size() : close) - at);
    }
    out = std::make_unique<const std::string>(std::move(s));
  }
  return *out;
}

/// One statement's rows: the statement has run to its first row (or its end) on construction,
/// so a write has happened when the store's body gets these back.
class statement_rows final : public sql::rows {
 public:
  statement_rows(storage::connection& c, const std::string& sql, std::span<const sql::param> params) : q_(c, sql) {
    for (const sql::param& p : params)
      std::visit([&](const auto& v) { q_.bind(v); }, p);
    more_ = q_.next();
    changes_ = c.changes();
  }
  bool next() override {
    if (first_)
      first_ = false;
    else if (more_)
      more_ = q_.next();  // never stepped again once done: SQLite would run the statement anew
    return more_;
  }
  bool is_null(int col) const override { return q_.is_null(col); }
  int64_t i64(int col) const override { return q_.i64(col); }
  bool boolean(int col) const override { return q_.boolean(col); }
  std::string text(int col) const override { return q_.text(col); }
  bytes blob(int col) const override { return q_.blob(col); }
  int64_t affected() const override { return changes_; }

 private:
  storage::query q_;
  bool first_ = true;
  bool more_ = false;
  int64_t changes_ = 0;
};

class sql_connection final : public sql::connection {
 public:
  explicit sql_connection(storage::connection& c) : c_(c) {}

 protected:
  std::unique_ptr<sql::rows> run(const char* sql, std::span<const sql::param> params) override {
    return std::make_unique<statement_rows>(c_, dialect(sql), params);
  }

 private:
  storage::connection& c_;
};

class db final : public sql::backend {
 public:
  static constexpr size_t kWriterCacheKib = 32 * 1024;

  db(const std::string& path, const sqlite_options& o)
      : db_(path, kMigrations, {.synchronous_full = o.synchronous_full, .read_connections = o.read_connections}) {
    // The writer reads the pages it changes: with SQLite's default 2 MiB cache, a run inserted
    // into indexes keyed by random ids read most of their pages back from the file each time.
    db_.writer().exec("PRAGMA cache_size = " + std::to_string(-static_cast<int64_t>(kWriterCacheKib)));
    checkpoints_ = std::make_unique<checkpointer>(path, db_.writer(), o.synchronous_full);
    queue_ = std::make_unique<write_queue>(db_.writer(), o.max_batch);
  }
  ~db() override {
    queue_.reset();  // answers queued writes before the connections close
    checkpoints_.reset();
  }

  result<void> read(const work& f) const override {
    try {
      storage::reader_pool::lease l = db_.readers().acquire();
      sql_connection c(*l);
      return f(c);
    } catch (const std::exception& e) {
      return storage_error(e);
    }
  }

  result<void> write(const work& f) override {
    std::optional<result<void>> out;
    std::string error;
    const bool committed = queue_->submit(
        [&](connection& raw) -> bool {
          out.emplace(run_op(raw, f));
          return out->has_value();
        },
        error);
    if (!committed)
      return fail(store_errc::storage, error);
    return std::move(*out);
  }

  /// Several writes at once, in order, sharing transactions: element i is what write(fns[i])
  /// would answer.
  std::vector<result<void>> write_all(const std::vector<work>& fns) {
    std::vector<std::optional<result<void>>> outs(fns.size());
    std::vector<write_queue::op> ops;
    for (size_t i = 0; i < fns.size(); ++i)
      ops.push_back([&, i](connection& raw) -> bool {
        outs[i].emplace(run_op(raw, fns[i]));
        return outs[i]->has_value();
      });
    std::vector<std::string> errors;
    queue_->submit_all(std::move(ops), errors);
    std::vector<result<void>> answers;
    for (size_t i = 0; i < fns.size(); ++i)
      answers.push_back(!errors[i].empty() ? result<void>(fail(store_errc::storage, errors[i])) : std::move(*outs[i]));
    return answers;
  }

  [[nodiscard]] sqlite_store::commit_stats stats() const { return queue_->stats(); }

 private:
  /// Runs `f` in the writer's transaction; an exception is a storage failure (never thrown on).
  static result<void> run_op(connection& raw, const work& f) {
    try {
      sql_connection c(raw);
      return f(c);
    } catch (const std::exception& e) {
      return storage_error(e);
    }
  }

  mutable storage::database db_;  // the writer (used by the writer thread only) and the readers
  std::unique_ptr<checkpointer> checkpoints_;
  std::unique_ptr<write_queue> queue_;
};

}  // namespace sqlite_backend

// ---------------------------------------------------------------------------------------------
// sqlite_store

result<std::unique_ptr<sqlite_store>> sqlite_store::open(const std::string& path, sqlite_options options) {
  std::unique_ptr<sqlite_backend::db> d;
  try {
    // Opens in WAL mode, migrates (refusing a newer schema) and opens one reader.
    d = std::make_unique<sqlite_backend::db>(path, options);
  } catch (const std::exception& e) {
    return sqlite_backend::storage_error(e);
  }
  return std::unique_ptr<sqlite_store>(new sqlite_store(std::move(d)));
}

sqlite_store::sqlite_store(std::unique_ptr<sqlite_backend::db> d)
    : sql_store(std::move(d)), db_(static_cast<sqlite_backend::db*>(&backend())) {}
sqlite_store::~sqlite_store() = default;

sqlite_store::commit_stats sqlite_store::stats() const { return db_->stats(); }

std::vector<result<std::optional<run>>> sqlite_store::fire_schedules(const std::vector<schedule_firing>& firings) {
  using outcome = result<std::optional<run>>;
  std::vector<std::optional<outcome>> outs(firings.size());
  std::vector<std::string> params(firings.size());
  std::vector<sql::backend::work> fns;
  std::vector<size_t> submitted;
  for (size_t i = 0; i < firings.size(); ++i) {
    if (auto ok = store_rows::check_new_run(firings[i].r); !ok) {
      outs[i].emplace(ok.err());
      continue;
    }
    params[i] = json::serialize(firings[i].r.params);  // outside the writer thread
    submitted.push_back(i);
    fns.push_back([&, i](sql::connection& c) -> result<void> {
      outs[i].emplace(fire(c, firings[i], params[i]));
      return {};
    });
  }
  const std::vector<result<void>> written = db_->write_all(fns);
  for (size_t k = 0; k < submitted.size(); ++k)
    if (!written[k])
      outs[submitted[k]].emplace(written[k].err());
  std::vector<outcome> answers;
  answers.reserve(firings.size());
  for (auto& o : outs)
    answers.push_back(std::move(*o));
  return answers;
}

}  // namespace enact::triggers
