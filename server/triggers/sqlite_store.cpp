// SPDX-License-Identifier: Apache-2.0
// The SQLite trigger store (sqlite_store.hpp): its schema, the writer thread, open, and the
// trigger records; runs, schedules and chain logs are in sqlite_store_runs.cpp, tokens, approvals
// and browser sessions in sqlite_store_auth.cpp. Inside these files an SQLite failure is an
// exception (storage::sqlite_error), so the domain code reads straight through; the read and
// write wrappers (sqlite_store_internal.hpp) catch it at the transaction boundary and answer
// store_errc::storage with SQLite's message.
#include <sqlite3.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <iterator>
#include <mutex>
#include <thread>

#include "triggers/sqlite_store_internal.hpp"

namespace enact::triggers {
namespace sqlite_backend {
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
  static constexpr int kWalPages = 1000;                // SQLite's default auto-checkpoint size
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
// Rows shared by the files of the store

error storage_error(const std::exception& e) {
  if (dynamic_cast<const corrupt_row*>(&e) != nullptr)
    return fail(store_errc::storage, "sqlite: " + std::string(e.what()));
  return fail(store_errc::storage, e.what());
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
  return queued_run(r);
}

/// The run limits of docs/protocol.md §4, checked in the transaction that would queue a run of trigger
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
  return refused_run(r, why.message);
}

/// Queues `r`, or records it refused when the trigger is over its run limits.
run insert_or_refuse(connection& c, const new_run& r, const std::string& params_json, int64_t per_minute,
                     int64_t queued) {
  if (auto over = over_limits(c, r.trigger_id, per_minute, queued, r.queued_at))
    return insert_refused_run(c, r, params_json, *over);
  return insert_run(c, r, params_json);
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

}  // namespace sqlite_backend

using namespace sqlite_backend;

// ---------------------------------------------------------------------------------------------
// impl

sqlite_store::impl::impl(const std::string& path, const sqlite_options& o)
    : db(path, kMigrations, {.synchronous_full = o.synchronous_full, .read_connections = o.read_connections}),
      options(o) {}

sqlite_store::impl::~impl() {
  queue.reset();  // answers queued writes before the connections close
  checkpoints.reset();
}

bool sqlite_store::impl::submit(write_op fn, std::string& error) { return queue->submit(std::move(fn), error); }

void sqlite_store::impl::submit_all(std::vector<write_op> fns, std::vector<std::string>& errors) {
  queue->submit_all(std::move(fns), errors);
}

result<std::unique_ptr<sqlite_store>> sqlite_store::open(const std::string& path, sqlite_options options) {
  std::unique_ptr<impl> s;
  try {
    // Opens in WAL mode, migrates (refusing a newer schema) and opens one reader.
    s = std::make_unique<impl>(path, options);
    s->checkpoints = std::make_unique<checkpointer>(path, s->db.writer(), options.synchronous_full);
    s->queue = std::make_unique<write_queue>(s->db.writer(), options.max_batch);
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
  ENACT_TRY_VOID(check_new_trigger(t));
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
    query n(c, "SELECT COUNT(*) FROM triggers WHERE owner = ?");
    n.bind(owner);
    query q(c, "SELECT " TRIGGER_COLUMNS "FROM triggers t WHERE t.owner = ? ORDER BY t.seq LIMIT ? OFFSET ?");
    q.bind(owner, p.limit, p.offset);
    return read_listing<trigger>(n, q, [](const query& row) { return read_trigger(row); });
  });
}

result<trigger> sqlite_store::update_trigger(std::string_view owner, std::string_view id, const trigger_patch& patch) {
  ENACT_TRY_VOID(check_patch(patch));
  std::optional<std::string> config;
  if (patch.config)
    config = json::serialize(*patch.config);
  return impl_->write([&](connection& c) -> result<trigger> {
    auto t = load_trigger(c, id);
    if (!t || t->owner != owner)
      return no_trigger(id);
    apply_patch(*t, patch);
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

}  // namespace enact::triggers
