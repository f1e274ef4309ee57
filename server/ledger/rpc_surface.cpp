// SPDX-License-Identifier: Apache-2.0
// The JSON-RPC surface of the embedded ledger: the dispatcher (JSON-RPC method -> handler) and the
// JSON forms of blocks, transactions, receipts and logs. What it answers and how it deviates from
// a node running the Solidity registry is listed in rpc_surface.hpp; the chain it shows is kept by
// the chain store (rpc_chain_store.hpp) and registry calls run in the call executor
// (rpc_call_executor.hpp). Inside this file a JSON-RPC error object is an exception (`rpc_error`)
// thrown where the problem is found and turned into the response at the request boundary; SQLite
// failures of the chain store are `store_failure`, answered as -32603 and reported. Ledger
// refusals are not errors here: they are reverts, encoded with the registry's custom errors.
#include "ledger/rpc_surface.hpp"

#include <algorithm>
#include <array>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <boost/json.hpp>

#include "enact/chain/registry.hpp"
#include "enact/chain/rpc.hpp"
#include "enact/chain/transaction.hpp"
#include "enact/codec/hex.hpp"
#include "enact/crypto/keccak.hpp"
#include "ledger/embedded_ledger.hpp"
#include "ledger/rpc_call_executor.hpp"
#include "ledger/rpc_chain_store.hpp"
#include "ledger/rpc_wire.hpp"

namespace enact::ledger {
namespace {

namespace json = boost::json;
namespace reg = chain::registry;
namespace wire = chain::rpc;
using rpc::block_row;
using rpc::claim;
using rpc::log_row;
using rpc::store_failure;
using rpc::tx_row;
using namespace rpc::wire_forms;

constexpr std::string_view kClientVersion = "enact-embedded-registry/0.1.0";
// JSON-RPC 2.0 §5.1, and the codes Ethereum nodes use beside them.
constexpr int64_t kParseError = -32700;
constexpr int64_t kInvalidRequest = -32600;
constexpr int64_t kMethodNotFound = -32601;
constexpr int64_t kInternalError = -32603;
constexpr int64_t kServerError = -32000;    // geth: transaction pool refusals
constexpr int64_t kLimitExceeded = -32005;  // EIP-1474
constexpr int64_t kExecutionReverted = 3;   // geth, anvil: revert data in `data`
constexpr uint64_t kIntrinsicGas = 21000;
// The registry's code as eth_getCode shows it: PUSH1 0 PUSH1 0 REVERT (no EVM runs here).
constexpr std::array<uint8_t, 5> kRegistryCodeStub = {0x60, 0x00, 0x60, 0x00, 0xfd};

}  // namespace

address embedded_registry_address() {
  const hash256 h = crypto::keccak256(std::string_view("enact/embedded-registry"));
  address a{};
  std::copy(h.begin() + 12, h.end(), a.begin());
  return a;
}

// =============================================================================================

struct rpc_surface::impl {
  embedded_ledger& ledger;
  rpc_settings settings;
  std::function<void(const std::string&)> report;
  std::mutex mu;  // the chain store
  rpc::chain_store chain;
  rpc::call_executor exec;

  impl(embedded_ledger& l, rpc_settings s) : ledger(l), settings(std::move(s)), chain(l, settings), exec(l) {}

  /// A block parameter: a tag, a QUANTITY, or an EIP-1898 object. Needs `mu` (and a sync).
  uint64_t block_number_of(const json::value& v, std::string_view what) {
    if (const auto* s = v.if_string()) {
      if (*s == "latest" || *s == "pending" || *s == "safe" || *s == "finalized")
        return chain.head();
      if (*s == "earliest")
        return 0;
      return take_param(wire::parse_quantity_u64(v, what));
    }
    if (const auto* o = v.if_object()) {
      if (const auto* n = o->if_contains("blockNumber"))
        return block_number_of(*n, what);
      if (const auto* h = o->if_contains("blockHash")) {
        const auto b = chain.block_by_hash(hash_param(*h, std::string(what) + ".blockHash"));
        if (!b)
          throw_rpc(kServerError, "header for hash not found");
        return b->number;
      }
    }
    invalid_params(std::string(what) + ": expected a block tag, a QUANTITY or {\"blockNumber\"|\"blockHash\"}");
  }

