// SPDX-License-Identifier: Apache-2.0
// The owning-account check (docs/protocol.md §1 "owning account") remembered: per (TEE, account,
// derivation path, wallet), whether the derivation of (account, path) gives that wallet, and the
// Solana address of the key's Ed25519 half when it does. A derivation is deterministic for the
// TEE's root key, so a result once derived stays true for the TEE's lifetime; run signing, the
// wallet listings and the minting answers then pay a lookup instead of two derivations per wallet.
//
// The key includes the account: a (wallet, path) pair copied into another account is a different
// entry, derived (and refused) on its own. Only public results are kept (a flag and an address),
// never key material. Bounded: least recently used entries are evicted past the capacity, so no
// client grows the server's memory by listing or running many wallets.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include "enact/address.hpp"
#include "enact/result.hpp"
#include "ledger/ledger.hpp"
#include "tee/tee.hpp"

namespace enact::core {

class key_cache {
 public:
  static constexpr size_t kDefaultCapacity = 1 << 16;
  explicit key_cache(size_t capacity = kDefaultCapacity) : capacity_(capacity == 0 ? 1 : capacity) {}

  /// Whether (account, path) derives `wallet` in `t`: one secp256k1 derivation the first time.
  [[nodiscard]] result<bool> owns(const tee::tee& t, const hash256& account, const hash256& path,
                                  const address& wallet);

  /// The Solana address of the wallet's Ed25519 key when (account, path) derives `wallet` in `t`,
  /// nullopt when it does not (the key is not this account's).
  [[nodiscard]] result<std::optional<std::string>> solana_address(const tee::tee& t, const hash256& account,
                                                                  const hash256& path, const address& wallet);

  /// Whether the PKP key of (account, path), which derives `wallet`, was handed out: a usage key
  /// whose hash is t.pkp_key_usage_hash(account, path) exists (`registered` asks the ledger), as the
  /// rule before the usage-key domain made them (docs/protocol.md §1 "usage key by signature"). Asked
  /// once per entry and remembered, so a key registered after the first answer is seen once the
  /// entry is evicted or the server restarts.
  [[nodiscard]] result<bool> exported(const tee::tee& t, const hash256& account, const hash256& path,
                                      const address& wallet,
                                      const std::function<result<bool>(const hash256&)>& registered);

  /// Whether `wallet` is the wallet of a usage key rather than a PKP (docs/protocol.md §1 "usage key
  /// by signature"): the usage-key derivation of (account, path) gives it, or it is this account's
  /// PKP and its key was handed out (`exported`). Asked once per entry, like the others.
  [[nodiscard]] result<bool> usage_key_wallet(const tee::tee& t, const hash256& account, const hash256& path,
                                              const address& wallet,
                                              const std::function<result<bool>(const hash256&)>& registered);

  /// Records a key derived from (account, path) by the caller, e.g. a wallet just minted.
  void remember(const tee::tee& t, const hash256& account, const hash256& path, const address& wallet,
                std::string solana_address);

  [[nodiscard]] size_t size() const;
  [[nodiscard]] size_t capacity() const { return capacity_; }

 private:
  using key = std::pair<const tee::tee*, std::array<uint8_t, 32 + 32 + 20>>;
  struct entry {
    bool owned = false;
    std::optional<std::string> solana;  // set once derived, only when owned
    std::optional<bool> exported;       // set once asked, only when owned
    std::optional<bool> usage_wallet;   // set once asked, only when not owned
  };
  using lru_list = std::list<std::pair<key, entry>>;

  static key make(const tee::tee& t, const hash256& account, const hash256& path, const address& wallet);
  std::optional<entry> find(const key& k);
  void store(const key& k, entry e);

  size_t capacity_;
  mutable std::mutex mu_;
  lru_list lru_;  // most recently used first
  std::map<key, lru_list::iterator> index_;
};

/// The process's cache, shared by every route that checks an owning account.
key_cache& shared_key_cache();

/// The `registered` question of key_cache::exported and usage_key_wallet, asked of `l`: whether a
/// usage key with that hash exists.
[[nodiscard]] std::function<result<bool>(const hash256&)> usage_key_lookup(const ledger::permission_ledger& l);

}  // namespace enact::core
