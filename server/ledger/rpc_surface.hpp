// SPDX-License-Identifier: Apache-2.0
// `enact::ledger::rpc_surface`: the embedded ledger speaking Ethereum JSON-RPC 2.0 for the
// permission registry (docs/architecture.md §5: "With the embedded ledger, the server exposes the same
// JSON-RPC surface for those direct writes, so client code is identical against embedded, anvil
// and a public chain"). enact-server serves it at POST /rpc (core/routes_rpc.hpp); the SDK's
// rpc_client, transaction_sender and registry_client, ethers' JsonRpcProvider and wallets talk to
// it as to a node where IPermissionRegistry.sol is deployed at the configured address.
//
// Execution. A transaction or call to the registry address is decoded with the registry ABI
// (chain/registry.hpp) and applied to the embedded ledger with the recovered sender as
// msg.sender, so the ledger enforces the registry's rules; a refusal is reverted with the
// registry's custom error (NotAdmin, RelayNotAllowed, UnknownGroup, Duplicate, ...) exactly as
// the Solidity registry encodes it. Views are ledger reads encoded as the contract returns them.
// eth_estimateGas and eth_call of a write are dry runs inside a ledger batch that is rolled back.
// A selector the registry does not have (the credit functions of earlier versions among them:
// credits are the metering store's) reverts without data, as the contract's dispatcher does.
// Deviations from the Solidity registry, all reverting with the contract's own errors:
//   - setApiPayer: NotOwner(sender); owner() answers the server's first api_payer address;
//   - multicall: atomic (one ledger batch; a failing call's revert data is re-thrown), but views
//     inside it read the state before the multicall, and a nested multicall is InvalidArgument;
//   - a uint256 above 2^64-1 where the ledger keeps 64 bits (expiration, key balance) is
//     InvalidArgument; list views return at most kMaxListItems items per call.
//
// Chain. Block 0 is a genesis block; every ledger write is then one block holding one
// transaction, in ledger event order: a transaction sent here gets the block of its events (a
// reverted one gets a block of its own, status 0), and every other ledger event — API-mode
// writes relayed by the server — gets a block with a synthetic
// transaction whose hash is crypto::keccak256("enact/relayed-write" ‖ chainId ‖ registry ‖ sequence),
// mapped lazily (in order) whenever a request looks at the chain. Every ledger event is a log of
// the registry (eth_getLogs, receipts). Block hashes chain deterministically; timestamps never
// decrease. Transactions, receipts, nonces and the block mapping live in their own SQLite file
// (WAL) next to the ledger; a transaction interrupted between the ledger write and its receipt is
// completed (or dropped, when the ledger did not apply it) at the next open.
//
// Transactions: EIP-1559 only, chainId must be this chain's, `to` must be the registry, the nonce
// must be the sender's next one (no queue: "nonce too low" / "nonce too high", as nodes word
// them). Gas: any fee fields are accepted and nothing is charged; estimates and gasUsed are the
// fixed kGasPerCall (capped at the transaction's gas limit); eth_getBalance answers kBalance for
// every address so wallets do not refuse to send. eth_getCode of the registry is a stub
// (PUSH1 0 PUSH1 0 REVERT): non-empty so that clients see a contract; no EVM runs here.
//
// Methods: web3_clientVersion, net_version, net_listening, eth_chainId, eth_syncing,
// eth_accounts, eth_blockNumber, eth_getBlockByNumber, eth_getBlockByHash, eth_getBalance,
// eth_getCode, eth_getStorageAt, eth_getTransactionCount, eth_gasPrice, eth_maxPriorityFeePerGas,
// eth_feeHistory, eth_estimateGas, eth_call, eth_sendRawTransaction, eth_getTransactionByHash,
// eth_getTransactionReceipt, eth_getLogs. Batches of up to kMaxBatch requests. State at a past
// block is not kept: eth_call and eth_getCode answer from the latest state whatever the tag.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "enact/bytes.hpp"
#include "enact/result.hpp"

namespace enact::ledger {

class embedded_ledger;

/// The registry address every data directory had before each deployment had its own
/// (ledger/embedded_chain.hpp, legacy_embedded_chain): the last 20 bytes of
/// crypto::keccak256("enact/embedded-registry").
[[nodiscard]] address embedded_registry_address();

/// The chain id and registry address of the surface file `sqlite_path` (what open checks its
/// settings against): nullopt when the file holds no chain yet; storage when it cannot be read.
[[nodiscard]] result<std::optional<std::pair<uint64_t, address>>> chain_of_file(const std::string& sqlite_path);

struct rpc_settings {
  uint64_t chain_id = 31337;
  address registry{};
  /// The surface's own SQLite file (transactions, receipts, blocks), e.g. <data_dir>/rpc.sqlite.
  std::string sqlite_path;
};

class rpc_surface {
 public:
  /// Gas reported by eth_estimateGas and as a receipt's gasUsed (nothing is charged).
  static constexpr uint64_t kGasPerCall = 250000;
  static constexpr uint64_t kBlockGasLimit = 30000000;
  /// Base fee of every block and the suggested priority fee: 1 gwei each.
  static constexpr uint64_t kBaseFee = 1000000000;
  static constexpr uint64_t kPriorityFee = 1000000000;
  /// eth_getBalance of any address: 10^24 wei (one million ether).
  static constexpr std::string_view kBalance = "0xd3c21bcecceda1000000";
  static constexpr size_t kMaxBatch = 1000;
  static constexpr size_t kMaxLogs = 10000;
  static constexpr uint64_t kMaxListItems = 1000;

  /// Opens (creating when absent) the surface's file. storage when it cannot be opened, is not
  /// a database, or was written for another chain id or registry address.
  [[nodiscard]] static result<std::unique_ptr<rpc_surface>> open(embedded_ledger& ledger, rpc_settings settings);
  ~rpc_surface();
  rpc_surface(const rpc_surface&) = delete;
  rpc_surface& operator=(const rpc_surface&) = delete;

  /// Answers one HTTP body: a JSON-RPC 2.0 request or a batch. Returns the response body, or an
  /// empty string when nothing is to be answered (notifications only). Safe from many threads.
  [[nodiscard]] std::string handle(std::string_view body);

  /// Called with a description of every internal failure (storage, a ledger event that cannot be
  /// read) that was answered as error -32603; never holds secrets.
  void on_internal_error(std::function<void(const std::string&)> report);

  [[nodiscard]] const rpc_settings& settings() const;

 private:
  struct impl;
  explicit rpc_surface(std::unique_ptr<impl> p);
  std::unique_ptr<impl> impl_;
};

}  // namespace enact::ledger
