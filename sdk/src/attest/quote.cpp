// SPDX-License-Identifier: Apache-2.0
// DCAP quote parsing. Layouts: Intel SGX ECDSA Quote Library API (quote v3, §A.4), Intel TDX DCAP
// Quoting Library API (quote v4 §A.3, v5 §A.3.2); quote_verify.cpp checks what is parsed here.
#include "enact/attest/quote.hpp"

#include <cstring>

#include "enact/codec/hex.hpp"
#include "x509.hpp"

namespace enact::attest {

namespace {

constexpr std::string_view kIntelRootPem =
    "-----BEGIN CERTIFICATE-----\n"
    "MIICjzCCAjSgAwIBAgIUImUM1lqdNInzg7SVUr9QGzknBqwwCgYIKoZIzj0EAwIw\n"
    "aDEaMBgGA1UEAwwRSW50ZWwgU0dYIFJvb3QgQ0ExGjAYBgNVBAoMEUludGVsIENv\n"
    "cnBvcmF0aW9uMRQwEgYDVQQHDAtTYW50YSBDbGFyYTELMAkGA1UECAwCQ0ExCzAJ\n"
    "BgNVBAYTAlVTMB4XDTE4MDUyMTEwNDUxMFoXDTQ5MTIzMTIzNTk1OVowaDEaMBgG\n"
    "A1UEAwwRSW50ZWwgU0dYIFJvb3QgQ0ExGjAYBgNVBAoMEUludGVsIENvcnBvcmF0\n"
    "aW9uMRQwEgYDVQQHDAtTYW50YSBDbGFyYTELMAkGA1UECAwCQ0ExCzAJBgNVBAYT\n"
    "AlVTMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEC6nEwMDIYZOj/iPWsCzaEKi7\n"
    "1OiOSLRFhWGjbnBVJfVnkY4u3IjkDYYL0MxO4mqsyYjlBalTVYxFP2sJBK5zlKOB\n"
    "uzCBuDAfBgNVHSMEGDAWgBQiZQzWWp00ifODtJVSv1AbOScGrDBSBgNVHR8ESzBJ\n"
    "MEegRaBDhkFodHRwczovL2NlcnRpZmljYXRlcy50cnVzdGVkc2VydmljZXMuaW50\n"
    "ZWwuY29tL0ludGVsU0dYUm9vdENBLmRlcjAdBgNVHQ4EFgQUImUM1lqdNInzg7SV\n"
    "Ur9QGzknBqwwDgYDVR0PAQH/BAQDAgEGMBIGA1UdEwEB/wQIMAYBAf8CAQEwCgYI\n"
    "KoZIzj0EAwIDSQAwRgIhAOW/5QkR+S9CiSDcNoowLuPRLsWGf/Yi7GSX94BgwTwg\n"
    "AiEA4J0lrHoMs+Xo5o/sX6O9QWxHRAvZUGOdRQ7cvqRXaqI=\n"
    "-----END CERTIFICATE-----\n";

constexpr size_t kHeaderSize = 48;
constexpr size_t kEnclaveReportSize = 384;
constexpr size_t kTd10Size = 584;
constexpr size_t kTd15Size = 648;
constexpr uint16_t kCertQeReport = 6;
constexpr uint16_t kCertPckChain = 5;

/// Little-endian reads with bounds checks; every failure names the field and its offset.
class reader {
 public:
  explicit reader(bytes_view data) : d_(data) {}

  [[nodiscard]] size_t pos() const noexcept { return pos_; }
  [[nodiscard]] size_t left() const noexcept { return d_.size() - pos_; }

  result<bytes_view> take(size_t n, std::string_view field) {
    if (left() < n)
      return fail(attest_errc::truncated, "quote." + std::string(field) + ": needs " + std::to_string(n) +
                                              " bytes at offset " + std::to_string(pos_) + ", " +
                                              std::to_string(left()) + " left");
    bytes_view out = d_.subspan(pos_, n);
    pos_ += n;
    return out;
  }
  result<uint16_t> u16(std::string_view field) {
    ENACT_TRY(bytes_view b, take(2, field));
    return static_cast<uint16_t>(b[0] | b[1] << 8);
  }
  result<uint32_t> u32(std::string_view field) {
    ENACT_TRY(bytes_view b, take(4, field));
    return static_cast<uint32_t>(b[0]) | static_cast<uint32_t>(b[1]) << 8 | static_cast<uint32_t>(b[2]) << 16 |
           static_cast<uint32_t>(b[3]) << 24;
  }
  template <size_t N>
  result<std::array<uint8_t, N>> array(std::string_view field) {
    ENACT_TRY(bytes_view b, take(N, field));
    std::array<uint8_t, N> out{};
    std::memcpy(out.data(), b.data(), N);
    return out;
  }

