// SPDX-License-Identifier: Apache-2.0
// JSON-RPC over HTTP(S) with the SDK's transport (client/transport.hpp), and the transaction sender. Connections are
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

namespace enact::chain {

namespace json = boost::json;
using std::chrono::milliseconds;

namespace {

constexpr std::string_view kRevertMarker = " (revert data ";
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

bool nonce_too_low(const error& e) {
  if (e.code != rpc_errc::node_error)
    return false;
  std::string m = e.message;
  std::transform(m.begin(), m.end(), m.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return m.find("nonce too low") != std::string::npos || m.find("nonce is too low") != std::string::npos;
}

/// A new transaction refused because its nonce is taken: mined ("nonce too low"), or held in the
/// node's pool by another transaction that this one does not outbid ("replacement transaction
/// underpriced"; "already known": the same transaction, signed for the same write by another
/// process). Either way the nonce belongs to another send, and the pending count is asked again.
bool nonce_taken(const error& e) {
  if (nonce_too_low(e))
    return true;
  if (e.code != rpc_errc::node_error)
    return false;
  std::string m = e.message;
  std::transform(m.begin(), m.end(), m.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return m.find("replacement transaction underpriced") != std::string::npos ||
         m.find("replacement underpriced") != std::string::npos || m.find("already known") != std::string::npos;
}

bool transient(const error& e) {
  return e.code == rpc_errc::unreachable || e.code == rpc_errc::timeout || e.code == rpc_errc::http_status;
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

// =============================================================================================
// transaction_sender

struct transaction_sender::impl {
  std::shared_ptr<const rpc_client> client;
  secret key;
  address from{};
  sender_options options;
  std::mutex mutex;
  std::optional<uint64_t> chain_id;
  std::optional<uint64_t> next_nonce;

  /// The chain id (fetched once), fees and gas limit of `req`; the nonce is assigned when sent.
  result<eip1559_tx> prepare(const tx_request& req) {
    const rpc_client& rpc = *client;
    eip1559_tx tx;
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (!chain_id) {
        ENACT_TRY(const uint64_t id, rpc.chain_id());
        chain_id = id;
      }
      tx.chain_id = *chain_id;
    }
    ENACT_TRY(const u256 priority, rpc.max_priority_fee_per_gas());
    ENACT_TRY(const u256 base_fee, latest_base_fee());
    tx.max_priority_fee_per_gas = priority;
    // Twice the base fee keeps the transaction includable through six full blocks of +12.5%.
    tx.max_fee_per_gas = u256{2} * base_fee + priority;
    tx.to = req.to;
    tx.value = req.value;
    tx.data = req.data;
    if (req.gas_limit) {
      tx.gas_limit = *req.gas_limit;
      return tx;
    }
    call_request estimate;
    estimate.from = from;
    estimate.to = req.to;
    estimate.data = req.data;
    if (req.value)
      estimate.value = req.value;
    auto gas = rpc.estimate_gas(estimate);
    if (!gas) {
      if (const std::optional<bytes> revert = revert_data(gas.err())) {
        const registry::registry_error re = registry::decode_revert(*revert);
        return fail(re.code, "eth_estimateGas: " + re.message + std::string(kRevertMarker) +
                                 codec::hex::encode_prefixed(*revert) + ")");
      }
      return std::move(gas).err();
    }
    const u256 limit = u256{*gas} * u256{100 + options.gas_margin_percent} / u256{100};
    tx.gas_limit = limit.fits_u64() ? static_cast<uint64_t>(limit) : UINT64_MAX;
    return tx;
  }

  result<u256> latest_base_fee() const {
    ENACT_TRY(const std::optional<block> latest, client->block_by_number(block_tag::latest()));
    if (!latest)
      return fail(rpc_errc::bad_response, "eth_getBlockByNumber: the node has no latest block");
    if (!latest->base_fee_per_gas)
      return fail(rpc_errc::bad_response, "eth_getBlockByNumber: the latest block has no baseFeePerGas (no EIP-1559)");
    return *latest->base_fee_per_gas;
  }

  /// Assigns the next nonce to `tx`, signs and sends it (serialised with other sends of this
  /// sender and, with shared_nonces, of every process sharing the lock).
  result<hash256> send_next(eip1559_tx& tx) {
    std::lock_guard<std::mutex> lock(mutex);
    if (!options.shared_nonces)
      return send_locked(tx);
    return options.shared_nonces->exclusive(from, [&] {
      // Another process may have sent since this one last did: the node's count is the truth.
      next_nonce.reset();
      auto sent = send_locked(tx);
      next_nonce.reset();
      return sent;
    });
  }

  /// send_next with the locks held.
  result<hash256> send_locked(eip1559_tx& tx) {
    const rpc_client& rpc = *client;
    for (unsigned attempt = 0;; ++attempt) {
      if (!next_nonce) {
        ENACT_TRY(const uint64_t n, rpc.transaction_count(from, block_tag::pending()));
        next_nonce = n;
      }
      tx.nonce = *next_nonce;
      ENACT_TRY(const bytes raw, sign(tx, key));
      auto sent = rpc.send_raw_transaction(raw);
      if (sent) {
        ++*next_nonce;
        if (*sent != tx_hash(raw))
          return fail(rpc_errc::bad_response, "eth_sendRawTransaction: the node reports hash " +
                                                  codec::hex::encode_prefixed(*sent) + " for transaction " +
                                                  codec::hex::encode_prefixed(tx_hash(raw)));
        return *sent;
      }
      // Whatever happened, the local count may be wrong now (the node may even have taken the
      // transaction before the answer was lost): ask the node next time.
      next_nonce.reset();
      if (!nonce_taken(sent.err()) || attempt >= options.nonce_retries)
        return std::move(sent).err();
    }
  }

  /// Polls for the receipt of any of `hashes` until `deadline`: the receipt, nullopt at the
  /// deadline, or a non-transient error. The first question comes 1 ms after the call, then the
  /// pause doubles up to poll_interval (a local node mines within milliseconds).
  result<std::optional<receipt>> poll(std::span<const hash256> hashes, std::chrono::steady_clock::time_point deadline,
                                      std::optional<error>& last_error) const {
    auto pause = std::chrono::milliseconds(1);
    for (;;) {
      for (const hash256& h : hashes) {
        auto r = client->transaction_receipt(h);
        if (r && r->has_value())
          return std::move(*r);
        // A node that is briefly unreachable while the transaction is pending is asked again.
        if (!r) {
          if (!transient(r.err()))
            return std::move(r).err();
          last_error = std::move(r).err();
        }
      }
      const auto now = std::chrono::steady_clock::now();
      if (now >= deadline)
        return std::optional<receipt>{};
      std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(pause, deadline - now));
      pause = std::min(pause * 2, options.poll_interval);
    }
  }
};

namespace {

/// How often a transaction awaiting its receipt checks whether its nonce was mined by another.
constexpr std::chrono::milliseconds kNonceCheckInterval{1000};

/// ceil(v × (1000 + kReplacementBumpPermille) / 1000): the least fee a replacement may offer.
u256 bumped(const u256& v) { return (v * u256{1000 + kReplacementBumpPermille} + u256{999}) / u256{1000}; }

bool node_message_has(const error& e, std::string_view needle) {
  if (e.code != rpc_errc::node_error)
    return false;
  std::string m = e.message;
  std::transform(m.begin(), m.end(), m.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return m.find(needle) != std::string::npos;
}

error failed_receipt(const receipt& rc) {
  return fail(rpc_errc::tx_failed, "transaction " + codec::hex::encode_prefixed(rc.transaction_hash) +
                                       ": status 0 in block " + std::to_string(rc.block_number) + " (gas used " +
                                       std::to_string(rc.gas_used) + ")");
}

}  // namespace

transaction_sender::transaction_sender(std::unique_ptr<impl> p) : impl_(std::move(p)) {}
transaction_sender::~transaction_sender() = default;
transaction_sender::transaction_sender(transaction_sender&&) noexcept = default;
transaction_sender& transaction_sender::operator=(transaction_sender&&) noexcept = default;

result<transaction_sender> transaction_sender::create(std::shared_ptr<const rpc_client> client, secret private_key,
                                                      sender_options options) {
  ENACT_TRY(const crypto::secp256k1::public_key pub, crypto::secp256k1::public_key_of(private_key));
  auto p = std::make_unique<impl>();
  p->client = std::move(client);
  p->key = std::move(private_key);
  p->from = crypto::secp256k1::to_address(pub);
  p->options = options;
  return transaction_sender(std::move(p));
}

const address& transaction_sender::from() const { return impl_->from; }

result<hash256> transaction_sender::submit(const address& to, bytes_view data, const u256& value) {
  tx_request req;
  req.to = to;
  req.data.assign(data.begin(), data.end());
  req.value = value;
  return submit(req);
}

result<hash256> transaction_sender::submit(const tx_request& req) {
  ENACT_TRY(eip1559_tx tx, impl_->prepare(req));
  return impl_->send_next(tx);
}

result<receipt> transaction_sender::wait_for_receipt(const hash256& tx_hash) const {
  const impl& m = *impl_;
  const auto deadline = std::chrono::steady_clock::now() + m.options.receipt_timeout;
  std::optional<error> last_error;
  ENACT_TRY(std::optional<receipt> r, m.poll(std::span(&tx_hash, 1), deadline, last_error));
  if (!r)
    return fail(rpc_errc::timeout, "receipt of " + codec::hex::encode_prefixed(tx_hash) + " not available after " +
                                       std::to_string(m.options.receipt_timeout.count()) + " ms" +
                                       (last_error ? " (last error: " + last_error->message + ")" : std::string()));
  if (!r->status)
    return failed_receipt(*r);
  return std::move(*r);
}

result<receipt> transaction_sender::send(const address& to, bytes_view data, const u256& value) {
  ENACT_TRY(const hash256 h, submit(to, data, value));
  return wait_for_receipt(h);
}

result<receipt> transaction_sender::send(const tx_request& req) {
  impl& m = *impl_;
  ENACT_TRY(eip1559_tx tx, m.prepare(req));
  ENACT_TRY(const hash256 first, m.send_next(tx));
  if (m.options.replace_after.count() <= 0)
    return wait_for_receipt(first);

  // The same nonce is sent again with higher fees while no receipt arrives; any of the
  // transactions sent may be the one mined, so all of them are watched.
  using clock = std::chrono::steady_clock;
  const auto deadline = clock::now() + m.options.receipt_timeout;
  std::vector<hash256> sent = {first};
  std::optional<error> last_error;
  for (unsigned replacements = 0;;) {
    const bool may_replace = replacements < m.options.max_replacements;
    const auto round_end = may_replace ? std::min(deadline, clock::now() + m.options.replace_after) : deadline;
    std::optional<receipt> r;
    bool superseded = false;
    for (;;) {
      const auto check_at = std::min(round_end, clock::now() + kNonceCheckInterval);
      ENACT_TRY(std::optional<receipt> got, m.poll(sent, check_at, last_error));
      if (got) {
        r = std::move(got);
        break;
      }
      // Another transaction may hold this nonce now (a node that restarted without the one sent,
      // while the nonce was given out again): then none of ours can be mined, and waiting for
      // the deadline only delays the answer.
      auto mined = m.client->transaction_count(m.from, block_tag::latest());
      if (mined && *mined > tx.nonce) {
        ENACT_TRY(std::optional<receipt> last, m.poll(sent, clock::now(), last_error));
        if (last)
          r = std::move(last);
        else
          superseded = true;
        break;
      }
      if (clock::now() >= round_end)
        break;
    }
    if (superseded) {
      {
        std::lock_guard<std::mutex> lock(m.mutex);
        m.next_nonce.reset();
      }
      return fail(rpc_errc::timeout, "nonce " + std::to_string(tx.nonce) + " was used by another transaction of " +
                                         codec::hex::encode_prefixed(m.from) + "; this one was not mined");
    }
    if (r) {
      if (!r->status)
        return failed_receipt(*r);
      return std::move(*r);
    }
    if (!may_replace || clock::now() >= deadline) {
      // The nonce may never be mined (a node that dropped the transaction): the next send asks
      // the node's pending count rather than leaving a gap.
      {
        std::lock_guard<std::mutex> lock(m.mutex);
        m.next_nonce.reset();
      }
      std::string hashes;
      for (const hash256& h : sent)
        hashes += (hashes.empty() ? "" : ", ") + codec::hex::encode_prefixed(h);
      return fail(rpc_errc::timeout, "no receipt for nonce " + std::to_string(tx.nonce) + " (transactions " + hashes +
                                         ") after " + std::to_string(m.options.receipt_timeout.count()) + " ms" +
                                         (last_error ? " (last error: " + last_error->message + ")" : std::string()));
    }
    ++replacements;
    tx.max_priority_fee_per_gas = bumped(tx.max_priority_fee_per_gas);
    tx.max_fee_per_gas = bumped(tx.max_fee_per_gas);
    // A base fee that rose meanwhile is followed too, so the replacement stays includable.
    if (auto base = m.latest_base_fee(); base) {
      const u256 current = u256{2} * *base + tx.max_priority_fee_per_gas;
      if (tx.max_fee_per_gas < current)
        tx.max_fee_per_gas = current;
    }
    ENACT_TRY(const bytes raw, sign(tx, m.key));
    auto h = m.client->send_raw_transaction(raw);
    if (h) {
      sent.push_back(*h);
      continue;
    }
    // "nonce too low" / "already known": one of the transactions sent is mined or pooled, its
    // receipt is awaited; "underpriced": the next round bids higher; transport: ask again.
    last_error = std::move(h).err();
    if (!transient(*last_error) && !nonce_too_low(*last_error) && !node_message_has(*last_error, "underpriced") &&
        !node_message_has(*last_error, "already known") && !node_message_has(*last_error, "already imported"))
      return std::move(*last_error);
  }
}

result<receipt> transaction_sender::deploy(bytes_view init_code) {
  tx_request req;
  req.data.assign(init_code.begin(), init_code.end());
  ENACT_TRY(receipt r, send(req));
  if (!r.contract_address)
    return fail(rpc_errc::bad_response, "eth_getTransactionReceipt: the receipt of contract creation " +
                                            codec::hex::encode_prefixed(r.transaction_hash) +
                                            " has no contractAddress");
  return r;
}

}  // namespace enact::chain