  // --- methods ------------------------------------------------------------------------------

  struct call_object {
    address from{};
    std::optional<address> to;
    bytes data;
    u256 value;
  };

  call_object read_call_object(const json::value& v) {
    const auto* o = v.if_object();
    if (o == nullptr)
      invalid_params("transaction: expected an object");
    call_object c;
    if (const auto* f = o->if_contains("from"); f && !f->is_null())
      c.from = address_param(*f, "transaction.from");
    if (const auto* t = o->if_contains("to"); t && !t->is_null())
      c.to = address_param(*t, "transaction.to");
    const auto* input = o->if_contains("input");
    const auto* data = o->if_contains("data");
    if (input && !input->is_null())
      c.data = take_param(wire::parse_data(*input, "transaction.input"));
    if (data && !data->is_null()) {
      bytes d = take_param(wire::parse_data(*data, "transaction.data"));
      if (input && !input->is_null() && d != c.data)
        invalid_params("transaction: both \"data\" and \"input\" are set and differ");
      c.data = std::move(d);
    }
    if (const auto* val = o->if_contains("value"); val && !val->is_null())
      c.value = take_param(wire::parse_quantity(*val, "transaction.value"));
    return c;
  }

  [[noreturn]] void revert_error(const bytes& data) {
    if (data.empty())
      throw_rpc(kServerError, "execution reverted");
    std::string message = "execution reverted";
    const reg::registry_error e = reg::decode_revert(data);
    if (e.code == registry_errc::error_string)
      message += ": " + std::string(e.args.at("message").as_string());
    throw_rpc(kExecutionReverted, message, json::string(wire::data(data)));
  }

  [[noreturn]] void internal(const error& e) {
    if (report)
      report(e.message);
    throw_rpc(kInternalError, "internal error");
  }

  std::string not_the_registry(const std::optional<address>& to) const {
    if (!to)
      return "contract creation is not supported: this node serves only the permission registry "
             "at " +
             data_hex(settings.registry);
    return "transaction to " + data_hex(*to) + ": this node executes only the permission registry at " +
           data_hex(settings.registry);
  }

  json::value eth_call(const json::array& p) {
    const call_object c = read_call_object(param(p, 0, "transaction"));
    if (!c.to)
      throw_rpc(kServerError, not_the_registry(c.to));
    if (*c.to != settings.registry)
      return "0x";  // an account without code answers empty return data
    auto r = exec.execute(c.data, c.from, c.value, false);
    if (!r)
      internal(r.err());
    if (r->reverted)
      revert_error(r->data);
    return json::string(wire::data(r->data));
  }

  json::value eth_estimate_gas(const json::array& p) {
    const call_object c = read_call_object(param(p, 0, "transaction"));
    if (!c.to || *c.to != settings.registry)
      throw_rpc(kServerError, not_the_registry(c.to));
    auto r = exec.execute(c.data, c.from, c.value, false);
    if (!r)
      internal(r.err());
    if (r->reverted)
      revert_error(r->data);
    return json::string(quantity(rpc_surface::kGasPerCall));
  }

