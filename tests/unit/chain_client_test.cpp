// SPDX-License-Identifier: Apache-2.0
// enact::chain::rpc_client and transaction_sender (enact/chain/client.hpp) against an in-process
// JSON-RPC node on a loopback port: the typed answers of each method, node errors with revert
// data classified as registry errors, every transport failure (HTTP status, no answer within the
// timeout, connection refused, malformed JSON, an answer to another id), and the sender's
// nonce, fee and gas rules on a scripted chain. Request and answer shapes follow the Ethereum
// execution API specification (ethereum/execution-apis, openrpc.json).
#include <doctest/doctest.h>

#include <httplib.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/json.hpp>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "enact/chain/client.hpp"
#include "enact/chain/registry.hpp"
#include "enact/chain/transaction.hpp"
#include "enact/codec/hex.hpp"
#include "enact/crypto/keccak.hpp"
#include "enact/crypto/secp256k1.hpp"
#include "support.hpp"

namespace json = boost::json;
using namespace enact;
using namespace std::chrono_literals;
namespace reg = enact::chain::registry;

namespace {

/// What the mock node answers to one request.
struct answer {
  json::value result = nullptr;
  std::optional<json::object> error;  // a JSON-RPC error object instead of a result
  int status = 200;                   // an HTTP status other than 200 is sent with `raw`
  std::optional<std::string> raw;     // a body sent as it is
  std::optional<int64_t> id;          // answer to this id instead of the request's
  bool hang = false;                  // never answer (until the node shuts down)
};

struct recorded {
  std::string method;
  json::array params;
  std::multimap<std::string, std::string> headers;
};

class mock_node {
 public:
  using handler = std::function<answer(const std::string& method, const json::array& params)>;

  explicit mock_node(handler h) : handler_(std::move(h)) {
    // Connections are closed now and then, so the client's pool has to replace them.
    server_.set_keep_alive_max_count(3);
    server_.set_keep_alive_timeout(1);
    server_.Post("/rpc", [this](const httplib::Request& req, httplib::Response& res) {
      const json::value body = json::parse(req.body);
      const auto& o = body.as_object();
      const std::string method(o.at("method").as_string());
      const json::array params = o.at("params").as_array();
      {
        std::lock_guard<std::mutex> lock(mutex_);
        recorded r{method, params, {}};
        for (const auto& [k, v] : req.headers)
          r.headers.emplace(k, v);
        calls_.push_back(std::move(r));
      }
      const answer a = handler_(method, params);
      if (a.hang) {
        std::unique_lock<std::mutex> lock(mutex_);
        released_.wait_for(lock, 10s, [this] { return stopping_; });
        return;
      }
      res.status = a.status;
      if (a.raw) {
        res.set_content(*a.raw, "application/json");
        return;
      }
      json::object out{{"jsonrpc", "2.0"}, {"id", a.id ? json::value(*a.id) : o.at("id")}};
      if (a.error)
        out["error"] = *a.error;
      else
        out["result"] = a.result;
      res.set_content(json::serialize(out), "application/json");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running())
      std::this_thread::sleep_for(1ms);
  }
  ~mock_node() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    released_.notify_all();
    server_.stop();
    thread_.join();
  }
  mock_node(const mock_node&) = delete;
  mock_node& operator=(const mock_node&) = delete;

  [[nodiscard]] std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/rpc"; }
  [[nodiscard]] std::vector<recorded> calls() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return calls_;
  }
  [[nodiscard]] size_t count(std::string_view method) const {
    std::lock_guard<std::mutex> lock(mutex_);
    size_t n = 0;
    for (const auto& c : calls_)
      n += c.method == method ? 1 : 0;
    return n;
  }

 private:
  handler handler_;
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  mutable std::mutex mutex_;
  std::condition_variable released_;
  bool stopping_ = false;
  std::vector<recorded> calls_;
};

answer ok(json::value v) {
  answer a;
  a.result = std::move(v);
  return a;
}
answer node_error(int64_t code, std::string message, json::value data = nullptr) {
  answer a;
  json::object e{{"code", code}, {"message", message}};
  if (!data.is_null())
    e["data"] = std::move(data);
  a.error = std::move(e);
  return a;
}

