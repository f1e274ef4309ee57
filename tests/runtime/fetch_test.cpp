// SPDX-License-Identifier: Apache-2.0
// Enact.fetch end to end on the engine under test (the runtime suite runs on both): actions in
// real workers call the server process, which fetches from a local HTTP server on 127.0.0.1 (a
// JSON price feed, a slow endpoint, a huge body, redirects without end) under the development
// setting that allows loopback. Without that setting a loopback target, by any spelling or through
// a name, is refused before any connection: the feed sees no request. Every other range is
// refused before any connection too (egress_test.cpp checks them without a network); this file
// only ever connects to 127.0.0.1.
#include <doctest/doctest.h>

#include <httplib.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <atomic>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "pool_fixture.hpp"
#include "runtime/fetch.hpp"

namespace json = boost::json;
namespace rt = enact::runtime;
namespace eg = enact::runtime::egress;
using namespace enact::runtime::test;
using namespace std::chrono_literals;

namespace {

// The local HTTP server the actions fetch from, on 127.0.0.1 only.
class feed_server {
 public:
  feed_server() {
    server_.Get("/price", [this](const httplib::Request& req, httplib::Response& res) {
      note(req);
      res.set_header("X-Feed", "local");
      res.set_content(R"({"symbol":"ETH","price":"3012.55","decimals":8})", "application/json");
    });
    server_.Post("/echo", [this](const httplib::Request& req, httplib::Response& res) {
      note(req);
      json::object seen{{"method", req.method},
                        {"body", req.body},
                        {"api_key", req.get_header_value("X-Api-Key")},
                        {"content_type", req.get_header_value("Content-Type")},
                        {"user_agent", req.get_header_value("User-Agent")}};
      res.set_content(json::serialize(seen), "application/json");
    });
    server_.Get("/slow", [this](const httplib::Request& req, httplib::Response& res) {
      note(req);
      for (int i = 0; i < 300 && !stopping_; ++i)
        std::this_thread::sleep_for(10ms);
      res.set_content("late", "text/plain");
    });
    server_.Get("/huge", [this](const httplib::Request& req, httplib::Response& res) {
      note(req);
      res.set_content(std::string(2u << 20, 'x'), "text/plain");  // twice the run's limit
    });
    server_.Get("/bytes", [this](const httplib::Request& req, httplib::Response& res) {
      note(req);
      res.set_content(std::string("ok\xff\xfe", 4), "application/octet-stream");
    });
    server_.Get("/loop", [this](const httplib::Request& req, httplib::Response& res) {
      note(req);
      res.set_redirect("/loop");
    });
    server_.Get(R"(/hop/(\d+))", [this](const httplib::Request& req, httplib::Response& res) {
      note(req);
      const int n = std::stoi(req.matches[1]);
      res.set_redirect(n <= 1 ? std::string("/price") : "/hop/" + std::to_string(n - 1));
    });
    server_.Get("/to", [this](const httplib::Request& req, httplib::Response& res) {
      note(req);
      res.set_redirect(req.get_param_value("l"));
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    REQUIRE(port_ > 0);
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running())
      std::this_thread::sleep_for(1ms);
  }
  ~feed_server() {
    stopping_ = true;
    server_.stop();
    thread_.join();
  }

  [[nodiscard]] std::string base() const { return "http://127.0.0.1:" + std::to_string(port_); }
  [[nodiscard]] int port() const { return port_; }
  [[nodiscard]] std::vector<std::string> seen() {
    const std::lock_guard lock(mu_);
    return paths_;
  }
  [[nodiscard]] std::map<std::string, std::string> last_headers() {
    const std::lock_guard lock(mu_);
    return last_headers_;
  }

 private:
  void note(const httplib::Request& req) {
    const std::lock_guard lock(mu_);
    paths_.push_back(req.path);
    last_headers_.clear();
    for (const auto& [k, v] : req.headers)
      last_headers_[k] = v;
  }
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::mutex mu_;
  std::vector<std::string> paths_;
  std::map<std::string, std::string> last_headers_;
};

// The action's code for the engine under test: `AWAIT ` is `await ` on SpiderMonkey (Enact.fetch,
// text() and json() answer with promises there) and nothing on Duktape (values).
std::string for_engine(std::string code) {
  const std::string marker = "AWAIT ";
  for (size_t at; (at = code.find(marker)) != std::string::npos;)
    code.replace(at, marker.size(), on_duktape() ? "" : "await ");
  return code;
}

std::string with_base(std::string code, const feed_server& feed) {
  for (size_t at; (at = code.find("BASE")) != std::string::npos;)
    code.replace(at, 4, feed.base());
  return for_engine(std::move(code));
}

struct fetch_run {
  rt::run_result result;
  std::vector<json::object> log;
  size_t made = 0;
};

// Runs `code` with the fetch settings `s` (the resolver: the system's unless given).
fetch_run run_fetching(const std::string& code, const rt::fetch_settings& s, eg::resolver* resolver = nullptr,
                       const rt::limits* lim = nullptr) {
  fetch_run out;
  std::mutex mu;
  rt::fetch_session session(s, resolver != nullptr ? *resolver : eg::system_resolver(),
                            [&](std::string_view, json::object fields) {
                              const std::lock_guard lock(mu);
                              out.log.push_back(std::move(fields));
                            });
  echo_handler inner;
  rt::fetching_handler caps(inner, session);
  auto r = shared_pool().run(code, "", caps, lim);
  REQUIRE_MESSAGE(r.has_value(), (r ? std::string() : r.err().message));
  out.result = std::move(r).value();
  out.made = session.made();
  return out;
}

rt::fetch_settings dev_settings() {
  rt::fetch_settings s;
  s.policy.allow_loopback = true;
  return s;
}

json::value response_of(const fetch_run& r) {
  INFO(r.result.message);
  REQUIRE(r.result.failure == rt::failure_kind::none);
  return json::parse(r.result.response_json);
}

// Answers one name with 127.0.0.1.
struct loopback_name : eg::resolver {
  std::vector<eg::ip_address> resolve(const std::string& name, std::chrono::steady_clock::time_point,
                                      std::string& error) override {
    if (name == "feed.test")
      return {eg::ipv4(127, 0, 0, 1)};
    error = "unknown name " + name;
    return {};
  }
};

}  // namespace

TEST_CASE("fetch: a JSON price feed, read as an oracle would") {
  feed_server feed;
  const auto r = run_fetching(with_base(R"js(
    var res = AWAIT Enact.fetch('BASE/price?apikey=s3cret');
    var body = AWAIT res.json();
    var text = AWAIT res.text();
    Enact.setResponse({status: res.status, ok: res.ok, url: res.url, price: body.price, symbol: body.symbol,
                       type: res.headers['content-type'], feed: res.headers['x-feed'], length: text.length,
                       keys: Object.keys(res).sort()});
  )js",
                                        feed),
                              dev_settings());
  const json::value v = response_of(r);
  CHECK(v.at("status") == 200);
  CHECK(v.at("ok") == true);
  CHECK(v.at("url") == json::value(feed.base() + "/price?apikey=s3cret"));
  CHECK(v.at("price") == "3012.55");
  CHECK(v.at("symbol") == "ETH");
  CHECK(v.at("type") == "application/json");
  CHECK(v.at("feed") == "local");
  CHECK(v.at("length") == 47);
  CHECK(json::serialize(v.at("keys")) == R"(["headers","json","ok","status","text","url"])");
  CHECK(feed.seen() == std::vector<std::string>{"/price"});
  CHECK(feed.last_headers().at("User-Agent") == "enact-fetch/1");
  CHECK(r.made == 1);
  // Logged without the query, a body or a header's value.
  REQUIRE(r.log.size() == 1);
  CHECK(r.log[0].at("url") == json::value(feed.base() + "/price"));
  CHECK(r.log[0].at("outcome") == "ok");
  CHECK(r.log[0].at("status") == 200);
  CHECK(r.log[0].at("response_bytes") == 47);
  CHECK(json::serialize(r.log[0]).find("s3cret") == std::string::npos);
  CHECK(json::serialize(r.log[0]).find("3012") == std::string::npos);
}

