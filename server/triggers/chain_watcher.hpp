// SPDX-License-Identifier: Apache-2.0
// The chain watcher of chain-event triggers (docs/architecture.md §4 "Trigger service", docs/protocol.md §4): one
// thread per configured chain polls the node's head and, for each enabled chain-event trigger of
// that chain, turns every matching log into a queued run.
//
// Per trigger:
//  - selection: eth_getLogs by contract address, topic0 = keccak256 of the event's canonical
//    signature, and the config's topic filters (a topic, alternatives, or null = any);
//  - confirmations: a log fires once its block is `confirmations` blocks below the head (the
//    trigger's config.confirmations, else the chain's default; 0 fires at the head);
//  - backfill: from config.start_block (else the safe head when the watcher first sees the
//    trigger) in eth_getLogs ranges of at most `max_range` blocks (at most 64 ranges per trigger
//    and pass, so one long backfill does not hold back the others); a range the node refuses as
//    too large ("too many results", "block range", "limit exceeded") is halved down to one
//    block, and each accepted range lets the next one double again up to `max_range`;
//  - checkpoint: the last fully processed block and its hash, stored with the range's logs and
//    runs in one transaction (store::record_chain_batch), so a crash never loses or repeats a
//    firing, and a restart resumes after the checkpoint when the chain still has its block. A
//    batch is written only over the checkpoint its pass read: a PATCH that sets a new start_block
//    drops the checkpoint (store::update_trigger), and the next pass restarts from start_block
//    (an earlier one backfills; seen logs do not fire again);
//  - de-duplication: a log is keyed (trigger, block hash, log index); the store queues a run only
//    for a key it has not seen, so restarts, overlapping ranges and re-scans never fire twice;
//  - reorganisations: when the chain's block at the checkpoint no longer has the stored hash
//    (also across a restart; a checkpoint stored without a hash counts as changed), it checks the
//    trigger's seen logs of the last `reorg_window` blocks against the canonical chain, marks
//    those of replaced blocks `removed` in the seen-log table (their runs stay as they are: an
//    action that already ran cannot be undone), and re-scans from the block after the highest
//    seen block that is still canonical. A log of the new chain fires (it has a new block hash);
//    a log whose block comes back with the same hash does not fire again. A reorganisation
//    deeper than `reorg_window` blocks is detected, but only its last `reorg_window` blocks are
//    re-scanned.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "enact/chain/client.hpp"
#include "enact/codec/abi.hpp"
#include "enact/result.hpp"
#include "triggers/clock.hpp"
#include "triggers/scheduler.hpp"
#include "triggers/store.hpp"

namespace enact::triggers {

/// One chain the watcher polls.
struct chain_watch_config {
  std::string chain;    // "ethereum", "svc", ... (validate.hpp kChains)
  std::string rpc_url;  // JSON-RPC endpoint
  /// Blocks below the head a log waits before it fires, unless the trigger sets its own
  /// config.confirmations. 0 suits dev chains (anvil); public chains want more (docs/triggers.md).
  uint64_t confirmations = 0;
  std::chrono::milliseconds poll_interval{2000};
  /// Most blocks per eth_getLogs request.
  uint64_t max_range = 2000;
  /// How far below a checkpoint a reorganisation is looked for.
  uint64_t reorg_window = 128;
  std::chrono::milliseconds rpc_timeout{10000};
};

/// The params of a chain-event run (docs/protocol.md §4):
/// `{"event": {"address", "block_number", "block_hash", "transaction_hash", "log_index", "topics",
/// "data", "decoded": {"arg0": …}, "chain"}}`. Indexed value-type arguments are decoded from their
/// topics, indexed dynamic ones (string, bytes, arrays, tuples) are their topic (the keccak256 of
/// the value, all a log carries), the others are decoded from the data with the SDK's ABI decoder
/// (integers as decimal strings, addresses checksummed, bytes as 0x-hex). nullopt when the log
/// does not have the event's shape (another topic count, undecodable data).
[[nodiscard]] std::optional<json::object> chain_event_params(const codec::abi::function_sig& event,
                                                             const chain::log_entry& log, std::string_view chain);

/// Counters of one chain, for tests, benchmarks and diagnostics.
struct chain_watch_stats {
  uint64_t polls = 0;          // passes over the chain's triggers
  uint64_t get_logs = 0;       // eth_getLogs requests answered
  uint64_t range_shrinks = 0;  // ranges halved after a refusal
  uint64_t reorgs = 0;         // reorganisations detected
  uint64_t logs_removed = 0;   // seen logs marked removed
  uint64_t runs_queued = 0;
  uint64_t errors = 0;  // passes of a trigger that stopped on an error
};

class chain_watcher {
 public:
  /// `on_fired` runs after each commit that queued runs (it wakes the run workers); `log` gets
  /// what went wrong. `s` and `c` must outlive the watcher.
  chain_watcher(store& s, const clock& c, std::vector<chain_watch_config> chains, std::function<void()> on_fired = {},
                event_sink log = {});
  ~chain_watcher();
  chain_watcher(const chain_watcher&) = delete;
  chain_watcher& operator=(const chain_watcher&) = delete;

  /// Starts one polling thread per chain.
  void start();
  /// Stops the threads (idempotent); a pass in progress finishes its current range first.
  void stop();
  /// Polls every chain now instead of after its interval (e.g. after a trigger was created).
  void wake();

  /// One pass over `chain`'s triggers on the calling thread (tests, benchmarks; not while the
  /// chain's thread runs): each trigger up to the confirmed head, or by 64 ranges. Returns the
  /// runs queued; an unknown chain is store_errc::not_found.
  [[nodiscard]] result<size_t> poll_once(std::string_view chain);

  [[nodiscard]] chain_watch_stats stats(std::string_view chain) const;

 private:
  struct chain_state;
  struct trigger_state;
  void run(chain_state& cs);
  size_t pass(chain_state& cs);
  result<size_t> process(chain_state& cs, const trigger& listed, uint64_t head);
  void report(severity level, std::string_view msg, json::object fields) const;

  store& store_;
  const clock& clock_;
  std::function<void()> on_fired_;
  event_sink log_;
  std::vector<std::unique_ptr<chain_state>> chains_;
  std::atomic<bool> stopping_{false};
  std::mutex mu_;  // guards wake_ waits
  std::condition_variable wake_;
  uint64_t wake_seq_ = 0;
};

}  // namespace enact::triggers
