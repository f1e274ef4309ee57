// SPDX-License-Identifier: Apache-2.0
// The recorded attestation the simulated TEE answers with (internal to server/tee): a real TDX
// quote, its event log and the CVM's app-compose.json, compiled in from tee/fixtures (provenance
// in fixtures/README.md). The file bodies are defined by a source CMakeLists.txt generates.
#pragma once

#include <string_view>

#include "enact/result.hpp"
#include "tee/attestation.hpp"

namespace enact::tee::detail {

/// fixtures/rtmr3-report.json: a tappd TdxQuote answer (`quote` hex, `event_log` JSON string).
[[nodiscard]] std::string_view recorded_report_file() noexcept;
/// fixtures/rtmr3-app-compose.json: the raw app-compose.json whose SHA-256 is the compose-hash.
[[nodiscard]] std::string_view recorded_app_compose_file() noexcept;

struct recorded_attestation {
  /// The fixture's quote and event log; vm_config says "simulated": true.
  quote_response quote;
  /// app_id and compose_hash from the log's app-id and compose-hash events; tcb_info with the
  /// quote's mrtd and RTMRs, compose_hash, app_compose and the event log (an array, as in dstack's
  /// Info); vm_config as above.
  app_info info;
};

/// Parses the compiled-in files once; fails (internal) when they disagree with each other.
[[nodiscard]] result<recorded_attestation> load_recorded();

}  // namespace enact::tee::detail
