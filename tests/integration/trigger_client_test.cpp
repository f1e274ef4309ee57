// SPDX-License-Identifier: Apache-2.0
// The SDK's typed trigger client against the real enact-server (docs/protocol.md §4): an account, a usage
// key and an action set up through the core client, then every call of the trigger client — a
// webhook trigger fired and its run awaited (the action echoes the event), list/get/update/
// enable/disable/delete, schedule and chain-event configs round-tripping, and the server's errors
// (401, 404, 400, 409) arriving as enact::api_error with their code, status and request id. The
// token handshake's polling, and wire details a real server does not provoke (retries, malformed
// answers, a credential quoted back), run against small in-process fakes.
#include <doctest/doctest.h>
#include <httplib.h>

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "enact/client/api_error.hpp"
#include "enact/client/core_client.hpp"
#include "enact/client/trigger_client.hpp"
#include "enact/codec/base64.hpp"
#include "enact/codec/hex.hpp"
#include "enact/crypto/keccak.hpp"
#include "enact/crypto/sha2.hpp"
#include "client_support.hpp"
#include "server_process.hpp"
#include "steps.hpp"

using namespace enact;
using enact::client::trigger_client;
using enact::itest::expect_api_error;
using enact::itest::options_for;
using enact::itest::serving;

namespace {

namespace json = boost::json;
using namespace std::chrono_literals;

/// `enact-server issue-token` for `user` in `data_dir`, as the client holds it.
Secret issue_token(const std::string& data_dir, const std::string& user) {
  return Secret(as_bytes(itest::issue_token(data_dir, user)));
}

constexpr std::string_view kEchoCode = "Enact.setResponse(params.event);\n";

/// An account with credits, the echo action in a group, and a usage key that may execute it.
struct core_setup {
  std::string cid;
  Secret usage_key;
};

core_setup setup_core(int port) {
  client::core_client anonymous(options_for(port));
  auto created = anonymous.new_account({"trigger client", std::nullopt, std::nullopt});
  client::core_client owner(options_for(port), created.api_key.clone());
  const auto intent = owner.create_payment_intent(500);
  (void)owner.confirm_payment(intent.payment_intent_id);
  const auto up = owner.upload_action(kEchoCode);
  const auto g = owner.add_group({"hooks", std::nullopt, {}, {up.hashed_cid}});
  client::usage_key_spec spec;
  spec.name = "trigger runner";
  spec.permissions.execute_in_groups = {g.group_id};
  auto key = owner.add_usage_api_key(spec);
  return {up.action_ipfs_cid, std::move(key.usage_api_key)};
}

client::new_trigger webhook_trigger(const core_setup& core, std::string name) {
  client::new_trigger t;
  t.name = std::move(name);
  t.action_ipfs_cid = core.cid;
  t.usage_api_key = core.usage_key.clone();
  t.config = client::webhook_config{};
  return t;
}

}  // namespace

