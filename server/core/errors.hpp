// The one place where an error from any layer — the request parser, the ledger, the envelope
// validator, the payment provider, the sandbox — becomes an HTTP status and the
// `{"error": {"code", "message", "details"?}}` body. The codes are the SDK's `enact::api_errc`
// (API.md §0), the same enum the typed client reads them back into.
#pragma once

#include <boost/json.hpp>

#include <string>
#include <string_view>
#include <system_error>

#include "enact/client/api_error.hpp"
#include "enact/error.hpp"

namespace enact::core {

/// What an error looks like on the wire.
struct http_error {
  int status = 500;
  api_errc code = api_errc::internal;
  std::string message;
  boost::json::value details;  // null when there are none
};

/// The status of a code (API.md §0 table).
[[nodiscard]] int status_of(api_errc c) noexcept;

/// Maps an error from any layer (api_errc, ledger_errc, envelope_errc, billing_errc, scope_errc,
/// and parse errors of the SDK's codecs, which are request errors here) to its wire form.
[[nodiscard]] http_error to_http(const error& e);

/// `{"error": {"code", "message", "details"?}}`.
[[nodiscard]] boost::json::object error_body(const http_error& e);

}  // namespace enact::core
