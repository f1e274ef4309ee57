// SPDX-License-Identifier: Apache-2.0
// The wire side of the embedded ledger's JSON-RPC surface (rpc_surface.cpp): JSON-RPC errors as
// the exception `rpc_error`, the parameter readers that throw it, and the JSON forms of blocks,
// transactions, receipts and logs as an Ethereum node answers them (docs/protocol.md §3).
#pragma once

#include <boost/json.hpp>

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "enact/chain/rpc.hpp"
#include "enact/codec/hex.hpp"
#include "ledger/rpc_chain_store.hpp"
#include "ledger/rpc_surface.hpp"

namespace enact::ledger::rpc {

namespace wire_forms {

namespace json = boost::json;
namespace wire = chain::rpc;

// JSON-RPC 2.0 §5.1.
constexpr int64_t kInvalidParams = -32602;

struct rpc_error {
  int64_t code;
  std::string message;
  json::value data = nullptr;
};

[[noreturn]] inline void throw_rpc(int64_t code, std::string message, json::value data = nullptr) {
  throw rpc_error{code, std::move(message), std::move(data)};
}
[[noreturn]] inline void invalid_params(std::string message) { throw_rpc(kInvalidParams, std::move(message)); }

// ---------------------------------------------------------------------------------------------
// Wire forms

inline std::string quantity(uint64_t v) { return u256{v}.to_hex(); }

template <size_t N>
inline std::string data_hex(const std::array<uint8_t, N>& v) {
  return codec::hex::encode_prefixed(v);
}

template <class T>
inline T take_param(result<T> r) {
  if (!r)
    invalid_params(r.err().message);
  return std::move(r).value();
}

inline const json::value& param(const json::array& p, size_t i, std::string_view what) {
  if (i >= p.size())
    invalid_params("missing value for required argument " + std::to_string(i) + " (" + std::string(what) + ")");
  return p[i];
}

inline const json::value* optional_param(const json::array& p, size_t i) {
  return i < p.size() && !p[i].is_null() ? &p[i] : nullptr;
}

inline address address_param(const json::value& v, std::string_view what) {
  return take_param(wire::parse_data_fixed<20>(v, what));
}

inline hash256 hash_param(const json::value& v, std::string_view what) {
  return take_param(wire::parse_data_fixed<32>(v, what));
}

/// A count given as QUANTITY or as a JSON integer (eth_feeHistory's blockCount is either).
inline uint64_t count_param(const json::value& v, std::string_view what) {
  if (v.is_int64() && v.get_int64() >= 0)
    return static_cast<uint64_t>(v.get_int64());
  if (v.is_uint64())
    return v.get_uint64();
  return take_param(wire::parse_quantity_u64(v, what));
}

}  // namespace wire_forms

/// The log `l` of the transaction `tx_hash` in block `b`, as eth_getLogs and receipts show it.
[[nodiscard]] boost::json::object log_json(const log_row& l, const block_row& b, const hash256& tx_hash,
                                           const rpc_settings& settings);
/// eth_getTransactionByHash's answer for `t` in block `b`.
[[nodiscard]] boost::json::object tx_json(const tx_row& t, const block_row& b, const rpc_settings& settings);
/// eth_getTransactionReceipt's answer: `logs` are the block's (one transaction per block).
[[nodiscard]] boost::json::object receipt_json(const tx_row& t, const block_row& b, std::span<const log_row> logs,
                                               const rpc_settings& settings);
/// eth_getBlockBy*'s answer: `t` the block's transaction if any, in full or as its hash.
[[nodiscard]] boost::json::object block_json(const block_row& b, const std::optional<tx_row>& t, bool full,
                                             const rpc_settings& settings);

}  // namespace enact::ledger::rpc
