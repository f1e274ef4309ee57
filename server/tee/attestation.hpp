// SPDX-License-Identifier: Apache-2.0
// The attestation side of the TEE (docs/protocol.md §2 "Attestation"):
// the types a backend answers `quote` and `info` with, and the evidence set served under
// /evidences/ — acme-account.json, cert-<domain>.pem, sha256sum.txt (`sha256sum` over those) and
// quote.json (a GetQuote answer whose report_data is SHA-256(sha256sum.txt) padded with zeros to
// 64 bytes), which binds the TLS certificate to the TEE (docs/protocol.md §5, check 3).
//
// In production the TLS terminator writes the evidence files into a directory (dstack-ingress:
// /evidences) and the server serves that directory as it is on each request, so a certificate
// renewal shows at once. Without one, the simulated TEE writes a development set into
// <data_dir>/evidences at startup: a self-signed certificate for `localhost`, an ACME account
// document with a fake account URI, their sha256sum.txt and a quote.json that carries the
// recorded fixture quote — whose report_data therefore does not match sha256sum.txt.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "enact/bytes.hpp"
#include "enact/result.hpp"

namespace enact::tee {

/// The 64 bytes a TDX quote binds (TDREPORT.REPORTDATA).
using report_data = std::array<uint8_t, 64>;

/// What GetQuote answers: the quote, its event log and the VM configuration.
struct quote_response {
  bytes quote;
  /// JSON text of the event-log array (dstack's `event_log` is a JSON string).
  std::string event_log;
  /// JSON text of the VM configuration (dstack's `vm_config` is a JSON string).
  std::string vm_config;
};

/// What Info answers: the application's identity.
struct app_info {
  std::string app_id;        // hex, no 0x (docs/protocol.md §5 check 4 prefixes it)
  std::string compose_hash;  // hex, no 0x: SHA-256 of tcb_info.app_compose
  /// JSON text of an object holding at least `app_compose` (the raw app-compose.json string).
  std::string tcb_info;
  /// JSON text of the VM configuration; empty when the backend has none.
  std::string vm_config;
  /// Where the root key comes from: dstack's `key_provider_info` name ("kms", "none",
  /// "local-sgx", "tpm") and id (hex); empty for a backend without one.
  std::string key_provider;
  std::string key_provider_id;
  /// JSON text of the object /info shows as `root_key` (docs/protocol.md §2 "Attestation"): the
  /// GetKey signature chain of the root key and the keys recovered from it; empty when none.
  std::string root_key;
};

/// One evidence file as served.
struct evidence_file {
  std::string name;
  std::string content_type;
  std::string body;
};

/// True for a name the evidence routes may serve: 1 to 128 characters from [A-Za-z0-9._-], not
/// starting with a dot. Anything else (a slash, "..", a hidden file) is refused before the file
/// system is asked.
[[nodiscard]] bool is_evidence_name(std::string_view name) noexcept;

/// The Content-Type of an evidence file by its extension.
[[nodiscard]] std::string_view evidence_content_type(std::string_view name) noexcept;

/// report_data of the evidence quote: SHA-256(sha256sum.txt) followed by 32 zero bytes.
[[nodiscard]] report_data evidence_report_data(std::string_view sha256sum_txt) noexcept;

/// The evidence directory the routes serve, read on every request.
class evidence_dir {
 public:
  evidence_dir() = default;  // none configured
  explicit evidence_dir(std::string path) : path_(std::move(path)) {}

  [[nodiscard]] bool configured() const noexcept { return !path_.empty(); }
  [[nodiscard]] const std::string& path() const noexcept { return path_; }

  /// Names of the regular files in the directory that `is_evidence_name` accepts, sorted.
  /// not_found when no directory is configured; unavailable when it cannot be read.
  [[nodiscard]] result<std::vector<std::string>> list() const;
  /// One file. invalid_request for a name `is_evidence_name` refuses; not_found for a name that
  /// is no regular file of the directory (symbolic links are not followed).
  [[nodiscard]] result<evidence_file> read(std::string_view name) const;

 private:
  std::string path_;
};

/// Writes the development evidence set into `dir` (created 0755 when missing): cert-<domain>.pem
/// (a self-signed P-256 certificate, made once and remade only when unreadable or expired; its
/// private key is not kept, since nothing serves TLS with it), acme-account.json (made once),
/// then sha256sum.txt and quote.json (rewritten at every start). quote.json is the GetQuote shape
/// — `quote` (hex), `event_log`, `report_data` (hex of `evidence_report_data`), `vm_config` —
/// with `q` as the quote.
[[nodiscard]] result<void> write_development_evidence(const std::string& dir, std::string_view domain,
                                                      const quote_response& q);

/// `sha256sum` output for `names` in `dir`: "<hex>  <name>\n" per file, in the given order.
[[nodiscard]] result<std::string> sha256sum_of(const std::string& dir, const std::vector<std::string>& names);

}  // namespace enact::tee
