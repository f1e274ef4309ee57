// SPDX-License-Identifier: Apache-2.0
// The trigger service's pure parts: the params a webhook's action sees, bearer tokens, the retry
// backoff, the configuration keys, sealing usage keys with the (simulated) TEE, and the management
// API's requests as the client writes and the service reads them.
#include <doctest/doctest.h>

#include <filesystem>
#include <random>

#include "enact/client/api_error.hpp"
#include "enact/codec/base64.hpp"
#include "enact/crypto/sha2.hpp"
#include "support.hpp"
#include "tee/tee.hpp"
#include "triggers/pg_store.hpp"
#include "triggers/seal.hpp"
#include "triggers/settings.hpp"
#include "triggers/sqlite_store.hpp"
#include "triggers/tokens.hpp"
#include "triggers/validate.hpp"
#include "triggers/webhook.hpp"
#include "triggers/worker.hpp"

namespace enact::triggers::test {
namespace {

using namespace std::chrono_literals;
using headers = std::vector<std::pair<std::string, std::string>>;

using enact::test::temp_dir;

const time_point t0 = time_point{std::chrono::sys_days{std::chrono::year{2024} / 5 / 1}.time_since_epoch()};

}  // namespace

TEST_CASE("webhook params: event, event_raw and its encoding") {
  struct case_ {
    const char* what;
    std::string body;
    const char* content_type;
    json::value event;
    json::value raw;
    bool base64;
  };
  const std::string deep_ok = std::string(27, '[') + std::string(27, ']');   // 27 levels
  const std::string too_deep = std::string(29, '[') + std::string(29, ']');  // 29 levels
  const std::string bytes_in("\x80\x81 not utf-8", 13);
  const case_ cases[] = {
      {"JSON object", R"({"a": [1, 2]})", "application/json", json::parse(R"({"a":[1,2]})"), R"({"a": [1, 2]})", false},
      {"JSON without content type", "42", "", json::value(42), "42", false},
      {"JSON under another type", "true", "application/x-www-form-urlencoded", json::value(true), "true", false},
      {"invalid JSON is text", "{nope", "application/json", json::value("{nope"), "{nope", false},
      {"text/plain stays text", "[1]", "text/plain", json::value("[1]"), "[1]", false},
      {"TEXT/PLAIN with parameters", "[1]", " Text/Plain ; charset=utf-8", json::value("[1]"), "[1]", false},
      {"empty body", "", "application/json", json::value(""), "", false},
      {"27 levels stay JSON", deep_ok, "application/json", json::parse(deep_ok), json::value(deep_ok), false},
      {"29 levels are text", too_deep, "application/json", json::value(too_deep), json::value(too_deep), false},
      {"not UTF-8", bytes_in, "application/octet-stream", nullptr,
       json::value(codec::base64::encode(as_bytes(bytes_in))), true},
      {"overlong UTF-8", "\xc0\xaf", "text/plain", nullptr,
       json::value(codec::base64::encode(as_bytes(std::string("\xc0\xaf")))), true},
      {"a lone surrogate", "\xed\xa0\x80", "text/plain", nullptr,
       json::value(codec::base64::encode(as_bytes(std::string("\xed\xa0\x80")))), true},
  };
  for (const auto& c : cases) {
    CAPTURE(c.what);
    const json::object p = webhook_params(c.body, c.content_type, {});
    CHECK(p.at("event") == c.event);
    CHECK(p.at("event_raw") == c.raw);
    CHECK(p.contains("event_raw_encoding") == c.base64);
    if (c.base64) {
      CHECK(p.at("event_raw_encoding") == "base64");
      CHECK(codec::base64::decode(p.at("event_raw").as_string()).value() == bytes(c.body.begin(), c.body.end()));
    }
    CHECK(p.size() == (c.base64 ? 4u : 3u));
  }
}

TEST_CASE("webhook params: headers lowercased, joined, credentials stripped") {
  const headers in = {
      {"Content-Type", "application/json"},
      {"X-Hub-Signature-256", "sha256=ab"},
      {"Authorization", "Bearer s3cret"},
      {"COOKIE", "a=b"},
      {"Set-Cookie", "c=d"},
      {"x-api-key", "k"},
      {"Proxy-Authorization", "Basic x"},
      {"REMOTE_ADDR", "127.0.0.1"},
      {"REMOTE_PORT", "5555"},
      {"LOCAL_ADDR", "127.0.0.1"},
      {"LOCAL_PORT", "80"},
      {"X-Multi", "one"},
      {"x-multi", "two"},
      {"X-Bytes", std::string("\xff ok", 4)},
      {"Stripe-Signature", "t=1,v1=abc"},
  };
  const json::object p = webhook_params("{}", "application/json", in);
  const json::object want{{"content-type", "application/json"},
                          {"x-hub-signature-256", "sha256=ab"},
                          {"x-multi", "one, two"},
                          {"x-bytes", "\xef\xbf\xbd ok"},  // U+FFFD for the byte that is not UTF-8
                          {"stripe-signature", "t=1,v1=abc"}};
  CHECK(p.at("headers") == want);
}

TEST_CASE("tokens: issue, authenticate, refuse") {
  temp_dir dir{"enact-trigsvc", true};
  auto s = sqlite_store::open(dir.str() + "/triggers.sqlite").value();
  const issued_token t = issue_token(*s, "alice", "test", t0).value();
  CHECK(t.token.size() == 43);
  CHECK(t.record.expires_at == t0 + 720h);
  // The stored hash is sha256 of the token's bytes: base64url(hash) is the handshake's challenge.
  CHECK(t.record.hash == crypto::sha256(codec::base64::decode_url(t.token).value()));
  CHECK(token_hash(t.token) == std::optional<hash256>(t.record.hash));

  const auto ok = authenticate(*s, "Bearer " + t.token, t0 + 1h);
  REQUIRE(ok.has_value());
  CHECK(ok->user_id == "alice");

  const issued_token other = issue_token(*s, "bob", "test", t0).value();
  CHECK(other.token != t.token);
  struct case_ {
    const char* what;
    std::string header;
    time_point now;
  };
  const case_ refused[] = {
      {"missing", "", t0},
      {"no Bearer", t.token, t0},
      {"lowercase bearer", "bearer " + t.token, t0},
      {"too short", "Bearer " + t.token.substr(1), t0},
      {"not base64url", "Bearer " + std::string(42, 'A') + "+", t0},
      {"unknown", "Bearer " + std::string(42, 'A') + "A", t0},
      {"expired", "Bearer " + t.token, t0 + 720h},
  };
  for (const auto& c : refused) {
    CAPTURE(c.what);
    const auto r = authenticate(*s, c.header, c.now);
    REQUIRE(!r);
    CHECK(r.code() == api_errc::unauthenticated);
    CHECK(r.err().message.find(t.token) == std::string::npos);
  }
  REQUIRE(s->revoke_token(t.record.hash, "alice").has_value());
  CHECK(authenticate(*s, "Bearer " + t.token, t0).code() == api_errc::unauthenticated);
  CHECK(authenticate(*s, "Bearer " + other.token, t0).has_value());
}

TEST_CASE("retry backoff: exponential, jittered in the upper half, capped") {
  struct case_ {
    uint32_t attempts;
    int64_t low, high;
  };
  const case_ cases[] = {{1, 500, 1000}, {2, 1000, 2000}, {3, 2000, 4000}, {10, 30000, 60000}, {40, 30000, 60000}};
  for (const auto& c : cases) {
    CAPTURE(c.attempts);
    for (int i = 0; i < 200; ++i) {
      const auto d = retry_backoff(1000ms, c.attempts, 60000ms).count();
      CHECK(d >= c.low);
      CHECK(d <= c.high);
    }
  }
  CHECK(retry_backoff(0ms, 2, 60000ms) == 0ms);
}

TEST_CASE("retries: 3 retries after the first attempt, 4 attempts in all") {
  // The specification's "retried up to 3 times" counts retries, not attempts: the workers and the
  // store's lease expiry both allow the first attempt and three more.
  CHECK(kMaxRunRetries == 3);
  CHECK(worker_config{}.max_attempts == 4);
  CHECK(lease_request{}.max_attempts == 4);
}

TEST_CASE("webhook params: the run request they make, against the core's run_action limit") {
  // A plain text body travels twice (event and event_raw): about 159 KiB is the most that fits.
  const auto bytes = [](size_t n) {
    return run_request_bytes(webhook_params(std::string(n, 'x'), "text/plain", {}));
  };
  CHECK(kCoreRunRequestLimit == 320u << 10);
  CHECK(bytes(0) < 2048);
  CHECK(bytes(150 << 10) <= kCoreRunRequestLimit);
  CHECK(bytes(160 << 10) > kCoreRunRequestLimit);
  CHECK(bytes(160 << 10) >= 2 * (160u << 10) + kRunRequestOverhead);
}

TEST_CASE("settings: trigger keys of the config file and flags") {
  settings s;
  const auto apply = [&](const char* key, json::value v) {
    return apply_setting(s, key, v, key);
  };
  CHECK(!apply("listen", "x"));  // not a trigger setting
  CHECK(!apply("chain.chain_id", 1));
  REQUIRE(apply("triggers.workers", 8));
  CHECK(s.workers == 8);
  REQUIRE(apply("triggers.workers", "2")->has_value());  // a flag's text
  CHECK(s.workers == 2);
  REQUIRE(apply("triggers.core_url", "http://core.example:8080/")->has_value());
  CHECK(s.core_url == "http://core.example:8080");
  REQUIRE(apply("chain_rpc", "ethereum=https://eth.example")->has_value());
  REQUIRE(apply("chain_rpc.polygon", "https://polygon.example")->has_value());
  CHECK(s.chain_rpc == std::map<std::string, std::string>{{"ethereum", "https://eth.example"},
                                                          {"polygon", "https://polygon.example"}});
  REQUIRE(apply("triggers.enabled", false)->has_value());
  CHECK(!s.enabled);
  REQUIRE(apply("triggers.listen", "0.0.0.0:8081")->has_value());
  CHECK(split_listen(s.listen) == std::optional<std::pair<std::string, int>>({"0.0.0.0", 8081}));
  REQUIRE(apply("triggers.sync", "normal")->has_value());
  CHECK(s.sync == "normal");
  CHECK(s.store_pool == pg_options{}.connections);
  REQUIRE(apply("triggers.store_pool", "40")->has_value());  // --trigger-store-pool's text
  CHECK(s.store_pool == 40);
  CHECK(s.run_retention_days == 30);  // docs/protocol.md §6 "Limits": 30 days unless set
  REQUIRE(apply("triggers.run_retention_days", 0)->has_value());
  CHECK(s.run_retention_days == 0);  // every run kept
  CHECK(s.max_triggers_per_user == 100);
  CHECK(s.creations_per_minute == 20);
  CHECK(s.disable_after_credit_failures == 5);
  REQUIRE(apply("triggers.max_triggers_per_user", "0")->has_value());
  CHECK(s.max_triggers_per_user == 0);
  REQUIRE(apply("triggers.creations_per_minute", 600)->has_value());
  CHECK(s.creations_per_minute == 600);
  REQUIRE(apply("triggers.disable_after_credit_failures", "2")->has_value());
  CHECK(s.disable_after_credit_failures == 2);
  REQUIRE(apply("triggers.core_max_body_bytes", 1 << 20)->has_value());
  CHECK(s.core_max_body_bytes == 1u << 20);

  struct bad {
    const char* key;
    json::value v;
    const char* words;
  };
  const bad bads[] = {
      {"triggers.workers", -1, "non-negative"},
      {"triggers.workers", 1000, "0 to 256"},
      {"triggers.core_url", "ftp://x", "http://"},
      {"triggers.listen", "8080", "HOST:PORT"},
      {"triggers.sync", "off", "full or normal"},
      {"triggers.lease_ms", 10, "at least"},
      {"triggers.core_max_body_bytes", 100, "at least 4096"},
      {"triggers.store_pool", 0, "1 to 1024"},
      {"triggers.run_retention_days", 40000, "0 to 36500"},
      {"triggers.max_triggers_per_user", -1, "non-negative"},
      {"triggers.creations_per_minute", 2000000, "0 to 1000000"},
      {"triggers.disable_after_credit_failures", "five", "non-negative"},
      {"triggers.store_pool", 5000, "1 to 1024"},
      {"chain_rpc", "ethereum", "NAME=URL"},
      {"chain_rpc", "doge=http://d.example", "doge"},
      {"chain_rpc.ethereum", "localhost:8545", "http://"},
      {"triggers.colour", "red", "unknown setting"},
  };
  for (const auto& b : bads) {
    CAPTURE(b.key);
    const auto r = apply(b.key, b.v);
    REQUIRE(r);
    REQUIRE(!r->has_value());
    CHECK(r->code() == api_errc::invalid_request);
    CHECK(r->err().message.find(b.words) != std::string::npos);
  }
}

TEST_CASE("usage keys are sealed by the TEE at their own path") {
  temp_dir dir{"enact-trigsvc", true};
  auto tee = tee::open_simulated(dir.str()).value();
  const std::string key = codec::base64::encode(bytes(32, 7));
  const bytes sealed = seal_usage_key(*tee, key).value();
  CHECK(sealed.size() == 12 + key.size() + 16);
  CHECK(std::string(as_chars(sealed)).find(key) == std::string::npos);
  CHECK(std::string(as_chars(unseal_usage_key(*tee, sealed).value().view())) == key);
  // No PKP's key can open it — not one at the sealing key's former path, under any account — nor
  // can another root (docs/protocol.md §1 "server keys").
  const hash256 former = crypto::keccak256(std::string_view("enact/triggers/usage-key-seal/v1"));
  CHECK(!tee->decrypt(crypto::keccak256(std::string_view("some other path")), former, sealed));
  CHECK(!tee->decrypt(hash256{}, former, sealed));
  temp_dir other_dir{"enact-trigsvc", true};
  auto other = tee::open_simulated(other_dir.str()).value();
  CHECK(!unseal_usage_key(*other, sealed));
  bytes tampered = sealed;
  tampered.back() ^= 1;
  CHECK(!unseal_usage_key(*tee, tampered));
}

TEST_CASE("trigger requests: what the client sends, the service reads back typed") {
  const std::string key = codec::base64::encode(bytes(32, 7));
  api::new_trigger nt;
  nt.name = "transfers";
  nt.action_ipfs_cid = "QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG";
  nt.usage_api_key = Secret(as_bytes(std::string_view(key)));
  api::chain_event_config ce;
  ce.chain = "svc";
  ce.contract[19] = 0xa1;
  ce.event = "Transfer(address indexed from, address indexed to, uint256 value)";
  ce.start_block = 16;
  ce.topic_filters = {{}, {hash256{}}};
  ce.confirmations = 12;
  nt.config = ce;
  nt.max_queued_runs = 5;

  const auto back = api::read<api::new_trigger>(json::value_from(nt));
  REQUIRE_MESSAGE(back, (back ? "" : back.err().message));
  CHECK(back->name == nt.name);
  CHECK(back->enabled);
  CHECK(back->action_ipfs_cid == nt.action_ipfs_cid);
  CHECK(as_chars(back->usage_api_key.view()) == key);
  CHECK(back->config == nt.config);
  CHECK(!back->max_runs_per_minute);
  CHECK(back->max_queued_runs == 5u);

  // A start block in hex is read as the number it names; the stored config is typed.
  json::value hex_start = json::value_from(nt);
  hex_start.as_object()["config"].as_object()["start_block"] = "0x10";
  CHECK(std::get<api::chain_event_config>(api::read<api::new_trigger>(hex_start)->config).start_block == 16u);

  // The service's words for what is wrong, with the field's path.
  struct bad {
    json::value body;
    const char* message;
  };
  const auto with = [&](std::string_view field, json::value v) {
    json::value b = json::value_from(nt);
    b.as_object()[field] = std::move(v);
    return b;
  };
  const auto with_config = [&](std::string_view field, json::value v) {
    json::value b = json::value_from(nt);
    b.as_object()["config"].as_object()[field] = std::move(v);
    return b;
  };
  const bad bads[] = {
      {with("colour", "red"), "body.colour: unknown field"},
      {with("type", "cron"), "body.type: required, one of webhook, schedule, chain-event"},
      {with("name", ""), "body.name: expected a non-empty string of at most 256 bytes"},
      {with("enabled", 1), "body.enabled: expected true or false"},
      {with("max_runs_per_minute", 0), "body.max_runs_per_minute: expected an integer from 1 to 6000"},
      {with("usage_api_key", "short"), "body.usage_api_key: expected a usage API key (standard base64 of 32 bytes)"},
      {with_config("chain", "mars"), "config.chain: 'mars' is not one of ethereum, svc, arbitrum, bsc, polygon"},
      {with_config("start_block", "12"),
       "config.start_block: expected a non-negative integer or a 0x-hex string of at most 16 digits"},
      {with_config("topic_filters", json::array{nullptr, nullptr, "0x" + std::string(64, '1')}),
       "config.topic_filters[2]: the event has 2 indexed parameters, so this topic never exists; use null"},
      {with_config("confirmations", 1001), "config.confirmations: expected an integer from 0 to 1000"},
  };
  for (const auto& b : bads) {
    const auto r = api::read<api::new_trigger>(b.body);
    REQUIRE(!r);
    CHECK(r.code() == api_errc::invalid_request);
    CHECK(r.err().message == b.message);
  }

  // A patch is read at the trigger's type: a schedule's config is no webhook's.
  api::trigger_patch p;
  p.enabled = false;
  p.pkp_id = std::optional<address>{};
  p.config = api::schedule_config{"0 * * * *", "UTC"};
  const json::value pj = json::value_from(p);
  CHECK(pj.at("pkp_id").is_null());
  const auto patch = api::read_trigger_patch(pj, api::trigger_type::schedule);
  REQUIRE(patch);
  CHECK(patch->enabled == false);
  CHECK(patch->pkp_id == std::optional<std::optional<address>>(std::optional<address>{}));
  CHECK(patch->config == p.config);
  CHECK(!patch->name);
  CHECK(api::read_trigger_patch(pj, api::trigger_type::webhook).err().message == "config.cron: unknown field");

  // The deployment's rules come on top: a chain without an RPC endpoint, a schedule too often.
  CHECK(check_config(ce, {}).err().message.starts_with("config.chain: this deployment has no RPC endpoint for svc"));
  CHECK(check_config(api::schedule_config{"* * * * * *", "UTC"}, {}).err().message.starts_with("config.cron: "));
}

}  // namespace enact::triggers::test
