// SPDX-License-Identifier: Apache-2.0
// The network check (docs/protocol.md §5 check 3): the TLS endpoint a client reached is the TD's. The
// TD publishes evidence files under /evidences/ (dstack-ingress evidence-lib.sh):
// `acme-account.json`, `cert-<domain>.pem`, `sha256sum.txt` (sha256sum of those two) and
// `quote.json` (a GetQuote answer whose report_data is SHA-256(sha256sum.txt) ‖ 32 zero bytes).
// The check: the evidence quote's report_data binds sha256sum.txt; every file it lists hashes as
// listed; the certificate served on the TLS handshake is the evidence certificate; and the
// domain's CAA records restrict issuance to the evidence ACME account (RFC 8659 `issue`
// records, RFC 8657 `accounturi`), so no other account — and no key outside the TD — can obtain
// a certificate for the domain. The evidence quote's own signature and TCB are the quote
// check's job: run verify_quote on it too (its report_data is read here from the parsed quote,
// the signed bytes, not from quote.json's "report_data" field).
//
// CAA lookups go through `caa_resolver`; `system_caa_resolver()` uses the system's resolver
// (res_nquery, type 257) and climbs to parent domains as RFC 8659 §3 prescribes.
#pragma once

#include <boost/json/value.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "enact/attest/report.hpp"
#include "enact/bytes.hpp"
#include "enact/result.hpp"

namespace enact::attest {

/// A CAA resource record (RFC 8659 §4.1).
struct caa_record {
  uint8_t flags = 0;
  std::string tag;    // "issue", "issuewild", "iodef", …
  std::string value;  // e.g. "letsencrypt.org; accounturi=https://…"

  friend bool operator==(const caa_record&, const caa_record&) = default;
};

/// Looks up the relevant CAA record set of a domain: the records of the closest of the domain
/// and its parents that has any (RFC 8659 §3). An empty set means no CAA restriction; a failed
/// lookup (not NXDOMAIN or NODATA) is lookup_failed.
class caa_resolver {
 public:
  virtual ~caa_resolver() = default;
  [[nodiscard]] virtual result<std::vector<caa_record>> caa(std::string_view domain) = 0;
};

/// The system resolver (resolv.conf), through res_nquery.
[[nodiscard]] std::unique_ptr<caa_resolver> system_caa_resolver();

/// The CAA records in the answer section of a DNS response message (RFC 1035 §4.1), for the
/// system resolver and its tests. Errors: truncated, bad_field.
[[nodiscard]] result<std::vector<caa_record>> parse_caa_answer(bytes_view message);

/// An `issue` / `issuewild` value (RFC 8659 §4.2): issuer domain and parameters.
struct caa_issue_value {
  std::string issuer;
  std::vector<std::pair<std::string, std::string>> parameters;
};
[[nodiscard]] std::optional<caa_issue_value> parse_caa_issue_value(std::string_view value);

struct network_evidence {
  /// Evidence files by name, as served under /evidences/: sha256sum.txt, quote.json,
  /// acme-account.json, `cert-<domain>.pem`.
  std::map<std::string, std::string, std::less<>> files;
  /// The domain the client connected to (its evidence certificate is `cert-<domain>.pem`).
  std::string domain;
  /// The DER of the leaf certificate seen on the TLS handshake.
  bytes served_cert_der;
};

struct network_report : checklist {
  hash256 sha256sum_hash{};               // SHA-256 of sha256sum.txt
  std::array<uint8_t, 64> report_data{};  // of the evidence quote
  hash256 evidence_cert_sha256{};         // of the evidence certificate's DER
  hash256 served_cert_sha256{};           // of the served certificate's DER
  std::string account_uri;                // from acme-account.json
  std::vector<caa_record> caa;
};

/// Checks "report_data" (the first 32 bytes of the evidence quote's report_data are SHA-256 of
/// sha256sum.txt, the rest zero), "file_hashes" (each file sha256sum.txt lists is given and
/// hashes as listed), "certificate" (SHA-256 of the served DER equals that of the evidence
/// certificate), "caa_restricts_issuance" (an issue record exists), "caa_account" (the
/// evidence account URI is among the accounturi parameters of the issue records). Fails
/// (attest_errc) when a required file is missing or malformed: sha256sum.txt, quote.json (not
/// JSON, no quote, quote does not parse), acme-account.json (no uri / account_uri), the
/// evidence certificate (does not parse).
[[nodiscard]] result<network_report> verify_network(const network_evidence& evidence, caa_resolver& resolver);

[[nodiscard]] boost::json::value to_json(const network_report& r);

}  // namespace enact::attest
