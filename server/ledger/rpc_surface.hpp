// SPDX-License-Identifier: Apache-2.0
// `enact::ledger::rpc_surface`: the embedded ledger speaking Ethereum JSON-RPC 2.0 for the permission
// registry, served at POST /rpc, so client code is the same against embedded, anvil and a public
// chain. Its methods, chain model, gas, persistence and deviations from the Solidity registry are
// docs/chainsecured.md "What `/rpc` is"; each refusal reverts with the contract's own error.
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
