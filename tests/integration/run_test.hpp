// SPDX-License-Identifier: Apache-2.0
// POST /core/v1/run_action against the real server (docs/protocol.md §2 "Running an action",
// docs/actions.md): what the capability calls return (signatures that recover to the PKP and
// equal the SDK's own derivation from the data directory's root key, EIP-191, addresses,
// AES-GCM that only the sealing PKP opens), the PKPs a run may use, every rule of the execution
// check (refused before a worker is handed anything and before a credit is charged), the
// failure kinds of the sandbox while good runs go on beside them, a worker killed mid-run, the
// confinement of the worker processes as /proc shows it, that no key byte reaches a response or
// the log, and code fetched from an IPFS gateway (verified against its CID, then kept).
//
// Shared by the run_*_test.cpp files of integration.run: action code, requests, worker processes.
#pragma once

#include <doctest/doctest.h>
#include <signal.h>
#include <sys/types.h>

#include <cctype>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>
#include <tuple>

#include "enact/crypto/aes_gcm.hpp"
#include "enact/crypto/eip191.hpp"
#include "steps.hpp"

namespace enact::itest {

using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

constexpr std::string_view kRunRoute = "/core/v1/run_action";

// --- actions -------------------------------------------------------------------------------------

// Signs params.digest as "main", personal-signs params.message and reads the address.
constexpr std::string_view kSignCode =
    "var sig = Enact.signEcdsa({pkpId: params.pkp, digest: params.digest, name: \"main\"});\n"
    "var personal = Enact.signMessage({pkpId: params.pkp, message: params.message});\n"
    "Enact.setResponse({sig: sig, personal: personal,\n"
    "                   address: Enact.getAddress({pkpId: params.pkp})});\n";

// Seals with PKP a and opens it again; tries to open a ciphertext of PKP b with a, and an
// altered ciphertext; tries each capability on PKP c (not allowed in the run). Every error the
// action catches is returned as its message.
constexpr std::string_view kCryptoCode = R"(function attempt(f) {
  try { return {ok: f()}; } catch (e) { return {error: String(e.message)}; }
}
var sealed = Enact.encrypt({pkpId: params.a, plaintext: params.text});
var other = Enact.encrypt({pkpId: params.b, plaintext: params.text});
var last = sealed.slice(-2) === "00" ? "01" : "00";
Enact.setResponse({
  sealed: sealed,
  other: other,
  opened: Enact.decrypt({pkpId: params.a, ciphertext: sealed}),
  opened_by_b: Enact.decrypt({pkpId: params.b, ciphertext: other}),
  cross: attempt(function () { return Enact.decrypt({pkpId: params.a, ciphertext: other}); }),
  altered: attempt(function () {
    return Enact.decrypt({pkpId: params.a, ciphertext: sealed.slice(0, -2) + last});
  }),
  outsider_address: attempt(function () { return Enact.getAddress({pkpId: params.c}); }),
  outsider_sign: attempt(function () {
    return Enact.signEcdsa({pkpId: params.c, digest: "0x" + "11".repeat(32), name: "x"});
  }),
  outsider_encrypt: attempt(function () {
    return Enact.encrypt({pkpId: params.c, plaintext: "x"});
  })
});
)";

constexpr std::string_view kGoodCode = "Enact.setResponse({ok: params.x + 1});\n";

constexpr std::string_view kLoopCode = "while (true) {}\n";

/// The run budget (core/credits.hpp run_budget) of a server without an IPFS gateway whose run
/// wall time is `wall`: queue wait 5 s + wall time + kill grace 1 s + margin 30 s. A run's credit
/// hold and its Idempotency-Key lease last that long.
inline std::chrono::seconds run_budget_for(std::chrono::seconds wall) {
  return std::chrono::seconds(5) + wall + std::chrono::seconds(1) + std::chrono::seconds(30);
}
constexpr std::string_view kMemoryCode =
    "var big = new Uint8Array(1024 * 1024 * 1024);\nEnact.setResponse(big.length);\n";
constexpr std::string_view kOutputCode = "Enact.setResponse(\"x\".repeat(10 * 1024 * 1024));\n";
constexpr std::string_view kRecursionCode = "function down(n) { return down(n + 1) + 1; }\ndown(0);\n";

// --- requests ------------------------------------------------------------------------------------

/// A PKP as /create_wallet answered it.
struct wallet {
  std::string pkp_id;
  std::string path;  // derivation_path, 0x-hex
};

