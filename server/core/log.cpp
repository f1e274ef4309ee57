#include "core/log.hpp"

#include <chrono>
#include <ctime>
#include <string>

namespace enact::core {

void logger::log(level l, std::string_view msg, boost::json::object fields) {
  if (l < min_ || out_ == nullptr)
    return;
  static constexpr std::string_view kNames[] = {"debug", "info", "warn", "error"};
  const auto now = std::chrono::system_clock::now();
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
  const std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char ts[40];
  std::snprintf(ts, sizeof ts, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
                tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms % 1000));
  boost::json::object line{{"ts", ts}, {"level", kNames[static_cast<int>(l)]}, {"msg", msg}};
  for (auto& kv : fields)
    line[kv.key()] = std::move(kv.value());
  std::string text = boost::json::serialize(line);
  text.push_back('\n');
  std::lock_guard lock(mu_);
  std::fwrite(text.data(), 1, text.size(), out_);
  std::fflush(out_);
}

}  // namespace enact::core