chain::rpc_client client_for(const std::string& url, std::chrono::milliseconds timeout = 10s) {
  chain::rpc_options o;
  o.url = url;
  o.timeout = timeout;
  return chain::rpc_client(o);
}

json::string hx(bytes_view b) { return json::string(codec::hex::encode_prefixed(b)); }
template <size_t N>
std::array<uint8_t, N> filled(uint8_t v) {
  std::array<uint8_t, N> a{};
  a.fill(v);
  return a;
}

/// A loopback port with nothing listening on it.
int closed_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  const int port = test::bind_loopback(fd);
  ::close(fd);
  REQUIRE(port > 0);
  return port;
}

json::object log_json(uint8_t tag, uint64_t index) {
  return {{"address", hx(filled<20>(0x11))},
          {"topics", json::array{hx(filled<32>(tag)), hx(filled<32>(0x22))}},
          {"data", "0x0102"},
          {"blockNumber", "0x10"},
          {"blockHash", hx(filled<32>(0x33))},
          {"transactionHash", hx(filled<32>(0x44))},
          {"transactionIndex", "0x2"},
          {"logIndex", u256{index}.to_hex()},
          {"removed", false}};
}

}  // namespace

TEST_CASE("rpc_client: typed answers of every method") {
  const address who = filled<20>(0xab);
  const address contract = filled<20>(0xcd);
  mock_node node([&](const std::string& m, const json::array& p) -> answer {
    if (m == "eth_chainId")
      return ok("0x7a69");
    if (m == "eth_blockNumber")
      return ok("0x1b4");
    if (m == "eth_getBlockByNumber") {
      if (p.at(0) == "0x999")
        return ok(nullptr);
      json::object b{{"number", "0x1b4"},
                     {"hash", hx(filled<32>(1))},
                     {"parentHash", hx(filled<32>(2))},
                     {"timestamp", "0x6553f100"},
                     {"transactions", json::array{}}};
      if (p.at(0) == "latest")
        b["baseFeePerGas"] = "0x7";
      return ok(b);
    }
    if (m == "eth_getTransactionCount")
      return ok("0x5");
    if (m == "eth_estimateGas")
      return ok("0x5208");
    if (m == "eth_maxPriorityFeePerGas")
      return ok("0x3b9aca00");
    if (m == "eth_call")
      return ok("0x00000000000000000000000000000000000000000000000000000000000000ff");
    if (m == "eth_sendRawTransaction")
      return ok(hx(crypto::keccak256(codec::hex::decode_prefixed(p.at(0).as_string()).value())));
    if (m == "eth_getTransactionReceipt") {
      if (p.at(0) == hx(filled<32>(0)))
        return ok(nullptr);
      return ok(json::object{{"transactionHash", p.at(0)},
                             {"transactionIndex", "0x2"},
                             {"blockHash", hx(filled<32>(0x33))},
                             {"blockNumber", "0x10"},
                             {"from", hx(who)},
                             {"to", hx(contract)},
                             {"contractAddress", nullptr},
                             {"gasUsed", "0x5208"},
                             {"cumulativeGasUsed", "0xa410"},
                             {"effectiveGasPrice", "0x3b9aca07"},
                             {"status", "0x1"},
                             {"logs", json::array{log_json(0x55, 0), log_json(0x66, 1)}}});
    }
    if (m == "eth_getLogs")
      return ok(json::array{log_json(0x77, 3)});
    return node_error(-32601, "the method " + m + " does not exist");
  });
  const chain::rpc_client c = client_for(node.url());

  CHECK(c.chain_id().value() == 31337);
  CHECK(c.block_number().value() == 436);

  const auto latest = c.block_by_number(chain::block_tag::latest()).value();
  REQUIRE(latest);
  CHECK(latest->number == 436);
  CHECK(latest->hash == filled<32>(1));
  CHECK(latest->parent_hash == filled<32>(2));
  CHECK(latest->timestamp == 0x6553f100);
  REQUIRE(latest->base_fee_per_gas);
  CHECK(*latest->base_fee_per_gas == u256{7});
  CHECK(!c.block_by_number(chain::block_tag::number(5)).value()->base_fee_per_gas);
  CHECK(!c.block_by_number(chain::block_tag::number(0x999)).value());

  CHECK(c.transaction_count(who, chain::block_tag::pending()).value() == 5);
  chain::call_request tx;
  tx.from = who;
  tx.to = contract;
  tx.data = {0x12, 0x34};
  tx.value = u256{10};
  CHECK(c.estimate_gas(tx).value() == 21000);
  CHECK(c.max_priority_fee_per_gas().value() == u256{1000000000});
  const bytes ret = c.call(contract, bytes{0xaa}, chain::block_tag::number(16)).value();
  CHECK(ret.size() == 32);
  CHECK(ret.back() == 0xff);
  const bytes raw{0x02, 0xc0};
  CHECK(c.send_raw_transaction(raw).value() == crypto::keccak256(raw));

  const auto r = c.transaction_receipt(filled<32>(0x44)).value();
  REQUIRE(r);
  CHECK(r->transaction_hash == filled<32>(0x44));
  CHECK(r->status);
  CHECK(r->block_number == 16);
  CHECK(r->block_hash == filled<32>(0x33));
  CHECK(r->from == who);
  CHECK(r->to == contract);
  CHECK(!r->contract_address);
  CHECK(r->gas_used == 21000);
  CHECK(r->cumulative_gas_used == 42000);
  CHECK(r->effective_gas_price == u256{1000000007});
  REQUIRE(r->logs.size() == 2);
  CHECK(r->logs[1].topics.at(0) == filled<32>(0x66));
  CHECK(r->logs[1].log_index == 1);
  CHECK(!c.transaction_receipt(filled<32>(0)).value());

  chain::log_filter f;
  f.from_block = chain::block_tag::number(1);
  f.to_block = chain::block_tag::latest();
  f.addresses = {contract};
  f.topics = {{filled<32>(0x77)}, {}, {filled<32>(1), filled<32>(2)}};
  const auto logs = c.get_logs(f).value();
  REQUIRE(logs.size() == 1);
  CHECK(logs[0].address == filled<20>(0x11));
  CHECK(logs[0].topics.size() == 2);
  CHECK(logs[0].data == bytes{1, 2});
  CHECK(logs[0].block_number == 16);
  CHECK(logs[0].transaction_hash == filled<32>(0x44));
  CHECK(logs[0].transaction_index == 2);
  CHECK(logs[0].log_index == 3);
  CHECK(!logs[0].removed);

  // The parameters as the execution API specifies them.
  std::map<std::string, json::array> sent;
  for (const auto& call : node.calls())
    sent[call.method] = call.params;
  CHECK(sent["eth_getTransactionCount"] == json::array{hx(who), "pending"});
  CHECK(sent["eth_estimateGas"] ==
        json::array{json::object{{"from", hx(who)}, {"to", hx(contract)}, {"data", "0x1234"}, {"value", "0xa"}}});
  CHECK(sent["eth_call"] == json::array{json::object{{"to", hx(contract)}, {"data", "0xaa"}}, "0x10"});
  CHECK(sent["eth_sendRawTransaction"] == json::array{"0x02c0"});
  CHECK(sent["eth_getLogs"] ==
        json::array{json::object{{"fromBlock", "0x1"},
                                 {"toBlock", "latest"},
                                 {"address", hx(contract)},
                                 {"topics", json::array{hx(filled<32>(0x77)), nullptr,
                                                        json::array{hx(filled<32>(1)), hx(filled<32>(2))}}}}});
  CHECK(sent["eth_getBlockByNumber"] == json::array{"0x999", false});

  // Two addresses are sent as an array; a method the node does not know is a node error.
  f = {};
  f.block_hash = filled<32>(9);
  f.addresses = {who, contract};
  REQUIRE(c.get_logs(f));
  CHECK(node.calls().back().params ==
        json::array{json::object{{"blockHash", hx(filled<32>(9))}, {"address", json::array{hx(who), hx(contract)}}}});
  auto unknown = c.call_method("eth_unknown");
  CHECK(unknown.code() == rpc_errc::node_error);
  CHECK(unknown.err().message == "eth_unknown: node error -32601: the method eth_unknown does not exist");
  auto raw_reply = c.request("eth_unknown");
  REQUIRE(raw_reply);
  REQUIRE(raw_reply->error);
  CHECK(raw_reply->error->code == -32601);
}

