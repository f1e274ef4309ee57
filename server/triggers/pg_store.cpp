// The PostgreSQL trigger store (pg_store.hpp). As in sqlite_store.cpp, a database failure is an
// exception inside this file (`pg_failure`, with the SQLSTATE), caught at the call boundary and
// answered as a store_errc. Values travel as text, except bytea parameters (binary, so no escaping
// exists to get wrong); results are text (bytea in hex).
#include "triggers/pg_store.hpp"

#include <libpq-fe.h>

#include <algorithm>
#include <charconv>
#include <condition_variable>
#include <cstring>
#include <iterator>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <unordered_map>

#include "enact/crypto/secret.hpp"

namespace enact::triggers {

bool is_postgres_url(std::string_view s) noexcept {
  return s.starts_with("postgres://") || s.starts_with("postgresql://");
}

namespace {

constexpr size_t kMaxText = 4096;
constexpr int64_t kMaxI64 = std::numeric_limits<int64_t>::max();
constexpr int kWriteAttempts = 3;  // a transaction failing on a deadlock or serialization is retried
// pg_advisory_xact_lock key that serialises schema creation between instances opening at once.
constexpr const char* kSchemaLock = "SELECT pg_advisory_xact_lock(6872612823553061683)";

// Schema migrations: kMigrations[i] takes version i to i + 1. Append, never edit. The same tables
// as the SQLite store (sqlite_store.cpp): surrogate `seq` ordering lists by creation, instants in
// Unix milliseconds, hashes and keys as bytea, JSON kept as the exact text it was written as.
constexpr const char* kMigrations[] = {
    R"sql(
CREATE TABLE triggers (
  seq              bigint  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  id               text    NOT NULL UNIQUE,
  owner            text    NOT NULL,
  type             text    NOT NULL,
  name             text    NOT NULL,
  enabled          boolean NOT NULL,
  action_cid       text    NOT NULL,
  pkp_id           bytea,
  sealed_usage_key bytea   NOT NULL,
  usage_key_hash   bytea   NOT NULL,
  config           text    NOT NULL,
  created_at       bigint  NOT NULL,
  updated_at       bigint  NOT NULL
);
CREATE INDEX triggers_by_owner ON triggers(owner, seq);
CREATE TABLE runs (
  seq              bigint  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  id               text    NOT NULL UNIQUE,
  trigger_id       text    NOT NULL REFERENCES triggers(id) ON DELETE CASCADE,
  status           text    NOT NULL CHECK (status IN ('queued', 'running', 'success', 'failed')),
  attempts         integer NOT NULL DEFAULT 0,
  params           text    NOT NULL,
  response         text,
  error_code       text,
  error_message    text,
  error_stack      text,
  queued_at        bigint  NOT NULL,
  started_at       bigint,
  finished_at      bigint,
  next_attempt_at  bigint  NOT NULL,
  lease_owner      text,
  lease_expires_at bigint
);
CREATE INDEX runs_by_trigger ON runs(trigger_id, seq);
CREATE INDEX runs_ready ON runs(next_attempt_at, seq)
  WHERE lease_owner IS NULL AND status IN ('queued', 'running');
CREATE INDEX runs_leased ON runs(lease_expires_at) WHERE lease_owner IS NOT NULL;
CREATE TABLE schedule_state (
  trigger_id   text   PRIMARY KEY REFERENCES triggers(id) ON DELETE CASCADE,
  next_due     bigint NOT NULL,
  last_planned bigint
);
CREATE TABLE chain_checkpoints (
  trigger_id text   PRIMARY KEY REFERENCES triggers(id) ON DELETE CASCADE,
  block      bigint NOT NULL
);
CREATE TABLE chain_logs (
  trigger_id   text    NOT NULL REFERENCES triggers(id) ON DELETE CASCADE,
  block_hash   bytea   NOT NULL,
  log_index    bigint  NOT NULL,
  block_number bigint  NOT NULL,
  removed      boolean NOT NULL DEFAULT false,
  run_id       text,
  seen_at      bigint  NOT NULL,
  PRIMARY KEY (trigger_id, block_hash, log_index)
);
CREATE TABLE tokens (
  hash        bytea   PRIMARY KEY,
  user_id     text    NOT NULL,
  client_name text    NOT NULL,
  created_at  bigint  NOT NULL,
  expires_at  bigint  NOT NULL,
  revoked     boolean NOT NULL DEFAULT false
);
CREATE INDEX tokens_by_user ON tokens(user_id, created_at);
CREATE TABLE approvals (
  challenge   text   PRIMARY KEY,
  client_name text   NOT NULL,
  status      text   NOT NULL CHECK (status IN ('pending', 'approved', 'denied')),
  user_id     text   NOT NULL DEFAULT '',
  token_hash  bytea,
  created_at  bigint NOT NULL,
  expires_at  bigint NOT NULL
);
CREATE TABLE browser_sessions (
  hash       bytea  PRIMARY KEY,
  user_id    text   NOT NULL,
  nonce      text   NOT NULL,
  created_at bigint NOT NULL,
  expires_at bigint NOT NULL
);
CREATE INDEX browser_sessions_by_expiry ON browser_sessions(expires_at);
)sql",
    // 1 → 2: per-trigger run limits (API.md §4); the partial index keeps the count of a trigger's
    // unfinished runs proportional to them, not to its history.
    R"sql(
ALTER TABLE triggers ADD COLUMN max_runs_per_minute integer NOT NULL DEFAULT 60;
ALTER TABLE triggers ADD COLUMN max_queued_runs integer NOT NULL DEFAULT 100;
CREATE INDEX runs_unfinished ON runs(trigger_id) WHERE status IN ('queued', 'running');
)sql",
};
static_assert(std::size(kMigrations) == pg_store::kSchemaVersion, "kSchemaVersion must count the migrations");

// ---------------------------------------------------------------------------------------------
// libpq access

struct pg_failure : std::runtime_error {
  pg_failure(const std::string& what, std::string state) : std::runtime_error(what), sqlstate(std::move(state)) {}
  std::string sqlstate;  // five characters; empty for client-side failures
};

std::string trimmed(const char* msg) {
  std::string s = msg != nullptr ? msg : "";
  while (!s.empty() && (s.back() == '\n' || s.back() == ' '))
    s.pop_back();
  return s;
}

struct result_closer {
  void operator()(PGresult* r) const noexcept { PQclear(r); }
};
using result_ptr = std::unique_ptr<PGresult, result_closer>;

/// Parameters of one statement, in order.
class args {
 public:
  template <class... A>
  explicit args(const A&... a) {
    (add(a), ...);
  }
  [[nodiscard]] int size() const noexcept { return static_cast<int>(data_.size()); }
  /// Pointers for PQexecPrepared; valid while this object lives unchanged.
  void finish() {
    ptrs_.clear();
    lens_.clear();
    for (size_t i = 0; i < data_.size(); ++i) {
      ptrs_.push_back(null_[i] ? nullptr : data_[i].data());
      lens_.push_back(static_cast<int>(data_[i].size()));
    }
  }
  [[nodiscard]] const char* const* values() const noexcept { return ptrs_.data(); }
  [[nodiscard]] const int* lengths() const noexcept { return lens_.data(); }
  [[nodiscard]] const int* formats() const noexcept { return formats_.data(); }

