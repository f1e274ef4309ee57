// SPDX-License-Identifier: Apache-2.0
// The server's check of a wallet-proof envelope (docs/protocol.md §2 "Envelope version 2"):
// eip712::envelope::check against this deployment (its chain id and registry), with the version
// each flow accepts, then the single use of a version 2 nonce in the metering store, so a
// signature authorizes what it names once, on this deployment only, across restarts and across the
// servers of a fleet.
#pragma once

#include <boost/json.hpp>

#include <optional>
#include <string_view>

#include "core/service.hpp"
#include "enact/eip712/envelope.hpp"
#include "enact/result.hpp"

namespace enact::core {

/// What the flow binds besides the signer: the account converted (ConvertAccount) or the request
/// carrying the header (BillingAuth).
struct envelope_binding {
  std::optional<address> expected_signer;
  std::optional<hash256> account;
  std::optional<eip712::envelope::request_binding> request;
};

/// Whether the flow takes the specification's version 1: CreateWallet and AddUsageApiKey always
/// (they mint for the signer, so a replay gains nothing), ConvertAccount and BillingAuth only when
/// the operator opted in (config::accept_envelope_v1).
[[nodiscard]] bool accepts_v1(eip712::envelope::kind k, const config& cfg) noexcept;

/// Checks `typed_data` (its compact serialization `serialized_size` bytes) and `signature_hex` for
/// flow `k`. A version 2 nonce is recorded as used only once every other check passed; its
/// second use is envelope_errc::replayed. Without a metering store a version 2 nonce cannot be
/// kept: 503 unavailable.
[[nodiscard]] result<eip712::envelope::verified> check_envelope(const services& svc, const config& cfg,
                                                                eip712::envelope::kind k,
                                                                const boost::json::value& typed_data,
                                                                size_t serialized_size, std::string_view signature_hex,
                                                                const envelope_binding& binding);

/// Same, for typed data as JSON text (the X-Wallet-Auth header's), parsed once by the check.
[[nodiscard]] result<eip712::envelope::verified> check_envelope(const services& svc, const config& cfg,
                                                                eip712::envelope::kind k,
                                                                std::string_view typed_data_json,
                                                                std::string_view signature_hex,
                                                                const envelope_binding& binding);

}  // namespace enact::core
