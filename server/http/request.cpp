// SPDX-License-Identifier: Apache-2.0
#include "http/request.hpp"

#include <httplib.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <exception>

#include "enact/codec/hex.hpp"
#include "enact/crypto/random.hpp"
#include "http/bounded_server.hpp"
#include "http/errors.hpp"

namespace enact::http {
namespace {

using steady = std::chrono::steady_clock;

thread_local request_scope t_request;

void begin_request() {
  t_request.active = true;
  t_request.logged = false;
  t_request.id = new_request_id();
  t_request.start = steady::now();
}

/// The `error.code` of an error body of docs/protocol.md §0, or empty.
std::string error_code_of(const std::string& body) {
  std::error_code ec;
  const boost::json::value v = boost::json::parse(body, ec);
  if (!ec && v.is_object())
    if (const auto* e = v.as_object().if_contains("error"); e && e->is_object())
      if (const auto* code = e->as_object().if_contains("code"); code && code->is_string())
        return std::string(code->get_string());
  return {};
}

/// `identity`, the one content coding that is no coding (RFC 9110 §8.4.1), in any case.
bool is_identity_encoding(std::string_view v) {
  constexpr std::string_view kIdentity = "identity";
  return v.size() == kIdentity.size() && std::equal(v.begin(), v.end(), kIdentity.begin(), [](char a, char b) {
           return std::tolower(static_cast<unsigned char>(a)) == b;
         });
}

/// Answers 415 when the request names a Content-Encoding other than identity (docs/protocol.md §6
/// "Connections"): httplib would inflate the body before any limit applies. The body is left
/// unread, so the connection closes.
bool refused_encoding(const httplib::Request& req, httplib::Response& res) {
  if (!req.has_header("Content-Encoding"))
    return false;
  const std::string enc = req.get_header_value("Content-Encoding");
  if (is_identity_encoding(enc))
    return false;
  res.set_header("Connection", "close");
  auto e = make_error(api_errc::invalid_request, "Content-Encoding: '" + well_formed_utf8(enc.substr(0, 64)) +
                                                     "' is not accepted; send the body uncompressed");
  e.status = 415;
  send_error(res, e);
  return true;
}

}  // namespace

std::string new_request_id() {
  std::array<uint8_t, 8> b{};
  crypto::random_bytes(b);
  return codec::hex::encode(b);
}

request_scope& current_request() {
  if (!t_request.active)
    begin_request();
  return t_request;
}

void mark_logged() { current_request().logged = true; }

int64_t request_latency_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(steady::now() - current_request().start).count();
}

boost::json::object access_line(std::string_view method, std::string route, int status, std::string error_code) {
  boost::json::object line{{"request_id", current_request().id},
                           {"method", method},
                           {"route", std::move(route)},
                           {"status", status},
                           {"latency_us", request_latency_us()}};
  if (!error_code.empty())
    line["error"] = std::move(error_code);
  return line;
}

