// SPDX-License-Identifier: Apache-2.0
// The core's errors on the wire: an error from any layer the core serves — the request parser,
// the ledger, the envelope validator, the payment provider, the sandbox, the TEE — becomes the
// HTTP status and `{"error": {"code", "message", "details"?}}` body of the HTTP kit
// (http/errors.hpp; docs/protocol.md §0). The kit's names are re-exported here for the routes.
#pragma once

#include "enact/api/errc.hpp"
#include "enact/error.hpp"
#include "http/errors.hpp"

namespace enact::core {

using http::error_body;
using http::http_error;
using http::status_of;

/// Maps an error from any layer (api_errc, ledger_errc, envelope_errc, billing_errc, runtime_errc,
/// tee_errc, and parse errors of the SDK's codecs, which are request errors here) to its wire
/// form. Storage failures and bugs never describe internals to the caller.
[[nodiscard]] http_error to_http(const error& e);

}  // namespace enact::core
