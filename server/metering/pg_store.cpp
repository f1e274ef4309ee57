// SPDX-License-Identifier: Apache-2.0
// The PostgreSQL metering store (pg_store.hpp): the schema, a session (session.hpp) on a pooled
// connection of the storage layer (storage/pg.hpp), and the committer (group_commit.hpp) that runs the writes in
// batches. The run path's reserve and settle are one call each of the store's functions (pg_functions.hpp).
#include "metering/pg_store.hpp"

#include <algorithm>
#include <exception>
#include <functional>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>
#include <utility>

#include "enact/codec/hex.hpp"
#include "metering/group_commit.hpp"
#include "metering/pg_functions.hpp"
#include "metering/session.hpp"
#include "storage/pg.hpp"

namespace enact::metering {
namespace {

namespace pgs = storage::pg;

// Serializes schema creation between servers opening at once (pg_advisory_xact_lock key).
constexpr const char* kSchemaLock = "SELECT pg_advisory_xact_lock(6872612823553061901)";
// The batch lock of the servers sharing the database (group commit): a batch locks the rows of
// several accounts in arrival order, and two batches taking them in different orders would
// deadlock (and wait out PostgreSQL's deadlock_timeout before one is aborted). A batch of any
// writes takes it alone (below), so those run one at a time; a batch of function calls only, whose
// accounts are known before it is sent, takes it shared and then its accounts' own locks in one
// order (metering_batch_lock_v2, pg_functions.cpp), so such batches wait only for batches that
// share an account. Single writes take none: each locks one account row (a payment's credit: the
// payment's row, then the account's), so they do not deadlock with each other, and with a batch
// only over one payment credited on two servers at once.
const std::string kBatchLock = "SELECT pg_advisory_xact_lock(" + std::to_string(pg::kBatchLockKey) + ")";

// The schema versions in PostgreSQL's spelling (session.hpp); metering_schema.version counts them.
std::span<const char* const> migrations() {
  static const std::vector<std::string> m = sql::schema("bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY");
  static const std::vector<const char*> steps = [] {
    std::vector<const char*> out;
    for (const std::string& step : m)
      out.push_back(step.c_str());
    return out;
  }();
  return steps;
}

/// `?N` placeholders as PostgreSQL's `$N`, and FOR UPDATE on a locking read.
std::string dialect(const sql::statement& s) {
  std::string out(s.text);
  for (char& ch : out)
    if (ch == '?')
      ch = '$';
  if (s.lock)
    out += " FOR UPDATE";
  return out;
}

/// A statement's answer as the operations read it (session.hpp): every column as text.
sql::rows rows_of(pgs::rows r) {
  sql::rows out;
  out.affected = r.affected();
  const int columns = r.columns();
  out.data.reserve(static_cast<size_t>(r.count()));
  while (r.next()) {
    auto& o = out.data.emplace_back();
    for (int f = 0; f < columns; ++f)
      o.push_back(r.is_null(f) ? std::nullopt : std::optional<std::string>(r.text(f)));
  }
  return out;
}

class pg_session final : public sql::session {
 public:
  /// `autocommit`: `c` is in no transaction, every statement commits on its own.
  explicit pg_session(pgs::connection& c, bool autocommit = false) : c_(c), autocommit_(autocommit) {}

  [[nodiscard]] bool autocommit() const noexcept { return autocommit_; }

  sql::rows exec(const sql::statement& s, const std::vector<sql::param>& params) override {
    return rows_of(c_.exec_params(dialect(s), pgs::args::of(params)));
  }

 private:
  pgs::connection& c_;
  bool autocommit_;
};

/// What a write run outside a transaction throws when it needs one (a reserve that waited for the
/// account's row, whose lock ended with the statement): it runs again in a transaction.
struct needs_transaction : std::runtime_error {
  needs_transaction() : std::runtime_error("the write needs a transaction") {}
};

/// A write that is one call of a store function (pg_functions.hpp): the call, its parameters,
/// made when it runs (the clock read then), and what the write makes of the answer. Run as a
/// body on a session, it sends the call and reads the answer at once; in a pipelined batch
/// (storage::pg::connection::pipeline) the committer sends the batch's calls together and gives each its answer
/// after the commit.
struct function_call {
  enum class answer { kept, refused, waited };

  const sql::statement* call = nullptr;
  const std::string* text = nullptr;  // `call` in PostgreSQL's spelling, for the pipeline
  std::string account;                // the account whose row it locks (hex), for the batch lock
  std::function<std::vector<sql::param>()> params;
  std::function<answer(const sql::rows&)> read;