TEST_CASE("trigger client: a webhook trigger's life against enact-server") {
  itest::temp_dir dir;
  const std::string data = dir.path() + "/data";
  Secret token = issue_token(data, "alice");
  const std::string token_text(as_chars(token.view()));
  itest::server_process server({"--dev", "--sandbox-workers", "2"}, data);
  const core_setup core = setup_core(server.port());
  trigger_client alice(options_for(server.port()), token.clone());
  CHECK(alice.has_token());

  const client::token_info who = alice.me();
  CHECK(who.user_id == "alice");
  CHECK(!who.token_expires_at.empty());

  // Create: the answer carries the key's hash, never the key.
  const client::trigger made = alice.create(webhook_trigger(core, "deploys"));
  CHECK(made.id.rfind("trg_", 0) == 0);
  CHECK(made.id.size() == 4 + 32);
  CHECK(made.type == client::trigger_type::webhook);
  CHECK(made.name == "deploys");
  CHECK(made.enabled);
  CHECK(made.action_ipfs_cid == core.cid);
  CHECK(!made.pkp_id);
  CHECK(made.usage_api_key_hash == crypto::keccak256(as_chars(core.usage_key.view())));
  CHECK(std::holds_alternative<client::webhook_config>(made.config));
  CHECK(made.webhook_url == "http://127.0.0.1:" + std::to_string(server.port()) + "/webhook/" + made.id);
  CHECK(!made.created_at.empty());

  // Fire, wait: the action echoed the event, and the params carry the sender's header.
  trigger_client sender(options_for(server.port()));  // the webhook needs no token
  client::webhook_request w;
  w.body = R"({"ref": "main", "commits": [1, 2]})";
  w.headers = {{"X-Hub-Signature-256", "sha256=00ff"}};
  const std::string run_id = sender.fire_webhook(made.id, w);
  CHECK(run_id.rfind("run_", 0) == 0);
  const client::run r = alice.wait_for_run(run_id, 30s);
  INFO(json::serialize(r.params));
  CHECK(r.status == client::run_status::success);
  CHECK(r.finished());
  CHECK(r.id == run_id);
  CHECK(r.trigger_id == made.id);
  CHECK(r.attempts == 1);
  CHECK(r.response == json::parse(w.body));
  CHECK(!r.error);
  CHECK(r.params.at("event") == json::parse(w.body));
  CHECK(r.params.at("event_raw") == json::value(w.body));
  CHECK(r.params.at("headers").at("x-hub-signature-256") == "sha256=00ff");
  CHECK(!r.queued_at.empty());
  CHECK(!r.finished_at.empty());
  const client::run again = alice.get_run(run_id);
  CHECK(again.status == client::run_status::success);

  // A text body stays text.
  client::webhook_request text;
  text.body = "plain words";
  text.content_type = "text/plain";
  const client::run tr = alice.wait_for_run(sender.fire_webhook(made.id, text), 30s);
  CHECK(tr.status == client::run_status::success);
  CHECK(tr.params.at("event") == "plain words");

  const auto runs = alice.runs(made.id);
  CHECK(runs.total == 2);
  REQUIRE(runs.items.size() == 2);
  CHECK(runs.items[1].id == run_id);  // newest first
  CHECK(alice.runs(made.id, 1, 1).items.at(0).id == run_id);

  // A schedule and a chain-event trigger: their configs round-trip through the typed structs.
  client::new_trigger sched = webhook_trigger(core, "nightly");
  sched.config = client::schedule_config{"0 3 * * *", "UTC"};
  sched.enabled = false;
  const client::trigger s = alice.create(sched);
  CHECK(s.type == client::trigger_type::schedule);
  CHECK(!s.enabled);
  CHECK(s.webhook_url.empty());
  CHECK(std::get<client::schedule_config>(s.config) == client::schedule_config{"0 3 * * *", "UTC"});

  // List, oldest first, paged.
  const auto all = alice.list();
  CHECK(all.total == 2);
  REQUIRE(all.items.size() == 2);
  CHECK(all.items[0].id == made.id);
  CHECK(all.items[1].id == s.id);
  const auto second = alice.list(1, 1);
  CHECK(second.total == 2);
  REQUIRE(second.items.size() == 1);
  CHECK(second.items[0].id == s.id);
  CHECK(alice.get(s.id).name == "nightly");

  // Update (patch): only the given fields change.
  client::trigger_patch p;
  p.name = "every six hours";
  p.config = client::schedule_config{"0 */6 * * *", "UTC"};
  const client::trigger patched = alice.update(s.id, p);
  CHECK(patched.name == "every six hours");
  CHECK(std::get<client::schedule_config>(patched.config).cron == "0 */6 * * *");
  CHECK(!patched.enabled);
  CHECK(patched.action_ipfs_cid == core.cid);
  CHECK(alice.enable(s.id).enabled);
  CHECK(!alice.disable(s.id).enabled);

  // A disabled webhook answers 409, enabled again it accepts.
  CHECK(!alice.disable(made.id).enabled);
  const api_error disabled = expect_api_error([&] { (void)sender.fire_webhook(made.id, w); });
  CHECK(disabled.errc() == api_errc::conflict);
  CHECK(disabled.status() == 409);
  CHECK(alice.enable(made.id).enabled);
  CHECK(!sender.fire_webhook(made.id, w).empty());

  SUBCASE("typed errors: 401, 404, 400") {
    // No token, and a token nobody issued.
    trigger_client nobody(options_for(server.port()));
    const api_error none = expect_api_error([&] { (void)nobody.me(); });
    CHECK(none.errc() == api_errc::unauthenticated);
    CHECK(none.status() == 401);
    CHECK(!none.request_id().empty());
    std::array<uint8_t, 32> raw{};
    raw.fill(7);
    trigger_client stranger(options_for(server.port()), Secret(as_bytes(codec::base64::encode_url(raw))));
    const api_error bad_token = expect_api_error([&] { (void)stranger.list(); });
    CHECK(bad_token.errc() == api_errc::unauthenticated);
    CHECK(std::string(bad_token.what()).find(codec::base64::encode_url(raw)) == std::string::npos);

    // Another user's trigger is not found, like an unknown one.
    trigger_client bob(options_for(server.port()), issue_token(data, "bob"));
    for (const std::string& id : {made.id, "trg_" + std::string(32, '0')}) {
      CAPTURE(id);
      const api_error e = expect_api_error([&] { (void)bob.get(id); });
      CHECK(e.errc() == api_errc::not_found);
      CHECK(e.status() == 404);
    }
    CHECK(expect_api_error([&] { bob.remove(made.id); }).errc() == api_errc::not_found);
    CHECK(expect_api_error([&] { (void)bob.runs(made.id); }).errc() == api_errc::not_found);
    CHECK(expect_api_error([&] { (void)bob.get_run(run_id); }).errc() == api_errc::not_found);
    CHECK(expect_api_error([&] { (void)sender.fire_webhook("trg_" + std::string(32, 'a'), w); }).errc() ==
          api_errc::not_found);
    // An id that is no path segment is escaped, not sent as a path.
    CHECK(expect_api_error([&] { (void)alice.get("../me"); }).errc() == api_errc::not_found);

    // 400: bad cron, a schedule under 30 s, bad limit, a config of the wrong type, an unknown
    // chain. The usage key never appears in the message.
    struct bad_case {
      const char* what;
      client::trigger_config config;
    };
    const bad_case cases[] = {
        {"cron syntax", client::schedule_config{"not a cron", "UTC"}},
        {"interval under 30 s", client::schedule_config{"*/10 * * * * *", "UTC"}},
        {"time zone", client::schedule_config{"0 3 * * *", "Europe/Paris"}},
        {"chain without RPC",
         client::chain_event_config{"ethereum",
                                    address{},
                                    "Transfer(address indexed from, address indexed to, uint256 value)",
                                    std::nullopt,
                                    {},
                                    std::nullopt}},
    };
    for (const auto& c : cases) {
      CAPTURE(c.what);
      client::new_trigger t = webhook_trigger(core, "bad");
      t.config = c.config;
      const api_error e = expect_api_error([&] { (void)alice.create(t); });
      CHECK(e.errc() == api_errc::invalid_request);
      CHECK(e.status() == 400);
      CHECK(std::string(e.what()).find(as_chars(core.usage_key.view())) == std::string::npos);
    }
    const api_error limit = expect_api_error([&] { (void)alice.list(101); });
    CHECK(limit.errc() == api_errc::invalid_request);
    CHECK(std::string(limit.what()).find("limit") != std::string::npos);
    client::trigger_patch wrong;
    wrong.config = client::schedule_config{"0 3 * * *", "UTC"};
    CHECK(expect_api_error([&] { (void)alice.update(made.id, wrong); }).errc() == api_errc::invalid_request);
    // Nothing was created by the refused calls.
    CHECK(alice.list().total == 2);
  }

  SUBCASE("delete: the trigger and its runs are gone") {
    alice.remove(made.id);
    CHECK(expect_api_error([&] { (void)alice.get(made.id); }).errc() == api_errc::not_found);
    CHECK(expect_api_error([&] { (void)alice.get_run(run_id); }).errc() == api_errc::not_found);
    CHECK(expect_api_error([&] { alice.remove(made.id); }).errc() == api_errc::not_found);
    const auto left = alice.list();
    CHECK(left.total == 1);
    CHECK(left.items.at(0).id == s.id);
  }

  // No answer the client decoded ever held the usage key; what a trigger carries is its hash.
  CHECK(made.usage_api_key_hash != hash256{});
  CHECK(server.stop().clean());
}

