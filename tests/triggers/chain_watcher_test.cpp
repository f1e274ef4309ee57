// SPDX-License-Identifier: Apache-2.0
// The chain watcher (server/triggers/chain_watcher.hpp) against a real EVM: anvil (the
// enact_test_anvil fixture) with tests/triggers/Emitter.sol deployed (creation code in Emitter.bin,
// kept equal to the source by ctest triggers.emitter_bytecode), a SQLite trigger store in a temp
// directory, and the watcher driven pass by pass with poll_once (or by its own thread, polled for
// its result). Covered: one run per matching log with the params of docs/protocol.md §4 and decoded
// arguments, topic filters (a topic, alternatives, null), start_block backfill, ranges halved on a
// node's "more than N results" refusal (a proxy in front of anvil refuses like a hosted node),
// restart resuming at the stored checkpoint without a second firing, an anvil_reorg of depth 2
// with replaced transactions, one deeper than the confirmations while no watcher runs (found by
// the checkpoint's stored hash), and a PATCH to an earlier start_block backfilling.
#include <doctest/doctest.h>

#include <httplib.h>
#include <stdlib.h>

#include <boost/json.hpp>

#include <atomic>
#include <cstdio>
#include <functional>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

#include "anvil_process.hpp"
#include "enact/codec/abi.hpp"
#include "enact/codec/hex.hpp"
#include "enact/address.hpp"
#include "enact/crypto/keccak.hpp"
#include "triggers/chain_watcher.hpp"
#include "triggers/ids.hpp"
#include "triggers/settings.hpp"
#include "triggers/sqlite_store.hpp"
#include "triggers/validate.hpp"

namespace {

namespace json = boost::json;
namespace fs = std::filesystem;
using namespace enact;
using namespace enact::triggers;
using enact::test::anvil_process;

constexpr const char* kPing = "Ping(address indexed from, uint256 indexed id, string note, uint256 amount)";
constexpr const char* kTagged = "Tagged(bytes32 indexed tag, string indexed label, bool flag, int64 delta)";

std::string emitter_bin() { return enact::test::creation_code(ENACT_SOURCE_DIR "/tests/triggers/Emitter.bin"); }

std::string addr_hex(const address& a) { return codec::hex::encode_prefixed(a); }

hash256 word(uint64_t n) {
  hash256 w{};
  for (int i = 0; i < 8; ++i)
    w[31 - i] = static_cast<uint8_t>(n >> (8 * i));
  return w;
}

hash256 word(const address& a) {
  hash256 w{};
  std::copy(a.begin(), a.end(), w.begin() + 12);
  return w;
}

struct temp_dir {
  fs::path path;
  temp_dir() {
    std::string tmpl = (fs::temp_directory_path() / "enact-chainwatch-XXXXXX").string();
    REQUIRE(mkdtemp(tmpl.data()) != nullptr);
    path = tmpl;
  }
  ~temp_dir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

/// Anvil with the emitter deployed, and a store.
struct fixture {
  anvil_process node;
  address emitter{};
  temp_dir dir;
  std::unique_ptr<sqlite_store> db;
  system_clock clock;

  fixture() {
    const json::value receipt = send(0, json::object{{"data", emitter_bin()}});
    emitter = parse_address(receipt.at("contractAddress").as_string()).value();
    reopen();
  }

  void reopen() {
    db.reset();
    db = sqlite_store::open((dir.path / "triggers.sqlite").string()).value();
  }

