// SPDX-License-Identifier: Apache-2.0
// `enact::ledger::rpc::chain_store`: the chain the embedded ledger's JSON-RPC surface shows
// (rpc_surface.hpp, "Chain"): blocks, transactions, logs, nonces and the mapping of ledger events
// to blocks, persisted in the surface's own SQLite file (WAL) next to the ledger. Every ledger
// event becomes the registry's log, encoded from its typed value with the SDK's registry encoder.
//
// The file is one connection of the storage kit (storage/sqlite.hpp). Not thread-safe: the surface
// serializes every call behind its mutex. SQLite failures and malformed blobs are thrown as
// storage::sqlite_error; a missing row the chain needs and a failure to read the ledger's events
// as `store_failure`.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "enact/bytes.hpp"
#include "ledger/rpc_surface.hpp"

namespace enact::storage {
class connection;
}

namespace enact::ledger {

class embedded_ledger;
struct event;

namespace rpc {

/// A failure of the surface's own file (or of reading the ledger's events): answered as -32603.
struct store_failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Big-endian bytes of `v`, as block and transaction hashes commit to numbers.
[[nodiscard]] std::array<uint8_t, 8> be64(uint64_t v);

struct block_row {
  uint64_t number = 0;
  hash256 hash{};
  hash256 parent{};
  int64_t timestamp = 0;
  std::array<uint8_t, 256> bloom{};
};

struct tx_row {
  hash256 hash{};
  uint64_t block = 0;
  address from{};
  std::optional<uint64_t> nonce;  // set for transactions sent here
  bytes raw;
  bool status = true;
  bytes revert_data;
  uint64_t gas_used = 0;
  std::optional<uint64_t> sequence;  // set for relayed ledger writes
};

struct log_row {
  uint64_t block = 0;
  uint64_t log_index = 0;
  std::vector<hash256> topics;
  bytes data;
};

/// A transaction sent here, to be placed at the block of its ledger events.
struct claim {
  tx_row tx;
  bool drop_if_unclaimed = false;  // recovery: no event means the ledger never applied it
};

/// The chain id and registry address the surface file `sqlite_path` was written for, or nullopt
/// when it holds no chain yet (an empty file). Throws (store_failure, storage::sqlite_error) when it
/// cannot be read.
[[nodiscard]] std::optional<std::pair<uint64_t, address>> chain_of_file(const std::string& sqlite_path);

class chain_store {
 public:
  /// Opens (creating when absent) settings.sqlite_path and checks it holds this chain (chain id
  /// and registry address); then completes interrupted transactions and maps new ledger events.
  chain_store(embedded_ledger& ledger, const rpc_settings& settings);
  ~chain_store();
  chain_store(const chain_store&) = delete;
  chain_store& operator=(const chain_store&) = delete;

  [[nodiscard]] uint64_t head();
  [[nodiscard]] std::optional<block_row> block_at(uint64_t n);
  [[nodiscard]] std::optional<block_row> block_by_hash(const hash256& h);
  [[nodiscard]] std::optional<tx_row> tx_by_hash(const hash256& h);
  [[nodiscard]] std::optional<tx_row> tx_in_block(uint64_t n);
  /// Logs of blocks up to `to` after position (block, log_index), in order, at most `limit`.
  [[nodiscard]] std::vector<log_row> logs_after(uint64_t block, int64_t log_index, uint64_t to, size_t limit);
  /// The sender's next nonce: one more than its last transaction sent here (at or before block
  /// `at`), else 0.
  [[nodiscard]] uint64_t nonce_of(const address& sender, std::optional<uint64_t> at = std::nullopt);

  /// Maps the ledger events not mapped yet to blocks of their own.
  void sync();
  /// Records a transaction between its ledger write and its receipt (completed or dropped at the
  /// next open when the process stops in between); `drop_pending` forgets it.
  void add_pending(const hash256& hash, const address& sender, uint64_t nonce, const bytes& raw);
  void drop_pending(const hash256& hash);
  /// Places a transaction sent here: its block holds the events of its sender after the synced
  /// sequence (a write appends at most a few), placed at the first of them; the other events
  /// (relayed writes that committed meanwhile) get their own blocks, all in sequence order.
  void finish(claim& c);

 private:
  void migrate();
  void recover();
  uint64_t meta_u64(const char* key);
  void append_block(tx_row& t, const std::vector<const event*>& events, int64_t timestamp);
  tx_row relayed_tx(const event& e) const;
  std::vector<event> events_after(uint64_t after, size_t limit);

  embedded_ledger& ledger_;
  const rpc_settings& settings_;
  std::unique_ptr<storage::connection> db_;
};

}  // namespace rpc
}  // namespace enact::ledger