TEST_CASE("trigger client: login polls /auth/token until approved, and stops on a refusal") {
  // A fake of the token endpoint: `authorization_pending` for the first two polls, then the
  // outcome the subcase chose. It also checks the challenge against the token, as a server does.
  struct fake_state {
    std::atomic<int> polls{0};
    std::string outcome;  // "approved", "access_denied", "expired_token"
    std::atomic<bool> challenge_ok{true};
  } st;
  httplib::Server fake;
  fake.Post("/auth/token", [&](const httplib::Request& req, httplib::Response& res) {
    const json::value b = json::parse(req.body);
    const std::string challenge(b.at("challenge").as_string());
    const std::string token(b.at("token").as_string());
    const auto raw = codec::base64::decode_url(token);
    if (!raw || raw->size() != 32 || codec::base64::encode_url(crypto::sha256(*raw)) != challenge)
      st.challenge_ok = false;
    const int n = ++st.polls;
    if (n <= 2 || st.outcome.empty()) {
      res.status = 400;
      res.set_content(R"({"error":{"code":"authorization_pending","message":"not yet approved"}})", "application/json");
    } else if (st.outcome == "approved") {
      res.status = 200;
      res.set_content(R"({"status":"approved"})", "application/json");
    } else {
      res.status = st.outcome == "access_denied" ? 403 : 400;
      res.set_content(R"({"error":{"code":")" + st.outcome + R"(","message":"no"}})", "application/json");
    }
  });
  fake.Get("/api/me", [&](const httplib::Request&, httplib::Response& res) {
    res.set_content(R"({"user_id":"fake","token_expires_at":"2030-01-01T00:00:00.000Z"})", "application/json");
  });
  const serving served(fake);
  const int port = served.port();

  std::vector<std::chrono::milliseconds> slept;
  client::client_options ftp;
  ftp.base_url = "ftp://x";
  CHECK(expect_api_error([&] { trigger_client bad(ftp); }).errc() == api_errc::invalid_request);
  client::client_options o = options_for(port, slept);
  trigger_client c(o);

  const client::pending_login p = c.start_login("my laptop & co");
  CHECK(p.token.size() == 43);
  CHECK(p.challenge.size() == 43);
  const auto raw = codec::base64::decode_url(as_chars(p.token.view())).value();
  CHECK(p.challenge == codec::base64::encode_url(crypto::sha256(raw)));
  CHECK(p.authorize_url == "http://127.0.0.1:" + std::to_string(port) + "/auth/authorize?challenge=" + p.challenge +
                               "&client=my%20laptop%20%26%20co");
  // The token is not in the URL.
  CHECK(p.authorize_url.find(as_chars(p.token.view())) == std::string::npos);
  // Two logins draw two tokens.
  CHECK(c.start_login("x").challenge != p.challenge);

  SUBCASE("approved on the third poll") {
    st.outcome = "approved";
    CHECK(!c.has_token());
    Secret token = c.finish_login(p, {.timeout = 60s, .interval = 1500ms});
    CHECK(token == p.token);
    CHECK(c.has_token());
    CHECK(st.polls == 3);
    CHECK(slept == std::vector<std::chrono::milliseconds>{1500ms, 1500ms});
    CHECK(st.challenge_ok);
    CHECK(c.me().user_id == "fake");
  }
  SUBCASE("denied and expired are thrown with the server's code") {
    for (const char* outcome : {"access_denied", "expired_token"}) {
      CAPTURE(outcome);
      st.polls = 0;
      st.outcome = outcome;
      const api_error e = expect_api_error([&] { (void)c.finish_login(p, {}); });
      CHECK(e.code_name() == outcome);
      CHECK(st.polls == 3);
      CHECK(std::string(e.what()).find(as_chars(p.token.view())) == std::string::npos);
    }
    CHECK(!c.has_token());
  }
  SUBCASE("still pending at the deadline: timeout") {
    st.outcome.clear();
    const api_error e = expect_api_error([&] { (void)c.finish_login(p, {.timeout = 0ms}); });
    CHECK(e.errc() == api_errc::timeout);
    CHECK(st.polls == 1);
  }
}

