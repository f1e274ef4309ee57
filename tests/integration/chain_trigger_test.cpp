// SPDX-License-Identifier: Apache-2.0
// A chain-event trigger of enact-server end to end (docs/protocol.md §4, docs/triggers.md "Chain events"):
// anvil (tests/support) with tests/triggers/Emitter.sol deployed, enact-server --dev with
// `--chain-rpc svc=<anvil>`, a trigger created through /api/triggers with a topic filter and a
// start_block before an already emitted log, and runs that execute an action echoing the decoded
// arguments through the core. A chain without an RPC endpoint is refused with 400. Across a server
// restart: blocks past the trigger's confirmations reverted (evm_snapshot / evm_revert) while the
// server is down and replaced by others are found by the checkpoint's stored hash, the vanished
// logs' runs are not repeated and the new logs fire once; a PATCH to an earlier start_block then
// backfills the older log once.
#include <doctest/doctest.h>

#include <cstdio>
#include <tuple>
#include <thread>

#include "anvil_process.hpp"
#include "enact/codec/abi.hpp"
#include "enact/codec/hex.hpp"
#include "enact/address.hpp"
#include "steps.hpp"

namespace enact::itest {
namespace {

using namespace std::chrono_literals;
using enact::test::anvil_process;

json::value send(const anvil_process& node, json::object tx) {
  tx["from"] = codec::hex::encode_prefixed(anvil_process::dev_addresses()[0]);
  const json::value hash = node.rpc("eth_sendTransaction", json::array{tx});
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  json::value receipt;
  while ((receipt = node.rpc("eth_getTransactionReceipt", json::array{hash})).is_null() &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(2ms);
  REQUIRE(receipt.is_object());
  REQUIRE(receipt.at("status").as_string() == "0x1");
  return receipt;
}

std::string ping_data(uint64_t id, const std::string& note, uint64_t amount) {
  const std::vector<codec::abi::value> args = {codec::abi::value::number(u256{id}), codec::abi::value::text(note),
                                               codec::abi::value::number(u256{amount})};
  return codec::hex::encode_prefixed(codec::abi::encode_call("ping(uint256,string,uint256)", args).value());
}

/// The topic of an indexed uint256.
std::string topic_of(uint64_t n) {
  char buf[80];
  std::snprintf(buf, sizeof buf, "0x%064llx", static_cast<unsigned long long>(n));
  return buf;
}

/// An account with credits, an action echoing the event's decoded arguments, and a usage key
/// that may run it.
struct echo_action {
  std::string cid;
  std::string usage_key;
};

echo_action upload_echo_action(http_client& c) {
  const account_keys acct = create_account(c, "chain");
  buy_credits(c, acct.auth(), 500);
  const response up =
      c.post("/upload_action", json::object{{"code", "Enact.setResponse(params.event.decoded);\n"}}, acct.auth());
  ITEST_REQUIRE_STATUS(up, 200);
  const response g = c.post(
      "/add_group",
      json::object{{"name", "g"}, {"cid_hashes_permitted", json::array{json::string(s_of(up.body, "hashed_cid"))}}},
      acct.auth());
  ITEST_REQUIRE_STATUS(g, 200);
  const usage_keys key =
      create_usage_key(c, acct.auth(), json::object{{"execute_in_groups", json::array{u_of(g.body, "group_id")}}});
  return {s_of(up.body, "action_ipfs_cid"), key.value};
}

/// The runs of trigger `id` (newest first) once `n` of them finished, or after 60 s.
json::array finished_runs(const server_process& srv, const std::string& token, const std::string& id, size_t n) {
  json::array items;
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  for (;;) {
    const response runs = call(srv.port(), "GET", "/api/triggers/" + id + "/runs?limit=50", {}, bearer(token));
    REQUIRE(runs.status == 200);
    items = runs.body.at("items").as_array();
    size_t done = 0;
    for (const auto& r : items)
      done += r.at("status") == "success" || r.at("status") == "failed";
    if ((items.size() >= n && done == items.size()) || std::chrono::steady_clock::now() > deadline)
      return items;
    std::this_thread::sleep_for(50ms);
  }
}

/// decoded.arg1 (the ping's id) of each run, oldest first; every run succeeded.
std::vector<std::string> ping_ids(const json::array& newest_first) {
  std::vector<std::string> out;
  for (auto it = newest_first.rbegin(); it != newest_first.rend(); ++it) {
    INFO(json::serialize(*it));
    CHECK(it->at("status") == "success");
    out.emplace_back(it->at("params").at("event").at("decoded").at("arg1").as_string());
  }
  return out;
}

}  // namespace

TEST_CASE("chain_trigger: a chain log runs an action through the core") {
  anvil_process node;
  const json::value deployed =
      send(node, {{"data", enact::test::creation_code(ENACT_SOURCE_DIR "/tests/triggers/Emitter.bin")}});
  const std::string emitter(deployed.at("contractAddress").as_string());
  const std::string start(deployed.at("blockNumber").as_string());
  // Emitted before the trigger exists: found by the backfill from start_block.
  send(node, {{"to", emitter}, {"data", ping_data(5, "early", 50)}});
  send(node, {{"to", emitter}, {"data", ping_data(6, "filtered out", 60)}});

  temp_dir dir;
  const std::string data = dir.path() + "/data";
  const std::string token = issue_token(data, "alice");
  server_process srv(
      {"--dev", "--sandbox-workers", "1", "--chain-rpc", "svc=" + node.url(), "--chain-confirmations", "svc=0"}, data);
  http_client c = srv.client();
  const echo_action echo = upload_echo_action(c);
  const httplib::Headers auth = bearer(token);

  json::object cfg{
      {"chain", "svc"},
      {"contract", emitter},
      {"event", "Ping(address indexed from, uint256 indexed id, string note, uint256 amount)"},
      {"start_block", start},
      {"topic_filters", json::array{nullptr, json::array{json::string(topic_of(5)), json::string(topic_of(7))}}}};
  json::object body{{"type", "chain-event"},
                    {"name", "pings"},
                    {"action_ipfs_cid", echo.cid},
                    {"usage_api_key", echo.usage_key},
                    {"config", cfg}};
  const response created = call(srv.port(), "POST", "/api/triggers", json::serialize(body), auth);
  ITEST_REQUIRE_STATUS(created, 201);
  const std::string id = s_of(created.body, "id");

  // Emitted after: id 7 matches, id 8 does not.
  send(node, {{"to", emitter}, {"data", ping_data(7, "late", 70)}});
  send(node, {{"to", emitter}, {"data", ping_data(8, "filtered out", 80)}});

  const json::array items = finished_runs(srv, token, id, 2);
  REQUIRE(items.size() == 2);
  // Newest first: id 7, then id 5.
  for (const auto& [i, id_text, note] : {std::tuple{0, "7", "late"}, std::tuple{1, "5", "early"}}) {
    const json::object& run = items[static_cast<size_t>(i)].as_object();
    INFO(json::serialize(run));
    CHECK(run.at("status") == "success");
    const json::object& ev = run.at("params").at("event").as_object();
    CHECK(ev.at("chain") == "svc");
    CHECK(ev.at("address").as_string() == to_checksum_address(parse_address(emitter).value()));
    const json::value expected = json::object{{"arg0", to_checksum_address(anvil_process::dev_addresses()[0])},
                                              {"arg1", id_text},
                                              {"arg2", note},
                                              {"arg3", std::string(id_text) + "0"}};
    CHECK(ev.at("decoded") == expected);
    CHECK(run.at("response") == expected);
  }

  // A chain the server has no RPC endpoint for is refused.
  cfg["chain"] = "ethereum";
  body["config"] = cfg;
  const response refused = call(srv.port(), "POST", "/api/triggers", json::serialize(body), auth);
  CHECK(refused.status == 400);
  CHECK(refused.text.find("config.chain") != std::string::npos);
}

TEST_CASE("chain_trigger: a reorganisation while the server is down, then a PATCH of start_block") {
  anvil_process node;
  const json::value deployed =
      send(node, {{"data", enact::test::creation_code(ENACT_SOURCE_DIR "/tests/triggers/Emitter.bin")}});
  const std::string emitter(deployed.at("contractAddress").as_string());
  const json::value first = send(node, {{"to", emitter}, {"data", ping_data(1, "before the start", 10)}});

  temp_dir dir;
  const std::string data = dir.path() + "/data";
  const std::string token = issue_token(data, "alice");
  const std::vector<std::string> flags = {"--dev", "--sandbox-workers", "1", "--chain-rpc", "svc=" + node.url()};
  std::optional<server_process> srv(std::in_place, flags, data);
  http_client c = srv->client();
  const echo_action echo = upload_echo_action(c);

  // Two confirmations; the watch starts after ping 1's block.
  const uint64_t first_block = std::stoull(std::string(first.at("blockNumber").as_string()), nullptr, 16);
  json::object cfg{{"chain", "svc"},
                   {"contract", emitter},
                   {"event", "Ping(address indexed from, uint256 indexed id, string note, uint256 amount)"},
                   {"start_block", first_block + 1},
                   {"confirmations", 2}};
  const json::object body{{"type", "chain-event"},
                          {"name", "pings"},
                          {"action_ipfs_cid", echo.cid},
                          {"usage_api_key", echo.usage_key},
                          {"config", cfg}};
  const response created = call(srv->port(), "POST", "/api/triggers", json::serialize(body), bearer(token));
  ITEST_REQUIRE_STATUS(created, 201);
  const std::string id = s_of(created.body, "id");

  send(node, {{"to", emitter}, {"data", ping_data(2, "kept", 20)}});
  const json::value snapshot = node.rpc("evm_snapshot");
  send(node, {{"to", emitter}, {"data", ping_data(3, "reverted", 30)}});
  (void)node.rpc("evm_mine");
  (void)node.rpc("evm_mine");  // ping 3 has its two confirmations: it fires
  CHECK(ping_ids(finished_runs(*srv, token, id, 2)) == std::vector<std::string>{"2", "3"});
  CHECK(srv->stop().clean());

  // While the server is down: ping 3's block and the two above it vanish (a reorganisation three
  // blocks deep, past the confirmations), and pings 30 and 31 are mined at their heights.
  REQUIRE(node.rpc("evm_revert", json::array{snapshot}).as_bool());
  send(node, {{"to", emitter}, {"data", ping_data(30, "replacement", 300)}});
  send(node, {{"to", emitter}, {"data", ping_data(31, "replacement", 310)}});
  (void)node.rpc("evm_mine");
  (void)node.rpc("evm_mine");

  srv.emplace(flags, data);
  const std::vector<std::string> after_restart = {"2", "3", "30", "31"};
  CHECK(ping_ids(finished_runs(*srv, token, id, 4)) == after_restart);
  // Later passes fire nothing more: the vanished ping 3 keeps its one run, 30 and 31 ran once.
  std::this_thread::sleep_for(5s);
  CHECK(ping_ids(finished_runs(*srv, token, id, 4)) == after_restart);
  CHECK(srv->log_text().find("reorganisation below a checkpoint") != std::string::npos);

  // An earlier start_block backfills ping 1, once.
  cfg["start_block"] = first_block;
  const response patched =
      call(srv->port(), "PATCH", "/api/triggers/" + id, json::serialize(json::object{{"config", cfg}}), bearer(token));
  ITEST_REQUIRE_STATUS(patched, 200);
  const std::vector<std::string> backfilled = {"2", "3", "30", "31", "1"};
  CHECK(ping_ids(finished_runs(*srv, token, id, 5)) == backfilled);
  std::this_thread::sleep_for(5s);
  CHECK(ping_ids(finished_runs(*srv, token, id, 5)) == backfilled);
  CHECK(srv->stop().clean());
}

}  // namespace enact::itest