  bool operator()(sql::session& session) const {
    auto& s = static_cast<pg_session&>(session);
    answer a = read(s.exec(*call, params()));
    if (a == answer::waited) {
      if (s.autocommit())
        throw needs_transaction();
      // The row is this transaction's now: the second call does not wait, and reads the clock
      // after the wait (the transaction's mark of the wait cleared first, pg_functions.hpp).
      (void)s.exec(pg::kClearWaited, {});
      a = read(s.exec(*call, params()));
      if (a == answer::waited)
        throw std::runtime_error("the account's row was not locked after the wait for it");
    }
    return a == answer::kept;
  }
};

const std::string& reserve_text() {
  static const std::string t = dialect(pg::kReserveCall);
  return t;
}
const std::string& settle_text() {
  static const std::string t = dialect(pg::kSettleCall);
  return t;
}
const std::string& batch_lock_text() {
  // Through the function, which marks the batch as having waited when it did: the calls' clocks
  // were read before the batch was sent (pg_functions.hpp kClearWaited).
  static const std::string t = dialect(pg::kBatchLockCall);
  return t;
}

/// The batch's accounts as a PostgreSQL array literal, for metering_batch_lock_v2 (hex digits need
/// no quoting; the function sorts and deduplicates them).
std::string batch_accounts(std::span<sql::queued_write* const> batch) {
  std::string out = "{";
  for (const sql::queued_write* q : batch) {
    if (out.size() > 1)
      out += ',';
    out += q->body->target<function_call>()->account;
  }
  return out + "}";
}

// A transaction of holds only (queued_write::durable false) commits without waiting for its WAL
// to reach the disk (group_commit.hpp; docs/architecture.md §4 "Holds are not waited to disk"):
// PostgreSQL's WAL keeps commits in order, so the next durable commit flushes it with everything
// before it, and a crash loses at most the last holds, which is releasing them.
constexpr const char* kHoldCommit = "SET LOCAL synchronous_commit = off";
const std::string& hold_commit_text() {
  static const std::string t = "SELECT set_config('synchronous_commit', 'off', true)";
  return t;
}

/// Whether PostgreSQL aborted the whole transaction in a way running it again may cure.
bool retryable(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const pgs::failure& f) {
    return f.retryable();
  } catch (...) {
    return false;
  }
}

class pg_store final : public sql::session_store {
 public:
  pg_store(const std::string& url, pg_options o)
      : session_store(std::move(o.now)),
        pool_(url, {.size = o.pool_size, .setup = pgs::lock_timeout_statement(o.lock_timeout_seconds)}),
        pipeline_(url, {.size = 1, .setup = pgs::lock_timeout_statement(o.lock_timeout_seconds)}),
        committer_([this](std::span<sql::queued_write* const> batch) { run_batch(batch); }) {}

  /// The schema's versions, then this release's functions (pg_functions.hpp), created under the
  /// same advisory lock so that servers opening at once do not replace them under each other.
  void migrate() {
    pgs::migrate(pool_, kSchemaLock, "metering_schema", migrations());
    pgs::transact(pool_, [](pgs::connection& c) {
      c.exec_simple(kSchemaLock);
      c.exec_simple(pg::function_definitions());
      return true;
    });
  }

  /// operations::reserve as one call of metering_reserve_vN: one round trip, no savepoint.
  [[nodiscard]] result<reservation> reserve(const reserve_request& q) override {
    if (!pg::plain_request(q))
      return session_store::reserve(q);  // refused by operations::reserve's checks before any statement
    const std::string id = sql::operations::new_reservation_id();
    std::optional<result<reservation>> out;
    // A hold (session_store::transact_hold): not waited to disk.
    return write_one(/*durable=*/false,
                     function_call{.call = &pg::kReserveCall,
                                   .text = &reserve_text(),
                                   .account = codec::hex::encode(q.account),
                                   // The clock read when the write runs, and again after a wait for the account's row
                                   // (function_call), as operations::reserve reads it after the lock.
                                   .params =
                                       [&] {
                                         return std::vector<sql::param>{codec::hex::encode(q.account),
                                                                        codec::hex::encode(q.key),
                                                                        static_cast<int64_t>(q.amount),
                                                                        q.run_id,
                                                                        id,
                                                                        clock()(),
                                                                        static_cast<int64_t>(q.ttl.count()),
                                                                        std::to_string(q.key_cap)};
                                       },
                                   .read =
                                       [&](const sql::rows& r) {
                                         out.reset();
                                         switch (pg::decode_reserve(r, q, id, out)) {
                                           case pg::reserve_outcome::reserved:
                                             return function_call::answer::kept;
                                           case pg::reserve_outcome::waited:
                                             return function_call::answer::waited;
                                           case pg::reserve_outcome::refused:
                                             break;
                                         }
                                         return function_call::answer::refused;
                                       }},
                     out);
  }