  json::value eth_send_raw_transaction(const json::array& p) {
    const bytes raw = take_param(wire::parse_data(param(p, 0, "transaction"), "transaction"));
    auto decoded = chain::decode(raw);
    if (!decoded) {
      if (decoded.code() == chain_errc::wrong_type)
        throw_rpc(kServerError, "transaction type not supported (only EIP-1559 type 2)");
      throw_rpc(kServerError, "invalid transaction: " + decoded.err().message);
    }
    const chain::decoded_tx& d = *decoded;
    if (d.tx.chain_id != settings.chain_id)
      throw_rpc(kServerError, "invalid sender: invalid chain id for signer: have " + std::to_string(d.tx.chain_id) +
                                  " want " + std::to_string(settings.chain_id));
    if (!d.tx.to || *d.tx.to != settings.registry)
      throw_rpc(kServerError, not_the_registry(d.tx.to));
    if (d.tx.gas_limit < kIntrinsicGas)
      throw_rpc(kServerError, "intrinsic gas too low: gas " + std::to_string(d.tx.gas_limit) + ", minimum needed " +
                                  std::to_string(kIntrinsicGas));

    std::lock_guard lock(mu);
    if (chain.tx_by_hash(d.hash))
      throw_rpc(kServerError, "already known");
    const uint64_t next = chain.nonce_of(d.from);
    if (d.tx.nonce < next)
      throw_rpc(kServerError, "nonce too low: address " + data_hex(d.from) + ", tx: " + std::to_string(d.tx.nonce) +
                                  " state: " + std::to_string(next));
    if (d.tx.nonce > next)
      throw_rpc(kServerError, "nonce too high: address " + data_hex(d.from) + ", tx: " + std::to_string(d.tx.nonce) +
                                  " state: " + std::to_string(next));
    chain.sync();
    chain.add_pending(d.hash, d.from, d.tx.nonce, raw);
    auto r = exec.execute(d.tx.data, d.from, d.tx.value, true);
    if (!r) {
      chain.drop_pending(d.hash);
      internal(r.err());
    }
    claim c;
    c.tx.hash = d.hash;
    c.tx.from = d.from;
    c.tx.nonce = d.tx.nonce;
    c.tx.raw = raw;
    c.tx.status = !r->reverted;
    if (r->reverted)
      c.tx.revert_data = r->data;
    c.tx.gas_used = std::min(rpc_surface::kGasPerCall, d.tx.gas_limit);
    chain.finish(c);
    return json::string(data_hex(d.hash));
  }

  json::value eth_get_logs(const json::array& p) {
    const auto* f = param(p, 0, "filter").if_object();
    if (f == nullptr)
      invalid_params("filter: expected an object");
    for (const auto& [key, v] : *f)
      if (key != "fromBlock" && key != "toBlock" && key != "blockHash" && key != "address" && key != "topics")
        invalid_params("filter." + std::string(key) + ": unknown field");
    std::lock_guard lock(mu);
    chain.sync();
    uint64_t from = 0, to = 0;
    const auto* block_hash = f->if_contains("blockHash");
    if (block_hash && !block_hash->is_null()) {
      if (f->contains("fromBlock") || f->contains("toBlock"))
        invalid_params("filter: blockHash excludes fromBlock and toBlock");
      const auto b = chain.block_by_hash(hash_param(*block_hash, "filter.blockHash"));
      if (!b)
        throw_rpc(kServerError, "unknown block");
      from = to = b->number;
    } else {
      const uint64_t latest = chain.head();
      const auto bound = [&](const char* key) {
        const auto* v = f->if_contains(key);
        return v && !v->is_null() ? block_number_of(*v, std::string("filter.") + key) : latest;
      };
      from = bound("fromBlock");
      to = std::min(bound("toBlock"), latest);
      if (from > to)
        return json::array{};
    }
    if (const auto* a = f->if_contains("address"); a && !a->is_null()) {
      bool ours = false;
      if (const auto* list = a->if_array()) {
        for (const auto& x : *list)
          ours = address_param(x, "filter.address") == settings.registry || ours;
      } else {
        ours = address_param(*a, "filter.address") == settings.registry;
      }
      if (!ours)
        return json::array{};
    }
    // topics[i]: null = any, a hash, or an array of hashes (any of them; null inside = any).
    std::vector<std::optional<std::vector<hash256>>> want;
    if (const auto* t = f->if_contains("topics"); t && !t->is_null()) {
      const auto* list = t->if_array();
      if (list == nullptr)
        invalid_params("filter.topics: expected an array");
      for (size_t i = 0; i < list->size(); ++i) {
        const json::value& x = (*list)[i];
        const std::string what = "filter.topics[" + std::to_string(i) + "]";
        if (x.is_null()) {
          want.emplace_back();
        } else if (const auto* any = x.if_array()) {
          std::vector<hash256> options;
          bool wildcard = false;
          for (const auto& y : *any) {
            if (y.is_null())
              wildcard = true;
            else
              options.push_back(hash_param(y, what));
          }
          want.emplace_back(wildcard ? std::nullopt : std::optional(std::move(options)));
        } else {
          want.emplace_back(std::vector<hash256>{hash_param(x, what)});
        }
      }
    }
    json::array out;
    std::optional<block_row> b;
    std::optional<tx_row> t;
    // Read a bounded number at a time so that a huge range neither loads nor returns too much.
    constexpr size_t kPage = 4096;
    uint64_t at_block = from;
    int64_t at_index = -1;
    for (;;) {
      const std::vector<log_row> rows = chain.logs_after(at_block, at_index, to, kPage);
      for (const log_row& l : rows) {
        bool match = want.size() <= l.topics.size();
        for (size_t i = 0; match && i < want.size(); ++i)
          if (want[i])
            match = std::find(want[i]->begin(), want[i]->end(), l.topics[i]) != want[i]->end();
        if (!match)
          continue;
        if (out.size() >= rpc_surface::kMaxLogs)
          throw_rpc(kLimitExceeded, "query returned more than " + std::to_string(rpc_surface::kMaxLogs) +
                                        " results; narrow the block range");
        if (!b || b->number != l.block) {
          b = chain.block_at(l.block);
          t = chain.tx_in_block(l.block);
          if (!b || !t)
            throw store_failure("rpc store: corrupt: block " + std::to_string(l.block));
        }
        out.emplace_back(rpc::log_json(l, *b, t->hash, settings));
      }
      if (rows.size() < kPage)
        break;
      at_block = rows.back().block;
      at_index = static_cast<int64_t>(rows.back().log_index);
    }
    return out;
  }

