// The trigger service of enact-server end to end (API.md §4, docs/triggers.md): a webhook fires
// an action through the core and its run records the answer; webhook params (JSON, text, bytes
// that are not UTF-8, stripped and passed headers); 404, 409 and 413; a throwing action's stack;
// retries against a fake core (503, 503, 200; a 4xx fails at once; persistent 503 gives up after
// three attempts); the management API's authentication, ownership, validation and JSON; the
// serving modes; and a SIGKILL in the middle of a webhook flood, after which every acknowledged
// webhook has exactly one run and every run finishes.
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
namespace {

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
std::string random_usage_key() {
  std::array<uint8_t, 32> b{};
  random_bytes(b);
  return base64::encode(b);
}

/// What a fake core answers to the trigger service's usage-key check (key_check.hpp): every key
/// is a usage key with execute on every group, and its one group lists `cids` and `pkps`.
void add_key_check_routes(httplib::Server& fake, std::vector<std::string> cids, std::vector<std::string> pkps = {}) {
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
int free_port() {
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

core_side setup_core(http_client& c, const std::vector<std::string_view>& codes, uint64_t cents) {
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

json::object webhook_body(const std::string& cid, const std::string& key, const std::string& name = "hook") {
  return json::object{{"type", "webhook"}, {"name", name}, {"action_ipfs_cid", cid}, {"usage_api_key", key}};
}

/// Polls the run until it is success or failed (at most `timeout`).
json::object await_run(api_user& u, const std::string& run_id, std::chrono::seconds timeout = 30s) {
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

std::string file_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

/// The trigger store's files, main file and WAL.
std::string store_bytes(const std::string& data_dir) {
  return file_text(data_dir + "/triggers.sqlite") + file_text(data_dir + "/triggers.sqlite-wal");
}

}  // namespace

TEST_CASE("triggers: webhooks run actions through the core") {
  temp_dir dir;
  const std::string data = dir.path() + "/data";
  const std::string token = issue_token(data, "alice");
  server_process srv({"--dev", "--sandbox-workers", "2"}, data);
  http_client c = srv.client();
  const core_side core = setup_core(c, {kEchoCode, kThrowCode}, 500);
  api_user alice(srv.port(), token);

  const response created =
      alice.post("/api/triggers", webhook_body(core.cids.at(std::string(kEchoCode)), core.key.value));
  ITEST_REQUIRE_STATUS(created, 201);
  const std::string id = s_of(created.body, "id");
  const std::string hook = "/webhook/" + id;
  CHECK(s_of(created.body, "webhook_url") == "http://127.0.0.1:" + std::to_string(srv.port()) + hook);

  SUBCASE("a JSON body: the run succeeds with what the action echoed") {
    const std::string body = R"({"hello": "world", "n": [1, 2]})";
    const httplib::Headers h{{"X-Hub-Signature-256", "sha256=0123abcd"},
                             {"Authorization", "Bearer sender-secret"},
                             {"Cookie", "session=1"},
                             {"X-Api-Key", "not-for-the-action"},
                             {"Proxy-Authorization", "Basic eA=="},
                             {"Set-Cookie", "a=b"},
                             {"X-Custom", "one"}};
    const response r = call(srv.port(), "POST", hook, body, h, "application/json");
    ITEST_REQUIRE_STATUS(r, 202);
    CHECK(!r.header("X-Request-Id").empty());
    const std::string run_id = s_of(r.body, "run_id");
    CHECK(r.obj().size() == 1);
    const json::object run = await_run(alice, run_id);
    INFO(json::serialize(run));
    CHECK(run.at("status") == "success");
    CHECK(run.at("attempts") == 1);
    CHECK(run.at("trigger_id") == json::value(id));
    CHECK(run.at("response") == json::parse(body));
    CHECK(!run.contains("error"));
    CHECK(run.contains("queued_at"));
    CHECK(run.contains("started_at"));
    CHECK(run.contains("finished_at"));
    const auto& params = run.at("params").as_object();
    CHECK(params.at("event") == json::parse(body));
    CHECK(params.at("event_raw") == json::value(body));
    CHECK(!params.contains("event_raw_encoding"));
    const auto& headers = params.at("headers").as_object();
    CHECK(headers.at("x-hub-signature-256") == "sha256=0123abcd");
    CHECK(headers.at("x-custom") == "one");
    CHECK(headers.at("content-type") == "application/json");
    for (const char* gone : {"authorization", "cookie", "x-api-key", "proxy-authorization", "set-cookie", "remote_addr",
                             "remote_port", "local_addr", "local_port"})
      CHECK_MESSAGE(!headers.contains(gone), gone << " reached the action");
    for (const auto& kv : headers)
      CHECK_MESSAGE(
          std::string(kv.key()) ==
              [&] {
                std::string l(kv.key());
                std::transform(l.begin(), l.end(), l.begin(), [](unsigned char ch) { return std::tolower(ch); });
                return l;
              }(),
          "header name not lowercased: " << std::string(kv.key()));
    // The run is listed, newest first.
    const response runs = alice.get("/api/triggers/" + id + "/runs");
    ITEST_REQUIRE_STATUS(runs, 200);
    CHECK(u_of(runs.body, "total") == 1);
    CHECK(s_of(runs.obj().at("items").as_array()[0], "id") == run_id);
  }

  SUBCASE("text bodies stay text; bytes that are not UTF-8 arrive as base64") {
    struct case_ {
      std::string body;
      std::string content_type;
      json::value event;
      std::string raw;
      bool base64;
      json::value response;  // what the core answers for the echo (a JSON text comes back parsed)
    };
    const std::string binary("\xff\xfe\x00\x01 binary \xc3", 13);
    const case_ cases[] = {
        {"plain words", "text/plain", json::value("plain words"), "plain words", false, json::value("plain words")},
        {R"({"looks": "like json"})", "text/plain; charset=utf-8", json::value(R"({"looks": "like json"})"),
         R"({"looks": "like json"})", false, json::parse(R"({"looks": "like json"})")},
        {"not json {", "application/json", json::value("not json {"), "not json {", false, json::value("not json {")},
        {"[1,2,3]", "application/octet-stream", json::parse("[1,2,3]"), "[1,2,3]", false, json::parse("[1,2,3]")},
        {"grüße ✓", "text/plain", json::value("grüße ✓"), "grüße ✓", false, json::value("grüße ✓")},
        {binary, "application/octet-stream", json::value(nullptr), base64::encode(as_bytes(binary)), true, nullptr},
    };
    for (const auto& k : cases) {
      CAPTURE(k.raw);
      const response r = call(srv.port(), "POST", hook, k.body, {}, k.content_type);
      ITEST_REQUIRE_STATUS(r, 202);
      const json::object run = await_run(alice, s_of(r.body, "run_id"));
      CHECK(run.at("status") == "success");
      const auto& params = run.at("params").as_object();
      CHECK(params.at("event") == k.event);
      CHECK(params.at("event_raw") == json::value(k.raw));
      CHECK(params.contains("event_raw_encoding") == k.base64);
      if (k.base64)
        CHECK(params.at("event_raw_encoding") == "base64");
      CHECK(run.at("response") == k.response);
    }
  }

  SUBCASE("404 unknown, 409 disabled, 413 over 1 MiB") {
    const std::string unknown = "/webhook/trg_" + std::string(32, '0');
    check_error(srv, call(srv.port(), "POST", unknown, "{}"), 404, "not_found", unknown);
    check_error_shape(call(srv.port(), "POST", "/webhook/not-an-id", "{}"), 404, "not_found");

    const json::value schedule{{"type", "schedule"},
                               {"name", "s"},
                               {"action_ipfs_cid", core.cids.at(std::string(kEchoCode))},
                               {"usage_api_key", core.key.value},
                               {"config", {{"cron", "0 0 1 1 *"}}}};
    const response s = alice.post("/api/triggers", schedule);
    ITEST_REQUIRE_STATUS(s, 201);
    check_error_shape(call(srv.port(), "POST", "/webhook/" + s_of(s.body, "id"), "{}"), 404, "not_found");

    ITEST_REQUIRE_STATUS(alice.patch("/api/triggers/" + id, json::object{{"enabled", false}}), 200);
    check_error(srv, call(srv.port(), "POST", hook, "{}"), 409, "conflict", hook);
    ITEST_REQUIRE_STATUS(alice.patch("/api/triggers/" + id, json::object{{"enabled", true}}), 200);
    ITEST_CHECK_STATUS(call(srv.port(), "POST", hook, "{}"), 202);

    const std::string max(size_t{1} << 20, 'x');
    ITEST_CHECK_STATUS(call(srv.port(), "POST", hook, max, {}, "text/plain"), 202);
    check_error(srv, call(srv.port(), "POST", hook, max + "x", {}, "text/plain"), 413, "payload_too_large", hook);
    check_error_shape(call(srv.port(), "POST", hook, max + max, {}, "text/plain"), 413, "payload_too_large");
    const response runs = alice.get("/api/triggers/" + id + "/runs?limit=100");
    CHECK(u_of(runs.body, "total") == 2);  // the refused ones queued nothing
  }

  SUBCASE("a throwing action fails the run with its JavaScript stack") {
    const response t =
        alice.post("/api/triggers", webhook_body(core.cids.at(std::string(kThrowCode)), core.key.value, "thrower"));
    ITEST_REQUIRE_STATUS(t, 201);
    const response r = call(srv.port(), "POST", "/webhook/" + s_of(t.body, "id"), "{}");
    ITEST_REQUIRE_STATUS(r, 202);
    const json::object run = await_run(alice, s_of(r.body, "run_id"));
    INFO(json::serialize(run));
    CHECK(run.at("status") == "failed");
    CHECK(run.at("attempts") == 1);  // not transient: no retry
    CHECK(!run.contains("response"));
    const auto& e = run.at("error").as_object();
    CHECK(e.at("code") == "action_failed");
    CHECK(std::string(e.at("message").as_string()).find("boom") != std::string::npos);
    const std::string stack(e.at("stack").as_string());
    CHECK(stack.find("action.js:3") != std::string::npos);
  }

  // The usage key never comes back, is never logged, and is in the database only sealed.
  for (const auto& text : alice.seen())
    CHECK(text.find(core.key.value) == std::string::npos);
  CHECK(store_bytes(data).find(core.key.value) == std::string::npos);
  srv.stop();
  check_no_secret_logged(srv, {core.key.value, token});
}

TEST_CASE("triggers: transient core failures are retried, others fail at once") {
  // A fake core: per action CID, a script of answers; it records what each call carried.
  const std::string flaky = cid_of_code("flaky"), bad = cid_of_code("bad"), down = cid_of_code("down"),
                    limited = cid_of_code("limited");
  std::mutex mu;
  std::map<std::string, int> calls;
  std::vector<std::string> keys_seen;
  std::vector<json::value> params_seen;
  httplib::Server fake;
  fake.Post("/core/v1/run_action", [&](const httplib::Request& req, httplib::Response& res) {
    const json::value body = json::parse(req.body);
    const std::string cid(body.at("action_ipfs_cid").as_string());
    int n = 0;
    {
      std::lock_guard lock(mu);
      n = ++calls[cid];
      keys_seen.push_back(req.get_header_value("X-Api-Key"));
      params_seen.push_back(body.at("params"));
    }
    const auto answer = [&](int status, const json::value& b) {
      res.status = status;
      res.set_content(json::serialize(b), "application/json");
    };
    const json::value unavailable{{"error", {{"code", "unavailable"}, {"message", "saturated"}}}};
    if ((cid == flaky && n < 3) || cid == down)
      return answer(503, unavailable);
    if (cid == limited && n < 2) {
      res.set_header("Retry-After", "1");
      return answer(429, json::value{{"error", {{"code", "rate_limited"}, {"message", "slow down"}}}});
    }
    if (cid == bad)
      return answer(400, json::value{{"error", {{"code", "invalid_request"}, {"message", "params: no"}}}});
    answer(200, json::value{{"response", {{"attempt", n}}},
                            {"logs", ""},
                            {"signatures", json::object{}},
                            {"run_ms", 1},
                            {"charged_credits", 1}});
  });
  add_key_check_routes(fake, {flaky, bad, down, limited});
  serving fake_served(fake);
  const int fake_port = fake_served.port();

  temp_dir dir;
  const std::string data = dir.path() + "/data";
  const std::string token = issue_token(data, "alice");
  {
    // The trigger service alone, against the fake core.
    server_process srv(
        {"--no-core", "--core-url", "http://127.0.0.1:" + std::to_string(fake_port), "--trigger-retry-base-ms", "20"},
        data);
    api_user alice(srv.port(), token);
    ITEST_CHECK_STATUS(call(srv.port(), "GET", "/core/v1/get_node_chain_config"), 404);
    const std::string key = random_usage_key();
    const auto fire = [&](const std::string& cid) {
      const response t = alice.post("/api/triggers", webhook_body(cid, key));
      REQUIRE_MESSAGE(t.status == 201, t.describe());
      const response r = call(srv.port(), "POST", "/webhook/" + s_of(t.body, "id"), R"({"x": 1})");
      REQUIRE_MESSAGE(r.status == 202, r.describe());
      return await_run(alice, s_of(r.body, "run_id"));
    };

    const json::object ok = fire(flaky);
    INFO(json::serialize(ok));
    CHECK(ok.at("status") == "success");
    CHECK(ok.at("attempts") == 3);
    CHECK(ok.at("response") == json::value{{"attempt", 3}});
    CHECK(!ok.contains("error"));

    const json::object four = fire(bad);
    CHECK(four.at("status") == "failed");
    CHECK(four.at("attempts") == 1);
    CHECK(four.at("error").at("code") == "invalid_request");
    CHECK(four.at("error").at("message") == "params: no");

    const json::object gone = fire(down);
    CHECK(gone.at("status") == "failed");
    CHECK(gone.at("attempts") == 3);
    CHECK(gone.at("error").at("code") == "unavailable");

    const json::object slow = fire(limited);
    CHECK(slow.at("status") == "success");
    CHECK(slow.at("attempts") == 2);

    std::lock_guard lock(mu);
    CHECK(calls[flaky] == 3);
    CHECK(calls[bad] == 1);
    CHECK(calls[down] == 3);
    CHECK(calls[limited] == 2);
    // Each call carried the trigger's key, unsealed, and the webhook's params.
    for (const auto& k : keys_seen)
      CHECK(k == key);
    for (const auto& p : params_seen)
      CHECK(p.at("event") == json::value{{"x", 1}});
    for (const auto& text : alice.seen())
      CHECK(text.find(key) == std::string::npos);
    srv.stop();
    check_no_secret_logged(srv, {key, token});
  }
  fake_served.stop();
}

TEST_CASE("triggers: the management API") {
  temp_dir dir;
  const std::string data = dir.path() + "/data";
  const std::string alice_token = issue_token(data, "alice");
  const std::string bob_token = issue_token(data, "bob");
  // A fake core that lets any key run the action "x" (and "y", with PKP 0x…aa): the usage-key
  // check has its own cases (tests/security/attacks/triggers_test.cpp).
  httplib::Server fake;
  add_key_check_routes(fake, {cid_of_code("x"), cid_of_code("y")}, {"0x00000000000000000000000000000000000000AA"});
  serving fake_served(fake);
  const int fake_port = fake_served.port();
  server_process srv({"--chain-rpc", "ethereum=http://127.0.0.1:1", "--no-core", "--core-url",
                      "http://127.0.0.1:" + std::to_string(fake_port), "--trigger-workers", "0"},
                     data);
  api_user alice(srv.port(), alice_token), bob(srv.port(), bob_token);
  const std::string cid = cid_of_code("x");
  const std::string key = random_usage_key();

  SUBCASE("authentication") {
    const response me = alice.get("/api/me");
    ITEST_REQUIRE_STATUS(me, 200);
    CHECK(s_of(me.body, "user_id") == "alice");
    CHECK(me.obj().size() == 2);
    CHECK(s_of(me.body, "token_expires_at").ends_with("Z"));
    const std::vector<httplib::Headers> refused = {
        {},
        {{"Authorization", "Bearer " + std::string(43, 'A')}},  // well-formed, unknown
        {{"Authorization", "Bearer short"}},
        {{"Authorization", "Basic " + alice_token}},
        {{"X-Api-Key", alice_token}},
    };
    for (const auto& h : refused) {
      for (const auto& [method, path] : std::vector<std::pair<std::string, std::string>>{
               {"GET", "/api/me"}, {"GET", "/api/triggers"}, {"POST", "/api/triggers"}}) {
        CAPTURE(path);
        check_error_shape(call(srv.port(), method, path, "{}", h), 401, "unauthenticated");
      }
    }
  }

  SUBCASE("create, read, list, update, delete; JSON of API.md §4; no key ever returned") {
    const response w = alice.post("/api/triggers", webhook_body(cid, key, "first"));
    ITEST_REQUIRE_STATUS(w, 201);
    const auto& t = w.obj();
    const std::set<std::string> fields{"id",
                                       "type",
                                       "name",
                                       "enabled",
                                       "action_ipfs_cid",
                                       "usage_api_key_hash",
                                       "max_runs_per_minute",
                                       "max_queued_runs",
                                       "config",
                                       "created_at",
                                       "updated_at",
                                       "webhook_url"};
    std::set<std::string> got;
    for (const auto& kv : t)
      got.insert(std::string(kv.key()));
    CHECK(got == fields);
    CHECK(s_of(w.body, "type") == "webhook");
    CHECK(t.at("enabled") == true);
    CHECK(t.at("config") == json::object{});
    CHECK(s_of(w.body, "usage_api_key_hash") == keccak_hex(key));
    const std::string id = s_of(w.body, "id");
    CHECK(id.starts_with("trg_"));

    const json::value sched{{"type", "schedule"},     {"name", "every minute"},
                            {"action_ipfs_cid", cid}, {"pkp_id", "0x00000000000000000000000000000000000000aa"},
                            {"usage_api_key", key},   {"config", {{"cron", "* * * * *"}}},
                            {"enabled", false}};
    const response s = alice.post("/api/triggers", sched);
    ITEST_REQUIRE_STATUS(s, 201);
    CHECK(s.obj().at("config") == json::value{{"cron", "* * * * *"}, {"timezone", "UTC"}});
    CHECK(s_of(s.body, "pkp_id") == "0x00000000000000000000000000000000000000AA");
    CHECK(!s.obj().contains("webhook_url"));
    CHECK(s.obj().at("enabled") == false);
    const std::string sid = s_of(s.body, "id");

    const json::value chain{{"type", "chain-event"},
                            {"name", "transfers"},
                            {"action_ipfs_cid", cid},
                            {"usage_api_key", key},
                            {"config",
                             {{"chain", "ethereum"},
                              {"contract", "0xdac17f958d2ee523a2206206994597c13d831ec7"},
                              {"event", "Transfer(address indexed from, address indexed to, uint256 value)"},
                              {"start_block", "0x10"},
                              {"topic_filters", json::array{nullptr, json::array{"0x" + std::string(64, 'A')}}},
                              {"confirmations", 12}}}};
    const response ce = alice.post("/api/triggers", chain);
    ITEST_REQUIRE_STATUS(ce, 201);
    CHECK(ce.obj().at("config").at("contract") == "0xdAC17F958D2ee523a2206206994597C13D831ec7");
    CHECK(ce.obj().at("config").at("topic_filters").as_array()[1].as_array()[0] ==
          json::value("0x" + std::string(64, 'a')));

    const response one = alice.get("/api/triggers/" + id);
    ITEST_REQUIRE_STATUS(one, 200);
    CHECK(one.body == w.body);

    const response list = alice.get("/api/triggers");
    ITEST_REQUIRE_STATUS(list, 200);
    CHECK(u_of(list.body, "total") == 3);
    CHECK(list.obj().size() == 2);
    const auto& items = list.obj().at("items").as_array();
    REQUIRE(items.size() == 3);
    CHECK(items[0].at("id") == json::value(id));  // oldest first
    const response paged = alice.get("/api/triggers?limit=1&offset=1");
    ITEST_REQUIRE_STATUS(paged, 200);
    REQUIRE(paged.obj().at("items").as_array().size() == 1);
    CHECK(paged.obj().at("items").as_array()[0].at("id") == json::value(sid));
    CHECK(u_of(paged.body, "total") == 3);

    const std::string key2 = random_usage_key();
    const response up = alice.patch("/api/triggers/" + sid, json::object{{"name", "renamed"},
                                                                         {"enabled", true},
                                                                         {"pkp_id", nullptr},
                                                                         {"usage_api_key", key2},
                                                                         {"config", {{"cron", "*/30 * * * * *"}}}});
    ITEST_REQUIRE_STATUS(up, 200);
    CHECK(s_of(up.body, "name") == "renamed");
    CHECK(up.obj().at("enabled") == true);
    CHECK(!up.obj().contains("pkp_id"));
    CHECK(s_of(up.body, "usage_api_key_hash") == keccak_hex(key2));
    CHECK(up.obj().at("config").at("cron") == "*/30 * * * * *");
    CHECK(s_of(up.body, "updated_at") >= s_of(up.body, "created_at"));

    const response del = alice.del("/api/triggers/" + id);
    CHECK(del.status == 204);
    CHECK(del.text.empty());
    check_error_shape(alice.get("/api/triggers/" + id), 404, "not_found");
    check_error_shape(alice.del("/api/triggers/" + id), 404, "not_found");

    for (const auto& text : alice.seen()) {
      CHECK(text.find(key) == std::string::npos);
      CHECK(text.find(key2) == std::string::npos);
      CHECK(text.find("usage_api_key\"") == std::string::npos);
    }
    CHECK(store_bytes(data).find(key) == std::string::npos);
    CHECK(store_bytes(data).find(key2) == std::string::npos);
  }

  SUBCASE("a user sees only their own triggers and runs") {
    const response w = alice.post("/api/triggers", webhook_body(cid, key));
    ITEST_REQUIRE_STATUS(w, 201);
    const std::string id = s_of(w.body, "id");
    const response r = call(srv.port(), "POST", "/webhook/" + id, "{}");
    ITEST_REQUIRE_STATUS(r, 202);
    const std::string run_id = s_of(r.body, "run_id");
    ITEST_CHECK_STATUS(alice.get("/api/runs/" + run_id), 200);
    const response queued = alice.get("/api/runs/" + run_id);
    CHECK(s_of(queued.body, "status") == "queued");  // no workers in this server

    check_error_shape(bob.get("/api/triggers/" + id), 404, "not_found");
    check_error_shape(bob.patch("/api/triggers/" + id, json::object{{"enabled", false}}), 404, "not_found");
    check_error_shape(bob.del("/api/triggers/" + id), 404, "not_found");
    check_error_shape(bob.get("/api/triggers/" + id + "/runs"), 404, "not_found");
    check_error_shape(bob.get("/api/runs/" + run_id), 404, "not_found");
    CHECK(u_of(bob.get("/api/triggers").body, "total") == 0);
    ITEST_CHECK_STATUS(alice.get("/api/triggers/" + id), 200);  // untouched
    CHECK(alice.get("/api/triggers/" + id).obj().at("enabled") == true);
  }

  SUBCASE("validation") {
    struct case_ {
      const char* what;
      json::value body;
      const char* message_start;
    };
    const auto with = [&](std::initializer_list<std::pair<std::string, json::value>> changes,
                          std::initializer_list<const char*> remove = {}) {
      json::object b = webhook_body(cid, key);
      for (const auto& [k, v] : changes)
        b[k] = v;
      for (const char* k : remove)
        b.erase(k);
      return json::value(std::move(b));
    };
    const json::object ev{{"chain", "ethereum"},
                          {"contract", "0xdac17f958d2ee523a2206206994597c13d831ec7"},
                          {"event", "Transfer(address indexed from, address indexed to, uint256 value)"}};
    const auto chain_with = [&](std::initializer_list<std::pair<std::string, json::value>> changes) {
      json::object c = ev;
      for (const auto& [k, v] : changes)
        c[k] = v;
      return with({{"type", "chain-event"}, {"config", c}});
    };
    const case_ cases[] = {
        {"unknown field", with({{"colour", "red"}}), "body.colour: unknown field"},
        {"missing type", with({}, {"type"}), "body.type: "},
        {"bad type", with({{"type", "cron"}}), "body.type: "},
        {"empty name", with({{"name", ""}}), "body.name: "},
        {"bad cid", with({{"action_ipfs_cid", "QmNotACid"}}), "body.action_ipfs_cid: "},
        {"missing key", with({}, {"usage_api_key"}), "body.usage_api_key: "},
        {"key of the wrong form", with({{"usage_api_key", "abc"}}), "body.usage_api_key: "},
        {"bad pkp", with({{"pkp_id", "0x12"}}), "body.pkp_id"},
        {"enabled not a bool", with({{"enabled", "yes"}}), "body.enabled: "},
        {"webhook config", with({{"config", {{"x", 1}}}}), "config.x: unknown field"},
        {"schedule under 30 s", with({{"type", "schedule"}, {"config", {{"cron", "*/10 * * * * *"}}}}),
         "config.cron: "},
        {"schedule bad cron", with({{"type", "schedule"}, {"config", {{"cron", "61 * * * *"}}}}), "config.cron: "},
        {"schedule timezone", with({{"type", "schedule"}, {"config", {{"cron", "* * * * *"}, {"timezone", "CET"}}}}),
         "config.timezone: "},
        {"chain without RPC", chain_with({{"chain", "polygon"}}), "config.chain: this deployment has no RPC"},
        {"unknown chain", chain_with({{"chain", "dogechain"}}), "config.chain: "},
        {"bad contract", chain_with({{"contract", "0x1234"}}), "config.contract"},
        {"bad event", chain_with({{"event", "Transfer(address indexed from"}}), "config.event: "},
        {"bad start_block", chain_with({{"start_block", "12"}}), "config.start_block: "},
        {"negative start_block", chain_with({{"start_block", -1}}), "config.start_block: "},
        {"four topic filters", chain_with({{"topic_filters", json::array{nullptr, nullptr, nullptr, nullptr}}}),
         "config.topic_filters: at most 3"},
        {"short topic", chain_with({{"topic_filters", json::array{"0x1234"}}}), "config.topic_filters[0]: "},
        {"topic past the indexed ones",
         chain_with({{"topic_filters", json::array{nullptr, nullptr, "0x" + std::string(64, '1')}}}),
         "config.topic_filters[2]: "},
        {"confirmations", chain_with({{"confirmations", "12"}}), "config.confirmations: "},
    };
    for (const auto& k : cases) {
      CAPTURE(k.what);
      const response r = alice.post("/api/triggers", k.body);
      check_error_shape(r, 400, "invalid_request");
      CHECK_MESSAGE(r.error_message().starts_with(k.message_start), r.error_message());
      CHECK(r.text.find(key) == std::string::npos);
    }
    check_error_shape(call(srv.port(), "POST", "/api/triggers", "{not json", alice.auth()), 400, "invalid_request");
    check_error_shape(call(srv.port(), "POST", "/api/triggers", "[]", alice.auth()), 400, "invalid_request");

    // The interval rule holds on update too.
    const response s = alice.post("/api/triggers", with({{"type", "schedule"}, {"config", {{"cron", "0 * * * *"}}}}));
    ITEST_REQUIRE_STATUS(s, 201);
    const std::string sid = s_of(s.body, "id");
    const response fast = alice.patch("/api/triggers/" + sid, json::object{{"config", {{"cron", "*/5 * * * * *"}}}});
    check_error_shape(fast, 400, "invalid_request");
    CHECK(fast.error_message().starts_with("config.cron: "));
    check_error_shape(alice.patch("/api/triggers/" + sid, json::object{{"type", "webhook"}}), 400, "invalid_request");
    CHECK(alice.get("/api/triggers/" + sid).obj().at("config").at("cron") == "0 * * * *");

    for (const char* q : {"?limit=0", "?limit=101", "?limit=x", "?offset=-1", "?page_size=5"})
      check_error_shape(alice.get(std::string("/api/triggers") + q), 400, "invalid_request");
    check_error_shape(alice.get("/api/triggers/" + sid + "/runs?limit=1000"), 400, "invalid_request");
    check_error_shape(alice.get("/api/triggers/nope"), 404, "not_found");
    check_error_shape(alice.get("/api/runs/nope"), 404, "not_found");
  }
}

TEST_CASE("triggers: serving modes") {
  SUBCASE("--triggers-listen: the trigger routes on a listener of their own") {
    temp_dir dir;
    const std::string data = dir.path() + "/data";
    const std::string token = issue_token(data, "alice");
    const int port = free_port();
    server_process srv({"--triggers-listen", "127.0.0.1:" + std::to_string(port)}, data);
    const response me = call(port, "GET", "/api/me", {}, bearer(token));
    ITEST_REQUIRE_STATUS(me, 200);
    CHECK(!me.header("X-Request-Id").empty());
    check_error_shape(call(port, "GET", "/nowhere"), 404, "not_found");
    check_error_shape(call(srv.port(), "GET", "/api/me", {}, bearer(token)), 404, "not_found");
    ITEST_CHECK_STATUS(call(srv.port(), "GET", "/core/v1/get_node_chain_config"), 200);
    ITEST_CHECK_STATUS(call(port, "GET", "/core/v1/get_node_chain_config"), 404);
    // Its requests are logged like the core's.
    check_logged(srv, me, "/api/me");
  }
  SUBCASE("--no-triggers: the core alone") {
    temp_dir dir;
    const std::string data = dir.path() + "/data";
    const std::string token = issue_token(data, "alice");
    server_process srv({"--no-triggers"}, data);
    check_error_shape(call(srv.port(), "GET", "/api/me", {}, bearer(token)), 404, "not_found");
    ITEST_CHECK_STATUS(call(srv.port(), "GET", "/core/v1/get_node_chain_config"), 200);
  }
  SUBCASE("refused settings") {
    const auto refused = [](const std::vector<std::string>& args, const char* words) {
      temp_dir d;
      std::vector<std::string> all{"--listen", "127.0.0.1:0", "--data-dir", d.path() + "/data"};
      all.insert(all.end(), args.begin(), args.end());
      const finished_run r = run_to_exit(all);
      CHECK(r.status.exited);
      CHECK(r.status.code == 2);
      CHECK_MESSAGE(r.stderr_text.find(words) != std::string::npos, r.stderr_text);
    };
    refused({"--no-core"}, "--core-url");
    refused({"--chain-rpc", "dogechain=http://x.example"}, "dogechain");
    refused({"--chain-rpc", "ethereum"}, "NAME=URL");
    refused({"--triggers-listen", "nowhere"}, "HOST:PORT");
    refused({"--trigger-sync", "sometimes"}, "full or normal");
    const finished_run usage = run_to_exit({"issue-token", "--user", "x"});
    CHECK(usage.status.code == 2);
  }
}

// Acknowledged means durable: webhooks keep arriving from several threads while the server is
// killed with SIGKILL; after a restart on the same data directory, every webhook that got a 202
// has exactly one run, and every run (including those cut off mid-call) finishes.
TEST_CASE("triggers: SIGKILL during a webhook flood loses nothing acknowledged") {
  temp_dir dir;
  const std::string data = dir.path() + "/data";
  const std::string token = issue_token(data, "alice");
  std::string trigger_id;
  std::vector<std::string> acked;
  size_t refused = 0;
  {
    // The flood is the point here: no per-address limit, and the trigger's limits at their top.
    server_process srv({"--dev", "--sandbox-workers", "2", "--webhook-rate", "0"}, data);
    http_client c = srv.client();
    const core_side core = setup_core(c, {kTrivialCode}, 1500);
    api_user alice(srv.port(), token);
    json::object hook = webhook_body(core.cids.at(std::string(kTrivialCode)), core.key.value);
    hook["max_runs_per_minute"] = 6000;
    hook["max_queued_runs"] = 10000;
    const response t = alice.post("/api/triggers", hook);
    ITEST_REQUIRE_STATUS(t, 201);
    trigger_id = s_of(t.body, "id");

    constexpr int kThreads = 8, kEach = 125;  // 1,000 webhooks
    std::atomic<int> answered{0};
    std::mutex mu;
    std::vector<std::thread> senders;
    for (int k = 0; k < kThreads; ++k) {
      senders.emplace_back([&, k] {
        http_client hc("127.0.0.1", srv.port(), true);
        for (int i = 0; i < kEach; ++i) {
          const response r =
              hc.request("POST", "/webhook/" + trigger_id, json::serialize(json::value{{"k", k}, {"i", i}}));
          std::lock_guard lock(mu);
          if (r.status == 202)
            acked.push_back(s_of(r.body, "run_id"));
          else
            ++refused;  // no answer: the server is gone
          ++answered;
        }
      });
    }
    // Midway: once a third of the webhooks were answered.
    while (answered < kThreads * kEach / 3)
      std::this_thread::sleep_for(1ms);
    REQUIRE(::kill(srv.pid(), SIGKILL) == 0);
    for (auto& s : senders)
      s.join();
    const exit_status st = srv.stop();
    CHECK(st.signal == SIGKILL);
  }
  MESSAGE(acked.size() << " webhooks acknowledged before the kill, " << refused << " not");
  REQUIRE(acked.size() >= 300);
  REQUIRE(refused > 0);  // the kill did land midway

  server_process srv({"--dev", "--sandbox-workers", "2"}, data);
  api_user alice(srv.port(), token);
  std::map<std::string, std::string> status;  // run id → status
  const auto deadline = steady::now() + 240s;
  for (;;) {
    status.clear();
    for (uint64_t offset = 0;; offset += 100) {
      const response page =
          alice.get("/api/triggers/" + trigger_id + "/runs?limit=100&offset=" + std::to_string(offset));
      REQUIRE_MESSAGE(page.status == 200, page.describe());
      const auto& items = page.obj().at("items").as_array();
      for (const auto& r : items)
        status[s_of(r, "id")] = s_of(r, "status");
      if (items.size() < 100)
        break;
    }
    const bool done = std::all_of(status.begin(), status.end(),
                                  [](const auto& kv) { return kv.second == "success" || kv.second == "failed"; });
    if (done || steady::now() > deadline)
      break;
    std::this_thread::sleep_for(200ms);
  }
  std::set<std::string> unique(acked.begin(), acked.end());
  CHECK(unique.size() == acked.size());  // one run id per 202
  size_t missing = 0, unfinished = 0;
  for (const auto& id : acked)
    missing += status.contains(id) ? 0 : 1;
  for (const auto& [id, s] : status)
    unfinished += s == "success" ? 0 : 1;
  CHECK(missing == 0);
  CHECK(unfinished == 0);
  // Runs beyond the acknowledged ones are webhooks committed whose answer the kill cut off.
  CHECK(status.size() >= acked.size());
  CHECK(status.size() <= acked.size() + refused);
}

}  // namespace enact::itest
