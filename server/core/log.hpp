// Structured logs: one JSON object per line on a stream (stderr by default), written whole under
// a lock. Request lines carry the request id, method, route, status and latency; nothing that
// identifies a secret is ever passed in (keys are logged, at most, as the first bytes of their
// hash).
#pragma once

#include <boost/json.hpp>

#include <cstdio>
#include <mutex>
#include <string_view>

namespace enact::core {

class logger {
 public:
  enum class level { debug, info, warn, error };
  explicit logger(std::FILE* out = stderr, level min = level::info) : out_(out), min_(min) {}
  void log(level l, std::string_view msg, boost::json::object fields = {});
  void info(std::string_view msg, boost::json::object fields = {}) { log(level::info, msg, std::move(fields)); }
  void warn(std::string_view msg, boost::json::object fields = {}) { log(level::warn, msg, std::move(fields)); }
  void error(std::string_view msg, boost::json::object fields = {}) { log(level::error, msg, std::move(fields)); }

 private:
  std::FILE* out_;
  level min_;
  std::mutex mu_;
};

}  // namespace enact::core
