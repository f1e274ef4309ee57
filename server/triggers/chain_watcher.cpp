// SPDX-License-Identifier: Apache-2.0
#include "triggers/chain_watcher.hpp"

#include <algorithm>
#include <cctype>
#include <set>
#include <unordered_map>

#include "enact/codec/hex.hpp"
#include "enact/codec/abi_json.hpp"
#include "enact/address.hpp"
#include "enact/crypto/keccak.hpp"
#include "triggers/ids.hpp"

namespace enact::triggers {

namespace {

bool is_value_type(const codec::abi::type& t) {
  switch (t.kind) {
    case codec::abi::type_kind::uint_n:
    case codec::abi::type_kind::int_n:
    case codec::abi::type_kind::address:
    case codec::abi::type_kind::boolean:
    case codec::abi::type_kind::fixed_bytes:
      return true;
    default:
      return false;
  }
}

/// A refusal that a smaller range may avoid: providers answer a too-wide eth_getLogs with a node
/// error ("query returned more than 10000 results", "block range is too wide", "limit exceeded",
/// "response size exceeded") or let it time out.
bool is_range_error(const error& e) {
  if (e.code == rpc_errc::timeout)
    return true;
  if (e.code != rpc_errc::node_error && e.code != rpc_errc::http_status)
    return false;
  std::string m = e.message;
  std::transform(m.begin(), m.end(), m.begin(), [](unsigned char c) { return std::tolower(c); });
  for (const char* needle : {"too many", "more than", "range", "limit", "exceed", "too large", "too big", "size"})
    if (m.find(needle) != std::string::npos)
      return true;
  return false;
}

/// eth_getLogs ranges one trigger processes per pass at most, so that one long backfill does not
/// hold back the other triggers of its chain.
constexpr size_t kRangesPerPass = 64;

}  // namespace

std::optional<json::object> chain_event_params(const codec::abi::function_sig& event, const chain::log_entry& log,
                                               std::string_view chain) {
  const auto indexed = static_cast<size_t>(std::count(event.indexed.begin(), event.indexed.end(), true));
  if (log.topics.size() != indexed + 1)
    return std::nullopt;
  json::object decoded;
  try {
    std::vector<codec::abi::type> data_types;
    std::vector<size_t> data_positions;
    size_t topic = 1;
    for (size_t i = 0; i < event.inputs.size(); ++i) {
      const auto& t = event.inputs[i];
      const std::string key = "arg" + std::to_string(i);
      if (i < event.indexed.size() && event.indexed[i]) {
        const hash256& word = log.topics[topic++];
        if (!is_value_type(t)) {
          // Solidity stores keccak256 of an indexed dynamic value, not the value.
          decoded[key] = codec::hex::encode_prefixed(word);
          continue;
        }
        auto v = codec::abi::decode(std::span<const codec::abi::type>(&t, 1), word);
        if (!v)
          return std::nullopt;
        decoded[key] = codec::abi::to_json(t, v->front());
      } else {
        data_types.push_back(t);
        data_positions.push_back(i);
      }
    }
    if (!data_types.empty()) {
      auto values = codec::abi::decode(data_types, log.data);
      if (!values)
        return std::nullopt;
      for (size_t j = 0; j < data_types.size(); ++j)
        decoded["arg" + std::to_string(data_positions[j])] = codec::abi::to_json(data_types[j], (*values)[j]);
    }
  } catch (const Error&) {
    return std::nullopt;
  }
  json::array topics;
  for (const auto& t : log.topics)
    topics.emplace_back(codec::hex::encode_prefixed(t));
  json::object e;
  e["address"] = to_checksum_address(log.address);
  e["block_number"] = log.block_number;
  e["block_hash"] = codec::hex::encode_prefixed(log.block_hash);
  e["transaction_hash"] = codec::hex::encode_prefixed(log.transaction_hash);
  e["log_index"] = log.log_index;
  e["topics"] = std::move(topics);
  e["data"] = codec::hex::encode_prefixed(log.data);
  e["decoded"] = std::move(decoded);
  e["chain"] = chain;
  return json::object{{"event", std::move(e)}};
}

/// What the watcher keeps of one trigger between passes, in memory: the selection built from its
/// config, and the range size. Where it stands is the store's (the checkpoint and its hash).
struct chain_watcher::trigger_state {
  std::optional<api::chain_event_config> config;  // the config this state was built from
  codec::abi::function_sig event;
  address contract{};
  std::vector<std::vector<hash256>> topics;  // topic0, then the filters
  std::optional<uint64_t> start;
  std::optional<uint64_t> confirmations;
  uint64_t range = 0;
  std::optional<chain_position> reorg_seen;  // the replaced checkpoint last reported
  std::string last_error;                    // reported once until it changes
};

struct chain_watcher::chain_state {
  chain_watch_config cfg;
  bool behind = false;  // a trigger stopped at kRangesPerPass: the next pass starts at once
  std::optional<chain::rpc_client> rpc;
  std::string setup_error;
  std::thread thread;
  mutable std::mutex stats_mu;
  chain_watch_stats stats;
  std::unordered_map<std::string, trigger_state> triggers;
  std::map<uint64_t, std::optional<hash256>> hashes;  // block hashes read in this pass
  std::string last_error;