TEST_CASE("fetch: POST with headers and a body; the log keeps header names only") {
  feed_server feed;
  const auto r = run_fetching(with_base(R"js(
    var res = AWAIT Enact.fetch('BASE/echo', {method: 'post', headers: {'X-Api-Key': 'key-123',
                                'Content-Type': 'application/json'}, body: JSON.stringify({q: 'secret-body'})});
    Enact.setResponse(AWAIT res.json());
  )js",
                                        feed),
                              dev_settings());
  const json::value v = response_of(r);
  CHECK(v.at("method") == "POST");
  CHECK(v.at("body") == R"({"q":"secret-body"})");
  CHECK(v.at("api_key") == "key-123");
  CHECK(v.at("content_type") == "application/json");
  REQUIRE(r.log.size() == 1);
  const std::string logged = json::serialize(r.log[0]);
  CHECK(logged.find("x-api-key") != std::string::npos);
  CHECK(logged.find("key-123") == std::string::npos);
  CHECK(logged.find("secret-body") == std::string::npos);
}

TEST_CASE("fetch: every refusal is an error the action catches") {
  feed_server feed;
  rt::fetch_settings s = dev_settings();
  s.max_response_bytes = 1u << 20;
  // /slow answers after 3 s; the margin lets /huge deliver its first MiB on a loaded machine.
  s.timeout = 1500ms;
  // The same cases on both engines; Duktape has no async functions.
  const std::string sm = R"js(
    async function attempt(url, init) {
      try { var res = await Enact.fetch(url, init); return 'ok ' + res.status; }
      catch (e) { return (e instanceof Error ? '' : 'not an Error: ') + e.message; }
    }
    var out = [];
    for (const url of params.urls) out.push(await attempt(url));
    out.push(await attempt('BASE/price', {method: 'TRACE'}));
    Enact.setResponse(out);
  )js";
  const std::string duk = R"js(
    function attempt(url, init) {
      try { var res = Enact.fetch(url, init); return 'ok ' + res.status; }
      catch (e) { return (e instanceof Error ? '' : 'not an Error: ') + e.message; }
    }
    Enact.setResponse(params.urls.map(function (u) { return attempt(u); })
      .concat([attempt('BASE/price', {method: 'TRACE'})]));
  )js";
  json::array urls;
  for (const std::string_view u :
       {"/slow", "/loop", "/hop/3", "/to?l=http%3A%2F%2F169.254.169.254%2Flatest%2Fmeta-data%2F",
        "/to?l=http%3A%2F%2F10.0.0.1%2F", "/to?l=ftp%3A%2F%2Fexample.org%2F", "/huge"})
    urls.emplace_back(feed.base() + std::string(u));
  urls.emplace_back("ftp://example.org/");
  fetch_run r;
  {
    rt::fetch_session session(s, eg::system_resolver(), nullptr);
    echo_handler inner;
    rt::fetching_handler caps(inner, session);
    auto ran = shared_pool().run(with_base(on_duktape() ? duk : sm, feed),
                                 json::serialize(json::object{{"urls", urls}}), caps);
    REQUIRE(ran.has_value());
    r.result = *ran;
  }
  const json::value out = response_of(r);
  REQUIRE(out.as_array().size() == 9);
  const auto item = [&](size_t i) {
    return std::string(out.as_array()[i].as_string());
  };
  CAPTURE(json::serialize(out));
  CHECK(item(0).rfind("fetch: timed out", 0) == 0);
  CHECK(item(1) == "fetch: more than 3 redirects");
  CHECK(item(2) == "ok 200");  // three redirects are fine
  CHECK(item(3) ==
        "fetch: host 169.254.169.254 resolves to 169.254.169.254 (cloud metadata), which actions may "
        "not reach");
  CHECK(item(4).find("(private), which actions may not reach") != std::string::npos);
  CHECK(item(5).rfind("fetch: redirect to an unusable location: only https", 0) == 0);
  // The bytes of the run's responses together: the huge body passes them.
  CHECK(item(6) == "fetch: the responses of this run passed 1048576 bytes");
  CHECK(item(7) == "fetch: only https URLs may be fetched (not ftp:)");
  CHECK(item(8).rfind("fetch: method must be one of", 0) == 0);
  // The loop was followed three times, then refused without a fourth request.
  const auto seen = feed.seen();
  CHECK(std::count(seen.begin(), seen.end(), "/loop") == 4);
}

