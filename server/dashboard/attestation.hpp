// SPDX-License-Identifier: Apache-2.0
// The dashboard's attestation page needs the verification `enact attest verify` runs, which is
// native code (TDX quote, certificate chain, event log replay; enact::attest). This route runs it
// in the server against the server's own evidence and answers the report (docs/dashboard.md).
#pragma once

namespace httplib {
class Server;
}

namespace enact::dashboard {

/// GET `/dashboard/attestation-checks`: fetches GET /attestation and GET /info from the listener
/// the request came in on (as a client would), runs enact::attest::verify_all on them with the
/// default options (the current time, Intel's root, no collateral) and answers its to_json:
/// `{"verdict", "skipped", "quote", "app", …}`, where each part has `checks` of
/// `{"name", "passed", "detail"}`. The network check (TLS evidence files) and the governance check
/// (an RPC endpoint) are left out and named in "skipped". 503 `unavailable` when the evidence
/// cannot be fetched, 502 `invalid_evidence` when it cannot be parsed.
void mount_attestation_checks(httplib::Server& server);

}  // namespace enact::dashboard
