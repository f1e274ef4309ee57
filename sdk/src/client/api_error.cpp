#include "enact/client/api_error.hpp"

#include <array>
#include <utility>

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

api_error::api_error(api_errc code, int status, std::string code_name, std::string message, boost::json::value details,
                     std::string request_id, std::optional<std::chrono::seconds> retry_after)
    : Error(make_error_code(code), (code_name.empty() ? std::string(name(code)) : code_name) + ": " + message),
      status_(status),
      code_name_(code_name.empty() ? std::string(name(code)) : std::move(code_name)),
      message_(std::move(message)),
      details_(std::move(details)),
      request_id_(std::move(request_id)),
      retry_after_(retry_after) {}

}  // namespace enact
