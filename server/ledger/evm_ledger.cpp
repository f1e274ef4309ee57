// The evm permission ledger; what it does and why is in evm_ledger.hpp. Layout: error mapping,
// the view cache, the signers, the state (views, writes, event index, poller), then the
// permission_ledger methods in the interface's order.
#include "ledger/evm_ledger.hpp"

#include <algorithm>
#include <array>
#include <condition_variable>
#include <list>
#include <thread>
#include <unordered_map>
#include <utility>

#include <boost/json.hpp>

#include "enact/chain/registry.hpp"
#include "enact/chain/rpc.hpp"
#include "enact/codec/hex.hpp"
#include "enact/crypto/secp256k1.hpp"

namespace enact::ledger {
namespace {

namespace reg = chain::registry;
using steady = std::chrono::steady_clock;

template <size_t N>
[[nodiscard]] std::string hx(const std::array<uint8_t, N>& v) {
  return hex::encode_prefixed(v);
}

/// scheme://host[:port] of a URL: a hosted node's path may carry its API key, which no message
/// repeats.
[[nodiscard]] std::string origin_of(std::string_view url) {
  const size_t scheme = url.find("://");
  const size_t path = url.find('/', scheme == std::string_view::npos ? 0 : scheme + 3);
  return std::string(url.substr(0, path));
}

// --- errors --------------------------------------------------------------------------------------

[[nodiscard]] ledger_errc ledger_code(registry_errc c) {
  switch (c) {
    case registry_errc::not_admin:
    case registry_errc::not_owner:      // registry administration by someone else
    case registry_errc::not_api_payer:  // bookkeeping by someone else
      return ledger_errc::not_admin;
    case registry_errc::relay_not_allowed:
      return ledger_errc::relay_not_allowed;
    case registry_errc::already_unmanaged:
      return ledger_errc::already_unmanaged;
    case registry_errc::unknown_account:
      return ledger_errc::unknown_account;
    case registry_errc::unknown_usage_key:
      return ledger_errc::unknown_usage_key;
    case registry_errc::unknown_group:
      return ledger_errc::unknown_group;
    case registry_errc::unknown_wallet:
      return ledger_errc::unknown_wallet;
    case registry_errc::unknown_action:
      return ledger_errc::unknown_action;
    case registry_errc::unknown_payment:
      return ledger_errc::unknown_payment;
    case registry_errc::duplicate:
      return ledger_errc::duplicate;
    case registry_errc::already_credited:
      return ledger_errc::already_credited;
    case registry_errc::insufficient_credits:
      return ledger_errc::insufficient_credits;
    case registry_errc::invalid_argument:
      return ledger_errc::invalid_argument;
    case registry_errc::account_hash_not_canonical:
      return ledger_errc::hash_not_canonical;
    case registry_errc::managed_not_allowed:
      return ledger_errc::managed_not_allowed;
    case registry_errc::hash_is_usage_key:
      return ledger_errc::hash_is_usage_key;
    case registry_errc::hash_is_account:
      return ledger_errc::hash_is_account;
    case registry_errc::usage_key_of_another_account:
      return ledger_errc::usage_key_of_another_account;
    case registry_errc::new_admin_not_sender:
      return ledger_errc::new_admin_not_sender;
    case registry_errc::error_string:
    case registry_errc::panic:
    case registry_errc::unknown_error:
      break;
  }
  return ledger_errc::storage;
}

[[nodiscard]] error from_registry(const reg::registry_error& e) {
  const ledger_errc code = ledger_code(e.code);
  if (code == ledger_errc::storage)
    return fail(code, "registry: unexpected revert " + e.message);
  return fail(code, "registry: " + e.message);
}

[[nodiscard]] bool transport_failure(const error& e) {
  return e.code == rpc_errc::unreachable || e.code == rpc_errc::timeout || e.code == rpc_errc::http_status;
}

// --- the view cache ------------------------------------------------------------------------------

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

// --- view conversions ----------------------------------------------------------------------------

[[nodiscard]] uint64_t clamp64(const u256& v) { return v.fits_u64() ? static_cast<uint64_t>(v) : UINT64_MAX; }
[[nodiscard]] int64_t time64(const u256& v) {
  const uint64_t t = clamp64(v);
  return t > static_cast<uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(t);
}

[[nodiscard]] account to_account(const reg::account_view& v) {
  account a;
  a.hash = v.account_hash;
  a.admin = v.admin;
  a.managed = v.managed;
  a.name = v.name;
  a.description = v.description;
  a.email = v.email;
  a.created_at = time64(v.created_at);
  return a;
}

[[nodiscard]] usage_key to_usage_key(const reg::usage_key_view& v) {
  usage_key k;
  k.hash = v.usage_key_hash;
  k.account = v.account_hash;
  k.wallet = v.wallet;
  k.name = v.name;
  k.description = v.description;
  k.expiration = clamp64(v.expiration);  // see evm_ledger.hpp: clamped, not refused
  k.balance = clamp64(v.balance);
  k.permissions = v.permissions;
  k.created_at = time64(v.created_at);
  return k;
}

[[nodiscard]] group to_group(const reg::group_view& v) {
  group g;
  g.id = v.group_id;
  g.name = v.name;
  g.description = v.description;
  g.pkps = v.pkp_ids;
  g.cid_hashes = v.cid_hashes;
  return g;
}

[[nodiscard]] wallet to_wallet(const reg::wallet_view& v) {
  wallet w;
  w.pkp_id = v.wallet;
  w.derivation_path = v.derivation_path;
  w.name = v.name;
  w.description = v.description;
  w.created_at = time64(v.created_at);
  return w;
}

[[nodiscard]] action to_action(const reg::action_view& v) {
  action a;
  a.cid = v.cid;
  a.hashed_cid = v.hashed_cid;
  a.name = v.name;
  a.description = v.description;
  a.created_at = time64(v.created_at);
  return a;
}

template <class T, class V, class F>
[[nodiscard]] page<T> to_page(const reg::list_page<V>& v, F convert) {
  page<T> out;
  out.total = clamp64(v.total);
  out.items.reserve(v.items.size());
  for (const V& item : v.items)
    out.items.push_back(convert(item));
  return out;
}

/// offset and limit of a 1-based page (API.md §0), validated as the embedded ledger does.
[[nodiscard]] result<std::pair<u256, u256>> page_args(page_request p) {
  if (p.number == 0 || p.size == 0)
    return fail(ledger_errc::invalid_argument, "page: number and size must be at least 1");
  return std::pair{u256{p.number - 1} * u256{p.size}, u256{p.size}};
}

// Logs that are registry bookkeeping, not ledger events (IPermissionRegistry.sol).
[[nodiscard]] bool bookkeeping_log(std::string_view name) {
  return name == "PaymentRecorded" || name == "WriteCharged" || name == "ApiPayerSet";
}
// Ledger events of server-side bookkeeping: reported without a sender, as the embedded ledger.
[[nodiscard]] bool senderless_event(std::string_view name) {
  return name == "CreditsDebited" || name == "PaymentCredited";
}

}  // namespace

// =============================================================================================
// Signers

result<std::unique_ptr<key_signer>> key_signer::create(std::shared_ptr<const chain::rpc_client> client,
                                                       std::vector<Secret> keys, chain::sender_options options) {
  if (keys.empty())
    return fail(ledger_errc::invalid_argument, "key_signer: no keys");
  std::unique_ptr<key_signer> s(new key_signer());
  for (Secret& k : keys) {
    ENACT_TRY(chain::transaction_sender sender, chain::transaction_sender::create(client, std::move(k), options));
    const address from = sender.from();
    if (s->senders_.count(from) != 0)
      continue;
    s->order_.push_back(from);
    s->senders_.emplace(from, std::make_unique<chain::transaction_sender>(std::move(sender)));
  }
  return s;
}

bool key_signer::sends_as(const address& from) const { return senders_.count(from) != 0; }

std::vector<address> key_signer::addresses() const { return order_; }

result<chain::receipt> key_signer::send(const address& from, const address& to, bytes_view data, uint64_t gas_limit) {
  const auto it = senders_.find(from);
  if (it == senders_.end())
    return fail(ledger_errc::invalid_argument, "key_signer: no key for " + hx(from));
  chain::tx_request req;
  req.to = to;
  req.data.assign(data.begin(), data.end());
  req.gas_limit = gas_limit;
  return it->second->send(req);
}

impersonating_signer::impersonating_signer(std::shared_ptr<const chain::rpc_client> client)
    : impersonating_signer(std::move(client), options{}) {}

impersonating_signer::impersonating_signer(std::shared_ptr<const chain::rpc_client> client, options o)
    : client_(std::move(client)), options_(o) {}

result<chain::receipt> impersonating_signer::send(const address& from, const address& to, bytes_view data,
                                                  uint64_t gas_limit) {
  std::mutex* sender_mu = nullptr;
  bool fund = false;
  {
    std::lock_guard lock(mu_);
    auto& m = per_sender_[from];
    if (!m)
      m = std::make_unique<std::mutex>();
    sender_mu = m.get();
    fund = funded_.insert(from).second;
  }
  hash256 tx{};
  {
    // The node picks the nonce from its pool: two sends from one address at once would both
    // take the same one.
    std::lock_guard lock(*sender_mu);
    if (fund) {
      // 1000 ether: plenty for the tests' gas.
      const u256 wei = u256{1'000'000'000'000'000'000ULL} * u256{1000};
      auto funded = client_->call_method("anvil_setBalance", {chain::rpc::data(from), wei.to_hex()});
      if (!funded) {
        std::lock_guard relock(mu_);
        funded_.erase(from);
        return std::move(funded).err();
      }
    }
    boost::json::object t{{"from", chain::rpc::data(from)},
                          {"to", chain::rpc::data(to)},
                          {"data", chain::rpc::data(data)},
                          {"gas", chain::rpc::quantity(u256{gas_limit})}};
    ENACT_TRY(const boost::json::value h, client_->call_method("eth_sendTransaction", {t}));
    ENACT_TRY(tx, chain::rpc::parse_data_fixed<32>(h, "eth_sendTransaction.result"));
  }
  const auto deadline = steady::now() + options_.receipt_timeout;
  auto pause = std::chrono::milliseconds(1);
  for (;;) {
    auto r = client_->transaction_receipt(tx);
    if (r && r->has_value()) {
      if (!(*r)->status)
        return fail(rpc_errc::tx_failed,
                    "transaction " + hx(tx) + ": status 0 in block " + std::to_string((*r)->block_number));
      return std::move(**r);
    }
    if (!r && !transport_failure(r.err()))
      return std::move(r).err();
    if (steady::now() >= deadline)
      return fail(rpc_errc::timeout, "receipt of " + hx(tx) + " not available after " +
                                         std::to_string(options_.receipt_timeout.count()) + " ms");
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, options_.poll_interval);
  }
}