TEST_CASE("trigger client: wire details against a fake service") {
  // What the fake saw, and what it answers next.
  struct seen_request {
    std::string method;
    std::string path;
    std::string authorization;
    std::string body;
  };
  std::mutex mu;
  std::vector<seen_request> seen;
  std::atomic<int> me_failures{2};
  const std::string token_text = codec::base64::encode_url(std::array<uint8_t, 32>{1, 2, 3});
  const std::string topic_a = "0x" + std::string(64, 'a');
  const std::string topic_b = "0x" + std::string(64, 'b');
  const std::string topic_c = "0x" + std::string(64, 'c');

  httplib::Server fake;
  auto record = [&](const httplib::Request& req) {
    std::lock_guard lock(mu);
    seen.push_back({req.method, req.path, req.get_header_value("Authorization"), req.body});
  };
  auto error = [](httplib::Response& res, int status, const std::string& code, const std::string& message) {
    res.status = status;
    res.set_content(json::serialize(json::object{{"error", json::object{{"code", code}, {"message", message}}}}),
                    "application/json");
  };
  fake.Get("/api/me", [&](const httplib::Request& req, httplib::Response& res) {
    record(req);
    if (me_failures-- > 0)
      return error(res, 503, "unavailable", "busy");
    res.set_content(R"({"user_id":"u","token_expires_at":"2030-01-01T00:00:00.000Z"})", "application/json");
  });
  fake.Post("/api/triggers", [&](const httplib::Request& req, httplib::Response& res) {
    record(req);
    error(res, 503, "unavailable", "busy");
  });
  fake.Get("/api/triggers/malformed", [&](const httplib::Request& req, httplib::Response& res) {
    record(req);
    res.set_content(R"({"id": 5})", "application/json");
  });
  fake.Get("/api/triggers/chain", [&](const httplib::Request& req, httplib::Response& res) {
    record(req);
    const json::value t{{"id", "trg_c"},
                        {"type", "chain-event"},
                        {"name", "c"},
                        {"enabled", true},
                        {"action_ipfs_cid", "QmX"},
                        {"pkp_id", "0x00000000000000000000000000000000000000b2"},
                        {"usage_api_key_hash", topic_a},
                        {"config",
                         {{"chain", "svc"},
                          {"contract", "0x00000000000000000000000000000000000000a1"},
                          {"event", "Transfer(address indexed from, address indexed to, uint256 value)"},
                          {"start_block", "0x10"},
                          {"topic_filters", json::array{nullptr, json::value(topic_b),
                                                        json::array{json::value(topic_b), json::value(topic_c)}}},
                          {"confirmations", 12}}},
                        {"created_at", "2030-01-01T00:00:00.000Z"},
                        {"updated_at", "2030-01-01T00:00:00.000Z"}};
    res.set_content(json::serialize(t), "application/json");
  });
  fake.Get("/api/runs/echo", [&](const httplib::Request& req, httplib::Response& res) {
    record(req);
    // A server that quotes the credential back: the client must not pass it on.
    error(res, 400, "invalid_request", "bad token " + token_text);
  });
  fake.Delete("/api/triggers/gone", [&](const httplib::Request& req, httplib::Response& res) {
    record(req);
    res.status = 204;
  });
  fake.Post(R"(/webhook/(.+))", [&](const httplib::Request& req, httplib::Response& res) {
    record(req);
    res.status = 202;
    res.set_content(R"({"run_id":"run_1"})", "application/json");
  });
  const serving served(fake);
  const int port = served.port();

  std::vector<std::chrono::milliseconds> slept;
  client::client_options o = options_for(port, slept);
  trigger_client c(o, Secret(as_bytes(token_text)));

  // GETs are retried on 503; the bearer token travels in Authorization.
  CHECK(c.me().user_id == "u");
  CHECK(slept.size() == 2);
  {
    std::lock_guard lock(mu);
    REQUIRE(seen.size() == 3);
    for (const auto& s : seen)
      CHECK(s.authorization == "Bearer " + token_text);
    seen.clear();
  }

  // A POST is sent once, and the usage key it carried is in its body only.
  client::new_trigger nt;
  nt.name = "n";
  nt.action_ipfs_cid = "QmX";
  nt.usage_api_key = Secret(as_bytes(std::string_view("usage-key-text")));
  nt.config = client::schedule_config{"0 3 * * *"};
  const api_error busy = expect_api_error([&] { (void)c.create(nt); });
  CHECK(busy.errc() == api_errc::unavailable);
  CHECK(busy.status() == 503);
  {
    std::lock_guard lock(mu);
    REQUIRE(seen.size() == 1);
    const json::value body = json::parse(seen[0].body);
    CHECK(body == json::parse(R"({"type":"schedule","name":"n","enabled":true,"action_ipfs_cid":"QmX",
                                  "config":{"cron":"0 3 * * *","timezone":"UTC"},"usage_api_key":"usage-key-text"})"));
    seen.clear();
  }

  // An answer without the promised fields is bad_response naming the field.
  const api_error malformed = expect_api_error([&] { (void)c.get("malformed"); });
  CHECK(malformed.errc() == api_errc::bad_response);
  CHECK(malformed.status() == 200);
  CHECK(std::string(malformed.what()).find("id: expected a string") != std::string::npos);

  // A chain-event config decodes into the typed struct (hex start block, the three filter forms).
  const client::trigger chain = c.get("chain");
  CHECK(chain.type == client::trigger_type::chain_event);
  REQUIRE(chain.pkp_id);
  CHECK(codec::hex::encode_prefixed(*chain.pkp_id) == "0x00000000000000000000000000000000000000b2");
  const auto& ce = std::get<client::chain_event_config>(chain.config);
  CHECK(ce.chain == "svc");
  CHECK(ce.start_block == 16u);
  CHECK(ce.confirmations == 12u);
  REQUIRE(ce.topic_filters.size() == 3);
  CHECK(ce.topic_filters[0].empty());
  CHECK(ce.topic_filters[1].size() == 1);
  CHECK(ce.topic_filters[2].size() == 2);
  CHECK(codec::hex::encode_prefixed(ce.topic_filters[2][1]) == topic_c);
  CHECK(chain.webhook_url.empty());

  // The token quoted back by a server is scrubbed from the error.
  const api_error echoed = expect_api_error([&] { (void)c.get_run("echo"); });
  CHECK(echoed.errc() == api_errc::invalid_request);
  CHECK(std::string(echoed.what()).find(token_text) == std::string::npos);
  CHECK(echoed.message() == "bad token [redacted]");

  // 204 without a body; a webhook carries no token and its id is one escaped path segment.
  c.remove("gone");
  client::webhook_request w;
  w.body = "x";
  w.content_type = "text/plain";
  w.headers = {{"X-Sig", "1"}};
  CHECK(c.fire_webhook("a/b c", w) == "run_1");
  {
    std::lock_guard lock(mu);
    REQUIRE(seen.size() == 5);
    CHECK(seen[3].method == "DELETE");
    CHECK(seen[4].authorization.empty());
    CHECK(seen[4].body == "x");
  }
  // A header that would split the request is refused before anything is sent.
  w.headers = {{"X-Sig", "1\r\nX-Evil: 1"}};
  CHECK(expect_api_error([&] { (void)c.fire_webhook("id", w); }).errc() == api_errc::invalid_request);
  CHECK(expect_api_error([&] { (void)c.get(""); }).errc() == api_errc::invalid_request);
}