TEST_CASE("rpc_client: a revert keeps its data and reads back as a registry error") {
  const hash256 account = crypto::keccak256(std::string_view("account"));
  const address sender = filled<20>(0x5e);
  const bytes revert = reg::encode_revert(reg::not_admin_error{account, sender});
  mock_node node([&](const std::string& m, const json::array&) -> answer {
    if (m == "eth_call")  // geth, reth and anvil: data is the revert data itself
      return node_error(3, "execution reverted", hx(revert));
    if (m == "eth_estimateGas")  // some nodes nest it: {"data": ...}
      return node_error(-32000, "execution reverted", json::object{{"data", hx(revert)}});
    return node_error(-32000, "insufficient funds for gas * price + value");
  });
  const chain::rpc_client c = client_for(node.url());

  auto r = c.call(filled<20>(1), bytes{});
  REQUIRE(!r);
  CHECK(r.code() == rpc_errc::node_error);
  CHECK(r.err().message.find("node error 3: execution reverted") != std::string::npos);
  CHECK(chain::revert_data(r.err()) == revert);
  const auto re = chain::registry_revert(r.err());
  REQUIRE(re);
  CHECK(re->code == registry_errc::not_admin);
  CHECK(re->args.at("accountHash") == hx(account));
  CHECK(re->args.at("sender") == hx(sender));

  chain::call_request tx;
  tx.to = filled<20>(1);
  auto g = c.estimate_gas(tx);
  REQUIRE(!g);
  REQUIRE(chain::registry_revert(g.err()));
  CHECK(chain::registry_revert(g.err())->code == registry_errc::not_admin);

  // Not a revert: no revert data, no registry error.
  auto other = c.send_raw_transaction(bytes{0x02});
  CHECK(other.code() == rpc_errc::node_error);
  CHECK(!chain::revert_data(other.err()));
  CHECK(!chain::registry_revert(other.err()));
}