  /// operations::settle as one call of metering_settle_vN.
  [[nodiscard]] result<uint64_t> settle(const account_hash& a, std::string_view id, uint64_t amount) override {
    std::optional<result<uint64_t>> out;
    return write_one(/*durable=*/true,
                     function_call{.call = &pg::kSettleCall,
                                   .text = &settle_text(),
                                   .account = codec::hex::encode(a),
                                   .params =
                                       [&] {
                                         return std::vector<sql::param>{codec::hex::encode(a), std::string(id),
                                                                        std::to_string(amount), clock()()};
                                       },
                                   .read =
                                       [&](const sql::rows& r) {
                                         out.emplace(pg::decode_settle(r, id, amount));
                                         return out->has_value() ? function_call::answer::kept
                                                                 : function_call::answer::refused;
                                       }},
                     out);
  }

 private:
  /// A write that is one call of a store function, through the committer; `out` is what it
  /// answered. Failures are storage errors, as session_store's.
  template <class T>
  result<T> write_one(bool durable, function_call call, std::optional<result<T>>& out) {
    const std::function<bool(sql::session&)> body = std::move(call);
    try {
      committer_.submit(body, /*single_statement=*/true, durable);
    } catch (const std::exception& e) {
      return fail(metering_errc::storage, std::string("metering store: ") + e.what());
    }
    return std::move(*out);
  }

  /// A write through the committer; a read in its own transaction.
  void transact(bool write, const std::function<bool(sql::session&)>& body) const override {
    if (write)
      committer_.submit(body);
    else
      transact_alone(body);
  }

  /// Holds: answered once committed, before the commit reached the disk (kHoldCommit).
  void transact_hold(const std::function<bool(sql::session&)>& body) const override {
    committer_.submit(body, false, /*durable=*/false);
  }

  /// A single statement (use_once): alone, its own implicit transaction, one round trip
  /// (autocommit); in a batch, without a savepoint.
  void transact_single(const std::function<bool(sql::session&)>& body) const override {
    committer_.submit(body, /*single_statement=*/true);
  }

  /// `body` in one READ COMMITTED transaction on a pooled connection, run again (a few times)
  /// when PostgreSQL aborts it as a deadlock or a serialization failure (storage::pg::transact); its
  /// commit not waited to disk unless `durable`.
  void transact_alone(const std::function<bool(sql::session&)>& body, bool durable = true) const {
    pgs::transact(pool_, [&](pgs::connection& c) {
      if (!durable)
        c.exec_simple(kHoldCommit);
      pg_session s(c);
      return body(s);
    });
  }

  /// A single-statement write (queued_write::single_statement) as its own implicit transaction:
  /// one round trip. Run again in a transaction (storage::pg::transact, with its retries) when it
  /// needs one or PostgreSQL aborted it as a deadlock or a serialization failure.
  void autocommit(const std::function<bool(sql::session&)>& body, bool durable) const {
    try {
      auto lease = pool_.acquire();
      pg_session s(*lease, /*autocommit=*/true);
      (void)body(s);  // a refusal wrote nothing
      return;
    } catch (const needs_transaction&) {
    } catch (...) {
      if (!retryable(std::current_exception()))
        throw;
    }
    transact_alone(body, durable);
  }

  /// A write without a batch: a single statement on its own, any other in its own transaction.
  void run_alone(sql::queued_write& q) const {
    try {
      if (q.single_statement)
        autocommit(*q.body, q.durable);
      else
        transact_alone(*q.body, q.durable);
    } catch (...) {
      q.error = std::current_exception();
    }
  }

  /// A batch in one READ COMMITTED transaction and one commit, under kBatchLock: a single-statement
  /// write as it is (it changed nothing if it refused), any other in its savepoint. The batches
  /// are all durable or all holds (group_commit.hpp): a batch of holds commits with kHoldCommit. A batch
  /// PostgreSQL still aborts as a deadlock or a serialization failure (a single write of another
  /// server holding a payment's row the batch needs, while it waits for an account row the batch
  /// holds), or whose transaction a single-statement write's failure lost, runs again write by
  /// write, each alone with its retries.
  void run_batch(std::span<sql::queued_write* const> batch) const {
    if (std::all_of(batch.begin(), batch.end(), [](const sql::queued_write* q) {
          return q->single_statement && q->body->target<function_call>() != nullptr;
        })) {
      run_pipelined(batch);
      return;
    }
    if (batch.size() == 1) {
      run_alone(*batch.front());
      return;
    }
    try {
      auto lease = pool_.acquire();
      pgs::connection& c = *lease;
      try {
        c.exec_simple(batch.front()->durable ? "BEGIN; " + kBatchLock
                                             : std::string("BEGIN; ") + kHoldCommit + "; " + kBatchLock);
        pg_session s(c);
        bool lost = false;  // a single statement threw: its error may have aborted the transaction
        // Savepoints in plain SQL, so that a refused ROLLBACK TO throws (and fails the batch)
        // rather than leaving an aborted transaction whose COMMIT would roll back silently. A
        // kept savepoint is released together with the next one's start (one round trip), or
        // by the COMMIT.
        bool release_pending = false;
        for (sql::queued_write* q : batch) {
          if (q->single_statement) {
            try {
              (void)(*q->body)(s);
            } catch (...) {
              lost = true;
              break;
            }
            continue;
          }
          sql::run_in_savepoint(
              *q,
              [&]() -> sql::session& {
                c.exec_simple(release_pending ? "RELEASE SAVEPOINT metering_write; SAVEPOINT metering_write"
                                              : "SAVEPOINT metering_write");
                release_pending = false;
                return s;
              },
              [&] { release_pending = true; },
              [&] { c.exec_simple("ROLLBACK TO SAVEPOINT metering_write; RELEASE SAVEPOINT metering_write"); },
              retryable);
        }
        if (!lost) {
          c.exec_simple("COMMIT");
          return;
        }
        c.rollback();
      } catch (...) {
        c.rollback();
        throw;
      }
    } catch (...) {
      if (!retryable(std::current_exception()))
        throw;
    }
    for (sql::queued_write* q : batch) {
      q->error = nullptr;
      run_alone(*q);
    }
  }

