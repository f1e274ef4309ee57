// SPDX-License-Identifier: Apache-2.0
// Structured logs: one JSON object per line on a stream (stderr by default). Request threads only
// format their line and queue it; one writer thread writes queued lines in batches, so request
// latency never includes log I/O. Lines are never dropped: when the queue is full, producers wait.
// The destructor writes everything still queued. Request lines carry the request id, method,
// route, status and latency; nothing that identifies a secret is ever passed in. Debug lines
// (--log-level debug) add what an operator tracing one request or run wants: the matched route,
// the caller's key hash, body sizes, the time spent authenticating and in the handler (where the
// ledger operations run), trigger intake; never a key value, token, root key, request body or
// auth header.
#pragma once

#include <boost/json.hpp>

#include <condition_variable>
#include <cstdio>
#include <deque>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

namespace enact::http {

class logger {
 public:
  enum class level { debug, info, warn, error };
  explicit logger(std::FILE* out = stderr, level min = level::info);
  ~logger();
  logger(const logger&) = delete;
  logger& operator=(const logger&) = delete;

  void log(level l, std::string_view msg, boost::json::object fields = {});
  /// Whether lines of `l` are written: callers building fields for a debug line check this
  /// first, so the line costs one comparison when the level is above debug.
  [[nodiscard]] bool enabled(level l) const { return l >= min_ && fd_ >= 0; }
  void debug(std::string_view msg, boost::json::object fields = {}) { log(level::debug, msg, std::move(fields)); }
  void info(std::string_view msg, boost::json::object fields = {}) { log(level::info, msg, std::move(fields)); }
  void warn(std::string_view msg, boost::json::object fields = {}) { log(level::warn, msg, std::move(fields)); }
  void error(std::string_view msg, boost::json::object fields = {}) { log(level::error, msg, std::move(fields)); }
  /// Returns once every line logged before the call is written.
  void flush();

 private:
  void run();
  static constexpr size_t kMaxQueued = 65536;
  int fd_;
  level min_;
  std::mutex mu_;
  std::condition_variable wake_writer_;
  std::condition_variable wake_producers_;
  std::deque<std::string> queue_;
  uint64_t queued_ = 0;
  uint64_t written_ = 0;
  bool stopping_ = false;
  std::thread writer_;
};

}  // namespace enact::http
