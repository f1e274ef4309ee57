// SPDX-License-Identifier: Apache-2.0
#include "core/routes_attestation.hpp"

#include <httplib.h>

#include <boost/json.hpp>

#include "core/errors.hpp"
#include "core/log.hpp"
#include "core/service.hpp"
#include "enact/codec/hex.hpp"
#include "runtime/runtime.hpp"
#include "tee/tee.hpp"

namespace enact::core {
namespace {

namespace json = boost::json;

void send_json(httplib::Response& res, const json::value& body) {
  res.status = 200;
  res.set_content(json::serialize(body), "application/json");
}

void send_error(const services& svc, const httplib::Request& req, httplib::Response& res, const error& e) {
  const http_error h = to_http(e);
  res.status = h.status;
  res.set_content(json::serialize(error_body(h)), "application/json");
  // The request line is logged by mount's post-routing handler; a failing TEE or an unreadable
  // evidence directory is the operator's business too.
  if (h.status >= 500)
    svc.log->error("attestation request failed", {{"path", req.path}, {"detail", e.message}});
}

/// GET /attestation: a quote over the all-zero report data (docs/protocol.md §2 "Attestation"). The quote is `0x`-hex
/// (docs/protocol.md §0; the specification lets clients accept either form); event_log and vm_config are
/// JSON strings, as the guest agent gives them.
result<json::value> attestation(const services& svc) {
  ENACT_TRY(const tee::quote_response q, svc.tee->quote(tee::report_data{}));
  return json::object{
      {"quote", codec::hex::encode_prefixed(q.quote)}, {"event_log", q.event_log}, {"vm_config", q.vm_config}};
}

/// GET /info: app_id and compose_hash as bare hex (docs/protocol.md §5 check 4 prefixes them with 0x),
/// tcb_info as an object; with a sandbox, how isolated its runs are (docs/actions.md): "enforced"
/// false when the operator allowed weak isolation, "missing" the layers some worker could not put
/// in place, "serving" false when runs are refused for want of one.
result<json::value> info(const services& svc) {
  ENACT_TRY(const tee::app_info i, svc.tee->info());
  std::error_code ec;
  json::value tcb = json::parse(i.tcb_info, ec);
  if (ec || !tcb.is_object())
    return fail(api_errc::internal, "tcb_info of the TEE is not a JSON object");
  json::object out{{"app_id", i.app_id}, {"compose_hash", i.compose_hash}, {"tcb_info", std::move(tcb)}};
  if (!i.vm_config.empty())
    out["vm_config"] = i.vm_config;
  // Where the root key comes from and its chain to the KMS root (docs/protocol.md §1 "root key").
  if (!i.key_provider.empty())
    out["key_provider"] = json::object{{"name", i.key_provider}, {"id", i.key_provider_id}};
  if (!i.root_key.empty()) {
    json::value chain = json::parse(i.root_key, ec);
    if (ec || !chain.is_object())
      return fail(api_errc::internal, "root_key of the TEE is not a JSON object");
    out["root_key"] = std::move(chain);
  }
  if (svc.sandbox != nullptr) {
    const runtime::isolation_status iso = svc.sandbox->isolation_state();
    json::array missing;
    for (const auto& layer : iso.missing)
      missing.emplace_back(layer);
    out["sandbox"] =
        json::object{{"enforced", iso.enforced}, {"serving", iso.serving}, {"missing", std::move(missing)}};
  }
  return out;
}

/// The /evidences/ listing: one relative link per file, as a directory index serves it, so a
/// client finds cert-<domain>.pem by its link. Names are restricted to [A-Za-z0-9._-]
/// (tee::is_evidence_name), so they need no escaping.
std::string listing_html(const std::vector<std::string>& names) {
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head><meta charset=\"utf-8\"><title>Index of "
      "/evidences/</title></head>\n<body>\n<h1>Index of /evidences/</h1>\n<ul>\n";
  for (const auto& n : names)
    out.append("<li><a href=\"").append(n).append("\">").append(n).append("</a></li>\n");
  out += "</ul>\n</body>\n</html>\n";
  return out;
}

}  // namespace

void mount_attestation(httplib::Server& server, const services& svc) {
  const services* s = &svc;
  const auto json_route = [s](result<json::value> (*answer)(const services&)) {
    return [s, answer](const httplib::Request& req, httplib::Response& res) {
      auto out = answer(*s);
      if (!out)
        return send_error(*s, req, res, out.err());
      res.set_header("Cache-Control", "no-store");
      send_json(res, *out);
    };
  };
  server.Get("/attestation", json_route(&attestation));
  server.Get("/info", json_route(&info));

  server.Get("/evidences",
             [](const httplib::Request&, httplib::Response& res) { res.set_redirect("/evidences/", 301); });
  server.Get("/evidences/", [s](const httplib::Request& req, httplib::Response& res) {
    auto names = s->tee->evidences().list();
    if (!names)
      return send_error(*s, req, res, names.err());
    res.set_header("Content-Security-Policy", "default-src 'none'");
    res.set_header("Cache-Control", "no-cache");
    res.set_content(listing_html(*names), "text/html; charset=utf-8");
  });
  // httplib has decoded percent-escapes in the path by now; evidence_dir::read refuses any name
  // with a slash, a leading dot or another character outside [A-Za-z0-9._-] before it touches the
  // file system, so "../x", "%2e%2e%2fx" and "%252e…" all stop there.
  server.Get(R"(/evidences/(.+))", [s](const httplib::Request& req, httplib::Response& res) {
    auto file = s->tee->evidences().read(req.matches[1].str());
    if (!file)
      return send_error(*s, req, res, file.err());
    res.set_header("X-Content-Type-Options", "nosniff");
    res.set_header("Cache-Control", "no-cache");
    res.set_content(file->body, file->content_type);
  });
}

}  // namespace enact::core
