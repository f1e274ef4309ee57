// SPDX-License-Identifier: Apache-2.0
// Intel DCAP quotes and their verification (docs/protocol.md §5 check 1: "the quote signature proves
// genuine TDX hardware"). Parses TDX quotes v4 and v5 (TD 1.0 and TD 1.5 report bodies) and SGX
// quotes v3, with ECDSA-256-with-P-256 attestation keys and the PCK certificate chain carried in
// the quote (certification data type 6 wrapping type 5 for TDX, type 5 directly for SGX), and
// verifies them: the quote signature over everything before the signature data with the
// attestation key; the QE report signature with the PCK leaf; the QE report data (SHA-256 of the
// attestation key ‖ QE authentication data, then 32 zero bytes); the PCK chain up to Intel's SGX
// Root CA at a given time. With collateral (TCB info and QE identity, as Intel PCS or a PCCS
// serves them) it also verifies their signatures and chains, CRLs, and matches the platform
// (FMSPC, PCE SVN, CPU SVN components of the PCK certificate's SGX extensions, and the TD's
// TEE TCB SVN) against the TCB levels to give the TCB status with Intel's advisory IDs, following
// Intel's QVL (platform status converged with the QE and TDX module statuses). With a dstack event
// log it replays RTMR0–3 and compares them with the quote's (event_log.hpp).
//
// The parsed quote's structure is checked strictly (every declared size must frame its data
// exactly; bytes after the signature data are ignored — real quotes carry zero padding). Anything
// inside it that fails to verify, certificates included, is a failed check in the report.
//
// Choices where verifiers differ: the PCK chain is always the one the quote carries (a
// collateral PCK chain must equal it; dcap-qvl would use the collateral's); platform TCB levels
// compare all 16 TEE TCB SVN bytes, as Intel's TcbLevelCheck and dcap-qvl do; levels are ordered
// as Intel's QVL orders them, not as served. Not supported: certification data types 1–4 (PPID
// only, needing a PCCS lookup of the PCK certificate), and TD 1.5 relaunch advice
// (TDRelaunchAdvised: the status is that of the TD's launch TCB, tee_tcb_svn).
#pragma once

#include <boost/json/value.hpp>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "enact/attest/event_log.hpp"
#include "enact/attest/report.hpp"
#include "enact/bytes.hpp"
#include "enact/crypto/sha2.hpp"
#include "enact/result.hpp"

namespace enact::attest {

inline constexpr uint32_t kTeeSgx = 0x00000000;
inline constexpr uint32_t kTeeTdx = 0x00000081;
inline constexpr uint16_t kAttestationKeyP256 = 2;

/// Quote header (48 bytes).
struct quote_header {
  uint16_t version = 0;
  uint16_t attestation_key_type = 0;
  uint32_t tee_type = 0;
  uint16_t qe_svn = 0;   // SGX v3; reserved in TDX quotes
  uint16_t pce_svn = 0;  // SGX v3; reserved in TDX quotes
  std::array<uint8_t, 16> qe_vendor_id{};
  std::array<uint8_t, 20> user_data{};
};

/// SGX report body (384 bytes): the body of an SGX quote, and the QE report of every quote.
struct enclave_report {
  std::array<uint8_t, 16> cpu_svn{};
  uint32_t misc_select = 0;
  std::array<uint8_t, 16> attributes{};
  hash256 mr_enclave{};
  hash256 mr_signer{};
  uint16_t isv_prod_id = 0;
  uint16_t isv_svn = 0;
  std::array<uint8_t, 64> report_data{};
};

/// TD report body: TD 1.0 (584 bytes), or TD 1.5 (648 bytes, with the two trailing fields).
struct td_report {
  std::array<uint8_t, 16> tee_tcb_svn{};
  crypto::hash384 mr_seam{};
  crypto::hash384 mr_signer_seam{};
  std::array<uint8_t, 8> seam_attributes{};
  std::array<uint8_t, 8> td_attributes{};
  std::array<uint8_t, 8> xfam{};
  crypto::hash384 mr_td{};
  crypto::hash384 mr_config_id{};
  crypto::hash384 mr_owner{};
  crypto::hash384 mr_owner_config{};
  std::array<crypto::hash384, 4> rtmr{};
  std::array<uint8_t, 64> report_data{};
  std::optional<std::array<uint8_t, 16>> tee_tcb_svn2;  // TD 1.5
  std::optional<crypto::hash384> mr_servicetd;          // TD 1.5
};

/// A parsed quote. Exactly one of `td` (TDX) and `enclave` (SGX) is set.
struct quote {
  quote_header header;
  /// 1 = SGX enclave report, 2 = TD 1.0 report, 3 = TD 1.5 report (the v5 body-type numbering,
  /// also given to v3 and v4 quotes).
  uint16_t body_type = 0;
  std::optional<td_report> td;
  std::optional<enclave_report> enclave;
  std::array<uint8_t, 64> signature{};        // r ‖ s over bytes [0, signed_size)
  std::array<uint8_t, 64> attestation_key{};  // x ‖ y
  enclave_report qe_report;
  bytes qe_report_bytes;  // the 384 bytes the PCK key signed
  std::array<uint8_t, 64> qe_report_signature{};
  bytes qe_auth_data;
  uint16_t cert_type = 0;     // 5: PCK certificate chain (PEM)
  std::string pck_chain_pem;  // trailing NUL bytes removed
  bytes raw;                  // the quote up to the end of its signature data
  size_t signed_size = 0;

