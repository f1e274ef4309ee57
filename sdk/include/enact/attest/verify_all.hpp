// SPDX-License-Identifier: Apache-2.0
// All four checks of docs/protocol.md §5 in one call, over what a
// client fetched from the service: GET /attestation (quote + event log), GET /info, and — for the
// network check — the /evidences/ files with the certificate seen on the TLS handshake. The app
// check reads the event log the quote check replayed; the evidence quote of the network check is
// verified as a quote too (same options, no event log). Checks whose inputs are absent (no
// network evidence, no resolver, no eth_call) are left out and named in `skipped`.
#pragma once

#include <boost/json/value.hpp>

#include <optional>
#include <string>
#include <vector>

#include "enact/attest/app.hpp"
#include "enact/attest/governance.hpp"
#include "enact/attest/network.hpp"
#include "enact/attest/quote.hpp"
#include "enact/attest/report.hpp"
#include "enact/result.hpp"

namespace enact::attest {

struct service_evidence {
  std::string attestation_json;             // GET /attestation
  std::string info_json;                    // GET /info
  std::optional<network_evidence> network;  // GET /evidences/… and the TLS certificate
};

struct verify_all_options {
  quote_options quote;               // time, root, collateral, accepted statuses
  caa_resolver* resolver = nullptr;  // for the network check
  eth_call_fn eth_call;              // for the governance check
};

struct service_report {
  quote_report quote;
  app_report app;
  std::optional<quote_report> evidence_quote;
  std::optional<network_report> network;
  std::optional<governance_report> governance;
  std::vector<std::string> skipped;  // "network", "governance"

  /// pass when every check that ran passed (skipped checks do not fail it: see `skipped`).
  [[nodiscard]] verdict overall() const noexcept;
};

/// Errors: whatever parsing the inputs fails with (attest_errc), and lookup_failed from the
/// resolver.
[[nodiscard]] result<service_report> verify_all(const service_evidence& evidence, const verify_all_options& options);

/// `{"verdict", "skipped", "quote", "app", "evidence_quote"?, "network"?, "governance"?}`.
[[nodiscard]] boost::json::value to_json(const service_report& r);

}  // namespace enact::attest
