// SPDX-License-Identifier: Apache-2.0
// The evm ledger's state (evm_ledger.hpp): the node, the signers, the view cache, the event index
// and its poller, and the view and write paths every permission_ledger method goes through.
// Internal to the ledger's source files (evm_ledger.cpp, evm_methods.cpp).
#pragma once

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include <boost/json.hpp>

#include "enact/chain/registry.hpp"
#include "enact/chain/rpc.hpp"
#include "ledger/evm_ledger.hpp"
#include "ledger/evm_support.hpp"
#include "ledger/evm_view_cache.hpp"

namespace enact::ledger {

struct evm_ledger::state {
  evm_options opt;
  std::string node;  // origin of the URL, for messages
  std::shared_ptr<chain::rpc_client> rpc;
  std::vector<std::shared_ptr<tx_signer>> signers;
  uint64_t deployment_block = 0;
  mutable evm::view_cache cache;

  mutable std::mutex payers_mu;
  std::vector<address> payers;

  // The event index (guarded by index_mu): events in chain order, sequence = position + 1.
  mutable std::mutex index_mu;
  mutable std::vector<event> events;
  mutable uint64_t next_index_block = 0;       // first block not indexed yet
  mutable uint64_t next_invalidate_block = 0;  // first block whose logs have not invalidated
  // Senders (and blocks) of the ledger's own transactions, until their block is indexed; its own
  // mutex, so a write never waits for a long backfill.
  mutable std::mutex from_mu;
  mutable std::unordered_map<std::string, std::pair<address, uint64_t>> tx_from;
  mutable bool payers_changed = false;

  std::mutex poll_mu;
  std::condition_variable poll_cv;
  bool stopping = false;
  std::thread poller;

  explicit state(evm_options o)
      : opt(std::move(o)), node(evm::origin_of(opt.rpc_url)), cache(opt.cache ? opt.cache_entries : 0) {}

  // --- errors ------------------------------------------------------------------------------

  [[nodiscard]] error node_failure(const error& e) const {
    if (evm::transport_failure(e))
      return fail(ledger_errc::storage, "the chain node at " + node + " is unreachable (" + e.message + ")");
    return fail(ledger_errc::storage, "the chain node at " + node + " failed: " + e.message);
  }

  /// A failed eth_call / eth_estimateGas: the registry's revert, or the node's failure.
  [[nodiscard]] error call_failure(const error& e) const {
    if (const std::optional<chain::registry::registry_error> re = chain::registry_revert(e))
      return evm::from_registry(*re);
    return node_failure(e);
  }

  // --- views -------------------------------------------------------------------------------

  /// eth_call of view `c`, through the cache when `owner` says whose entry it is (nullopt:
  /// global) and `tag` is latest.
  template <class Call>
  [[nodiscard]] result<typename Call::result_type> view(
      const Call& c, const std::optional<account_hash>& owner,
      const std::optional<chain::block_tag>& at = std::nullopt) const {
    const bytes data = chain::registry::encode(c);
    const bool cached = opt.cache && !at;
    std::string key;
    evm::view_cache::ticket t;
    using T = typename Call::result_type;
    if (cached) {
      key.assign(data.begin(), data.end());
      if (const std::shared_ptr<const void> hit = cache.get(key))
        return *std::static_pointer_cast<const T>(hit);
      t = cache.begin(owner);
    }
    auto r = rpc->call(opt.registry, data, at ? *at : chain::block_tag::latest());
    if (!r)
      return call_failure(r.err());
    auto v = chain::registry::decode_result<Call>(*r);
    if (!v)
      return fail(ledger_errc::storage, "registry " + evm::hx(opt.registry) + ": the answer of " +
                                            std::string(Call::kSignature) + " does not decode: " + v.err().message);
    if (cached)
      cache.put(std::move(key), owner, std::make_shared<const T>(*v), t);
    return std::move(*v);
  }

  // --- writes ------------------------------------------------------------------------------

  [[nodiscard]] tx_signer* signer_for(const address& sender) const {
    for (const auto& s : signers)
      if (s->sends_as(sender))
        return s.get();
    return nullptr;
  }

