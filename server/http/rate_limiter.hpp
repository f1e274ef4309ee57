// SPDX-License-Identifier: Apache-2.0
// Token buckets by key (a credential hash, a wallet, or a client address with a route), shared by
// the core routes (mount.cpp: per key and per wallet; per client address for account creation,
// the minting routes and /rpc writes) and the trigger service's approval handshake (per address
// for its unauthenticated /auth routes).
//
// The table is bounded: when it is full, the least recently used bucket makes room for a new key.
// A flood of distinct keys therefore evicts only the buckets idle longer than every other, never
// the bucket of a client that keeps calling, so nobody who is being limited gets fresh tokens
// from somebody else's flood (the table used to be cleared when it grew past its bound, which
// reset every limited client at once).
#pragma once

#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <list>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

namespace enact::http {

class rate_limiter {
 public:
  /// Buckets kept at most, by default: ~100 bytes each, so ~10 MB when full.
  static constexpr size_t kDefaultCapacity = 100000;

  /// `rate_per_second` tokens a second up to `burst`; a rate of 0 disables the limiter. At most
  /// `capacity` buckets are kept (at least 1).
  rate_limiter(double rate_per_second, double burst, size_t capacity = kDefaultCapacity)
      : rate_(rate_per_second), burst_(burst), capacity_(std::max<size_t>(1, capacity)) {}
  rate_limiter(const rate_limiter&) = delete;
  rate_limiter& operator=(const rate_limiter&) = delete;

  [[nodiscard]] bool enabled() const { return rate_ > 0; }
  [[nodiscard]] double burst() const { return burst_; }
  [[nodiscard]] size_t capacity() const { return capacity_; }

  /// 0 when allowed; otherwise seconds until a token is available (at least 1).
  [[nodiscard]] int take(const std::string& key) { return take(key, 1); }

  /// Takes `n` tokens at once, or none: 0 when allowed; otherwise seconds until `n` are available
  /// (at least 1). More than the burst is never granted (the answer is then the time to refill
  /// a whole bucket); callers refuse such a request outright.
  [[nodiscard]] int take(const std::string& key, double n) {
    if (n <= 0)
      return 0;
    std::lock_guard lock(mu_);
    const auto now = clock::now();
    bucket& b = touch(key, now);
    if (n <= b.tokens) {
      b.tokens -= n;
      return 0;
    }
    const double missing = std::min(n, burst_) - b.tokens;
    return std::max(1, static_cast<int>(missing / rate_ + 0.999));
  }

  /// Buckets held now (for tests and the debug log).
  [[nodiscard]] size_t size() const {
    std::lock_guard lock(mu_);
    return buckets_.size();
  }

 private:
  using clock = std::chrono::steady_clock;
  struct bucket {
    double tokens;
    clock::time_point at;
    std::list<std::string>::iterator lru;  // its key's place in `order_`
  };

  /// The bucket of `key`, refilled to `now` and made the most recently used; a new key gets a
  /// full bucket, evicting the least recently used one when the table is full.
  bucket& touch(const std::string& key, clock::time_point now) {
    if (const auto it = buckets_.find(key); it != buckets_.end()) {
      bucket& b = it->second;
      const double elapsed = std::chrono::duration<double>(now - b.at).count();
      b.tokens = std::min(burst_, b.tokens + elapsed * rate_);
      b.at = now;
      order_.splice(order_.begin(), order_, b.lru);
      return b;
    }
    if (buckets_.size() >= capacity_) {
      buckets_.erase(order_.back());
      order_.pop_back();
    }
    order_.push_front(key);
    return buckets_.emplace(key, bucket{burst_, now, order_.begin()}).first->second;
  }

  double rate_;
  double burst_;
  size_t capacity_;
  mutable std::mutex mu_;
  std::list<std::string> order_;  // most recently used first
  std::unordered_map<std::string, bucket> buckets_;
};

/// The client a per-address limit counts: the address itself for IPv4 (an IPv4-mapped IPv6
/// address as its IPv4 form), and the /64 prefix for IPv6, the block one subscriber is routed
/// (so a host cannot take a fresh bucket from each of its 2^64 addresses).
[[nodiscard]] inline std::string client_of(std::string_view remote_addr) {
  std::string addr(remote_addr);
  if (addr.find(':') == std::string::npos)
    return addr;
  std::array<unsigned char, 16> raw{};
  if (::inet_pton(AF_INET6, addr.c_str(), raw.data()) != 1)
    return addr;
  constexpr std::array<unsigned char, 12> kMapped{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  std::array<char, INET6_ADDRSTRLEN> text{};
  if (std::equal(kMapped.begin(), kMapped.end(), raw.begin())) {
    if (::inet_ntop(AF_INET, raw.data() + 12, text.data(), text.size()) == nullptr)
      return addr;
    return text.data();
  }
  std::fill(raw.begin() + 8, raw.end(), 0);
  if (::inet_ntop(AF_INET6, raw.data(), text.data(), text.size()) == nullptr)
    return addr;
  return std::string(text.data()) + "/64";
}

}  // namespace enact::http
