// SPDX-License-Identifier: Apache-2.0
// Steps the integration scenarios share: creating accounts and usage keys, buying credits, the SDK
// computations the server's answers are checked against (CIDs, hashed CIDs, derivation paths,
// key addresses), and the checks every error response must pass (docs/protocol.md §0: status, code, body
// shape, X-Request-Id, and the request's log line).
#pragma once

#include <doctest/doctest.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <set>
#include <string>
#include <string_view>

#include "enact/codec/base64.hpp"
#include "enact/codec/hex.hpp"
#include "enact/address.hpp"
#include "enact/crypto/keccak.hpp"
#include "enact/crypto/secp256k1.hpp"
#include "enact/secret.hpp"
#include "enact/ipfs/cid.hpp"
#include "enact/pkp/pkp.hpp"
#include "server_process.hpp"

namespace enact::itest {

/// REQUIRE a status, printing the response when it differs.
#define ITEST_REQUIRE_STATUS(resp, expected)                             \
  do {                                                                   \
    const auto& itest_r_ = (resp);                                       \
    REQUIRE_MESSAGE(itest_r_.status == (expected), itest_r_.describe()); \
  } while (false)
#define ITEST_CHECK_STATUS(resp, expected)                             \
  do {                                                                 \
    const auto& itest_r_ = (resp);                                     \
    CHECK_MESSAGE(itest_r_.status == (expected), itest_r_.describe()); \
  } while (false)

/// A string field of a JSON object.
inline std::string s_of(const json::value& v, std::string_view key) {
  return std::string(v.as_object().at(key).as_string());
}
/// An unsigned integer field of a JSON object.
inline uint64_t u_of(const json::value& v, std::string_view key) { return v.as_object().at(key).to_number<uint64_t>(); }

/// The keccak256 of a string as 0x-hex (API key hashes, hashed CIDs: docs/protocol.md §1).
inline std::string keccak_hex(std::string_view text) { return codec::hex::encode_prefixed(crypto::keccak256(text)); }
/// The CIDv0 `ipfs add` gives `code` (computed by the SDK).
inline std::string cid_of_code(std::string_view code) { return ipfs::cid_of(as_bytes(code)); }
/// hashed_cid of a CID string, 0x-hex.
inline std::string hashed_cid_hex(std::string_view cid) { return codec::hex::encode_prefixed(ipfs::hashed_cid(cid)); }
/// The secp256k1 key an API key stands for (its base64 bytes, docs/protocol.md §1).
inline Secret key_secret(const std::string& api_key) {
  return Secret(codec::base64::decode(api_key, "api key").value());
}
/// The checksummed address of an API key's secp256k1 key.
inline std::string key_address(const std::string& api_key) {
  const auto pub = crypto::secp256k1::public_key_of(key_secret(api_key)).value();
  return to_checksum_address(crypto::secp256k1::to_address(pub));
}
/// The API-mode derivation path of the `index`-th wallet of an account, 0x-hex.
inline std::string api_path_hex(const std::string& api_key_hash_hex, uint64_t index) {
  const hash256 h = codec::hex::decode_fixed<32>(api_key_hash_hex).value();
  return codec::hex::encode_prefixed(pkp::api_mode_path(h, index));
}
/// A fresh address no account has a wallet at (for unknown PKPs): the last 20 bytes of a hash
/// of a counter.
inline std::string random_address_hex() {
  static std::atomic<uint64_t> counter{0};
  const hash256 h = crypto::keccak256("unknown pkp " + std::to_string(++counter));
  address a{};
  std::copy(h.begin() + 12, h.end(), a.begin());
  return to_checksum_address(a);
}

/// An account created by POST /new_account.
struct account_keys {
  std::string api_key;
  std::string wallet_address;
  std::string api_key_hash;
  [[nodiscard]] httplib::Headers auth() const { return itest::api_key(api_key); }
};

inline account_keys create_account(http_client& c, const std::string& name = "acct") {
  const response r = c.post("/new_account", json::object{{"name", name}});
  ITEST_REQUIRE_STATUS(r, 200);
  return account_keys{s_of(r.body, "api_key"), s_of(r.body, "wallet_address"), s_of(r.body, "api_key_hash")};
}

/// A usage key created by POST /add_usage_api_key.
struct usage_keys {
  std::string value;
  std::string hash;
  std::string wallet_address;
  [[nodiscard]] httplib::Headers auth() const { return itest::api_key(value); }
};

/// Creates a usage key with `fields` (permission fields; name defaults to "k").
inline usage_keys create_usage_key(http_client& c, const httplib::Headers& owner, json::object fields = {}) {
  if (!fields.contains("name"))
    fields["name"] = "k";
  const response r = c.post("/add_usage_api_key", fields, owner);
  ITEST_REQUIRE_STATUS(r, 200);
  return usage_keys{s_of(r.body, "usage_api_key"), s_of(r.body, "hash"), s_of(r.body, "wallet_address")};
}

inline uint64_t balance_of(http_client& c, const httplib::Headers& auth) {
  const response r = c.get("/billing/balance", auth);
  ITEST_REQUIRE_STATUS(r, 200);
  return u_of(r.body, "balance_credits");
}

/// Creates a dev payment intent of `cents` and confirms it; returns the new balance.
inline uint64_t buy_credits(http_client& c, const httplib::Headers& auth, uint64_t cents) {
  const response intent = c.post("/billing/create_payment_intent", json::object{{"amount_cents", cents}}, auth);
  ITEST_REQUIRE_STATUS(intent, 200);
  const response done = c.post("/billing/confirm_payment",
                               json::object{{"payment_intent_id", s_of(intent.body, "payment_intent_id")}}, auth);
  ITEST_REQUIRE_STATUS(done, 200);
  return u_of(done.body, "balance_credits");
}

/// `enact-server issue-token` for `user` in `data_dir`: the 43-character token it prints.
inline std::string issue_token(const std::string& data_dir, const std::string& user) {
  const finished_run r = run_to_exit({"issue-token", "--data-dir", data_dir, "--user", user});
  REQUIRE_MESSAGE(r.status.clean(), r.stderr_text);
  std::string t = r.stdout_text;
  while (!t.empty() && (t.back() == '\n' || t.back() == '\r'))
    t.pop_back();
  REQUIRE(t.size() == 43);
  return t;
}

/// An action that throws on line 3, so the stack a run reports must name action.js:3.
inline constexpr std::string_view kThrowCode =
    "// fails on purpose\n"
    "function fail(why) {\n"
    "  throw new Error(why);\n"
    "}\n"
    "fail(\"boom\");\n";

/// The chain a server's ledger is: its chain id, the registry's address and the URL of its /rpc.
struct chain_env {
  uint64_t chain_id = 0;
  address registry{};
  std::string rpc_url;
};

/// The chain_env of `srv`, from /get_node_chain_config.
inline chain_env env_of(const server_process& srv) {
  http_client c = srv.client();
  const response r = c.get("/get_node_chain_config");
  REQUIRE_MESSAGE(r.status == 200, r.describe());
  return {u_of(r.body, "chain_id"), parse_address(s_of(r.body, "contract_address")).value(),
          "http://127.0.0.1:" + std::to_string(srv.port()) + "/rpc"};
}

/// Headers that authenticate a billing request as `key`'s wallet: the client signs a version 2
/// BillingAuth for each request it sends with them (server_process.hpp kWalletKeyHeader).
/// `issued_at` 0: the time of sending.
inline httplib::Headers wallet_auth(const chain_env& e, const Secret& key, uint64_t issued_at = 0) {
  std::string v = codec::hex::encode_prefixed(key.view()) + " " + std::to_string(e.chain_id) + " " +
                  to_checksum_address(e.registry);
  if (issued_at != 0)
    v += " " + std::to_string(issued_at);
  return httplib::Headers{{std::string(kWalletKeyHeader), v}};
}

/// Every read of an account's state, as the wire carries it: every list in full (and those of
/// `groups`), and its balance.
inline json::object account_snapshot(http_client& c, const httplib::Headers& owner,
                                     const std::vector<uint64_t>& groups) {
  json::object s;
  const auto arr = [](std::vector<json::object> v) {
    json::array a;
    for (auto& x : v)
      a.push_back(std::move(x));
    return a;
  };
  const response me = c.get("/account", owner);
  REQUIRE(me.status == 200);
  s["account"] = me.body;
  s["keys"] = arr(list_all(c, "/list_api_keys", owner));
  s["groups"] = arr(list_all(c, "/list_groups", owner));
  s["wallets"] = arr(list_all(c, "/list_wallets", owner));
  s["actions"] = arr(list_all(c, "/list_actions", owner));
  for (const uint64_t g : groups) {
    s["actions_in_" + std::to_string(g)] = arr(list_all(c, "/list_actions?group_id=" + std::to_string(g), owner));
    s["wallets_in_" + std::to_string(g)] =
        arr(list_all(c, "/list_wallets_in_group?group_id=" + std::to_string(g), owner));
  }
  s["balance"] = balance_of(c, owner);
  return s;
}

/// The group `id` as list_groups shows it (null when absent).
inline json::value find_group(http_client& c, const httplib::Headers& auth, uint64_t id) {
  for (const auto& g : list_all(c, "/list_groups", auth))
    if (g.at("group_id").to_number<uint64_t>() == id)
      return g;
  return nullptr;
}

/// Strings of a JSON array field.
inline std::set<std::string> string_set(const json::value& v, std::string_view key) {
  std::set<std::string> out;
  for (const auto& x : v.as_object().at(key).as_array())
    out.insert(std::string(x.as_string()));
  return out;
}

/// Writes `bytes` to the connected socket `fd`, for what no HTTP client library sends (a body
/// shorter than its Content-Length, a request from a chosen source address); stops early when the
/// peer has closed.
/// A TCP connection to 127.0.0.1:`port` from the source address `from`: any address of
/// 127.0.0.0/8 is this host's, so one test process can be many clients. -1 when it cannot be made.
inline int connect_from(const std::string& from, int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return -1;
  sockaddr_in src{};
  src.sin_family = AF_INET;
  ::inet_pton(AF_INET, from.c_str(), &src.sin_addr);
  sockaddr_in dst{};
  dst.sin_family = AF_INET;
  dst.sin_port = htons(static_cast<uint16_t>(port));
  ::inet_pton(AF_INET, "127.0.0.1", &dst.sin_addr);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&src), sizeof src) != 0 ||
      ::connect(fd, reinterpret_cast<sockaddr*>(&dst), sizeof dst) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

