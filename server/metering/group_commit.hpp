// SPDX-License-Identifier: Apache-2.0
// Group commit for the metering store's writes (docs/architecture.md §4 "Group commit"): every
// write (a hold, a settle, a release, a payment's credit, …) is queued, and the writes queued so
// far run, in arrival order, in one transaction and one commit, then each caller is answered.
// Holds (reservations made or released) run first, in a transaction of their own whose commit is
// not waited to disk (queued_write::durable); every other write runs in the durable one. No thread
// of its own runs the batches: the first caller that finds no batch in progress leads, running the
// queue's writes (its own among them) on its own thread, while the callers that arrive meanwhile
// wait and one of them leads the next batch. A lone write therefore commits at once on its
// caller's thread, with no hand-off to another thread and no timer, and writes batch only because
// they arrive while a commit is in progress. Each write runs in its own savepoint, so one that
// fails (insufficient credits, a spending cap, an unknown reservation, an exception) is rolled
// back alone and answers its own error while its neighbours commit; a write queued after another
// in the same transaction sees the other's effect. A durable write is answered only after the
// commit that holds it returned, so its durability is the backend's (SQLite synchronous FULL,
// PostgreSQL synchronous_commit): an answered charge, credit or kept answer is on disk.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <span>

#include "metering/session.hpp"

namespace enact::metering::sql {

/// One write waiting for its batch: the caller's body (session_store::transact's: commit its
/// savepoint when it returns true, roll it back when false) and what came of it.
struct queued_write {
  const std::function<bool(session&)>* body = nullptr;
  /// The body runs one statement that changes nothing when it refuses (returns false) and cannot
  /// fail halfway: a backend may run it without a savepoint. If it throws anyway, the backend
  /// fails the transaction and runs the batch's writes again one by one.
  bool single_statement = false;
  /// Whether its commit must reach the disk before it is answered. A write that is not (a hold:
  /// session_store::transact_hold) runs with the other such writes of its batch, ahead of the
  /// durable ones, in a transaction whose commit is not waited to disk, and is answered then.
  bool durable = true;
  std::exception_ptr error;  // what the body threw, or why its batch did not commit
  bool done = false;
  /// Its caller waits here (under the committer's mutex) to be answered or to lead: each caller
  /// is woken once, by name, never with every other waiter.
  std::condition_variable wake;
};

/// How a backend runs a batch: every write of `batch`, in order, in one transaction, each in its
/// own savepoint (run_in_savepoint), then one commit, waited to disk unless no write of the batch
/// is `durable` (the writes of a batch are all durable or all not). It sets a write's `error` when its body
/// threw; it throws when the transaction as a whole failed (nothing of the batch is committed).
using batch_runner = std::function<void(std::span<queued_write* const> batch)>;

/// The savepoint discipline every backend shares: runs `w`'s body between `open()` and, when the
/// body returned true, `keep()`; otherwise (false, or an exception kept in `w.error`) `undo()`.
/// `undo()` failing throws (the enclosing transaction is lost: the whole batch fails). A
/// `must_abort` exception (the database aborted the whole transaction, e.g. a deadlock) is not
/// kept but rethrown, for the backend to run the batch again.
template <class Open, class Keep, class Undo, class MustAbort>
void run_in_savepoint(queued_write& w, Open&& open, Keep&& keep, Undo&& undo, MustAbort&& must_abort) {
  session& s = open();
  bool kept = false;
  try {
    kept = (*w.body)(s);
  } catch (...) {
    if (must_abort(std::current_exception()))
      throw;
    w.error = std::current_exception();
  }
  if (kept)
    keep();
  else
    undo();
}

struct group_commit_options {
  /// Writes one transaction holds at most (the rest wait for the next commit).
  size_t max_batch = 64;
};

/// What the committer did, for tests and measures.
struct group_commit_stats {
  uint64_t batches = 0;  // commits (or failed transactions)
  uint64_t writes = 0;   // writes answered by them
  size_t largest = 0;    // the most writes one batch held
  size_t pending = 0;    // writes queued now, not yet in a batch
};

/// One per store (docs/architecture.md §4 "Group commit").
class group_commit {
 public:
  explicit group_commit(batch_runner run, group_commit_options options = {});
  /// shutdown().
  ~group_commit();
  group_commit(const group_commit&) = delete;
  group_commit& operator=(const group_commit&) = delete;

  /// Queues `body` and waits until the batch holding it committed, leading batches itself (on the
  /// calling thread) whenever none is in progress. Rethrows what the body threw, or what failed
  /// the batch; throws std::runtime_error once the committer is shut down.
  void submit(const std::function<bool(session&)>& body, bool single_statement = false, bool durable = true);

  /// Stops the committer: the batch in progress finishes (commits or fails, and is answered);
  /// writes queued behind it are answered with an error, never run; later submits fail at once.
  /// Returns when no batch is in progress any more; safe to call twice.
  void shutdown();

  [[nodiscard]] group_commit_stats stats() const;

 private:
  /// Runs one batch from the queue's front on the calling thread (`lock` held on entry and exit,
  /// released while the batch runs).
  void lead(std::unique_lock<std::mutex>& lock);
  /// Runs `part` of the batch as one transaction (lock released meanwhile) and marks its writes
  /// answered (the caller wakes them).
  void commit(std::span<queued_write* const> part, std::unique_lock<std::mutex>& lock);

  batch_runner run_;
  size_t max_batch_;
  mutable std::mutex mu_;
  std::condition_variable idle_;  // shutdown waits for the batch in progress
  std::deque<queued_write*> queue_;
  bool leading_ = false;  // a caller runs a batch now
  bool stopping_ = false;
  group_commit_stats stats_;
};

}  // namespace enact::metering::sql
