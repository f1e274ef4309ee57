// The core API's error codes (API.md §0) and the one place where an error from any layer — the
// request parser, the ledger, the envelope validator, the payment provider — becomes an HTTP
// status and the `{"error": {"code", "message", "details"?}}` body.
#pragma once

#include <boost/json.hpp>

#include <string>
#include <string_view>
#include <system_error>

#include "enact/error.hpp"

namespace enact {

/// API.md §0, in table order.
enum class core_errc {
  invalid_request = 1,
  typed_data_invalid,
  chain_id_mismatch,
  unauthenticated,
  signature_invalid,
  signature_expired,
  insufficient_credits,
  forbidden,
  not_found,
  conflict,
  payload_too_large,
  action_failed,
  rate_limited,
  unavailable,
  internal,
};

namespace detail {
const std::error_category& core_category() noexcept;
}
inline std::error_code make_error_code(core_errc e) noexcept {
  return {static_cast<int>(e), detail::core_category()};
}

}  // namespace enact
ENACT_ERRC_ENUM(enact::core_errc)

namespace enact::core {

/// What an error looks like on the wire.
struct http_error {
  int status = 500;
  core_errc code = core_errc::internal;
  std::string message;
  boost::json::value details;  // null when there are none
};

/// The wire name of a code: "invalid_request", … .
[[nodiscard]] std::string_view code_name(core_errc c) noexcept;
/// The status of a code (API.md §0 table).
[[nodiscard]] int status_of(core_errc c) noexcept;

/// Maps an error from any layer (core_errc, ledger_errc, envelope_errc, billing_errc, scope_errc,
/// and parse errors of the SDK's codecs, which are request errors here) to its wire form.
[[nodiscard]] http_error to_http(const error& e);

/// `{"error": {"code", "message", "details"?}}`.
[[nodiscard]] boost::json::object error_body(const http_error& e);

}  // namespace enact::core