  /// Sends `data` to the registry as `from`: estimate (revert → the registry's error), send,
  /// receipt (a status-0 receipt → simulated again for its error), then invalidation.
  [[nodiscard]] result<chain::receipt> transact(const address& from, bytes data) {
    tx_signer* signer = signer_for(from);
    if (signer == nullptr)
      return fail(ledger_errc::invalid_argument,
                  "sender " + evm::hx(from) +
                      ": no signer sends as this address (the evm ledger sends writes only as "
                      "its api payers; other wallets write to the registry themselves)");
    chain::call_request est;
    est.from = from;
    est.to = opt.registry;
    est.data = data;
    auto gas = rpc->estimate_gas(est);
    if (!gas)
      return call_failure(gas.err());
    const u256 limit = u256{*gas} * u256{100 + opt.gas_margin_percent} / u256{100};
    auto r = signer->send(from, opt.registry, data, evm::clamp64(limit));
    if (!r) {
      if (r.code() == rpc_errc::tx_failed) {
        // Mined but reverted: state changed between the estimate and the block. The same call
        // now says why.
        auto again = rpc->call(est);
        if (!again)
          return call_failure(again.err());
        return fail(ledger_errc::storage, "registry: " + r.err().message);
      }
      if (r.code().category() == detail::ledger_category())
        return std::move(r).err();
      if (r.code().category() == detail::registry_category())
        return fail(evm::ledger_code(static_cast<registry_errc>(r.code().value())), "registry: " + r.err().message);
      return node_failure(r.err());
    }
    observe(*r);
    return std::move(*r);
  }

  /// An account write by `w.sender`: one transaction calling the registry.
  [[nodiscard]] result<chain::receipt> write(const write_context& w, bytes call) {
    return transact(w.sender, std::move(call));
  }

  /// What the ledger learns from its own receipt: the sender of the transaction (for the event
  /// index) and the accounts whose cache entries are stale now.
  void observe(const chain::receipt& r) {
    {
      std::lock_guard lock(from_mu);
      tx_from[evm::hx(r.transaction_hash)] = {r.from, r.block_number};
    }
    if (!opt.cache)
      return;
    for (const chain::log_entry& l : r.logs)
      if (l.address == opt.registry)
        invalidate(l);
  }

  void invalidate(const chain::log_entry& l) const {
    // Registry logs carry the account in topic 1, except ApiPayerSet (a payer: global only).
    static const hash256 kApiPayerSet = chain::registry::topic0<chain::registry::api_payer_set_event>();
    if (l.topics.size() >= 2 && l.topics[0] != kApiPayerSet)
      cache.invalidate(l.topics[1]);
    else
      cache.invalidate(std::nullopt);
  }

  /// The registry event of type E in a receipt (the write's own).
  template <class E>
  [[nodiscard]] result<E> receipt_event(const chain::receipt& r) const {
    for (const chain::log_entry& l : r.logs) {
      if (l.address != opt.registry || l.topics.empty() || l.topics[0] != chain::registry::topic0<E>())
        continue;
      auto ev = chain::registry::decode_log(l.topics, l.data);
      if (!ev)
        break;
      if (const E* e = std::get_if<E>(&ev->value))
        return *e;
    }
    return fail(ledger_errc::storage, "transaction " + evm::hx(r.transaction_hash) + ": no " +
                                          std::string(E::kSignature) + " log in its receipt");
  }

  // --- the event index ---------------------------------------------------------------------