void serve_requests(httplib::Server& server, logger& log, const listener_options& opt) {
  server.set_pre_routing_handler([](const httplib::Request& req, httplib::Response& res) {
    begin_request();
    res.set_header("X-Request-Id", t_request.id);
    // httplib inflates a gzip or brotli body before any limit applies (an 841-byte request became
    // 512 MiB): refused before the body is read (docs/protocol.md §6).
    if (refused_encoding(req, res))
      return httplib::Server::HandlerResponse::Handled;
    return httplib::Server::HandlerResponse::Unhandled;
  });
  if (auto* bounded = dynamic_cast<bounded_server*>(&server))
    bounded->on_refusal([&log](const bounded_server::refusal& r) {
      log.info("request", {{"request_id", r.request_id},
                           {"method", r.method},
                           {"route", well_formed_utf8(r.path)},
                           {"status", r.status},
                           {"latency_us", r.latency_us},
                           {"error", r.code}});
    });
  if (opt.cors.enabled())
    server.Options(
        R"(/.*)", [cors = opt.cors](const httplib::Request& req, httplib::Response& res) { cors.preflight(req, res); });
  server.set_post_routing_handler([&log, cors = opt.cors](const httplib::Request& req, httplib::Response& res) {
    if (refused_on_this_thread()) {  // answered and logged by the bounded stream
      current_request().active = false;
      return;
    }
    if (req.method != "OPTIONS")
      cors.apply(req, res);
    request_scope& r = current_request();  // begun here for a request line httplib refused before routing
    if (!res.has_header("X-Request-Id"))
      res.set_header("X-Request-Id", r.id);
    if (!r.logged)
      log.info("request", access_line(req.method, well_formed_utf8(req.path), res.status,
                                      res.status >= 400 ? error_code_of(res.body) : std::string()));
    r.active = false;
  });
  server.set_error_handler([opt](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty() || refused_on_this_thread())
      return;
    if (opt.close_after_refusal && res.status != 404)
      res.set_header("Connection", "close");  // the first Connection header, the one clients read
    if (res.status == 413)
      send_error(res, make_error(api_errc::payload_too_large, "request body too large"));
    else if (res.status == 404)
      send_error(res, make_error(api_errc::not_found, "no such endpoint: " + req.method + " " + req.path));
    else if (res.status == 405 && opt.name_method_not_allowed)
      send_error(res, make_error(api_errc::invalid_request, "method not allowed: " + req.method + " " + req.path));
    else if (res.status >= 400 && res.status < 500)
      send_error(res, make_error(api_errc::invalid_request, "bad request"));
  });
  server.set_exception_handler([&log](const httplib::Request& req, httplib::Response& res, std::exception_ptr ep) {
    std::string what = "unknown exception";
    try {
      if (ep)
        std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    log.error("unhandled exception", {{"path", req.path}, {"detail", what}});
    send_error(res, make_error(api_errc::internal, "internal error"));
  });
  // A client that waits for 100 Continue before its body is told of a refusal instead, so it
  // sends no body the server would not read (docs/protocol.md §6 "Connections").
  server.set_expect_100_continue_handler([max = opt.max_body](const httplib::Request& req, httplib::Response& res) {
    if (refused_encoding(req, res))
      return 415;
    if (req.get_header_value<uint64_t>("Content-Length") > max) {
      res.set_header("Connection", "close");
      send_error(res, make_error(api_errc::payload_too_large,
                                 "request body too large: at most " + std::to_string(max) + " bytes"));
      return 413;
    }
    return 100;
  });
  server.set_tcp_nodelay(true);
  server.set_payload_max_length(opt.max_body);
}

bool is_json_media_type(std::string_view type) {
  type = type.substr(0, type.find(';'));
  while (!type.empty() && (type.back() == ' ' || type.back() == '\t'))
    type.remove_suffix(1);
  constexpr std::string_view kJson = "application/json";
  return type.size() == kJson.size() && std::equal(type.begin(), type.end(), kJson.begin(), [](char a, char b) {
           return std::tolower(static_cast<unsigned char>(a)) == b;
         });
}

result<void> check_body_size(const httplib::Request& req, size_t limit) {
  if (req.body.size() > limit)
    return fail(api_errc::payload_too_large,
                "body: " + std::to_string(req.body.size()) + " bytes, at most " + std::to_string(limit));
  return {};
}

result<void> check_json_media_type(const httplib::Request& req) {
  const std::string type = req.get_header_value("Content-Type");
  if (!is_json_media_type(type))
    return fail(api_errc::invalid_request,
                "Content-Type: expected application/json, got '" + type.substr(0, 100) + "'");
  return {};
}

result<boost::json::value> parse_json_body(const httplib::Request& req) {
  std::error_code ec;
  boost::json::value v = boost::json::parse(req.body, ec);
  if (ec)
    return fail(api_errc::invalid_request, "body: invalid JSON (" + ec.message() + ")");
  return v;
}

result<boost::json::object> json_object_body(const httplib::Request& req, size_t limit) {
  ENACT_TRY_VOID(check_body_size(req, limit));
  ENACT_TRY_VOID(check_json_media_type(req));
  ENACT_TRY(boost::json::value v, parse_json_body(req));
  if (!v.is_object())
    return fail(api_errc::invalid_request, "body: expected a JSON object");
  return std::move(v.as_object());
}

result<void> only_query(const httplib::Request& req, std::initializer_list<std::string_view> names) {
  const auto q = req.target.find('?');
  if (q == std::string::npos)
    return {};
  std::string_view rest = std::string_view(req.target).substr(q + 1);
  while (!rest.empty()) {
    const auto amp = rest.find('&');
    const std::string_view pair = rest.substr(0, amp);
    rest = amp == std::string_view::npos ? std::string_view() : rest.substr(amp + 1);
    const std::string_view name = pair.substr(0, pair.find('='));
    if (!name.empty() && std::find(names.begin(), names.end(), name) == names.end())
      return fail(api_errc::invalid_request, "query." + std::string(name.substr(0, 64)) + ": unknown parameter");
  }
  return {};
}

}  // namespace enact::http
