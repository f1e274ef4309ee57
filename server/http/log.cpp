// SPDX-License-Identifier: Apache-2.0
#include "http/log.hpp"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <ctime>

namespace enact::http {
namespace {

void write_all(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return;  // the log sink is gone; the server keeps serving
    done += static_cast<size_t>(n);
  }
}

}  // namespace

logger::logger(std::FILE* out, level min)
    : fd_(out != nullptr ? fileno(out) : -1), min_(min), writer_([this] { run(); }) {}

logger::~logger() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_writer_.notify_one();
  writer_.join();
}

void logger::log(level l, std::string_view msg, boost::json::object fields) {
  if (l < min_ || fd_ < 0)
    return;
  static constexpr std::string_view kNames[] = {"debug", "info", "warn", "error"};
  const auto now = std::chrono::system_clock::now();
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
  const std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char ts[64];
  std::snprintf(ts, sizeof ts, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms % 1000));
  boost::json::object line{{"ts", ts}, {"level", kNames[static_cast<int>(l)]}, {"msg", msg}};
  for (auto& kv : fields)
    line[kv.key()] = std::move(kv.value());
  std::string text = boost::json::serialize(line);
  text.push_back('\n');
  std::unique_lock lock(mu_);
  wake_producers_.wait(lock, [this] { return queue_.size() < kMaxQueued || stopping_; });
  const bool was_empty = queue_.empty();
  queue_.push_back(std::move(text));
  ++queued_;
  lock.unlock();
  if (was_empty)
    wake_writer_.notify_one();
}

void logger::flush() {
  std::unique_lock lock(mu_);
  const uint64_t target = queued_;
  wake_writer_.notify_one();
  wake_producers_.wait(lock, [&] { return written_ >= target; });
}

void logger::run() {
  std::unique_lock lock(mu_);
  for (;;) {
    wake_writer_.wait(lock, [this] { return !queue_.empty() || stopping_; });
    if (queue_.empty() && stopping_)
      return;
    std::string batch;
    size_t lines = 0;
    while (!queue_.empty() && batch.size() < (size_t{1} << 20)) {
      batch += queue_.front();
      queue_.pop_front();
      ++lines;
    }
    lock.unlock();
    write_all(fd_, batch);
    lock.lock();
    written_ += lines;
    wake_producers_.notify_all();
  }
}

}  // namespace enact::http
