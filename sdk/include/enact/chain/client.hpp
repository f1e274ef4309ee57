// SPDX-License-Identifier: Apache-2.0
// A JSON-RPC client of an Ethereum node over HTTP(S) (`rpc_client`, part of enact::client; the
// HTTP library stays behind its .cpp), typed for the methods the SDK and the server use:
// eth_chainId, eth_blockNumber, eth_getBlockByNumber, eth_getTransactionCount, eth_getCode,
// eth_getBalance, eth_estimateGas, eth_maxPriorityFeePerGas, eth_call, eth_sendRawTransaction,
// eth_getTransactionReceipt and eth_getLogs. Every method returns `result<T>`: transport failures
// are rpc_errc::unreachable, timeout or http_status; a malformed answer is one of the codec's
// rpc_errc values (rpc.hpp); a node error is rpc_errc::node_error whose message carries the node's
// code and message and, for a revert, the revert data (`revert_data(e)` reads it back,
// `registry_revert(e)` classifies it as a registry error). `transaction_sender` builds, signs,
// sends and waits for EIP-1559 transactions from one key, safely from several threads; it deploys
// contracts and replaces a transaction that stays unmined with a higher fee.
#pragma once

#include <boost/json/array.hpp>
#include <boost/json/value.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "enact/bytes.hpp"
#include "enact/chain/registry.hpp"
#include "enact/chain/rpc.hpp"
#include "enact/u256.hpp"
#include "enact/secret.hpp"
#include "enact/error.hpp"
#include "enact/result.hpp"

namespace enact::chain {

struct rpc_options {
  /// `http://host[:port][/path]` or `https://host[:port][/path]` (no user-info, query or
  /// fragment: credentials go in `headers`).
  std::string url;
  /// Limit for connecting and, separately, for the answer to arrive.
  std::chrono::milliseconds timeout{10000};
  /// Extra request headers (an API key of a hosted node, ...). Never written to error messages.
  std::vector<std::pair<std::string, std::string>> headers;
  /// PEM file of trusted CA certificates for https; empty: the system's default store.
  std::string ca_file;
};

/// A block parameter: a tag ("latest", "pending", ...) or a block number.
struct block_tag {
  std::string value;  // the JSON-RPC parameter as sent

  [[nodiscard]] static block_tag latest() { return {"latest"}; }
  [[nodiscard]] static block_tag pending() { return {"pending"}; }
  [[nodiscard]] static block_tag earliest() { return {"earliest"}; }
  [[nodiscard]] static block_tag safe() { return {"safe"}; }
  [[nodiscard]] static block_tag finalized() { return {"finalized"}; }
  [[nodiscard]] static block_tag number(uint64_t n) { return {u256{n}.to_hex()}; }
};

/// The transaction object of eth_call and eth_estimateGas.
struct call_request {
  std::optional<address> from;
  std::optional<address> to;  // absent: contract creation
  bytes data;
  std::optional<u256> value;
  std::optional<uint64_t> gas;
};

/// A log as eth_getLogs and receipts give it.
struct log_entry {
  enact::address address{};  // the emitting contract
  std::vector<hash256> topics;
  bytes data;
  uint64_t block_number = 0;
  hash256 block_hash{};
  hash256 transaction_hash{};
  uint64_t transaction_index = 0;
  uint64_t log_index = 0;
  bool removed = false;  // true when a reorganisation dropped the log
};

struct receipt {
  hash256 transaction_hash{};
  uint64_t transaction_index = 0;
  hash256 block_hash{};
  uint64_t block_number = 0;
  address from{};
  std::optional<address> to;
  std::optional<address> contract_address;
  uint64_t gas_used = 0;
  uint64_t cumulative_gas_used = 0;
  u256 effective_gas_price;
  bool status = false;  // true: status 1 (success); false: status 0 (reverted)
  std::vector<log_entry> logs;
};

struct block {
  uint64_t number = 0;
  hash256 hash{};
  hash256 parent_hash{};
  uint64_t timestamp = 0;
  std::optional<u256> base_fee_per_gas;  // absent before London (EIP-1559)
};

/// eth_getLogs filter. `topics[i]` constrains topic i: empty = any value (null), one hash =
/// that value, several = any of them. Trailing positions may be left out.
struct log_filter {
  std::optional<block_tag> from_block;
  std::optional<block_tag> to_block;
  std::optional<hash256> block_hash;  // instead of a range (EIP-234)
  std::vector<address> addresses;     // empty: any contract
  std::vector<std::vector<hash256>> topics;
};

/// Thread-safe: requests from several threads run concurrently on separate connections.
class rpc_client {
 public:
  /// rpc_errc::bad_url for a URL it cannot use.
  [[nodiscard]] static result<rpc_client> create(rpc_options options);
  /// Throwing form of create (enact::Error).
  explicit rpc_client(rpc_options options);
  ~rpc_client();
  rpc_client(rpc_client&&) noexcept;
  rpc_client& operator=(rpc_client&&) noexcept;

