// SPDX-License-Identifier: Apache-2.0
// JSON forms of the attest reports, for the CLI and for clients that forward a report: every
// byte string lowercase hex without prefix (as the evidence files write them), times as RFC 3339.
#include <boost/json.hpp>

#include "enact/attest/event_log.hpp"
#include "enact/attest/quote.hpp"
#include "enact/attest/report.hpp"
#include "enact/codec/hex.hpp"
#include "x509.hpp"

namespace enact::attest {

namespace json = boost::json;

namespace {
json::array strings(const std::vector<std::string>& v) {
  json::array a;
  for (const auto& s : v)
    a.emplace_back(s);
  return a;
}
}  // namespace

json::object to_json(const checklist& list) {
  json::object o;
  o["verdict"] = to_string(list.overall());
  json::array checks;
  for (const auto& c : list.checks)
    checks.push_back(json::object{{"name", c.name}, {"passed", c.passed}, {"detail", c.detail}});
  o["checks"] = std::move(checks);
  return o;
}

json::value to_json(const quote& q) {
  json::object o;
  o["version"] = q.header.version;
  o["tee_type"] = q.is_tdx() ? "TDX" : "SGX";
  o["attestation_key_type"] = q.header.attestation_key_type;
  o["body_type"] = q.body_type;
  o["qe_vendor_id"] = codec::hex::encode(q.header.qe_vendor_id);
  o["user_data"] = codec::hex::encode(q.header.user_data);
  if (q.td) {
    const td_report& t = *q.td;
    json::object b;
    b["tee_tcb_svn"] = codec::hex::encode(t.tee_tcb_svn);
    b["mr_seam"] = codec::hex::encode(t.mr_seam);
    b["mr_signer_seam"] = codec::hex::encode(t.mr_signer_seam);
    b["seam_attributes"] = codec::hex::encode(t.seam_attributes);
    b["td_attributes"] = codec::hex::encode(t.td_attributes);
    b["xfam"] = codec::hex::encode(t.xfam);
    b["mr_td"] = codec::hex::encode(t.mr_td);
    b["mr_config_id"] = codec::hex::encode(t.mr_config_id);
    b["mr_owner"] = codec::hex::encode(t.mr_owner);
    b["mr_owner_config"] = codec::hex::encode(t.mr_owner_config);
    for (size_t i = 0; i < 4; ++i)
      b["rtmr" + std::to_string(i)] = codec::hex::encode(t.rtmr[i]);
    b["report_data"] = codec::hex::encode(t.report_data);
    if (t.tee_tcb_svn2)
      b["tee_tcb_svn2"] = codec::hex::encode(*t.tee_tcb_svn2);
    if (t.mr_servicetd)
      b["mr_servicetd"] = codec::hex::encode(*t.mr_servicetd);
    o["td_report"] = std::move(b);
  } else {
    const enclave_report& e = *q.enclave;
    json::object b;
    b["cpu_svn"] = codec::hex::encode(e.cpu_svn);
    b["misc_select"] = e.misc_select;
    b["attributes"] = codec::hex::encode(e.attributes);
    b["mr_enclave"] = codec::hex::encode(e.mr_enclave);
    b["mr_signer"] = codec::hex::encode(e.mr_signer);
    b["isv_prod_id"] = e.isv_prod_id;
    b["isv_svn"] = e.isv_svn;
    b["report_data"] = codec::hex::encode(e.report_data);
    o["enclave_report"] = std::move(b);
  }
  o["qe_report"] = json::object{{"mr_enclave", codec::hex::encode(q.qe_report.mr_enclave)},
                                {"mr_signer", codec::hex::encode(q.qe_report.mr_signer)},
                                {"isv_prod_id", q.qe_report.isv_prod_id},
                                {"isv_svn", q.qe_report.isv_svn}};
  o["attestation_key"] = codec::hex::encode(q.attestation_key);
  return o;
}

json::value to_json(const event_log_report& r) {
  json::object o = to_json(static_cast<const checklist&>(r));
  json::object facts;
  facts["events"] = r.log.events.size();
  facts["runtime_digests_computed"] = r.replayed.digests_computed;
  json::array rtmrs;
  for (const auto& reg : r.replayed.rtmr)
    rtmrs.emplace_back(codec::hex::encode(reg));
  facts["replayed_rtmrs"] = std::move(rtmrs);
  json::object runtime;
  for (const auto& e : r.log.events)
    if (e.is_runtime() && !runtime.contains(e.name))
      runtime[e.name] = codec::hex::encode(e.payload);
  facts["runtime_events"] = std::move(runtime);
  o["facts"] = std::move(facts);
  return o;
}

json::value to_json(const quote_report& r) {
  json::object o = to_json(static_cast<const checklist&>(r));
  json::object facts;
  facts["verified_at"] = detail::format_time(r.verified_at);
  facts["quote"] = to_json(r.parsed);
  if (r.pck) {
    facts["pck"] = json::object{{"fmspc", codec::hex::encode(r.pck->fmspc)},
                                {"pce_id", codec::hex::encode(r.pck->pce_id)},
                                {"pce_svn", r.pck->pce_svn},
                                {"cpu_svn", codec::hex::encode(r.pck->cpu_svn)},
                                {"tcb_components", codec::hex::encode(r.pck->tcb_components)},
                                {"subject", r.pck->subject},
                                {"issuer", r.pck->issuer},
                                {"not_before", detail::format_time(r.pck->not_before)},
                                {"not_after", detail::format_time(r.pck->not_after)}};
  }
  if (r.tcb) {
    json::object t;
    t["status"] = to_string(r.tcb->status);
    t["advisory_ids"] = strings(r.tcb->advisory_ids);
    t["platform_status"] = to_string(r.tcb->platform_status);
    t["qe_status"] = to_string(r.tcb->qe_status);
    if (r.tcb->module_status)
      t["module_status"] = to_string(*r.tcb->module_status);
    t["tcb_date"] = r.tcb->tcb_date;
    t["tcb_evaluation_data_number"] = r.tcb->tcb_evaluation_data_number;
    facts["tcb"] = std::move(t);
  }
  if (r.log)
    facts["event_log"] = to_json(*r.log).as_object()["facts"];
  o["facts"] = std::move(facts);
  return o;
}

}  // namespace enact::attest
