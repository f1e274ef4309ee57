// SPDX-License-Identifier: Apache-2.0
// The network check (see network.hpp).
#include "enact/attest/network.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <cctype>

#include "enact/attest/quote.hpp"
#include "enact/codec/hex.hpp"
#include "enact/crypto/sha2.hpp"
#include "json_fields.hpp"
#include "x509.hpp"

namespace enact::attest {

namespace {

struct listed_file {
  std::string name;
  hash256 hash{};
};

bool is_space(char c) { return c == ' ' || c == '\t'; }

/// sha256sum output: "<64 hex> <space|*><name>" per line (text or binary mode).
result<std::vector<listed_file>> parse_sha256sum(std::string_view text) {
  std::vector<listed_file> out;
  size_t line_no = 0;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    ++line_no;
    if (!line.empty() && line.back() == '\r')
      line.remove_suffix(1);
    if (line.empty())
      continue;
    const std::string where = "sha256sum.txt line " + std::to_string(line_no);
    listed_file f;
    if (line.size() < 66 || !codec::hex::decode_into(line.substr(0, 64), f.hash, where) || !is_space(line[64]))
      return fail(attest_errc::bad_field, where + ": expected \"<64 hex digits>  <file name>\"");
    std::string_view name = line.substr(65);
    if (!name.empty() && (name.front() == '*' || name.front() == ' '))
      name.remove_prefix(1);
    if (name.empty())
      return fail(attest_errc::bad_field, where + ": no file name");
    f.name = name;
    out.push_back(std::move(f));
  }
  if (out.empty())
    return fail(attest_errc::bad_field, "sha256sum.txt: lists no file");
  return out;
}

result<std::string_view> file(const network_evidence& e, std::string_view name) {
  const auto it = e.files.find(name);
  if (it == e.files.end())
    return fail(attest_errc::bad_field, "evidence: " + std::string(name) + " is missing");
  return std::string_view(it->second);
}

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v)
    out += (out.empty() ? "" : ", ") + s;
  return out;
}

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

}  // namespace

std::optional<caa_issue_value> parse_caa_issue_value(std::string_view v) {
  // issue-value = *WSP [issuer-domain-name *WSP] [";" *WSP [parameters *WSP]]
  caa_issue_value out;
  auto trim = [](std::string_view s) {
    while (!s.empty() && is_space(s.front()))
      s.remove_prefix(1);
    while (!s.empty() && is_space(s.back()))
      s.remove_suffix(1);
    return s;
  };
  const size_t semi = v.find(';');
  out.issuer = trim(v.substr(0, semi));
  if (semi == std::string_view::npos)
    return out;
  std::string_view rest = v.substr(semi + 1);
  while (!(rest = trim(rest)).empty()) {
    const size_t end = rest.find(';');
    const std::string_view param = trim(rest.substr(0, end));
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
    if (param.empty())
      continue;
    const size_t eq = param.find('=');
    if (eq == std::string_view::npos || eq == 0)
      return std::nullopt;
    out.parameters.emplace_back(std::string(trim(param.substr(0, eq))), std::string(trim(param.substr(eq + 1))));
  }
  return out;
}

