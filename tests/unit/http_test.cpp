// SPDX-License-Identifier: Apache-2.0
// The SDK's one HTTP client (sdk/src/client/transport.hpp): the URL grammar every client shares,
// one request over a connection against an in-process server on a loopback port (every method, a
// raw body with its content type, 204 without a body, the body limit), the typed clients'
// transport (credentials, retries of GETs only, error mapping and redaction), the IPFS gateway
// fetch of enact/ipfs/gateway.hpp, and the trigger service's wire types of enact/api/triggers.hpp.
#include <doctest/doctest.h>

#include <httplib.h>

#include <boost/json.hpp>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "client/transport.hpp"
#include "enact/api/triggers.hpp"
#include "enact/codec/hex.hpp"
#include "enact/ipfs/cid.hpp"
#include "enact/ipfs/gateway.hpp"

namespace json = boost::json;
using namespace enact;
using namespace enact::client::detail;
using namespace std::chrono_literals;

namespace {

/// An httplib server on a free loopback port, running until destroyed.
class loopback_server {
 public:
  httplib::Server http;

  void start() {
    port_ = http.bind_to_any_port("127.0.0.1");
    REQUIRE(port_ > 0);
    thread_ = std::thread([this] { http.listen_after_bind(); });
    while (!http.is_running())
      std::this_thread::sleep_for(1ms);
  }
  ~loopback_server() {
    http.stop();
    if (thread_.joinable())
      thread_.join();
  }
  [[nodiscard]] std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  int port_ = 0;
  std::thread thread_;
};

client::client_options options_for(const std::string& url) {
  client::client_options o;
  o.base_url = url;
  o.connect_timeout = 2000ms;
  o.read_timeout = 2000ms;
  o.sleep = [](std::chrono::milliseconds) {
  };
  return o;
}

}  // namespace

TEST_CASE("parse_url: one grammar for every client") {
  const parsed_url a = parse_url("https://Example.org:8443/enact/");
  REQUIRE(a.ok());
  CHECK(a.origin == "https://Example.org:8443");
  CHECK(a.path == "/enact/");
  CHECK(a.prefix() == "/enact");

  const parsed_url b = parse_url("HTTP://[::1]:9000");
  REQUIRE(b.ok());
  CHECK(b.origin == "http://[::1]:9000");
  CHECK(b.path.empty());

  CHECK(parse_url("ftp://host").fault == url_fault::scheme);
  CHECK(parse_url("host:80").fault == url_fault::scheme);
  CHECK(parse_url("http://user:pw@host").fault == url_fault::user_info);
  CHECK(parse_url("http://host/a?b=1").why == "a query or fragment is not allowed");
  CHECK(parse_url("http://[::1").why == "unterminated IPv6 address");
  CHECK(parse_url("http://[::1]x").why == "expected ':' after the IPv6 address");
  CHECK(parse_url("http://[]:80").why == "empty host");
  CHECK(parse_url("http://:80").why == "empty host");
  CHECK(parse_url("http://host:0").why == "port must be 1 to 65535");
  CHECK(parse_url("http://host:65536").why == "port must be 1 to 65535");
  CHECK(parse_url("http://host:").why == "port must be 1 to 65535");
  CHECK(parse_url("http://ho\\st").why == "invalid character in host");
  CHECK(parse_url("http://host/a b").why == "invalid character in path");
}

TEST_CASE("http_connection: methods, raw bodies, 204 and the body limit") {
  loopback_server s;
  s.http.Put("/echo", [](const httplib::Request& req, httplib::Response& res) {
    res.set_content(req.method + " " + req.get_header_value("Content-Type") + " " + req.body, "text/plain");
  });
  s.http.Patch("/echo", [](const httplib::Request& req, httplib::Response& res) {
    res.set_content(req.method + " " + req.body, "text/plain");
  });
  s.http.Delete("/gone", [](const httplib::Request&, httplib::Response& res) { res.status = 204; });
  s.http.Get("/big", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(std::string(1000, 'x'), "text/plain");
  });
  s.http.Get("/missing", [](const httplib::Request&, httplib::Response& res) {
    res.status = 404;
    res.set_content(std::string(10000, 'e'), "text/plain");
  });
  s.start();
  connection_settings settings;
  settings.connect_timeout = 2000ms;
  settings.read_timeout = 2000ms;
  auto c = http_connection::open(s.url(), settings);
  REQUIRE(c);

  http_exchange put = c->send(http_method::put, "/echo", {}, "raw bytes", "application/octet-stream");
  REQUIRE(put.answered());
  CHECK(put.status == 200);
  CHECK(put.body == "PUT application/octet-stream raw bytes");
  CHECK(put.header("content-type") == "text/plain");

  http_exchange patch = c->send(http_method::patch, "/echo", {}, "{}", "application/json");
  CHECK(patch.body == "PATCH {}");

  http_exchange del = c->send(http_method::del, "/gone", {}, {}, {});
  REQUIRE(del.answered());
  CHECK(del.status == 204);
  CHECK(del.body.empty());

  CHECK(c->send(http_method::get, "/big", {}, {}, {}, 1000).body.size() == 1000);
  http_exchange over = c->send(http_method::get, "/big", {}, {}, {}, 999);
  CHECK(over.failure == http_failure::too_large);
  // Another status: its body is read only up to 4 KiB, and the status stays known.
  http_exchange missing = c->send(http_method::get, "/missing", {}, {}, {}, 100);
  CHECK(missing.status == 404);
  CHECK(missing.body.size() <= 4096);

  // Nothing listens on a port that was just released.
  std::string closed_url;
  {
    loopback_server gone;
    gone.start();
    closed_url = gone.url();
  }
  auto refused = http_connection::open(closed_url, settings);
  REQUIRE(refused);
  const http_exchange x = refused->send(http_method::get, "/", {}, {}, {});
  CHECK(x.failure == http_failure::connect);
  CHECK(describe(x, closed_url, settings).message == "cannot connect to " + closed_url);
  CHECK_FALSE(describe(x, closed_url, settings).timeout);
}

