// SPDX-License-Identifier: Apache-2.0
// The chain node of the `evm` ledger stopped and restarted (docs/architecture.md §4 "Permission ledger";
// docs/protocol.md §0: 503 `unavailable` while the node is unreachable). enact-server runs on a registry
// deployed on anvil by `enact-server deploy-registry`; anvil keeps its chain across stop/start
// (tests/support/anvil_process.hpp, keep_state). Checked:
//  - node stopped while idle: writes and reads answer 503 `unavailable` with the error shape of
//    docs/protocol.md §0, the server stays up, and once the node is back the same server serves again
//    (nothing restarted but the node), the refused write absent and its retry accepted;
//  - node stopped while writers and readers are in flight: every answer is 200 or 503
//    `unavailable` (never another status, never a dropped connection); after the restart every
//    acknowledged write is on chain exactly once, every write that answered 503 is either fully on
//    chain (its name and description as sent) or absent, and its retry answers 409 `conflict`
//    when it landed and 200 when it did not; a write made after the outage gets the next id.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "anvil_process.hpp"
#include "steps.hpp"

namespace enact::itest {
namespace {

using enact::test::anvil_process;
using steady = std::chrono::steady_clock;

/// anvil (state kept across restarts), a registry deployed for a fresh data directory, its api
/// payer funded, and enact-server on it.
struct chain_server {
  anvil_process node;
  temp_dir keys;
  temp_dir data;
  std::string data_dir;
  std::string registry;
  std::optional<server_process> srv;

  static anvil_process::options node_options() {
    anvil_process::options o;
    o.keep_state = true;
    return o;
  }

