// SPDX-License-Identifier: Apache-2.0
// Attacks on the server's resources: no unauthenticated route grows state without bound, and no
// caller gets more than its share. Each case is tried the way an attacker would, over HTTP
// against a real enact-server on loopback, and must be refused:
//   - flooding /new_account from one address (per-address bucket, 429 + Retry-After);
//   - flooding /rpc with eth_sendRawTransaction, one by one and in batches (per-address bucket
//     counting each write of a batch; HTTP 429 + Retry-After with JSON-RPC error -32005), and the
//     limit is on by default;
//   - an oversized JSON-RPC batch (refused whole, error -32600);
//   - filling the content store through /upload_action (a per-account quota of distinct code and
//     bytes, 403; the same code twice counts once; kept across a restart), or through the inline
//     code of /run_action, which is kept for later runs only within the same quota;
//   - resetting the rate-limit table with a flood of distinct client addresses, so that a
//     limited client gets fresh tokens (the table evicts least recently used buckets only);
//   - one admin wallet flooding the billing routes with X-Wallet-Auth (per-wallet bucket);
//   - an IPFS gateway that redirects the server elsewhere (not followed: the target sees no
//     request) or answers an endless body (cut off at the action code limit, 413).
#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "enact/chain/registry.hpp"
#include "enact/chain/rpc.hpp"
#include "enact/chain/transaction.hpp"
#include "enact/eip712/envelope.hpp"
#include "steps.hpp"

