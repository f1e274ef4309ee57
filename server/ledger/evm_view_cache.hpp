// SPDX-License-Identifier: Apache-2.0
// The evm ledger's view cache (evm_ledger.hpp, "Cache").
#pragma once

#include <cstdint>
#include <list>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <utility>

#include "enact/bytes.hpp"
#include "ledger/evm_ledger.hpp"

namespace enact::ledger::evm {

/// A bounded LRU map from call data to the decoded answer (a hit costs a lookup and a copy, no ABI
/// decoding). Entries belong to an account or are global;
/// see evm_ledger.hpp "Cache" for when they are dropped. Generation counters (per stripe of
/// accounts, one for the global entries, one epoch for everything) let a read that raced with an
/// invalidation skip caching its possibly stale answer.
class view_cache {
 public:
  struct ticket {
    uint64_t generation = 0;
    uint64_t epoch = 0;
  };

  explicit view_cache(size_t capacity) : capacity_(capacity) {}

  [[nodiscard]] ticket begin(const std::optional<account_hash>& owner) const {
    std::lock_guard lock(mu_);
    return {generation_of(owner), epoch_};
  }

  [[nodiscard]] std::shared_ptr<const void> get(const std::string& key) {
    std::lock_guard lock(mu_);
    if (!trusted_)
      return nullptr;
    const auto it = index_.find(key);
    if (it == index_.end()) {
      ++stats_.misses;
      return nullptr;
    }
    ++stats_.hits;
    entries_.splice(entries_.begin(), entries_, it->second);
    return it->second->value;
  }

  void put(std::string key, const std::optional<account_hash>& owner, std::shared_ptr<const void> value, ticket t) {
    std::lock_guard lock(mu_);
    if (!trusted_ || capacity_ == 0 || t.epoch != epoch_ || t.generation != generation_of(owner))
      return;
    if (const auto it = index_.find(key); it != index_.end()) {
      it->second->value = std::move(value);
      entries_.splice(entries_.begin(), entries_, it->second);
      return;
    }
    entries_.push_front(entry{key, owner, std::move(value)});
    index_.emplace(std::move(key), entries_.begin());
    if (entries_.size() > capacity_) {
      index_.erase(entries_.back().key);
      entries_.pop_back();
    }
  }

  /// A log named `account` (or, when absent, concerned only global entries: ApiPayerSet).
  void invalidate(const std::optional<account_hash>& account) {
    std::lock_guard lock(mu_);
    ++global_generation_;
    if (account)
      ++stripes_[stripe_of(*account)];
    for (auto it = entries_.begin(); it != entries_.end();) {
      if (!it->owner || (account && *it->owner == *account)) {
        index_.erase(it->key);
        it = entries_.erase(it);
        ++stats_.invalidations;
      } else {
        ++it;
      }
    }
  }

  /// Drops everything; `trusted` false also stops serving and filling until set true again.
  void reset(bool trusted) {
    std::lock_guard lock(mu_);
    if (trusted_ && trusted)
      return;
    ++epoch_;
    entries_.clear();
    index_.clear();
    trusted_ = trusted;
  }

  [[nodiscard]] cache_stats stats() const {
    std::lock_guard lock(mu_);
    cache_stats s = stats_;
    s.entries = entries_.size();
    return s;
  }

 private:
  static constexpr size_t kStripes = 256;
  struct entry {
    std::string key;
    std::optional<account_hash> owner;
    std::shared_ptr<const void> value;
  };

  static size_t stripe_of(const account_hash& h) { return (h[31] ^ h[17] ^ h[3]) % kStripes; }
  uint64_t generation_of(const std::optional<account_hash>& owner) const {
    return owner ? stripes_[stripe_of(*owner)] : global_generation_;
  }

  size_t capacity_;
  mutable std::mutex mu_;
  std::list<entry> entries_;  // most recently used first
  std::unordered_map<std::string, std::list<entry>::iterator> index_;
  std::array<uint64_t, kStripes> stripes_{};
  uint64_t global_generation_ = 0;
  uint64_t epoch_ = 0;
  bool trusted_ = true;
  cache_stats stats_;
};

}  // namespace enact::ledger::evm