  /// A batch of function calls only: sent together under metering_batch_lock_v2 (kBatchLock
  /// shared, then its accounts' locks), one implicit transaction, one round trip
  /// (storage::pg::connection::pipeline); each call's answer read after the commit. A reserve that
  /// waited for its account's row (another server's transaction held it) wrote nothing, and its
  /// lock ended with the batch: it runs again alone, its clock read then. A batch PostgreSQL
  /// refused whole (a call's error, a deadlock) runs again write by write, a lone call only after
  /// a deadlock or a serialization failure (any other error is its answer); a connection that
  /// failed fails the batch (whether it committed is unknown).
  void run_pipelined(std::span<sql::queued_write* const> batch) const {
    std::vector<pgs::pipelined> statements;
    statements.reserve(batch.size() + 1);
    if (!batch.front()->durable)
      statements.push_back({&hold_commit_text(), pgs::args{}});
    if (batch.size() > 1)  // a lone call locks one account: no batch lock
      statements.push_back({&batch_lock_text(), pgs::args{batch_accounts(batch)}});
    const size_t first = statements.size();
    for (const sql::queued_write* q : batch) {
      const auto* call = q->body->target<function_call>();
      statements.push_back({call->text, pgs::args::of(call->params())});
    }
    pgs::pipeline_outcome out = run_pipeline(statements);
    if (!out.committed && batch.size() == 1 && !out.retryable) {
      // Its own error (a lock timeout, a constraint): alone again it would only fail again.
      batch.front()->error = std::make_exception_ptr(std::runtime_error(out.error));
      return;
    }
    for (size_t i = 0; i < batch.size(); ++i) {
      sql::queued_write& q = *batch[i];
      if (!out.committed) {
        run_alone(q);
        continue;
      }
      try {
        if (q.body->target<function_call>()->read(rows_of(std::move(out.answers[first + i]))) ==
            function_call::answer::waited)
          run_alone(q);
      } catch (...) {
        q.error = std::current_exception();
      }
    }
  }

  /// `batch` pipelined on the committer's own connection (connection::pipeline). A connection the
  /// server closed since the last batch is seen before the batch is sent (an idle session has
  /// nothing to read: anything there ends it), so nothing is lost by starting over; one that
  /// fails during the batch is closed, and whether the batch committed is then unknown.
  pgs::pipeline_outcome run_pipeline(const std::vector<pgs::pipelined>& batch) const {
    for (bool fresh = false;; fresh = true) {
      auto lease = pipeline_.acquire();
      if (!fresh && lease->readable()) {
        lease.discard();
        continue;
      }
      try {
        return lease->pipeline(batch);
      } catch (...) {
        lease.discard();
        throw;
      }
    }
  }

  mutable pgs::pool pool_;
  mutable pgs::pool pipeline_;           // the committer's one connection: one batch at a time
  mutable sql::group_commit committer_;  // after pool_: stopped before the connections close
};

}  // namespace

bool is_postgres_url(std::string_view s) noexcept {
  return s.starts_with("postgres://") || s.starts_with("postgresql://");
}

result<std::unique_ptr<store>> open_postgres(const std::string& url, pg_options options) {
  try {
    auto s = std::make_unique<pg_store>(url, std::move(options));
    s->migrate();
    return std::unique_ptr<store>(std::move(s));
  } catch (const std::exception& e) {
    return fail(metering_errc::storage, std::string("metering store: ") + e.what());
  }
}

}  // namespace enact::metering
