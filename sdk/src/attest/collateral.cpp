// SPDX-License-Identifier: Apache-2.0
// Collateral: its wire forms (QuoteCollateralV3 JSON, Intel PCS responses), TCB info and QE
// identity parsing (Intel PCS API v4, "TCB Info V3" and "Enclave Identity V2"), and the TCB
// matching rules of Intel's QVL.
#include "collateral.hpp"

#include <algorithm>
#include <cctype>

#include "enact/codec/hex.hpp"
#include "enact/codec/rfc3339.hpp"
#include "json_fields.hpp"
#include "x509.hpp"

namespace enact::attest {

namespace {

constexpr std::string_view kStatusNames[] = {"UpToDate",
                                             "SWHardeningNeeded",
                                             "ConfigurationNeeded",
                                             "ConfigurationAndSWHardeningNeeded",
                                             "OutOfDate",
                                             "OutOfDateConfigurationNeeded",
                                             "Revoked"};

/// Hex or PEM text of a CRL, as the QuoteCollateralV3 JSON carries it, to its bytes.
result<bytes> crl_bytes(const detail::json::object& o, std::string_view key) {
  ENACT_TRY(std::string_view s, detail::get_string(o, "collateral", key));
  if (s.find("-----BEGIN") != std::string_view::npos)
    return bytes(s.begin(), s.end());
  auto r = codec::hex::decode(s, "collateral." + std::string(key));
  if (!r)
    return fail(attest_errc::bad_field, r.err().message);
  return std::move(r).value();
}

result<std::array<uint8_t, 64>> signature_field(const detail::json::object& o, std::string_view what,
                                                std::string_view key) {
  std::array<uint8_t, 64> sig{};
  ENACT_TRY_VOID(detail::get_hex_into(o, what, key, sig));
  return sig;
}

bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/// End of the JSON value starting at `i` in text already known to be valid JSON.
size_t skip_value(std::string_view s, size_t i) {
  if (s[i] == '"') {
    for (++i; i < s.size(); ++i) {
      if (s[i] == '\\')
        ++i;
      else if (s[i] == '"')
        return i + 1;
    }
    return s.size();
  }
  if (s[i] == '{' || s[i] == '[') {
    int depth = 0;
    for (; i < s.size(); ++i) {
      const char c = s[i];
      if (c == '"') {
        i = skip_value(s, i) - 1;
      } else if (c == '{' || c == '[') {
        ++depth;
      } else if (c == '}' || c == ']') {
        if (--depth == 0)
          return i + 1;
      }
    }
    return s.size();
  }
  while (i < s.size() && s[i] != ',' && s[i] != '}' && s[i] != ']' && !is_ws(s[i]))
    ++i;
  return i;
}

/// The exact text of the top-level member `key` of a JSON object, or nullopt.
std::optional<std::string_view> raw_member(std::string_view s, std::string_view key) {
  size_t i = 0;
  auto ws = [&] {
    while (i < s.size() && is_ws(s[i]))
      ++i;
  };
  ws();
  if (i >= s.size() || s[i] != '{')
    return std::nullopt;
  ++i;
  while (true) {
    ws();
    if (i >= s.size() || s[i] != '"')
      return std::nullopt;
    const size_t key_end = skip_value(s, i);
    const std::string_view k = s.substr(i + 1, key_end - i - 2);
    i = key_end;
    ws();
    if (i >= s.size() || s[i] != ':')
      return std::nullopt;
    ++i;
    ws();
    if (i >= s.size())
      return std::nullopt;
    const size_t end = skip_value(s, i);
    if (k == key)
      return s.substr(i, end - i);
    i = end;
    ws();
    if (i >= s.size() || s[i] != ',')
      return std::nullopt;
    ++i;
  }
}

int hex_value(char c) { return codec::hex::detail::nibble(c); }

}  // namespace

std::string_view to_string(tcb_status s) noexcept { return kStatusNames[static_cast<size_t>(s)]; }

std::optional<tcb_status> parse_tcb_status(std::string_view s) noexcept {
  for (size_t i = 0; i < std::size(kStatusNames); ++i)
    if (kStatusNames[i] == s)
      return static_cast<tcb_status>(i);
  return std::nullopt;
}

result<quote_collateral> parse_collateral(std::string_view json_text) {
  ENACT_TRY(detail::json::value doc, detail::parse_json(json_text, "collateral"));
  ENACT_TRY(const detail::json::object* o, detail::as_object(doc, "collateral"));
  quote_collateral c;
  ENACT_TRY(std::string_view tcb_info, detail::get_string(*o, "collateral", "tcb_info"));
  ENACT_TRY(c.tcb_info_signature, signature_field(*o, "collateral", "tcb_info_signature"));
  ENACT_TRY(std::string_view tcb_chain, detail::get_string(*o, "collateral", "tcb_info_issuer_chain"));
  ENACT_TRY(std::string_view qe_identity, detail::get_string(*o, "collateral", "qe_identity"));
  ENACT_TRY(c.qe_identity_signature, signature_field(*o, "collateral", "qe_identity_signature"));
  ENACT_TRY(std::string_view qe_chain, detail::get_string(*o, "collateral", "qe_identity_issuer_chain"));
  c.tcb_info = tcb_info;
  c.tcb_info_issuer_chain = tcb_chain;
  c.qe_identity = qe_identity;
  c.qe_identity_issuer_chain = qe_chain;
  if (o->contains("root_ca_crl")) {
    ENACT_TRY(c.root_ca_crl, crl_bytes(*o, "root_ca_crl"));
  }
  if (o->contains("pck_crl")) {
    ENACT_TRY(c.pck_crl, crl_bytes(*o, "pck_crl"));
  }
  if (const auto* v = o->if_contains("pck_certificate_chain"); v != nullptr && !v->is_null()) {
    ENACT_TRY(std::string_view chain, detail::get_string(*o, "collateral", "pck_certificate_chain"));
    c.pck_certificate_chain = std::string(chain);
  }
  return c;
}

result<signed_object> split_pcs_body(std::string_view body, std::string_view key) {
  ENACT_TRY(detail::json::value doc, detail::parse_json(body, "PCS response"));
  ENACT_TRY(const detail::json::object* o, detail::as_object(doc, "PCS response"));
  ENACT_TRY(const detail::json::value* inner, detail::member(*o, "PCS response", key));
  if (!inner->is_object())
    return fail(attest_errc::bad_field, "PCS response." + std::string(key) + ": expected a JSON object");
  signed_object out;
  ENACT_TRY(out.signature, signature_field(*o, "PCS response", "signature"));
  // The signature covers the member's text as served: take it from the body, not re-serialised.
  const auto raw = raw_member(body, key);
  if (!raw)
    return fail(attest_errc::bad_field, "PCS response." + std::string(key) + ": not found");
  out.text = *raw;
  return out;
}

result<std::string> decode_issuer_chain_header(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (size_t i = 0; i < value.size(); ++i) {
    if (value[i] != '%') {
      out.push_back(value[i]);
      continue;
    }
    const int hi = i + 2 < value.size() ? hex_value(value[i + 1]) : -1;
    const int lo = i + 2 < value.size() ? hex_value(value[i + 2]) : -1;
    if (hi < 0 || lo < 0)
      return fail(attest_errc::bad_field, "issuer chain: bad percent escape at offset " + std::to_string(i));
    out.push_back(static_cast<char>((hi << 4) | lo));
    i += 2;
  }
  return out;
}

result<quote_collateral> collateral_from_pcs(std::string_view tcb_info_body, std::string_view tcb_info_chain_header,
                                             std::string_view qe_identity_body,
                                             std::string_view qe_identity_chain_header, bytes_view root_ca_crl,
                                             bytes_view pck_crl) {
  quote_collateral c;
  ENACT_TRY(signed_object tcb, split_pcs_body(tcb_info_body, "tcbInfo"));
  ENACT_TRY(signed_object qe, split_pcs_body(qe_identity_body, "enclaveIdentity"));
  ENACT_TRY(c.tcb_info_issuer_chain, decode_issuer_chain_header(tcb_info_chain_header));
  ENACT_TRY(c.qe_identity_issuer_chain, decode_issuer_chain_header(qe_identity_chain_header));
  c.tcb_info = std::move(tcb.text);
  c.tcb_info_signature = tcb.signature;
  c.qe_identity = std::move(qe.text);
  c.qe_identity_signature = qe.signature;
  c.root_ca_crl.assign(root_ca_crl.begin(), root_ca_crl.end());
  c.pck_crl.assign(pck_crl.begin(), pck_crl.end());
  return c;
}

}  // namespace enact::attest