 private:
  void push(std::string v, bool null, int format) {
    data_.push_back(std::move(v));
    null_.push_back(null);
    formats_.push_back(format);
  }
  void add(std::nullptr_t) { push({}, true, 0); }
  void add(int64_t v) { push(std::to_string(v), false, 0); }
  void add(uint64_t v) { add(static_cast<int64_t>(std::min<uint64_t>(v, kMaxI64))); }
  void add(uint32_t v) { add(static_cast<int64_t>(v)); }
  void add(int v) { add(static_cast<int64_t>(v)); }
  void add(bool v) { push(v ? "t" : "f", false, 0); }
  void add(time_point t) { add(static_cast<int64_t>(t.time_since_epoch().count())); }
  void add(std::string_view v) { push(std::string(v), false, 0); }
  void add(const std::string& v) { add(std::string_view(v)); }
  void add(const char* v) { add(std::string_view(v)); }
  void add(const bytes& v) { push(std::string(v.begin(), v.end()), false, 1); }
  template <size_t N>
  void add(const std::array<uint8_t, N>& v) {
    push(std::string(v.begin(), v.end()), false, 1);
  }
  template <class T>
  void add(const std::optional<T>& v) {
    if (v)
      add(*v);
    else
      add(nullptr);
  }

  std::vector<std::string> data_;
  std::vector<bool> null_;
  std::vector<int> formats_;
  std::vector<const char*> ptrs_;
  std::vector<int> lens_;
};

/// The rows of one statement, read in order with next().
class rows {
 public:
  explicit rows(result_ptr r) : r_(std::move(r)), n_(PQntuples(r_.get())) {}

  [[nodiscard]] bool next() noexcept { return ++row_ < n_; }
  [[nodiscard]] int count() const noexcept { return n_; }
  /// Rows a write changed (INSERT / UPDATE / DELETE).
  [[nodiscard]] int64_t affected() const {
    const char* s = PQcmdTuples(r_.get());
    int64_t n = 0;
    std::from_chars(s, s + std::strlen(s), n);
    return n;
  }

  [[nodiscard]] bool is_null(int col) const { return PQgetisnull(r_.get(), row_, col) != 0; }
  [[nodiscard]] std::string_view raw(int col) const {
    return {PQgetvalue(r_.get(), row_, col), static_cast<size_t>(PQgetlength(r_.get(), row_, col))};
  }
  [[nodiscard]] int64_t i64(int col) const {
    const std::string_view s = raw(col);
    int64_t v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc{} || end != s.data() + s.size())
      throw pg_failure("postgres: corrupt row: expected an integer in column " + std::to_string(col), "");
    return v;
  }
  [[nodiscard]] uint64_t u64(int col) const { return static_cast<uint64_t>(i64(col)); }
  [[nodiscard]] bool boolean(int col) const { return raw(col) == "t"; }
  [[nodiscard]] time_point time(int col) const { return time_point{std::chrono::milliseconds{i64(col)}}; }
  [[nodiscard]] std::optional<time_point> opt_time(int col) const {
    if (is_null(col))
      return std::nullopt;
    return time(col);
  }
  [[nodiscard]] std::string text(int col) const { return std::string(raw(col)); }
  /// bytea in its hex output form ("\x0a1b…").
  [[nodiscard]] bytes blob(int col) const {
    const std::string_view s = raw(col);
    if (!s.starts_with("\\x") || s.size() % 2 != 0)
      throw pg_failure("postgres: corrupt row: bytea not in hex form", "");
    bytes out;
    out.reserve((s.size() - 2) / 2);
    const auto nibble = [](char c) -> int {
      if (c >= '0' && c <= '9')
        return c - '0';
      if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
      if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
      return -1;
    };
    for (size_t i = 2; i < s.size(); i += 2) {
      const int hi = nibble(s[i]), lo = nibble(s[i + 1]);
      if (hi < 0 || lo < 0)
        throw pg_failure("postgres: corrupt row: bad hex in bytea", "");
      out.push_back(static_cast<uint8_t>(hi << 4 | lo));
    }
    return out;
  }
  template <size_t N>
  [[nodiscard]] std::array<uint8_t, N> fixed(int col) const {
    const bytes b = blob(col);
    if (b.size() != N)
      throw pg_failure(
          "postgres: corrupt row: bytea of " + std::to_string(b.size()) + " bytes, expected " + std::to_string(N), "");
    std::array<uint8_t, N> out{};
    std::copy_n(b.begin(), N, out.begin());
    return out;
  }
  [[nodiscard]] json::value json_value(int col) const {
    std::error_code ec;
    json::value v = json::parse(raw(col), ec);
    if (ec)
      throw pg_failure("postgres: corrupt row: stored JSON does not parse", "");
    return v;
  }

 private:
  result_ptr r_;
  int n_;
  int row_ = -1;
};

/// One libpq connection and its prepared statements. Used by one thread at a time.
class connection {
 public:
  explicit connection(const std::string& url) {
    c_ = PQconnectdb(url.c_str());
    if (c_ == nullptr)
      throw pg_failure("postgres: connect: out of memory", "");
    if (PQstatus(c_) != CONNECTION_OK) {
      // libpq's message names host and port, never the password.
      const std::string msg = "postgres: connect: " + trimmed(PQerrorMessage(c_));
      PQfinish(c_);
      throw pg_failure(msg, "");
    }
    if (PQsetClientEncoding(c_, "UTF8") != 0)
      fail_now("set client encoding");
    exec_simple("SET bytea_output = 'hex'");
    exec_simple("SET client_min_messages = warning");  // no NOTICEs of idempotent DDL on stderr
    // The store's contract: a write is durable when the call returns (store.hpp).
    rows sc = exec("SELECT current_setting('synchronous_commit')");
    if (sc.next() && sc.raw(0) == "off")
      exec_simple("SET synchronous_commit = on");
  }
  ~connection() { PQfinish(c_); }
  connection(const connection&) = delete;
  connection& operator=(const connection&) = delete;

  [[nodiscard]] bool broken() const noexcept { return PQstatus(c_) != CONNECTION_OK; }
  [[nodiscard]] bool in_transaction() const noexcept {
    return PQtransactionStatus(c_) != PQTRANS_IDLE && PQtransactionStatus(c_) != PQTRANS_UNKNOWN;
  }

  /// Runs `sql` (a string literal: the statement cache keys on its text) with `a`.
  template <class... A>
  rows exec(std::string_view sql, const A&... a) {
    args p{a...};
    p.finish();
    const std::string& name = prepared(sql, p.size());
    result_ptr r(PQexecPrepared(c_, name.c_str(), p.size(), p.values(), p.lengths(), p.formats(), 0));
    check(r.get(), "statement");
    return rows(std::move(r));
  }

