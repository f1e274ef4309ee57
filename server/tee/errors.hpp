// SPDX-License-Identifier: Apache-2.0
// The TEE's own error codes. The TEE knows nothing of HTTP: the layer that serves its answers
// maps these to the wire (the core's to_http: invalid_argument → 400 invalid_request, not_found
// → 404, unavailable → 503, failed → 500 internal error), so tee/ depends on no server folder.
#pragma once

#include <system_error>

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

}  // namespace enact::tee

ENACT_ERRC(enact::tee, tee_errc, tee_category, "enact.tee", "TEE failure", "TEE unavailable", "not found in the TEE",
           "invalid argument to the TEE")