// =============================================================================================
// State

struct evm_ledger::state {
  evm_options opt;
  std::string node;  // origin of the URL, for messages
  std::shared_ptr<chain::rpc_client> rpc;
  std::vector<std::shared_ptr<tx_signer>> signers;
  uint64_t deployment_block = 0;
  std::optional<address> bookkeeper;
  mutable view_cache cache;

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
      : opt(std::move(o)), node(origin_of(opt.rpc_url)), cache(opt.cache ? opt.cache_entries : 0) {}

  // --- errors ------------------------------------------------------------------------------

  [[nodiscard]] error node_failure(const error& e) const {
    if (transport_failure(e))
      return fail(ledger_errc::storage, "the chain node at " + node + " is unreachable (" + e.message + ")");
    return fail(ledger_errc::storage, "the chain node at " + node + " failed: " + e.message);
  }

  /// A failed eth_call / eth_estimateGas: the registry's revert, or the node's failure.
  [[nodiscard]] error call_failure(const error& e) const {
    if (const std::optional<reg::registry_error> re = chain::registry_revert(e))
      return from_registry(*re);
    return node_failure(e);
  }

  // --- views -------------------------------------------------------------------------------

  /// eth_call of view `c`, through the cache when `owner` says whose entry it is (nullopt:
  /// global) and `tag` is latest.
  template <class Call>
  [[nodiscard]] result<typename Call::result_type> view(
      const Call& c, const std::optional<account_hash>& owner,
      const std::optional<chain::block_tag>& at = std::nullopt) const {
    const bytes data = reg::encode(c);
    const bool cached = opt.cache && !at;
    std::string key;
    view_cache::ticket t;
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
    auto v = reg::decode_result<Call>(*r);
    if (!v)
      return fail(ledger_errc::storage, "registry " + hx(opt.registry) + ": the answer of " +
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
                  "sender " + hx(from) +
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
    auto r = signer->send(from, opt.registry, data, clamp64(limit));
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
        return fail(ledger_code(static_cast<registry_errc>(r.code().value())), "registry: " + r.err().message);
      return node_failure(r.err());
    }
    observe(*r);
    return std::move(*r);
  }