  /// Runs parameterless SQL text without preparing it (transaction control, schema scripts).
  void exec_simple(const std::string& sql) {
    result_ptr r(PQexec(c_, sql.c_str()));
    check(r.get(), "exec");
  }

  /// Rolls back the open transaction, if any; never throws (used on failure paths).
  void rollback() noexcept {
    if (!broken() && in_transaction())
      PQclear(PQexec(c_, "ROLLBACK"));
  }

 private:
  [[noreturn]] void fail_now(std::string_view what) {
    throw pg_failure("postgres: " + std::string(what) + ": " + trimmed(PQerrorMessage(c_)), "");
  }
  void check(PGresult* r, std::string_view what) {
    if (r == nullptr)
      fail_now(what);
    const auto st = PQresultStatus(r);
    if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK)
      return;
    const char* state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
    throw pg_failure("postgres: " + std::string(what) + ": " + trimmed(PQresultErrorMessage(r)),
                     state != nullptr ? state : "");
  }
  const std::string& prepared(std::string_view sql, int n) {
    if (auto it = cache_.find(sql); it != cache_.end())
      return it->second;
    std::string name = "s" + std::to_string(cache_.size());
    result_ptr r(PQprepare(c_, name.c_str(), std::string(sql).c_str(), n, nullptr));
    check(r.get(), "prepare");
    return cache_.emplace(sql, std::move(name)).first->second;
  }

  PGconn* c_ = nullptr;
  std::unordered_map<std::string_view, std::string> cache_;
};

/// At most `max` connections, each handed to one caller at a time; broken ones are dropped.
class pool {
 public:
  pool(std::string url, size_t max) : url_(std::move(url)), max_(std::max<size_t>(1, max)) {}
  // The URL may hold a password: overwrite it before the memory is freed.
  ~pool() { detail::secure_wipe(url_.data(), url_.size()); }

  class lease {
   public:
    lease(pool& p, std::unique_ptr<connection> c) : pool_(p), c_(std::move(c)) {}
    ~lease() { pool_.release(std::move(c_)); }
    lease(const lease&) = delete;
    lease& operator=(const lease&) = delete;
    connection& operator*() const noexcept { return *c_; }

   private:
    pool& pool_;
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
      return {*this, std::make_unique<connection>(url_)};
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
    if (c->broken() || c->in_transaction()) {
      c.reset();
      --open_;
    } else {
      idle_.push_back(std::move(c));
    }
    cv_.notify_one();
  }

  std::string url_;
  size_t max_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::unique_ptr<connection>> idle_;
  size_t open_ = 0;
};

// ---------------------------------------------------------------------------------------------
// Rows

[[nodiscard]] error storage_error(const pg_failure& e) {
  // A race the statements could not rule out in advance: another transaction inserted the same
  // key, or deleted the trigger a row refers to.
  if (e.sqlstate == "23505")
    return fail(store_errc::conflict, e.what());
  if (e.sqlstate == "23503")
    return fail(store_errc::not_found, "the trigger no longer exists (" + std::string(e.what()) + ")");
  return fail(store_errc::storage, e.what());
}

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