inline void send_raw(int fd, std::string_view bytes) {
  size_t sent = 0;
  while (sent < bytes.size()) {
    const ssize_t n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n <= 0)
      break;
    sent += static_cast<size_t>(n);
  }
}

/// Checks the body shape of docs/protocol.md §0 ({"error": {"code", "message", "details"?}}, nothing
/// else), the status and code, and the X-Request-Id header.
inline void check_error_shape(const response& r, int status, std::string_view code) {
  INFO(r.describe());
  CHECK(r.status == status);
  CHECK(r.error_code() == code);
  REQUIRE(r.body.is_object());
  CHECK(r.obj().size() == 1);
  const auto* err = r.obj().if_contains("error");
  REQUIRE(err != nullptr);
  REQUIRE(err->is_object());
  for (const auto& kv : err->as_object())
    CHECK_MESSAGE((kv.key() == "code" || kv.key() == "message" || kv.key() == "details"),
                  "unexpected field error." << std::string(kv.key()));
  const auto* msg = err->as_object().if_contains("message");
  REQUIRE(msg != nullptr);
  REQUIRE(msg->is_string());
  CHECK(!msg->get_string().empty());
  CHECK(!r.header("X-Request-Id").empty());
  CHECK(r.header("Content-Type").starts_with("application/json"));
}