  /// An account write by `w.sender`, with its charge in the same transaction.
  [[nodiscard]] result<chain::receipt> write(const write_context& w, const account_hash& account, bytes call,
                                             bool charge_first = false) {
    if (w.charge_credits == 0)
      return transact(w.sender, std::move(call));
    bytes charge = reg::encode(reg::charge_credits_call{account, u256{w.charge_credits}});
    reg::multicall_call m;
    if (charge_first)
      m.calls = {std::move(charge), std::move(call)};
    else
      m.calls = {std::move(call), std::move(charge)};
    return transact(w.sender, reg::encode(m));
  }

  [[nodiscard]] result<chain::receipt> bookkeeping(bytes call) {
    if (!bookkeeper)
      return fail(ledger_errc::invalid_argument, "no signer sends as an api payer of registry " + hx(opt.registry) +
                                                     ": credits and payments cannot be written");
    return transact(*bookkeeper, std::move(call));
  }

  /// What the ledger learns from its own receipt: the sender of the transaction (for the event
  /// index) and the accounts whose cache entries are stale now.
  void observe(const chain::receipt& r) {
    {
      std::lock_guard lock(from_mu);
      tx_from[hx(r.transaction_hash)] = {r.from, r.block_number};
    }
    if (!opt.cache)
      return;
    for (const chain::log_entry& l : r.logs)
      if (l.address == opt.registry)
        invalidate(l);
  }

