// SPDX-License-Identifier: Apache-2.0
// `enact::api_errc`: the error codes of the wire contract (docs/protocol.md §0), shared by the servers that
// answer with them and the clients that read them back, plus the codes a client uses when it got
// no usable answer. Each code has a wire name ("invalid_request", …) and an HTTP status.
#pragma once

#include <optional>
#include <string_view>
#include <system_error>

#include "enact/error.hpp"

namespace enact {

enum class api_errc {
  // docs/protocol.md §0, in table order.
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
  // No usable answer: the connection could not be made or broke, a timeout expired, or the answer
  // was not what docs/protocol.md promises (not JSON, a missing or ill-typed field).
  connection_failed,
  timeout,
  bad_response,
};

namespace detail {
const std::error_category& api_category() noexcept;
}  // namespace detail
inline std::error_code make_error_code(api_errc e) noexcept { return {static_cast<int>(e), detail::api_category()}; }

}  // namespace enact
ENACT_ERRC_ENUM(enact::api_errc)

namespace enact {

/// The wire name of a code ("invalid_request", …, "connection_failed").
[[nodiscard]] std::string_view name(api_errc c) noexcept;
/// The code whose wire name is `name`, if any.
[[nodiscard]] std::optional<api_errc> api_errc_from_name(std::string_view name) noexcept;
/// The code an error status stands for when the body names no known code (a proxy's 502 page,
/// a code added to the contract later): the §0 table read backwards; 502 and 504 count as
/// unavailable; any other status is bad_response.
[[nodiscard]] api_errc api_errc_from_status(int status) noexcept;

namespace api {
using enact::api_errc;
}  // namespace api

}  // namespace enact
