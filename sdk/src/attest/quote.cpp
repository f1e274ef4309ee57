// SPDX-License-Identifier: Apache-2.0
// DCAP quote parsing and verification. Layouts: Intel SGX ECDSA Quote Library API (quote v3,
// §A.4), Intel TDX DCAP Quoting Library API (quote v4 §A.3, v5 §A.3.2); the checks follow Intel's
// QVL and dcap-qvl (see quote.hpp).
#include "enact/attest/quote.hpp"

#include <algorithm>
#include <cstring>
#include <ctime>
#include <map>

#include "collateral.hpp"
#include "enact/codec/hex.hpp"
#include "enact/crypto/sha2.hpp"
#include "json_fields.hpp"
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

namespace {

std::string svn_hex(const std::array<uint8_t, 16>& a) { return codec::hex::encode(a); }

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v)
    out += (out.empty() ? "" : ", ") + s;
  return out.empty() ? "none" : out;
}

std::string validity_detail(std::string_view what, int64_t issued, int64_t next, int64_t now, bool& ok) {
  const std::string window = "issued " + detail::format_time(issued) + ", next update " + detail::format_time(next);
  if (now < issued) {
    ok = false;
    return std::string(what) + " issue date " + detail::format_time(issued) + " is after the verification time " +
           detail::format_time(now);
  }
  if (now > next) {
    ok = false;
    return std::string(what) + " expired: its next update was due " + detail::format_time(next) + " (checked at " +
           detail::format_time(now) + ")";
  }
  ok = true;
  return std::string(what) + " " + window;
}

/// A signed collateral object: chain to the root, signature over its exact text, validity.
void check_signed(quote_report& r, std::string_view name, std::string_view label, const std::string& text,
                  const std::array<uint8_t, 64>& signature, const std::string& chain_pem, X509* root, int64_t now,
                  const std::vector<X509_CRL*>& crls, int64_t issued, int64_t next,
                  std::map<std::string, std::string>& verified_chains) {
  auto chain = detail::parse_pem_chain(chain_pem, std::string(label) + " issuer chain");
  if (!chain) {
    r.add(std::string(name) + "_chain", false, chain.err().message);
    r.add(std::string(name) + "_signature", false, "not checked: the issuer chain does not parse");
  } else {
    // PCS serves TCB info and QE identity with the same issuer chain: verify it once.
    auto known = verified_chains.find(chain_pem);
    if (known == verified_chains.end())
      known = verified_chains.emplace(chain_pem, detail::verify_chain(*chain, root, now, crls)).first;
    const std::string& why = known->second;
    r.add(std::string(name) + "_chain", why.empty(),
          why.empty() ? "issuer chain of " + detail::short_name((*chain)[0].get()) +
                            " verifies to the trusted root at " + detail::format_time(now)
                      : why);
    const bool ok = detail::verify_p256(X509_get0_pubkey((*chain)[0].get()), as_bytes(text), signature);
    r.add(std::string(name) + "_signature", ok,
          ok ? "ECDSA-P256 signature over the exact " + std::string(label) + " text verifies"
             : "signature over the " + std::string(label) +
                   " text does not verify with the "
                   "issuer chain's leaf key");
  }
  bool ok = false;
  std::string why = validity_detail(label, issued, next, now, ok);
  r.add(std::string(name) + "_validity", ok, std::move(why));
}