  /// eth_sendTransaction from dev account `from` (anvil mines one block per transaction).
  json::value send(size_t from, json::object tx) {
    tx["from"] = addr_hex(anvil_process::dev_addresses()[from]);
    const json::value hash = node.rpc("eth_sendTransaction", json::array{tx});
    // Anvil mines at once but may publish the receipt a moment later: poll for it.
    json::value receipt;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while ((receipt = node.rpc("eth_getTransactionReceipt", json::array{hash})).is_null() &&
           std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    REQUIRE_MESSAGE(receipt.is_object(), (json::serialize(tx) + " -> " + json::serialize(hash)));
    REQUIRE(receipt.at("status").as_string() == "0x1");
    return receipt;
  }

  json::object call_tx(std::string_view signature, std::vector<codec::abi::value> args) {
    const bytes data = codec::abi::encode_call(signature, args).value();
    return json::object{{"to", addr_hex(emitter)}, {"data", codec::hex::encode_prefixed(data)}};
  }

  json::object ping_tx(uint64_t id, std::string note, uint64_t amount) {
    return call_tx("ping(uint256,string,uint256)",
                   {codec::abi::value::number(u256{id}), codec::abi::value::text(std::move(note)),
                    codec::abi::value::number(u256{amount})});
  }

  json::value ping(size_t from, uint64_t id, std::string note = "hello", uint64_t amount = 1000) {
    return send(from, ping_tx(id, std::move(note), amount));
  }

  uint64_t head() const { return std::stoull(std::string(node.rpc("eth_blockNumber").as_string()), nullptr, 16); }

  hash256 block_hash(uint64_t n) const {
    char quantity[32];
    std::snprintf(quantity, sizeof quantity, "0x%llx", static_cast<unsigned long long>(n));
    const json::value b = node.rpc("eth_getBlockByNumber", json::array{quantity, false});
    return codec::hex::decode_fixed<32>(b.at("hash").as_string()).value();
  }

  /// A chain-event trigger of "alice" on chain svc, its config validated as the API does.
  trigger create(json::object config) {
    config["chain"] = "svc";
    if (!config.contains("contract"))
      config["contract"] = addr_hex(emitter);
    config_rules rules;
    rules.chain_rpc["svc"] = node.url();
    const json::value cv = config;
    auto valid = validate_config(trigger_type::chain_event, &cv, rules);
    REQUIRE_MESSAGE(valid, (valid ? std::string() : valid.err().message));
    trigger t;
    t.id = new_trigger_id();
    t.owner = "alice";
    t.type = trigger_type::chain_event;
    t.name = "watch " + t.id.substr(4, 6);
    t.action_cid = "QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG";
    t.sealed_usage_key = bytes{1, 2, 3};
    t.usage_key_hash = crypto::keccak256(std::string_view("key"));
    t.max_runs_per_minute = kMaxRunsPerMinuteLimit;  // the run limits have a store suite case
    t.max_queued_runs = kMaxQueuedRunsLimit;
    t.config = std::move(*valid);
    t.created_at = t.updated_at = clock.now();
    return db->create_trigger(t, std::nullopt).value();
  }

  std::vector<run> runs(const trigger& t) {
    auto l = db->list_runs("alice", t.id, page{10000, 0}).value();
    std::reverse(l.items.begin(), l.items.end());  // oldest first
    return l.items;
  }

  chain_watch_config chain(std::string url = {}) const {
    chain_watch_config c;
    c.chain = "svc";
    c.rpc_url = url.empty() ? node.url() : url;
    c.poll_interval = std::chrono::milliseconds(20);
    return c;
  }
};

size_t poll(chain_watcher& w) {
  auto r = w.poll_once("svc");
  REQUIRE_MESSAGE(r, (r ? std::string() : r.err().message));
  return *r;
}

/// A JSON-RPC proxy in front of anvil that refuses eth_getLogs answers of more than `limit` logs
/// the way hosted nodes do (code -32005, "query returned more than N results").
struct refusing_proxy {
  httplib::Server server;
  std::thread thread;
  std::string url;
  std::atomic<int> refusals{0};