  json::value eth_fee_history(const json::array& p) {
    const uint64_t count = std::min<uint64_t>(count_param(param(p, 0, "blockCount"), "blockCount"), 1024);
    std::lock_guard lock(mu);
    chain.sync();
    const uint64_t newest = std::min(block_number_of(param(p, 1, "newestBlock"), "newestBlock"), chain.head());
    const uint64_t n = std::min(count, newest + 1);
    const uint64_t oldest = newest + 1 - n;
    json::array base, ratio, reward;
    const json::array* percentiles = nullptr;
    if (const auto* r = optional_param(p, 2)) {
      percentiles = r->if_array();
      if (percentiles == nullptr)
        invalid_params("rewardPercentiles: expected an array");
    }
    for (uint64_t i = 0; i < n; ++i) {
      base.emplace_back(quantity(rpc_surface::kBaseFee));
      const auto t = chain.tx_in_block(oldest + i);
      ratio.emplace_back(static_cast<double>(t ? t->gas_used : 0) / static_cast<double>(rpc_surface::kBlockGasLimit));
      if (percentiles) {
        json::array rs;
        for (size_t j = 0; j < percentiles->size(); ++j)
          rs.emplace_back(quantity(rpc_surface::kPriorityFee));
        reward.emplace_back(std::move(rs));
      }
    }
    base.emplace_back(quantity(rpc_surface::kBaseFee));  // the block after the newest
    json::object o{
        {"oldestBlock", quantity(oldest)}, {"baseFeePerGas", std::move(base)}, {"gasUsedRatio", std::move(ratio)}};
    if (percentiles)
      o["reward"] = std::move(reward);
    return o;
  }