inline wallet create_wallet(http_client& c, const httplib::Headers& auth, const std::string& name) {
  const response r = c.post("/create_wallet", json::object{{"name", name}}, auth);
  ITEST_REQUIRE_STATUS(r, 200);
  return wallet{s_of(r.body, "pkp_id"), s_of(r.body, "derivation_path")};
}

/// Code stored with /upload_action.
struct stored_action {
  std::string cid;
  std::string hashed;
};

inline stored_action upload(http_client& c, const httplib::Headers& auth, std::string_view code) {
  const response r = c.post("/upload_action", json::object{{"code", code}}, auth);
  ITEST_REQUIRE_STATUS(r, 200);
  const stored_action a{s_of(r.body, "action_ipfs_cid"), s_of(r.body, "hashed_cid")};
  REQUIRE(a.cid == cid_of_code(code));
  REQUIRE(a.hashed == hashed_cid_hex(a.cid));
  return a;
}

inline uint64_t add_group(http_client& c, const httplib::Headers& auth, const std::string& name,
                          const std::vector<std::string>& pkps, const std::vector<std::string>& cid_hashes) {
  json::array p, h;
  for (const auto& x : pkps)
    p.push_back(json::string(x));
  for (const auto& x : cid_hashes)
    h.push_back(json::string(x));
  const response r =
      c.post("/add_group", json::object{{"name", name}, {"pkp_ids_permitted", p}, {"cid_hashes_permitted", h}}, auth);
  ITEST_REQUIRE_STATUS(r, 200);
  return u_of(r.body, "group_id");
}

/// A usage key whose only permission is execute in `groups`.
inline usage_keys executor_key(http_client& c, const httplib::Headers& owner, json::array groups) {
  return create_usage_key(c, owner, json::object{{"execute_in_groups", std::move(groups)}});
}

inline json::object by_cid(const std::string& cid, json::object params = {},
                           const std::optional<std::string>& pkp = std::nullopt) {
  json::object b{{"action_ipfs_cid", cid}, {"params", std::move(params)}};
  if (pkp)
    b["pkp_id"] = *pkp;
  return b;
}

inline json::object by_code(std::string_view code, json::object params = {}) {
  return json::object{{"code", code}, {"params", std::move(params)}};
}

inline response run(http_client& c, const httplib::Headers& auth, const json::object& body) {
  return c.post("/run_action", body, auth);
}

/// error.details of an action_failed answer (an empty object when absent).
inline json::object details_of(const response& r) {
  const auto* o = r.body.if_object();
  if (o == nullptr || !o->contains("error"))
    return {};
  const auto* d = o->at("error").as_object().if_contains("details");
  return d != nullptr && d->is_object() ? d->as_object() : json::object{};
}

inline std::string kind_of(const response& r) {
  const auto d = details_of(r);
  const auto* k = d.if_contains("kind");
  return k != nullptr && k->is_string() ? std::string(k->get_string()) : std::string();
}

/// The `sandbox_isolation` object of the server's "started" log line (written asynchronously,
/// so it may follow the banner by a moment).
inline json::object isolation_of(const server_process& srv) {
  const auto deadline = steady::now() + 10s;
  do {
    for (const auto& l : srv.log_lines())
      if (const auto* m = l.if_contains("msg"); m != nullptr && m->is_string() && m->get_string() == "started")
        return l.at("sandbox_isolation").as_object();
    std::this_thread::sleep_for(10ms);
  } while (steady::now() < deadline);
  FAIL("no started line in the server log");
  return {};
}

inline std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// --- worker processes ----------------------------------------------------------------------------

/// The fields of /proc/<pid>/stat after the command name, which may itself hold spaces and
/// parentheses: field 3 (state) is element 0.
inline std::optional<std::vector<std::string>> stat_fields(pid_t pid, std::string* comm = nullptr) {
  const std::string stat = read_text("/proc/" + std::to_string(pid) + "/stat");
  const auto open = stat.find('(');
  const auto close = stat.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close < open)
    return std::nullopt;
  if (comm != nullptr)
    *comm = stat.substr(open + 1, close - open - 1);
  std::istringstream in(stat.substr(close + 1));
  std::vector<std::string> out;
  for (std::string f; in >> f;)
    out.push_back(f);
  if (out.size() < 13)
    return std::nullopt;
  return out;
}

/// The enact-worker processes whose parent is `server` (found by scanning /proc/*/stat, which
/// needs no kernel option, unlike /proc/<pid>/task/*/children).
inline std::vector<pid_t> workers_of(pid_t server) {
  std::vector<pid_t> out;
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos)
      continue;
    const pid_t pid = std::atoi(name.c_str());
    std::string comm;
    const auto f = stat_fields(pid, &comm);
    if (f && std::atoi((*f)[1].c_str()) == server && comm == "enact-worker")
      out.push_back(pid);
  }
  std::sort(out.begin(), out.end());
  return out;
}