result<network_report> verify_network(const network_evidence& e, caa_resolver& resolver) {
  network_report r;

  // Evidence files: the inputs the checks read.
  ENACT_TRY(std::string_view sums_text, file(e, "sha256sum.txt"));
  ENACT_TRY(std::vector<listed_file> listed, parse_sha256sum(sums_text));
  ENACT_TRY(std::string_view quote_json, file(e, "quote.json"));
  ENACT_TRY(detail::json::value qdoc, detail::parse_json(quote_json, "quote.json"));
  ENACT_TRY(const detail::json::object* qobj, detail::as_object(qdoc, "quote.json"));
  ENACT_TRY(std::string_view quote_hex, detail::get_string(*qobj, "quote.json", "quote"));
  ENACT_TRY(quote q, parse_quote_hex(quote_hex));
  ENACT_TRY(std::string_view account_text, file(e, "acme-account.json"));
  ENACT_TRY(detail::json::value adoc, detail::parse_json(account_text, "acme-account.json"));
  ENACT_TRY(const detail::json::object* aobj, detail::as_object(adoc, "acme-account.json"));
  const char* uri_key = aobj->contains("uri") ? "uri" : "account_uri";
  ENACT_TRY(std::string_view account, detail::get_string(*aobj, "acme-account.json", uri_key));
  if (account.empty())
    return fail(attest_errc::bad_field, "acme-account.json." + std::string(uri_key) + ": empty");
  r.account_uri = account;
  const std::string cert_name = "cert-" + e.domain + ".pem";
  ENACT_TRY(std::string_view cert_pem, file(e, cert_name));
  ENACT_TRY(auto evidence_chain, detail::parse_pem_chain(cert_pem, cert_name));

  // report_data binds sha256sum.txt (and through it every listed file) to the TD.
  r.sha256sum_hash = crypto::sha256(as_bytes(sums_text));
  r.report_data = q.report_data();
  const bool rd_hash = std::equal(r.sha256sum_hash.begin(), r.sha256sum_hash.end(), r.report_data.begin());
  const bool rd_zero = std::all_of(r.report_data.begin() + 32, r.report_data.end(), [](uint8_t b) { return b == 0; });
  r.add("report_data", rd_hash && rd_zero,
        rd_hash ? (rd_zero ? "the evidence quote's report_data is SHA-256(sha256sum.txt) " +
                                 codec::hex::encode(r.sha256sum_hash)
                           : "report_data starts with SHA-256(sha256sum.txt) but its last 32 "
                             "bytes are not zero")
                : "the evidence quote's report_data starts with " +
                      codec::hex::encode(bytes_view(r.report_data.data(), 32)) + ", SHA-256(sha256sum.txt) is " +
                      codec::hex::encode(r.sha256sum_hash));

  std::vector<std::string> bad;
  for (const auto& f : listed) {
    const auto it = e.files.find(f.name);
    if (it == e.files.end())
      bad.push_back(f.name + " (not given)");
    else if (crypto::sha256(as_bytes(it->second)) != f.hash)
      bad.push_back(f.name + " (hash differs)");
  }
  const bool cert_listed =
      std::any_of(listed.begin(), listed.end(), [&](const listed_file& f) { return f.name == cert_name; });
  if (!cert_listed)
    bad.push_back(cert_name + " (not listed)");
  r.add("file_hashes", bad.empty(),
        bad.empty() ? "all " + std::to_string(listed.size()) + " files listed in sha256sum.txt hash as listed"
                    : join(bad));

  const bytes evidence_der = detail::cert_der(evidence_chain.front().get());
  r.evidence_cert_sha256 = crypto::sha256(evidence_der);
  r.served_cert_sha256 = crypto::sha256(e.served_cert_der);
  const bool same_cert = r.evidence_cert_sha256 == r.served_cert_sha256;
  r.add("certificate", same_cert,
        same_cert ? "the certificate served on TLS is the evidence certificate (SHA-256 " +
                        codec::hex::encode(r.served_cert_sha256) + ")"
                  : "the served certificate's SHA-256 is " + codec::hex::encode(r.served_cert_sha256) +
                        ", the evidence certificate's is " + codec::hex::encode(r.evidence_cert_sha256));

  // CAA: issuance restricted, and only to the evidence account. A wildcard name is governed by
  // issuewild when the set has any (RFC 8659 §4.3).
  ENACT_TRY(r.caa, resolver.caa(e.domain));
  const bool wildcard = e.domain.rfind("*.", 0) == 0;
  const bool has_wild =
      std::any_of(r.caa.begin(), r.caa.end(), [](const caa_record& c) { return lower(c.tag) == "issuewild"; });
  const std::string tag = wildcard && has_wild ? "issuewild" : "issue";
  std::vector<caa_issue_value> issue;
  for (const auto& c : r.caa)
    if (lower(c.tag) == tag)
      if (auto v = parse_caa_issue_value(c.value))
        issue.push_back(std::move(*v));
  const bool restricted = !issue.empty();
  r.add("caa_restricts_issuance", restricted,
        restricted      ? std::to_string(issue.size()) + " CAA " + tag + " record(s) for " + e.domain
        : r.caa.empty() ? "no CAA records for " + e.domain + ": any CA may issue to any account"
                        : "the CAA records of " + e.domain + " have no " + tag + " record: issuance is not restricted");
  std::vector<std::string> accounts;
  bool listed_account = false;
  for (const auto& v : issue)
    for (const auto& [k, val] : v.parameters)
      if (lower(k) == "accounturi") {
        accounts.push_back(val);
        listed_account = listed_account || val == r.account_uri;
      }
  // Every issue record must bind the account: one record without accounturi lets any account
  // of its CA issue.
  bool all_bound = restricted;
  for (const auto& v : issue)
    all_bound = all_bound && std::any_of(v.parameters.begin(), v.parameters.end(), [&](const auto& p) {
                  return lower(p.first) == "accounturi" && p.second == r.account_uri;
                });
  r.add("caa_account", listed_account && all_bound,
        !restricted       ? "not checked: no " + tag + " record"
        : !listed_account ? "the evidence account " + r.account_uri + " is not among the accounturi values (" +
                                (accounts.empty() ? std::string("none") : join(accounts)) + ")"
        : !all_bound ? "an " + tag + " record allows issuance without the evidence account " + r.account_uri
                     : "every " + tag + " record is bound to the evidence account " + r.account_uri);
  return r;
}

boost::json::value to_json(const network_report& r) {
  boost::json::object o = to_json(static_cast<const checklist&>(r));
  boost::json::array caa;
  for (const auto& c : r.caa)
    caa.push_back(boost::json::object{{"flags", c.flags}, {"tag", c.tag}, {"value", c.value}});
  o["facts"] = boost::json::object{{"sha256sum_hash", codec::hex::encode(r.sha256sum_hash)},
                                   {"report_data", codec::hex::encode(r.report_data)},
                                   {"evidence_cert_sha256", codec::hex::encode(r.evidence_cert_sha256)},
                                   {"served_cert_sha256", codec::hex::encode(r.served_cert_sha256)},
                                   {"account_uri", r.account_uri},
                                   {"caa", std::move(caa)}};
  return o;
}

}  // namespace enact::attest