  [[nodiscard]] bool is_tdx() const noexcept { return td.has_value(); }
  [[nodiscard]] const std::array<uint8_t, 64>& report_data() const noexcept {
    static const std::array<uint8_t, 64> kNone{};
    return td ? td->report_data : (enclave ? enclave->report_data : kNone);
  }
  [[nodiscard]] bytes_view signed_data() const noexcept { return {raw.data(), signed_size}; }
};

/// Parses a binary quote. Errors: truncated, bad_length, unsupported_{version,tee,key_type,
/// cert_type}.
[[nodiscard]] result<quote> parse_quote(bytes_view data);
/// Parses a quote written as hex (optional 0x prefix, surrounding whitespace ignored).
[[nodiscard]] result<quote> parse_quote_hex(std::string_view hex_text);

/// Intel SGX Root CA (CN=Intel SGX Root CA, valid 2018-05-21 to 2049-12-31, SHA-256 of the DER
/// 44a0196b…b674d3), the anchor of every PCK and collateral chain.
[[nodiscard]] std::string_view intel_sgx_root_ca_pem() noexcept;

// --- collateral ------------------------------------------------------------------------------

/// TCB info and QE identity with what proves them, plus the CRLs. The signed texts are kept
/// byte for byte: Intel signs the exact bytes of the `tcbInfo` / `enclaveIdentity` object.
struct quote_collateral {
  std::string tcb_info;  // the tcbInfo object, exactly as served
  std::array<uint8_t, 64> tcb_info_signature{};
  std::string tcb_info_issuer_chain;  // PEM, leaf first
  std::string qe_identity;            // the enclaveIdentity object, exactly as served
  std::array<uint8_t, 64> qe_identity_signature{};
  std::string qe_identity_issuer_chain;  // PEM, leaf first
  bytes root_ca_crl;                     // DER; empty: not checked
  bytes pck_crl;                         // DER; empty: not checked
  /// Set when the collateral names a PCK chain (a PCCS does for quotes that do not carry one).
  /// It must be the chain the quote carries; another platform's chain fails the check.
  std::optional<std::string> pck_certificate_chain;
};

/// Parses the QuoteCollateralV3 JSON of dcap-qvl and PCCS clients: tcb_info and qe_identity as
/// strings holding the signed JSON, signatures and CRLs as hex (CRLs may also be PEM), issuer
/// chains as PEM; pck_crl_issuer_chain is accepted and unused; pck_certificate_chain optional.
[[nodiscard]] result<quote_collateral> parse_collateral(std::string_view json);

/// One Intel PCS response (`GET …/tcb` or `…/qe/identity`): the exact text of `key`'s object
/// (what the signature covers) and the signature.
struct signed_object {
  std::string text;
  std::array<uint8_t, 64> signature{};
};
/// Splits a PCS body `{"<key>": {...}, "signature": "<hex>"}`, keeping `key`'s object byte for
/// byte. `key` is "tcbInfo" or "enclaveIdentity".
[[nodiscard]] result<signed_object> split_pcs_body(std::string_view body, std::string_view key);
/// The PEM chain of a PCS `TCB-Info-Issuer-Chain` / `SGX-Enclave-Identity-Issuer-Chain` header,
/// which PCS sends percent-encoded (plain PEM passes through).
[[nodiscard]] result<std::string> decode_issuer_chain_header(std::string_view value);
/// Collateral from PCS responses: the two bodies with their issuer-chain header values, and
/// the CRLs (DER or PEM; empty to skip revocation checks).
[[nodiscard]] result<quote_collateral> collateral_from_pcs(std::string_view tcb_info_body,
                                                           std::string_view tcb_info_chain_header,
                                                           std::string_view qe_identity_body,
                                                           std::string_view qe_identity_chain_header,
                                                           bytes_view root_ca_crl = {}, bytes_view pck_crl = {});

// --- verification ----------------------------------------------------------------------------

/// Intel's TCB statuses (PCS TCB info v3), worst last.
enum class tcb_status {
  up_to_date,
  sw_hardening_needed,
  configuration_needed,
  configuration_and_sw_hardening_needed,
  out_of_date,
  out_of_date_configuration_needed,
  revoked,
};
/// Intel's spelling: "UpToDate", "SWHardeningNeeded", "ConfigurationNeeded",
/// "ConfigurationAndSWHardeningNeeded", "OutOfDate", "OutOfDateConfigurationNeeded", "Revoked".
[[nodiscard]] std::string_view to_string(tcb_status s) noexcept;
[[nodiscard]] std::optional<tcb_status> parse_tcb_status(std::string_view s) noexcept;

/// Facts from the PCK leaf certificate's SGX extensions (OID 1.2.840.113741.1.13.1).
struct pck_facts {
  std::array<uint8_t, 6> fmspc{};
  std::array<uint8_t, 2> pce_id{};
  uint16_t pce_svn = 0;
  std::array<uint8_t, 16> cpu_svn{};
  std::array<uint8_t, 16> tcb_components{};  // SGX TCB comp 01..16 SVNs
  bytes ppid;
  std::string subject;
  std::string issuer;
  int64_t not_before = 0;  // Unix seconds
  int64_t not_after = 0;
};

/// The TCB assessment made from collateral.
struct tcb_assessment {
  tcb_status status = tcb_status::revoked;  // platform converged with QE and TDX module
  std::vector<std::string> advisory_ids;    // platform's, then the others' not yet listed
  tcb_status platform_status = tcb_status::revoked;
  tcb_status qe_status = tcb_status::revoked;
  std::optional<tcb_status> module_status;  // TDX module identity (TEE TCB SVN[1] > 0)
  std::string tcb_date;                     // of the matching platform level
  uint32_t tcb_evaluation_data_number = 0;
};

struct quote_options {
  /// Verification time, Unix seconds: certificates, CRLs and collateral must be valid then.
  /// Unset: the current time.
  std::optional<int64_t> now;
  /// Trust anchor (PEM, a self-signed certificate); empty: Intel SGX Root CA.
  std::string root_ca_pem;
  /// Collateral for the TCB status; without it the report has no `tcb` and no revocation checks.
  std::optional<quote_collateral> collateral;
  /// Event log to replay against the TD's RTMRs (TDX quotes).
  std::optional<event_log> log;
  /// TCB statuses the "tcb_status" check accepts. Intel's QVL reports every status but Revoked
  /// as a verified quote, and so does the default; a stricter client narrows it.
  std::vector<tcb_status> accepted = {
      tcb_status::up_to_date,           tcb_status::sw_hardening_needed,
      tcb_status::configuration_needed, tcb_status::configuration_and_sw_hardening_needed,
      tcb_status::out_of_date,          tcb_status::out_of_date_configuration_needed,
  };
};

/// Checks, in order (names as in `check::name`):
///   quote_signature, qe_report_signature, qe_report_data, pck_chain, debug_disabled;
///   with collateral: collateral_pck_chain (only when the collateral names one),
///   tcb_info_chain, tcb_info_signature, tcb_info_validity, qe_identity_chain,
///   qe_identity_signature, qe_identity_validity, tcb_info_platform, qe_identity, qe_tcb,
///   tdx_module (TDX quotes), tcb_level, tcb_status;
///   with an event log: event_log_digests, rtmr0, rtmr1, rtmr2, rtmr3.
struct quote_report : checklist {
  quote parsed;
  std::optional<pck_facts> pck;         // when the PCK leaf parsed
  std::optional<tcb_assessment> tcb;    // when a TCB level matched
  std::optional<event_log_report> log;  // when an event log was given
  int64_t verified_at = 0;              // the verification time used
};

/// Verifies a binary quote. Fails (attest_errc) only when the quote does not parse, or when an
/// option is malformed (root CA PEM: bad_certificate; a TDX event log for an SGX quote:
/// bad_field).
[[nodiscard]] result<quote_report> verify_quote(bytes_view quote_bytes, const quote_options& options = {});

/// The `GET /attestation` answer (`{"quote": hex, "event_log": JSON string, "vm_config"}`) or a
/// guest-agent GetQuote answer: parses both and verifies the quote with its event log.
[[nodiscard]] result<quote_report> verify_attestation(std::string_view attestation_json, quote_options options = {});

[[nodiscard]] boost::json::value to_json(const quote& q);
[[nodiscard]] boost::json::value to_json(const quote_report& r);

}  // namespace enact::attest
