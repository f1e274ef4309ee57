// SPDX-License-Identifier: Apache-2.0
// The owning-account check remembered (core/key_cache.hpp).
#include "core/key_cache.hpp"

#include <algorithm>

#include "enact/crypto/secp256k1.hpp"
#include "enact/pkp/pkp.hpp"

namespace enact::core {

key_cache::key key_cache::make(const tee::tee& t, const hash256& account, const hash256& path, const address& wallet) {
  key k{&t, {}};
  std::copy(account.begin(), account.end(), k.second.begin());
  std::copy(path.begin(), path.end(), k.second.begin() + 32);
  std::copy(wallet.begin(), wallet.end(), k.second.begin() + 64);
  return k;
}

std::optional<key_cache::entry> key_cache::find(const key& k) {
  std::lock_guard lock(mu_);
  const auto it = index_.find(k);
  if (it == index_.end())
    return std::nullopt;
  lru_.splice(lru_.begin(), lru_, it->second);
  return it->second->second;
}

void key_cache::store(const key& k, entry e) {
  std::lock_guard lock(mu_);
  if (const auto it = index_.find(k); it != index_.end()) {
    it->second->second = std::move(e);
    lru_.splice(lru_.begin(), lru_, it->second);
    return;
  }
  while (index_.size() >= capacity_) {
    index_.erase(lru_.back().first);
    lru_.pop_back();
  }
  lru_.emplace_front(k, std::move(e));
  index_.emplace(k, lru_.begin());
}

result<bool> key_cache::owns(const tee::tee& t, const hash256& account, const hash256& path, const address& wallet) {
  const key k = make(t, account, path, wallet);
  if (const auto hit = find(k))
    return hit->owned;
  ENACT_TRY(const address derived, t.wallet_address(account, path));
  const bool owned = derived == wallet;
  store(k, entry{owned, std::nullopt, std::nullopt, std::nullopt});
  return owned;
}

result<std::optional<std::string>> key_cache::solana_address(const tee::tee& t, const hash256& account,
                                                             const hash256& path, const address& wallet) {
  const key k = make(t, account, path, wallet);
  auto hit = find(k);
  if (!hit) {
    ENACT_TRY(const address derived, t.wallet_address(account, path));
    hit = entry{derived == wallet, std::nullopt, std::nullopt, std::nullopt};
    if (!hit->owned)
      store(k, *hit);
  }
  if (!hit->owned)
    return std::optional<std::string>{};
  if (!hit->solana) {
    ENACT_TRY(const auto pub, t.ed25519_public_key(account, path));
    hit->solana = pkp::solana_address(pub);
    store(k, *hit);
  }
  return hit->solana;
}

result<bool> key_cache::exported(const tee::tee& t, const hash256& account, const hash256& path, const address& wallet,
                                 const std::function<result<bool>(const hash256&)>& registered) {
  const key k = make(t, account, path, wallet);
  auto hit = find(k);
  if (hit && hit->exported)
    return *hit->exported;
  ENACT_TRY(const hash256 h, t.pkp_key_usage_hash(account, path));
  ENACT_TRY(const bool found, registered(h));
  entry e = hit ? *hit : entry{true, std::nullopt, std::nullopt, std::nullopt};
  e.exported = found;
  store(k, std::move(e));
  return found;
}

result<bool> key_cache::usage_key_wallet(const tee::tee& t, const hash256& account, const hash256& path,
                                         const address& wallet,
                                         const std::function<result<bool>(const hash256&)>& registered) {
  ENACT_TRY(const bool owned, owns(t, account, path, wallet));
  if (owned)
    return exported(t, account, path, wallet, registered);
  const key k = make(t, account, path, wallet);
  auto hit = find(k);
  if (hit && hit->usage_wallet)
    return *hit->usage_wallet;
  ENACT_TRY(const Secret usage, t.usage_key(account, path));
  ENACT_TRY(const auto pub, crypto::secp256k1::public_key_of(usage));
  const bool found = crypto::secp256k1::to_address(pub) == wallet;
  entry e = hit ? *hit : entry{false, std::nullopt, std::nullopt, std::nullopt};
  e.usage_wallet = found;
  store(k, std::move(e));
  return found;
}

void key_cache::remember(const tee::tee& t, const hash256& account, const hash256& path, const address& wallet,
                         std::string solana_address) {
  store(make(t, account, path, wallet), entry{true, std::move(solana_address), std::nullopt, std::nullopt});
}

size_t key_cache::size() const {
  std::lock_guard lock(mu_);
  return index_.size();
}

std::function<result<bool>(const hash256&)> usage_key_lookup(const ledger::permission_ledger& l) {
  return [&l](const hash256& h) -> result<bool> {
    auto k = l.find_usage_key(h);
    if (k)
      return true;
    if (k.code() == ledger_errc::unknown_usage_key)
      return false;
    return k.err();
  };
}

key_cache& shared_key_cache() {
  static key_cache cache;
  return cache;
}

}  // namespace enact::core