TEST_CASE("fetch: an uncaught refusal fails the run as an exception") {
  const auto r = run_fetching(for_engine("AWAIT Enact.fetch('https://127.0.0.1:1/'); Enact.setResponse(1);"),
                              rt::fetch_settings{});
  CHECK(r.result.failure == rt::failure_kind::exception);
  CHECK(r.result.message ==
        "Error: fetch: host 127.0.0.1 resolves to 127.0.0.1 (loopback), which actions may not "
        "reach");
  CHECK(r.result.response_json.empty());
}

TEST_CASE("fetch: without the development setting, loopback is refused before any connection") {
  feed_server feed;
  loopback_name names;
  const std::string port = std::to_string(feed.port());
  const std::vector<std::string> targets = {
      feed.base() + "/price",
      "https://127.0.0.1:" + port + "/price",
      "https://127.1:" + port + "/price",
      "https://0x7f000001:" + port + "/price",
      "https://2130706433:" + port + "/price",
      "https://0177.0.0.1:" + port + "/price",
      "https://[::1]:" + port + "/price",
      "https://[::ffff:127.0.0.1]:" + port + "/price",
      "https://0.0.0.0:" + port + "/price",
      "https://feed.test:" + port + "/price",  // a name that resolves to loopback
      "http://feed.test:" + port + "/price",
  };
  json::array list;
  for (const auto& t : targets)
    list.emplace_back(t);
  const std::string code = for_engine(
      "var out = []; for (var i = 0; i < params.urls.length; i++) { try { AWAIT "
      "Enact.fetch(params.urls[i]); out.push('fetched'); } catch (e) { "
      "out.push(e.message); } } Enact.setResponse(out);");
  rt::fetch_settings s;  // allow_loopback off
  s.max_fetches = 100;
  fetch_run r;
  {
    rt::fetch_session session(s, names, nullptr);
    echo_handler inner;
    rt::fetching_handler caps(inner, session);
    auto out = shared_pool().run(code, json::serialize(json::object{{"urls", list}}), caps);
    REQUIRE(out.has_value());
    r.result = *out;
    r.made = session.made();
  }
  const json::value v = response_of(r);
  REQUIRE(v.as_array().size() == targets.size());
  for (size_t i = 0; i < targets.size(); ++i) {
    CAPTURE(targets[i]);
    const std::string m(v.as_array()[i].as_string());
    CHECK(m.rfind("fetch: ", 0) == 0);
    CHECK(m != "fetched");
  }
  CHECK(feed.seen().empty());  // the feed saw no request
  CHECK(r.made == 0);
}