trigger read_trigger(const rows& q, int at = 0) {
  trigger t;
  t.id = q.text(at);
  t.owner = q.text(at + 1);
  const auto type = trigger_type_from(q.raw(at + 2));
  if (!type)
    throw pg_failure("postgres: corrupt row: unknown trigger type", "");
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
    throw pg_failure("postgres: corrupt row: trigger config is not an object", "");
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

run read_run(const rows& q, int at = 0) {
  run r;
  r.id = q.text(at);
  r.trigger_id = q.text(at + 1);
  const auto status = run_status_from(q.raw(at + 2));
  if (!status)
    throw pg_failure("postgres: corrupt row: unknown run status", "");
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

token_record read_token(const rows& q) {
  token_record t;
  t.hash = q.fixed<32>(0);
  t.user_id = q.text(1);
  t.client_name = q.text(2);
  t.created_at = q.time(3);
  t.expires_at = q.time(4);
  t.revoked = q.boolean(5);
  return t;
}

approval read_approval(const rows& q) {
  approval a;
  a.challenge = q.text(0);
  a.client_name = q.text(1);
  const std::string_view s = q.raw(2);
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
  rows q = c.exec("SELECT " TRIGGER_COLUMNS "FROM triggers t WHERE t.id = $1", id);
  if (!q.next())
    return std::nullopt;
  return read_trigger(q);
}

run queued_run(const new_run& r) {
  run out;
  out.id = r.id;
  out.trigger_id = r.trigger_id;
  out.status = run_status::queued;
  out.params = r.params;
  out.queued_at = r.queued_at;
  out.next_attempt_at = r.queued_at;
  return out;
}

/// Inserts a queued run (the caller has checked its trigger).
run insert_run(connection& c, const new_run& r, const std::string& params_json) {
  c.exec(
      "INSERT INTO runs (id, trigger_id, status, params, queued_at, next_attempt_at) "
      "VALUES ($1, $2, 'queued', $3, $4, $4)",
      r.id, r.trigger_id, params_json, r.queued_at);
  return queued_run(r);
}

// The run limits of API.md §4 as SQL over a trigger row `t` and the calendar minute's start $M:
// the trigger's newest runs by seq (runs_by_trigger), at most the limit of them, counted within
// the minute (runs refused by the limits, failed and never attempted, do not count); and its
// unfinished runs (runs_unfinished), at most the limit of them.
#define RUNS_THIS_MINUTE(M)                                                                        \
  "(SELECT COUNT(*) FROM (SELECT r.queued_at FROM runs r WHERE r.trigger_id = t.id AND "           \
  "NOT (r.status = 'failed' AND r.attempts = 0) ORDER BY r.seq DESC LIMIT t.max_runs_per_minute) " \
  "w WHERE w.queued_at >= " M ")"
#define RUNS_UNFINISHED                                                        \
  "(SELECT COUNT(*) FROM (SELECT 1 FROM runs r WHERE r.trigger_id = t.id AND " \
  "r.status IN ('queued', 'running') LIMIT t.max_queued_runs) q)"

time_point minute_of(time_point at) { return std::chrono::floor<std::chrono::minutes>(at); }

/// Why a run of trigger `id` at `at` may not be queued under its run limits; nullopt when it may.
std::optional<error> over_limits(connection& c, std::string_view id, time_point at) {
  rows q = c.exec("SELECT t.max_runs_per_minute, t.max_queued_runs, " RUNS_THIS_MINUTE(
                      "$2::bigint") ", " RUNS_UNFINISHED " FROM triggers t WHERE t.id = $1",
                  id, minute_of(at));
  if (!q.next())
    return std::nullopt;
  const int64_t per_minute = q.i64(0);
  const int64_t queued = q.i64(1);
  if (q.i64(2) >= per_minute)
    return fail(store_errc::rate_limited, "trigger " + std::string(id) + ": " + std::to_string(per_minute) +
                                              " runs queued in this minute already (max_runs_per_minute)");
  if (q.i64(3) >= queued)
    return fail(store_errc::queue_full, "trigger " + std::string(id) + ": " + std::to_string(queued) +
                                            " runs queued or running already (max_queued_runs)");
  return std::nullopt;
}

/// Queues `r`, or records it as a run that failed at once (never attempted) when the trigger is
/// over its run limits.
run insert_or_refuse(connection& c, const new_run& r, const std::string& params_json) {
  const auto over = over_limits(c, r.trigger_id, r.queued_at);
  if (!over)
    return insert_run(c, r, params_json);
  c.exec(
      "INSERT INTO runs (id, trigger_id, status, params, error_code, error_message, queued_at, "
      "finished_at, next_attempt_at) VALUES ($1, $2, 'failed', $3, $4, $5, $6, $6, $6)",
      r.id, r.trigger_id, params_json, kRateLimitedCode, over->message, r.queued_at);
  run out = queued_run(r);
  out.status = run_status::failed;
  out.error = run_error{std::string(kRateLimitedCode), over->message, std::nullopt};
  out.finished_at = r.queued_at;
  return out;
}

[[nodiscard]] result<void> check_new_run(const new_run& r) {
  if (r.id.empty() || r.trigger_id.empty())
    return fail(store_errc::invalid_argument, "run: id and trigger_id must not be empty");
  ENACT_TRY_VOID(check_text("run.id", r.id, 128));
  return {};
}

/// Fails (after max_attempts) or requeues runs whose lease expired by `now`; everything leased
/// when `all` is set. Rows another transaction holds are skipped: that one is handling them.
size_t expire(connection& c, time_point now, uint32_t max_attempts, bool all) {
  const int64_t cutoff = all ? kMaxI64 : static_cast<int64_t>(now.time_since_epoch().count());
  size_t n =
      static_cast<size_t>(c.exec("UPDATE runs SET status = 'failed', finished_at = $1, lease_owner = NULL, "
                                 "lease_expires_at = NULL, error_code = 'lease_expired', error_message = "
                                 "'the worker running this attempt stopped answering, and no attempt is left', "
                                 "error_stack = NULL WHERE seq IN (SELECT seq FROM runs WHERE lease_owner IS NOT NULL "
                                 "AND lease_expires_at <= $2 AND attempts >= $3 FOR UPDATE SKIP LOCKED)",
                                 now, cutoff, max_attempts)
                              .affected());
  n += static_cast<size_t>(c.exec("UPDATE runs SET status = 'queued', lease_owner = NULL, lease_expires_at = NULL "
                                  "WHERE seq IN (SELECT seq FROM runs WHERE lease_owner IS NOT NULL AND "
                                  "lease_expires_at <= $1 FOR UPDATE SKIP LOCKED)",
                                  cutoff)
                               .affected());
  return n;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// impl

struct pg_store::impl {
  impl(const std::string& url, const pg_options& o) : connections(url, o.connections) {}

  mutable pool connections;

  /// Statements outside an explicit transaction: reads, and writes of one statement (which
  /// commits on its own before returning).
  template <class F>
  auto once(F&& f) const -> decltype(f(std::declval<connection&>())) {
    try {
      pool::lease l = connections.acquire();
      return f(*l);
    } catch (const pg_failure& e) {
      return storage_error(e);
    }
  }

  /// `f` inside BEGIN … COMMIT; rolled back when it returns an error. Retried on a deadlock or a
  /// serialization failure (the other transaction went first; running again sees its result).
  template <class F>
  auto write(F&& f) -> decltype(f(std::declval<connection&>())) {
    using R = decltype(f(std::declval<connection&>()));
    for (int attempt = 1;; ++attempt) {
      try {
        pool::lease l = connections.acquire();
        connection& c = *l;
        try {
          c.exec_simple("BEGIN");
          R out = f(c);
          if (!out.has_value()) {
            c.rollback();
            return out;
          }
          c.exec_simple("COMMIT");
          return out;
        } catch (...) {
          c.rollback();
          throw;
        }
      } catch (const pg_failure& e) {
        if ((e.sqlstate == "40001" || e.sqlstate == "40P01") && attempt < kWriteAttempts)
          continue;
        return storage_error(e);
      }
    }
  }
};

result<std::unique_ptr<pg_store>> pg_store::open(const std::string& url, pg_options options) {
  if (!is_postgres_url(url))
    return fail(store_errc::invalid_argument, "postgres: expected a postgres:// or postgresql:// connection URL");
  auto s = std::make_unique<impl>(url, options);
  auto migrated = s->write([&](connection& c) -> result<void> {
    c.exec_simple(kSchemaLock);
    c.exec_simple("CREATE TABLE IF NOT EXISTS trigger_store_schema (version integer NOT NULL)");
    int64_t version = 0;
    {
      rows q = c.exec("SELECT version FROM trigger_store_schema");
      if (q.next())
        version = q.i64(0);
      else
        c.exec("INSERT INTO trigger_store_schema (version) VALUES (0)");
    }
    if (version > kSchemaVersion)
      return fail(store_errc::storage, "postgres: schema version " + std::to_string(version) +
                                           " is newer than this build's " + std::to_string(kSchemaVersion));
    for (int64_t v = version; v < kSchemaVersion; ++v)
      c.exec_simple(kMigrations[v]);
    if (version < kSchemaVersion)
      c.exec("UPDATE trigger_store_schema SET version = $1", kSchemaVersion);
    return {};
  });
  if (!migrated)
    return migrated.err();
  return std::unique_ptr<pg_store>(new pg_store(std::move(s)));
}

pg_store::pg_store(std::unique_ptr<impl> i) : impl_(std::move(i)) {}
pg_store::~pg_store() = default;

// ---------------------------------------------------------------------------------------------
// triggers

result<trigger> pg_store::create_trigger(const trigger& t, const std::optional<schedule_state>& s) {
  if (t.id.empty() || t.owner.empty())
    return fail(store_errc::invalid_argument, "trigger: id and owner must not be empty");
  ENACT_TRY_VOID(check_text("trigger.id", t.id, 128));
  ENACT_TRY_VOID(check_text("trigger.owner", t.owner, 256));
  ENACT_TRY_VOID(check_text("trigger.name", t.name));
  ENACT_TRY_VOID(check_text("trigger.action_cid", t.action_cid, 256));
  const std::string config = json::serialize(t.config);
  return impl_->write([&](connection& c) -> result<trigger> {
    const auto inserted =
        c.exec(
             "INSERT INTO triggers (id, owner, type, name, enabled, action_cid, pkp_id, "
             "sealed_usage_key, usage_key_hash, config, created_at, updated_at, max_runs_per_minute, "
             "max_queued_runs) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) "
             "ON CONFLICT (id) DO NOTHING",
             t.id, t.owner, to_string(t.type), t.name, t.enabled, t.action_cid, t.pkp_id, t.sealed_usage_key,
             t.usage_key_hash, config, t.created_at, t.updated_at, t.max_runs_per_minute, t.max_queued_runs)
            .affected();
    if (inserted == 0)
      return fail(store_errc::conflict, "trigger " + t.id + ": exists already");
    if (s)
      c.exec("INSERT INTO schedule_state (trigger_id, next_due, last_planned) VALUES ($1, $2, $3)", t.id, s->next_due,
             s->last_planned);
    return t;
  });
}

result<trigger> pg_store::get_trigger(std::string_view owner, std::string_view id) const {
  return impl_->once([&](connection& c) -> result<trigger> {
    auto t = load_trigger(c, id);
    if (!t || t->owner != owner)
      return no_trigger(id);
    return std::move(*t);
  });
}

result<trigger> pg_store::find_trigger(std::string_view id) const {
  return impl_->once([&](connection& c) -> result<trigger> {
    auto t = load_trigger(c, id);
    if (!t)
      return no_trigger(id);
    return std::move(*t);
  });
}

result<listing<trigger>> pg_store::list_triggers(std::string_view owner, page p) const {
  return impl_->once([&](connection& c) -> result<listing<trigger>> {
    listing<trigger> out;
    {
      rows q = c.exec("SELECT COUNT(*) FROM triggers WHERE owner = $1", owner);
      if (q.next())
        out.total = q.u64(0);
    }
    rows q = c.exec("SELECT " TRIGGER_COLUMNS "FROM triggers t WHERE t.owner = $1 ORDER BY t.seq LIMIT $2 OFFSET $3",
                    owner, p.limit, p.offset);
    while (q.next())
      out.items.push_back(read_trigger(q));
    return out;
  });
}

result<trigger> pg_store::update_trigger(std::string_view owner, std::string_view id, const trigger_patch& patch) {
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
    std::optional<trigger> t;
    {
      rows q = c.exec("SELECT " TRIGGER_COLUMNS "FROM triggers t WHERE t.id = $1 FOR UPDATE", id);
      if (q.next())
        t = read_trigger(q);
    }
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
    c.exec(
        "UPDATE triggers SET name = $1, enabled = $2, config = $3, action_cid = $4, pkp_id = $5, "
        "sealed_usage_key = $6, usage_key_hash = $7, updated_at = $8, max_runs_per_minute = $9, "
        "max_queued_runs = $10 WHERE id = $11",
        t->name, t->enabled, config ? *config : json::serialize(t->config), t->action_cid, t->pkp_id,
        t->sealed_usage_key, t->usage_key_hash, t->updated_at, t->max_runs_per_minute, t->max_queued_runs, t->id);
    if (patch.schedule)
      c.exec(
          "INSERT INTO schedule_state (trigger_id, next_due, last_planned) VALUES ($1, $2, $3) "
          "ON CONFLICT (trigger_id) DO UPDATE SET next_due = excluded.next_due, "
          "last_planned = excluded.last_planned",
          t->id, patch.schedule->next_due, patch.schedule->last_planned);
    return std::move(*t);
  });
}

result<void> pg_store::delete_trigger(std::string_view owner, std::string_view id) {
  return impl_->once([&](connection& c) -> result<void> {
    if (c.exec("DELETE FROM triggers WHERE id = $1 AND owner = $2", id, owner).affected() == 0)
      return no_trigger(id);
    return {};
  });
}

// ---------------------------------------------------------------------------------------------
// runs

result<run> pg_store::enqueue_run(const new_run& r, trigger_type expected) {
  ENACT_TRY_VOID(check_new_run(r));
  const std::string params = json::serialize(r.params);
  return impl_->once([&](connection& c) -> result<run> {
    // One statement, one round trip and one commit: the checks and the insert see one snapshot.
    // (Requests of one trigger at the same instant may each see the others' runs not yet
    // committed, so the limits may be passed by as many runs as arrive at once.)
    const auto inserted = c.exec(
                               "INSERT INTO runs (id, trigger_id, status, params, queued_at, next_attempt_at) "
                               "SELECT $1::text, t.id, 'queued', $3::text, $4::bigint, $4::bigint FROM triggers t "
                               "WHERE t.id = $2::text AND t.type = $5::text AND t.enabled AND " RUNS_THIS_MINUTE(
                                   "$6::bigint") " < t.max_runs_per_minute AND " RUNS_UNFINISHED " < t.max_queued_runs",
                               r.id, r.trigger_id, params, r.queued_at, to_string(expected), minute_of(r.queued_at))
                              .affected();
    if (inserted == 1)
      return queued_run(r);
    rows q = c.exec("SELECT type, enabled FROM triggers WHERE id = $1", r.trigger_id);
    if (!q.next())
      return no_trigger(r.trigger_id);
    if (q.raw(0) != to_string(expected))
      return fail(store_errc::wrong_type,
                  "trigger " + r.trigger_id + ": not a " + std::string(to_string(expected)) + " trigger");
    if (!q.boolean(1))
      return fail(store_errc::disabled, "trigger " + r.trigger_id + ": disabled");
    if (auto over = over_limits(c, r.trigger_id, r.queued_at))
      return *over;
    // Enabled again (or re-created) between the two statements: the caller may try again.
    return fail(store_errc::conflict, "trigger " + r.trigger_id + ": changed while queuing");
  });
}

result<run> pg_store::get_run(std::string_view owner, std::string_view run_id) const {
  return impl_->once([&](connection& c) -> result<run> {
    rows q = c.exec("SELECT " RUN_COLUMNS
                    ", t.owner FROM runs r JOIN triggers t ON t.id = r.trigger_id "
                    "WHERE r.id = $1",
                    run_id);
    if (!q.next() || q.raw(kRunColumns) != owner)
      return no_run(run_id);
    return read_run(q);
  });
}

result<listing<run>> pg_store::list_runs(std::string_view owner, std::string_view trigger_id, page p) const {
  return impl_->once([&](connection& c) -> result<listing<run>> {
    auto t = load_trigger(c, trigger_id);
    if (!t || t->owner != owner)
      return no_trigger(trigger_id);
    listing<run> out;
    {
      rows q = c.exec("SELECT COUNT(*) FROM runs WHERE trigger_id = $1", trigger_id);
      if (q.next())
        out.total = q.u64(0);
    }
    rows q = c.exec("SELECT " RUN_COLUMNS "FROM runs r WHERE r.trigger_id = $1 ORDER BY r.seq DESC LIMIT $2 OFFSET $3",
                    trigger_id, p.limit, p.offset);
    while (q.next())
      out.items.push_back(read_run(q));
    return out;
  });
}

result<std::vector<leased_run>> pg_store::lease_runs(const lease_request& req) {
  if (req.worker_id.empty() || req.max_runs == 0)
    return fail(store_errc::invalid_argument, "lease: worker_id must not be empty, max_runs ≥ 1");
  ENACT_TRY_VOID(check_text("lease.worker_id", req.worker_id, 256));
  // A read first: idle workers polling an empty queue open no transaction and lock nothing.
  auto anything = impl_->once([&](connection& c) -> result<bool> {
    rows q = c.exec(
        "SELECT EXISTS (SELECT 1 FROM runs WHERE lease_owner IS NULL AND status IN "
        "('queued', 'running') AND next_attempt_at <= $1) OR EXISTS (SELECT 1 FROM runs "
        "WHERE lease_owner IS NOT NULL AND lease_expires_at <= $1)",
        req.now);
    return q.next() && q.boolean(0);
  });
  if (!anything)
    return anything.err();
  if (!*anything)
    return std::vector<leased_run>{};
  const time_point until = req.now + req.duration;
  return impl_->write([&](connection& c) -> result<std::vector<leased_run>> {
    expire(c, req.now, req.max_attempts, false);
    // SKIP LOCKED: runs another instance is leasing right now are passed over, not waited for.
    rows q = c.exec(
        "WITH picked AS (SELECT seq FROM runs WHERE lease_owner IS NULL AND status IN "
        "('queued', 'running') AND next_attempt_at <= $1::bigint ORDER BY next_attempt_at, seq "
        "LIMIT $2::bigint FOR UPDATE SKIP LOCKED) "
        "UPDATE runs r SET status = 'running', attempts = r.attempts + 1, lease_owner = $3::text, "
        "lease_expires_at = $4::bigint, started_at = COALESCE(r.started_at, $1::bigint) "
        "FROM picked p, triggers t WHERE r.seq = p.seq AND t.id = r.trigger_id "
        "RETURNING " RUN_COLUMNS ", t.owner, t.action_cid, t.pkp_id, t.sealed_usage_key, r.seq",
        req.now, static_cast<uint64_t>(req.max_runs), req.worker_id, until);
    std::vector<std::pair<int64_t, leased_run>> got;
    while (q.next()) {
      leased_run l;
      l.r = read_run(q);
      l.owner = q.text(kRunColumns);
      l.action_cid = q.text(kRunColumns + 1);
      if (!q.is_null(kRunColumns + 2))
        l.pkp_id = q.fixed<20>(kRunColumns + 2);
      l.sealed_usage_key = q.blob(kRunColumns + 3);
      got.emplace_back(q.i64(kRunColumns + 4), std::move(l));
    }
    // RETURNING has no order: oldest due first, as picked.
    std::sort(got.begin(), got.end(), [](const auto& a, const auto& b) {
      return std::pair(a.second.r.next_attempt_at, a.first) < std::pair(b.second.r.next_attempt_at, b.first);
    });
    std::vector<leased_run> out;
    out.reserve(got.size());
    for (auto& g : got)
      out.push_back(std::move(g.second));
    return out;
  });
}

result<void> pg_store::renew_lease(const lease_ref& l, time_point expires_at) {
  return impl_->once([&](connection& c) -> result<void> {
    if (c.exec("UPDATE runs SET lease_expires_at = $1 WHERE id = $2 AND lease_owner = $3 AND "
               "attempts = $4 AND status = 'running'",
               expires_at, l.run_id, l.worker_id, l.attempt)
            .affected() == 0)
      return lease_lost(l);
    return {};
  });
}

result<void> pg_store::complete_run(const lease_ref& l, const json::value& response, time_point now) {
  const std::string body = json::serialize(response);
  return impl_->once([&](connection& c) -> result<void> {
    if (c.exec("UPDATE runs SET status = 'success', response = $1, error_code = NULL, "
               "error_message = NULL, error_stack = NULL, finished_at = $2, lease_owner = NULL, "
               "lease_expires_at = NULL WHERE id = $3 AND lease_owner = $4 AND attempts = $5 AND "
               "status = 'running'",
               body, now, l.run_id, l.worker_id, l.attempt)
            .affected() == 0)
      return lease_lost(l);
    return {};
  });
}

result<void> pg_store::fail_run(const lease_ref& l, const run_error& e, time_point now) {
  return impl_->once([&](connection& c) -> result<void> {
    if (c.exec("UPDATE runs SET status = 'failed', error_code = $1, error_message = $2, "
               "error_stack = $3, finished_at = $4, lease_owner = NULL, lease_expires_at = NULL "
               "WHERE id = $5 AND lease_owner = $6 AND attempts = $7 AND status = 'running'",
               e.code, e.message, e.stack, now, l.run_id, l.worker_id, l.attempt)
            .affected() == 0)
      return lease_lost(l);
    return {};
  });
}

result<void> pg_store::retry_run_later(const lease_ref& l, const run_error& e, time_point next_attempt_at) {
  return impl_->once([&](connection& c) -> result<void> {
    if (c.exec("UPDATE runs SET error_code = $1, error_message = $2, error_stack = $3, "
               "next_attempt_at = $4, lease_owner = NULL, lease_expires_at = NULL "
               "WHERE id = $5 AND lease_owner = $6 AND attempts = $7 AND status = 'running'",
               e.code, e.message, e.stack, next_attempt_at, l.run_id, l.worker_id, l.attempt)
            .affected() == 0)
      return lease_lost(l);
    return {};
  });
}

result<size_t> pg_store::expire_leases(time_point now, uint32_t max_attempts) {
  return impl_->write([&](connection& c) -> result<size_t> { return expire(c, now, max_attempts, false); });
}

result<size_t> pg_store::release_all_leases(time_point now, uint32_t max_attempts) {
  return impl_->write([&](connection& c) -> result<size_t> { return expire(c, now, max_attempts, true); });
}

result<std::optional<time_point>> pg_store::next_run_wakeup() const {
  return impl_->once([&](connection& c) -> result<std::optional<time_point>> {
    // LEAST ignores NULLs: the earlier of the two, or NULL when both are.
    rows q = c.exec(
        "SELECT LEAST((SELECT MIN(next_attempt_at) FROM runs WHERE lease_owner IS NULL AND status "
        "IN ('queued', 'running')), (SELECT MIN(lease_expires_at) FROM runs WHERE lease_owner IS "
        "NOT NULL))");
    if (!q.next())
      return std::optional<time_point>{};
    return q.opt_time(0);
  });
}

// ---------------------------------------------------------------------------------------------
// schedules

namespace {
std::optional<scheduled_trigger> read_schedule(const rows& q) {
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

result<std::vector<scheduled_trigger>> pg_store::list_schedules() const {
  return impl_->once([&](connection& c) -> result<std::vector<scheduled_trigger>> {
    std::vector<scheduled_trigger> out;
    rows q = c.exec(
        "SELECT t.id, t.config, s.next_due, s.last_planned FROM triggers t LEFT JOIN "
        "schedule_state s ON s.trigger_id = t.id WHERE t.type = 'schedule' AND t.enabled "
        "ORDER BY t.seq");
    while (q.next())
      if (auto s = read_schedule(q))
        out.push_back(std::move(*s));
    return out;
  });
}

result<std::optional<scheduled_trigger>> pg_store::get_schedule(std::string_view trigger_id) const {
  return impl_->once([&](connection& c) -> result<std::optional<scheduled_trigger>> {
    rows q = c.exec(
        "SELECT t.id, t.config, s.next_due, s.last_planned FROM triggers t LEFT JOIN "
        "schedule_state s ON s.trigger_id = t.id WHERE t.id = $1 AND t.type = 'schedule' AND "
        "t.enabled",
        trigger_id);
    if (!q.next())
      return std::optional<scheduled_trigger>{};
    return read_schedule(q);
  });
}

result<std::optional<run>> pg_store::fire_schedule(std::string_view trigger_id, time_point expected_due,
                                                   time_point planned, const new_run& r, time_point next_due) {
  ENACT_TRY_VOID(check_new_run(r));
  const std::string params = json::serialize(r.params);
  return impl_->write([&](connection& c) -> result<std::optional<run>> {
    // The row lock makes a second scheduler (another instance) wait, then see the new due time.
    {
      rows q = c.exec(
          "SELECT s.next_due FROM schedule_state s JOIN triggers t ON t.id = s.trigger_id "
          "WHERE s.trigger_id = $1 AND t.type = 'schedule' AND t.enabled FOR UPDATE OF s",
          trigger_id);
      if (!q.next() || q.time(0) != expected_due)
        return std::optional<run>{};
    }
    run out = insert_or_refuse(c, r, params);
    c.exec("UPDATE schedule_state SET next_due = $1, last_planned = $2 WHERE trigger_id = $3", next_due, planned,
           trigger_id);
    return std::optional<run>(std::move(out));
  });
}

result<void> pg_store::set_schedule_state(std::string_view trigger_id, const schedule_state& s) {
  return impl_->write([&](connection& c) -> result<void> {
    if (c.exec("SELECT 1 FROM triggers WHERE id = $1", trigger_id).count() == 0)
      return no_trigger(trigger_id);
    c.exec(
        "INSERT INTO schedule_state (trigger_id, next_due, last_planned) VALUES ($1, $2, $3) "
        "ON CONFLICT (trigger_id) DO UPDATE SET next_due = excluded.next_due, "
        "last_planned = excluded.last_planned",
        trigger_id, s.next_due, s.last_planned);
    return {};
  });
}

// ---------------------------------------------------------------------------------------------
// chain watcher

result<std::optional<uint64_t>> pg_store::chain_checkpoint(std::string_view trigger_id) const {
  return impl_->once([&](connection& c) -> result<std::optional<uint64_t>> {
    rows q = c.exec("SELECT block FROM chain_checkpoints WHERE trigger_id = $1", trigger_id);
    if (!q.next())
      return std::optional<uint64_t>{};
    return std::optional<uint64_t>(q.u64(0));
  });
}

result<std::vector<run>> pg_store::record_chain_batch(const chain_batch& b) {
  std::vector<std::string> params;
  params.reserve(b.logs.size());
  for (const auto& e : b.logs) {
    if (e.log.trigger_id != b.trigger_id || (!e.fire.id.empty() && e.fire.trigger_id != b.trigger_id))
      return fail(store_errc::invalid_argument, "chain batch: every log and run must name trigger " + b.trigger_id);
    if (!e.fire.id.empty())
      ENACT_TRY_VOID(check_new_run(e.fire));
    params.push_back(json::serialize(e.fire.params));
  }
  return impl_->write([&](connection& c) -> result<std::vector<run>> {
    {
      rows q = c.exec("SELECT type, enabled FROM triggers WHERE id = $1", b.trigger_id);
      if (!q.next())
        return no_trigger(b.trigger_id);
      if (q.raw(0) != to_string(trigger_type::chain_event))
        return fail(store_errc::wrong_type, "trigger " + b.trigger_id + ": not a chain-event trigger");
      if (!q.boolean(1))
        return fail(store_errc::disabled, "trigger " + b.trigger_id + ": disabled");
    }
    std::vector<run> out;
    for (size_t i = 0; i < b.logs.size(); ++i) {
      const auto& e = b.logs[i];
      const std::optional<std::string> run_id =
          e.fire.id.empty() ? std::nullopt : std::optional<std::string>(e.fire.id);
      // A second watcher inserting the same log waits for this one, then inserts nothing.
      const auto fresh = c.exec(
                              "INSERT INTO chain_logs (trigger_id, block_hash, log_index, block_number, "
                              "removed, run_id, seen_at) VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING",
                              b.trigger_id, e.log.block_hash, e.log.log_index, e.log.block_number, e.log.removed,
                              run_id, e.log.seen_at)
                             .affected();
      if (fresh == 1 && run_id)
        out.push_back(insert_or_refuse(c, e.fire, params[i]));
    }
    if (b.checkpoint_block)
      c.exec(
          "INSERT INTO chain_checkpoints (trigger_id, block) VALUES ($1, $2) "
          "ON CONFLICT (trigger_id) DO UPDATE SET block = excluded.block",
          b.trigger_id, *b.checkpoint_block);
    return out;
  });
}

result<size_t> pg_store::mark_logs_removed(std::string_view trigger_id, const hash256& block_hash) {
  return impl_->once([&](connection& c) -> result<size_t> {
    return static_cast<size_t>(
        c.exec("UPDATE chain_logs SET removed = true WHERE trigger_id = $1 AND block_hash = $2 AND "
               "NOT removed",
               trigger_id, block_hash)
            .affected());
  });
}

result<std::optional<seen_log>> pg_store::find_seen_log(std::string_view trigger_id, const hash256& block_hash,
                                                        uint64_t log_index) const {
  return impl_->once([&](connection& c) -> result<std::optional<seen_log>> {
    rows q = c.exec(
        "SELECT block_number, removed, run_id, seen_at FROM chain_logs WHERE trigger_id = $1 "
        "AND block_hash = $2 AND log_index = $3",
        trigger_id, block_hash, log_index);
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

result<std::vector<trigger>> pg_store::list_chain_triggers() const {
  return impl_->once([&](connection& c) -> result<std::vector<trigger>> {
    rows q = c.exec("SELECT " TRIGGER_COLUMNS
                    "FROM triggers t WHERE t.type = $1 AND t.enabled "
                    "ORDER BY t.seq",
                    to_string(trigger_type::chain_event));
    std::vector<trigger> out;
    while (q.next())
      out.push_back(read_trigger(q));
    return out;
  });
}

result<std::vector<seen_log>> pg_store::list_seen_logs(std::string_view trigger_id, uint64_t from_block) const {
  return impl_->once([&](connection& c) -> result<std::vector<seen_log>> {
    rows q = c.exec(
        "SELECT block_hash, log_index, block_number, run_id, seen_at FROM chain_logs "
        "WHERE trigger_id = $1 AND block_number >= $2 AND NOT removed "
        "ORDER BY block_number, log_index",
        trigger_id, from_block);
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

result<void> pg_store::insert_token(const token_record& t) {
  ENACT_TRY_VOID(check_text("token.user_id", t.user_id, 256));
  ENACT_TRY_VOID(check_text("token.client_name", t.client_name, 256));
  if (t.user_id.empty())
    return fail(store_errc::invalid_argument, "token.user_id: must not be empty");
  return impl_->once([&](connection& c) -> result<void> {
    if (c.exec("INSERT INTO tokens (hash, user_id, client_name, created_at, expires_at, revoked) "
               "VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING",
               t.hash, t.user_id, t.client_name, t.created_at, t.expires_at, t.revoked)
            .affected() == 0)
      return fail(store_errc::conflict, "token: a token with this hash exists");
    return {};
  });
}

result<token_record> pg_store::find_token(const hash256& hash) const {
  return impl_->once([&](connection& c) -> result<token_record> {
    rows q =
        c.exec("SELECT hash, user_id, client_name, created_at, expires_at, revoked FROM tokens WHERE hash = $1", hash);
    if (!q.next())
      return fail(store_errc::not_found, "token: unknown");
    return read_token(q);
  });
}

result<void> pg_store::revoke_token(const hash256& hash, std::string_view user_id) {
  return impl_->once([&](connection& c) -> result<void> {
    if (c.exec("UPDATE tokens SET revoked = true WHERE hash = $1 AND user_id = $2", hash, user_id).affected() == 0)
      return fail(store_errc::not_found, "token: unknown");
    return {};
  });
}

result<std::vector<token_record>> pg_store::list_tokens(std::string_view user_id) const {
  return impl_->once([&](connection& c) -> result<std::vector<token_record>> {
    std::vector<token_record> out;
    rows q = c.exec(
        "SELECT hash, user_id, client_name, created_at, expires_at, revoked FROM tokens "
        "WHERE user_id = $1 ORDER BY created_at DESC, hash",
        user_id);
    while (q.next())
      out.push_back(read_token(q));
    return out;
  });
}

#define APPROVAL_SELECT \
  "SELECT challenge, client_name, status, user_id, token_hash, created_at, expires_at FROM approvals "

result<void> pg_store::create_approval(const approval& a) {
  if (a.challenge.empty())
    return fail(store_errc::invalid_argument, "approval.challenge: must not be empty");
  ENACT_TRY_VOID(check_text("approval.challenge", a.challenge, 128));
  ENACT_TRY_VOID(check_text("approval.client_name", a.client_name, 256));
  return impl_->once([&](connection& c) -> result<void> {
    if (c.exec("INSERT INTO approvals (challenge, client_name, status, user_id, token_hash, "
               "created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING",
               a.challenge, a.client_name, to_string(a.status), a.user_id, a.token_hash, a.created_at, a.expires_at)
            .affected() == 0)
      return fail(store_errc::conflict, "approval: this challenge exists already");
    return {};
  });
}

result<approval> pg_store::get_approval(std::string_view challenge) const {
  return impl_->once([&](connection& c) -> result<approval> {
    rows q = c.exec(APPROVAL_SELECT "WHERE challenge = $1", challenge);
    if (!q.next())
      return fail(store_errc::not_found, "approval: unknown challenge");
    return read_approval(q);
  });
}

result<approval> pg_store::decide_approval(std::string_view challenge, std::string_view user_id, bool approve,
                                           time_point now) {
  if (user_id.empty())
    return fail(store_errc::invalid_argument, "approval: user_id must not be empty");
  return impl_->write([&](connection& c) -> result<approval> {
    const bool changed = c.exec(
                              "UPDATE approvals SET status = $1, user_id = $2 WHERE challenge = $3 AND status = "
                              "'pending' AND expires_at > $4",
                              approve ? "approved" : "denied", user_id, challenge, now)
                             .affected() == 1;
    rows q = c.exec(APPROVAL_SELECT "WHERE challenge = $1", challenge);
    if (!q.next())
      return fail(store_errc::not_found, "approval: unknown challenge");
    if (!changed)
      return fail(store_errc::conflict, "approval: decided already, or expired");
    return read_approval(q);
  });
}

result<token_record> pg_store::claim_approval(std::string_view challenge, const token_record& t, time_point now) {
  return impl_->write([&](connection& c) -> result<token_record> {
    std::optional<approval> a;
    {
      // Locked: two claims of one approval run one after the other; the second sees the hash.
      rows q = c.exec(APPROVAL_SELECT "WHERE challenge = $1 FOR UPDATE", challenge);
      if (!q.next())
        return fail(store_errc::not_found, "approval: unknown challenge");
      a = read_approval(q);
    }
    if (a->status != approval_status::approved || a->token_hash || a->expires_at <= now)
      return fail(store_errc::conflict, "approval: not approved, claimed already, or expired");
    if (a->user_id != t.user_id)
      return fail(store_errc::invalid_argument, "approval: the token must belong to the approver");
    if (c.exec("INSERT INTO tokens (hash, user_id, client_name, created_at, expires_at, revoked) "
               "VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING",
               t.hash, t.user_id, t.client_name, t.created_at, t.expires_at, t.revoked)
            .affected() == 0)
      return fail(store_errc::conflict, "token: a token with this hash exists");
    c.exec("UPDATE approvals SET token_hash = $1 WHERE challenge = $2", t.hash, challenge);
    return t;
  });
}

// ---------------------------------------------------------------------------------------------
// browser sessions

result<void> pg_store::create_session(const browser_session& s) {
  ENACT_TRY_VOID(check_text("session.user_id", s.user_id, 256));
  ENACT_TRY_VOID(check_text("session.nonce", s.nonce, 128));
  return impl_->write([&](connection& c) -> result<void> {
    c.exec("DELETE FROM browser_sessions WHERE expires_at <= $1", s.created_at);
    if (c.exec("INSERT INTO browser_sessions (hash, user_id, nonce, created_at, expires_at) "
               "VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING",
               s.hash, s.user_id, s.nonce, s.created_at, s.expires_at)
            .affected() == 0)
      return fail(store_errc::conflict, "session: a session with this hash exists");
    return {};
  });
}

result<browser_session> pg_store::find_session(const hash256& hash) const {
  return impl_->once([&](connection& c) -> result<browser_session> {
    rows q = c.exec("SELECT hash, user_id, nonce, created_at, expires_at FROM browser_sessions WHERE hash = $1", hash);
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

result<void> pg_store::sign_in_session(const hash256& pre, std::string_view nonce, const browser_session& signed_in,
                                       time_point now) {
  if (nonce.empty())
    return fail(store_errc::not_found, "session: no sign-in nonce");
  ENACT_TRY_VOID(check_text("session.user_id", signed_in.user_id, 256));
  ENACT_TRY_VOID(check_text("session.nonce", signed_in.nonce, 128));
  return impl_->write([&](connection& c) -> result<void> {
    // The DELETE is the single use: of two sign-ins with one nonce, the second deletes nothing.
    if (c.exec("DELETE FROM browser_sessions WHERE hash = $1 AND nonce = $2 AND expires_at > $3", pre, nonce, now)
            .affected() == 0)
      return fail(store_errc::not_found, "session: unknown or expired, or its nonce was used or differs");
    if (c.exec("INSERT INTO browser_sessions (hash, user_id, nonce, created_at, expires_at) "
               "VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING",
               signed_in.hash, signed_in.user_id, signed_in.nonce, signed_in.created_at, signed_in.expires_at)
            .affected() == 0)
      return fail(store_errc::conflict, "session: a session with this hash exists");
    return {};
  });
}

result<void> pg_store::end_session(const hash256& hash) {
  return impl_->write([&](connection& c) -> result<void> {
    if (c.exec("DELETE FROM browser_sessions WHERE hash = $1", hash).affected() == 0)
      return fail(store_errc::not_found, "session: unknown");
    return {};
  });
}

}  // namespace enact::triggers
