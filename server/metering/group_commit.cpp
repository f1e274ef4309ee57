// SPDX-License-Identifier: Apache-2.0
// The metering store's group commit (group_commit.hpp): callers lead the batches in turn.
#include "metering/group_commit.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>
#include <vector>

namespace enact::metering::sql {
namespace {

std::exception_ptr closed() {
  return std::make_exception_ptr(std::runtime_error("the store is closed; the write was not run"));
}

}  // namespace

group_commit::group_commit(batch_runner run, group_commit_options options)
    : run_(std::move(run)), max_batch_(std::max<size_t>(1, options.max_batch)) {}

group_commit::~group_commit() { shutdown(); }

void group_commit::submit(const std::function<bool(session&)>& body, bool single_statement, bool durable) {
  queued_write w;
  w.body = &body;
  w.single_statement = single_statement;
  w.durable = durable;
  {
    std::unique_lock lock(mu_);
    if (stopping_)
      std::rethrow_exception(closed());
    queue_.push_back(&w);
    while (!w.done) {
      if (!leading_)
        lead(lock);  // the queue's front first: this write is in this batch or a later one
      else
        w.wake.wait(lock);
    }
  }
  if (w.error)
    std::rethrow_exception(w.error);
}

void group_commit::lead(std::unique_lock<std::mutex>& lock) {
  // Allocated before the lead is taken: nothing below throws until the batch is answered (a
  // failure of the batch is kept in its writes), so the lead is never left taken by a caller
  // that unwound, with every later caller waiting for it.
  std::vector<queued_write*> batch;
  batch.reserve(std::min(max_batch_, queue_.size()));
  leading_ = true;
  // Everything that arrived while the previous batch committed, in arrival order.
  while (!queue_.empty() && batch.size() < max_batch_) {
    batch.push_back(queue_.front());
    queue_.pop_front();
  }
  // Holds first, in their own transaction not waited to disk, so that no hold waits for a
  // charge's flush. The writes of one batch come from different callers (a caller waits for each
  // write before its next), so none of them was promised to see another's effect; a hold run
  // ahead of a charge of its account sees that charge's reservation still held, which leaves
  // less to hold, never more.
  const auto durable =
      std::stable_partition(batch.begin(), batch.end(), [](const queued_write* w) { return !w->durable; });
  const auto at = static_cast<size_t>(durable - batch.begin());
  const std::span<queued_write* const> all(batch);
  if (at > 0)
    commit(all.first(at), lock);  // the holds are answered while the charges commit
  if (at < batch.size())
    commit(all.subspan(at), lock);
  leading_ = false;
  // The first caller still queued leads the next batch (unless a new caller comes first).
  if (!queue_.empty())
    queue_.front()->wake.notify_one();
  idle_.notify_all();
}

void group_commit::commit(std::span<queued_write* const> part, std::unique_lock<std::mutex>& lock) {
  lock.unlock();
  std::exception_ptr failed;
  try {
    run_(part);
  } catch (...) {
    failed = std::current_exception();  // nothing of this part committed
  }
  lock.lock();
  for (queued_write* w : part) {
    if (failed)
      w->error = failed;
    w->done = true;
    w->wake.notify_one();  // under the mutex: the caller cannot return (and free `w`) before
  }
  ++stats_.batches;
  stats_.writes += part.size();
  stats_.largest = std::max(stats_.largest, part.size());
}

void group_commit::shutdown() {
  std::unique_lock lock(mu_);
  stopping_ = true;
  // Whatever still waits in the queue is answered, never run.
  for (queued_write* w : queue_) {
    w->error = closed();
    w->done = true;
    w->wake.notify_one();
  }
  queue_.clear();
  idle_.wait(lock, [this] { return !leading_; });
}

group_commit_stats group_commit::stats() const {
  std::lock_guard lock(mu_);
  group_commit_stats out = stats_;
  out.pending = queue_.size();
  return out;
}

}  // namespace enact::metering::sql