 private:
  bytes_view d_;
  size_t pos_ = 0;
};

template <size_t N>
void copy_at(bytes_view b, size_t at, std::array<uint8_t, N>& out) {
  std::memcpy(out.data(), b.data() + at, N);
}

uint16_t le16(bytes_view b, size_t at) { return static_cast<uint16_t>(b[at] | b[at + 1] << 8); }

enclave_report read_enclave_report(bytes_view b) {
  enclave_report r;
  copy_at(b, 0, r.cpu_svn);
  r.misc_select = static_cast<uint32_t>(b[16]) | static_cast<uint32_t>(b[17]) << 8 |
                  static_cast<uint32_t>(b[18]) << 16 | static_cast<uint32_t>(b[19]) << 24;
  copy_at(b, 48, r.attributes);
  copy_at(b, 64, r.mr_enclave);
  copy_at(b, 128, r.mr_signer);
  r.isv_prod_id = le16(b, 256);
  r.isv_svn = le16(b, 258);
  copy_at(b, 320, r.report_data);
  return r;
}

td_report read_td_report(bytes_view b) {
  td_report r;
  copy_at(b, 0, r.tee_tcb_svn);
  copy_at(b, 16, r.mr_seam);
  copy_at(b, 64, r.mr_signer_seam);
  copy_at(b, 112, r.seam_attributes);
  copy_at(b, 120, r.td_attributes);
  copy_at(b, 128, r.xfam);
  copy_at(b, 136, r.mr_td);
  copy_at(b, 184, r.mr_config_id);
  copy_at(b, 232, r.mr_owner);
  copy_at(b, 280, r.mr_owner_config);
  for (size_t i = 0; i < 4; ++i)
    copy_at(b, 328 + 48 * i, r.rtmr[i]);
  copy_at(b, 520, r.report_data);
  if (b.size() == kTd15Size) {
    r.tee_tcb_svn2.emplace();
    copy_at(b, 584, *r.tee_tcb_svn2);
    r.mr_servicetd.emplace();
    copy_at(b, 600, *r.mr_servicetd);
  }
  return r;
}

/// QE report, its signature, QE authentication data, then the PCK certification data: the
/// content of certification data type 6, and the tail of an SGX quote's signature data.
result<void> read_qe_part(reader& in, quote& q) {
  ENACT_TRY(bytes_view qe, in.take(kEnclaveReportSize, "qe_report"));
  q.qe_report_bytes.assign(qe.begin(), qe.end());
  q.qe_report = read_enclave_report(qe);
  ENACT_TRY(q.qe_report_signature, in.array<64>("qe_report_signature"));
  ENACT_TRY(uint16_t auth_size, in.u16("qe_auth_data.size"));
  ENACT_TRY(bytes_view auth, in.take(auth_size, "qe_auth_data"));
  q.qe_auth_data.assign(auth.begin(), auth.end());
  ENACT_TRY(q.cert_type, in.u16("certification_data.type"));
  if (q.cert_type != kCertPckChain)
    return fail(attest_errc::unsupported_cert_type, "quote.certification_data.type: " + std::to_string(q.cert_type) +
                                                        " (only 5, a PCK certificate chain, is supported)");
  ENACT_TRY(uint32_t cert_size, in.u32("certification_data.size"));
  ENACT_TRY(bytes_view pem, in.take(cert_size, "certification_data"));
  std::string_view text = as_chars(pem);
  while (!text.empty() && text.back() == '\0')
    text.remove_suffix(1);
  q.pck_chain_pem = text;
  return {};
}

std::string hex_of(bytes_view b) { return codec::hex::encode(b); }

}  // namespace

std::string_view intel_sgx_root_ca_pem() noexcept { return kIntelRootPem; }

result<quote> parse_quote(bytes_view data) {
  reader in(data);
  quote q;
  ENACT_TRY(bytes_view header, in.take(kHeaderSize, "header"));
  q.header.version = le16(header, 0);
  q.header.attestation_key_type = le16(header, 2);
  q.header.tee_type = static_cast<uint32_t>(header[4]) | static_cast<uint32_t>(header[5]) << 8 |
                      static_cast<uint32_t>(header[6]) << 16 | static_cast<uint32_t>(header[7]) << 24;
  q.header.qe_svn = le16(header, 8);
  q.header.pce_svn = le16(header, 10);
  copy_at(header, 12, q.header.qe_vendor_id);
  copy_at(header, 28, q.header.user_data);

  const uint32_t tee = q.header.tee_type;
  if (tee != kTeeSgx && tee != kTeeTdx)
    return fail(attest_errc::unsupported_tee, "quote.header.tee_type: 0x" + hex_of(bytes_view(header.data() + 4, 4)) +
                                                  " is neither SGX (0) nor TDX (0x81)");
  const uint16_t v = q.header.version;
  if ((tee == kTeeSgx && v != 3) || (tee == kTeeTdx && v != 4 && v != 5))
    return fail(attest_errc::unsupported_version,
                "quote.header.version: " + std::to_string(v) + " for " +
                    (tee == kTeeSgx ? "SGX (3 is supported)" : "TDX (4 and 5 are supported)"));
  if (q.header.attestation_key_type != kAttestationKeyP256)
    return fail(attest_errc::unsupported_key_type,
                "quote.header.attestation_key_type: " + std::to_string(q.header.attestation_key_type) +
                    " (only 2, ECDSA-256-with-P-256, is supported)");

  if (tee == kTeeSgx) {
    q.body_type = 1;
    ENACT_TRY(bytes_view body, in.take(kEnclaveReportSize, "body"));
    q.enclave = read_enclave_report(body);
  } else if (v == 4) {
    q.body_type = 2;
    ENACT_TRY(bytes_view body, in.take(kTd10Size, "body"));
    q.td = read_td_report(body);
  } else {
    ENACT_TRY(q.body_type, in.u16("body.type"));
    ENACT_TRY(uint32_t body_size, in.u32("body.size"));
    const size_t expected = q.body_type == 2 ? kTd10Size : q.body_type == 3 ? kTd15Size : 0;
    if (expected == 0)
      return fail(attest_errc::unsupported_version,
                  "quote.body.type: " + std::to_string(q.body_type) + " (2, TD 1.0, and 3, TD 1.5, are supported)");
    if (body_size != expected)
      return fail(attest_errc::bad_length, "quote.body.size: " + std::to_string(body_size) + " for body type " +
                                               std::to_string(q.body_type) + ", expected " + std::to_string(expected));
    ENACT_TRY(bytes_view body, in.take(body_size, "body"));
    q.td = read_td_report(body);
  }
  q.signed_size = in.pos();

  ENACT_TRY(uint32_t sig_size, in.u32("signature_data.size"));
  ENACT_TRY(bytes_view sig_data, in.take(sig_size, "signature_data"));
  reader sig(sig_data);
  ENACT_TRY(q.signature, sig.array<64>("signature"));
  ENACT_TRY(q.attestation_key, sig.array<64>("attestation_key"));
  if (tee == kTeeSgx) {
    ENACT_TRY_VOID(read_qe_part(sig, q));
  } else {
    ENACT_TRY(uint16_t outer_type, sig.u16("certification_data.type"));
    if (outer_type != kCertQeReport)
      return fail(attest_errc::unsupported_cert_type, "quote.certification_data.type: " + std::to_string(outer_type) +
                                                          " (TDX quotes carry 6, QE report certification data)");
    ENACT_TRY(uint32_t outer_size, sig.u32("certification_data.size"));
    ENACT_TRY(bytes_view outer, sig.take(outer_size, "certification_data"));
    reader inner(outer);
    ENACT_TRY_VOID(read_qe_part(inner, q));
    if (inner.left() != 0)
      return fail(attest_errc::bad_length, "quote.certification_data: " + std::to_string(inner.left()) +
                                               " bytes after the PCK certificate chain");
  }
  if (sig.left() != 0)
    return fail(attest_errc::bad_length,
                "quote.signature_data: " + std::to_string(sig.left()) + " bytes after the certification data");
  q.raw.assign(data.begin(), data.begin() + static_cast<std::ptrdiff_t>(in.pos()));
  return q;
}

result<quote> parse_quote_hex(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\n' || text.front() == '\r' || text.front() == '\t'))
    text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\n' || text.back() == '\r' || text.back() == '\t'))
    text.remove_suffix(1);
  auto b = codec::hex::decode(text, "quote");
  if (!b)
    return fail(attest_errc::bad_field, b.err().message);
  return parse_quote(*b);
}

namespace detail {
X509* intel_root() {
  static const x509_ptr root = [] {
    auto certs = parse_pem_chain(kIntelRootPem, "Intel SGX Root CA");
    return certs ? std::move(certs->front()) : x509_ptr();
  }();
  return root.get();
}
}  // namespace detail

}  // namespace enact::attest
