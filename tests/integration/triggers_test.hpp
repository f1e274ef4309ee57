// SPDX-License-Identifier: Apache-2.0
// The trigger service of enact-server end to end (docs/protocol.md §4, docs/triggers.md): a webhook fires
// an action through the core and its run records the answer; webhook params (JSON, text, bytes
// that are not UTF-8, stripped and passed headers); 404, 409 and 413; a throwing action's stack;
// retries against a fake core (503 three times, then 200; a 4xx fails at once; persistent 503 gives up
// after four attempts, 3 retries); the management API's authentication, ownership, validation and JSON; the
// serving modes; and a SIGKILL in the middle of a webhook flood, after which every acknowledged
// webhook has exactly one run and every run finishes.
//
// Shared by triggers_webhook_test.cpp and triggers_management_test.cpp (integration.triggers).
#pragma once

#include <doctest/doctest.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "enact/crypto/random.hpp"
#include "steps.hpp"

namespace enact::itest {

using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

// --- requests ------------------------------------------------------------------------------------

/// The management API as one user.
class api_user {
 public:
  api_user(int port, std::string token) : port_(port), token_(std::move(token)) {}
  response get(const std::string& path) { return keep(call(port_, "GET", path, {}, auth())); }
  response post(const std::string& path, const json::value& body) {
    return keep(call(port_, "POST", path, json::serialize(body), auth()));
  }
  response patch(const std::string& path, const json::value& body) {
    return keep(call(port_, "PATCH", path, json::serialize(body), auth()));
  }
  response del(const std::string& path) { return keep(call(port_, "DELETE", path, {}, auth())); }
  [[nodiscard]] httplib::Headers auth() const { return bearer(token_); }
  /// Every answer this user got, for the check that no key value ever comes back.
  [[nodiscard]] const std::vector<std::string>& seen() const { return seen_; }

 private:
  response keep(response r) {
    seen_.push_back(r.text);
    return r;
  }
  int port_;
  std::string token_;
  std::vector<std::string> seen_;
};

/// A usage key value of the right form that no core knows (for a fake core).
inline std::string random_usage_key() {
  std::array<uint8_t, 32> b{};
  crypto::random_bytes(b);
  return codec::base64::encode(b);
}

/// What a fake core answers to the trigger service's usage-key check (key_check.hpp): every key
/// is a usage key with execute on every group, and its one group lists `cids` and `pkps`.
inline void add_key_check_routes(httplib::Server& fake, std::vector<std::string> cids,
                                 std::vector<std::string> pkps = {}) {
  fake.Get("/core/v1/account", [](const httplib::Request& req, httplib::Response& res) {
    const json::object perms{{"can_create_groups", false},         {"can_delete_groups", false},
                             {"can_create_pkps", false},           {"manage_ipfs_ids_in_groups", json::array{}},
                             {"add_pkp_to_groups", json::array{}}, {"remove_pkp_from_groups", json::array{}},
                             {"execute_in_groups", json::array{0}}};
    const json::object body{
        {"api_key_hash", "0x" + std::string(64, '1')},
        {"admin_wallet_address", "0x" + std::string(40, '2')},
        {"managed", true},
        {"name", "fake"},
        {"description", ""},
        {"key", {{"kind", "usage"}, {"hash", keccak_hex(req.get_header_value("X-Api-Key"))}, {"permissions", perms}}}};
    res.set_content(json::serialize(body), "application/json");
  });
  fake.Get("/core/v1/list_groups", [cids, pkps](const httplib::Request&, httplib::Response& res) {
    json::array hashes, ids;
    for (const auto& c : cids)
      hashes.push_back(json::string(keccak_hex(c)));
    for (const auto& p : pkps)
      ids.push_back(json::string(p));
    const json::object g{{"group_id", 1},
                         {"name", "g"},
                         {"description", ""},
                         {"pkp_ids_permitted", ids},
                         {"cid_hashes_permitted", hashes}};
    res.set_content(
        json::serialize(json::object{{"items", json::array{g}}, {"page_number", 1}, {"page_size", 100}, {"total", 1}}),
        "application/json");
  });
}

/// A free loopback port (bound, then released).
inline int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  socklen_t len = sizeof a;
  const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
                  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0;
  ::close(fd);
  REQUIRE(ok);
  return ntohs(a.sin_port);
}

// --- the core side ---------------------------------------------------------------------------------

constexpr std::string_view kEchoCode = "Enact.setResponse(params.event);\n";
constexpr std::string_view kTrivialCode = "Enact.setResponse({ok: true});\n";

/// An account with credits, actions uploaded, a group allowing them and a usage key with execute
/// in it.
struct core_side {
  account_keys acct;
  std::map<std::string, std::string> cids;  // code → CID
  usage_keys key;
};

inline core_side setup_core(http_client& c, const std::vector<std::string_view>& codes, uint64_t cents) {
  core_side out;
  out.acct = create_account(c, "triggers");
  buy_credits(c, out.acct.auth(), cents);
  json::array hashes;
  for (const auto code : codes) {
    const response r = c.post("/upload_action", json::object{{"code", code}}, out.acct.auth());
    ITEST_REQUIRE_STATUS(r, 200);
    out.cids[std::string(code)] = s_of(r.body, "action_ipfs_cid");
    hashes.push_back(json::string(s_of(r.body, "hashed_cid")));
  }
  const response g =
      c.post("/add_group", json::object{{"name", "g"}, {"cid_hashes_permitted", hashes}}, out.acct.auth());
  ITEST_REQUIRE_STATUS(g, 200);
  out.key =
      create_usage_key(c, out.acct.auth(), json::object{{"execute_in_groups", json::array{u_of(g.body, "group_id")}}});
  return out;
}

inline json::object webhook_body(const std::string& cid, const std::string& key, const std::string& name = "hook") {
  return json::object{{"type", "webhook"}, {"name", name}, {"action_ipfs_cid", cid}, {"usage_api_key", key}};
}

/// Polls the run until it is success or failed (at most `timeout`).
inline json::object await_run(api_user& u, const std::string& run_id, std::chrono::seconds timeout = 30s) {
  const auto deadline = steady::now() + timeout;
  for (;;) {
    const response r = u.get("/api/runs/" + run_id);
    REQUIRE_MESSAGE(r.status == 200, r.describe());
    const std::string status = s_of(r.body, "status");
    if (status == "success" || status == "failed" || steady::now() > deadline)
      return r.obj();
    std::this_thread::sleep_for(20ms);
  }
}

inline std::string file_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

/// The trigger store's files, main file and WAL.
inline std::string store_bytes(const std::string& data_dir) {
  return file_text(data_dir + "/triggers.sqlite") + file_text(data_dir + "/triggers.sqlite-wal");
}

}  // namespace enact::itest