void check_collateral(quote_report& r, const quote& q, const quote_collateral& c, const detail::tcb_info& info,
                      const detail::qe_identity& qe, X509* root, int64_t now, const std::vector<X509_CRL*>& crls,
                      const std::string& pck_error) {
  if (c.pck_certificate_chain) {
    auto norm = [](std::string_view s) {
      while (!s.empty() && (s.back() == '\0' || s.back() == '\n' || s.back() == ' '))
        s.remove_suffix(1);
      return s;
    };
    const bool same = norm(*c.pck_certificate_chain) == norm(q.pck_chain_pem);
    r.add("collateral_pck_chain", same,
          same ? "the collateral's PCK chain is the one the quote carries"
               : "the collateral's PCK chain differs from the one the quote carries: the "
                 "collateral was gathered for another platform");
  }
  std::map<std::string, std::string> verified_chains;
  check_signed(r, "tcb_info", "TCB info", c.tcb_info, c.tcb_info_signature, c.tcb_info_issuer_chain, root, now, crls,
               info.issue_date, info.next_update, verified_chains);
  check_signed(r, "qe_identity", "QE identity", c.qe_identity, c.qe_identity_signature, c.qe_identity_issuer_chain,
               root, now, crls, qe.issue_date, qe.next_update, verified_chains);

  // Platform: the PCK certificate names the FMSPC and PCE the TCB info must be for.
  bool platform_ok = false;
  if (!r.pck) {
    r.add("tcb_info_platform", false, "not checked: " + pck_error);
  } else {
    std::string why;
    const bool kind_ok = q.is_tdx() ? (info.id == "TDX" && info.version >= 3) : (info.id.empty() || info.id == "SGX");
    if (!kind_ok)
      why = "TCB info id \"" + info.id + "\" version " + std::to_string(info.version) + " is not for " +
            (q.is_tdx() ? "TDX" : "SGX");
    else if (r.pck->fmspc != info.fmspc)
      why = "TCB info is for FMSPC " + codec::hex::encode(info.fmspc) + ", the PCK certificate names " +
            codec::hex::encode(r.pck->fmspc);
    else if (r.pck->pce_id != info.pce_id)
      why = "TCB info is for PCE-ID " + codec::hex::encode(info.pce_id) + ", the PCK certificate names " +
            codec::hex::encode(r.pck->pce_id);
    platform_ok = why.empty();
    r.add("tcb_info_platform", why.empty(),
          why.empty()
              ? "TCB info (" + info.id + " v" + std::to_string(info.version) + ", evaluation data " +
                    std::to_string(info.tcb_evaluation_data_number) + ") is for FMSPC " + codec::hex::encode(info.fmspc)
              : why);
  }

  // QE identity: the QE that signed the attestation key is Intel's, at a known TCB level.
  std::optional<tcb_status> qe_status;
  std::vector<std::string> qe_advisories;
  {
    const enclave_report& qr = q.qe_report;
    const std::string expected_id = q.is_tdx() ? "TD_QE" : "QE";
    std::string why;
    // Enclave identity v2; a TD QE identity may also come as v3 (as dcap-qvl accepts).
    const bool version_ok = qe.version == 2 || (q.is_tdx() && qe.version == 3);
    if (qe.id != expected_id || !version_ok)
      why = "QE identity is \"" + qe.id + "\" version " + std::to_string(qe.version) + ", expected \"" + expected_id +
            "\" version 2";
    else if (qr.mr_signer != qe.mrsigner)
      why = "QE MRSIGNER " + codec::hex::encode(qr.mr_signer) + " is not " + codec::hex::encode(qe.mrsigner);
    else if (qr.isv_prod_id != qe.isvprodid)
      why = "QE ISVPRODID " + std::to_string(qr.isv_prod_id) + " is not " + std::to_string(qe.isvprodid);
    else if ((qr.misc_select & qe.miscselect_mask) != (qe.miscselect & qe.miscselect_mask))
      why = "QE MISCSELECT does not match under the mask";
    else
      for (size_t i = 0; i < 16 && why.empty(); ++i)
        if ((qr.attributes[i] & qe.attributes_mask[i]) != (qe.attributes[i] & qe.attributes_mask[i]))
          why = "QE ATTRIBUTES byte " + std::to_string(i) + " does not match under the mask";
    r.add("qe_identity", why.empty(),
          why.empty() ? "QE report matches " + qe.id + " (MRSIGNER, ISVPRODID " + std::to_string(qe.isvprodid) +
                            ", MISCSELECT, ATTRIBUTES)"
                      : why);
    const detail::isv_level* level = detail::match_isv(qe.levels, qr.isv_svn);
    if (level == nullptr) {
      r.add("qe_tcb", false, "QE ISVSVN " + std::to_string(qr.isv_svn) + " is below every QE identity TCB level");
    } else {
      qe_status = level->status;
      qe_advisories = level->advisories;
      r.add("qe_tcb", level->status != tcb_status::revoked,
            "QE ISVSVN " + std::to_string(qr.isv_svn) + ": " + std::string(to_string(level->status)) +
                " (level isvsvn " + std::to_string(level->isvsvn) + ", advisories " + join(level->advisories) + ")");
    }
  }

  // TDX module (Intel QVL TdxModuleCheck): TEE TCB SVN byte 1 is the module's major version;
  // from 1 on, tdxModuleIdentities["TDX_<major>"] rates byte 0 and names the expected signer.
  std::optional<tcb_status> module_status;
  std::vector<std::string> module_advisories;
  if (q.is_tdx()) {
    const td_report& td = *q.td;
    const uint8_t isv = td.tee_tcb_svn[0];
    const uint8_t major = td.tee_tcb_svn[1];
    const detail::tdx_module_identity* expected = nullptr;
    std::string why;
    std::string module_name;
    if (major == 0) {
      if (info.tdx_module)
        expected = &*info.tdx_module;
      else
        why = "TCB info has no tdxModule";
    } else {
      char id[8];
      std::snprintf(id, sizeof id, "TDX_%02X", major);
      module_name = id;
      for (const auto& m : info.tdx_module_identities) {
        std::string upper = m.id;
        std::transform(upper.begin(), upper.end(), upper.begin(),
                       [](unsigned char ch) { return static_cast<char>(std::toupper(ch)); });
        if (upper == id)
          expected = &m;
      }
      if (expected == nullptr) {
        why = std::string("TCB info has no TDX module identity ") + id;
      } else if (const auto* level = detail::match_isv(expected->levels, isv); level == nullptr) {
        why = std::string("TDX module ") + id + " SVN " + std::to_string(isv) + " is below every level";
        expected = nullptr;
      } else {
        module_status = level->status;
        module_advisories = level->advisories;
      }
    }
    if (expected != nullptr) {
      bool attrs = true;
      for (size_t i = 0; i < 8; ++i)
        attrs = attrs && (td.seam_attributes[i] & expected->attributes_mask[i]) ==
                             (expected->attributes[i] & expected->attributes_mask[i]);
      if (td.mr_signer_seam != expected->mrsigner)
        why = "MRSIGNER_SEAM " + codec::hex::encode(td.mr_signer_seam) + " is not the TDX module's " +
              codec::hex::encode(expected->mrsigner);
      else if (!attrs)
        why = "SEAM attributes do not match the TDX module's under the mask";
    }
    r.add("tdx_module", why.empty() && module_status != tcb_status::revoked,
          why.empty() ? (module_status ? "TDX module " + module_name + " SVN " + std::to_string(isv) + ": " +
                                             std::string(to_string(*module_status)) + " (advisories " +
                                             join(module_advisories) + ")"
                                       : std::string("TDX module signer and attributes match"))
                      : why);
  }

  // Platform TCB level.
  const std::array<uint8_t, 16>* tee_svn = q.is_tdx() ? &q.td->tee_tcb_svn : nullptr;
  const detail::tcb_level* level = platform_ok ? detail::match_platform(info, *r.pck, tee_svn) : nullptr;
  if (!platform_ok) {
    r.add("tcb_level", false,
          r.pck ? "not checked: the TCB info is not for this platform" : "not checked: no PCK certificate facts");
  } else if (level == nullptr) {
    r.add("tcb_level", false,
          "no TCB level matches: PCE SVN " + std::to_string(r.pck->pce_svn) + ", SGX components " +
              svn_hex(r.pck->tcb_components) + (tee_svn ? ", TEE TCB SVN " + svn_hex(*tee_svn) : std::string()) +
              " are below every level of the TCB info");
  } else {
    r.add("tcb_level", true,
          "platform matches the " + std::string(to_string(level->status)) + " level of " + level->date);
  }

  if (level != nullptr && qe_status) {
    tcb_assessment a;
    a.platform_status = level->status;
    a.qe_status = *qe_status;
    a.module_status = module_status;
    a.status = detail::converge(level->status, *qe_status);
    if (module_status)
      a.status = detail::converge(a.status, *module_status);
    a.advisory_ids = level->advisories;
    for (const auto* extra : {&module_advisories, &qe_advisories})
      for (const auto& id : *extra)
        if (std::find(a.advisory_ids.begin(), a.advisory_ids.end(), id) == a.advisory_ids.end())
          a.advisory_ids.push_back(id);
    a.tcb_date = level->date;
    a.tcb_evaluation_data_number = info.tcb_evaluation_data_number;
    r.tcb = std::move(a);
  }
}

}  // namespace

