// SPDX-License-Identifier: Apache-2.0
// The TEE's own error codes, and the code of docs/protocol.md §0 each stands for (every service
// that serves a TEE's answers maps them the same way; the TEE itself knows nothing of HTTP).
#pragma once

#include <system_error>

#include "enact/api/errc.hpp"
#include "enact/error.hpp"

namespace enact::tee {

enum class tee_errc {
  /// A local failure of the TEE or its files: a root key file that cannot be read or has the
  /// wrong mode, a fixture or certificate that cannot be built. Never described to a caller.
  failed = 1,
  /// The TEE cannot answer now: the dstack guest agent is unreachable or answered something
  /// unusable, the backend cannot attest, the evidence directory cannot be read.
  unavailable,
  /// What was asked for does not exist (an evidence file, evidence at all).
  not_found,
  /// The caller's value or the configuration was refused: an evidence name or domain, a data
  /// directory this server may not use.
  invalid_argument,
};

inline const std::error_category& tee_category() noexcept {
  static const enact::detail::errc_category<tee_errc> c(
      "enact.tee", {"", "TEE failure", "TEE unavailable", "not found in the TEE", "invalid argument to the TEE"});
  return c;
}

inline std::error_code make_error_code(tee_errc e) noexcept { return {static_cast<int>(e), tee_category()}; }

}  // namespace enact::tee

template <>
struct std::is_error_code_enum<enact::tee::tee_errc> : std::true_type {};

namespace enact::tee {

/// The wire code of a TEE failure: failed is internal (never described to the caller).
[[nodiscard]] constexpr api_errc to_api_errc(tee_errc e) noexcept {
  switch (e) {
    case tee_errc::invalid_argument:
      return api_errc::invalid_request;
    case tee_errc::not_found:
      return api_errc::not_found;
    case tee_errc::unavailable:
      return api_errc::unavailable;
    case tee_errc::failed:
      break;
  }
  return api_errc::internal;
}

}  // namespace enact::tee