  json::value dispatch(std::string_view method, const json::array& p) {
    if (method == "eth_chainId")
      return json::string(quantity(settings.chain_id));
    if (method == "net_version")
      return json::string(std::to_string(settings.chain_id));
    if (method == "web3_clientVersion")
      return json::string(kClientVersion);
    if (method == "net_listening")
      return true;
    if (method == "eth_syncing")
      return false;
    if (method == "eth_accounts")
      return json::array{};
    if (method == "eth_gasPrice")
      return json::string(quantity(rpc_surface::kBaseFee + rpc_surface::kPriorityFee));
    if (method == "eth_maxPriorityFeePerGas")
      return json::string(quantity(rpc_surface::kPriorityFee));
    if (method == "eth_getBalance") {
      (void)address_param(param(p, 0, "address"), "address");
      return json::string(rpc_surface::kBalance);
    }
    if (method == "eth_getCode") {
      const address a = address_param(param(p, 0, "address"), "address");
      return json::string(a == settings.registry ? wire::data(kRegistryCodeStub) : "0x");
    }
    if (method == "eth_getStorageAt") {
      (void)address_param(param(p, 0, "address"), "address");
      return json::string(data_hex(hash256{}));
    }
    if (method == "eth_call")
      return eth_call(p);
    if (method == "eth_estimateGas")
      return eth_estimate_gas(p);
    if (method == "eth_sendRawTransaction")
      return eth_send_raw_transaction(p);
    if (method == "eth_getLogs")
      return eth_get_logs(p);
    if (method == "eth_feeHistory")
      return eth_fee_history(p);
    if (method == "eth_blockNumber") {
      std::lock_guard lock(mu);
      chain.sync();
      return json::string(quantity(chain.head()));
    }
    if (method == "eth_getBlockByNumber" || method == "eth_getBlockByHash") {
      const bool by_hash = method == "eth_getBlockByHash";
      const json::value& which = param(p, 0, by_hash ? "blockHash" : "block");
      const json::value* full = optional_param(p, 1);
      if (full && !full->is_bool())
        invalid_params("argument 1: expected a boolean (full transactions)");
      std::lock_guard lock(mu);
      chain.sync();
      const std::optional<block_row> b = by_hash ? chain.block_by_hash(hash_param(which, "blockHash"))
                                                 : chain.block_at(block_number_of(which, "block"));
      if (!b)
        return nullptr;
      return rpc::block_json(*b, b->number == 0 ? std::nullopt : chain.tx_in_block(b->number), full && full->get_bool(),
                             settings);
    }
    if (method == "eth_getTransactionCount") {
      const address a = address_param(param(p, 0, "address"), "address");
      std::lock_guard lock(mu);
      const json::value* tag = optional_param(p, 1);
      if (tag == nullptr)
        return json::string(quantity(chain.nonce_of(a)));
      chain.sync();
      return json::string(quantity(chain.nonce_of(a, block_number_of(*tag, "block"))));
    }
    if (method == "eth_getTransactionByHash" || method == "eth_getTransactionReceipt") {
      const hash256 h = hash_param(param(p, 0, "transactionHash"), "transactionHash");
      std::lock_guard lock(mu);
      chain.sync();
      const std::optional<tx_row> t = chain.tx_by_hash(h);
      if (!t)
        return nullptr;
      const std::optional<block_row> b = chain.block_at(t->block);
      if (!b)
        throw store_failure("rpc store: corrupt: block " + std::to_string(t->block));
      if (method == "eth_getTransactionByHash")
        return rpc::tx_json(*t, *b, settings);
      return rpc::receipt_json(*t, *b, chain.logs_after(b->number, -1, b->number, SIZE_MAX), settings);
    }
    throw_rpc(kMethodNotFound, "the method " + std::string(method) + " does not exist/is not available");
  }

  // --- the request boundary -----------------------------------------------------------------

  static json::object error_response(const json::value& id, const rpc_error& e) {
    json::object err{{"code", e.code}, {"message", e.message}};
    if (!e.data.is_null())
      err["data"] = e.data;
    return {{"jsonrpc", "2.0"}, {"id", id}, {"error", std::move(err)}};
  }