/// Checks that the server logged exactly one request line for `r` (by its X-Request-Id), with
/// the route, the status and the latency.
inline void check_logged(const server_process& srv, const response& r, std::string_view route) {
  const std::string id = r.header("X-Request-Id");
  INFO("request id " << id << ", route " << std::string(route) << ", " << r.describe());
  REQUIRE(!id.empty());
  const auto lines = srv.await_request_lines(id);
  REQUIRE(lines.size() == 1);
  const auto& l = lines.front();
  CHECK(l.contains("route"));
  if (const auto* rt = l.if_contains("route"); rt != nullptr && rt->is_string())
    CHECK(rt->get_string() == route);
  REQUIRE(l.contains("status"));
  CHECK(l.at("status").to_number<int>() == r.status);
  REQUIRE(l.contains("latency_us"));
  CHECK(l.at("latency_us").is_number());
}

/// check_error_shape and check_logged together.
inline void check_error(const server_process& srv, const response& r, int status, std::string_view code,
                        std::string_view route) {
  check_error_shape(r, status, code);
  check_logged(srv, r, route);
}

/// No log line of `srv` contains any of `secrets` (call after stop: the log is then complete).
inline void check_no_secret_logged(const server_process& srv, const std::vector<std::string>& secrets) {
  const std::string log = srv.log_text();
  REQUIRE(!log.empty());
  for (const auto& s : secrets) {
    REQUIRE(!s.empty());
    CHECK_MESSAGE(log.find(s) == std::string::npos, "an API key value appears in the log");
    // Nor a prefix of it (a truncated key is still a leak).
    CHECK(log.find(s.substr(0, 20)) == std::string::npos);
  }
}

}  // namespace enact::itest