TEST_CASE("transport: credentials, retries of GETs only, errors without the secrets") {
  loopback_server s;
  std::atomic<int> gets{0};
  std::atomic<int> posts{0};
  const std::string token = "tok_abcdefghijklmnop";
  s.http.Get("/v1/who", [&](const httplib::Request& req, httplib::Response& res) {
    if (++gets < 3) {
      res.status = 503;
      return;
    }
    res.set_header("X-Request-Id", "req-1");
    res.set_content(json::serialize(json::object{{"auth", req.get_header_value("Authorization")}}), "application/json");
  });
  s.http.Post("/v1/fail", [&](const httplib::Request& req, httplib::Response& res) {
    ++posts;
    res.status = 503;
    res.set_content(R"({"error":{"code":"unavailable","message":"down for )" + req.body + R"("}})", "application/json");
  });
  s.http.Delete("/v1/thing", [](const httplib::Request&, httplib::Response& res) { res.status = 204; });
  s.start();

  transport t(options_for(s.url() + "/v1/"), transport::credential::bearer);
  const Secret bearer(as_bytes(std::string_view(token)));
  http_request get;
  get.target = "/who";
  get.bearer = &bearer;
  const http_answer a = t.send(get);
  CHECK(gets == 3);  // two 503s retried
  CHECK(a.request_id == "req-1");
  CHECK(a.body.at("auth").as_string() == "Bearer " + token);

  http_request post;
  post.method = http_method::post;
  post.target = "/fail";
  post.body = token;
  post.redact = {bearer.view()};
  try {
    (void)t.send(post);
    FAIL("expected an api_error");
  } catch (const api_error& e) {
    CHECK(posts == 1);  // a POST is never repeated
    CHECK(e.status() == 503);
    CHECK(std::string(e.what()).find(token) == std::string::npos);
    CHECK(std::string(e.what()).find("[redacted]") != std::string::npos);
  }

  http_request del;
  del.method = http_method::del;
  del.target = "/thing";
  const http_answer gone = t.send(del);
  CHECK(gone.status == 204);
  CHECK(gone.body.is_null());

  CHECK(t.url("/auth?x=1") == s.url() + "/v1/auth?x=1");
  try {
    transport bad(options_for("http://u:p@host"), transport::credential::bearer);
    FAIL("expected an api_error");
  } catch (const api_error& e) {
    CHECK(std::string(e.what()).find("the token travels in the Authorization header") != std::string::npos);
  }
}

