// SPDX-License-Identifier: Apache-2.0
// The error side of every listener (docs/protocol.md §0): an error becomes an HTTP status and the body
// `{"error": {"code", "message", "details"?}}`. The codes are the SDK's `enact::api_errc`, the
// same enum the typed clients read them back into. What maps a layer's own codes (the ledger's,
// the TEE's, the trigger store's) to `api_errc` lives with the layer that serves it; this kit
// knows `api_errc` itself and the SDK's parse errors.
#pragma once

#include <boost/json.hpp>

#include <string>
#include <string_view>

#include "enact/api/errc.hpp"
#include "enact/error.hpp"

namespace httplib {
struct Response;
}

namespace enact::http {

/// What an error looks like on the wire.
struct http_error {
  int status = 500;
  api_errc code = api_errc::internal;
  std::string message;
  boost::json::value details;  // null when there are none
};

/// The status of a code (docs/protocol.md §0 table).
[[nodiscard]] int status_of(api_errc c) noexcept;

/// The wire form of an error whose code is an `api_errc`, or an SDK parse error (a codec, scope,
/// CID or cron error: the request carried a bad value, invalid_request). Any other code is a bug
/// here: internal. An internal error's message never describes internals: "internal error".
[[nodiscard]] http_error to_http(const error& e);

/// The wire form of `code` with `message`, no details.
[[nodiscard]] http_error make_error(api_errc code, std::string message);

/// `{"error": {"code", "message", "details"?}}`.
[[nodiscard]] boost::json::object error_body(const http_error& e);

/// `text` with every byte that is not part of well-formed UTF-8 (RFC 3629: no overlong forms, no
/// surrogates, nothing above U+10FFFF) replaced by U+FFFD. Messages quote what the client sent
/// (a query value, a path) and the JSON serializer copies bytes at or above 0x80 as they are, so
/// without this a percent-encoded 0xFF in a query would make an error body invalid JSON.
[[nodiscard]] std::string well_formed_utf8(std::string text);

/// Whether `text` is well-formed UTF-8 (what well_formed_utf8 leaves as it is).
[[nodiscard]] bool is_well_formed_utf8(std::string_view text);

/// Answers `status` with `body` serialized as application/json (as well-formed UTF-8).
void send_json(httplib::Response& res, int status, const boost::json::value& body);

/// Answers `e` with its status and error body.
void send_error(httplib::Response& res, const http_error& e);

}  // namespace enact::http
