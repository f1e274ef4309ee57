// SPDX-License-Identifier: Apache-2.0
// The metering store's committer thread (group_commit.hpp).
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
    : run_(std::move(run)), max_batch_(std::max<size_t>(1, options.max_batch)), thread_([this] { loop(); }) {}

group_commit::~group_commit() { shutdown(); }

void group_commit::submit(const std::function<bool(session&)>& body, bool single_statement) {
  queued_write w;
  w.body = &body;
  w.single_statement = single_statement;
  {
    std::unique_lock lock(mu_);
    if (stopping_)
      std::rethrow_exception(closed());
    queue_.push_back(&w);
    queued_.notify_one();
    answered_.wait(lock, [&w] { return w.done; });
  }
  if (w.error)
    std::rethrow_exception(w.error);
}

void group_commit::shutdown() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  queued_.notify_all();
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id())
    thread_.join();
}

group_commit_stats group_commit::stats() const {
  std::lock_guard lock(mu_);
  group_commit_stats out = stats_;
  out.pending = queue_.size();
  return out;
}

void group_commit::loop() {
  std::vector<queued_write*> batch;
  std::unique_lock lock(mu_);
  for (;;) {
    queued_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (stopping_)
      break;
    // Everything that arrived while the previous batch committed, in arrival order.
    batch.clear();
    while (!queue_.empty() && batch.size() < max_batch_) {
      batch.push_back(queue_.front());
      queue_.pop_front();
    }
    lock.unlock();
    std::exception_ptr failed;
    try {
      run_(std::span<queued_write* const>(batch));
    } catch (...) {
      failed = std::current_exception();  // nothing of the batch committed
    }
    lock.lock();
    for (queued_write* w : batch) {
      if (failed)
        w->error = failed;
      w->done = true;
    }
    ++stats_.batches;
    stats_.writes += batch.size();
    stats_.largest = std::max(stats_.largest, batch.size());
    answered_.notify_all();
  }
  // Shut down: whatever still waits is answered, never run.
  for (queued_write* w : queue_) {
    w->error = closed();
    w->done = true;
  }
  queue_.clear();
  answered_.notify_all();
}

}  // namespace enact::metering::sql