  refusing_proxy(const std::string& upstream, size_t limit) {
    server.Post("/", [upstream, limit, this](const httplib::Request& req, httplib::Response& res) {
      httplib::Client up(upstream);
      auto r = up.Post("/", req.body, "application/json");
      if (!r) {
        res.status = 502;
        return;
      }
      const json::value in = json::parse(req.body);
      if (in.at("method").as_string() == "eth_getLogs") {
        const json::value out = json::parse(r->body);
        if (const auto* result = out.as_object().if_contains("result");
            result != nullptr && result->is_array() && result->as_array().size() > limit) {
          ++refusals;
          json::object err{
              {"jsonrpc", "2.0"},
              {"id", in.at("id")},
              {"error",
               {{"code", -32005}, {"message", "query returned more than " + std::to_string(limit) + " results"}}}};
          res.set_content(json::serialize(err), "application/json");
          return;
        }
      }
      res.set_content(r->body, "application/json");
    });
    const int port = server.bind_to_any_port("127.0.0.1");
    REQUIRE(port > 0);
    url = "http://127.0.0.1:" + std::to_string(port);
    thread = std::thread([this] { server.listen_after_bind(); });
    while (!server.is_running())
      std::this_thread::yield();
  }
  ~refusing_proxy() {
    server.stop();
    thread.join();
  }
};

}  // namespace

TEST_CASE("triggers.chain_watcher: one run per matching log, topic filters, decoded params") {
  fixture f;
  const address dev0 = anvil_process::dev_addresses()[0];
  const address dev1 = anvil_process::dev_addresses()[1];
  const uint64_t start = f.head() + 1;
  const json::value from_block = static_cast<int64_t>(start);

  struct row {
    const char* what;
    json::array filters;
    size_t expected;
  };
  const std::vector<row> rows = {
      {"no filters", {}, 4},
      {"null filter", {nullptr}, 4},
      {"one topic: from dev1", {codec::hex::encode_prefixed(word(dev1))}, 2},
      {"alternatives: id 7 or 9",
       {nullptr, json::array{codec::hex::encode_prefixed(word(7)), codec::hex::encode_prefixed(word(9))}},
       3},
      {"topic and alternatives: from dev0, id 7 or 8",
       {codec::hex::encode_prefixed(word(dev0)),
        json::array{codec::hex::encode_prefixed(word(7)), codec::hex::encode_prefixed(word(8))}},
       1},
  };
  std::vector<trigger> triggers;
  for (const auto& r : rows) {
    json::object c{{"event", kPing}, {"start_block", from_block}};
    if (!r.filters.empty())
      c["topic_filters"] = r.filters;
    triggers.push_back(f.create(c));
  }
  const trigger tagged = f.create({{"event", kTagged}, {"start_block", from_block}});
  const trigger elsewhere =
      f.create({{"event", kPing}, {"start_block", from_block}, {"contract", addr_hex(dev1)}});  // no code, no logs

  const json::value first = f.ping(0, 7, "hello", 1000);
  f.ping(1, 8, "", 0);
  f.ping(0, 9, "third", 3);
  f.ping(1, 7, "fourth", 4);
  const hash256 tag = crypto::keccak256(std::string_view("a tag"));
  f.send(0, f.call_tx("tagged(bytes32,string,bool,int64)",
                      {codec::abi::value::blob(bytes(tag.begin(), tag.end())), codec::abi::value::text("label"),
                       codec::abi::value::boolean(true), codec::abi::value::signed_number(-5)}));

  chain_watcher w(*f.db, f.clock, {f.chain()});
  CHECK(poll(w) == 4 + 4 + 2 + 3 + 1 + 1);
  for (size_t i = 0; i < rows.size(); ++i) {
    CAPTURE(rows[i].what);
    CHECK(f.runs(triggers[i]).size() == rows[i].expected);
  }
  CHECK(f.runs(elsewhere).empty());
  CHECK(poll(w) == 0);  // nothing new: nothing fires again
  CHECK(f.runs(triggers[0]).size() == 4);

  // docs/protocol.md §4 chain-event params, for the first ping.
  const auto all = f.runs(triggers[0]);
  REQUIRE(all.size() == 4);
  CHECK(all[0].status == run_status::queued);
  const json::object& ev = all[0].params.at("event").as_object();
  const json::object& log0 = first.at("logs").as_array().at(0).as_object();
  CHECK(ev.at("address").as_string() == to_checksum_address(f.emitter));
  CHECK(ev.at("block_number").to_number<uint64_t>() ==
        std::stoull(std::string(log0.at("blockNumber").as_string()), nullptr, 16));
  CHECK(ev.at("block_hash") == log0.at("blockHash"));
  CHECK(ev.at("transaction_hash") == log0.at("transactionHash"));
  CHECK(ev.at("log_index").to_number<uint64_t>() ==
        std::stoull(std::string(log0.at("logIndex").as_string()), nullptr, 16));
  CHECK(ev.at("topics") == log0.at("topics"));
  CHECK(ev.at("data") == log0.at("data"));
  CHECK(ev.at("chain").as_string() == "svc");
  CHECK(ev.at("topics").as_array().at(0).as_string() ==
        codec::hex::encode_prefixed(crypto::keccak256(std::string_view("Ping(address,uint256,string,uint256)"))));
  const json::object& d = ev.at("decoded").as_object();
  CHECK(d.size() == 4);
  CHECK(d.at("arg0").as_string() == to_checksum_address(dev0));
  CHECK(d.at("arg1").as_string() == "7");
  CHECK(d.at("arg2").as_string() == "hello");
  CHECK(d.at("arg3").as_string() == "1000");
  CHECK(all[1].params.at("event").at("decoded").at("arg0").as_string() == to_checksum_address(dev1));
  CHECK(all[1].params.at("event").at("decoded").at("arg2").as_string() == "");

  // Indexed dynamic values are their keccak256 topic; the others decode.
  const auto tr = f.runs(tagged);
  REQUIRE(tr.size() == 1);
  const json::object& td = tr[0].params.at("event").at("decoded").as_object();
  CHECK(td.at("arg0").as_string() == codec::hex::encode_prefixed(tag));
  CHECK(td.at("arg1").as_string() == codec::hex::encode_prefixed(crypto::keccak256(std::string_view("label"))));
  CHECK(td.at("arg2").as_bool() == true);
  CHECK(td.at("arg3").as_string() == "-5");

  // Every fired log is a seen log, not removed.
  const auto seen = f.db->list_seen_logs(triggers[0].id, 0).value();
  CHECK(seen.size() == 4);
}

TEST_CASE("triggers.chain_watcher: start_block backfill in halved ranges; restart fires nothing twice") {
  fixture f;
  const uint64_t first_block = f.head() + 1;
  // 12 blocks of 3 logs each, before any trigger exists.
  for (uint64_t i = 0; i < 12; ++i)
    f.send(0, f.call_tx("pingMany(uint256,uint256)",
                        {codec::abi::value::number(u256{i * 3}), codec::abi::value::number(u256{3})}));
  const uint64_t last_block = f.head();
  REQUIRE(last_block - first_block + 1 == 12);

  char quantity[32];
  std::snprintf(quantity, sizeof quantity, "0x%llx", static_cast<unsigned long long>(first_block));
  const trigger all = f.create({{"event", kPing}, {"start_block", quantity}});  // hex form
  const trigger later = f.create({{"event", kPing}, {"start_block", static_cast<int64_t>(first_block + 10)}});
  const trigger from_now = f.create({{"event", kPing}});  // no start_block: from the safe head on
  // Stored typed: the hex form is the block number it names.
  CHECK(std::get<api::chain_event_config>(f.db->find_trigger(all.id).value().config).start_block == first_block);

  refusing_proxy proxy(f.node.url(), 5);  // 5 logs per answer at most: two blocks are too many
  auto cfg = f.chain(proxy.url);
  cfg.max_range = 8;
  {
    chain_watcher w(*f.db, f.clock, {cfg});
    CHECK(poll(w) == 36 + 6 + 3);
    const auto st = w.stats("svc");
    CHECK(st.range_shrinks > 0);
    CHECK(st.range_shrinks == static_cast<uint64_t>(proxy.refusals.load()));
    CHECK(st.get_logs >= 12);
    CHECK(st.errors == 0);
  }
  CHECK(f.runs(all).size() == 36);
  CHECK(f.runs(later).size() == 6);
  CHECK(f.runs(from_now).size() == 3);  // the head block's logs
  // The checkpoint keeps its block's hash.
  const auto cp = f.db->chain_checkpoint(all.id).value();
  REQUIRE(cp);
  CHECK(cp->block == last_block);
  CHECK(cp->block_hash == f.block_hash(last_block));
  // Each log fired once: ids 0..35 in order.
  const auto runs = f.runs(all);
  for (size_t i = 0; i < runs.size(); ++i)
    CHECK(runs[i].params.at("event").at("decoded").at("arg1").as_string() == std::to_string(i));

  // A restart (new store connection, new watcher without memory) finds the checkpoint's block
  // unchanged and resumes after it: no range is read again, nothing fires again; a new log fires
  // once, read in one range.
  f.reopen();
  chain_watcher again(*f.db, f.clock, {cfg});
  CHECK(poll(again) == 0);
  CHECK(again.stats("svc").get_logs == 0);
  f.ping(2, 99);
  CHECK(poll(again) == 3);
  CHECK(again.stats("svc").get_logs == 3);  // one range for each trigger
  CHECK(again.stats("svc").reorgs == 0);
  CHECK(f.runs(all).size() == 37);
  CHECK(f.runs(from_now).size() == 4);
  CHECK(poll(again) == 0);
}

TEST_CASE("triggers.chain_watcher: anvil_reorg of depth 2 records removal and fires nothing twice") {
  fixture f;
  const trigger t = f.create({{"event", kPing}, {"start_block", static_cast<int64_t>(f.head() + 1)}});
  f.ping(0, 1);
  const json::value r2 = f.ping(0, 2);
  const json::value r3 = f.ping(0, 3);
  chain_watcher w(*f.db, f.clock, {f.chain()});
  CHECK(poll(w) == 3);
  const auto hash_of = [](const json::value& receipt) {
    return codec::hex::decode_fixed<32>(receipt.at("blockHash").as_string()).value();
  };

  // Replace the last two blocks: the new block at offset 0 holds ping(20), the one at offset 1
  // ping(3) again (a new transaction of the same call, so a new log in a new block).
  json::object tx20 = f.ping_tx(20, "replaced", 5);
  json::object tx3 = f.ping_tx(3, "hello", 1000);
  tx20["from"] = tx3["from"] = addr_hex(anvil_process::dev_addresses()[0]);
  (void)f.node.rpc("anvil_reorg", json::array{2, json::array{json::array{tx20, 0}, json::array{tx3, 1}}});
  const auto b2 = f.node.rpc("eth_getBlockByNumber", json::array{r2.at("blockNumber"), false});
  REQUIRE(b2.at("hash") != r2.at("blockHash"));

  CHECK(poll(w) == 2);
  const auto st = w.stats("svc");
  CHECK(st.reorgs == 1);
  CHECK(st.logs_removed == 2);
  for (const auto* r : {&r2, &r3}) {
    const auto seen = f.db->find_seen_log(t.id, hash_of(*r), 0).value();
    REQUIRE(seen);
    CHECK(seen->removed);
    CHECK(!seen->run_id.empty());  // the run it fired stays in the history
  }
  const auto runs = f.runs(t);
  REQUIRE(runs.size() == 5);
  CHECK(runs[3].params.at("event").at("decoded").at("arg1").as_string() == "20");
  CHECK(runs[3].params.at("event").at("block_hash") == b2.at("hash"));
  CHECK(runs[4].params.at("event").at("decoded").at("arg1").as_string() == "3");
  CHECK(poll(w) == 0);

  // A restart finds the new checkpoint's block unchanged: the removed logs stay removed and
  // nothing fires again.
  chain_watcher again(*f.db, f.clock, {f.chain()});
  CHECK(poll(again) == 0);
  CHECK(f.runs(t).size() == 5);
  CHECK(f.db->list_seen_logs(t.id, 0).value().size() == 3);
}

TEST_CASE("triggers.chain_watcher: a reorganisation deeper than the confirmations while stopped is replayed") {
  fixture f;
  const trigger t =
      f.create({{"event", kPing}, {"start_block", static_cast<int64_t>(f.head() + 1)}, {"confirmations", 2}});
  const json::value r1 = f.ping(0, 1);
  const json::value r2 = f.ping(0, 2);
  const json::value r3 = f.ping(0, 3);
  (void)f.node.rpc("evm_mine");
  (void)f.node.rpc("evm_mine");
  {
    chain_watcher w(*f.db, f.clock, {f.chain()});
    CHECK(poll(w) == 3);
  }
  const uint64_t b3 = std::stoull(std::string(r3.at("blockNumber").as_string()), nullptr, 16);
  CHECK(f.db->chain_checkpoint(t.id).value()->block == b3);

  // While no watcher runs, the last four blocks (two of them confirmed and processed) are
  // replaced: ping(20) where ping(2) was, ping(21) where ping(3) was; ping(1)'s block stays.
  json::object tx20 = f.ping_tx(20, "new", 5);
  json::object tx21 = f.ping_tx(21, "new", 6);
  tx20["from"] = tx21["from"] = addr_hex(anvil_process::dev_addresses()[0]);
  (void)f.node.rpc("anvil_reorg", json::array{4, json::array{json::array{tx20, 0}, json::array{tx21, 1}}});
  REQUIRE(f.block_hash(b3) != codec::hex::decode_fixed<32>(r3.at("blockHash").as_string()).value());

  // A restart compares the stored hash with the chain, marks the two vanished logs removed (their
  // runs stay, once each) and fires the two new ones once.
  f.reopen();
  chain_watcher again(*f.db, f.clock, {f.chain()});
  CHECK(poll(again) == 2);
  const auto st = again.stats("svc");
  CHECK(st.reorgs == 1);
  CHECK(st.logs_removed == 2);
  const auto runs = f.runs(t);
  REQUIRE(runs.size() == 5);
  std::vector<std::string> ids;
  for (const auto& r : runs)
    ids.emplace_back(r.params.at("event").at("decoded").at("arg1").as_string());
  CHECK(ids == std::vector<std::string>{"1", "2", "3", "20", "21"});
  CHECK(!f.db->find_seen_log(t.id, codec::hex::decode_fixed<32>(r1.at("blockHash").as_string()).value(), 0)
             .value()
             ->removed);
  CHECK(f.db->find_seen_log(t.id, codec::hex::decode_fixed<32>(r2.at("blockHash").as_string()).value(), 0)
            .value()
            ->removed);
  CHECK(f.db->chain_checkpoint(t.id).value()->block_hash == f.block_hash(b3));
  CHECK(poll(again) == 0);
  f.reopen();
  chain_watcher third(*f.db, f.clock, {f.chain()});
  CHECK(poll(third) == 0);
  CHECK(third.stats("svc").reorgs == 0);
  CHECK(f.runs(t).size() == 5);
}

TEST_CASE("triggers.chain_watcher: a PATCH to an earlier start_block backfills, firing each log once") {
  fixture f;
  const uint64_t early = f.head() + 1;
  f.ping(0, 1);
  f.ping(0, 2);
  const uint64_t later = f.head() + 1;
  f.ping(0, 3);
  const trigger t = f.create({{"event", kPing}, {"start_block", static_cast<int64_t>(later)}});
  chain_watcher w(*f.db, f.clock, {f.chain()});
  CHECK(poll(w) == 1);
  f.ping(0, 4);
  CHECK(poll(w) == 1);

  auto config = std::get<api::chain_event_config>(t.config);
  config.start_block = early;
  trigger_patch p;
  p.config = api::trigger_config(config);
  p.now = f.clock.now();
  (void)f.db->update_trigger("alice", t.id, p).value();
  CHECK(!f.db->chain_checkpoint(t.id).value());
  CHECK(poll(w) == 2);  // ids 1 and 2; 3 and 4 fired before
  CHECK(poll(w) == 0);
  std::vector<std::string> ids;
  for (const auto& r : f.runs(t))
    ids.emplace_back(r.params.at("event").at("decoded").at("arg1").as_string());
  CHECK(ids == std::vector<std::string>{"3", "4", "1", "2"});
  f.ping(0, 5);
  CHECK(poll(w) == 1);
}

TEST_CASE("triggers.chain_watcher: its thread fires new logs; confirmations hold them back") {
  fixture f;
  const trigger now = f.create({{"event", kPing}, {"start_block", static_cast<int64_t>(f.head() + 1)}});
  const trigger deep =
      f.create({{"event", kPing}, {"start_block", static_cast<int64_t>(f.head() + 1)}, {"confirmations", 2}});
  std::atomic<int> fired{0};
  chain_watcher w(*f.db, f.clock, {f.chain()}, [&] { ++fired; });
  w.start();
  f.ping(0, 1);
  const auto wait_for = [&](const trigger& t, size_t n) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (f.runs(t).size() < n && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    return f.runs(t).size();
  };
  CHECK(wait_for(now, 1) == 1);
  // on_fired runs right after the commit that made the run visible.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (fired.load() == 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  CHECK(fired.load() >= 1);
  // Two blocks on top confirm the log for the trigger that asks for 2 confirmations.
  CHECK(f.runs(deep).empty());
  (void)f.node.rpc("evm_mine");
  (void)f.node.rpc("evm_mine");
  CHECK(wait_for(deep, 1) == 1);
  w.stop();
  CHECK(f.runs(now).size() == 1);
}

TEST_CASE("triggers.chain_watcher: logs without the event's shape are not decoded") {
  const auto sig = codec::abi::parse_signature(kPing).value();
  chain::log_entry l;
  l.topics = {crypto::keccak256(std::string_view("Ping(address,uint256,string,uint256)")), word(address{}), word(7)};
  l.data = codec::abi::encode(
               std::vector<codec::abi::type>{codec::abi::type::of("string"), codec::abi::type::of("uint256")},
               std::vector<codec::abi::value>{codec::abi::value::text("x"), codec::abi::value::number(u256{1})})
               .value();
  REQUIRE(chain_event_params(sig, l, "svc"));
  struct row {
    const char* what;
    std::function<void(chain::log_entry&)> change;
  };
  const std::vector<row> rows = {
      {"a topic missing",
       [](auto& e) {
         e.topics.pop_back();
       }},
      {"a topic too many",
       [](auto& e) {
         e.topics.push_back(word(1));
       }},
      {"data cut short",
       [](auto& e) {
         e.data.resize(40);
       }},
      {"no data",
       [](auto& e) {
         e.data.clear();
       }},
      {"an address topic with dirty high bits",
       [](auto& e) {
         e.topics[1][0] = 1;
       }},
  };
  for (const auto& r : rows) {
    CAPTURE(r.what);
    auto e = l;
    r.change(e);
    CHECK(!chain_event_params(sig, e, "svc"));
  }
}

TEST_CASE("triggers.chain_watcher: a chain without an RPC endpoint is refused at validation") {
  const json::value c =
      json::object{{"chain", "ethereum"}, {"contract", "0x5FbDB2315678afecb367f032d93F642f64180aa3"}, {"event", kPing}};
  config_rules rules;
  rules.chain_rpc["svc"] = "http://127.0.0.1:1";
  auto r = validate_config(trigger_type::chain_event, &c, rules);
  REQUIRE(!r);
  CHECK(r.err().message.find("config.chain") != std::string::npos);
}

TEST_CASE("triggers.chain_watcher: per-chain confirmations and the poll interval in the settings") {
  struct row {
    const char* key;
    json::value value;
    bool ok;
  };
  const std::vector<row> rows = {
      {"chain_confirmations", "ethereum=12", true},  // --chain-confirmations NAME=N
      {"chain_confirmations.svc", 3, true},          // [chain_confirmations] svc = 3
      {"chain_confirmations.bsc", "0", true},
      {"chain_confirmations", "ethereum", false},  // no =N
      {"chain_confirmations", "=3", false},
      {"chain_confirmations", "mainnet=3", false},  // not a chain of docs/protocol.md §4
      {"chain_confirmations.svc", -1, false},
      {"chain_confirmations.svc", 1001, false},  // over kMaxConfirmations
      {"chain_confirmations", "svc=x", false},
      {"triggers.chain_poll_ms", 250, true},
      {"triggers.chain_poll_ms", 5, false},
  };
  settings s;
  for (const auto& r : rows) {
    CAPTURE(r.key);
    CAPTURE(json::serialize(r.value));
    const auto applied = apply_setting(s, r.key, r.value, "--x");
    REQUIRE(applied.has_value());
    CHECK(static_cast<bool>(*applied) == r.ok);
  }
  CHECK(s.chain_confirmations == std::map<std::string, uint64_t>{{"ethereum", 12}, {"svc", 3}, {"bsc", 0}});
  CHECK(s.chain_poll_ms == 250);
}