  chain_server() : node(node_options()), data_dir(data.path() + "/data") {
    const std::string key_path = keys.path() + "/deployer.key";
    std::ofstream(key_path) << codec::hex::encode_prefixed(anvil_process::dev_private_keys()[0]) << "\n";
    const finished_run deployed =
        run_to_exit({"deploy-registry", "--rpc-url", node.url(), "--key-file", key_path, "--data-dir", data_dir});
    REQUIRE_MESSAGE(deployed.status.clean(), deployed.stderr_text);
    registry = deployed.stdout_text.substr(0, deployed.stdout_text.find('\n'));
    // --key-rate 0: the load below is one key writing as fast as the node answers, over the
    // per-key limit that is on by default.
    srv.emplace(std::vector<std::string>{"--dev", "--sandbox-workers", "1", "--ledger", "evm", "--rpc-url", node.url(),
                                         "--registry-address", registry, "--chain-id", "31337", "--key-rate", "0"},
                data_dir);
    const response payers = srv->client().get("/get_api_payers");
    REQUIRE_MESSAGE(payers.status == 200, payers.describe());
    const std::string payer(payers.obj().at("api_payers").as_array().at(0).as_string());
    (void)node.rpc("anvil_setBalance", {payer, "0x3635c9adc5dea00000"});
  }
};

/// Repeats `get` until `done(r)` holds or 60 s pass; returns the last response.
template <class Get, class Done>
response poll_until(Get get, Done done) {
  const auto deadline = steady::now() + std::chrono::seconds(60);
  response r = get();
  while (!done(r) && steady::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    r = get();
  }
  return r;
}

/// One write as the client saw it.
struct outcome {
  std::string cid;
  std::string name;
  int status = 0;
  std::string code;
  double seconds = 0;
};

std::string action_code(const std::string& tag) { return "Enact.setResponse({tag: \"" + tag + "\"});\n"; }

}  // namespace

TEST_CASE("chain node stopped while idle: 503 unavailable, then recovery without a restart") {
  chain_server env;
  server_process& srv = *env.srv;
  http_client c = srv.client();
  const account_keys acct = create_account(c, "idle outage");
  const response g1 = c.post("/add_group", json::object{{"name", "before"}}, acct.auth());
  ITEST_REQUIRE_STATUS(g1, 200);
  const uint64_t first_group = u_of(g1.body, "group_id");

  env.node.stop();
  REQUIRE_MESSAGE(env.node.stopped_cleanly(), "anvil did not save its chain within the grace period");

  // Writes reach the node at once (eth_estimateGas) and are refused.
  struct write_case {
    const char* path;
    json::object body;
  };
  const std::vector<write_case> writes = {
      {"/add_group", json::object{{"name", "during"}}},
      {"/create_wallet", json::object{{"name", "during"}}},
      {"/add_action", json::object{{"action_ipfs_cid", cid_of_code(action_code("during"))}, {"name", "during"}}},
      {"/add_usage_api_key", json::object{{"name", "during"}}},
  };
  for (const write_case& w : writes) {
    INFO(w.path);
    const response r = c.post(w.path, w.body, acct.auth());
    check_error(srv, r, 503, "unavailable", std::string("/core/v1") + w.path);
    // The message names no internals (the node's address, the transport error).
    CHECK(r.error_message().find("127.0.0.1") == std::string::npos);
  }
  // Reads may be answered from the cache until the next event poll finds the node gone; then
  // they are refused too.
  const std::vector<std::string> reads = {"/list_groups", "/list_actions", "/list_wallets", "/billing/balance"};
  for (const std::string& path : reads) {
    INFO(path);
    const response r =
        poll_until([&] { return c.get(path, acct.auth()); }, [](const response& x) { return x.status != 200; });
    check_error_shape(r, 503, "unavailable");
  }
  // Authentication itself needs the ledger: an unknown key is not mistaken for a refused one.
  const hash256 unknown = crypto::keccak256(std::string_view("a key no account has"));
  check_error_shape(c.get("/list_groups", itest::api_key(codec::base64::encode(unknown))), 503, "unavailable");
  CHECK(srv.running());

  env.node.start();
  const response back =
      poll_until([&] { return c.get("/list_groups", acct.auth()); }, [](const response& x) { return x.status == 200; });
  ITEST_REQUIRE_STATUS(back, 200);
  // Nothing of the refused writes reached the chain.
  const std::vector<json::object> groups = list_all(c, "/list_groups", acct.auth());
  REQUIRE(groups.size() == 1);
  CHECK(groups[0].at("name").as_string() == "before");
  CHECK(list_all(c, "/list_actions", acct.auth()).empty());
  CHECK(list_all(c, "/list_wallets", acct.auth()).empty());
  // The retries are accepted by the same server process.
  for (const write_case& w : writes) {
    INFO(w.path);
    ITEST_CHECK_STATUS(c.post(w.path, w.body, acct.auth()), 200);
  }
  const std::vector<json::object> after = list_all(c, "/list_groups", acct.auth());
  REQUIRE(after.size() == 2);
  CHECK(after[1].at("group_id").to_number<uint64_t>() == first_group + 1);
  CHECK(after[1].at("name").as_string() == "during");
  CHECK(srv.stop().clean());
}

TEST_CASE("chain node stopped under load: 200 or 503 only, nothing half-written, retries") {
  chain_server env;
  server_process& srv = *env.srv;
  http_client c = srv.client();
  const account_keys acct = create_account(c, "load outage");

  constexpr int kWriters = 4;
  std::atomic<bool> halt{false};
  std::mutex mu;
  std::vector<outcome> outcomes;
  std::vector<std::atomic<int>> unavailable(kWriters + 1);
  std::atomic<int> acknowledged{0};
  std::vector<std::string> other_reads;  // read answers other than 200 / 503 unavailable
  std::vector<std::thread> threads;
  for (int t = 0; t < kWriters; ++t) {
    threads.emplace_back([&, t] {
      http_client w = srv.client();
      for (int i = 0; !halt.load(); ++i) {
        const std::string tag = "w" + std::to_string(t) + "-" + std::to_string(i);
        outcome o;
        o.cid = cid_of_code(action_code(tag));
        o.name = "action " + tag;
        const auto started = steady::now();
        const response r = w.post(
            "/add_action",
            json::object{{"action_ipfs_cid", o.cid}, {"name", o.name}, {"description", "written under load " + tag}},
            acct.auth());
        o.seconds = std::chrono::duration<double>(steady::now() - started).count();
        o.status = r.status;
        o.code = r.error_code();
        if (r.status == 200)
          ++acknowledged;
        if (r.status == 503) {
          ++unavailable[t];
          // A refusal comes in milliseconds: pace the retries of an outage.
          std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        std::lock_guard lock(mu);
        outcomes.push_back(std::move(o));
      }
    });
  }
  threads.emplace_back([&] {
    http_client rd = srv.client();
    while (!halt.load()) {
      const response r = rd.get("/list_actions?page_size=5", acct.auth());
      if (r.status == 503 && r.error_code() == "unavailable")
        ++unavailable[kWriters];
      else if (r.status != 200) {
        std::lock_guard lock(mu);
        other_reads.push_back(r.describe());
      }
    }
  });

  auto wait_for = [](auto condition) {
    const auto deadline = steady::now() + std::chrono::seconds(120);
    while (!condition() && steady::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    return condition();
  };
  // Some writes land, then the node goes away with requests in flight.
  CHECK(wait_for([&] { return acknowledged.load() >= 8; }));
  env.node.stop();
  REQUIRE_MESSAGE(env.node.stopped_cleanly(), "anvil did not save its chain within the grace period");
  // Every writer and the reader have been refused at least once, and the outage lasted long
  // enough for the load to meet it in earnest: at least 100 refused writes (refusals come in
  // milliseconds and writers pace them by 20 ms, so this is about half a second of outage).
  CHECK(wait_for([&] {
    int writes_refused = 0;
    for (int t = 0; t <= kWriters; ++t) {
      if (unavailable[t].load() == 0)
        return false;
      if (t < kWriters)
        writes_refused += unavailable[t].load();
    }
    return writes_refused >= 100;
  }));
  CHECK(srv.running());
  halt = true;
  // A write whose transaction was sent before the node went away waits for its receipt; the node
  // comes back with its chain and the wait ends.
  env.node.start();
  for (std::thread& th : threads)
    th.join();

  const response back = poll_until([&] { return c.get("/list_actions", acct.auth()); },
                                   [](const response& x) { return x.status == 200; });
  ITEST_REQUIRE_STATUS(back, 200);
  std::map<std::string, json::object> on_chain;
  for (json::object& a : list_all(c, "/list_actions", acct.auth()))
    on_chain.emplace(std::string(a.at("action_ipfs_cid").as_string()), std::move(a));

  CHECK_MESSAGE(other_reads.empty(), (other_reads.empty() ? "" : other_reads.front()));
  // A write the client gave up on (status 0: no answer within its 30 s) may still be in flight in
  // the server: its transaction was sent just before the node went away and the server waits for
  // the receipt, so it can land after the snapshot above. Those are retried all, and the retry
  // answers 200 (absent) or 409 (landed meanwhile); a 503 is a final answer and its retry must
  // say exactly what the snapshot says. The final list is judged on its own afterwards.
  constexpr size_t kRetriedAbsent = 32;
  size_t refused = 0, landed_anyway = 0, retried_absent = 0, unanswered = 0;
  double slowest_refusal = 0;
  std::map<std::string, const outcome*> by_cid;
  for (const outcome& o : outcomes) {
    INFO(o.name << ": " << o.status << " " << o.code);
    CHECK((o.status == 200 || o.status == 0 || (o.status == 503 && o.code == "unavailable")));
    CHECK(by_cid.emplace(o.cid, &o).second);
    const auto it = on_chain.find(o.cid);
    if (o.status == 200) {
      REQUIRE(it != on_chain.end());
      CHECK(it->second.at("name").as_string() == o.name);
      continue;
    }
    ++refused;
    slowest_refusal = std::max(slowest_refusal, o.seconds);
    const bool in_flight = o.status == 0;
    unanswered += in_flight ? 1 : 0;
    if (it != on_chain.end()) {
      // Refused, yet fully written: the retry knows it.
      const response retry =
          c.post("/add_action", json::object{{"action_ipfs_cid", o.cid}, {"name", o.name}}, acct.auth());
      ++landed_anyway;
      CHECK(it->second.at("name").as_string() == o.name);
      CHECK(it->second.at("description").as_string().starts_with("written under load"));
      check_error_shape(retry, 409, "conflict");
    } else if (in_flight || retried_absent < kRetriedAbsent) {
      // Absent: of the thousands of fast refusals of a long outage, the first kRetriedAbsent are
      // retried, which shows that a retry then writes.
      const response retry =
          c.post("/add_action", json::object{{"action_ipfs_cid", o.cid}, {"name", o.name}}, acct.auth());
      ++retried_absent;
      if (in_flight && retry.status == 409)
        check_error_shape(retry, 409, "conflict");
      else
        ITEST_CHECK_STATUS(retry, 200);
    }
  }
  CHECK(refused >= kWriters);
  // The final list holds each action at most once, only actions this test wrote, every
  // acknowledged write and every retried one; a refused write that was not retried is either
  // fully written or absent.
  size_t acknowledged_listed = 0, refused_listed = 0;
  std::map<std::string, int> seen;
  for (const json::object& a : list_all(c, "/list_actions", acct.auth())) {
    const std::string cid(a.at("action_ipfs_cid").as_string());
    INFO(cid);
    CHECK(++seen[cid] == 1);
    const auto found = by_cid.find(cid);
    REQUIRE(found != by_cid.end());
    CHECK(a.at("name").as_string() == found->second->name);
    (found->second->status == 200 ? acknowledged_listed : refused_listed) += 1;
  }
  CHECK(acknowledged_listed == outcomes.size() - refused);
  CHECK(refused_listed >= landed_anyway + retried_absent);
  std::printf(
      "chain outage under load: %zu writes, %zu refused with 503 or unanswered (%zu "
      "unanswered, %zu on chain all the same at the snapshot, %zu after the retries), "
      "slowest refusal %.2f s\n",
      outcomes.size(), refused, unanswered, landed_anyway, refused_listed, slowest_refusal);

  // The ledger's cache and event index followed the outage: a new write is seen by reads.
  const response g = c.post("/add_group", json::object{{"name", "after"}}, acct.auth());
  ITEST_REQUIRE_STATUS(g, 200);
  CHECK(find_group(c, acct.auth(), u_of(g.body, "group_id")).is_object());
  CHECK(srv.stop().clean());
}

}  // namespace enact::itest
