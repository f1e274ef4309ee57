// SPDX-License-Identifier: Apache-2.0
// Attacks on the trigger service's rules (docs/protocol.md §4), tried over HTTP against a real enact-server
// on loopback, each as an attacker would try it:
//  (a) sign-in with an EIP-4361 message naming another site, sent with a Host header naming that
//      site (a message a wallet signed for evil.example, replayed here); and a start on a
//      non-loopback address without a public URL, where sign-in would have no domain to trust;
//  (b) a trigger holding the account key (which could then do anything on the account's behalf);
//  (c) a trigger with a usage key that may not execute the action, or not with the named PKP,
//      created or changed into one — refused then, not a failed run later;
//  (d) one webhook flooded beyond its max_runs_per_minute and its max_queued_runs;
//  (e) an X-Wallet-Auth header (the core's wallet-signed credential) sent to a webhook, to reach
//      the action's params (and from there anyone who can read the run);
//  (f) one user creating more triggers than the service allows one user, from many connections
//      at once;
//  (g) one user creating triggers as fast as the service answers;
//  (h) schedules of an account with no credits, left to fail every 30 s;
//  (i) run history left to grow, on a server with no retention setting.
// (f) to (i) are the rules of docs/protocol.md §4 "Limits".
#include <doctest/doctest.h>

#include <dlfcn.h>
#include <sqlite3.h>

#include <atomic>
#include <chrono>
#include <ctime>
#include <fstream>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "enact/codec/hex.hpp"
#include "enact/address.hpp"
#include "enact/crypto/eip191.hpp"
#include "enact/crypto/secp256k1.hpp"
#include "enact/secret.hpp"
#include "server_process.hpp"
#include "steps.hpp"

namespace enact::itest {
namespace {

/// An account with an action in a group with a PKP, and a usage key for each case.
struct core_side {
  account_keys acct;
  std::string cid;        // in group g
  std::string other_cid;  // uploaded, in no group the keys may execute in
  std::string pkp;        // in group g
  std::string stray_pkp;  // of the account, in no group
  usage_keys runner;      // execute on g
  usage_keys idle;        // no permission at all
};

core_side setup_core(http_client& c) {
  core_side out;
  out.acct = create_account(c, "victim");
  const auto upload = [&](std::string_view code) {
    const response r = c.post("/upload_action", json::object{{"code", code}}, out.acct.auth());
    ITEST_REQUIRE_STATUS(r, 200);
    return std::pair{s_of(r.body, "action_ipfs_cid"), s_of(r.body, "hashed_cid")};
  };
  const auto [cid, hashed] = upload("Enact.setResponse(params);\n");
  out.cid = cid;
  out.other_cid = upload("Enact.setResponse('other');\n").first;
  const auto wallet = [&](const std::string& name) {
    const response w = c.post("/create_wallet", json::object{{"name", name}}, out.acct.auth());
    ITEST_REQUIRE_STATUS(w, 200);
    return s_of(w.body, "pkp_id");
  };
  out.pkp = wallet("signer");
  out.stray_pkp = wallet("treasury");
  const response g = c.post("/add_group",
                            json::object{{"name", "g"},
                                         {"cid_hashes_permitted", json::array{json::string(hashed)}},
                                         {"pkp_ids_permitted", json::array{json::string(out.pkp)}}},
                            out.acct.auth());
  ITEST_REQUIRE_STATUS(g, 200);
  out.runner =
      create_usage_key(c, out.acct.auth(), json::object{{"execute_in_groups", json::array{u_of(g.body, "group_id")}}});
  out.idle = create_usage_key(c, out.acct.auth());
  return out;
}

/// mallory's token and a server without trigger workers (runs stay queued, as behind a slow or
/// saturated core) on the core side of setup_core.
struct attack_setup {
  temp_dir dir;
  std::string token = issue_token(dir.path() + "/data", "mallory");
  server_process srv{{"--dev", "--trigger-workers", "0"}, dir.path() + "/data"};
  http_client c = srv.client();
  core_side core = setup_core(c);
  httplib::Headers auth = bearer(token);
};

json::object webhook(const std::string& cid, const std::string& key) {
  return json::object{{"type", "webhook"}, {"name", "hook"}, {"action_ipfs_cid", cid}, {"usage_api_key", key}};
}

std::string siwe(std::string_view domain, const std::string& account, const std::string& nonce) {
  return std::string(domain) + " wants you to sign in with your Ethereum account:\n" + account +
         "\n\nSign in.\n\nURI: http://" + std::string(domain) +
         "/auth/authorize\nVersion: 1\nChain ID: 1\nNonce: " + nonce + "\nIssued At: " + [] {
           const std::time_t now = std::time(nullptr);
           std::tm utc{};
           gmtime_r(&now, &utc);
           char out[32];
           std::strftime(out, sizeof out, "%Y-%m-%dT%H:%M:%SZ", &utc);
           return std::string(out);
         }();
}

/// The setting of the trigger attacks (f) to (i): enact-server --dev, with `[triggers]` settings
/// `config` (TOML lines; none: the defaults), on an account with no credits, its action in a
/// group, a usage key that may run it, and bearer tokens of mallory and alice.
struct limits_setup {
  temp_dir dir;
  std::string data = dir.path() + "/data";
  std::string token = issue_token(data, "mallory");
  std::string alice_token = issue_token(data, "alice");
  std::vector<std::string> flags{"--dev"};
  std::optional<server_process> srv;
  std::string cid;
  usage_keys runner;