  [[nodiscard]] const std::string& url() const;

  /// One request; a node error is a successful `reply` whose `error` is set.
  [[nodiscard]] result<rpc::reply> request(std::string_view method, boost::json::array params = {}) const;
  /// One request; a node error becomes rpc_errc::node_error (see the file comment).
  [[nodiscard]] result<boost::json::value> call_method(std::string_view method, boost::json::array params = {}) const;

  [[nodiscard]] result<uint64_t> chain_id() const;
  [[nodiscard]] result<uint64_t> block_number() const;
  /// nullopt when the node has no such block.
  [[nodiscard]] result<std::optional<block>> block_by_number(const block_tag& tag) const;
  [[nodiscard]] result<uint64_t> transaction_count(const address& account,
                                                   const block_tag& tag = block_tag::latest()) const;
  /// The code at `account` (empty for an account without code).
  [[nodiscard]] result<bytes> code(const address& account, const block_tag& tag = block_tag::latest()) const;
  /// The balance of `account` in wei.
  [[nodiscard]] result<u256> balance(const address& account, const block_tag& tag = block_tag::latest()) const;
  [[nodiscard]] result<uint64_t> estimate_gas(const call_request& tx) const;
  [[nodiscard]] result<u256> max_priority_fee_per_gas() const;
  /// The return data; a revert is rpc_errc::node_error with the revert data in the message.
  [[nodiscard]] result<bytes> call(const call_request& tx, const block_tag& tag = block_tag::latest()) const;
  [[nodiscard]] result<bytes> call(const address& to, bytes_view data,
                                   const block_tag& tag = block_tag::latest()) const;
  /// The transaction hash the node reports.
  [[nodiscard]] result<hash256> send_raw_transaction(bytes_view raw) const;
  /// nullopt while the transaction is not mined (or unknown).
  [[nodiscard]] result<std::optional<receipt>> transaction_receipt(const hash256& tx_hash) const;
  [[nodiscard]] result<std::vector<log_entry>> get_logs(const log_filter& filter) const;

