// SPDX-License-Identifier: Apache-2.0
// JSON-RPC over HTTP(S) with the SDK's transport (client/transport.hpp); the transaction sender is
// transaction_sender.cpp. Connections are
// kept alive in a small pool so that concurrent requests neither wait for each other nor reconnect each time; a pooled
// connection that the node closed in the meantime is replaced once.
#include "enact/chain/client.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <mutex>
#include <thread>

#include "enact/chain/transaction.hpp"
#include "enact/codec/hex.hpp"
#include "enact/crypto/secp256k1.hpp"
#include "../client/transport.hpp"
#include "rpc_failure.hpp"

namespace enact::chain {

namespace json = boost::json;
using detail::kRevertMarker;
using std::chrono::milliseconds;

namespace {

constexpr size_t kMaxIdleConnections = 8;
constexpr size_t kMaxBodyExcerpt = 200;

using client::detail::http_connection;
using client::detail::http_exchange;
using client::detail::http_failure;
using client::detail::parsed_url;

result<parsed_url> parse_url(std::string_view url) {
  parsed_url u = client::detail::parse_url(url);
  switch (u.fault) {
    case client::detail::url_fault::none:
      if (u.path.empty())
        u.path = "/";
      return u;
    case client::detail::url_fault::scheme:
      return fail(rpc_errc::bad_url, "url: expected http://host[:port][/path] or https://host[:port][/path]");
    case client::detail::url_fault::user_info:
      // Credentials in the URL would end up in logs and error messages; they go in headers.
      return fail(rpc_errc::bad_url, "url: user-info is not allowed (send credentials as headers)");
    default:
      return fail(rpc_errc::bad_url, "url: " + u.why);
  }
}

/// The start of an answer body, printable, for an error message.
std::string excerpt(const std::string& body) {
  std::string out;
  for (const char c : body.substr(0, kMaxBodyExcerpt))
    out.push_back(std::isprint(static_cast<unsigned char>(c)) ? c : ' ');
  if (body.size() > kMaxBodyExcerpt)
    out += "…";
  return out;
}

error with_method(std::string_view method, error e) {
  e.message = std::string(method) + ": " + e.message;
  return e;
}

// --- reading results ------------------------------------------------------------------------

result<const json::value*> member(const json::value& v, std::string_view key, const std::string& what) {
  const auto* o = v.if_object();
  if (o == nullptr)
    return fail(rpc_errc::bad_response, what + ": expected an object");
  const json::value* f = o->if_contains(key);
  if (f == nullptr)
    return fail(rpc_errc::bad_response, what + "." + std::string(key) + ": missing");
  return f;
}

template <size_t N>
result<std::array<uint8_t, N>> fixed_member(const json::value& v, std::string_view key, const std::string& what) {
  ENACT_TRY(const json::value* f, member(v, key, what));
  return rpc::parse_data_fixed<N>(*f, what + "." + std::string(key));
}

result<uint64_t> u64_member(const json::value& v, std::string_view key, const std::string& what) {
  ENACT_TRY(const json::value* f, member(v, key, what));
  return rpc::parse_quantity_u64(*f, what + "." + std::string(key));
}

/// An address member that may be null or absent.
result<std::optional<address>> optional_address(const json::value& v, std::string_view key, const std::string& what) {
  const json::value* f = v.as_object().if_contains(key);
  if (f == nullptr || f->is_null())
    return std::optional<address>{};
  ENACT_TRY(const address a, rpc::parse_data_fixed<20>(*f, what + "." + std::string(key)));
  return std::optional<address>(a);
}

result<log_entry> parse_log(const json::value& v, const std::string& what) {
  if (!v.is_object())
    return fail(rpc_errc::bad_response, what + ": expected an object");
  log_entry l;
  ENACT_TRY(l.address, fixed_member<20>(v, "address", what));
  ENACT_TRY(const json::value* topics, member(v, "topics", what));
  const auto* ta = topics->if_array();
  if (ta == nullptr)
    return fail(rpc_errc::bad_response, what + ".topics: expected an array");
  for (size_t i = 0; i < ta->size(); ++i) {
    ENACT_TRY(const hash256 t, rpc::parse_data_fixed<32>((*ta)[i], what + ".topics[" + std::to_string(i) + "]"));
    l.topics.push_back(t);
  }
  ENACT_TRY(const json::value* data, member(v, "data", what));
  ENACT_TRY(l.data, rpc::parse_data(*data, what + ".data"));
  ENACT_TRY(l.block_number, u64_member(v, "blockNumber", what));
  ENACT_TRY(l.block_hash, fixed_member<32>(v, "blockHash", what));
  ENACT_TRY(l.transaction_hash, fixed_member<32>(v, "transactionHash", what));
  ENACT_TRY(l.transaction_index, u64_member(v, "transactionIndex", what));
  ENACT_TRY(l.log_index, u64_member(v, "logIndex", what));
  if (const json::value* removed = v.as_object().if_contains("removed")) {
    if (!removed->is_bool())
      return fail(rpc_errc::bad_response, what + ".removed: expected a boolean");
    l.removed = removed->get_bool();
  }
  return l;
}

result<std::vector<log_entry>> parse_logs(const json::value& v, const std::string& what) {
  const auto* a = v.if_array();
  if (a == nullptr)
    return fail(rpc_errc::bad_response, what + ": expected an array");
  std::vector<log_entry> out;
  out.reserve(a->size());
  for (size_t i = 0; i < a->size(); ++i) {
    ENACT_TRY(log_entry l, parse_log((*a)[i], what + "[" + std::to_string(i) + "]"));
    out.push_back(std::move(l));
  }
  return out;
}

result<receipt> parse_receipt(const json::value& v, const std::string& what) {
  if (!v.is_object())
    return fail(rpc_errc::bad_response, what + ": expected an object");
  receipt r;
  ENACT_TRY(r.transaction_hash, fixed_member<32>(v, "transactionHash", what));
  ENACT_TRY(r.transaction_index, u64_member(v, "transactionIndex", what));
  ENACT_TRY(r.block_hash, fixed_member<32>(v, "blockHash", what));
  ENACT_TRY(r.block_number, u64_member(v, "blockNumber", what));
  ENACT_TRY(r.from, fixed_member<20>(v, "from", what));
  ENACT_TRY(r.to, optional_address(v, "to", what));
  ENACT_TRY(r.contract_address, optional_address(v, "contractAddress", what));
  ENACT_TRY(r.gas_used, u64_member(v, "gasUsed", what));
  ENACT_TRY(r.cumulative_gas_used, u64_member(v, "cumulativeGasUsed", what));
  ENACT_TRY(const json::value* price, member(v, "effectiveGasPrice", what));
  ENACT_TRY(r.effective_gas_price, rpc::parse_quantity(*price, what + ".effectiveGasPrice"));
  // Receipts before Byzantium (EIP-658) carry a state root instead of a status.
  ENACT_TRY(const uint64_t status, u64_member(v, "status", what));
  if (status > 1)
    return fail(rpc_errc::bad_response, what + ".status: expected 0x0 or 0x1, got " + std::to_string(status));
  r.status = status == 1;
  ENACT_TRY(const json::value* logs, member(v, "logs", what));
  ENACT_TRY(r.logs, parse_logs(*logs, what + ".logs"));
  return r;
}

result<block> parse_block(const json::value& v, const std::string& what) {
  if (!v.is_object())
    return fail(rpc_errc::bad_response, what + ": expected an object");
  block b;
  ENACT_TRY(b.number, u64_member(v, "number", what));
  ENACT_TRY(b.hash, fixed_member<32>(v, "hash", what));
  ENACT_TRY(b.parent_hash, fixed_member<32>(v, "parentHash", what));
  ENACT_TRY(b.timestamp, u64_member(v, "timestamp", what));
  if (const json::value* fee = v.as_object().if_contains("baseFeePerGas"); fee != nullptr && !fee->is_null()) {
    ENACT_TRY(const u256 f, rpc::parse_quantity(*fee, what + ".baseFeePerGas"));
    b.base_fee_per_gas = f;
  }
  return b;
}

json::object call_object(const call_request& tx) {
  json::object o;
  if (tx.from)
    o["from"] = rpc::data(*tx.from);
  if (tx.to)
    o["to"] = rpc::data(*tx.to);
  o["data"] = rpc::data(tx.data);
  if (tx.value)
    o["value"] = rpc::quantity(*tx.value);
  if (tx.gas)
    o["gas"] = rpc::quantity(*tx.gas);
  return o;
}

}  // namespace

// =============================================================================================
// rpc_client

struct rpc_client::impl {
  rpc_options options;
  parsed_url url;
  client::detail::http_headers headers;
  client::detail::connection_settings settings;
  std::atomic<uint64_t> next_id{1};
  std::mutex pool_mutex;
  std::vector<std::unique_ptr<http_connection>> idle;

