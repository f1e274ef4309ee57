// SPDX-License-Identifier: Apache-2.0
// The JSON forms of the embedded ledger's chain (rpc_wire.hpp), field for field as a node answers
// them; rpc_surface.hpp lists where they deviate.
#include "ledger/rpc_wire.hpp"

#include <optional>
#include <utility>

#include "enact/chain/transaction.hpp"
#include "enact/crypto/keccak.hpp"

namespace enact::ledger::rpc {
namespace {

using namespace wire_forms;

// crypto::keccak256(rlp([])): the uncles hash of a block without uncles (Yellow Paper §4.3).
constexpr std::string_view kEmptyUnclesHash = "0x1dcc4de8dec75d7aab85b567b6ccd41ad312451b948a7413f0a142fd40d49347";

u256 effective_gas_price(const std::optional<chain::decoded_tx>& d) {
  const u256 base{rpc_surface::kBaseFee};
  if (!d)
    return base;
  const u256 tip = base + d->tx.max_priority_fee_per_gas;
  return d->tx.max_fee_per_gas < tip ? d->tx.max_fee_per_gas : tip;
}

}  // namespace

json::object log_json(const log_row& l, const block_row& b, const hash256& tx_hash, const rpc_settings& settings) {
  json::array topics;
  for (const hash256& t : l.topics)
    topics.emplace_back(data_hex(t));
  return {{"address", data_hex(settings.registry)},
          {"topics", std::move(topics)},
          {"data", wire::data(l.data)},
          {"blockNumber", quantity(b.number)},
          {"blockHash", data_hex(b.hash)},
          {"transactionHash", data_hex(tx_hash)},
          {"transactionIndex", "0x0"},
          {"logIndex", quantity(l.log_index)},
          {"removed", false}};
}

json::object tx_json(const tx_row& t, const block_row& b, const rpc_settings& settings) {
  std::optional<chain::decoded_tx> d;
  if (t.nonce)
    if (auto r = chain::decode(t.raw))
      d = std::move(*r);
  json::object o;
  o["hash"] = data_hex(t.hash);
  o["type"] = "0x2";
  o["blockHash"] = data_hex(b.hash);
  o["blockNumber"] = quantity(b.number);
  o["transactionIndex"] = "0x0";
  o["from"] = data_hex(t.from);
  o["to"] = data_hex(settings.registry);
  o["chainId"] = quantity(settings.chain_id);
  o["accessList"] = json::array{};
  o["gasPrice"] = wire::quantity(effective_gas_price(d));
  if (d) {
    o["nonce"] = quantity(d->tx.nonce);
    o["value"] = wire::quantity(d->tx.value);
    o["gas"] = quantity(d->tx.gas_limit);
    o["maxFeePerGas"] = wire::quantity(d->tx.max_fee_per_gas);
    o["maxPriorityFeePerGas"] = wire::quantity(d->tx.max_priority_fee_per_gas);
    o["input"] = wire::data(d->tx.data);
    o["r"] = data_hex(d->signature.r);
    o["s"] = data_hex(d->signature.s);
    o["v"] = quantity(d->signature.v);
    o["yParity"] = quantity(d->signature.v);
  } else {
    // A relayed ledger write: the ledger keeps its event, not the calldata or a signature.
    o["nonce"] = "0x0";
    o["value"] = "0x0";
    o["gas"] = quantity(rpc_surface::kGasPerCall);
    o["maxFeePerGas"] = quantity(rpc_surface::kBaseFee);
    o["maxPriorityFeePerGas"] = "0x0";
    o["input"] = "0x";
    o["r"] = data_hex(hash256{});
    o["s"] = data_hex(hash256{});
    o["v"] = "0x0";
    o["yParity"] = "0x0";
  }
  return o;
}

json::object receipt_json(const tx_row& t, const block_row& b, std::span<const log_row> block_logs,
                          const rpc_settings& settings) {
  std::optional<chain::decoded_tx> d;
  if (t.nonce)
    if (auto r = chain::decode(t.raw))
      d = std::move(*r);
  json::array logs;
  for (const log_row& l : block_logs)
    logs.emplace_back(log_json(l, b, t.hash, settings));
  json::object o{{"transactionHash", data_hex(t.hash)},
                 {"transactionIndex", "0x0"},
                 {"blockHash", data_hex(b.hash)},
                 {"blockNumber", quantity(b.number)},
                 {"from", data_hex(t.from)},
                 {"to", data_hex(settings.registry)},
                 {"cumulativeGasUsed", quantity(t.gas_used)},
                 {"gasUsed", quantity(t.gas_used)},
                 {"contractAddress", nullptr},
                 {"logs", std::move(logs)},
                 {"logsBloom", wire::data(b.bloom)},
                 {"type", "0x2"},
                 {"status", t.status ? "0x1" : "0x0"},
                 {"effectiveGasPrice", wire::quantity(effective_gas_price(d))}};
  // Besu's receipt field: the revert data of a failed transaction.
  if (!t.status)
    o["revertReason"] = wire::data(t.revert_data);
  return o;
}

json::object block_json(const block_row& b, const std::optional<tx_row>& t, bool full, const rpc_settings& settings) {
  json::array txs;
  if (t)
    txs.emplace_back(full ? json::value(tx_json(*t, b, settings)) : json::value(data_hex(t->hash)));
  const hash256 tx_root = t ? crypto::keccak256(t->hash) : hash256{};
  return {{"number", quantity(b.number)},
          {"hash", data_hex(b.hash)},
          {"parentHash", data_hex(b.parent)},
          {"nonce", "0x0000000000000000"},
          {"sha3Uncles", kEmptyUnclesHash},
          {"logsBloom", wire::data(b.bloom)},
          {"transactionsRoot", data_hex(tx_root)},
          {"stateRoot", data_hex(hash256{})},
          {"receiptsRoot", data_hex(tx_root)},
          {"miner", data_hex(address{})},
          {"difficulty", "0x0"},
          {"totalDifficulty", "0x0"},
          {"extraData", "0x"},
          {"size", quantity(t ? 700 : 500)},
          {"gasLimit", quantity(rpc_surface::kBlockGasLimit)},
          {"gasUsed", quantity(t ? t->gas_used : 0)},
          {"timestamp", quantity(static_cast<uint64_t>(b.timestamp))},
          {"transactions", std::move(txs)},
          {"uncles", json::array{}},
          {"baseFeePerGas", quantity(rpc_surface::kBaseFee)},
          {"mixHash", data_hex(hash256{})}};
}

}  // namespace enact::ledger::rpc
