// SPDX-License-Identifier: Apache-2.0
// Backfill speed of the chain watcher (server/triggers/chain_watcher.hpp): anvil with
// tests/triggers/Emitter.sol deployed, `--logs` Ping logs emitted before the trigger exists (in
// transactions of `--per-tx` logs each), then one chain-event trigger with start_block at the
// deployment, and the time of the watcher's passes until every log is a queued run in a SQLite
// store. Prints logs/s (eth_getLogs, ABI decoding of each log, and the durable run inserts).
//
//   enact_chain_backfill_bench [--logs 5000] [--per-tx 250] [--max-range 2000] [--sync full|normal]
#include <stdlib.h>

#include <boost/json.hpp>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>

#include "anvil_process.hpp"
#include "enact/codec/abi.hpp"
#include "enact/codec/hex.hpp"
#include "enact/address.hpp"
#include "enact/crypto/keccak.hpp"
#include "triggers/chain_watcher.hpp"
#include "triggers/ids.hpp"
#include "triggers/sqlite_store.hpp"

namespace {

namespace json = boost::json;
using namespace enact;
using namespace enact::triggers;
using enact::test::anvil_process;

json::value send(const anvil_process& node, json::object tx) {
  tx["from"] = codec::hex::encode_prefixed(anvil_process::dev_addresses()[0]);
  const json::value hash = node.rpc("eth_sendTransaction", json::array{tx});
  for (;;) {
    json::value r = node.rpc("eth_getTransactionReceipt", json::array{hash});
    if (!r.is_null()) {
      if (r.at("status").as_string() != "0x1")
        throw std::runtime_error("transaction failed: " + json::serialize(tx));
      return r;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t logs = 5000;
  uint64_t per_tx = 250;
  uint64_t max_range = 2000;
  bool sync_full = true;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    const std::string v = argv[i + 1];
    if (k == "--logs")
      logs = std::stoull(v);
    else if (k == "--per-tx")
      per_tx = std::stoull(v);
    else if (k == "--max-range")
      max_range = std::stoull(v);
    else if (k == "--sync")
      sync_full = v != "normal";
    else {
      std::fprintf(stderr, "usage: %s [--logs N] [--per-tx N] [--max-range N] [--sync full|normal]\n", argv[0]);
      return 2;
    }
  }

  anvil_process node;
  const json::value deployed =
      send(node, {{"data", enact::test::creation_code(ENACT_SOURCE_DIR "/tests/triggers/Emitter.bin")}});
  const std::string emitter(deployed.at("contractAddress").as_string());
  const uint64_t start = std::stoull(std::string(deployed.at("blockNumber").as_string()), nullptr, 16);

  for (uint64_t done = 0; done < logs;) {
    const uint64_t n = std::min(per_tx, logs - done);
    const std::vector<codec::abi::value> args = {codec::abi::value::number(u256{done}),
                                                 codec::abi::value::number(u256{n})};
    const bytes data = codec::abi::encode_call("pingMany(uint256,uint256)", args).value();
    send(node, {{"to", emitter}, {"data", codec::hex::encode_prefixed(data)}});
    done += n;
  }

  char tmpl[] = "/tmp/enact-chain-bench-XXXXXX";
  if (mkdtemp(tmpl) == nullptr)
    return 1;
  const std::string dir = tmpl;
  int rc = 0;
  {
    sqlite_options so;
    so.synchronous_full = sync_full;
    auto db = sqlite_store::open(dir + "/triggers.sqlite", so).value();
    system_clock clock;
    trigger t;
    t.id = new_trigger_id();
    t.owner = "bench";
    t.type = trigger_type::chain_event;
    t.name = "backfill";
    t.action_cid = "QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG";
    t.sealed_usage_key = bytes{1};
    t.config =
        api::chain_event_config{.chain = "svc",
                                .contract = parse_address(emitter).value(),
                                .event = "Ping(address indexed from, uint256 indexed id, string note, uint256 amount)",
                                .start_block = start};
    t.created_at = t.updated_at = clock.now();
    (void)db->create_trigger(t, std::nullopt).value();

    chain_watch_config c;
    c.chain = "svc";
    c.rpc_url = node.url();
    c.max_range = max_range;
    chain_watcher w(*db, clock, {c});
    const auto t0 = std::chrono::steady_clock::now();
    uint64_t queued = 0;
    while (queued < logs) {
      auto r = w.poll_once("svc");
      if (!r || (*r == 0 && w.stats("svc").errors > 0)) {
        std::fprintf(stderr, "watcher failed\n");
        rc = 1;
        break;
      }
      queued += *r;
    }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const auto st = w.stats("svc");
    std::printf("chain backfill: %llu logs in %llu blocks, %llu eth_getLogs, sync %s: %.3f s, %.0f logs/s\n",
                static_cast<unsigned long long>(queued), static_cast<unsigned long long>((logs + per_tx - 1) / per_tx),
                static_cast<unsigned long long>(st.get_logs), sync_full ? "full" : "normal", secs,
                static_cast<double>(queued) / secs);
  }
  std::filesystem::remove_all(dir);
  return rc;
}