TEST_CASE("fetch: the per-run count, bytes that are not UTF-8, and what each fetch costs") {
  feed_server feed;
  rt::fetch_settings s = dev_settings();
  s.max_fetches = 2;
  const auto r = run_fetching(with_base(R"js(
    var a = AWAIT (AWAIT Enact.fetch('BASE/bytes')).text();
    var b = (AWAIT Enact.fetch('BASE/price')).status;
    var c;
    try { AWAIT Enact.fetch('BASE/price'); c = 'fetched'; } catch (e) { c = e.message; }
    Enact.setResponse([a, b, c]);
  )js",
                                        feed),
                              s);
  const json::value v = response_of(r);
  CHECK(v.at(0) == "ok\xEF\xBF\xBD\xEF\xBF\xBD");  // invalid bytes become U+FFFD
  CHECK(v.at(1) == 200);
  CHECK(v.at(2) == "fetch: a run may make at most 2 fetches");
  CHECK(r.made == 2);
  CHECK(feed.seen().size() == 2);
}

TEST_CASE("fetch: a body that is not JSON, and arguments the worker refuses") {
  feed_server feed;
  const auto r = run_fetching(with_base(R"js(
    var out = [];
    var res = AWAIT Enact.fetch('BASE/bytes');
    try { AWAIT res.json(); out.push('parsed'); } catch (e) { out.push(e.name); }
    try { AWAIT Enact.fetch(42); } catch (e) { out.push(e.name + ': ' + e.message); }
    try { AWAIT Enact.fetch('BASE/price', 'GET'); } catch (e) { out.push(e.name + ': ' + e.message); }
    Enact.setResponse(out);
  )js",
                                        feed),
                              dev_settings());
  const json::value v = response_of(r);
  CHECK(
      json::serialize(v) ==
      R"(["SyntaxError","TypeError: fetch: the URL must be a string","TypeError: fetch: the options must be an object"])");
}

TEST_CASE("fetch: a slow server cannot hold the run past its wall time") {
  feed_server feed;
  rt::fetch_settings s = dev_settings();
  s.timeout = 10s;  // longer than the run may take
  const rt::limits lim = with_wall(700ms);
  const auto started = std::chrono::steady_clock::now();
  const auto r = run_fetching(
      with_base("try { AWAIT Enact.fetch('BASE/slow'); } catch (e) { Enact.setResponse(e.message); }", feed), s,
      nullptr, &lim);
  const auto took = std::chrono::steady_clock::now() - started;
  // The fetch gives up just before the wall time ends: the action either catches that or is
  // stopped by the wall time itself, never later.
  if (r.result.failure == rt::failure_kind::none)
    CHECK(r.result.response_json.rfind("\"fetch: timed out", 0) == 0);
  else
    CHECK(r.result.failure == rt::failure_kind::timeout);
  CHECK(took < 1500ms);
}