TEST_CASE("rpc_client: transport and protocol failures are typed") {
  SUBCASE("HTTP 500") {
    mock_node node([](const std::string&, const json::array&) {
      answer a;
      a.status = 500;
      a.raw = "upstream exploded";
      return a;
    });
    auto r = client_for(node.url()).chain_id();
    CHECK(r.code() == rpc_errc::http_status);
    CHECK(r.err().message.find("HTTP 500") != std::string::npos);
    CHECK(r.err().message.find("upstream exploded") != std::string::npos);
  }
  SUBCASE("no answer within the timeout") {
    mock_node node([](const std::string&, const json::array&) {
      answer a;
      a.hang = true;
      return a;
    });
    auto r = client_for(node.url(), 300ms).block_number();
    CHECK(r.code() == rpc_errc::timeout);
    CHECK(r.err().message.find("eth_blockNumber") == 0);
  }
  SUBCASE("connection refused") {
    auto r = client_for("http://127.0.0.1:" + std::to_string(closed_port())).chain_id();
    CHECK(r.code() == rpc_errc::unreachable);
  }
  SUBCASE("malformed JSON") {
    mock_node node([](const std::string&, const json::array&) {
      answer a;
      a.raw = "{\"jsonrpc\":\"2.0\",";
      return a;
    });
    CHECK(client_for(node.url()).chain_id().code() == rpc_errc::bad_json);
  }
  SUBCASE("an answer to another request") {
    mock_node node([](const std::string&, const json::array&) {
      answer a = ok("0x1");
      a.id = 424242;
      return a;
    });
    CHECK(client_for(node.url()).chain_id().code() == rpc_errc::id_mismatch);
  }
  SUBCASE("results of the wrong shape") {
    mock_node node([](const std::string& m, const json::array&) -> answer {
      if (m == "eth_chainId")
        return ok("0x0001");  // leading zero: not a QUANTITY
      if (m == "eth_blockNumber")
        return ok(17);
      if (m == "eth_sendRawTransaction")
        return ok("0x1234");  // not 32 bytes
      if (m == "eth_getTransactionReceipt")
        return ok(json::object{{"transactionHash", hx(filled<32>(1))}});
      return ok(json::array{json::object{{"address", "0x12"}}});
    });
    const auto c = client_for(node.url());
    CHECK(c.chain_id().code() == rpc_errc::bad_quantity);
    CHECK(c.block_number().code() == rpc_errc::bad_quantity);
    CHECK(c.send_raw_transaction(bytes{1}).code() == rpc_errc::bad_data);
    auto receipt = c.transaction_receipt(filled<32>(1));
    CHECK(receipt.code() == rpc_errc::bad_response);
    CHECK(receipt.err().message.find("transactionIndex: missing") != std::string::npos);
    CHECK(c.get_logs({}).code() == rpc_errc::bad_data);
  }
}