  template <class F>
  void count(F f) {
    std::lock_guard lk(stats_mu);
    f(stats);
  }

  /// The canonical hash at `n` (nullopt: the node has no such block), once per pass.
  result<std::optional<hash256>> hash_at(uint64_t n, bool fresh = false) {
    if (!fresh)
      if (auto it = hashes.find(n); it != hashes.end())
        return it->second;
    ENACT_TRY(const auto b, rpc->block_by_number(chain::block_tag::number(n)));
    std::optional<hash256> h;
    if (b)
      h = b->hash;
    hashes[n] = h;
    return h;
  }
};

chain_watcher::chain_watcher(store& s, const clock& c, std::vector<chain_watch_config> chains,
                             std::function<void()> on_fired, event_sink log)
    : store_(s), clock_(c), on_fired_(std::move(on_fired)), log_(std::move(log)) {
  for (auto& cfg : chains) {
    auto cs = std::make_unique<chain_state>();
    cs->cfg = std::move(cfg);
    if (cs->cfg.max_range == 0)
      cs->cfg.max_range = 1;
    chain::rpc_options o;
    o.url = cs->cfg.rpc_url;
    o.timeout = cs->cfg.rpc_timeout;
    auto rpc = chain::rpc_client::create(std::move(o));
    if (rpc)
      cs->rpc.emplace(std::move(*rpc));
    else
      cs->setup_error = rpc.err().message;
    chains_.push_back(std::move(cs));
  }
}

chain_watcher::~chain_watcher() { stop(); }

void chain_watcher::report(severity level, std::string_view msg, json::object fields) const {
  if (log_)
    log_(level, msg, std::move(fields));
}

void chain_watcher::start() {
  stopping_ = false;
  for (auto& cs : chains_) {
    if (cs->thread.joinable())
      continue;
    chain_state* p = cs.get();
    cs->thread = std::thread([this, p] { run(*p); });
  }
}

void chain_watcher::stop() {
  {
    std::lock_guard lk(mu_);
    stopping_ = true;
    ++wake_seq_;
  }
  wake_.notify_all();
  for (auto& cs : chains_)
    if (cs->thread.joinable())
      cs->thread.join();
}

void chain_watcher::wake() {
  {
    std::lock_guard lk(mu_);
    ++wake_seq_;
  }
  wake_.notify_all();
}

void chain_watcher::run(chain_state& cs) {
  while (!stopping_) {
    pass(cs);
    if (cs.behind)
      continue;
    std::unique_lock lk(mu_);
    const uint64_t seq = wake_seq_;
    const time_point deadline = clock_.now() + cs.cfg.poll_interval;
    while (!stopping_ && wake_seq_ == seq && clock_.now() < deadline)
      clock_.wait_until(lk, wake_, deadline);
  }
}

result<size_t> chain_watcher::poll_once(std::string_view chain) {
  for (auto& cs : chains_)
    if (cs->cfg.chain == chain)
      return pass(*cs);
  return fail(store_errc::not_found, "chain watcher: no chain " + std::string(chain));
}

chain_watch_stats chain_watcher::stats(std::string_view chain) const {
  for (const auto& cs : chains_)
    if (cs->cfg.chain == chain) {
      std::lock_guard lk(cs->stats_mu);
      return cs->stats;
    }
  return {};
}

size_t chain_watcher::pass(chain_state& cs) {
  cs.count([](auto& s) { ++s.polls; });
  cs.hashes.clear();
  cs.behind = false;
  const auto chain_failed = [&](const std::string& detail) {
    cs.count([](auto& s) { ++s.errors; });
    if (detail != cs.last_error)
      report(severity::warn, "chain watcher: cannot read the chain; retrying",
             {{"chain", cs.cfg.chain}, {"detail", detail}});
    cs.last_error = detail;
    return size_t{0};
  };
  if (!cs.rpc)
    return chain_failed(cs.setup_error);
  auto head = cs.rpc->block_number();
  if (!head)
    return chain_failed(head.err().message);
  auto triggers = store_.list_chain_triggers();
  if (!triggers)
    return chain_failed(triggers.err().message);
  cs.last_error.clear();

  std::set<std::string> present;
  size_t queued = 0;
  for (const auto& t : *triggers) {
    if (stopping_)
      break;
    const auto* config = std::get_if<api::chain_event_config>(&t.config);
    if (config == nullptr || config->chain != cs.cfg.chain)
      continue;
    present.insert(t.id);
    auto r = process(cs, t, *head);
    auto& ts = cs.triggers[t.id];
    if (r) {
      queued += *r;
      ts.last_error.clear();
      continue;
    }
    // A trigger disabled or deleted during the pass is no failure: the next pass skips it; nor is
    // a checkpoint moved under the pass (a PATCH of start_block): the next pass starts from it.
    if (r.code() == store_errc::disabled || r.code() == store_errc::not_found || r.code() == store_errc::conflict)
      continue;
    cs.count([](auto& s) { ++s.errors; });
    if (r.err().message != ts.last_error)
      report(severity::warn, "chain watcher: trigger pass failed; retrying",
             {{"chain", cs.cfg.chain}, {"trigger_id", t.id}, {"detail", r.err().message}});
    ts.last_error = r.err().message;
  }
  std::erase_if(cs.triggers, [&](const auto& kv) { return !present.contains(kv.first); });
  return queued;
}

result<size_t> chain_watcher::process(chain_state& cs, const trigger& listed, uint64_t head) {
  // The checkpoint first, then the trigger: a PATCH of start_block that drops the checkpoint
  // after the pass listed the triggers is then either seen in full (no checkpoint, the new
  // start_block) or caught by the batch's expected checkpoint.
  ENACT_TRY(const auto cp, store_.chain_checkpoint(listed.id));
  ENACT_TRY(const trigger t, store_.find_trigger(listed.id));
  if (!t.enabled)
    return fail(store_errc::disabled, "trigger " + t.id + ": disabled");
  auto& ts = cs.triggers[t.id];
  const auto* config = std::get_if<api::chain_event_config>(&t.config);
  if (config == nullptr)
    return fail(store_errc::wrong_type, "trigger " + t.id + ": not a chain-event trigger");
  if (ts.config != *config) {
    // New trigger, or its config changed: rebuild the selection (the stored checkpoint stays).
    trigger_state fresh;
    fresh.config = *config;
    ENACT_TRY(fresh.event, codec::abi::parse_signature(config->event));
    fresh.contract = config->contract;
    fresh.topics.push_back({crypto::keccak256(std::string_view(fresh.event.canonical()))});
    // Each filter: empty for null (any value), else the topics it accepts.
    fresh.topics.insert(fresh.topics.end(), config->topic_filters.begin(), config->topic_filters.end());
    fresh.start = config->start_block;
    fresh.confirmations = config->confirmations;
    fresh.range = cs.cfg.max_range;
    ts = std::move(fresh);
  }

  const uint64_t confirmations = ts.confirmations.value_or(cs.cfg.confirmations);
  if (head < confirmations)
    return size_t{0};
  const uint64_t safe = head - confirmations;

  uint64_t from = 0;
  if (!cp) {
    // Without start_block the trigger watches from the safe head of its first pass on.
    from = ts.start.value_or(safe);
  } else {
    // A node behind the checkpoint (a lagging endpoint, or a chain reorganised to a shorter one)
    // is waited for: once it reaches the checkpoint again its block there is compared.
    if (head < cp->block)
      return size_t{0};
    // The checkpoint's stored hash against the chain's block at that height: equal, nothing
    // below it changed (a block's hash covers its ancestors), and the scan resumes after it.
    // A checkpoint stored without a hash is checked as after a reorganisation.
    bool check = !cp->block_hash;
    if (!check) {
      ENACT_TRY(const auto h, cs.hash_at(cp->block));
      check = !h || *h != *cp->block_hash;
      if (check && ts.reorg_seen != *cp) {
        // Counted and reported once per checkpoint, though re-checked on every pass until the
        // re-scan writes a new one.
        ts.reorg_seen = *cp;
        cs.count([](auto& s) { ++s.reorgs; });
        report(severity::info, "chain watcher: reorganisation below a checkpoint; re-scanning",
               {{"chain", cs.cfg.chain}, {"trigger_id", t.id}, {"checkpoint", cp->block}});
      }
    }
    from = cp->block + 1;
    if (check) {
      // Compare the seen logs of the window with the canonical chain: those of replaced blocks
      // are marked removed, and the scan resumes after the highest seen block still canonical.
      uint64_t window_start = cp->block + 1 > cs.cfg.reorg_window ? cp->block + 1 - cs.cfg.reorg_window : 0;
      window_start = std::max(window_start, ts.start.value_or(0));
      ENACT_TRY(const auto seen, store_.list_seen_logs(t.id, window_start));
      std::optional<uint64_t> last_good;
      std::set<hash256> replaced;
      for (const auto& l : seen) {
        if (replaced.contains(l.block_hash))
          continue;
        ENACT_TRY(const auto h, cs.hash_at(l.block_number));
        if (h && *h == l.block_hash) {
          last_good = std::max(last_good.value_or(0), l.block_number);
        } else {
          replaced.insert(l.block_hash);
          ENACT_TRY(const size_t n, store_.mark_logs_removed(t.id, l.block_hash));
          cs.count([n](auto& s) { s.logs_removed += n; });
          report(severity::info, "chain watcher: logs of a replaced block marked removed",
                 {{"chain", cs.cfg.chain},
                  {"trigger_id", t.id},
                  {"block_number", l.block_number},
                  {"block_hash", codec::hex::encode_prefixed(l.block_hash)},
                  {"logs", n}});
        }
      }
      from = std::min(from, last_good ? std::max(*last_good + 1, window_start) : window_start);
    }
  }

  // Each batch is written only over the checkpoint this pass read (then over its own).
  std::optional<uint64_t> expected = cp ? std::optional<uint64_t>(cp->block) : std::nullopt;
  size_t queued = 0;
  size_t ranges = 0;
  while (from <= safe && !stopping_) {
    if (ranges++ == kRangesPerPass) {
      cs.behind = true;  // a long backfill yields to the chain's other triggers, then resumes
      break;
    }
    const uint64_t span = std::min(ts.range, safe - from + 1);
    const uint64_t to = from + span - 1;
    ENACT_TRY(const auto before, cs.hash_at(to));
    if (!before)
      break;  // a node behind its own head answer (load-balanced endpoints): next pass
    chain::log_filter f;
    f.from_block = chain::block_tag::number(from);
    f.to_block = chain::block_tag::number(to);
    f.addresses = {ts.contract};
    f.topics = ts.topics;
    auto logs = cs.rpc->get_logs(f);
    if (!logs) {
      if (ts.range > 1 && is_range_error(logs.err())) {
        ts.range = std::max<uint64_t>(1, std::min(ts.range, span) / 2);
        cs.count([](auto& s) { ++s.range_shrinks; });
        continue;
      }
      return logs.err();
    }
    cs.count([](auto& s) { ++s.get_logs; });
    // The range's logs belong to the chain whose block `to` has the hash read before the call
    // only if it still has it after: otherwise the chain moved meanwhile and the next pass
    // re-checks.
    ENACT_TRY(const auto after, cs.hash_at(to, true));
    if (after != before)
      break;

    chain_batch batch;
    batch.trigger_id = t.id;
    const time_point now = clock_.now();
    for (const auto& l : *logs) {
      if (l.removed || l.address != ts.contract || l.topics.empty() || l.topics[0] != ts.topics[0][0])
        continue;
      auto params = chain_event_params(ts.event, l, cs.cfg.chain);
      if (!params) {
        report(severity::warn, "chain watcher: a log does not have the event's shape; skipped",
               {{"chain", cs.cfg.chain},
                {"trigger_id", t.id},
                {"transaction_hash", codec::hex::encode_prefixed(l.transaction_hash)},
                {"log_index", l.log_index}});
        continue;
      }
      chain_batch::entry e;
      e.log = seen_log{t.id, l.block_hash, l.log_index, l.block_number, false, new_run_id(), now};
      e.fire = new_run{e.log.run_id, t.id, json::value(std::move(*params)), now};
      batch.logs.push_back(std::move(e));
    }
    batch.checkpoint_block = to;
    batch.checkpoint_hash = *after;
    batch.expected_checkpoint = expected;
    ENACT_TRY(const auto runs, store_.record_chain_batch(batch));
    expected = to;
    queued += runs.size();
    cs.count([&](auto& s) { s.runs_queued += runs.size(); });
    if (!runs.empty() && on_fired_)
      on_fired_();
    from = to + 1;
    if (ts.range < cs.cfg.max_range)
      ts.range = std::min(cs.cfg.max_range, ts.range * 2);
  }
  return queued;
}

}  // namespace enact::triggers