namespace enact::attest::detail {

namespace {

result<int64_t> date_field(const json::object& o, std::string_view what, std::string_view key) {
  ENACT_TRY(std::string_view s, get_string(o, what, key));
  auto t = parse_utc(s);
  if (!t)
    return fail(attest_errc::bad_field, field_name(what, key) + ": not an RFC 3339 UTC time");
  return *t;
}

result<tcb_status> status_field(const json::object& o, std::string_view what) {
  ENACT_TRY(std::string_view s, get_string(o, what, "tcbStatus"));
  auto st = parse_tcb_status(s);
  if (!st)
    return fail(attest_errc::bad_field, field_name(what, "tcbStatus") + ": unknown status \"" + std::string(s) + "\"");
  return *st;
}

result<std::vector<std::string>> advisories(const json::object& o, std::string_view what) {
  std::vector<std::string> out;
  const json::value* v = o.if_contains("advisoryIDs");
  if (v == nullptr)
    return out;
  if (!v->is_array())
    return fail(attest_errc::bad_field, field_name(what, "advisoryIDs") + ": expected an array");
  for (const auto& id : v->get_array()) {
    if (!id.is_string())
      return fail(attest_errc::bad_field, field_name(what, "advisoryIDs") + ": expected strings");
    out.emplace_back(id.get_string());
  }
  return out;
}

result<const json::array*> array_field(const json::object& o, std::string_view what, std::string_view key) {
  ENACT_TRY(const json::value* v, member(o, what, key));
  if (!v->is_array())
    return fail(attest_errc::bad_field, field_name(what, key) + ": expected an array");
  return &v->get_array();
}

/// sgxtcbcomponents / tdxtcbcomponents: 16 objects with an "svn" byte.
result<std::array<uint8_t, 16>> components(const json::object& o, std::string_view what, std::string_view key) {
  ENACT_TRY(const json::array* a, array_field(o, what, key));
  if (a->size() != 16)
    return fail(attest_errc::bad_field,
                field_name(what, key) + ": expected 16 components, got " + std::to_string(a->size()));
  std::array<uint8_t, 16> out{};
  for (size_t i = 0; i < 16; ++i) {
    const std::string name = field_name(what, key) + "[" + std::to_string(i) + "]";
    ENACT_TRY(const json::object* c, as_object((*a)[i], name));
    ENACT_TRY(uint64_t svn, get_uint(*c, name, "svn", 255));
    out[i] = static_cast<uint8_t>(svn);
  }
  return out;
}

result<std::vector<isv_level>> isv_levels(const json::object& o, std::string_view what) {
  ENACT_TRY(const json::array* a, array_field(o, what, "tcbLevels"));
  std::vector<isv_level> out;
  for (size_t i = 0; i < a->size(); ++i) {
    const std::string name = field_name(what, "tcbLevels") + "[" + std::to_string(i) + "]";
    ENACT_TRY(const json::object* level, as_object((*a)[i], name));
    ENACT_TRY(const json::value* tcb_v, member(*level, name, "tcb"));
    ENACT_TRY(const json::object* tcb, as_object(*tcb_v, name + ".tcb"));
    isv_level l;
    ENACT_TRY(uint64_t svn, get_uint(*tcb, name + ".tcb", "isvsvn", 0xffff));
    l.isvsvn = static_cast<uint16_t>(svn);
    ENACT_TRY(l.status, status_field(*level, name));
    ENACT_TRY(std::string_view date, get_string(*level, name, "tcbDate"));
    l.date = date;
    ENACT_TRY(l.advisories, advisories(*level, name));
    out.push_back(std::move(l));
  }
  std::stable_sort(out.begin(), out.end(), [](const isv_level& a, const isv_level& b) { return a.isvsvn > b.isvsvn; });
  return out;
}

result<tdx_module_identity> module_identity(const json::object& o, std::string_view what, bool with_levels) {
  tdx_module_identity m;
  if (with_levels) {
    ENACT_TRY(std::string_view id, get_string(o, what, "id"));
    m.id = id;
    ENACT_TRY(m.levels, isv_levels(o, what));
  }
  ENACT_TRY_VOID(get_hex_into(o, what, "mrsigner", m.mrsigner));
  ENACT_TRY_VOID(get_hex_into(o, what, "attributes", m.attributes));
  ENACT_TRY_VOID(get_hex_into(o, what, "attributesMask", m.attributes_mask));
  return m;
}

/// Little-endian u32 written as 8 hex digits (miscselect: the bytes as they sit in the report).
result<uint32_t> hex_le32(const json::object& o, std::string_view what, std::string_view key) {
  std::array<uint8_t, 4> b{};
  ENACT_TRY_VOID(get_hex_into(o, what, key, b));
  return static_cast<uint32_t>(b[0]) | static_cast<uint32_t>(b[1]) << 8 | static_cast<uint32_t>(b[2]) << 16 |
         static_cast<uint32_t>(b[3]) << 24;
}

}  // namespace

std::optional<int64_t> parse_utc(std::string_view s) {
  const auto t = codec::rfc3339::parse_as<std::chrono::seconds>(s);
  if (!t)
    return std::nullopt;
  return t->time_since_epoch().count();
}

result<tcb_info> parse_tcb_info(std::string_view text) {
  constexpr std::string_view what = "tcbInfo";
  ENACT_TRY(json::value doc, parse_json(text, what));
  ENACT_TRY(const json::object* o, as_object(doc, what));
  tcb_info info;
  if (o->contains("id")) {
    ENACT_TRY(std::string_view id, get_string(*o, what, "id"));
    info.id = id;
  }
  ENACT_TRY(uint64_t version, get_uint(*o, what, "version"));
  info.version = static_cast<uint32_t>(version);
  if (info.version < 2 || info.version > 3)
    return fail(attest_errc::bad_field, "tcbInfo.version: " + std::to_string(version) + " is not 2 or 3");
  ENACT_TRY(info.issue_date, date_field(*o, what, "issueDate"));
  ENACT_TRY(info.next_update, date_field(*o, what, "nextUpdate"));
  ENACT_TRY_VOID(get_hex_into(*o, what, "fmspc", info.fmspc));
  ENACT_TRY_VOID(get_hex_into(*o, what, "pceId", info.pce_id));
  ENACT_TRY(uint64_t eval, get_uint(*o, what, "tcbEvaluationDataNumber"));
  info.tcb_evaluation_data_number = static_cast<uint32_t>(eval);
  const bool tdx = info.id == "TDX";
  if (tdx) {
    ENACT_TRY(const json::value* m, member(*o, what, "tdxModule"));
    ENACT_TRY(const json::object* mo, as_object(*m, "tcbInfo.tdxModule"));
    ENACT_TRY(info.tdx_module, module_identity(*mo, "tcbInfo.tdxModule", false));
    if (o->contains("tdxModuleIdentities")) {
      ENACT_TRY(const json::array* ids, array_field(*o, what, "tdxModuleIdentities"));
      for (size_t i = 0; i < ids->size(); ++i) {
        const std::string name = "tcbInfo.tdxModuleIdentities[" + std::to_string(i) + "]";
        ENACT_TRY(const json::object* io, as_object((*ids)[i], name));
        ENACT_TRY(tdx_module_identity id, module_identity(*io, name, true));
        info.tdx_module_identities.push_back(std::move(id));
      }
    }
  }
  ENACT_TRY(const json::array* levels, array_field(*o, what, "tcbLevels"));
  for (size_t i = 0; i < levels->size(); ++i) {
    const std::string name = "tcbInfo.tcbLevels[" + std::to_string(i) + "]";
    ENACT_TRY(const json::object* lo, as_object((*levels)[i], name));
    ENACT_TRY(const json::value* tcb_v, member(*lo, name, "tcb"));
    const std::string tcb_name = name + ".tcb";
    ENACT_TRY(const json::object* tcb, as_object(*tcb_v, tcb_name));
    tcb_level l;
    if (info.version >= 3) {
      ENACT_TRY(l.sgx, components(*tcb, tcb_name, "sgxtcbcomponents"));
      if (tdx) {
        ENACT_TRY(l.tdx, components(*tcb, tcb_name, "tdxtcbcomponents"));
      }
    } else {
      // v2: "sgxtcbcomp01svn" … "sgxtcbcomp16svn"
      for (size_t c = 0; c < 16; ++c) {
        char key[20];
        std::snprintf(key, sizeof key, "sgxtcbcomp%02zusvn", c + 1);
        ENACT_TRY(uint64_t svn, get_uint(*tcb, tcb_name, key, 255));
        l.sgx[c] = static_cast<uint8_t>(svn);
      }
    }
    ENACT_TRY(uint64_t pce, get_uint(*tcb, tcb_name, "pcesvn", 0xffff));
    l.pce_svn = static_cast<uint16_t>(pce);
    ENACT_TRY(l.status, status_field(*lo, name));
    ENACT_TRY(std::string_view date, get_string(*lo, name, "tcbDate"));
    l.date = date;
    ENACT_TRY(l.advisories, advisories(*lo, name));
    info.levels.push_back(std::move(l));
  }
  // Intel's QVL orders levels itself (SGX components, then PCE SVN, then TDX components,
  // highest first) rather than trusting the served order; so does this.
  std::stable_sort(info.levels.begin(), info.levels.end(), [](const tcb_level& a, const tcb_level& b) {
    if (a.sgx != b.sgx)
      return a.sgx > b.sgx;
    if (a.pce_svn != b.pce_svn)
      return a.pce_svn > b.pce_svn;
    return a.tdx.value_or(std::array<uint8_t, 16>{}) > b.tdx.value_or(std::array<uint8_t, 16>{});
  });
  return info;
}

result<qe_identity> parse_qe_identity(std::string_view text) {
  constexpr std::string_view what = "enclaveIdentity";
  ENACT_TRY(json::value doc, parse_json(text, what));
  ENACT_TRY(const json::object* o, as_object(doc, what));
  qe_identity q;
  ENACT_TRY(std::string_view id, get_string(*o, what, "id"));
  q.id = id;
  ENACT_TRY(uint64_t version, get_uint(*o, what, "version"));
  q.version = static_cast<uint32_t>(version);
  ENACT_TRY(q.issue_date, date_field(*o, what, "issueDate"));
  ENACT_TRY(q.next_update, date_field(*o, what, "nextUpdate"));
  ENACT_TRY(uint64_t eval, get_uint(*o, what, "tcbEvaluationDataNumber"));
  q.tcb_evaluation_data_number = static_cast<uint32_t>(eval);
  ENACT_TRY(q.miscselect, hex_le32(*o, what, "miscselect"));
  ENACT_TRY(q.miscselect_mask, hex_le32(*o, what, "miscselectMask"));
  ENACT_TRY_VOID(get_hex_into(*o, what, "attributes", q.attributes));
  ENACT_TRY_VOID(get_hex_into(*o, what, "attributesMask", q.attributes_mask));
  ENACT_TRY_VOID(get_hex_into(*o, what, "mrsigner", q.mrsigner));
  ENACT_TRY(uint64_t prod, get_uint(*o, what, "isvprodid", 0xffff));
  q.isvprodid = static_cast<uint16_t>(prod);
  ENACT_TRY(q.levels, isv_levels(*o, what));
  return q;
}

tcb_status converge(tcb_status platform, tcb_status component) noexcept {
  if (component == tcb_status::revoked)
    return tcb_status::revoked;
  if (component == tcb_status::out_of_date) {
    if (platform == tcb_status::up_to_date || platform == tcb_status::sw_hardening_needed)
      return tcb_status::out_of_date;
    if (platform == tcb_status::configuration_needed || platform == tcb_status::configuration_and_sw_hardening_needed)
      return tcb_status::out_of_date_configuration_needed;
  }
  return platform;
}

const tcb_level* match_platform(const tcb_info& info, const pck_facts& pck,
                                const std::array<uint8_t, 16>* tee_tcb_svn) {
  for (const auto& level : info.levels) {
    if (pck.pce_svn < level.pce_svn)
      continue;
    bool ok = true;
    for (size_t i = 0; i < 16 && ok; ++i)
      ok = pck.tcb_components[i] >= level.sgx[i];
    if (!ok)
      continue;
    if (tee_tcb_svn != nullptr) {
      if (!level.tdx)
        continue;
      // Every TEE TCB SVN byte, as Intel's TcbLevelCheck and dcap-qvl compare them (the TDX
      // module's own SVN, bytes 0 and 1, is judged again against tdxModuleIdentities).
      for (size_t i = 0; i < 16 && ok; ++i)
        ok = (*tee_tcb_svn)[i] >= (*level.tdx)[i];
      if (!ok)
        continue;
    }
    return &level;
  }
  return nullptr;
}

const isv_level* match_isv(const std::vector<isv_level>& levels, uint16_t isvsvn) {
  for (const auto& l : levels)
    if (isvsvn >= l.isvsvn)
      return &l;
  return nullptr;
}

}  // namespace enact::attest::detail