namespace enact::itest {
namespace {

using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;
namespace reg = chain::registry;

// --- helpers ---------------------------------------------------------------------------------

/// One HTTP/1.1 request sent from the source address `from` (any address of 127.0.0.0/8 is
/// this host's), so one test process can be many clients. Returns the status (0: no answer).
int status_from(const std::string& from, int port, const std::string& method, const std::string& path,
                const std::string& body) {
  const int fd = connect_from(from, port);
  if (fd < 0)
    return 0;
  int status = 0;
  const std::string req = method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n" +
                          "Content-Type: application/json\r\nConnection: close\r\n" +
                          "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  send_raw(fd, req);
  std::string answer;
  char buf[4096];
  ssize_t n = 0;
  while ((n = ::recv(fd, buf, sizeof buf, 0)) > 0)
    answer.append(buf, static_cast<size_t>(n));
  if (answer.starts_with("HTTP/1.1 ") && answer.size() >= 12)
    status = std::stoi(answer.substr(9, 3));
  ::close(fd);
  return status;
}

struct chain_env {
  uint64_t chain_id = 0;
  address registry{};
};

chain_env env_of(http_client& c) {
  const response r = c.get("/get_node_chain_config");
  REQUIRE_MESSAGE(r.status == 200, r.describe());
  return chain_env{u_of(r.body, "chain_id"), parse_address(s_of(r.body, "contract_address")).value()};
}

address address_of(const Secret& key) {
  return crypto::secp256k1::to_address(crypto::secp256k1::public_key_of(key).value());
}

/// A signed EIP-1559 transaction to the registry.
std::string signed_tx(const Secret& key, const chain_env& env, uint64_t nonce, const bytes& data) {
  chain::eip1559_tx tx;
  tx.chain_id = env.chain_id;
  tx.nonce = nonce;
  tx.max_priority_fee_per_gas = u256{1000000000};
  tx.max_fee_per_gas = u256{3000000000};
  tx.gas_limit = 300000;
  tx.to = env.registry;
  tx.data = data;
  return chain::rpc::data(chain::sign(tx, key).value());
}

json::object rpc_request(int id, std::string_view method, json::array params) {
  return json::object{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", std::move(params)}};
}

response rpc_post(http_client& c, const json::value& body) { return c.request("POST", "/rpc", json::serialize(body)); }

/// A wallet with its own account on the registry (newAccount over /rpc), ready to send writes:
/// each addGroup grows the ledger by a group.
struct chain_wallet {
  Secret key;
  address from{};
  hash256 account{};
  uint64_t nonce = 0;
  chain_env env;

  chain_wallet(http_client& c, std::string_view label) : key(crypto::keccak256("limits attack " + std::string(label))) {
    env = env_of(c);
    from = address_of(key);
    account = crypto::keccak256(bytes_view(from));
    const bytes create = reg::encode(reg::new_account_call{account, from, false, "flood", "", ""});
    const response r = rpc_post(c, rpc_request(1, "eth_sendRawTransaction", {signed_tx(key, env, nonce++, create)}));
    REQUIRE_MESSAGE(r.status == 200, r.describe());
    REQUIRE_MESSAGE(r.obj().contains("result"), r.describe());
  }
  /// The next addGroup transaction, signed.
  std::string next_group() {
    const bytes data = reg::encode(reg::add_group_call{account, "g" + std::to_string(nonce), "", {}, {}});
    return signed_tx(key, env, nonce++, data);
  }
};

/// Checks a /rpc answer refused by the write limit: HTTP 429, Retry-After in whole seconds, a
/// JSON-RPC error -32005 that says so.
void check_rpc_limited(const response& r) {
  REQUIRE_MESSAGE(r.status == 429, r.describe());
  const std::string retry = r.header("Retry-After");
  REQUIRE(!retry.empty());
  CHECK(std::stoi(retry) >= 1);
  CHECK(std::to_string(std::stoi(retry)) == retry);
  REQUIRE(r.body.is_object());
  CHECK(r.body.at("jsonrpc") == "2.0");
  CHECK(r.body.at("error").at("code").to_number<int64_t>() == -32005);
  CHECK(std::string(r.body.at("error").at("message").as_string()).find("rate_limited") != std::string::npos);
}

/// A loopback HTTP server with the routes `routes` sets, run on its own thread, stopped on
/// destruction.
class loopback_server {
 public:
  explicit loopback_server(const std::function<void(httplib::Server&)>& routes)
      : serving_((routes(server_), server_)) {}
  [[nodiscard]] std::string url() const { return serving_.url(); }

 private:
  httplib::Server server_;
  serving serving_;
};

/// An account that may run `cid` (a group listing it) and has credits for it.
account_keys runner_for(http_client& c, const std::string& cid) {
  const account_keys acct = create_account(c, "runner");
  buy_credits(c, acct.auth(), 500);
  const response g = c.post("/add_group",
                            json::object{{"name", "g"},
                                         {"pkp_ids_permitted", json::array{}},
                                         {"cid_hashes_permitted", json::array{json::string(hashed_cid_hex(cid))}}},
                            acct.auth());
  ITEST_REQUIRE_STATUS(g, 200);
  return acct;
}

}  // namespace

// --- the attacks -----------------------------------------------------------------------------

TEST_CASE("attack: flooding /new_account from one address stops at its per-minute limit") {
  server_process srv({"--new-accounts-per-minute", "5"});
  http_client c = srv.client();
  int created = 0;
  response limited;
  for (int i = 0; i < 30; ++i) {
    response r = c.post("/new_account", json::object{{"name", "flood " + std::to_string(i)}});
    REQUIRE((r.status == 200 || r.status == 429));
    if (r.status == 200)
      ++created;
    else
      limited = std::move(r);
  }
  CHECK(created == 5);
  check_error_shape(limited, 429, "rate_limited");
  CHECK(std::stoi(limited.header("Retry-After")) >= 1);
  // The minting routes have buckets of their own: the flood did not use them up, and they are
  // limited the same way.
  const Secret wallet(crypto::keccak256(std::string_view("limits attack minting wallet")));
  const auto env = eip712::envelope::sign(eip712::envelope::kind::create_wallet, env_of(c).chain_id, wallet,
                                          static_cast<uint64_t>(unix_now()))
                       .value();
  const json::object mint{{"typed_data", env.typed_data}, {"signature", env.signature}};
  int minted = 0;
  int refused = 0;
  for (int i = 0; i < 10; ++i) {
    const response r = c.post("/create_wallet_with_signature", mint);
    if (r.status == 429) {
      ++refused;
      CHECK(!r.header("Retry-After").empty());
    } else if (r.status == 200) {
      ++minted;
    }
  }
  CHECK(minted == 5);
  CHECK(refused == 5);
  CHECK(srv.stop().clean());
}

TEST_CASE("attack: flooding /rpc with writes, one by one and in batches") {
  server_process srv({"--rpc-writes-per-minute", "10"});
  http_client c = srv.client();
  chain_wallet w(c, "rpc flood");  // one write of the 10

  int accepted = 0;
  response limited;
  for (int i = 0; i < 30 && limited.status == 0; ++i) {
    response r = rpc_post(c, rpc_request(2, "eth_sendRawTransaction", {w.next_group()}));
    if (r.status == 200) {
      CHECK_MESSAGE(r.obj().contains("result"), r.describe());
      ++accepted;
    } else {
      limited = std::move(r);
    }
  }
  // Nine after the account's creation, and one more when the loop was slow enough to see a refill.
  CHECK(accepted >= 9);
  CHECK(accepted <= 10);
  check_rpc_limited(limited);
  CHECK(limited.body.at("id") == 2);  // a single request's id is echoed

  // A batch's writes count one by one: five more are refused whole, and nothing of them ran.
  json::array batch;
  for (int i = 0; i < 5; ++i)
    batch.push_back(rpc_request(10 + i, "eth_sendRawTransaction", {w.next_group()}));
  check_rpc_limited(rpc_post(c, batch));
  // More writes in one batch than a minute allows is refused outright (no wait would help).
  json::array huge;
  for (int i = 0; i < 11; ++i)
    huge.push_back(rpc_request(20 + i, "eth_sendRawTransaction", {"0x00"}));
  const response over = rpc_post(c, huge);
  ITEST_CHECK_STATUS(over, 200);
  CHECK(over.body.at("error").at("code").to_number<int64_t>() == -32600);

  // Reads are not writes: they still work, and the ledger holds exactly the accepted writes.
  const response head = rpc_post(c, rpc_request(3, "eth_blockNumber", {}));
  ITEST_REQUIRE_STATUS(head, 200);
  CHECK(chain::rpc::parse_quantity_u64(head.body.at("result")).value() == static_cast<uint64_t>(1 + accepted));
  // The API routes have their own limits.
  ITEST_CHECK_STATUS(c.get("/get_node_chain_config"), 200);
  CHECK(srv.stop().clean());
}

TEST_CASE("attack: /rpc writes are limited by default") {
  server_process srv;
  http_client c = srv.client();
  chain_wallet w(c, "rpc default");
  response limited;
  int accepted = 1;
  for (int i = 0; i < 400 && limited.status == 0; ++i) {
    response r = rpc_post(c, rpc_request(2, "eth_sendRawTransaction", {w.next_group()}));
    if (r.status == 200)
      ++accepted;
    else
      limited = std::move(r);
  }
  check_rpc_limited(limited);
  CHECK(accepted >= 100);  // a generous default
  CHECK(accepted <= 130);
  CHECK(srv.stop().clean());
}

TEST_CASE("attack: dry runs through /rpc (eth_call, eth_estimateGas) are limited per address") {
  // Each executes a call against the ledger under its write lock and rolls it back: as costly as
  // a write to run, and otherwise unlimited for a client without any account.
  server_process srv({"--rpc-calls-per-second", "2"});  // a burst of 20
  http_client c = srv.client();
  const response cfg = c.get("/get_node_chain_config");
  ITEST_REQUIRE_STATUS(cfg, 200);
  const json::object call{{"to", cfg.body.at("contract_address")}, {"data", "0x8da5cb5b"}};  // owner()
  int accepted = 0;
  response limited;
  for (int i = 0; i < 60 && limited.status == 0; ++i) {
    response r = rpc_post(c, rpc_request(i, i % 2 ? "eth_call" : "eth_estimateGas", json::array{call, "latest"}));
    if (r.status == 200)
      ++accepted;
    else
      limited = std::move(r);
  }
  CHECK(accepted >= 20);
  CHECK(accepted <= 22);  // the burst, and a token or two refilled while the loop ran
  check_rpc_limited(limited);
  // A batch counts each of its dry runs; reads that execute nothing are not limited.
  json::array batch;
  for (int i = 0; i < 3; ++i)
    batch.push_back(rpc_request(100 + i, "eth_call", json::array{call, "latest"}));
  check_rpc_limited(rpc_post(c, batch));
  ITEST_CHECK_STATUS(rpc_post(c, rpc_request(7, "eth_blockNumber", {})), 200);
  CHECK(srv.stop().clean());
}

TEST_CASE("attack: an oversized JSON-RPC batch is refused whole") {
  server_process srv;
  http_client c = srv.client();
  json::array batch;
  for (int i = 0; i < 101; ++i)
    batch.push_back(rpc_request(i, "eth_getLogs", {json::object{{"fromBlock", "earliest"}}}));
  const response r = rpc_post(c, batch);
  ITEST_REQUIRE_STATUS(r, 200);
  REQUIRE_MESSAGE(r.body.is_object(), r.describe());
  CHECK(r.body.at("error").at("code").to_number<int64_t>() == -32600);
  CHECK(std::string(r.body.at("error").at("message").as_string()).find("at most 100") != std::string::npos);
  batch.pop_back();
  const response fine = rpc_post(c, batch);
  ITEST_REQUIRE_STATUS(fine, 200);
  REQUIRE_MESSAGE(fine.body.is_array(), fine.describe());
  CHECK(fine.body.as_array().size() == 100);
  CHECK(srv.stop().clean());
}

TEST_CASE("attack: filling the content store through /upload_action") {
  temp_dir data;
  const std::vector<std::string> flags{"--upload-quota-count", "3", "--upload-quota-bytes", "2000"};
  const auto code = [](int i, size_t pad = 0) {
    return "Enact.setResponse(" + std::to_string(i) + "); //" + std::string(pad, 'x') + "\n";
  };
  std::string hog_key;
  {
    server_process srv(flags, data.path());
    http_client c = srv.client();
    const account_keys hog = create_account(c, "hog");
    hog_key = hog.api_key;
    const usage_keys uk = create_usage_key(c, hog.auth(), {{"name", "uploader"}});
    for (int i = 0; i < 3; ++i)
      ITEST_REQUIRE_STATUS(c.post("/upload_action", json::object{{"code", code(i)}}, hog.auth()), 200);
    // The same code again is free, by the account key or its usage key.
    ITEST_CHECK_STATUS(c.post("/upload_action", json::object{{"code", code(0)}}, hog.auth()), 200);
    ITEST_CHECK_STATUS(c.post("/upload_action", json::object{{"code", code(1)}}, uk.auth()), 200);
    // New code is refused, whichever key of the account asks.
    const response full = c.post("/upload_action", json::object{{"code", code(3)}}, hog.auth());
    check_error_shape(full, 403, "forbidden");
    CHECK(full.error_message().find("upload quota") != std::string::npos);
    check_error_shape(c.post("/upload_action", json::object{{"code", code(4)}}, uk.auth()), 403, "forbidden");

    // The quota is per account: code the hog stored still counts for another account, and the
    // bytes are limited too.
    const account_keys other = create_account(c, "other");
    ITEST_CHECK_STATUS(c.post("/upload_action", json::object{{"code", code(0)}}, other.auth()), 200);
    ITEST_CHECK_STATUS(c.post("/upload_action", json::object{{"code", code(10, 1200)}}, other.auth()), 200);
    const response bytes_over = c.post("/upload_action", json::object{{"code", code(11, 900)}}, other.auth());
    check_error_shape(bytes_over, 403, "forbidden");
    CHECK(bytes_over.error_message().find("upload_quota_bytes") != std::string::npos);
    CHECK(srv.stop().clean());
  }
  // Kept across a restart.
  server_process srv(flags, data.path());
  http_client c = srv.client();
  check_error_shape(c.post("/upload_action", json::object{{"code", code(5)}}, api_key(hog_key)), 403, "forbidden");
  ITEST_CHECK_STATUS(c.post("/upload_action", json::object{{"code", code(2)}}, api_key(hog_key)), 200);
  CHECK(srv.stop().clean());
}

TEST_CASE("attack: /run_action with inline code does not keep code past the upload quota") {
  // The side door: run_action keeps inline code in the content store for later runs by CID.
  server_process srv({"--dev", "--sandbox-workers", "1", "--upload-quota-count", "1"});
  http_client c = srv.client();
  const std::string kept = "Enact.setResponse(\"kept\");\n";
  const std::string extra = "Enact.setResponse(\"not kept\");\n";
  const account_keys acct = runner_for(c, cid_of_code(extra));
  ITEST_REQUIRE_STATUS(c.post("/upload_action", json::object{{"code", kept}}, acct.auth()), 200);
  // The code still runs (the quota limits what is kept, not what runs) ...
  const response ran = c.post("/run_action", json::object{{"code", extra}}, acct.auth());
  ITEST_REQUIRE_STATUS(ran, 200);
  CHECK(ran.body.at("response") == "not kept");
  // ... but it was not kept: by CID it is not found (no gateway configured).
  check_error_shape(c.post("/run_action", json::object{{"action_ipfs_cid", cid_of_code(extra)}}, acct.auth()), 404,
                    "not_found");
  CHECK(srv.stop().clean());
}

TEST_CASE("attack: a flood of distinct client addresses does not reset a limited client") {
  // A small table (64 buckets) so that a few hundred addresses overflow it; the default holds
  // 100,000. The attacker is limited at 127.0.0.1, then presents 300 other addresses of
  // 127.0.0.0/8 (malformed bodies: no account is created, but each takes a bucket) while still
  // trying its own address now and then.
  temp_dir cfg_dir;
  const std::string cfg = cfg_dir.path() + "/limits.json";
  std::ofstream(cfg) << R"({"limits": {"rate_table_entries": 64}})";
  server_process srv({"--config", cfg, "--new-accounts-per-minute", "2"});
  const std::string body = R"({"name":"flood"})";
  REQUIRE(status_from("127.0.0.1", srv.port(), "POST", "/core/v1/new_account", body) == 200);
  REQUIRE(status_from("127.0.0.1", srv.port(), "POST", "/core/v1/new_account", body) == 200);
  REQUIRE(status_from("127.0.0.1", srv.port(), "POST", "/core/v1/new_account", body) == 429);
  int fresh = 0;
  for (int i = 0; i < 300; ++i) {
    const std::string from = "127.0." + std::to_string(1 + i / 250) + "." + std::to_string(1 + i % 250);
    CHECK(status_from(from, srv.port(), "POST", "/core/v1/new_account", "{}") == 400);
    if (i % 20 == 19 && status_from("127.0.0.1", srv.port(), "POST", "/core/v1/new_account", body) != 429)
      ++fresh;
  }
  CHECK(fresh == 0);
  CHECK(status_from("127.0.0.1", srv.port(), "POST", "/core/v1/new_account", body) == 429);
  CHECK(srv.stop().clean());
}

TEST_CASE("attack: one wallet flooding billing with X-Wallet-Auth is limited per wallet") {
  server_process srv({"--dev", "--key-rate", "5"});
  http_client c = srv.client();
  const account_keys acct = create_account(c, "wallet");
  const httplib::Headers wallet = wallet_auth(env_of(srv), key_secret(acct.api_key));
  response limited;
  int served = 0;
  for (int i = 0; i < 200 && limited.status == 0; ++i) {
    response r = c.get("/billing/balance", wallet);
    if (r.status == 200)
      ++served;
    else
      limited = std::move(r);
  }
  check_error_shape(limited, 429, "rate_limited");
  CHECK(limited.error_message().find("wallet") != std::string::npos);
  CHECK(std::stoi(limited.header("Retry-After")) >= 1);
  CHECK(served <= 12);  // a burst of 10 (twice the rate), and a token or two refilled meanwhile
  // Fresh envelopes of the same wallet, for another request, share its bucket.
  check_error_shape(c.get("/billing/payments", wallet), 429, "rate_limited");
  CHECK(srv.stop().clean());
}

TEST_CASE("attack: a gateway that redirects is not followed") {
  const std::string code = "Enact.setResponse(\"from the redirect target\");\n";
  const std::string cid = cid_of_code(code);
  std::atomic<int> target_hits{0};
  loopback_server target([&](httplib::Server& s) {
    s.Get(R"(/.*)", [&](const httplib::Request&, httplib::Response& res) {
      ++target_hits;
      res.set_content(code, "application/octet-stream");
    });
  });
  for (const int status : {301, 302, 307, 308}) {
    CAPTURE(status);
    loopback_server gateway([&](httplib::Server& s) {
      s.Get(R"(/ipfs/([^/]+))", [&](const httplib::Request& req, httplib::Response& res) {
        res.status = status;
        res.set_header("Location", target.url() + req.path);
      });
    });
    server_process srv({"--dev", "--sandbox-workers", "1", "--ipfs-gateway", gateway.url()});
    http_client c = srv.client();
    const account_keys acct = runner_for(c, cid);
    const response r = c.post("/run_action", json::object{{"action_ipfs_cid", cid}}, acct.auth());
    check_error_shape(r, 503, "unavailable");
    CHECK(r.error_message().find("redirect") != std::string::npos);
    CHECK(target_hits.load() == 0);
    CHECK(srv.stop().clean());
  }
}

TEST_CASE("attack: a gateway with an endless body is cut off at the action code limit") {
  const std::string cid = cid_of_code("Enact.setResponse(1);\n");
  std::atomic<size_t> streamed{0};
  std::atomic<size_t> declared_sent{0};
  constexpr size_t kChunk = 64 * 1024;
  constexpr size_t kEndless = size_t{256} << 20;  // 256 MiB offered
  loopback_server gateway([&](httplib::Server& s) {
    // No length: chunked, until the reader hangs up.
    s.Get(R"(/ipfs/(Qm[^/]+))", [&](const httplib::Request&, httplib::Response& res) {
      res.set_chunked_content_provider("application/octet-stream", [&](size_t offset, httplib::DataSink& sink) {
        if (offset >= kEndless) {
          sink.done();
          return true;
        }
        const std::string chunk(kChunk, 'x');
        if (!sink.write(chunk.data(), chunk.size()))
          return false;
        streamed += chunk.size();
        return true;
      });
    });
    // A declared length over the limit.
    s.Get(R"(/ipfs/(b[^/]+))", [&](const httplib::Request&, httplib::Response& res) {
      res.set_content_provider(kEndless, "application/octet-stream",
                               [&](size_t, size_t length, httplib::DataSink& sink) {
                                 const std::string chunk(std::min(length, kChunk), 'y');
                                 if (!sink.write(chunk.data(), chunk.size()))
                                   return false;
                                 declared_sent += chunk.size();
                                 return true;
                               });
    });
  });
  server_process srv({"--dev", "--sandbox-workers", "1", "--ipfs-gateway", gateway.url()});
  http_client c = srv.client();
  const account_keys acct = runner_for(c, cid);
  const auto started = steady::now();
  const response r = c.post("/run_action", json::object{{"action_ipfs_cid", cid}}, acct.auth());
  check_error_shape(r, 413, "payload_too_large");
  CHECK(r.error_message().find("larger than") != std::string::npos);
  // The server hung up after the limit: the gateway got rid of a few socket buffers' worth, far
  // from the 256 MiB it offered.
  CHECK(streamed.load() < (size_t{32} << 20));
  CHECK(steady::now() - started < 20s);

  // The CIDv1 spelling of the same code, served with a Content-Length of 256 MiB: refused
  // from the header.
  const std::string v1 = ipfs::cid{1, ipfs::kCodecDagPb, ipfs::parse(cid).value().multihash}.to_string();
  REQUIRE(v1.starts_with("b"));
  const account_keys acct1 = runner_for(c, v1);
  const response r1 = c.post("/run_action", json::object{{"action_ipfs_cid", v1}}, acct1.auth());
  check_error_shape(r1, 413, "payload_too_large");
  CHECK(declared_sent.load() < (size_t{32} << 20));
  CHECK(srv.stop().clean());
}

}  // namespace enact::itest
