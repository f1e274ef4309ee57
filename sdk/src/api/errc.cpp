// SPDX-License-Identifier: Apache-2.0
// The names, messages and statuses of the wire error codes (docs/protocol.md §0).
#include "enact/api/errc.hpp"

#include <array>

namespace enact {

namespace {
// Indexed by the enumerator's value; [0] is success.
constexpr std::array<std::string_view, 19> kNames = {
    "",
    "invalid_request",
    "typed_data_invalid",
    "chain_id_mismatch",
    "unauthenticated",
    "signature_invalid",
    "signature_expired",
    "insufficient_credits",
    "forbidden",
    "not_found",
    "conflict",
    "payload_too_large",
    "action_failed",
    "rate_limited",
    "unavailable",
    "internal",
    "connection_failed",
    "timeout",
    "bad_response",
};
}  // namespace

namespace detail {
const std::error_category& api_category() noexcept {
  static const errc_category<api_errc> c(
      "enact.api", {"", "invalid request", "typed data invalid", "chainId mismatch", "unauthenticated",
                    "signature invalid", "signature expired", "insufficient credits", "forbidden", "not found",
                    "conflict", "payload too large", "action failed", "rate limited", "service unavailable",
                    "internal server error", "connection failed", "timeout", "bad response"});
  return c;
}
}  // namespace detail

std::string_view name(api_errc c) noexcept {
  const auto i = static_cast<size_t>(c);
  return i < kNames.size() ? kNames[i] : std::string_view("unknown");
}

std::optional<api_errc> api_errc_from_name(std::string_view n) noexcept {
  for (size_t i = 1; i < kNames.size(); ++i)
    if (kNames[i] == n)
      return static_cast<api_errc>(i);
  return std::nullopt;
}

api_errc api_errc_from_status(int status) noexcept {
  switch (status) {
    case 400:
      return api_errc::invalid_request;
    case 401:
      return api_errc::unauthenticated;
    case 402:
      return api_errc::insufficient_credits;
    case 403:
      return api_errc::forbidden;
    case 404:
      return api_errc::not_found;
    case 409:
      return api_errc::conflict;
    case 413:
      return api_errc::payload_too_large;
    case 422:
      return api_errc::action_failed;
    case 429:
      return api_errc::rate_limited;
    case 500:
      return api_errc::internal;
    case 502:
    case 503:
    case 504:
      return api_errc::unavailable;
    default:
      return api_errc::bad_response;
  }
}

}  // namespace enact
