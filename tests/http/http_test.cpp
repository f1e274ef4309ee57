// SPDX-License-Identifier: Apache-2.0
// The HTTP kit (server/http): the status table and error body of docs/protocol.md §0, the mapping of
// errors the kit knows, UTF-8 repair, the JSON body and query rules, CORS, and a listener with
// serve_requests on loopback: an X-Request-Id on every response, one access-log line per
// request, JSON error bodies for what no route answered; and bounded_server, the stream every listener
// reads connections through (docs/protocol.md §6 "Connections").
#include <doctest/doctest.h>
#include <httplib.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>
#include <utility>

#include "enact/codec/hex.hpp"
#include "http/bounded_server.hpp"
#include "http/cors.hpp"
#include "http/errors.hpp"
#include "http/html.hpp"
#include "http/log.hpp"
#include "http/request.hpp"

namespace enact::http {
namespace {

namespace json = boost::json;

httplib::Request request(std::string body, std::string type, std::string target = "/x") {
  httplib::Request r;
  r.method = "POST";
  r.body = std::move(body);
  r.target = std::move(target);
  if (!type.empty())
    r.headers.emplace("Content-Type", std::move(type));
  return r;
}

TEST_CASE("statuses and error bodies of docs/protocol.md §0") {
  const std::pair<api_errc, int> statuses[] = {
      {api_errc::invalid_request, 400},   {api_errc::typed_data_invalid, 400},
      {api_errc::signature_expired, 401}, {api_errc::insufficient_credits, 402},
      {api_errc::forbidden, 403},         {api_errc::not_found, 404},
      {api_errc::conflict, 409},          {api_errc::payload_too_large, 413},
      {api_errc::action_failed, 422},     {api_errc::rate_limited, 429},
      {api_errc::unavailable, 503},       {api_errc::internal, 500},
  };
  for (const auto& [code, status] : statuses)
    CHECK_MESSAGE(status_of(code) == status, make_error_code(code).message());

  http_error e = make_error(api_errc::conflict, "taken");
  CHECK(e.status == 409);
  CHECK(json::serialize(error_body(e)) == R"({"error":{"code":"conflict","message":"taken"}})");
  e.details = json::object{{"kind", "x"}};
  CHECK(error_body(e).at("error").at("details").at("kind") == "x");

  // The kit's own mapping: api_errc as it is, SDK parse errors are request errors, the rest
  // internal with nothing of its message.
  CHECK(to_http(fail(api_errc::forbidden, "no")).status == 403);
  const auto parse_error = to_http(codec::hex::decode("zz", "field").err());
  CHECK(parse_error.code == api_errc::invalid_request);
  CHECK(parse_error.message.find("field") != std::string::npos);
  const auto bug = to_http(error{std::make_error_code(std::errc::io_error), "/secret/path: EIO"});
  CHECK(bug.code == api_errc::internal);
  CHECK(bug.message == "internal error");
  CHECK(to_http(fail(api_errc::internal, "detail")).message == "internal error");
}

TEST_CASE("well_formed_utf8 replaces what is not UTF-8") {
  CHECK(well_formed_utf8("plain") == "plain");
  CHECK(well_formed_utf8("caf\xC3\xA9") == "caf\xC3\xA9");
  CHECK(well_formed_utf8("a\xFF"
                         "b") ==
        "a\xEF\xBF\xBD"
        "b");
  CHECK(well_formed_utf8("\xC0\xAF") == "\xEF\xBF\xBD\xEF\xBF\xBD");                  // overlong
  CHECK(well_formed_utf8("\xED\xA0\x80") == "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // surrogate
  CHECK(well_formed_utf8("\xE2\x82") == "\xEF\xBF\xBD\xEF\xBF\xBD");                  // cut short
  CHECK(is_well_formed_utf8("caf\xC3\xA9"));
  CHECK(!is_well_formed_utf8("\xF5\x80\x80\x80"));
}

TEST_CASE("html_escape") {
  CHECK(html_escape("plain text") == "plain text");
  CHECK(html_escape("<a href=\"x\" title='y'>&</a>") ==
        "&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;");
  std::string out = "pre:";
  append_html_escaped(out, "\"");
  CHECK(out == "pre:&quot;");
}

TEST_CASE("JSON body and query rules") {
  CHECK(is_json_media_type("application/json"));
  CHECK(is_json_media_type("Application/JSON; charset=utf-8"));
  CHECK(is_json_media_type("application/json \t"));
  CHECK(!is_json_media_type("text/plain"));
  CHECK(!is_json_media_type("application/jsonx"));
  CHECK(!is_json_media_type(""));

  CHECK(check_body_size(request("12345", "application/json"), 5).has_value());
  const auto big = check_body_size(request("123456", "application/json"), 5);
  REQUIRE(!big.has_value());
  CHECK(big.code() == api_errc::payload_too_large);
  CHECK(big.err().message == "body: 6 bytes, at most 5");

  const auto form = check_json_media_type(request("a=1", "application/x-www-form-urlencoded"));
  REQUIRE(!form.has_value());
  CHECK(form.err().message == "Content-Type: expected application/json, got 'application/x-www-form-urlencoded'");
  CHECK(check_json_media_type(request("", "")).err().message == "Content-Type: expected application/json, got ''");

  const auto obj = json_object_body(request(R"({"a":1})", "application/json"), 100);
  REQUIRE(obj.has_value());
  CHECK(obj->at("a") == 1);
  CHECK(json_object_body(request("[1]", "application/json"), 100).err().message == "body: expected a JSON object");
  const auto broken = json_object_body(request("{", "application/json"), 100);
  REQUIRE(!broken.has_value());
  CHECK(broken.err().message.starts_with("body: invalid JSON ("));
  CHECK(json_object_body(request("{}", "text/plain"), 100).code() == api_errc::invalid_request);
  CHECK(json_object_body(request(std::string(200, ' '), "application/json"), 100).code() ==
        api_errc::payload_too_large);

  CHECK(only_query(request("", "", "/x?limit=1&offset=2"), {"limit", "offset"}).has_value());
  CHECK(only_query(request("", "", "/x"), {}).has_value());
  CHECK(only_query(request("", "", "/x?"), {}).has_value());
  const auto unknown = only_query(request("", "", "/x?limit=1&key=abc"), {"limit"});
  REQUIRE(!unknown.has_value());
  CHECK(unknown.err().message == "query.key: unknown parameter");
  CHECK(only_query(request("", "", "/x?" + std::string(100, 'k')), {}).err().message ==
        "query." + std::string(64, 'k') + ": unknown parameter");
}

TEST_CASE("CORS policy") {
  cors_policy off;
  CHECK(!off.enabled());
  CHECK(!off.allowed_origin("https://a.example"));

  cors_policy p;
  p.origins = {"https://app.example.org"};
  CHECK(p.enabled());
  CHECK(p.allowed_origin("https://app.example.org") == std::optional<std::string>("https://app.example.org"));
  CHECK(p.allowed_origin("HTTPS://APP.example.org").has_value());
  CHECK(!p.allowed_origin("https://evil.example"));
  CHECK(!p.allowed_origin(""));

  httplib::Request req;
  req.method = "POST";
  req.headers.emplace("Origin", "https://app.example.org");
  httplib::Response res;
  CHECK(p.apply(req, res));
  CHECK(res.get_header_value("Access-Control-Allow-Origin") == "https://app.example.org");
  CHECK(res.get_header_value("Vary") == "Origin");
  CHECK(res.get_header_value("Access-Control-Expose-Headers") == "X-Request-Id, Retry-After");

  httplib::Request pre;
  pre.method = "OPTIONS";
  pre.headers.emplace("Origin", "https://app.example.org");
  pre.headers.emplace("Access-Control-Request-Method", "POST");
  pre.headers.emplace("Access-Control-Request-Headers", "x-api-key, content-type,Idempotency-Key");
  httplib::Response ok;
  p.preflight(pre, ok);
  CHECK(ok.status == 204);
  CHECK(ok.get_header_value("Access-Control-Allow-Origin") == "https://app.example.org");
  CHECK(ok.get_header_value("Access-Control-Allow-Headers").find("X-Wallet-Auth") != std::string::npos);
  CHECK(ok.get_header_value("Access-Control-Allow-Methods").find("POST") != std::string::npos);
  CHECK(ok.get_header_value("Access-Control-Max-Age") == "600");

  const auto refused = [&](const std::string& origin, const std::string& method, const std::string& headers) {
    httplib::Request r;
    r.method = "OPTIONS";
    r.headers.emplace("Origin", origin);
    r.headers.emplace("Access-Control-Request-Method", method);
    if (!headers.empty())
      r.headers.emplace("Access-Control-Request-Headers", headers);
    httplib::Response out;
    p.preflight(r, out);
    return out.status == 403 && !out.has_header("Access-Control-Allow-Origin") &&
           json::parse(out.body).at("error").at("code") == "forbidden";
  };
  CHECK(refused("https://evil.example", "POST", ""));
  CHECK(refused("https://app.example.org", "PUT", ""));
  CHECK(refused("https://app.example.org", "POST", "Content-Type, X-Secret"));

  cors_policy any;
  any.origins = {"*"};
  httplib::Response star;
  CHECK(any.apply(req, star));
  CHECK(star.get_header_value("Access-Control-Allow-Origin") == "*");
  CHECK(!star.has_header("Vary"));
}

/// A listener with serve_requests on a loopback port, logging into a temporary file.
struct listener {
  std::string log_path;
  std::FILE* log_file;
  std::unique_ptr<logger> log;
  bounded_server server;
  std::thread thread;
  int port = 0;

  explicit listener(listener_options opt, connection_limits limits = {}) : server(limits) {
    char name[] = "/tmp/enact-http-test-XXXXXX";
    const int fd = ::mkstemp(name);
    REQUIRE(fd >= 0);
    log_path = name;
    log_file = ::fdopen(fd, "w");
    log = std::make_unique<logger>(log_file, logger::level::info);
    server.Get("/ok", [](const httplib::Request&, httplib::Response& res) {
      send_json(res, 200, json::object{{"ok", true}});
    });
    server.Get("/logged", [this](const httplib::Request& req, httplib::Response& res) {
      send_json(res, 200, json::object{{"id", current_request().id}});
      log->info("request", access_line(req.method, "/logged (own line)", 200));
      mark_logged();
    });
    server.Get("/refused", [](const httplib::Request&, httplib::Response& res) {
      send_error(res, make_error(api_errc::forbidden, "no"));
    });
    server.Get("/throws", [](const httplib::Request&, httplib::Response&) { throw std::runtime_error("boom"); });
    server.Post("/echo", [](const httplib::Request& req, httplib::Response& res) {
      send_json(res, 200, json::object{{"size", req.body.size()}, {"body", req.body}});
    });
    serve_requests(server, *log, opt);
    port = server.bind_to_any_port("127.0.0.1");
    thread = std::thread([this] { server.listen_after_bind(); });
    while (!server.is_running())
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~listener() {
    server.stop();
    thread.join();
    log.reset();
    std::fclose(log_file);
    ::unlink(log_path.c_str());
  }
  httplib::Client client() const {
    httplib::Client c("127.0.0.1", port);
    c.set_keep_alive(false);
    return c;
  }
  std::vector<json::object> lines() const {
    log->flush();
    std::ifstream in(log_path);
    std::vector<json::object> out;
    for (std::string line; std::getline(in, line);)
      out.push_back(json::parse(line).as_object());
    return out;
  }
};

TEST_CASE("serve_requests: request ids, one log line per request, error bodies") {
  listener l({});
  auto c = l.client();
  const auto ok = c.Get("/ok");
  REQUIRE(ok);
  CHECK(ok->status == 200);
  const std::string id = ok->get_header_value("X-Request-Id");
  CHECK(id.size() == 16);
  CHECK(!ok->has_header("Access-Control-Allow-Origin"));  // CORS is off by default

  const auto own = c.Get("/logged");
  REQUIRE(own);
  CHECK(json::parse(own->body).at("id").as_string() == own->get_header_value("X-Request-Id"));
  const auto refused = c.Get("/refused");
  REQUIRE(refused);
  CHECK(refused->status == 403);
  const auto missing = c.Get("/nowhere");
  REQUIRE(missing);
  CHECK(missing->status == 404);
  CHECK(json::parse(missing->body).at("error").at("message") == "no such endpoint: GET /nowhere");
  const auto thrown = c.Get("/throws");
  REQUIRE(thrown);
  CHECK(thrown->status == 500);
  CHECK(json::serialize(json::parse(thrown->body)) == R"({"error":{"code":"internal","message":"internal error"}})");
  const auto preflight = c.Options("/ok");
  REQUIRE(preflight);
  CHECK(!preflight->has_header("Access-Control-Allow-Origin"));

  const auto lines = l.lines();
  std::vector<json::object> requests;
  for (const auto& line : lines)
    if (line.at("msg") == "request")
      requests.push_back(line);
  REQUIRE(requests.size() == 6);
  CHECK(requests[0].at("request_id").as_string() == id);
  CHECK(requests[0].at("route") == "/ok");
  CHECK(requests[0].at("status") == 200);
  CHECK(!requests[0].contains("error"));
  CHECK(requests[0].at("latency_us").as_int64() >= 0);
  CHECK(requests[1].at("route") == "/logged (own line)");  // the route's own line, not a second one
  CHECK(requests[1].at("request_id").as_string() == own->get_header_value("X-Request-Id"));
  CHECK(requests[2].at("error") == "forbidden");
  CHECK(requests[3].at("error") == "not_found");
  CHECK(requests[4].at("error") == "internal");
  bool exception_logged = false;
  for (const auto& line : lines)
    exception_logged = exception_logged || (line.at("msg") == "unhandled exception" && line.at("detail") == "boom");
  CHECK(exception_logged);
}

TEST_CASE("serve_requests: refusals, the body limit and CORS when configured") {
  listener_options opt;
  opt.max_body = 64;
  opt.cors.origins = {"https://app.example.org"};
  listener l(opt);
  auto c = l.client();
  c.set_default_headers({{"Origin", "https://app.example.org"}});
  const auto big = c.Post("/ok", std::string(100, 'x'), "application/json");
  REQUIRE(big);
  CHECK(big->status == 413);
  CHECK(json::parse(big->body).at("error").at("code") == "payload_too_large");
  CHECK(big->get_header_value("Connection") == "close");

  const auto ok = c.Get("/ok");
  REQUIRE(ok);
  CHECK(ok->get_header_value("Access-Control-Allow-Origin") == "https://app.example.org");
  const auto pre = c.Options("/ok", httplib::Headers{{"Access-Control-Request-Method", "GET"},
                                                     {"Access-Control-Request-Headers", "X-Api-Key"}});
  REQUIRE(pre);
  CHECK(pre->status == 204);
  CHECK(pre->get_header_value("Access-Control-Allow-Headers").find("X-Api-Key") != std::string::npos);
  CHECK(pre->has_header("X-Request-Id"));

  httplib::Client other("127.0.0.1", l.port);
  other.set_default_headers({{"Origin", "https://evil.example"}});
  const auto foreign = other.Get("/ok");
  REQUIRE(foreign);
  CHECK(foreign->status == 200);
  CHECK(!foreign->has_header("Access-Control-Allow-Origin"));
}

/// Sends `bytes` on a new connection and reads until the server closes it or `wait` passes.
std::string send_and_read(int port, const std::string& bytes, std::chrono::milliseconds wait = std::chrono::seconds(5),
                          const char* from = "127.0.0.1") {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(fd >= 0);
  sockaddr_in src{};
  src.sin_family = AF_INET;
  ::inet_pton(AF_INET, from, &src.sin_addr);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&src), sizeof src) == 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  REQUIRE(::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(bytes.size()));
  std::string got;
  const auto until = std::chrono::steady_clock::now() + wait;
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now()).count();
    pollfd p{fd, POLLIN, 0};
    if (left <= 0 || ::poll(&p, 1, static_cast<int>(left)) != 1)
      break;
    char buf[4096];
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0)
      break;
    got.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return got;
}

