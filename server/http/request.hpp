// SPDX-License-Identifier: Apache-2.0
// What every listener does around its routes (docs/protocol.md §0): a request id on every response (the
// X-Request-Id header) and exactly one access-log line per request with it, JSON error bodies
// for whatever no route answered, and the rules every JSON request obeys (media type, size,
// syntax, no unknown query parameters).
//
// httplib runs the pre-routing handler, the route's handler, the error handler and the
// post-routing handler of one request on one worker thread, so the request's id and start time
// travel between them in a thread-local `request_scope`: a route that writes a richer line of its
// own (the core's, with the route pattern and the caller) calls mark_logged(), and the
// post-routing handler writes the plain line for every other response.
#pragma once

#include <boost/json.hpp>

#include <chrono>
#include <cstddef>
#include <initializer_list>
#include <string>
#include <string_view>

#include "enact/result.hpp"
#include "http/cors.hpp"
#include "http/log.hpp"

namespace httplib {
class Server;
struct Request;
struct Response;
}  // namespace httplib

namespace enact::http {

/// 16 lowercase hex digits from the CSPRNG.
[[nodiscard]] std::string new_request_id();

/// The request being served on this thread.
struct request_scope {
  bool active = false;  // between the pre- and post-routing handlers
  bool logged = false;  // a route wrote the request's log line itself
  std::string id;
  std::chrono::steady_clock::time_point start;
};

/// This thread's request; begun by the pre-routing handler of serve_requests(), or by the first
/// caller of current_request() when none was (a listener without it, or a request httplib
/// refused before routing).
[[nodiscard]] request_scope& current_request();

/// Marks this thread's request as logged: the post-routing handler writes no line for it.
void mark_logged();

/// Microseconds since the request began.
[[nodiscard]] int64_t request_latency_us();

/// The access-log line of a request: request id, method, route, status, latency, and the error
/// code of an error answer. `error_code` empty: read from the response body when it is an error
/// body of docs/protocol.md §0.
[[nodiscard]] boost::json::object access_line(std::string_view method, std::string route, int status,
                                              std::string error_code = {});

/// How a listener answers what no route answered.
struct listener_options {
  /// After a request httplib refused itself (anything but an unknown path: a request line or
  /// header over its limits, a body cut short or over the server-wide limit), answer with
  /// `Connection: close`: the rest of the request may be unread and would be parsed as the next
  /// request on this connection.
  bool close_after_refusal = true;
  /// Name a 405 as "method not allowed: <method> <path>" rather than "bad request".
  bool name_method_not_allowed = true;
  /// The largest body any route accepts (httplib refuses larger ones with 413).
  size_t max_body = 1 << 20;
  /// Cross-origin access (http/cors.hpp); off by default. When on, every path answers an OPTIONS
  /// preflight and every other response to an allowed Origin carries the CORS headers.
  cors_policy cors;
};

/// Installs on `server`: the pre- and post-routing handlers (X-Request-Id on every response, one
/// "request" log line per request not marked logged), the error handler (the error body of
/// docs/protocol.md §0 for a 404, 405, 413 or other 4xx no route answered), the exception handler (500
/// internal error, the exception logged), the CORS policy when it is on, TCP_NODELAY (without it, Nagle's algorithm and
/// the client's delayed ACK hold every keep-alive response for ~40 ms) and the body limit. `log` must outlive the
/// server.
void serve_requests(httplib::Server& server, logger& log, const listener_options& opt);

/// Whether a Content-Type names JSON: `application/json`, with parameters (charset) allowed.
[[nodiscard]] bool is_json_media_type(std::string_view type);

/// A request body over `limit` bytes: payload_too_large "body: N bytes, at most M".
[[nodiscard]] result<void> check_body_size(const httplib::Request& req, size_t limit);

/// docs/protocol.md §0: JSON bodies. invalid_request "Content-Type: expected application/json, got '…'"
/// otherwise. Checked before the query: httplib reads a form-encoded body into the request's
/// parameters. A text/plain or form body is also what a page of another site may send without
/// a CORS preflight.
[[nodiscard]] result<void> check_json_media_type(const httplib::Request& req);

/// The body parsed as JSON: invalid_request "body: invalid JSON (…)" when it is not.
[[nodiscard]] result<boost::json::value> parse_json_body(const httplib::Request& req);

/// check_body_size, check_json_media_type and parse_json_body, then a JSON object:
/// invalid_request "body: expected a JSON object" otherwise.
[[nodiscard]] result<boost::json::object> json_object_body(const httplib::Request& req, size_t limit);

/// Refuses query parameters other than `names` (invalid_request "query.<name>: unknown
/// parameter"). Read from the request target itself: httplib also files the fields of a
/// form-encoded body under params, and a body may carry a key.
[[nodiscard]] result<void> only_query(const httplib::Request& req, std::initializer_list<std::string_view> names);

}  // namespace enact::http