/// A line "Name:\tvalue" of /proc/<pid>/status, the value trimmed ("" when absent).
inline std::string status_field(pid_t pid, std::string_view name) {
  std::istringstream in(read_text("/proc/" + std::to_string(pid) + "/status"));
  for (std::string line; std::getline(in, line);) {
    if (line.size() > name.size() && line.compare(0, name.size(), name) == 0 && line[name.size()] == ':') {
      std::string v = line.substr(name.size() + 1);
      v.erase(0, v.find_first_not_of(" \t"));
      return v;
    }
  }
  return {};
}

/// How much a worker has done: its context switches and CPU ticks. An idle worker sleeps in
/// read(2) on its channel and none of these move; a worker handed a run moves at least its
/// context switches, and they never go back.
using activity = std::map<pid_t, std::tuple<uint64_t, uint64_t>>;

inline activity activity_of(pid_t server) {
  activity out;
  for (const pid_t w : workers_of(server)) {
    const auto f = stat_fields(w);
    if (!f)
      continue;
    const uint64_t ticks = std::strtoull((*f)[11].c_str(), nullptr, 10) +  // utime
                           std::strtoull((*f)[12].c_str(), nullptr, 10);   // stime
    const uint64_t switches = std::strtoull(status_field(w, "voluntary_ctxt_switches").c_str(), nullptr, 10) +
                              std::strtoull(status_field(w, "nonvoluntary_ctxt_switches").c_str(), nullptr, 10);
    out[w] = {switches, ticks};
  }
  return out;
}

/// The workers' activity once it stops moving (a worker that just answered may still be
/// tearing its heap down): two equal readings 100 ms apart, or the last reading after 10 s.
inline activity settled_activity(pid_t server) {
  activity last = activity_of(server);
  const auto deadline = steady::now() + 10s;
  while (steady::now() < deadline) {
    std::this_thread::sleep_for(100ms);
    activity now = activity_of(server);
    if (now == last)
      return now;
    last = std::move(now);
  }
  return last;
}

// --- secrets -------------------------------------------------------------------------------------

/// The data directory's TEE root key (32 bytes, docs/protocol.md §1): the test reads it to derive the
/// PKP keys the server should have used, and to check that no response or log line holds it.
inline Secret root_key_of(const server_process& srv) {
  const std::string raw = read_text(srv.data_dir() + "/tee-root.key");
  REQUIRE(raw.size() == 32);
  return Secret(as_bytes(std::string_view(raw)));
}

/// The forms a 32-byte key could leak in: hex (both cases, with and without 0x) and base64.
inline std::vector<std::string> leak_forms(bytes_view key) {
  std::string lower = codec::hex::encode(key);
  std::string upper = lower;
  for (auto& ch : upper)
    ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return {lower, upper, codec::base64::encode(key)};
}

/// A server on `data_dir` with `flags` (a run price of 500, one sandbox worker) killed while a run
/// of its only account holds all 500 credits: an endless loop, 400 ms into its wall time. A second
/// run is refused 402 while the first one holds the credits. What the restarted server is asked.
struct killed_mid_run {
  account_keys account;
  usage_keys executor;
  std::string good_cid;  // kGoodCode, in the executor's group
  steady::time_point held_at;
};
inline killed_mid_run kill_mid_run(const std::vector<std::string>& flags, const std::string& data_dir) {
  killed_mid_run out;
  server_process srv(flags, data_dir);
  http_client c = srv.client();
  out.account = create_account(c, "held");
  REQUIRE(buy_credits(c, out.account.auth(), 500) == 500);
  const stored_action loop = upload(c, out.account.auth(), kLoopCode);
  const stored_action good = upload(c, out.account.auth(), kGoodCode);
  out.good_cid = good.cid;
  const uint64_t g = add_group(c, out.account.auth(), "g", {}, {loop.hashed, good.hashed});
  out.executor = executor_key(c, out.account.auth(), json::array{g});
  out.held_at = steady::now();
  std::thread runner([&] {
    http_client own("127.0.0.1", srv.port());
    (void)run(own, out.executor.auth(), by_cid(loop.cid));
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  check_error_shape(run(c, out.executor.auth(), by_cid(out.good_cid, json::object{{"x", 1}})), 402,
                    "insufficient_credits");
  REQUIRE(::kill(srv.pid(), SIGKILL) == 0);
  runner.join();
  (void)srv.stop();
  return out;
}

}  // namespace enact::itest