  explicit limits_setup(const std::string& config = {}) {
    if (!config.empty()) {
      const std::string path = dir.path() + "/enact.toml";
      std::ofstream(path) << "[triggers]\n" << config;
      flags.insert(flags.end(), {"--config", path});
    }
    start();
  }

  /// Starts the server (again, on the same data directory).
  void start() {
    srv.emplace(flags, data);
    if (!cid.empty())
      return;
    http_client c = srv->client();
    const account_keys acct = create_account(c, "broke");
    const response up = c.post("/upload_action", json::object{{"code", "Enact.setResponse(params);\n"}}, acct.auth());
    ITEST_REQUIRE_STATUS(up, 200);
    cid = s_of(up.body, "action_ipfs_cid");
    const response g = c.post(
        "/add_group",
        json::object{{"name", "g"}, {"cid_hashes_permitted", json::array{json::string(s_of(up.body, "hashed_cid"))}}},
        acct.auth());
    ITEST_REQUIRE_STATUS(g, 200);
    runner =
        create_usage_key(c, acct.auth(), json::object{{"execute_in_groups", json::array{u_of(g.body, "group_id")}}});
  }
  response api(const std::string& method, const std::string& path, const json::value& body = nullptr,
               const std::string& who = {}) const {
    return call(srv->port(), method, path, body.is_null() ? std::string() : json::serialize(body),
                bearer(who.empty() ? token : who));
  }
  response create(const json::object& body, const std::string& who = {}) const {
    return api("POST", "/api/triggers", body, who);
  }
};

/// Polls `done` every 250 ms until it holds or `limit` passes; whether it held.
template <class F>
bool eventually(F done, std::chrono::seconds limit) {
  const auto until = std::chrono::steady_clock::now() + limit;
  for (;;) {
    if (done())
      return true;
    if (std::chrono::steady_clock::now() > until)
      return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
}

/// Runs `sql` on the SQLite file `path` while no server has it open. The test binary is not linked
/// with SQLite, so the library the server runs on is loaded for the call (sqlite3.h for its types).
void exec_sqlite(const std::string& path, const std::string& sql) {
  void* lib = dlopen("libsqlite3.so.0", RTLD_NOW | RTLD_LOCAL);
  REQUIRE_MESSAGE(lib != nullptr, std::string(dlerror()));
  const auto sym = [&](const char* name) {
    void* f = dlsym(lib, name);
    REQUIRE_MESSAGE(f != nullptr, name);
    return f;
  };
  const auto open = reinterpret_cast<decltype(&sqlite3_open_v2)>(sym("sqlite3_open_v2"));
  const auto exec = reinterpret_cast<decltype(&sqlite3_exec)>(sym("sqlite3_exec"));
  const auto changes = reinterpret_cast<decltype(&sqlite3_changes)>(sym("sqlite3_changes"));
  const auto release = reinterpret_cast<decltype(&sqlite3_free)>(sym("sqlite3_free"));
  const auto close = reinterpret_cast<decltype(&sqlite3_close)>(sym("sqlite3_close"));
  sqlite3* db = nullptr;
  REQUIRE(open(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) == SQLITE_OK);
  char* err = nullptr;
  const int rc = exec(db, sql.c_str(), nullptr, nullptr, &err);
  CHECK_MESSAGE(rc == SQLITE_OK, (err != nullptr ? std::string(err) : std::string("sqlite3_exec failed")));
  CHECK(changes(db) == 1);
  release(err);
  close(db);
  dlclose(lib);
}

int64_t unix_ms_ago(std::chrono::hours h) {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch() - h).count();
}

}  // namespace

TEST_CASE("attack (a): sign-in with a message for another site and a forged Host header") {
  server_process srv({"--dev"});
  const Secret key(bytes(32, 0x42));
  const std::string account =
      to_checksum_address(crypto::secp256k1::to_address(crypto::secp256k1::public_key_of(key).value()));
  const auto sign = [&](const std::string& m) {
    return codec::hex::encode_prefixed(
        crypto::secp256k1::sign(crypto::personal_message_hash(m), key).value().to_bytes());
  };
  const auto nonce = [&] {
    const response n = call(srv.port(), "GET", "/auth/nonce");
    ITEST_REQUIRE_STATUS(n, 200);
    const std::string set = n.header("Set-Cookie");
    return std::pair{set.substr(set.find('=') + 1, set.find(';') - set.find('=') - 1), s_of(n.body, "nonce")};
  };
  const auto sign_in = [&](const std::string& cookie, const std::string& m, const std::string& host) {
    httplib::Headers h{{"Cookie", "enact_session=" + cookie}};
    if (!host.empty())
      h.emplace("Host", host);
    return call(srv.port(), "POST", "/auth/sign-in",
                json::serialize(json::object{{"message", m}, {"signature", sign(m)}}), h);
  };

  auto [cookie, n] = nonce();
  const response forged = sign_in(cookie, siwe("evil.example", account, n), "evil.example");
  CHECK(forged.status == 401);
  CHECK(forged.error_code() == "signature_invalid");
  CHECK(!forged.has_header("Set-Cookie"));
  // A Host header naming this service does not make a message for another site valid either.
  const response forged2 = sign_in(cookie, siwe("evil.example", account, n), "127.0.0.1:" + std::to_string(srv.port()));
  CHECK(forged2.status == 401);
  // The message for this service's loopback address signs in (the nonce was not used up).
  const response good = sign_in(cookie, siwe("127.0.0.1:" + std::to_string(srv.port()), account, n), "");
  CHECK(good.status == 200);

  // Without a public URL, a trigger service reachable from elsewhere would have no domain to
  // check sign-ins against: it does not start.
  temp_dir data;
  const finished_run refused =
      run_to_exit({"--listen", "0.0.0.0:0", "--data-dir", data.path(), "--log-level", "debug"});
  CHECK(!refused.status.clean());
  CHECK(refused.status.exited);
  CHECK(refused.stderr_text.find("--triggers-public-url") != std::string::npos);
  keep_for_secret_scan({"--listen", "0.0.0.0:0"}, refused.stdout_text, refused.stderr_text, data.path());
}

TEST_CASE("attacks (b), (c): a trigger holding the account key, or a key that cannot run it") {
  attack_setup setup;
  auto& [dir, token, srv, c, core, auth] = setup;
  const auto create = [&](const json::object& body) {
    return call(srv.port(), "POST", "/api/triggers", json::serialize(body), auth);
  };

  // (b) The account key.
  const response acct = create(webhook(core.cid, core.acct.api_key));
  CHECK(acct.status == 400);
  CHECK(acct.error_code() == "invalid_request");
  CHECK(acct.error_message().find("account key may not be stored in a trigger") != std::string::npos);

  // (c) A usage key without execute, one with execute but not on this action, and one with the
  // action but a PKP its group does not list.
  const response idle = create(webhook(core.cid, core.idle.value));
  CHECK(idle.status == 403);
  CHECK(idle.error_code() == "forbidden");
  const response other = create(webhook(core.other_cid, core.runner.value));
  CHECK(other.status == 403);
  json::object stray = webhook(core.cid, core.runner.value);
  stray["pkp_id"] = core.stray_pkp;
  const response pkp = create(stray);
  CHECK(pkp.status == 403);
  CHECK(pkp.error_message().find(core.stray_pkp) != std::string::npos);
  // A key the core does not know.
  const response unknown = create(webhook(core.cid, "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="));
  CHECK(unknown.status == 400);

  // The right key, with the right PKP, is accepted; changing it afterwards into any of the above
  // is refused the same way.
  json::object good = webhook(core.cid, core.runner.value);
  good["pkp_id"] = core.pkp;
  const response made = create(good);
  ITEST_REQUIRE_STATUS(made, 201);
  const std::string path = "/api/triggers/" + s_of(made.body, "id");
  const auto patch = [&](const json::object& body) {
    return call(srv.port(), "PATCH", path, json::serialize(body), auth);
  };
  CHECK(patch(json::object{{"usage_api_key", core.acct.api_key}}).status == 400);
  CHECK(patch(json::object{{"usage_api_key", core.idle.value}}).status == 403);
  CHECK(patch(json::object{{"action_ipfs_cid", core.other_cid}}).status == 403);
  CHECK(patch(json::object{{"pkp_id", core.stray_pkp}}).status == 403);
  CHECK(patch(json::object{{"name", "renamed"}}).status == 200);  // nothing the check covers
  const response now = call(srv.port(), "GET", path, {}, auth);
  CHECK(s_of(now.body, "usage_api_key_hash") == keccak_hex(core.runner.value));
  CHECK(s_of(now.body, "action_ipfs_cid") == core.cid);
  CHECK(s_of(now.body, "pkp_id") == core.pkp);
  const response listed = call(srv.port(), "GET", "/api/triggers", {}, auth);
  CHECK(u_of(listed.body, "total") == 1);  // nothing of the refused ones was stored
  srv.stop();
  check_no_secret_logged(srv, {core.acct.api_key, core.runner.value, core.idle.value, token});
}

TEST_CASE("attacks (d), (e): a flooded webhook, and an X-Wallet-Auth header for the action") {
  attack_setup setup;
  auto& [dir, token, srv, c, core, auth] = setup;
  const auto make = [&](json::object body) {
    const response r = call(srv.port(), "POST", "/api/triggers", json::serialize(body), auth);
    ITEST_REQUIRE_STATUS(r, 201);
    return s_of(r.body, "id");
  };

  // Defaults, and bad limits.
  {
    const response d =
        call(srv.port(), "POST", "/api/triggers", json::serialize(webhook(core.cid, core.runner.value)), auth);
    ITEST_REQUIRE_STATUS(d, 201);
    CHECK(u_of(d.body, "max_runs_per_minute") == 60);
    CHECK(u_of(d.body, "max_queued_runs") == 100);
    for (const json::value& bad :
         {json::value(0), json::value(-1), json::value(1.5), json::value("5"), json::value(1000000000)}) {
      json::object b = webhook(core.cid, core.runner.value);
      b["max_queued_runs"] = bad;
      const response r = call(srv.port(), "POST", "/api/triggers", json::serialize(b), auth);
      CHECK(r.status == 400);
      CHECK(r.error_message().find("max_queued_runs") != std::string::npos);
    }
  }

  // max_runs_per_minute: 5 runs a minute, then 429 with Retry-After (at most the rest of the
  // minute). The minute may turn during the flood: then at most 10 pass.
  json::object per_minute = webhook(core.cid, core.runner.value);
  per_minute["max_runs_per_minute"] = 5;
  const std::string fast = make(per_minute);
  int accepted = 0, limited = 0;
  for (int i = 0; i < 20; ++i) {
    const response r = call(srv.port(), "POST", "/webhook/" + fast, "{}");
    if (r.status == 202) {
      ++accepted;
    } else {
      CHECK(r.status == 429);
      CHECK(r.error_code() == "rate_limited");
      const int wait = std::stoi(r.header("Retry-After"));
      CHECK(wait >= 1);
      CHECK(wait <= 60);
      ++limited;
    }
  }
  CHECK(accepted >= 5);
  CHECK(accepted <= 10);
  CHECK(limited >= 10);
  const response runs = call(srv.port(), "GET", "/api/triggers/" + fast + "/runs", {}, auth);
  CHECK(u_of(runs.body, "total") == static_cast<uint64_t>(accepted));  // refusals store nothing

  // max_queued_runs: 3 waiting, then 429 until one ends.
  json::object queued = webhook(core.cid, core.runner.value);
  queued["max_queued_runs"] = 3;
  const std::string slow = make(queued);
  for (int i = 0; i < 3; ++i)
    ITEST_CHECK_STATUS(call(srv.port(), "POST", "/webhook/" + slow, "{}"), 202);
  const response full = call(srv.port(), "POST", "/webhook/" + slow, "{}");
  CHECK(full.status == 429);
  CHECK(full.error_code() == "rate_limited");
  CHECK(full.has_header("Retry-After"));
  CHECK(full.error_message().find("max_queued_runs") != std::string::npos);

  // (e) X-Wallet-Auth never reaches the action, nor do the other credentials.
  const std::string hook = make(webhook(core.cid, core.runner.value));
  const response sent = call(srv.port(), "POST", "/webhook/" + hook, R"({"x": 1})",
                             {{"X-Wallet-Auth", "eyJ0eXBlZF9kYXRhIjp7fX0="},
                              {"X-Api-Key", core.acct.api_key},
                              {"X-Hub-Signature-256", "sha256=00"}});
  ITEST_REQUIRE_STATUS(sent, 202);
  const response run = call(srv.port(), "GET", "/api/runs/" + s_of(sent.body, "run_id"), {}, auth);
  ITEST_REQUIRE_STATUS(run, 200);
  const json::object& headers = run.obj().at("params").at("headers").as_object();
  CHECK(!headers.contains("x-wallet-auth"));
  CHECK(!headers.contains("x-api-key"));
  CHECK(headers.contains("x-hub-signature-256"));  // what a sender signs with still passes
  CHECK(run.text.find("eyJ0eXBlZF9kYXRhIjp7fX0=") == std::string::npos);
  srv.stop();
}

json::object schedule(const std::string& cid, const std::string& key, const std::string& cron) {
  return json::object{{"type", "schedule"},
                      {"name", "tick"},
                      {"action_ipfs_cid", cid},
                      {"usage_api_key", key},
                      {"config", {{"cron", cron}}}};
}

TEST_CASE("attack (f): more triggers than one user may have, created from many connections at once") {
  limits_setup setup("max_triggers_per_user = 5\ncreations_per_minute = 0\n");
  // 24 creations from 8 connections at once: the service counts them one at a time.
  std::atomic<int> made{0}, refused{0}, other{0};
  std::vector<std::string> messages;
  std::mutex mu;
  std::vector<std::thread> threads;
  for (int k = 0; k < 8; ++k)
    threads.emplace_back([&, k] {
      for (int i = 0; i < 3; ++i) {
        const response r = setup.create((k + i) % 2 == 0 ? webhook(setup.cid, setup.runner.value)
                                                         : schedule(setup.cid, setup.runner.value, "0 0 * * *"));
        if (r.status == 201) {
          ++made;
        } else if (r.status == 403 && r.error_code() == "forbidden") {
          ++refused;
          std::lock_guard lock(mu);
          messages.push_back(r.error_message());
        } else {
          ++other;
        }
      }
    });
  for (auto& t : threads)
    t.join();
  CHECK(made.load() == 5);
  CHECK(refused.load() == 19);
  CHECK(other.load() == 0);
  for (const auto& m : messages) {
    CHECK(m.find("has 5 triggers") != std::string::npos);
    CHECK(m.find("max_triggers_per_user") != std::string::npos);
  }
  const response mine = setup.api("GET", "/api/triggers");
  ITEST_REQUIRE_STATUS(mine, 200);
  CHECK(u_of(mine.body, "total") == 5);
  // Per user: alice is not held up by mallory's triggers.
  ITEST_CHECK_STATUS(setup.create(webhook(setup.cid, setup.runner.value), setup.alice_token), 201);
  // Deleting one makes room for one.
  const std::string first = s_of(mine.obj().at("items").as_array().at(0), "id");
  ITEST_CHECK_STATUS(setup.api("DELETE", "/api/triggers/" + first), 204);
  ITEST_CHECK_STATUS(setup.create(webhook(setup.cid, setup.runner.value)), 201);
  const response full = setup.create(webhook(setup.cid, setup.runner.value));
  CHECK(full.status == 403);
  CHECK(u_of(setup.api("GET", "/api/triggers").body, "total") == 5);
  setup.srv->stop();
  check_no_secret_logged(*setup.srv, {setup.runner.value, setup.token, setup.alice_token});
}

TEST_CASE("attack (g): one user creating triggers as fast as the service answers") {
  limits_setup setup;  // the defaults: 20 a minute
  int accepted = 0, limited = 0, wait = 0;
  for (int i = 0; i < 30; ++i) {
    const response r = setup.create(webhook(setup.cid, setup.runner.value));
    if (r.status == 201) {
      ++accepted;
      continue;
    }
    CHECK(r.status == 429);
    CHECK(r.error_code() == "rate_limited");
    CHECK(r.error_message().find("creations_per_minute") != std::string::npos);
    REQUIRE(r.has_header("Retry-After"));
    wait = std::stoi(r.header("Retry-After"));
    CHECK(wait >= 1);
    CHECK(wait <= 3);  // one creation every 3 s
    ++limited;
  }
  // A minute's worth at once; one more may have come in while the others were checked.
  CHECK(accepted >= 20);
  CHECK(accepted <= 21);
  CHECK(limited == 30 - accepted);
  CHECK(u_of(setup.api("GET", "/api/triggers").body, "total") == static_cast<uint64_t>(accepted));
  // Per user: alice creates at once.
  ITEST_CHECK_STATUS(setup.create(webhook(setup.cid, setup.runner.value), setup.alice_token), 201);
  // Once the Retry-After has passed, mallory creates one more.
  if (limited > 0) {
    std::this_thread::sleep_for(std::chrono::seconds(wait));
    ITEST_CHECK_STATUS(setup.create(webhook(setup.cid, setup.runner.value)), 201);
  }
  setup.srv->stop();
}

TEST_CASE("attack (h): a schedule of an account with no credits, left to fail") {
  limits_setup setup("disable_after_credit_failures = 2\n");
  // Every 30 s (the shortest interval accepted), from a few seconds from now, so that two
  // firings take about 35 s instead of up to a minute.
  const auto second = static_cast<int>(std::time(nullptr) % 60);
  const int a = (second + 4) % 60, b = (a + 30) % 60;
  const std::string cron = std::to_string(std::min(a, b)) + "," + std::to_string(std::max(a, b)) + " * * * * *";
  const response made = setup.create(schedule(setup.cid, setup.runner.value, cron));
  ITEST_REQUIRE_STATUS(made, 201);
  CHECK(!made.obj().contains("disabled_reason"));
  const std::string path = "/api/triggers/" + s_of(made.body, "id");
  response now;
  const bool disabled = eventually(
      [&] {
        now = setup.api("GET", path);
        return now.status == 200 && !now.obj().at("enabled").as_bool();
      },
      std::chrono::seconds(80));
  CHECK(disabled);
  ITEST_REQUIRE_STATUS(now, 200);
  // The owner sees why, on the trigger and in the list.
  REQUIRE(now.obj().contains("disabled_reason"));
  const std::string reason = s_of(now.body, "disabled_reason");
  CHECK(reason.find("2 runs in a row failed with insufficient_credits") != std::string::npos);
  const response listed = setup.api("GET", "/api/triggers");
  CHECK(s_of(listed.obj().at("items").as_array().at(0), "disabled_reason") == reason);
  // Two runs, each refused by the core for lack of credits, attempted once.
  const response runs = setup.api("GET", path + "/runs");
  ITEST_REQUIRE_STATUS(runs, 200);
  CHECK(u_of(runs.body, "total") == 2);
  for (const auto& r : runs.obj().at("items").as_array()) {
    CHECK(s_of(r, "status") == "failed");
    CHECK(s_of(r.at("error"), "code") == "insufficient_credits");
    CHECK(u_of(r, "attempts") == 1);
  }
  // Enabled again by its owner: the reason goes.
  const response on = setup.api("PATCH", path, json::object{{"enabled", true}});
  ITEST_REQUIRE_STATUS(on, 200);
  CHECK(on.obj().at("enabled").as_bool());
  CHECK(!on.obj().contains("disabled_reason"));
  CHECK(!setup.api("GET", path).obj().contains("disabled_reason"));
  ITEST_CHECK_STATUS(setup.api("DELETE", path), 204);
  setup.srv->stop();
  check_no_secret_logged(*setup.srv, {setup.runner.value, setup.token});
}

TEST_CASE("attack (i): run history kept forever by a server with no retention setting") {
  limits_setup setup;  // the defaults: 30 days
  const response made = setup.create(webhook(setup.cid, setup.runner.value));
  ITEST_REQUIRE_STATUS(made, 201);
  const std::string id = s_of(made.body, "id");
  std::vector<std::string> runs;
  for (int i = 0; i < 2; ++i) {
    const response fired = call(setup.srv->port(), "POST", "/webhook/" + id, "{}");
    ITEST_REQUIRE_STATUS(fired, 202);
    runs.push_back(s_of(fired.body, "run_id"));
  }
  for (const auto& run_id : runs)
    CHECK(eventually(
        [&] {
          const response r = setup.api("GET", "/api/runs/" + run_id);
          return r.status == 200 && r.obj().contains("finished_at");
        },
        std::chrono::seconds(30)));
  // The first run finished 31 days ago, the second 29; the server starts again, with no setting.
  setup.srv->stop();
  const std::string db = setup.data + "/triggers.sqlite";
  const auto finished = [&](const std::string& run_id, int days_ago) {
    const std::string at = std::to_string(unix_ms_ago(std::chrono::hours(24 * days_ago)));
    exec_sqlite(db, "UPDATE runs SET queued_at = " + at + ", started_at = " + at + ", finished_at = " + at +
                        " WHERE id = '" + run_id + "'");
  };
  finished(runs[0], 31);
  finished(runs[1], 29);
  setup.start();
  CHECK(eventually([&] { return setup.api("GET", "/api/runs/" + runs[0]).status == 404; }, std::chrono::seconds(10)));
  ITEST_CHECK_STATUS(setup.api("GET", "/api/runs/" + runs[1]), 200);
  CHECK(u_of(setup.api("GET", "/api/triggers/" + id + "/runs").body, "total") == 1);
  setup.srv->stop();
}

}  // namespace enact::itest