  /// Brings the index (and the cache invalidation) up to the node's head. Caller holds index_mu.
  [[nodiscard]] result<void> sync_locked() const {
    auto head = rpc->block_number();
    if (!head)
      return node_failure(head.err());
    const uint64_t index_to = *head >= opt.confirmations ? *head - opt.confirmations : 0;
    const bool index_any = *head >= opt.confirmations;
    uint64_t from = std::min(next_index_block, next_invalidate_block);
    while (from <= *head) {
      const uint64_t to = std::min(*head, from + std::max<uint64_t>(opt.log_range, 1) - 1);
      chain::log_filter f;
      f.from_block = chain::block_tag::number(from);
      f.to_block = chain::block_tag::number(to);
      f.addresses = {opt.registry};
      auto logs = rpc->get_logs(f);
      if (!logs)
        return node_failure(logs.err());
      std::sort(logs->begin(), logs->end(), [](const chain::log_entry& a, const chain::log_entry& b) {
        return std::pair(a.block_number, a.log_index) < std::pair(b.block_number, b.log_index);
      });
      // Everything the new events need is fetched before any is appended, so a failure leaves
      // the index as it was and the range is asked for again next time.
      std::vector<event> fresh;
      std::unordered_map<uint64_t, int64_t> block_time;
      std::unordered_map<std::string, address> senders;
      for (const chain::log_entry& l : *logs) {
        if (l.removed)
          continue;
        if (l.block_number >= next_invalidate_block) {
          if (opt.cache)
            invalidate(l);
          if (!l.topics.empty() && l.topics[0] == chain::registry::topic0<chain::registry::api_payer_set_event>())
            payers_changed = true;
        }
        if (l.block_number < next_index_block || !index_any || l.block_number > index_to)
          continue;
        auto ev = chain::registry::decode_log(l.topics, l.data);
        if (!ev) {
          if (ev.code() == abi_errc::selector_mismatch)
            continue;  // not a registry event (a later version's): nothing to index
          return fail(ledger_errc::storage,
                      "registry log in block " + std::to_string(l.block_number) + ": " + ev.err().message);
        }
        if (evm::administration_log(ev->name) || !ev->account_hash)
          continue;
        // An own transaction's sender is known from its receipt; another's is asked for.
        const std::string tx = evm::hx(l.transaction_hash);
        event e;
        e.name = ev->name;
        e.account = *ev->account_hash;
        e.data = std::move(ev->args);
        e.value = std::move(ev->value);
        auto known = senders.find(tx);
        if (known == senders.end()) {
          std::lock_guard lock(from_mu);
          if (const auto it = tx_from.find(tx); it != tx_from.end())
            known = senders.emplace(tx, it->second.first).first;
        }
        if (known == senders.end()) {
          auto rc = rpc->transaction_receipt(l.transaction_hash);
          if (!rc)
            return node_failure(rc.err());
          if (!*rc)
            return fail(ledger_errc::storage, "the chain node at " + node + " has no receipt for " + tx);
          known = senders.emplace(tx, (*rc)->from).first;
        }
        e.sender = known->second;
        auto bt = block_time.find(l.block_number);
        if (bt == block_time.end()) {
          auto b = rpc->block_by_number(chain::block_tag::number(l.block_number));
          if (!b)
            return node_failure(b.err());
          if (!*b)
            return fail(ledger_errc::storage,
                        "the chain node at " + node + " has no block " + std::to_string(l.block_number));
          bt = block_time.emplace(l.block_number, static_cast<int64_t>((*b)->timestamp)).first;
        }
        e.created_at = bt->second;
        fresh.push_back(std::move(e));
      }
      for (event& e : fresh) {
        e.sequence = events.size() + 1;
        events.push_back(std::move(e));
      }
      next_invalidate_block = std::max(next_invalidate_block, to + 1);
      if (index_any)
        next_index_block = std::max(next_index_block, std::min(to, index_to) + 1);
      {
        // Senders of blocks now indexed are not needed any more.
        std::lock_guard lock(from_mu);
        std::erase_if(tx_from, [&](const auto& kv) { return kv.second.second < next_index_block; });
      }
      from = to + 1;
    }
    return {};
  }

  void refresh_payers() {
    auto p = view(chain::registry::api_payers_call{}, std::nullopt, chain::block_tag::latest());
    if (!p)
      return;
    std::lock_guard lock(payers_mu);
    payers = std::move(*p);
  }

  void poll_once() {
    bool changed = false;
    {
      std::lock_guard lock(index_mu);
      const result<void> r = sync_locked();
      // Without the log stream the cache cannot know what changed: it is emptied and bypassed
      // until a poll succeeds again.
      cache.reset(r.has_value());
      changed = std::exchange(payers_changed, false);
    }
    if (changed)
      refresh_payers();
  }

  void run_poller() {
    std::unique_lock lock(poll_mu);
    while (!stopping) {
      poll_cv.wait_for(lock, opt.event_poll_interval, [&] { return stopping; });
      if (stopping)
        break;
      lock.unlock();
      poll_once();
      lock.lock();
    }
  }
};

}  // namespace enact::ledger
