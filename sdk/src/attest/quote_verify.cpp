// SPDX-License-Identifier: Apache-2.0
// DCAP quote verification: signatures, the PCK chain and, with collateral, the TCB levels of the
// platform, the QE and the TDX module, following Intel's QVL and dcap-qvl (see quote.hpp).
#include <algorithm>
#include <cstdio>
#include <ctime>
#include <map>

#include "collateral.hpp"
#include "enact/attest/quote.hpp"
#include "enact/codec/hex.hpp"
#include "enact/crypto/sha2.hpp"
#include "json_fields.hpp"
#include "x509.hpp"

namespace enact::attest {

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