  void invalidate(const chain::log_entry& l) const {
    // Registry logs carry the account in topic 1, except ApiPayerSet (a payer: global only).
    static const hash256 kApiPayerSet = reg::topic0<reg::api_payer_set_event>();
    if (l.topics.size() >= 2 && l.topics[0] != kApiPayerSet)
      cache.invalidate(l.topics[1]);
    else
      cache.invalidate(std::nullopt);
  }

  /// The registry event of type E in a receipt (the write's own).
  template <class E>
  [[nodiscard]] result<E> receipt_event(const chain::receipt& r) const {
    for (const chain::log_entry& l : r.logs) {
      if (l.address != opt.registry || l.topics.empty() || l.topics[0] != reg::topic0<E>())
        continue;
      auto ev = reg::decode_log(l.topics, l.data);
      if (!ev)
        break;
      if (const E* e = std::get_if<E>(&ev->value))
        return *e;
    }
    return fail(ledger_errc::storage,
                "transaction " + hx(r.transaction_hash) + ": no " + std::string(E::kSignature) + " log in its receipt");
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
          if (!l.topics.empty() && l.topics[0] == reg::topic0<reg::api_payer_set_event>())
            payers_changed = true;
        }
        if (l.block_number < next_index_block || !index_any || l.block_number > index_to)
          continue;
        auto ev = reg::decode_log(l.topics, l.data);
        if (!ev) {
          if (ev.code() == abi_errc::selector_mismatch)
            continue;  // not a registry event (a later version's): nothing to index
          return fail(ledger_errc::storage,
                      "registry log in block " + std::to_string(l.block_number) + ": " + ev.err().message);
        }
        if (bookkeeping_log(ev->name) || !ev->account_hash)
          continue;
        // An own transaction's sender is known from its receipt; another's is asked for.
        const std::string tx = hx(l.transaction_hash);
        event e;
        e.name = ev->name;
        e.account = *ev->account_hash;
        e.data = std::move(ev->args);
        if (!senderless_event(e.name)) {
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
        }
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
    auto p = view(reg::api_payers_call{}, std::nullopt, chain::block_tag::latest());
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

// =============================================================================================
// open

result<std::unique_ptr<evm_ledger>> open_evm(evm_options options, std::vector<std::shared_ptr<tx_signer>> signers) {
  auto s = std::make_unique<evm_ledger::state>(std::move(options));
  evm_ledger::state& st = *s;
  st.signers = std::move(signers);
  chain::rpc_options ro;
  ro.url = st.opt.rpc_url;
  ro.timeout = st.opt.rpc_timeout;
  auto client = chain::rpc_client::create(ro);
  if (!client)
    return fail(ledger_errc::invalid_argument, "rpc_url: " + client.err().message);
  st.rpc = std::make_shared<chain::rpc_client>(std::move(*client));

  auto id = st.rpc->chain_id();
  if (!id)
    return st.node_failure(id.err());
  if (*id != st.opt.chain_id)
    return fail(ledger_errc::invalid_argument, "chain_id: the node at " + st.node + " is on chain " +
                                                   std::to_string(*id) + ", the ledger is configured for chain " +
                                                   std::to_string(st.opt.chain_id));
  auto head = st.rpc->block_number();
  if (!head)
    return st.node_failure(head.err());
  auto code = st.rpc->code(st.opt.registry);
  if (!code)
    return st.node_failure(code.err());
  if (code->empty())
    return fail(ledger_errc::invalid_argument, "registry " + hx(st.opt.registry) +
                                                   ": no contract at this address on chain " + std::to_string(*id) +
                                                   " (deploy one with `enact-server deploy-registry`)");
  const auto not_registry = [&](const std::string& why) {
    return fail(ledger_errc::invalid_argument,
                "registry " + hx(st.opt.registry) +
                    ": the contract there does not answer apiPayers() as the permission registry "
                    "does (" +
                    why + ")");
  };
  auto answer = st.rpc->call(st.opt.registry, reg::encode(reg::api_payers_call{}));
  if (!answer) {
    if (chain::registry_revert(answer.err()))
      return not_registry(answer.err().message);
    return st.node_failure(answer.err());
  }
  auto payers = reg::decode_result<reg::api_payers_call>(*answer);
  if (!payers)
    return not_registry(payers.err().message);
  st.payers = std::move(*payers);
  if (st.opt.bookkeeping_sender) {
    st.bookkeeper = st.opt.bookkeeping_sender;
  } else {
    for (const address& p : st.payers)
      if (st.signer_for(p) != nullptr) {
        st.bookkeeper = p;
        break;
      }
  }

  if (st.opt.deployment_block) {
    st.deployment_block = *st.opt.deployment_block;
  } else {
    // The first block with code at the address; a node that keeps no past state answers an
    // error, and numbering starts at block 0 (slower to index, same numbers).
    uint64_t lo = 0;
    uint64_t hi = *head;
    bool found = true;
    while (lo < hi) {
      const uint64_t mid = lo + (hi - lo) / 2;
      auto c = st.rpc->code(st.opt.registry, chain::block_tag::number(mid));
      if (!c) {
        found = false;
        break;
      }
      if (c->empty())
        lo = mid + 1;
      else
        hi = mid;
    }
    st.deployment_block = found ? lo : 0;
  }
  st.next_index_block = st.deployment_block;
  // The cache starts empty: logs before now need not invalidate anything.
  st.next_invalidate_block = *head + 1;

  std::unique_ptr<evm_ledger> l(new evm_ledger(std::move(s)));
  l->state_->poller = std::thread([st = l->state_.get()] { st->run_poller(); });
  return l;
}

evm_ledger::evm_ledger(std::unique_ptr<state> s) : state_(std::move(s)) {}

evm_ledger::~evm_ledger() {
  {
    std::lock_guard lock(state_->poll_mu);
    state_->stopping = true;
  }
  state_->poll_cv.notify_all();
  if (state_->poller.joinable())
    state_->poller.join();
}

const address& evm_ledger::registry() const { return state_->opt.registry; }

uint64_t evm_ledger::deployment_block() const { return state_->deployment_block; }

cache_stats evm_ledger::cache_statistics() const { return state_->cache.stats(); }

std::vector<address> evm_ledger::api_payers() const {
  std::lock_guard lock(state_->payers_mu);
  return state_->payers;
}

// =============================================================================================
// accounts

result<void> evm_ledger::new_account(const write_context& w, const account& a) {
  ENACT_TRY_VOID(state_->write(
      w, a.hash, reg::encode(reg::new_account_call{a.hash, a.admin, a.managed, a.name, a.description, a.email})));
  return {};
}

result<account> evm_ledger::get_account(const account_hash& h) const {
  ENACT_TRY(const reg::account_view v, state_->view(reg::get_account_call{h}, h));
  return to_account(v);
}

result<account> evm_ledger::account_by_admin(const address& admin) const {
  auto v = state_->view(reg::account_by_admin_call{admin}, std::nullopt);
  if (!v) {
    if (v.code() == ledger_errc::unknown_account)
      return fail(ledger_errc::unknown_account, "admin " + hx(admin) + ": administers no account");
    return std::move(v).err();
  }
  return to_account(*v);
}

result<void> evm_ledger::convert_to_chain_secured(const write_context& w, const account_hash& h,
                                                  const address& new_admin) {
  // After the conversion the sender is no longer the admin; a charge paid by the old admin
  // (not an api payer) is therefore taken before the conversion in the same multicall.
  const auto payers = api_payers();
  const bool payer = std::find(payers.begin(), payers.end(), w.sender) != payers.end();
  ENACT_TRY_VOID(state_->write(w, h, reg::encode(reg::convert_to_chain_secured_call{h, new_admin}), !payer));
  return {};
}

// =============================================================================================
// usage keys

result<void> evm_ledger::set_usage_key(const write_context& w, const usage_key& k) {
  reg::set_usage_api_key_with_wallet_call c;
  c.account_hash = k.account;
  c.usage_key_hash = k.hash;
  c.expiration = u256{k.expiration};
  c.balance = u256{k.balance};
  c.name = k.name;
  c.description = k.description;
  c.permissions = k.permissions;
  c.wallet = k.wallet;
  ENACT_TRY_VOID(state_->write(w, k.account, reg::encode(c)));
  return {};
}

result<void> evm_ledger::update_usage_key_metadata(const write_context& w, const account_hash& account,
                                                   const hash256& key_hash, std::string_view name,
                                                   std::string_view description) {
  ENACT_TRY_VOID(state_->write(w, account,
                               reg::encode(reg::update_usage_api_key_metadata_call{account, key_hash, std::string(name),
                                                                                   std::string(description)})));
  return {};
}

result<void> evm_ledger::remove_usage_key(const write_context& w, const account_hash& account,
                                          const hash256& key_hash) {
  ENACT_TRY_VOID(state_->write(w, account, reg::encode(reg::remove_usage_api_key_call{account, key_hash})));
  return {};
}

result<usage_key> evm_ledger::find_usage_key(const hash256& key_hash) const {
  auto v = state_->view(reg::get_usage_api_key_call{key_hash}, std::nullopt);
  if (!v) {
    if (v.code() == ledger_errc::unknown_usage_key)
      return fail(ledger_errc::unknown_usage_key, "usage key " + hx(key_hash) + ": no such key");
    return std::move(v).err();
  }
  return to_usage_key(*v);
}

result<page<usage_key>> evm_ledger::list_usage_keys(const account_hash& account, page_request p) const {
  ENACT_TRY(const auto args, page_args(p));
  ENACT_TRY(const auto v, state_->view(reg::list_usage_api_keys_call{account, args.first, args.second}, account));
  return to_page<usage_key>(v, to_usage_key);
}

// =============================================================================================
// groups

result<group> evm_ledger::add_group(const write_context& w, const account_hash& account, const group& g) {
  ENACT_TRY(const chain::receipt r,
            state_->write(w, account,
                          reg::encode(reg::add_group_call{account, g.name, g.description, g.pkps, g.cid_hashes})));
  ENACT_TRY(const reg::group_added_event e, state_->receipt_event<reg::group_added_event>(r));
  group out = g;
  out.id = e.group_id;
  return out;
}

result<group> evm_ledger::update_group(const write_context& w, const account_hash& account, const group& g) {
  ENACT_TRY_VOID(state_->write(
      w, account, reg::encode(reg::update_group_call{account, g.id, g.name, g.description, g.pkps, g.cid_hashes})));
  return g;
}

result<void> evm_ledger::remove_group(const write_context& w, const account_hash& account, group_id id) {
  ENACT_TRY_VOID(state_->write(w, account, reg::encode(reg::remove_group_call{account, id})));
  return {};
}

result<group> evm_ledger::get_group(const account_hash& account, group_id id) const {
  ENACT_TRY(const reg::group_view v, state_->view(reg::get_group_call{account, id}, account));
  return to_group(v);
}

result<page<group>> evm_ledger::list_groups(const account_hash& account, page_request p) const {
  ENACT_TRY(const auto args, page_args(p));
  ENACT_TRY(const auto v, state_->view(reg::list_groups_call{account, args.first, args.second}, account));
  return to_page<group>(v, to_group);
}

result<std::vector<group>> evm_ledger::all_groups(const account_hash& account) const {
  ENACT_TRY(const auto v, state_->view(reg::list_groups_call{account, u256{0}, u256::max()}, account));
  std::vector<group> out;
  out.reserve(v.items.size());
  for (const auto& g : v.items)
    out.push_back(to_group(g));
  return out;
}

namespace {
/// The group as the block of `r` left it (the write's own answer, past the cache).
result<group> group_after(const evm_ledger::state& s, const chain::receipt& r, const account_hash& account,
                          group_id id) {
  ENACT_TRY(const reg::group_view v,
            s.view(reg::get_group_call{account, id}, account, chain::block_tag::number(r.block_number)));
  return to_group(v);
}
}  // namespace

result<group> evm_ledger::add_pkp_to_group(const write_context& w, const account_hash& account, group_id id,
                                           const address& pkp) {
  ENACT_TRY(const chain::receipt r,
            state_->write(w, account, reg::encode(reg::add_pkp_to_group_call{account, id, pkp})));
  return group_after(*state_, r, account, id);
}

result<group> evm_ledger::remove_pkp_from_group(const write_context& w, const account_hash& account, group_id id,
                                                const address& pkp) {
  ENACT_TRY(const chain::receipt r,
            state_->write(w, account, reg::encode(reg::remove_pkp_from_group_call{account, id, pkp})));
  return group_after(*state_, r, account, id);
}

result<group> evm_ledger::add_action_to_group(const write_context& w, const account_hash& account, group_id id,
                                              const hash256& hashed_cid) {
  ENACT_TRY(const chain::receipt r,
            state_->write(w, account, reg::encode(reg::add_action_to_group_call{account, id, hashed_cid})));
  return group_after(*state_, r, account, id);
}

result<group> evm_ledger::remove_action_from_group(const write_context& w, const account_hash& account, group_id id,
                                                   const hash256& hashed_cid) {
  ENACT_TRY(const chain::receipt r,
            state_->write(w, account, reg::encode(reg::remove_action_from_group_call{account, id, hashed_cid})));
  return group_after(*state_, r, account, id);
}

// =============================================================================================
// PKP registry

result<void> evm_ledger::register_wallet(const write_context& w, const account_hash& account, const wallet& wl) {
  ENACT_TRY_VOID(state_->write(w, account,
                               reg::encode(reg::register_wallet_derivation_call{account, wl.pkp_id, wl.derivation_path,
                                                                                wl.name, wl.description})));
  return {};
}

result<wallet> evm_ledger::get_wallet(const account_hash& account, const address& pkp_id) const {
  ENACT_TRY(const reg::wallet_view v, state_->view(reg::get_wallet_call{account, pkp_id}, account));
  return to_wallet(v);
}

result<page<wallet>> evm_ledger::list_wallets(const account_hash& account, page_request p) const {
  ENACT_TRY(const auto args, page_args(p));
  ENACT_TRY(const auto v, state_->view(reg::list_wallets_call{account, args.first, args.second}, account));
  return to_page<wallet>(v, to_wallet);
}

result<page<wallet>> evm_ledger::list_wallets_in_group(const account_hash& account, group_id id, page_request p) const {
  ENACT_TRY(const auto args, page_args(p));
  ENACT_TRY(const auto v, state_->view(reg::list_wallets_in_group_call{account, id, args.first, args.second}, account));
  return to_page<wallet>(v, to_wallet);
}

result<uint64_t> evm_ledger::wallet_count(const account_hash& account) const {
  ENACT_TRY(const reg::account_view v, state_->view(reg::get_account_call{account}, account));
  return clamp64(v.wallet_count);
}

// =============================================================================================
// actions

result<void> evm_ledger::add_action(const write_context& w, const account_hash& account, const action& a) {
  ENACT_TRY_VOID(state_->write(w, account,
                               reg::encode(reg::add_action_call{account, a.hashed_cid, a.cid, a.name, a.description})));
  return {};
}

result<action> evm_ledger::update_action_metadata(const write_context& w, const account_hash& account,
                                                  const hash256& hashed_cid, std::string_view name,
                                                  std::string_view description) {
  ENACT_TRY(const chain::receipt r,
            state_->write(w, account,
                          reg::encode(reg::update_action_metadata_call{account, hashed_cid, std::string(name),
                                                                       std::string(description)})));
  ENACT_TRY(const reg::action_view v,
            state_->view(reg::get_action_call{account, hashed_cid}, account, chain::block_tag::number(r.block_number)));
  return to_action(v);
}

result<void> evm_ledger::delete_action(const write_context& w, const account_hash& account, const hash256& hashed_cid) {
  ENACT_TRY_VOID(state_->write(w, account, reg::encode(reg::delete_action_call{account, hashed_cid})));
  return {};
}

result<action> evm_ledger::get_action(const account_hash& account, const hash256& hashed_cid) const {
  ENACT_TRY(const reg::action_view v, state_->view(reg::get_action_call{account, hashed_cid}, account));
  return to_action(v);
}

result<page<action>> evm_ledger::list_actions(const account_hash& account, std::optional<group_id> group,
                                              page_request p) const {
  ENACT_TRY(const auto args, page_args(p));
  if (!group) {
    ENACT_TRY(const auto v, state_->view(reg::list_actions_call{account, args.first, args.second}, account));
    return to_page<action>(v, to_action);
  }
  ENACT_TRY(const auto v,
            state_->view(reg::list_actions_in_group_call{account, *group, args.first, args.second}, account));
  return to_page<action>(v, to_action);
}

// =============================================================================================
// credits

result<uint64_t> evm_ledger::balance(const account_hash& account) const {
  ENACT_TRY(const u256 v, state_->view(reg::credit_balance_call{account}, account));
  return clamp64(v);
}

result<uint64_t> evm_ledger::debit(const account_hash& account, uint64_t amount) {
  ENACT_TRY(const chain::receipt r, state_->bookkeeping(reg::encode(reg::debit_credits_call{account, u256{amount}})));
  ENACT_TRY(const reg::credits_debited_event e, state_->receipt_event<reg::credits_debited_event>(r));
  return clamp64(e.balance);
}

result<void> evm_ledger::record_payment(const payment& p) {
  // The registry records payments uncredited; it cannot be told otherwise.
  if (p.credited)
    return fail(ledger_errc::invalid_argument,
                "credited: a payment is recorded uncredited and credited by credit_payment");
  ENACT_TRY_VOID(state_->bookkeeping(
      reg::encode(reg::record_payment_call{p.account, p.intent_id, u256{p.amount_cents}, p.provider})));
  return {};
}

result<payment> evm_ledger::get_payment(const account_hash& account, std::string_view intent_id) const {
  ENACT_TRY(const reg::payment_view v, state_->view(reg::get_payment_call{account, std::string(intent_id)}, account));
  payment p;
  p.intent_id = v.intent_id;
  p.account = v.account_hash;
  p.amount_cents = clamp64(v.amount_cents);
  p.provider = v.provider;
  p.credited = v.credited;
  p.created_at = time64(v.created_at);
  return p;
}

result<uint64_t> evm_ledger::credit_payment(const account_hash& account, std::string_view intent_id) {
  ENACT_TRY(const chain::receipt r,
            state_->bookkeeping(reg::encode(reg::credit_payment_call{account, std::string(intent_id)})));
  ENACT_TRY(const reg::payment_credited_event e, state_->receipt_event<reg::payment_credited_event>(r));
  return clamp64(e.balance);
}

// =============================================================================================
// events

result<std::vector<event>> evm_ledger::events_after(uint64_t after, size_t limit) const {
  if (limit == 0)
    return std::vector<event>{};
  std::lock_guard lock(state_->index_mu);
  ENACT_TRY_VOID(state_->sync_locked());
  const std::vector<event>& all = state_->events;
  std::vector<event> out;
  if (after >= all.size())
    return out;
  const size_t n = std::min<size_t>(limit, all.size() - after);
  out.assign(all.begin() + static_cast<ptrdiff_t>(after), all.begin() + static_cast<ptrdiff_t>(after + n));
  return out;
}

}  // namespace enact::ledger
