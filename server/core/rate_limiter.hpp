// Token buckets by key (a credential hash, or a client IP with a route), shared by the core
// routes (mount.cpp: per key, per IP for account creation) and the trigger service's approval
// handshake (per IP for its unauthenticated /auth routes).
#pragma once

#include <algorithm>
#include <chrono>
#include <mutex>
#include <string>
#include <unordered_map>

namespace enact::core {

class rate_limiter {
 public:
  /// `rate_per_second` tokens a second up to `burst`; a rate of 0 disables the limiter.
  rate_limiter(double rate_per_second, double burst) : rate_(rate_per_second), burst_(burst) {}
  [[nodiscard]] bool enabled() const { return rate_ > 0; }
  /// 0 when allowed; otherwise seconds until a token is available (at least 1).
  [[nodiscard]] int take(const std::string& key) {
    std::lock_guard lock(mu_);
    const auto now = clock::now();
    auto [it, fresh] = buckets_.try_emplace(key, bucket{burst_, now});
    bucket& b = it->second;
    if (!fresh) {
      const double elapsed = std::chrono::duration<double>(now - b.at).count();
      b.tokens = std::min(burst_, b.tokens + elapsed * rate_);
      b.at = now;
    }
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return 0;
    }
    if (buckets_.size() > 100000)
      buckets_.clear();  // bounded memory under a flood of distinct keys
    return std::max(1, static_cast<int>((1 - b.tokens) / rate_ + 0.999));
  }

 private:
  using clock = std::chrono::steady_clock;
  struct bucket {
    double tokens;
    clock::time_point at;
  };
  double rate_;
  double burst_;
  std::mutex mu_;
  std::unordered_map<std::string, bucket> buckets_;
};

}  // namespace enact::core
