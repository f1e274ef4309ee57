// POST /rpc: the body goes to the rpc_surface as it is; the answer comes back as it is.
#include "core/routes_rpc.hpp"

#include <httplib.h>

#include "core/log.hpp"
#include "core/service.hpp"
#include "ledger/rpc_surface.hpp"

namespace enact::core {

namespace {

// Browser dapps call a node from their own origin; writes need signed transactions anyway.
void allow_any_origin(httplib::Response& res) {
  res.set_header("Access-Control-Allow-Origin", "*");
  res.set_header("Access-Control-Allow-Methods", "POST, OPTIONS");
  res.set_header("Access-Control-Allow-Headers", "Content-Type");
}

}  // namespace

void mount_rpc(httplib::Server& server,
               ledger::rpc_surface& surface,
               const config& cfg,
               logger& log) {
  surface.on_internal_error([&log](const std::string& detail) {
    log.error("rpc internal error", {{"route", "/rpc"}, {"detail", detail}});
  });
  server.Post("/rpc", [&surface, &cfg](const httplib::Request& req, httplib::Response& res) {
    allow_any_origin(res);
    if (req.body.size() > cfg.max_body_bytes) {
      res.set_content(R"({"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":)"
                      R"("invalid request: body over )" +
                          std::to_string(cfg.max_body_bytes) + R"( bytes"}})",
                      "application/json");
      return;
    }
    std::string out = surface.handle(req.body);
    if (out.empty()) {
      res.status = 204;
      return;
    }
    res.set_content(std::move(out), "application/json");
  });
  server.Options("/rpc", [](const httplib::Request&, httplib::Response& res) {
    allow_any_origin(res);
    res.status = 204;
  });
}

}  // namespace enact::core