TEST_CASE("ipfs::fetch_from_gateway: verified content, limits, no redirects") {
  const std::string code = "export default async () => 42;\n";
  const std::string cid = ipfs::cid_of(as_bytes(std::string_view(code)));
  const std::string other = ipfs::cid_of(as_bytes(std::string_view("something else")));
  loopback_server s;
  s.http.Get(R"(/ipfs/(.+))", [&](const httplib::Request& req, httplib::Response& res) {
    const std::string asked = req.matches[1];
    if (asked == cid)
      res.set_content(code, "application/octet-stream");
    else if (asked == other)
      res.set_content(code, "application/octet-stream");  // the wrong bytes
    else if (asked == ipfs::cid_of(as_bytes(std::string_view("moved"))))
      res.set_redirect(s.url() + "/ipfs/" + cid);  // loopback: a followed redirect would show, never leave the host
    else
      res.status = 404;
  });
  s.start();
  ipfs::gateway_options o;
  o.url = s.url();
  o.timeout = 2000ms;

  const auto got = ipfs::fetch_from_gateway(o, cid);
  REQUIRE(got);
  CHECK(*got == code);

  const auto wrong = ipfs::fetch_from_gateway(o, other);
  CHECK(wrong.code() == ipfs::gateway_errc::wrong_content);
  CHECK(wrong.err().message == "IPFS gateway returned bytes that do not hash to " + other + "; refused");

  const std::string moved = ipfs::cid_of(as_bytes(std::string_view("moved")));
  const auto redirect = ipfs::fetch_from_gateway(o, moved);
  CHECK(redirect.code() == ipfs::gateway_errc::bad_status);
  CHECK(redirect.err().message ==
        "IPFS gateway answered a redirect (302) for " + moved + "; redirects are not followed");

  const std::string absent = ipfs::cid_of(as_bytes(std::string_view("absent")));
  CHECK(ipfs::fetch_from_gateway(o, absent).code() == ipfs::gateway_errc::not_found);

  o.max_bytes = code.size() - 1;
  const auto large = ipfs::fetch_from_gateway(o, cid);
  CHECK(large.code() == ipfs::gateway_errc::too_large);
  CHECK(large.err().message ==
        "action " + cid + " on the IPFS gateway is larger than " + std::to_string(code.size() - 1) + " bytes; refused");

  o.url = "127.0.0.1:1";  // a bare host:port is plain HTTP; nothing listens on port 1
  CHECK(ipfs::fetch_from_gateway(o, cid).code() == ipfs::gateway_errc::unreachable);
  o.url = "ftp://host";
  CHECK(ipfs::fetch_from_gateway(o, cid).code() == ipfs::gateway_errc::bad_url);
  CHECK_FALSE(ipfs::fetch_from_gateway(o, "not a cid"));
}

TEST_CASE("api::triggers: names, value_from as the service writes, readers with the field path") {
  CHECK(api::name(api::trigger_type::chain_event) == "chain-event");
  CHECK(api::trigger_type_from_name("schedule") == api::trigger_type::schedule);
  CHECK_FALSE(api::trigger_type_from_name("cron"));
  CHECK(api::name(api::run_status::success) == "success");
  CHECK(api::run_status_from_name("failed") == api::run_status::failed);
  CHECK_FALSE(api::run_status_from_name("done"));

  api::chain_event_config e;
  e.chain = "ethereum";
  e.contract = codec::hex::decode_fixed<20>("0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed").value();
  e.event = "Transfer(address indexed from, address indexed to, uint256 value)";
  e.start_block = 7;
  e.topic_filters = {{}, {hash256{}}, {hash256{}, hash256{}}};
  e.confirmations = 2;
  const json::value ev = json::value_from(e);
  const std::string zero = "0x" + std::string(64, '0');
  CHECK(json::serialize(ev) == R"x({"chain":"ethereum","contract":"0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",)x"
                               R"x("event":"Transfer(address indexed from, address indexed to, uint256 value)",)x"
                               R"x("start_block":7,"topic_filters":[null,")x" +
                                   zero + R"x(",[")x" + zero + R"x(",")x" + zero + R"x("]],"confirmations":2})x");

  api::trigger t;
  t.id = "trg_1";
  t.type = api::trigger_type::chain_event;
  t.name = "n";
  t.action_ipfs_cid = "Qm";
  t.config = e;
  t.created_at = "2026-01-01T00:00:00.000Z";
  t.updated_at = t.created_at;
  const json::value tv = json::value_from(t);
  const api::trigger back = json::value_to<api::trigger>(tv);
  CHECK(back.id == t.id);
  CHECK(back.config == t.config);
  CHECK(json::serialize(json::value_from(back)) == json::serialize(tv));

  json::value bad = tv;
  bad.as_object()["config"].as_object()["topic_filters"].as_array()[2].as_array()[1] = "00";
  const auto r = api::read_trigger(bad);
  REQUIRE_FALSE(r);
  CHECK(r.code() == api_errc::invalid_request);
  CHECK(r.err().message.rfind("config.topic_filters[2][1]", 0) == 0);

  CHECK(api::read_config(api::trigger_type::schedule, json::parse(R"({"cron":"*/5 * * * *"})")).value() ==
        api::trigger_config{api::schedule_config{"*/5 * * * *", "UTC"}});
  CHECK(api::read_config(api::trigger_type::schedule, json::parse(R"({"cron":5})")).err().message ==
        "cron: expected a string");

  api::run run;
  run.id = "run_1";
  run.trigger_id = "trg_1";
  run.status = api::run_status::failed;
  run.attempts = 3;
  run.params = json::object{};
  run.error = api::run_error{"action_error", "boom", ""};
  run.queued_at = "q";
  run.finished_at = "f";
  CHECK(json::serialize(json::value_from(run)) ==
        R"({"id":"run_1","trigger_id":"trg_1","status":"failed","attempts":3,"params":{},)"
        R"("error":{"code":"action_error","message":"boom"},"queued_at":"q","finished_at":"f"})");
  const api::run rb = api::read_run(json::value_from(run)).value();
  CHECK(rb.status == api::run_status::failed);
  CHECK(rb.error->message == "boom");
  CHECK(rb.started_at.empty());
}