TEST_CASE("rpc_client: URLs and headers") {
  const char* bad[] = {"ftp://node",
                       "node:8545",
                       "http://",
                       "http://user:pw@node:8545",
                       "http://node:0",
                       "http://node:65536",
                       "http://node/rpc?key=1",
                       "http://[::1"};
  for (const char* url : bad) {
    INFO(url);
    chain::rpc_options o;
    o.url = url;
    CHECK(chain::rpc_client::create(o).code() == rpc_errc::bad_url);
  }
  chain::rpc_options split;
  split.url = "http://127.0.0.1:1";
  split.headers = {{"X-Api-Key", "abc\r\nX-Injected: 1"}};
  CHECK(chain::rpc_client::create(split).code() == rpc_errc::bad_url);

  mock_node node([](const std::string&, const json::array&) { return ok("0x1"); });
  chain::rpc_options o;
  o.url = node.url();
  o.headers = {{"X-Api-Key", "node-key"}};
  const auto c = chain::rpc_client::create(o).value();
  CHECK(c.chain_id().value() == 1);
  const auto calls = node.calls();
  REQUIRE(calls.size() == 1);
  const auto& hs = calls[0].headers;
  CHECK(hs.count("X-Api-Key") == 1);
  CHECK(hs.find("X-Api-Key")->second == "node-key");
  CHECK(hs.find("Content-Type")->second == "application/json");
}

namespace {

/// A scripted chain for the sender: answers with fixed fees and gas, tracks the pending nonce,
/// records the transactions it is sent, and mines each after `polls_before_receipt` receipt
/// queries with the status given.
struct fake_chain {
  std::mutex mutex;
  uint64_t pending_nonce = 5;
  uint64_t min_nonce = 0;        // sends with a lower nonce are refused "nonce too low"
  int polls_before_receipt = 0;  // receipt queries answered null before the receipt
  bool status = true;
  bool never_mined = false;
  std::optional<bytes> estimate_revert;
  std::vector<chain::decoded_tx> sent;
  std::map<hash256, int> polls;

  answer operator()(const std::string& m, const json::array& p) {
    std::lock_guard<std::mutex> lock(mutex);
    if (m == "eth_chainId")
      return ok("0x7a69");
    if (m == "eth_maxPriorityFeePerGas")
      return ok("0x3b9aca00");  // 1 gwei
    if (m == "eth_getBlockByNumber")
      return ok(json::object{{"number", "0x10"},
                             {"hash", hx(filled<32>(1))},
                             {"parentHash", hx(filled<32>(2))},
                             {"timestamp", "0x1"},
                             {"baseFeePerGas", "0x2540be400"}});  // 10 gwei
    if (m == "eth_estimateGas") {
      if (estimate_revert)
        return node_error(3, "execution reverted", hx(*estimate_revert));
      return ok("0xc350");  // 50000
    }
    if (m == "eth_getTransactionCount")
      return ok(json::string(u256{pending_nonce}.to_hex()));
    if (m == "eth_sendRawTransaction") {
      const bytes raw = codec::hex::decode_prefixed(p.at(0).as_string()).value();
      auto d = chain::decode(raw);
      if (!d)
        return node_error(-32602, "invalid transaction");
      if (d->tx.nonce < min_nonce)
        return node_error(-32003, "nonce too low: next nonce " + std::to_string(min_nonce) + ", tx nonce " +
                                      std::to_string(d->tx.nonce));
      sent.push_back(*d);
      pending_nonce = std::max(pending_nonce, d->tx.nonce + 1);
      return ok(hx(d->hash));
    }
    if (m == "eth_getTransactionReceipt") {
      const hash256 h = codec::hex::decode_fixed<32>(p.at(0).as_string()).value();
      if (never_mined || polls[h]++ < polls_before_receipt)
        return ok(nullptr);
      const auto it = std::find_if(sent.begin(), sent.end(), [&](const chain::decoded_tx& t) { return t.hash == h; });
      if (it == sent.end())
        return ok(nullptr);
      return ok(json::object{{"transactionHash", hx(h)},
                             {"transactionIndex", "0x0"},
                             {"blockHash", hx(filled<32>(3))},
                             {"blockNumber", "0x11"},
                             {"from", hx(it->from)},
                             {"to", it->tx.to ? json::value(hx(*it->tx.to)) : json::value(nullptr)},
                             {"contractAddress", nullptr},
                             {"gasUsed", "0xabe0"},
                             {"cumulativeGasUsed", "0xabe0"},
                             {"effectiveGasPrice", "0x4a817c800"},
                             {"status", status ? "0x1" : "0x0"},
                             {"logs", json::array{}}});
    }
    return node_error(-32601, "unknown method " + m);
  }
};

// Hardhat / anvil development account 0 (a published test key that protects nothing).
constexpr std::string_view kDevKey = "ac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
constexpr std::string_view kDevAddress = "f39fd6e51aad88f6f4ce6ab8827279cfffb92266";

chain::transaction_sender sender_for(const mock_node& node, chain::sender_options o = {}) {
  o.poll_interval = 5ms;
  auto client = std::make_shared<const chain::rpc_client>(client_for(node.url()));
  return chain::transaction_sender::create(client, Secret(codec::hex::decode(kDevKey).value()), o).value();
}

}  // namespace

