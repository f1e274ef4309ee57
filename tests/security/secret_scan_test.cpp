// SPDX-License-Identifier: Apache-2.0
// Secret hygiene (docs/security.md "Secret hygiene scan"): secrets are never printed, logged,
// returned twice or stored in the clear.
//
// Dynamic part: enact-server --dev --log-level debug on a fresh data directory, its stdout and
// stderr captured to files; flows that create secrets (an account master key, usage keys, PKP
// wallets, a signing action run, a trigger holding a usage key, the trigger API's bearer token);
// then every form of every secret (text, hex, 0x-hex, base64, base64url, raw bytes, and a 16-
// character prefix of each text form) is searched for in
//   - the server's stdout and stderr (after it stopped, so the logs are complete),
//   - every response body after the one that handed the secret out (list and get endpoints),
//   - every file of the data directory, raw bytes, SQLite files and their WAL included, except
//     the TEE root key where it is kept (tee-root.key).
// The secrets the test can know: API key values (from the answers), the trigger token (from
// `enact-server issue-token`), the simulated TEE's root key (read from the data directory) and the
// PKP private keys derived from it by docs/protocol.md §1 (checked against the wallet addresses served).
//
// Static part: every logging or printing call in server/ whose arguments name a variable like
// key / secret / token / seed / password / mnemonic / private fails the test unless listed in
// kReviewed (each entry reviewed: it logs a hash, a count or an identifier, not the value).
#include <doctest/doctest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "enact/codec/base64.hpp"
#include "enact/codec/hex.hpp"
#include "enact/pkp/pkp.hpp"
#include "secret_forms.hpp"
#include "steps.hpp"

