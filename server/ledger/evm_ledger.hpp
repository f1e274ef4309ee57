// SPDX-License-Identifier: Apache-2.0
// `enact::ledger::evm_ledger`: the permission ledger kept by the Solidity registry on an EVM node,
// behind `permission_ledger` so that the conformance suite in tests/ledger passes unchanged. Writes,
// reads, the event-invalidated cache and failures: docs/architecture.md §4 "The evm ledger".
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "enact/chain/client.hpp"
#include "enact/secret.hpp"
#include "ledger/ledger.hpp"

namespace enact::ledger {

// ---------------------------------------------------------------------------------------------
// Signers: who sends a write's transaction.

/// Sends transactions as one or more addresses. Thread-safe.
class tx_signer {
 public:
  virtual ~tx_signer() = default;
  /// Whether this signer sends as `from`.
  [[nodiscard]] virtual bool sends_as(const address& from) const = 0;
  /// Sends `data` to `to` as `from` with `gas_limit` and waits for the receipt. Errors are
  /// rpc_errc: transport failures, timeout (no receipt in time), tx_failed (status 0).
  [[nodiscard]] virtual result<chain::receipt> send(const address& from, const address& to, bytes_view data,
                                                    uint64_t gas_limit) = 0;
};

/// Production signer: one `chain::transaction_sender` per private key, so each key's nonces are
/// assigned under its own mutex by every concurrent request, and fetched from the node's pending
/// count on first use (a restarted server continues where the chain is). A transaction without a
/// receipt after `sender_options::replace_after` is replaced with fees raised by 12.5 %.
class key_signer final : public tx_signer {
 public:
  /// secp256k1_errc for a key that is not a valid private key; invalid_argument for none.
  [[nodiscard]] static result<std::unique_ptr<key_signer>> create(std::shared_ptr<const chain::rpc_client> client,
                                                                  std::vector<Secret> keys,
                                                                  chain::sender_options options = {});

  [[nodiscard]] bool sends_as(const address& from) const override;
  [[nodiscard]] result<chain::receipt> send(const address& from, const address& to, bytes_view data,
                                            uint64_t gas_limit) override;
  /// The keys' addresses, in the order given.
  [[nodiscard]] std::vector<address> addresses() const;

 private:
  key_signer() = default;
  std::vector<address> order_;
  std::map<address, std::unique_ptr<chain::transaction_sender>> senders_;
};

/// Test signer for a node that accepts eth_sendTransaction from any address (anvil
/// --auto-impersonate): sends as every address, giving each one ether (anvil_setBalance) before
/// its first transaction. Sends from one address are serialised (the node assigns the nonces).
class impersonating_signer final : public tx_signer {
 public:
  struct options {
    std::chrono::milliseconds receipt_timeout{60000};
    std::chrono::milliseconds poll_interval{100};
  };
  explicit impersonating_signer(std::shared_ptr<const chain::rpc_client> client);
  impersonating_signer(std::shared_ptr<const chain::rpc_client> client, options o);

  [[nodiscard]] bool sends_as(const address&) const override { return true; }
  [[nodiscard]] result<chain::receipt> send(const address& from, const address& to, bytes_view data,
                                            uint64_t gas_limit) override;

 private:
  std::shared_ptr<const chain::rpc_client> client_;
  options options_;
  std::mutex mu_;
  std::set<address> funded_;
  std::map<address, std::unique_ptr<std::mutex>> per_sender_;
};

// ---------------------------------------------------------------------------------------------
// The ledger

struct evm_options {
  /// The node's JSON-RPC endpoint (http:// or https://).
  std::string rpc_url;
  /// The registry's address.
  address registry{};
  /// Checked against eth_chainId at open (invalid_argument when they differ).
  uint64_t chain_id = 0;
  /// Per JSON-RPC request (connect, then answer).
  std::chrono::milliseconds rpc_timeout{5000};
  /// Reads through the cache; off: every read is an eth_call.
  bool cache = true;
  size_t cache_entries = 4096;
  /// How often the registry's logs are asked for (cache invalidation, event index).
  std::chrono::milliseconds event_poll_interval{1000};
  /// Blocks this close to the head are not indexed yet.
  uint64_t confirmations = 0;
  /// The block the registry was deployed in (where event numbering starts); absent: found with
  /// eth_getCode by bisection (the node must answer for past blocks), else block 0.
  std::optional<uint64_t> deployment_block;
  /// Blocks per eth_getLogs request (public nodes limit the range).
  uint64_t log_range = 5000;
  /// Gas limit = estimate × (100 + margin) / 100.
  unsigned gas_margin_percent = 20;
};

/// Cache counters (tests, benchmarks).
struct cache_stats {
  uint64_t hits = 0;
  uint64_t misses = 0;
  uint64_t invalidations = 0;  // entries dropped by logs
  size_t entries = 0;
};

class evm_ledger final : public permission_ledger {
 public:
  ~evm_ledger() override;
  evm_ledger(const evm_ledger&) = delete;
  evm_ledger& operator=(const evm_ledger&) = delete;

  ENACT_PERMISSION_LEDGER_OVERRIDES

  // --- beyond the interface ---------------------------------------------------------------------
  [[nodiscard]] const address& registry() const;
  [[nodiscard]] uint64_t deployment_block() const;
  [[nodiscard]] cache_stats cache_statistics() const;

  struct state;

 private:
  friend result<std::unique_ptr<evm_ledger>> open_evm(evm_options, std::vector<std::shared_ptr<tx_signer>>);
  explicit evm_ledger(std::unique_ptr<state> s);
  std::unique_ptr<state> state_;
};

/// Connects to the node, checks its chain id (invalid_argument when it differs), that the
/// registry address holds a registry (invalid_argument when there is no code, or apiPayers()
/// does not answer), reads the api payers, finds the deployment block and starts the poller.
/// storage when the node cannot be reached.
[[nodiscard]] result<std::unique_ptr<evm_ledger>> open_evm(evm_options options,
                                                           std::vector<std::shared_ptr<tx_signer>> signers);

}  // namespace enact::ledger