result<quote_report> verify_quote(bytes_view quote_bytes, const quote_options& o) {
  ENACT_TRY(quote q, parse_quote(quote_bytes));
  quote_report r;
  r.verified_at = o.now.value_or(static_cast<int64_t>(std::time(nullptr)));
  const int64_t now = r.verified_at;

  detail::x509_ptr custom_root;
  X509* root = detail::intel_root();
  if (!o.root_ca_pem.empty()) {
    ENACT_TRY(auto certs, detail::parse_pem_chain(o.root_ca_pem, "root_ca_pem"));
    custom_root = std::move(certs.front());
    root = custom_root.get();
  }
  if (root == nullptr)
    return fail(attest_errc::bad_certificate, "root CA: does not parse");

  std::optional<detail::tcb_info> info;
  std::optional<detail::qe_identity> qe;
  std::vector<detail::crl_ptr> crl_owner;
  std::vector<X509_CRL*> crls;
  if (o.collateral) {
    ENACT_TRY(info, detail::parse_tcb_info(o.collateral->tcb_info));
    ENACT_TRY(qe, detail::parse_qe_identity(o.collateral->qe_identity));
    for (const auto* c : {&o.collateral->root_ca_crl, &o.collateral->pck_crl}) {
      if (c->empty())
        continue;
      ENACT_TRY(auto crl, detail::parse_crl(*c, c == &o.collateral->root_ca_crl ? "root_ca_crl" : "pck_crl"));
      crls.push_back(crl.get());
      crl_owner.push_back(std::move(crl));
    }
  }
  if (o.log && !q.is_tdx())
    return fail(attest_errc::bad_field, "event log: an SGX quote has no RTMRs to replay into");

  // Quote signature: the attestation key signs everything before the signature data.
  const detail::pkey_ptr ak = detail::p256_key(q.attestation_key);
  const bool sig_ok = ak && detail::verify_p256(ak.get(), q.signed_data(), q.signature);
  r.add("quote_signature", sig_ok,
        !ak      ? "the attestation key is not a P-256 point"
        : sig_ok ? "ECDSA-P256 signature over header and body verifies with the attestation "
                   "key"
                 : "the signature over header and body does not verify with the attestation "
                   "key");

  auto chain = detail::parse_pem_chain(q.pck_chain_pem, "PCK chain");
  X509* leaf = chain ? chain->front().get() : nullptr;

  // QE report signature: the PCK key (the platform's) signs the QE report.
  if (leaf == nullptr) {
    r.add("qe_report_signature", false, "not checked: " + chain.err().message);
  } else {
    const bool ok = detail::verify_p256(X509_get0_pubkey(leaf), q.qe_report_bytes, q.qe_report_signature);
    r.add("qe_report_signature", ok,
          ok ? "the PCK certificate's key signed the QE report"
             : "the QE report signature does not verify with the PCK certificate's key");
  }

  // QE report data binds the attestation key: SHA-256(key ‖ QE auth data) ‖ 32 zero bytes.
  {
    bytes preimage(q.attestation_key.begin(), q.attestation_key.end());
    preimage.insert(preimage.end(), q.qe_auth_data.begin(), q.qe_auth_data.end());
    const hash256 h = crypto::sha256(preimage);
    const auto& rd = q.qe_report.report_data;
    const bool hash_ok = std::equal(h.begin(), h.end(), rd.begin());
    const bool zero_ok = std::all_of(rd.begin() + 32, rd.end(), [](uint8_t b) { return b == 0; });
    r.add("qe_report_data", hash_ok && zero_ok,
          hash_ok && zero_ok ? "QE report data is SHA-256(attestation key ‖ QE auth data) ‖ 32 zero bytes"
                             : (!hash_ok ? "QE report data is not SHA-256(attestation key ‖ QE auth data): the "
                                           "attestation key is not the one the QE certified"
                                         : "QE report data bytes 32..63 are not zero"));
  }

  // PCK chain to the root, at the verification time, with the CRLs when collateral has them.
  std::string pck_error;
  if (!chain) {
    pck_error = "the PCK certificate chain does not parse";
    r.add("pck_chain", false, chain.err().message);
  } else {
    const std::string why = detail::verify_chain(*chain, root, now, crls);
    r.add("pck_chain", why.empty(),
          why.empty() ? "PCK certificate chain (" + std::to_string(chain->size()) +
                            " certificates) verifies to the trusted root at " + detail::format_time(now) +
                            (crls.empty() ? ", without revocation checks (no CRLs)"
                                          : ", with " + std::to_string(crls.size()) + " CRLs")
                      : why);
    std::string error;
    r.pck = detail::read_pck_facts(leaf, error);
    if (!r.pck)
      pck_error = "the PCK certificate's SGX extensions: " + error;
  }

  // A debug enclave or TD is open to its host: not a confidential environment.
  {
    bool debug = false;
    if (q.is_tdx())
      debug = (q.td->td_attributes[0] & 0x01) != 0;  // TDATTRIBUTES.DEBUG (bit 0)
    else
      debug = (q.enclave->attributes[0] & 0x02) != 0;  // SGX ATTRIBUTES.DEBUG (bit 1)
    r.add("debug_disabled", !debug,
          debug ? std::string(q.is_tdx() ? "the TD" : "the enclave") + " runs in debug mode"
                : std::string(q.is_tdx() ? "the TD" : "the enclave") + " is not in debug mode");
  }

  if (o.collateral) {
    check_collateral(r, q, *o.collateral, *info, *qe, root, now, crls, pck_error);
    if (!r.tcb) {
      r.add("tcb_status", false, "no TCB status: a TCB level or the QE level did not match");
    } else {
      const bool accepted = std::find(o.accepted.begin(), o.accepted.end(), r.tcb->status) != o.accepted.end();
      r.add("tcb_status", accepted,
            std::string(to_string(r.tcb->status)) + (accepted ? "" : " (not accepted)") + ", advisories " +
                join(r.tcb->advisory_ids));
    }
  }

  if (o.log) {
    event_log_report lr = verify_event_log(*o.log, *q.td);
    for (const auto& c : lr.checks)
      r.checks.push_back(c);
    r.log = std::move(lr);
  }
  r.parsed = std::move(q);
  return r;
}

result<quote_report> verify_attestation(std::string_view attestation_json, quote_options o) {
  ENACT_TRY(detail::json::value doc, detail::parse_json(attestation_json, "attestation"));
  ENACT_TRY(const detail::json::object* obj, detail::as_object(doc, "attestation"));
  ENACT_TRY(std::string_view quote_hex, detail::get_string(*obj, "attestation", "quote"));
  auto bytes_r = codec::hex::decode(quote_hex, "attestation.quote");
  if (!bytes_r)
    return fail(attest_errc::bad_field, bytes_r.err().message);
  if (const auto* log = obj->if_contains("event_log"); log != nullptr && !o.log) {
    ENACT_TRY(o.log, event_log_from_json(*log));
  }
  return verify_quote(*bytes_r, o);
}

}  // namespace enact::attest
