// SPDX-License-Identifier: Apache-2.0
// What the attest module takes from OpenSSL, kept out of the public headers: certificates and
// CRLs (PEM/DER), chain verification at a given time with a named reason on failure, ECDSA P-256
// verification of the raw r ‖ s signatures DCAP uses, and the few DER reads the PCK
// certificate's SGX extensions need.
#pragma once

#include <openssl/evp.h>
#include <openssl/x509.h>

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "enact/attest/quote.hpp"
#include "enact/bytes.hpp"
#include "enact/result.hpp"

namespace enact::attest::detail {

struct x509_free {
  void operator()(X509* p) const noexcept { X509_free(p); }
};
struct crl_free {
  void operator()(X509_CRL* p) const noexcept { X509_CRL_free(p); }
};
struct pkey_free {
  void operator()(EVP_PKEY* p) const noexcept { EVP_PKEY_free(p); }
};
using x509_ptr = std::unique_ptr<X509, x509_free>;
using crl_ptr = std::unique_ptr<X509_CRL, crl_free>;
using pkey_ptr = std::unique_ptr<EVP_PKEY, pkey_free>;

/// Every certificate of a PEM text, in order. Fails (bad_certificate, message naming `what` and
/// the index) when a PEM block does not parse or when there is none.
[[nodiscard]] result<std::vector<x509_ptr>> parse_pem_chain(std::string_view pem, std::string_view what);
/// A DER certificate.
[[nodiscard]] result<x509_ptr> parse_der_cert(bytes_view der, std::string_view what);
/// A CRL in DER or PEM.
[[nodiscard]] result<crl_ptr> parse_crl(bytes_view data, std::string_view what);
/// DER encoding of a certificate.
[[nodiscard]] bytes cert_der(X509* cert);

/// RFC 2253 form of a certificate's subject.
[[nodiscard]] std::string subject_of(X509* cert);
[[nodiscard]] std::string issuer_of(X509* cert);
/// The subject's CN in quotes ('Intel SGX PCK Certificate'), or the whole subject without one.
[[nodiscard]] std::string short_name(X509* cert);
/// notBefore / notAfter as Unix seconds.
[[nodiscard]] int64_t not_before(X509* cert);
[[nodiscard]] int64_t not_after(X509* cert);
/// Unix seconds of a UTC civil time (proleptic Gregorian).
[[nodiscard]] int64_t unix_from_civil(int64_t year, unsigned month, unsigned day, int hour, int minute, int second);
/// "2025-07-19T10:00:34Z".
[[nodiscard]] std::string format_time(int64_t unix_seconds);

/// Verifies `chain` (leaf first; anything after the leaf is an untrusted candidate intermediate)
/// up to `root` at time `now`, checking the CRLs given (every certificate then needs a CRL from
/// its issuer). Empty string when it holds, else the reason, naming the certificate.
[[nodiscard]] std::string verify_chain(const std::vector<x509_ptr>& chain, X509* root, int64_t now,
                                       const std::vector<X509_CRL*>& crls);

/// The P-256 key x ‖ y.
[[nodiscard]] pkey_ptr p256_key(const std::array<uint8_t, 64>& xy);
/// ECDSA-P256-SHA256 over `message` with a raw r ‖ s signature.
[[nodiscard]] bool verify_p256(EVP_PKEY* key, bytes_view message, const std::array<uint8_t, 64>& signature);
/// r ‖ s as a DER ECDSA-Sig-Value.
[[nodiscard]] bytes ecdsa_der(const std::array<uint8_t, 64>& signature);

/// The SGX extensions of a PCK certificate, with subject, issuer and validity. Empty string in
/// `error` when they parse, else why not.
[[nodiscard]] std::optional<pck_facts> read_pck_facts(X509* leaf, std::string& error);

/// The default trust anchor, parsed once.
[[nodiscard]] X509* intel_root();

}  // namespace enact::attest::detail
