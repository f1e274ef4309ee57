// SPDX-License-Identifier: Apache-2.0
// Enact.fetch made by the server process under the egress policy (see fetch.hpp).
#include "runtime/fetch.hpp"

#include <httplib.h>

#include <boost/json/serialize.hpp>

#include <algorithm>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "runtime/sandbox.hpp"
#include "runtime/utf8.hpp"

namespace json = boost::json;

namespace enact::runtime {
namespace {

using clock = std::chrono::steady_clock;

// Leaves the worker this much of the run's wall time to take the answer in.
constexpr auto kAnswerMargin = std::chrono::milliseconds(20);
constexpr size_t kMaxRequestHeaders = 64;
constexpr std::string_view kMethods[] = {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"};
// Headers the server sets itself, or that would change how the request is framed or routed.
constexpr std::string_view kReservedHeaders[] = {
    "host",       "content-length", "transfer-encoding",   "connection",      "upgrade", "te", "trailer",
    "keep-alive", "expect",         "proxy-authorization", "proxy-connection"};
constexpr std::string_view kUserAgent = "enact-fetch/1";

error refused(std::string why) {
  return error{std::make_error_code(std::errc::operation_not_permitted), "fetch: " + why};
}

char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

bool token_char(char c) {
  return (c >= '0' && c <= '9') || (lower(c) >= 'a' && lower(c) <= 'z') ||
         std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

struct request_spec {
  std::string method = "GET";
  std::vector<std::pair<std::string, std::string>> headers;  // names in lower case
  std::string body;
  bool has_body = false;
};

// `init` as the request: method, headers (an object of strings or numbers), body (a string).
result<request_spec> read_init(const json::value* init) {
  request_spec r;
  if (init == nullptr || init->is_null())
    return r;
  if (!init->is_object())
    return refused("the options must be an object");
  const json::object& o = init->get_object();
  if (const json::value* m = o.if_contains("method"); m != nullptr && !m->is_null()) {
    if (!m->is_string())
      return refused("method must be a string");
    std::string method(m->get_string());
    std::transform(method.begin(), method.end(), method.begin(),
                   [](char c) { return c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c; });
    if (std::find(std::begin(kMethods), std::end(kMethods), method) == std::end(kMethods))
      return refused("method must be one of GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS");
    r.method = std::move(method);
  }
  if (const json::value* h = o.if_contains("headers"); h != nullptr && !h->is_null()) {
    if (!h->is_object())
      return refused("headers must be an object of names and string values");
    if (h->get_object().size() > kMaxRequestHeaders)
      return refused("at most " + std::to_string(kMaxRequestHeaders) + " headers");
    for (const auto& [key, value] : h->get_object()) {
      std::string name(key);
      std::transform(name.begin(), name.end(), name.begin(), lower);
      if (name.empty() || !std::all_of(name.begin(), name.end(), token_char))
        return refused("header name '" + std::string(key).substr(0, 64) + "' is not a valid name");
      if (std::find(std::begin(kReservedHeaders), std::end(kReservedHeaders), name) != std::end(kReservedHeaders))
        return refused("header " + name + " is set by the server and may not be given");
      std::string text;
      if (value.is_string())
        text = std::string(value.get_string());
      else if (value.is_number())
        text = json::serialize(value);
      else
        return refused("header " + name + " must have a string value");
      if (text.find_first_of(std::string_view("\r\n\0", 3)) != std::string::npos)
        return refused("header " + name + " holds a line break or NUL");
      r.headers.emplace_back(std::move(name), std::move(text));
    }
  }
  if (const json::value* b = o.if_contains("body"); b != nullptr && !b->is_null()) {
    if (!b->is_string())
      return refused("body must be a string (JSON.stringify an object first)");
    if (r.method == "GET" || r.method == "HEAD")
      return refused("a " + r.method + " request has no body");
    r.body = std::string(b->get_string());
    r.has_body = true;
  }
  return r;
}

bool same_origin(const egress::url& a, const egress::url& b) {
  return a.scheme == b.scheme && a.port == b.port && a.host_text() == b.host_text();
}

// One request/response exchange with a server at a checked address.
struct exchange {
  int status = 0;
  httplib::Headers headers;
  std::string body;
  bool over_budget = false;
  bool timed_out = false;
  std::string error;  // why no response came (empty when one did)
};

std::string describe(httplib::Error e) {
  switch (e) {
    case httplib::Error::Connection:
      return "could not connect";
    case httplib::Error::SSLConnection:
      return "the TLS handshake failed";
    case httplib::Error::SSLServerVerification:
      return "the server's certificate did not verify";
    case httplib::Error::Read:
      return "reading the response failed";
    case httplib::Error::Write:
      return "sending the request failed";
    case httplib::Error::ConnectionTimeout:
      return "connecting timed out";
    default:
      return "the request failed (" + httplib::to_string(e) + ")";
  }
}

exchange send_once(const egress::url& u, const egress::ip_address& address, const request_spec& spec,
                   clock::time_point until, size_t budget) {
  exchange out;
  const std::string host = u.host_text();
  const std::string base = u.scheme + "://" + (u.h.type == egress::host::kind::ipv6 ? "[" + host + "]" : host) + ":" +
                           std::to_string(u.port);
  httplib::Client client(base);
  // The connection goes to the address that was checked, never to a second lookup's answer; the
  // Host header, the TLS server name and the certificate check keep the URL's host.
  client.set_hostname_addr_map({{host, address.to_string()}});
  client.enable_server_certificate_verification(true);
  client.set_follow_location(false);
  client.set_keep_alive(false);
  // The socket's own timeouts reach past the deadline: the watchdog below ends the exchange at it.
  const auto left =
      std::chrono::duration_cast<std::chrono::microseconds>(until - clock::now()) + std::chrono::milliseconds(250);
  const auto secs = static_cast<time_t>(left.count() / 1'000'000);
  const auto usecs = static_cast<time_t>(left.count() % 1'000'000);
  client.set_connection_timeout(secs, usecs);
  client.set_read_timeout(secs, usecs);
  client.set_write_timeout(secs, usecs);

  httplib::Request req;
  req.method = spec.method;
  req.path = u.target;
  req.set_header("User-Agent", std::string(kUserAgent));
  for (const auto& [name, value] : spec.headers)
    req.headers.emplace(name, value);
  if (spec.has_body) {
    req.body = spec.body;
    if (!req.has_header("content-type"))
      req.set_header("Content-Type", "text/plain;charset=UTF-8");
  }
  req.response_handler = [&](const httplib::Response& r) {
    out.status = r.status;
    out.headers = r.headers;
    return true;
  };
  req.content_receiver = [&](const char* data, size_t n, uint64_t, uint64_t) {
    if (n > budget - out.body.size()) {
      out.over_budget = true;
      return false;
    }
    out.body.append(data, n);
    return true;
  };

  // The time limit covers the whole exchange, however slowly the server trickles its answer:
  // at the deadline the socket is shut down under the request.
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  std::thread watchdog([&] {
    std::unique_lock lock(mu);
    if (!cv.wait_until(lock, until, [&] { return done; })) {
      out.timed_out = true;
      client.stop();
    }
  });
  httplib::Response res;
  httplib::Error err = httplib::Error::Success;
  const bool ok = client.send(req, res, err);
  {
    const std::lock_guard lock(mu);
    done = true;
  }
  cv.notify_one();
  watchdog.join();
  if (!ok && !out.over_budget)
    out.error = out.timed_out || clock::now() >= until ? "timed out" : describe(err);
  return out;
}

json::object headers_json(const httplib::Headers& headers) {
  json::object out;
  for (const auto& [name, value] : headers) {
    std::string key = name;
    std::transform(key.begin(), key.end(), key.begin(), lower);
    const std::string text = utf8::from_duktape(value);
    if (json::value* seen = out.if_contains(key))
      seen->get_string() = std::string(seen->get_string()) + ", " + text;
    else
      out[key] = text;
  }
  return out;
}

json::array header_names(const request_spec& spec) {
  json::array out;
  for (const auto& h : spec.headers)
    out.emplace_back(h.first);
  return out;
}

}  // namespace

fetch_session::fetch_session(const fetch_settings& settings, egress::resolver& resolver, log_fn log)
    : settings_(settings), resolver_(resolver), log_(std::move(log)), deadline_(clock::now() + settings.timeout) {}

result<json::value> fetch_session::fetch(const json::object& args) {
  const auto started = clock::now();
  const json::value* url_v = args.if_contains("url");
  if (url_v == nullptr || !url_v->is_string())
    return refused("the URL must be a string");
  std::string why;
  egress::url u;
  const bool parsed = egress::parse_url(url_v->get_string(), u, why);
  ENACT_TRY(request_spec spec, read_init(args.if_contains("init")));

  json::object entry{{"method", spec.method},
                     {"url", parsed ? u.loggable() : std::string("(unparsed)")},
                     {"request_headers", header_names(spec)},
                     {"request_bytes", spec.body.size()}};
  size_t redirects = 0;
  const auto finish = [&](std::string outcome, int status, size_t bytes) {
    if (!log_)
      return;
    entry["outcome"] = std::move(outcome);
    entry["status"] = status;
    entry["response_bytes"] = bytes;
    entry["redirects"] = redirects;
    entry["ms"] = std::chrono::duration_cast<std::chrono::milliseconds>(clock::now() - started).count();
    log_("action fetch", std::move(entry));
  };
  const auto refuse = [&](std::string reason) -> error {
    finish("refused: " + reason, 0, 0);
    return refused(std::move(reason));
  };

  if (!parsed)
    return refuse(why);
  if (calls_ >= settings_.max_fetches)
    return refuse(settings_.max_fetches == 0
                      ? std::string("this server does not let actions fetch")
                      : "a run may make at most " + std::to_string(settings_.max_fetches) + " fetches");
  ++calls_;
  const clock::time_point until = std::min(started + settings_.timeout, deadline_ - kAnswerMargin);
  bool charged = false;
  for (;;) {
    if (std::string bad = egress::check_url(settings_.policy, u); !bad.empty())
      return refuse(bad);
    std::vector<egress::ip_address> addresses;
    if (u.h.type == egress::host::kind::name) {
      std::string error;
      addresses = resolver_.resolve(u.h.name, until, error);
      if (addresses.empty())
        return refuse(error.empty() ? "host " + u.h.name + " has no address" : error);
    } else {
      addresses = {u.h.ip};
    }
    if (std::string bad = egress::check_addresses(settings_.policy, u, addresses); !bad.empty())
      return refuse(bad);
    if (clock::now() >= until)
      return refuse("timed out before connecting");
    if (!charged) {
      charged = true;
      ++made_;
    }
    const size_t budget = settings_.max_response_bytes - std::min(received_, settings_.max_response_bytes);
    // Every address passed; the first one is used.
    exchange ex = send_once(u, addresses.front(), spec, until, budget);
    received_ += ex.body.size();
    if (ex.over_budget) {
      received_ = settings_.max_response_bytes;
      return refuse("the responses of this run passed " + std::to_string(settings_.max_response_bytes) + " bytes");
    }
    if (!ex.error.empty())
      return refuse(ex.error + " (" + u.origin() + ")");
    const bool redirect =
        ex.status == 301 || ex.status == 302 || ex.status == 303 || ex.status == 307 || ex.status == 308;
    const auto location = ex.headers.find("Location");
    if (!redirect || location == ex.headers.end()) {
      finish("ok", ex.status, ex.body.size());
      return json::value(json::object{{"status", ex.status},
                                      {"ok", ex.status >= 200 && ex.status <= 299},
                                      {"url", u.text()},
                                      {"headers", headers_json(ex.headers)},
                                      {"body", utf8::from_duktape(ex.body)}});
    }
    if (redirects == kMaxRedirects)
      return refuse("more than " + std::to_string(kMaxRedirects) + " redirects");
    ++redirects;
    egress::url next;
    if (!egress::resolve_location(u, location->second, next, why))
      return refuse("redirect to an unusable location: " + why);
    if (ex.status == 303 || ((ex.status == 301 || ex.status == 302) && spec.method == "POST")) {
      if (spec.method != "HEAD")
        spec.method = "GET";
      spec.body.clear();
      spec.has_body = false;
      std::erase_if(spec.headers, [](const auto& h) { return h.first == "content-type"; });
    }
    if (!same_origin(u, next))
      std::erase_if(spec.headers, [](const auto& h) { return h.first == "authorization" || h.first == "cookie"; });
    u = std::move(next);
  }
}

void fetching_handler::on_start(std::chrono::steady_clock::time_point wall_deadline) {
  session_.set_deadline(wall_deadline);
  inner_.on_start(wall_deadline);
}

result<json::value> fetching_handler::call(std::string_view method, const json::object& args) {
  if (method == sandbox::kFetchMethod)
    return session_.fetch(args);
  return inner_.call(method, args);
}

}  // namespace enact::runtime