namespace enact::itest {
namespace {

namespace fs = std::filesystem;
using steady = std::chrono::steady_clock;

/// enact-server with stdout and stderr each going to a file (the fixture of tests/integration
/// reads stdout only up to its banner).
class captured_server {
 public:
  captured_server(const std::string& data_dir, std::vector<std::string> flags)
      : out_path_(logs_.path() + "/stdout"), err_path_(logs_.path() + "/stderr") {
    std::vector<std::string> args = {server_binary(), "--listen", "127.0.0.1:0", "--data-dir", data_dir};
    args.insert(args.end(), flags.begin(), flags.end());
    std::vector<char*> argv;
    for (auto& a : args)
      argv.push_back(a.data());
    argv.push_back(nullptr);
    const int out = ::open(out_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    const int err = ::open(err_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    REQUIRE(out >= 0);
    REQUIRE(err >= 0);
    pid_ = ::fork();
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGTERM);
      ::dup2(out, 1);
      ::dup2(err, 2);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    ::close(out);
    ::close(err);
    const auto deadline = steady::now() + std::chrono::seconds(30);
    const std::string marker = "listening on http://127.0.0.1:";
    while (steady::now() < deadline) {
      const std::string text = slurp(out_path_);
      if (const size_t at = text.find(marker); at != std::string::npos && text.find('\n', at) != std::string::npos) {
        port_ = std::stoi(text.substr(at + marker.size()));
        return;
      }
      int st = 0;
      if (::waitpid(pid_, &st, WNOHANG) == pid_) {
        pid_ = -1;
        FAIL("enact-server exited: " << slurp(err_path_));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    FAIL("enact-server printed no banner: " << slurp(err_path_));
  }
  ~captured_server() { stop(); }

  /// SIGTERM and wait: the logs are complete afterwards.
  void stop() {
    if (pid_ <= 0)
      return;
    ::kill(pid_, SIGTERM);
    int st = 0;
    ::waitpid(pid_, &st, 0);
    pid_ = -1;
  }
  [[nodiscard]] http_client client() const { return http_client("127.0.0.1", port_); }
  [[nodiscard]] int port() const { return port_; }
  [[nodiscard]] std::string out() const { return slurp(out_path_); }
  [[nodiscard]] std::string err() const { return slurp(err_path_); }

 private:
  temp_dir logs_;
  std::string out_path_, err_path_;
  pid_t pid_ = -1;
  int port_ = 0;
};

/// Where `haystack` shows any form of any secret: "<secret> in <where>" per hit.
void scan(const std::vector<secret>& secrets, const std::string& where, const std::string& haystack,
          std::vector<std::string>& hits, const std::set<std::string>& exempt = {}) {
  for (const secret& s : secrets) {
    if (exempt.count(s.what) != 0)
      continue;
    for (const std::string& n : needles(s))
      if (haystack.find(n) != std::string::npos) {
        hits.push_back(s.what + " in " + where);
        break;
      }
  }
}

// Run directly (params) and by the webhook trigger (params.event: the webhook's body).
constexpr std::string_view kSignCode =
    "var p = params.event || params;\n"
    "var sig = Enact.signEcdsa({pkpId: p.pkp, digest: p.digest, name: \"main\"});\n"
    "Enact.setResponse({address: Enact.getAddress({pkpId: p.pkp})});\n";

}  // namespace

TEST_CASE("secret hygiene: no key value in logs, later answers or data files") {
  temp_dir data;
  const std::string data_dir = data.path() + "/data";

  // A trigger API token, issued before the server starts (it prints the token once on stdout).
  const finished_run issued = run_to_exit({"issue-token", "--data-dir", data_dir, "--user", "scanner"});
  REQUIRE_MESSAGE(issued.status.clean(), issued.stderr_text);
  const std::string token = issued.stdout_text.substr(0, issued.stdout_text.find('\n'));
  REQUIRE(token.size() == 43);

  std::vector<secret> secrets;
  secrets.push_back(of_text("trigger API token", token, true));
  std::vector<std::string> later;  // bodies of answers after the secrets were handed out

  {
    captured_server srv(data_dir, {"--dev", "--log-level", "debug", "--sandbox-workers", "1"});
    http_client c = srv.client();

    const account_keys acct = create_account(c, "scan");
    secrets.push_back(of_text("account master key", acct.api_key, false));
    const response w1 = c.post("/create_wallet", json::object{{"name", "one"}}, acct.auth());
    ITEST_REQUIRE_STATUS(w1, 200);
    const std::string pkp = s_of(w1.body, "pkp_id");
    const std::string cid = cid_of_code(kSignCode);
    ITEST_REQUIRE_STATUS(c.post("/upload_action", json::object{{"code", kSignCode}}, acct.auth()), 200);
    ITEST_REQUIRE_STATUS(c.post("/add_action", json::object{{"action_ipfs_cid", cid}, {"name", "sign"}}, acct.auth()),
                         200);
    const response g = c.post("/add_group",
                              json::object{{"name", "g"},
                                           {"pkp_ids_permitted", json::array{json::string(pkp)}},
                                           {"cid_hashes_permitted", json::array{json::string(hashed_cid_hex(cid))}}},
                              acct.auth());
    ITEST_REQUIRE_STATUS(g, 200);
    const uint64_t group = u_of(g.body, "group_id");
    const usage_keys runner = create_usage_key(
        c, acct.auth(),
        json::object{{"name", "runner"}, {"execute_in_groups", json::array{group}}, {"can_create_pkps", true}});
    secrets.push_back(of_text("usage key (runner)", runner.value, false));
    const usage_keys removed = create_usage_key(c, acct.auth(), json::object{{"name", "gone"}});
    secrets.push_back(of_text("usage key (removed)", removed.value, false));
    const response w2 = c.post("/create_wallet", json::object{{"name", "two"}}, runner.auth());
    ITEST_REQUIRE_STATUS(w2, 200);
    CHECK(buy_credits(c, acct.auth(), 500) == 500);

    const json::object params{{"pkp", pkp}, {"digest", "0x" + std::string(64, '7')}};
    const response ran = c.post(
        "/run_action", json::object{{"action_ipfs_cid", cid}, {"pkp_id", pkp}, {"params", params}}, runner.auth());
    ITEST_REQUIRE_STATUS(ran, 200);
    later.push_back(ran.text);

    // A webhook trigger holding the runner key, fired once.
    const httplib::Headers bearer_auth = bearer(token);
    const response trig = c.request("POST", "/api/triggers",
                                    json::serialize(json::object{{"type", "webhook"},
                                                                 {"name", "scan"},
                                                                 {"action_ipfs_cid", cid},
                                                                 {"pkp_id", pkp},
                                                                 {"usage_api_key", runner.value},
                                                                 {"config", json::object{}}}),
                                    bearer_auth);
    ITEST_REQUIRE_STATUS(trig, 201);
    later.push_back(trig.text);
    const std::string trigger_id = s_of(trig.body, "id");
    const response fired =
        c.request("POST", "/webhook/" + trigger_id,
                  json::serialize(json::object{{"pkp", pkp}, {"digest", "0x" + std::string(64, '8')}}),
                  // A credential sent to the public webhook by mistake is
                  // stripped from the headers the run sees.
                  itest::api_key(runner.value));
    ITEST_REQUIRE_STATUS(fired, 202);
    const std::string run_id = s_of(fired.body, "run_id");
    response run;
    const auto deadline = steady::now() + std::chrono::seconds(60);
    do {
      run = c.request("GET", "/api/runs/" + run_id, "", bearer_auth);
      if (run.status == 200 && s_of(run.body, "status") != "queued" && s_of(run.body, "status") != "running")
        break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    } while (steady::now() < deadline);
    ITEST_REQUIRE_STATUS(run, 200);
    CHECK(s_of(run.body, "status") == "success");
    later.push_back(run.text);

    ITEST_REQUIRE_STATUS(c.post("/remove_usage_api_key", json::object{{"usage_api_key", removed.value}}, acct.auth()),
                         200);

    // Every read that could echo a key.
    for (const char* path : {"/account", "/list_groups", "/list_wallets", "/list_actions", "/billing/balance"}) {
      const response r = c.get(path, acct.auth());
      ITEST_CHECK_STATUS(r, 200);
      later.push_back(r.text);
      // The usage key may be refused some of these: the answer is scanned all the same.
      later.push_back(c.get(path, runner.auth()).text);
    }
    const response keys = c.get("/list_api_keys", acct.auth());
    ITEST_CHECK_STATUS(keys, 200);
    later.push_back(keys.text);
    for (const char* path : {"/api/me", "/api/triggers"}) {
      const response r = c.request("GET", path, "", bearer_auth);
      ITEST_CHECK_STATUS(r, 200);
      later.push_back(r.text);
    }
    const response one = c.request("GET", "/api/triggers/" + trigger_id, "", bearer_auth);
    ITEST_CHECK_STATUS(one, 200);
    later.push_back(one.text);
    // Wrong credentials are answered without echoing what was sent.
    later.push_back(c.get("/account", itest::api_key(removed.value)).text);
    later.push_back(c.post("/update_usage_api_key_metadata",
                           json::object{{"usage_api_key", removed.value}, {"name", "x"}, {"description", "y"}},
                           acct.auth())
                        .text);
    later.push_back(c.post("/add_group", json::object{{"name", 7}}, runner.auth()).text);

    srv.stop();
    const std::string out = srv.out(), err = srv.err();
    keep_for_secret_scan({"--dev", "--log-level", "debug"}, out, err, data_dir);
    // The request log was written, and the debug lines with it (--log-level debug).
    CHECK(err.find("\"msg\":\"request\"") != std::string::npos);
    CHECK(err.find("\"level\":\"debug\"") != std::string::npos);

    // The root key, and the PKP private keys derived from it: the test recomputes the wallet
    // addresses, so these are the keys the server signs with.
    const std::string root_text = slurp(data_dir + "/tee-root.key");
    REQUIRE(root_text.size() == 32);
    const Secret root(bytes(root_text.begin(), root_text.end()));
    secrets.push_back(of_bytes("TEE root key", as_bytes(root_text)));
    for (uint64_t i = 0; i < 2; ++i) {
      const hash256 account_hash = codec::hex::decode_fixed<32>(acct.api_key_hash).value();
      const auto addr = pkp::wallet_address(root, account_hash, pkp::api_mode_path(account_hash, i));
      REQUIRE(addr.has_value());
      CHECK((to_checksum_address(*addr) == pkp || to_checksum_address(*addr) == s_of(w2.body, "pkp_id")));
      const auto key = api_mode_signing_key(root, account_hash, i);
      REQUIRE(key.has_value());
      secrets.push_back(of_bytes("PKP private key " + std::to_string(i), key->view()));
    }

    // The scanner itself finds what it looks for: a key in one of its forms, inside other text.
    std::vector<std::string> probe;
    scan(secrets, "probe", "{\"k\":\"" + runner.value + "\"}", probe);
    CHECK(probe.size() == 1);
    probe.clear();
    scan(secrets, "probe", "key " + secrets.back().forms[1] + ".", probe);
    CHECK(probe == std::vector<std::string>{"PKP private key 1 in probe"});

    std::vector<std::string> hits;
    scan(secrets, "stdout", out, hits);
    scan(secrets, "stderr (the JSON log)", err, hits);
    for (size_t i = 0; i < later.size(); ++i)
      scan(secrets, "answer " + std::to_string(i) + " after creation", later[i], hits);
    size_t files = 0;
    for (const auto& e : fs::recursive_directory_iterator(data_dir)) {
      if (!e.is_regular_file())
        continue;
      ++files;
      const std::string name = fs::relative(e.path(), data_dir).string();
      // The root key's own file is where it is kept (0600, simulated TEE only).
      const std::set<std::string> exempt =
          name == "tee-root.key" ? std::set<std::string>{"TEE root key"} : std::set<std::string>{};
      scan(secrets, "data file " + name, slurp(e.path().string()), hits, exempt);
    }
    CHECK(files >= 3);
    for (const std::string& h : hits)
      FAIL_CHECK("secret leaked: " << h);
    CHECK(hits.empty());
    MESSAGE("scanned " << secrets.size() << " secrets in stdout (" << out.size() << " B), stderr (" << err.size()
                       << " B), " << later.size() << " answers and " << files << " data files");
  }
}

namespace {

/// Logging and printing calls in server/ that name a key-like variable and were reviewed: each
/// prints a hash, a count, a path or an identifier, never a value. "file:needle".
const std::set<std::string> kReviewed = {};

/// The text of a call starting at `open` (the '(' after the callee), up to its matching ')'.
std::string call_text(const std::string& src, size_t open) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = open; i < src.size(); ++i) {
    const char ch = src[i];
    if (in_string) {
      if (ch == '\\')
        ++i;
      else if (ch == '"')
        in_string = false;
      continue;
    }
    if (ch == '"')
      in_string = true;
    else if (ch == '(')
      ++depth;
    else if (ch == ')' && --depth == 0)
      return src.substr(open, i - open + 1);
  }
  return src.substr(open);
}

/// `text` without its string literals (field names such as "api_key_hash" are not variables).
std::string without_strings(const std::string& text) {
  static const std::regex kLiteral(R"("(?:[^"\\]|\\.)*")");
  return std::regex_replace(text, kLiteral, "\"\"");
}

}  // namespace

TEST_CASE("secret hygiene: no logging call in server/ names a key-like variable") {
  static const std::regex kCall(
      R"((?:\.|->)(?:debug|info|warn|error)\s*\(|\b(?:std::)?(?:f?printf|fputs|puts)\s*\(|std::(?:cerr|cout|clog)\b)");
  static const std::regex kSuspect(
      R"(\b[A-Za-z_][A-Za-z0-9_]*(?:key|secret|token|seed|password|mnemonic|private)[A-Za-z0-9_]*\b)",
      std::regex::icase);
  // Names that only look like secrets: hashes of keys, key kinds and counts.
  static const std::regex kHarmless(R"(hash|_kind$|^kind|count|_id$|path|size|len)", std::regex::icase);
  const fs::path root = fs::path(ENACT_SOURCE_DIR) / "server";
  size_t calls = 0;
  std::vector<std::string> flagged;
  std::set<std::string> used_reviews;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    const std::string ext = e.path().extension().string();
    if (!e.is_regular_file() || (ext != ".cpp" && ext != ".hpp"))
      continue;
    const std::string rel = fs::relative(e.path(), root.parent_path()).string();
    const std::string src = slurp(e.path().string());
    for (auto it = std::sregex_iterator(src.begin(), src.end(), kCall); it != std::sregex_iterator(); ++it) {
      ++calls;
      const size_t at = static_cast<size_t>(it->position());
      const size_t open = src.find_first_of("(<;", at);
      std::string text = src[open] == '(' ? call_text(src, open) : src.substr(at, src.find(';', at) - at);
      text = without_strings(text);
      for (auto s = std::sregex_iterator(text.begin(), text.end(), kSuspect); s != std::sregex_iterator(); ++s) {
        const std::string name = s->str();
        if (std::regex_search(name, kHarmless))
          continue;
        const std::string entry = rel + ":" + name;
        if (kReviewed.count(entry) != 0) {
          used_reviews.insert(entry);
          continue;
        }
        const size_t line = 1 + static_cast<size_t>(std::count(src.begin(), src.begin() + at, '\n'));
        flagged.push_back(rel + ":" + std::to_string(line) + ": " + name);
      }
    }
  }
  CHECK(calls > 10);
  for (const std::string& f : flagged)
    FAIL_CHECK("a logging call names a key-like variable (review it, then list it): " << f);
  // A review of a line that no longer exists is dropped from the list.
  for (const std::string& r : kReviewed)
    CHECK_MESSAGE(used_reviews.count(r) != 0, "stale review entry: " << r);
  MESSAGE(calls << " logging and printing calls checked");
}

}  // namespace enact::itest