size_t count_of(const std::string& text, std::string_view what) {
  size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
    ++n;
  return n;
}

TEST_CASE("bounded_server: ordinary HTTP/1.1 is served as before") {
  listener l({});
  // Keep-alive: several requests on one connection.
  httplib::Client c("127.0.0.1", l.port);
  for (int i = 0; i < 5; ++i) {
    const auto r = c.Post("/echo", std::string(1000, 'a'), "application/json");
    REQUIRE(r);
    CHECK(r->status == 200);
    CHECK(json::parse(r->body).at("size") == 1000);
  }
  // Pipelined requests on one connection, the last one closing it.
  const std::string two = send_and_read(l.port,
                                        "GET /ok HTTP/1.1\r\nHost: x\r\n\r\n"
                                        "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                                        "Content-Length: 2\r\nConnection: close\r\n\r\n{}");
  CHECK(count_of(two, "HTTP/1.1 200 OK") == 2);
  CHECK(two.find(R"("body":"{}")") != std::string::npos);
  // A chunked body within the limit, and Expect: 100-continue.
  const std::string chunked = send_and_read(l.port,
                                            "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                                            "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
                                            "3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n");
  CHECK(chunked.find(R"("body":"abcde")") != std::string::npos);
  const std::string expect = send_and_read(l.port,
                                           "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                                           "Expect: 100-continue\r\nContent-Length: 3\r\nConnection: close\r\n\r\nxyz");
  CHECK(expect.starts_with("HTTP/1.1 100 Continue"));
  CHECK(expect.find(R"("body":"xyz")") != std::string::npos);
  // identity is no coding.
  const auto identity = c.Post("/echo", httplib::Headers{{"Content-Encoding", "identity"}}, "{}", "application/json");
  REQUIRE(identity);
  CHECK(identity->status == 200);
}

TEST_CASE("bounded_server: each bound refuses with its status, an error body and a log line") {
  connection_limits limits;
  limits.max_header_bytes = 2048;
  limits.max_headers = 10;
  limits.request_timeout = std::chrono::seconds(1);
  limits.max_connections_per_client = 2;
  listener_options opt;
  opt.max_body = 100;
  listener l(opt, limits);

  const auto refused = [](const std::string& answer, int status, std::string_view code) {
    INFO(answer.substr(0, 200));
    CHECK(answer.starts_with("HTTP/1.1 " + std::to_string(status) + " "));
    CHECK(answer.find("\r\nConnection: close\r\n") != std::string::npos);
    CHECK(answer.find("\r\nX-Request-Id: ") != std::string::npos);
    const auto body = answer.find("\r\n\r\n");
    REQUIRE(body != std::string::npos);
    CHECK(json::parse(answer.substr(body + 4)).at("error").at("code").as_string() == code);
  };
  std::string eleven = "GET /ok HTTP/1.1\r\n";
  for (int i = 0; i < 11; ++i)
    eleven += "X-" + std::to_string(i) + ": 1\r\n";
  refused(send_and_read(l.port, eleven + "\r\n"), 431, "invalid_request");
  refused(send_and_read(l.port, "GET /ok HTTP/1.1\r\nX-Big: " + std::string(3000, 'b') + "\r\n\r\n"), 431,
          "invalid_request");
  // Ten header lines, and their bytes within the limit, are served.
  std::string ten = "GET /ok HTTP/1.1\r\n";
  for (int i = 0; i < 9; ++i)
    ten += "X-" + std::to_string(i) + ": 1\r\n";
  CHECK(send_and_read(l.port, ten + "Connection: close\r\n\r\n").starts_with("HTTP/1.1 200 "));
  // Far over the limit: refused at once. A little over: read, dropped, then refused, so a client
  // still sending its body gets the answer rather than a reset.
  refused(send_and_read(l.port, "POST /echo HTTP/1.1\r\nContent-Length: 10000000\r\n\r\n"), 413, "payload_too_large");
  refused(send_and_read(l.port, "POST /echo HTTP/1.1\r\nContent-Length: 150\r\n\r\n" + std::string(150, 'x')), 413,
          "payload_too_large");
  std::string chunks = "POST /echo HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n";
  for (int i = 0; i < 2000; ++i)
    chunks += "40\r\n" + std::string(64, 'c') + "\r\n";
  refused(send_and_read(l.port, chunks), 413, "payload_too_large");
  refused(send_and_read(l.port, "POST /echo HTTP/1.1\r\nContent-Encoding: br\r\nContent-Length: 2\r\n\r\n{}"), 415,
          "invalid_request");
  // A head that does not end within the deadline.
  const auto start = std::chrono::steady_clock::now();
  refused(send_and_read(l.port, "GET /ok HTTP/1.1\r\nX-Slow: 1\r\n"), 408, "invalid_request");
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(3));

  // Two connections of one client are served; a third while both are open is refused. The
  // machine's own 127.0.0.1 is never capped, so the client is 127.0.0.2.
  httplib::Client a("127.0.0.1", l.port), b("127.0.0.1", l.port);
  for (httplib::Client* c : {&a, &b}) {
    c->set_keep_alive(true);
    c->set_interface("127.0.0.2");
  }
  REQUIRE(a.Get("/ok"));
  REQUIRE(b.Get("/ok"));
  const std::string third = send_and_read(l.port, "GET /ok HTTP/1.1\r\n\r\n", std::chrono::seconds(5), "127.0.0.2");
  refused(third, 429, "rate_limited");
  CHECK(third.find("\r\nRetry-After: 1\r\n") != std::string::npos);

  for (int i = 0; i < 3; ++i)  // 127.0.0.1 meanwhile is not counted
    CHECK(send_and_read(l.port, "GET /ok HTTP/1.1\r\nConnection: close\r\n\r\n").starts_with("HTTP/1.1 200 "));

  // A client waiting for 100 Continue is refused before it sends an oversized body.
  const std::string expect_big = send_and_read(
      l.port, "POST /echo HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 101\r\n\r\n", std::chrono::seconds(2));
  CHECK(expect_big.find("100 Continue") == std::string::npos);
  refused(expect_big, 413, "payload_too_large");
  // A GET's body, which no route reads, ends the connection after the answer rather than being
  // read as the next request.
  const std::string get_body =
      send_and_read(l.port, "GET /ok HTTP/1.1\r\nContent-Length: 40\r\n\r\nGET /ok HTTP/1.1\r\nX-Smuggled: 1\r\n\r\n");
  CHECK(count_of(get_body, "HTTP/1.1 200 OK") == 1);
  CHECK(get_body.find("\r\nConnection: close\r\n") != std::string::npos);  // and the answer says so
  CHECK(get_body.find("Keep-Alive:") == std::string::npos);

  // One request line per refusal, with the method and route once the head was read.
  std::map<int64_t, size_t> by_status;
  for (const auto& line : l.lines())
    if (line.at("msg") == "request" && line.contains("error")) {
      ++by_status[line.at("status").as_int64()];
      CHECK(line.contains("latency_us"));
      if (line.at("status").as_int64() == 413)
        CHECK(line.at("route") == "/echo");
      if (line.at("status").as_int64() == 431)
        CHECK(line.at("route") == "");
    }
  CHECK(by_status[431] == 2);
  CHECK(by_status[413] == 4);
  CHECK(by_status[415] == 1);
  CHECK(by_status[408] == 1);
  CHECK(by_status[429] == 1);
}

}  // namespace
}  // namespace enact::http
