// SPDX-License-Identifier: Apache-2.0
// All four checks in one call (see verify_all.hpp).
#include "enact/attest/verify_all.hpp"

#include <boost/json.hpp>

#include "json_fields.hpp"

namespace enact::attest {

verdict service_report::overall() const noexcept {
  bool ok = quote.passed() && app.passed();
  if (evidence_quote)
    ok = ok && evidence_quote->passed();
  if (network)
    ok = ok && network->passed();
  if (governance)
    ok = ok && governance->passed();
  return ok ? verdict::pass : verdict::fail;
}

result<service_report> verify_all(const service_evidence& e, const verify_all_options& o) {
  service_report r;
  ENACT_TRY(r.quote, verify_attestation(e.attestation_json, o.quote));
  ENACT_TRY(app_info info, parse_app_info(e.info_json));
  r.app = verify_app(info, r.quote.log ? r.quote.log->log : event_log{});

  if (e.network && o.resolver != nullptr) {
    ENACT_TRY(r.network, verify_network(*e.network, *o.resolver));
    // verify_network parsed quote.json already, so these reads cannot fail.
    ENACT_TRY(detail::json::value doc, detail::parse_json(e.network->files.at("quote.json"), "quote.json"));
    ENACT_TRY(const detail::json::object* obj, detail::as_object(doc, "quote.json"));
    ENACT_TRY(std::string_view hex_text, detail::get_string(*obj, "quote.json", "quote"));
    ENACT_TRY(quote evidence_quote, parse_quote_hex(hex_text));
    quote_options qo = o.quote;
    qo.log.reset();
    ENACT_TRY(r.evidence_quote, verify_quote(evidence_quote.raw, qo));
  } else {
    r.skipped.emplace_back("network");
  }

  if (o.eth_call) {
    ENACT_TRY(r.governance, verify_governance(info.app_id, codec::hex::encode(info.compose_hash), o.eth_call));
  } else {
    r.skipped.emplace_back("governance");
  }
  return r;
}

boost::json::value to_json(const service_report& r) {
  boost::json::object o;
  o["verdict"] = to_string(r.overall());
  boost::json::array skipped;
  for (const auto& s : r.skipped)
    skipped.emplace_back(s);
  o["skipped"] = std::move(skipped);
  o["quote"] = to_json(r.quote);
  o["app"] = to_json(r.app);
  if (r.evidence_quote)
    o["evidence_quote"] = to_json(*r.evidence_quote);
  if (r.network)
    o["network"] = to_json(*r.network);
  if (r.governance)
    o["governance"] = to_json(*r.governance);
  return o;
}

}  // namespace enact::attest