TEST_CASE("transaction_sender: chain id, nonce, fees and gas") {
  fake_chain fc;
  fc.polls_before_receipt = 2;
  mock_node node([&](const std::string& m, const json::array& p) { return fc(m, p); });
  auto s = sender_for(node);
  CHECK(codec::hex::encode(s.from()) == kDevAddress);

  const address to = filled<20>(0x42);
  const bytes data{0xde, 0xad};
  const auto r = s.send(to, data, u256{3});
  REQUIRE_MESSAGE(r, (r ? "" : r.err().message));
  CHECK(r->status);
  REQUIRE(fc.sent.size() == 1);
  const chain::eip1559_tx& tx = fc.sent[0].tx;
  CHECK(fc.sent[0].from == s.from());
  CHECK(r->transaction_hash == fc.sent[0].hash);
  CHECK(tx.chain_id == 31337);
  CHECK(tx.nonce == 5);
  CHECK(tx.max_priority_fee_per_gas == u256{1000000000});
  CHECK(tx.max_fee_per_gas == u256{2 * 10000000000ULL + 1000000000});  // 2 × base + priority
  CHECK(tx.gas_limit == 60000);                                        // 50000 × 1.2
  CHECK(tx.to == to);
  CHECK(tx.value == u256{3});
  CHECK(tx.data == data);
  CHECK(fc.polls[fc.sent[0].hash] == 3);  // two nulls, then the receipt

  // The estimate request names the sender, the target, the data and the value.
  for (const auto& c : node.calls())
    if (c.method == "eth_estimateGas")
      CHECK(c.params ==
            json::array{json::object{
                {"from", "0x" + std::string(kDevAddress)}, {"to", hx(to)}, {"data", "0xdead"}, {"value", "0x3"}}});

  // The next transaction counts the nonce locally and does not ask for the chain id again.
  REQUIRE(s.send(to, data));
  CHECK(fc.sent.at(1).tx.nonce == 6);
  CHECK(fc.sent.at(1).tx.value == u256{});
  CHECK(node.count("eth_getTransactionCount") == 1);
  CHECK(node.count("eth_chainId") == 1);
  CHECK(node.count("eth_estimateGas") == 2);
}

TEST_CASE("transaction_sender: a stale nonce is fetched again after \"nonce too low\"") {
  fake_chain fc;
  mock_node node([&](const std::string& m, const json::array& p) { return fc(m, p); });
  auto s = sender_for(node);
  REQUIRE(s.send(filled<20>(1), {}));
  CHECK(fc.sent.at(0).tx.nonce == 5);
  // Another wallet with the same key sent transactions 6..8 meanwhile.
  {
    std::lock_guard<std::mutex> lock(fc.mutex);
    fc.pending_nonce = 9;
    fc.min_nonce = 9;
  }
  const auto r = s.send(filled<20>(1), {});
  REQUIRE_MESSAGE(r, (r ? "" : r.err().message));
  CHECK(fc.sent.at(1).tx.nonce == 9);
  CHECK(node.count("eth_getTransactionCount") == 2);
  CHECK(node.count("eth_sendRawTransaction") == 3);  // 5, 6 (refused), 9
  REQUIRE(s.send(filled<20>(1), {}));
  CHECK(fc.sent.at(2).tx.nonce == 10);
}

