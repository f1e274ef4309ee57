// SPDX-License-Identifier: Apache-2.0
#include "dashboard/attestation.hpp"

#include <httplib.h>
#include <boost/json.hpp>

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
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

/// The last answer, kept for kFresh: the route is public, and each fresh check makes two requests
/// to this server and a full quote verification, so callers share one check at a time instead of
/// each making their own (a flood would otherwise hold every HTTP thread waiting on requests to
/// itself that no thread is left to serve).
struct checks_cache {
  static constexpr std::chrono::seconds kFresh{60};
  std::mutex mu;
  bool running = false;  // one check at a time; others are answered 503 with Retry-After meanwhile
  std::optional<std::pair<int, std::string>> last;  // status and body
  std::chrono::steady_clock::time_point at{};
};

void mount_attestation_checks(httplib::Server& server) {
  auto cache = std::make_shared<checks_cache>();
  server.Get("/dashboard/attestation-checks", [cache](const httplib::Request& req, httplib::Response& res) {
    {
      std::lock_guard lock(cache->mu);
      const auto now = std::chrono::steady_clock::now();
      if (cache->last && now - cache->at < checks_cache::kFresh) {
        res.status = cache->last->first;
        res.set_header("Cache-Control", "no-store");
        res.set_header("Content-Security-Policy", std::string(kPolicy));
        res.set_header("X-Content-Type-Options", "nosniff");
        res.set_content(cache->last->second, "application/json");
        return;
      }
      if (cache->running) {
        res.set_header("Retry-After", "1");
        send_json(res, 503, error_body("unavailable", "the attestation checks are being made; try again in a second"));
        return;
      }
      cache->running = true;
    }
    // Whatever this check answers becomes the cached answer; `running` is cleared in every case.
    struct publish {
      checks_cache& c;
      httplib::Response& r;
      ~publish() {
        std::lock_guard lock(c.mu);
        c.running = false;
        if (r.status == 200) {
          c.last.emplace(r.status, r.body);
          c.at = std::chrono::steady_clock::now();
        }
      }
    } on_exit{*cache, res};
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
