// SPDX-License-Identifier: Apache-2.0
#include "dashboard/attestation.hpp"

#include <httplib.h>
#include <boost/json.hpp>

#include <string>

#include "dashboard/dashboard.hpp"
#include "enact/attest/verify_all.hpp"

namespace enact::dashboard {

namespace {

void send_json(httplib::Response& res, int status, const boost::json::value& body) {
  res.status = status;
  res.set_header("Cache-Control", "no-store");
  res.set_header("Content-Security-Policy", std::string(kPolicy));
  res.set_header("X-Content-Type-Options", "nosniff");
  res.set_content(boost::json::serialize(body), "application/json");
}

// docs/protocol.md §0 error shape.
boost::json::object error_body(std::string_view code, std::string message) {
  return {{"error", {{"code", code}, {"message", std::move(message)}}}};
}

}  // namespace

void mount_attestation_checks(httplib::Server& server) {
  server.Get("/dashboard/attestation-checks", [](const httplib::Request& req, httplib::Response& res) {
    // The evidence as any client gets it: from this very listener (req.local_addr is the address
    // the connection reached, so this works on any --listen address, loopback or not).
    httplib::Client self(req.local_addr, req.local_port);
    self.set_connection_timeout(5);
    self.set_read_timeout(30);
    attest::service_evidence evidence;
    for (const auto& [path, out] : {std::pair<const char*, std::string*>{"/attestation", &evidence.attestation_json},
                                    std::pair<const char*, std::string*>{"/info", &evidence.info_json}}) {
      const auto got = self.Get(path);
      if (!got || got->status != 200) {
        const std::string why = got ? "HTTP " + std::to_string(got->status) : httplib::to_string(got.error());
        send_json(res, 503, error_body("unavailable", std::string("GET ") + path + " of this server failed: " + why));
        return;
      }
      *out = got->body;
    }
    attest::verify_all_options options;
    auto report = attest::verify_all(evidence, options);
    if (!report) {
      send_json(res, 502, error_body("invalid_evidence", report.err().message));
      return;
    }
    // No network evidence and no RPC endpoint are given: verify_all names both in "skipped".
    send_json(res, 200, attest::to_json(*report));
  });
}

}  // namespace enact::dashboard