TEST_CASE("transaction_sender: failures") {
  SUBCASE("a revert during estimation is the registry error, and nothing is sent") {
    fake_chain fc;
    fc.estimate_revert = reg::encode_revert(reg::relay_not_allowed_error{crypto::keccak256(std::string_view("a")), {}});
    mock_node node([&](const std::string& m, const json::array& p) { return fc(m, p); });
    auto s = sender_for(node);
    const auto r = s.send(filled<20>(1), {});
    REQUIRE(!r);
    CHECK(r.code() == registry_errc::relay_not_allowed);
    CHECK(r.err().message.find("RelayNotAllowed(") != std::string::npos);
    REQUIRE(chain::registry_revert(r.err()));
    CHECK(chain::registry_revert(r.err())->code == registry_errc::relay_not_allowed);
    CHECK(node.count("eth_sendRawTransaction") == 0);
    CHECK(node.count("eth_getTransactionCount") == 0);
  }
  SUBCASE("a receipt with status 0") {
    fake_chain fc;
    fc.status = false;
    mock_node node([&](const std::string& m, const json::array& p) { return fc(m, p); });
    auto s = sender_for(node);
    const auto r = s.send(filled<20>(1), {});
    CHECK(r.code() == rpc_errc::tx_failed);
    CHECK(r.err().message.find(hx(fc.sent.at(0).hash)) != std::string::npos);
  }
  SUBCASE("a receipt that never comes") {
    fake_chain fc;
    fc.never_mined = true;
    mock_node node([&](const std::string& m, const json::array& p) { return fc(m, p); });
    chain::sender_options o;
    o.receipt_timeout = 100ms;
    auto s = sender_for(node, o);
    const auto h = s.submit(filled<20>(1), {});
    REQUIRE(h);
    CHECK(s.wait_for_receipt(*h).code() == rpc_errc::timeout);
  }
  SUBCASE("a send the node refuses is returned, and the nonce is asked again") {
    fake_chain fc;
    std::atomic<int> refusals{1};
    mock_node node([&](const std::string& m, const json::array& p) -> answer {
      if (m == "eth_sendRawTransaction" && refusals.fetch_sub(1) > 0)
        return node_error(-32000, "insufficient funds for gas * price + value");
      return fc(m, p);
    });
    auto s = sender_for(node);
    const auto r = s.submit(filled<20>(1), {});
    CHECK(r.code() == rpc_errc::node_error);
    REQUIRE(s.submit(filled<20>(1), {}));
    CHECK(node.count("eth_getTransactionCount") == 2);
  }
  SUBCASE("an invalid key") {
    mock_node node([](const std::string&, const json::array&) { return ok("0x1"); });
    auto client = std::make_shared<const chain::rpc_client>(client_for(node.url()));
    CHECK(chain::transaction_sender::create(client, Secret(bytes(32, 0))).code() ==
          secp256k1_errc::invalid_private_key);
  }
}

TEST_CASE("transaction_sender: concurrent sends from one key get distinct, consecutive nonces") {
  fake_chain fc;
  mock_node node([&](const std::string& m, const json::array& p) { return fc(m, p); });
  auto s = sender_for(node);
  constexpr int kThreads = 6;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i)
    threads.emplace_back([&, i] {
      if (!s.send(filled<20>(static_cast<uint8_t>(i)), bytes{static_cast<uint8_t>(i)}))
        ++failures;
    });
  for (auto& t : threads)
    t.join();
  CHECK(failures == 0);
  std::set<uint64_t> nonces;
  for (const auto& t : fc.sent)
    nonces.insert(t.tx.nonce);
  CHECK(nonces.size() == kThreads);
  CHECK(*nonces.begin() == 5);
  CHECK(*nonces.rbegin() == 5 + kThreads - 1);
  CHECK(node.count("eth_getTransactionCount") == 1);
  CHECK(node.count("eth_chainId") == 1);
}
