// SPDX-License-Identifier: Apache-2.0
// Cross-origin requests from browser pages (the Fetch standard's CORS protocol): a small policy a
// listener may carry. Off unless origins are configured: without it no response carries an
// Access-Control-* header, a browser page of another site can read nothing it is answered, and
// the JSON-only request bodies keep it from sending anything but a preflight.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace httplib {
struct Request;
struct Response;
}  // namespace httplib

namespace enact::http {

struct cors_policy {
  /// The origins whose pages may call ("https://app.example.org", scheme, host and port as the
  /// browser sends them in Origin; compared without regard to case); "*" allows every origin.
  /// Empty: CORS is off.
  std::vector<std::string> origins;
  /// Methods a preflight allows.
  std::vector<std::string> methods{"GET", "POST", "PATCH", "DELETE", "OPTIONS"};
  /// Request headers a preflight allows: the credentials of docs/protocol.md §0, the JSON body's type and
  /// the idempotency key.
  std::vector<std::string> headers{"Authorization", "X-Api-Key", "X-Wallet-Auth", "Content-Type", "Idempotency-Key"};
  /// Response headers a page may read.
  std::vector<std::string> expose{"X-Request-Id", "Retry-After"};
  /// How long a browser may cache a preflight's answer.
  std::chrono::seconds max_age{600};

  [[nodiscard]] bool enabled() const { return !origins.empty(); }

  /// The Access-Control-Allow-Origin value for a request from `origin`: "*" when every origin
  /// is allowed, the origin itself when it is listed, nothing otherwise (or when off).
  [[nodiscard]] std::optional<std::string> allowed_origin(std::string_view origin) const;

  /// Adds the headers of an actual (non-preflight) response to `res` when the request's Origin
  /// is allowed; returns whether it was.
  bool apply(const httplib::Request& req, httplib::Response& res) const;

  /// Answers an OPTIONS preflight: 204 with the allowed methods, headers and max age when the
  /// Origin is allowed and so are the requested method and every requested header; otherwise 403
  /// forbidden with the error body and no CORS header (the browser then refuses the request).
  void preflight(const httplib::Request& req, httplib::Response& res) const;
};

}  // namespace enact::http