  /// A pooled connection (and whether it was), or a new one.
  std::pair<std::unique_ptr<http_connection>, bool> acquire() {
    {
      std::lock_guard<std::mutex> lock(pool_mutex);
      if (!idle.empty()) {
        auto c = std::move(idle.back());
        idle.pop_back();
        return {std::move(c), true};
      }
    }
    return {http_connection::open(url.origin, settings), false};
  }

  void release(std::unique_ptr<http_connection> c) {
    std::lock_guard<std::mutex> lock(pool_mutex);
    if (idle.size() < kMaxIdleConnections)
      idle.push_back(std::move(c));
  }

  /// POSTs one body; the answer's body when the status is 200.
  result<std::string> post(const std::string& body) {
    for (int attempt = 0;; ++attempt) {
      auto [connection, pooled] = acquire();
      http_exchange x =
          connection->send(client::detail::http_method::post, url.path, headers, body, "application/json");
      if (!x.answered()) {
        // A kept-alive connection the node closed while it sat in the pool fails at once; the
        // request never reached the node, so it is sent again on a fresh connection.
        if (pooled && attempt == 0 && (x.failure == http_failure::read || x.failure == http_failure::write) &&
            x.elapsed * 2 < options.timeout)
          continue;
        const client::detail::failure_text t = client::detail::describe(x, url.origin, settings);
        return fail(t.timeout ? rpc_errc::timeout : rpc_errc::unreachable, t.message);
      }
      if (x.status != 200) {
        std::string msg = "HTTP " + std::to_string(x.status) + " from " + url.origin;
        if (!x.body.empty())
          msg += ": " + excerpt(x.body);
        return fail(rpc_errc::http_status, std::move(msg));
      }
      release(std::move(connection));
      return std::move(x.body);
    }
  }
};

rpc_client::rpc_client(std::unique_ptr<impl> p) : impl_(std::move(p)) {}
rpc_client::rpc_client(rpc_options options) : rpc_client(create(std::move(options)).value()) {}
rpc_client::~rpc_client() = default;
rpc_client::rpc_client(rpc_client&&) noexcept = default;
rpc_client& rpc_client::operator=(rpc_client&&) noexcept = default;

result<rpc_client> rpc_client::create(rpc_options options) {
  ENACT_TRY(parsed_url url, parse_url(options.url));
  for (const auto& [name, value] : options.headers) {
    // A header that could split the request is refused before anything is sent.
    const auto bad_char = [](unsigned char c) {
      return c == '\r' || c == '\n' || c == 0;
    };
    if (name.empty() || std::any_of(name.begin(), name.end(), bad_char) ||
        std::any_of(value.begin(), value.end(), bad_char))
      return fail(rpc_errc::bad_url, "headers: a name or value is empty or holds a line break");
  }
  auto p = std::make_unique<impl>();
  p->url = std::move(url);
  p->headers.emplace_back("Accept", "application/json");
  for (const auto& [name, value] : options.headers)
    p->headers.emplace_back(name, value);
  p->settings.connect_timeout = options.timeout;
  p->settings.read_timeout = options.timeout;
  p->settings.keep_alive = true;
  p->settings.ca_file = options.ca_file;
  p->options = std::move(options);
  if (!http_connection::open(p->url.origin, p->settings))
    return fail(rpc_errc::bad_url, "url: cannot use '" + p->url.origin + "'");
  return rpc_client(std::move(p));
}

const std::string& rpc_client::url() const { return impl_->options.url; }

result<rpc::reply> rpc_client::request(std::string_view method, json::array params) const {
  const uint64_t id = impl_->next_id.fetch_add(1);
  auto body = impl_->post(rpc::request_body(id, method, std::move(params)));
  if (!body)
    return with_method(method, std::move(body).err());
  auto reply = rpc::parse_response(*body, id);
  if (!reply)
    return with_method(method, std::move(reply).err());
  return std::move(*reply);
}

result<json::value> rpc_client::call_method(std::string_view method, json::array params) const {
  ENACT_TRY(rpc::reply r, request(method, std::move(params)));
  if (!r.error)
    return std::move(r.result);
  const rpc::node_error& e = *r.error;
  std::string msg = std::string(method) + ": node error " + std::to_string(e.code) + ": " + e.message;
  if (e.revert_data)
    msg += std::string(kRevertMarker) + codec::hex::encode_prefixed(*e.revert_data) + ")";
  return fail(rpc_errc::node_error, std::move(msg));
}

result<uint64_t> rpc_client::chain_id() const {
  ENACT_TRY(const json::value v, call_method("eth_chainId"));
  return rpc::parse_quantity_u64(v, "eth_chainId.result");
}

result<uint64_t> rpc_client::block_number() const {
  ENACT_TRY(const json::value v, call_method("eth_blockNumber"));
  return rpc::parse_quantity_u64(v, "eth_blockNumber.result");
}

result<std::optional<block>> rpc_client::block_by_number(const block_tag& tag) const {
  ENACT_TRY(const json::value v, call_method("eth_getBlockByNumber", {tag.value, false}));
  if (v.is_null())
    return std::optional<block>{};
  ENACT_TRY(block b, parse_block(v, "eth_getBlockByNumber.result"));
  return std::optional<block>(std::move(b));
}

result<uint64_t> rpc_client::transaction_count(const address& account, const block_tag& tag) const {
  ENACT_TRY(const json::value v, call_method("eth_getTransactionCount", {rpc::data(account), tag.value}));
  return rpc::parse_quantity_u64(v, "eth_getTransactionCount.result");
}

result<bytes> rpc_client::code(const address& account, const block_tag& tag) const {
  ENACT_TRY(const json::value v, call_method("eth_getCode", {rpc::data(account), tag.value}));
  return rpc::parse_data(v, "eth_getCode.result");
}

result<u256> rpc_client::balance(const address& account, const block_tag& tag) const {
  ENACT_TRY(const json::value v, call_method("eth_getBalance", {rpc::data(account), tag.value}));
  return rpc::parse_quantity(v, "eth_getBalance.result");
}

result<uint64_t> rpc_client::estimate_gas(const call_request& tx) const {
  ENACT_TRY(const json::value v, call_method("eth_estimateGas", {call_object(tx)}));
  return rpc::parse_quantity_u64(v, "eth_estimateGas.result");
}

result<u256> rpc_client::max_priority_fee_per_gas() const {
  ENACT_TRY(const json::value v, call_method("eth_maxPriorityFeePerGas"));
  return rpc::parse_quantity(v, "eth_maxPriorityFeePerGas.result");
}

result<bytes> rpc_client::call(const call_request& tx, const block_tag& tag) const {
  ENACT_TRY(const json::value v, call_method("eth_call", {call_object(tx), tag.value}));
  return rpc::parse_data(v, "eth_call.result");
}

result<bytes> rpc_client::call(const address& to, bytes_view data, const block_tag& tag) const {
  call_request tx;
  tx.to = to;
  tx.data.assign(data.begin(), data.end());
  return call(tx, tag);
}

result<hash256> rpc_client::send_raw_transaction(bytes_view raw) const {
  ENACT_TRY(const json::value v, call_method("eth_sendRawTransaction", {rpc::data(raw)}));
  return rpc::parse_data_fixed<32>(v, "eth_sendRawTransaction.result");
}

result<std::optional<receipt>> rpc_client::transaction_receipt(const hash256& tx_hash) const {
  ENACT_TRY(const json::value v, call_method("eth_getTransactionReceipt", {rpc::data(tx_hash)}));
  if (v.is_null())
    return std::optional<receipt>{};
  ENACT_TRY(receipt r, parse_receipt(v, "eth_getTransactionReceipt.result"));
  return std::optional<receipt>(std::move(r));
}

result<std::vector<log_entry>> rpc_client::get_logs(const log_filter& filter) const {
  json::object f;
  if (filter.block_hash)
    f["blockHash"] = rpc::data(*filter.block_hash);
  if (filter.from_block)
    f["fromBlock"] = filter.from_block->value;
  if (filter.to_block)
    f["toBlock"] = filter.to_block->value;
  if (filter.addresses.size() == 1) {
    f["address"] = rpc::data(filter.addresses.front());
  } else if (!filter.addresses.empty()) {
    json::array a;
    for (const address& x : filter.addresses)
      a.emplace_back(rpc::data(x));
    f["address"] = std::move(a);
  }
  if (!filter.topics.empty()) {
    json::array topics;
    for (const auto& position : filter.topics) {
      if (position.empty()) {
        topics.emplace_back(nullptr);
      } else if (position.size() == 1) {
        topics.emplace_back(rpc::data(position.front()));
      } else {
        json::array any;
        for (const hash256& t : position)
          any.emplace_back(rpc::data(t));
        topics.emplace_back(std::move(any));
      }
    }
    f["topics"] = std::move(topics);
  }
  ENACT_TRY(const json::value v, call_method("eth_getLogs", {std::move(f)}));
  return parse_logs(v, "eth_getLogs.result");
}

// =============================================================================================
// Revert data carried in error messages

std::optional<bytes> revert_data(const error& e) {
  const std::string& m = e.message;
  const size_t at = m.rfind(kRevertMarker);
  if (at == std::string::npos || m.empty() || m.back() != ')')
    return std::nullopt;
  const size_t start = at + kRevertMarker.size();
  auto b = codec::hex::decode_prefixed(std::string_view(m).substr(start, m.size() - 1 - start));
  if (!b)
    return std::nullopt;
  return std::move(*b);
}

std::optional<registry::registry_error> registry_revert(const error& e) {
  if (e.code != rpc_errc::node_error && e.code.category() != enact::detail::registry_category())
    return std::nullopt;
  const std::optional<bytes> data = revert_data(e);
  if (!data)
    return std::nullopt;
  return registry::decode_revert(*data);
}

}  // namespace enact::chain