  /// The response to one request object; nullopt for a notification.
  std::optional<json::object> answer(const json::value& request) {
    const auto* o = request.if_object();
    if (o == nullptr)
      return error_response(nullptr, {kInvalidRequest, "invalid request: expected an object"});
    json::value id = nullptr;
    const json::value* given_id = o->if_contains("id");
    if (given_id != nullptr) {
      if (!given_id->is_string() && !given_id->is_number() && !given_id->is_null())
        return error_response(nullptr, {kInvalidRequest,
                                        "invalid request: id must be a string, a number "
                                        "or null"});
      id = *given_id;
    }
    const auto* version = o->if_contains("jsonrpc");
    if (version == nullptr || !version->is_string() || version->get_string() != "2.0")
      return error_response(id, {kInvalidRequest, "invalid request: jsonrpc must be \"2.0\""});
    const auto* method = o->if_contains("method");
    if (method == nullptr || !method->is_string())
      return error_response(id, {kInvalidRequest, "invalid request: method must be a string"});
    static const json::array kNoParams;
    const json::array* params = &kNoParams;
    if (const auto* p = o->if_contains("params"); p != nullptr && !p->is_null()) {
      if (p->is_object())
        return error_response(id, {kInvalidParams, "invalid params: by-name params are not supported"});
      params = p->if_array();
      if (params == nullptr)
        return error_response(id, {kInvalidRequest, "invalid request: params must be an array"});
    }
    json::value out;
    try {
      out = dispatch(method->get_string(), *params);
    } catch (const rpc_error& e) {
      if (given_id == nullptr)
        return std::nullopt;
      return error_response(id, e);
    } catch (const std::exception& e) {
      if (report)
        report(std::string(method->get_string()) + ": " + e.what());
      if (given_id == nullptr)
        return std::nullopt;
      return error_response(id, {kInternalError, "internal error"});
    }
    if (given_id == nullptr)
      return std::nullopt;
    return json::object{{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(out)}};
  }

  std::string handle(std::string_view body) {
    std::error_code ec;
    const json::value doc = json::parse(body, ec);
    if (ec)
      return json::serialize(error_response(nullptr, {kParseError, "parse error: " + ec.message()}));
    if (const auto* batch = doc.if_array()) {
      if (batch->empty())
        return json::serialize(error_response(nullptr, {kInvalidRequest, "invalid request: empty batch"}));
      if (batch->size() > rpc_surface::kMaxBatch)
        return json::serialize(error_response(
            nullptr, {kInvalidRequest, "invalid request: a batch of " + std::to_string(batch->size()) +
                                           " requests, at most " + std::to_string(rpc_surface::kMaxBatch)}));
      json::array out;
      for (const json::value& r : *batch)
        if (auto a = answer(r))
          out.emplace_back(std::move(*a));
      return out.empty() ? std::string() : json::serialize(out);
    }
    auto a = answer(doc);
    return a ? json::serialize(*a) : std::string();
  }
};

// =============================================================================================

rpc_surface::rpc_surface(std::unique_ptr<impl> p) : impl_(std::move(p)) {}
rpc_surface::~rpc_surface() = default;

result<std::unique_ptr<rpc_surface>> rpc_surface::open(embedded_ledger& ledger, rpc_settings settings) {
  try {
    auto p = std::make_unique<impl>(ledger, std::move(settings));
    return std::unique_ptr<rpc_surface>(new rpc_surface(std::move(p)));
  } catch (const std::exception& e) {
    return fail(ledger_errc::storage, e.what());
  }
}

std::string rpc_surface::handle(std::string_view body) { return impl_->handle(body); }

void rpc_surface::on_internal_error(std::function<void(const std::string&)> report) {
  impl_->report = std::move(report);
}

const rpc_settings& rpc_surface::settings() const { return impl_->settings; }

result<std::optional<std::pair<uint64_t, address>>> chain_of_file(const std::string& sqlite_path) {
  try {
    return rpc::chain_of_file(sqlite_path);
  } catch (const std::exception& e) {
    return fail(ledger_errc::storage, e.what());
  }
}

}  // namespace enact::ledger
