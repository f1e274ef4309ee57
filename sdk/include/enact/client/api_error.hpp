// SPDX-License-Identifier: Apache-2.0
// `enact::api_error`: what a typed client throws when a call fails. A server error carries the
// HTTP status and the `{"error": {"code", "message", "details"?}}` body of docs/protocol.md §0, its code
// mapped to `api_errc` (one enumerator per code of the §0 table); a call that got no usable answer
// carries one of the transport codes (connection_failed, timeout, bad_response) and status 0, or
// the status of the unusable answer. Either way the `X-Request-Id` of the response is kept, so a
// failure can be matched to the server's log line. Messages never contain a credential: the client
// scrubs the API key (and any key value the request carried) from what the server sent back.
// The codes themselves (`api_errc`, their wire names) live in enact/api/errc.hpp, which this
// header includes, so code that includes it for `api_errc` alone keeps compiling.
#pragma once

#include <boost/json/value.hpp>

#include <chrono>
#include <optional>
#include <string>

#include "enact/api/errc.hpp"
#include "enact/error.hpp"

namespace enact {

class api_error : public Error {
 public:
  api_error(api_errc code, int status, std::string code_name, std::string message, boost::json::value details = nullptr,
            std::string request_id = {}, std::optional<std::chrono::seconds> retry_after = std::nullopt);

  [[nodiscard]] api_errc errc() const noexcept { return static_cast<api_errc>(code().value()); }
  /// HTTP status of the answer; 0 when there was none.
  [[nodiscard]] int status() const noexcept { return status_; }
  /// The code as the server wrote it (kept even when it is not one of api_errc); the name of
  /// `errc()` when constructed with an empty one.
  [[nodiscard]] const std::string& code_name() const noexcept { return code_name_; }
  /// The human sentence alone; what() is "<code_name>: <message>".
  [[nodiscard]] const std::string& message() const noexcept { return message_; }
  /// `error.details` of the body (e.g. `kind` and `stack` of action_failed); null when absent.
  [[nodiscard]] const boost::json::value& details() const noexcept { return details_; }
  /// The answer's X-Request-Id; empty when there was no answer or it carried none.
  [[nodiscard]] const std::string& request_id() const noexcept { return request_id_; }
  /// The answer's Retry-After in seconds, when it had one (rate_limited, unavailable).
  [[nodiscard]] std::optional<std::chrono::seconds> retry_after() const noexcept { return retry_after_; }

 private:
  int status_;
  std::string code_name_;
  std::string message_;
  boost::json::value details_;
  std::string request_id_;
  std::optional<std::chrono::seconds> retry_after_;
};

}  // namespace enact