 private:
  struct impl;
  explicit rpc_client(std::unique_ptr<impl> p);
  std::unique_ptr<impl> impl_;
};

/// The revert data a node error carried, read back from the error's message (rpc_errc::node_error
/// and the registry errors of transaction_sender). nullopt when there is none.
[[nodiscard]] std::optional<bytes> revert_data(const error& e);

/// A revert of eth_call / eth_estimateGas classified as a registry error; nullopt when `e` is
/// not a revert (a transport failure, a node error without revert data).
[[nodiscard]] std::optional<registry::registry_error> registry_revert(const error& e);

/// A lock that several processes sending from one key share (servers of a fleet relaying writes
/// with one api payer). `transaction_sender` holds it from reading the node's pending nonce to the
/// node's acceptance of the signed transaction, so no two processes sign one nonce, and releases it
/// whatever happens: a process that dies while holding it must release it too (the server's lock
/// is a PostgreSQL advisory lock, dropped with the session), so a nonce read and never sent leaves
/// no gap. Thread-safe.
class nonce_lock {
 public:
  virtual ~nonce_lock() = default;
  /// Runs `send` while no other holder of the lock for `from`, in any process, runs; returns what
  /// it returns, or the error of taking the lock (then `send` does not run).
  [[nodiscard]] virtual result<hash256> exclusive(const address& from,
                                                  const std::function<result<hash256>()>& send) = 0;
};

struct sender_options {
  /// Gas limit = estimate × (100 + gas_margin_percent) / 100.
  unsigned gas_margin_percent = 20;
  /// How long `send` waits for the receipt, and how often it asks at most (it asks after 1 ms
  /// first, then doubles the pause up to this interval).
  std::chrono::milliseconds receipt_timeout{60000};
  std::chrono::milliseconds poll_interval{250};
  /// How a nonce conflict ("nonce too low") is retried: fetch the pending nonce again, re-sign.
  unsigned nonce_retries = 3;
  /// A transaction that `send` or `deploy` sent and that has no receipt after this long is sent
  /// again with the same nonce and both fees raised by kReplacementBumpPermille (the nodes'
  /// replacement rule), at most `max_replacements` times; then the receipt of whichever of them is
  /// mined is awaited until receipt_timeout. Zero: never replace.
  std::chrono::milliseconds replace_after{0};
  unsigned max_replacements = 3;
  /// Set when other processes send from the same key: every nonce is then read from the node's
  /// pending count under this lock instead of counted here (another process may have sent since).
  std::shared_ptr<nonce_lock> shared_nonces;
};

/// A replacement raises maxPriorityFeePerGas and maxFeePerGas by 12.5 % (rounded up): geth's
/// pool asks for 10 %, other nodes for 12.5 %; anything less is "replacement transaction
/// underpriced".
inline constexpr unsigned kReplacementBumpPermille = 125;

/// A transaction for `transaction_sender`: a call (`to` set) or a contract creation.
struct tx_request {
  std::optional<address> to;  // absent: contract creation, `data` is the init code
  bytes data;
  u256 value;
  /// Absent: eth_estimateGas plus the sender's gas margin (a revert is returned as the registry
  /// error it encodes and nothing is sent).
  std::optional<uint64_t> gas_limit;
};

/// Sends transactions from one key. Chain id: fetched once. Nonce: the pending count at first
/// use, then counted locally (re-fetched after a failed send, a "nonce too low" answer, or a
/// refused replacement: a new transaction meeting one of another sender in the node's pool); with
/// sender_options::shared_nonces, the pending count read under that lock for every transaction.
/// Fees: maxPriorityFeePerGas from eth_maxPriorityFeePerGas, maxFeePerGas = 2 × the latest base
/// fee + the priority fee. Gas: eth_estimateGas plus the margin; a revert during estimation is
/// returned as the registry error it encodes (its registry_errc as the code) and nothing is sent.
/// Replacement (sender_options::replace_after, `send(tx_request)` and `deploy`): the same nonce is
/// signed again with both fees raised by kReplacementBumpPermille, and whichever transaction of
/// that nonce is mined gives the receipt. Safe to use from several threads: nonce assignment and
/// sending are serialised.
class transaction_sender {
 public:
  /// secp256k1_errc when `private_key` is not a valid key.
  [[nodiscard]] static result<transaction_sender> create(std::shared_ptr<const rpc_client> client, Secret private_key,
                                                         sender_options options = {});
  ~transaction_sender();
  transaction_sender(transaction_sender&&) noexcept;
  transaction_sender& operator=(transaction_sender&&) noexcept;

  /// The key's address.
  [[nodiscard]] const address& from() const;

  /// Signs and sends; returns the transaction hash without waiting.
  [[nodiscard]] result<hash256> submit(const address& to, bytes_view data, const u256& value = {});
  /// Polls for the receipt until it appears or the receipt_timeout passes (rpc_errc::timeout).
  /// A receipt with status 0 is rpc_errc::tx_failed.
  [[nodiscard]] result<receipt> wait_for_receipt(const hash256& tx_hash) const;
  /// submit, then wait_for_receipt.
  [[nodiscard]] result<receipt> send(const address& to, bytes_view data, const u256& value = {});

  /// Signs and sends `tx` with the next nonce; returns the transaction hash without waiting.
  [[nodiscard]] result<hash256> submit(const tx_request& tx);
  /// Sends `tx` and waits for its receipt, replacing it while it stays unmined when the options
  /// ask for it (sender_options::replace_after). The receipt may be a replacement's.
  [[nodiscard]] result<receipt> send(const tx_request& tx);
  /// Deploys a contract: `init_code` is its creation code followed by the ABI-encoded
  /// constructor arguments (registry::deployment_data). The receipt's contract_address is set.
  [[nodiscard]] result<receipt> deploy(bytes_view init_code);

 private:
  struct impl;
  explicit transaction_sender(std::unique_ptr<impl> p);
  std::unique_ptr<impl> impl_;
};

}  // namespace enact::chain
