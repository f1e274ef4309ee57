// SPDX-License-Identifier: Apache-2.0
// The trigger service assembled (service.hpp): the store, the scheduler, the run workers and the
// retention sweep started and stopped together, and the routes mounted — the management API and
// the webhook intake on the request pipeline (api.cpp), the approval handshake (handshake.cpp).
#include "triggers/service.hpp"

#include <httplib.h>

#include <algorithm>

#include "http/log.hpp"
#include "http/rate_limiter.hpp"
#include "http/request.hpp"
#include "triggers/api.hpp"
#include "triggers/handshake.hpp"
#include "triggers/housekeeping.hpp"
#include "triggers/service_state.hpp"

namespace enact::triggers {

namespace {

constexpr size_t kMaxManagementBody = size_t{1} << 20;

http::logger::level level_of(severity s) {
  switch (s) {
    case severity::debug:
      return http::logger::level::debug;
    case severity::info:
      return http::logger::level::info;
    case severity::warn:
      return http::logger::level::warn;
    case severity::error:
      return http::logger::level::error;
  }
  return http::logger::level::info;
}

}  // namespace

// --- assembly ------------------------------------------------------------------------------------

service::service(std::unique_ptr<state> st) : st_(std::move(st)) {}

service::~service() { stop(); }

result<std::unique_ptr<service>> service::start(store& s, const tee::tee& t, http::logger& log, const clock& c,
                                                service_config cfg) {
  auto st = std::unique_ptr<state>(
      new state{s, t, log, c, std::move(cfg), nullptr, nullptr, false, nullptr, nullptr, nullptr});
  event_sink sink = [&log](severity level, std::string_view msg, json::object fields) {
    log.log(level_of(level), msg, std::move(fields));
  };
  if (st->cfg.release_leases_at_start) {
    ENACT_TRY(const size_t released, s.release_all_leases(c.now(), st->cfg.workers.max_attempts));
    if (released > 0)
      log.warn("runs left running by a stopped process taken back", {{"runs", released}});
  }
  st->webhook_per_ip =
      std::make_unique<http::rate_limiter>(st->cfg.webhook_requests_per_second, std::max(1.0, st->cfg.webhook_burst));
  // A minute's worth at once, then one every 60/N s.
  const auto per_minute = static_cast<double>(st->cfg.creations_per_minute);
  st->creations_per_user = std::make_unique<http::rate_limiter>(per_minute / 60.0, std::max(1.0, per_minute));
  st->workers = std::make_unique<run_workers>(s, t, c, st->cfg.workers, sink);
  run_workers* w = st->workers.get();
  st->sched = std::make_unique<scheduler>(
      s, c, [w] { w->notify(); }, sink);
  ENACT_TRY_VOID(st->sched->load());
  st->sched->start();
  st->workers->start();
  if (st->cfg.run_retention.count() > 0)
    st->retention = std::make_unique<run_retention>(
        s, c, st->cfg.run_retention, st->cfg.retention_period, [&log](const result<size_t>& swept) {
          if (swept)
            log.info("finished runs past the retention deleted", {{"runs", *swept}});
          else
            log.warn("deleting finished runs past the retention", {{"error", swept.err().message}});
        });
  log.info("trigger service started",
           {{"workers", st->cfg.workers.threads},
            {"core_url", st->cfg.workers.core_url},
            {"schedules", st->sched->size()},
            {"run_retention_days", st->cfg.run_retention.count() / 24},
            {"max_triggers_per_user", st->cfg.max_triggers_per_user},
            {"creations_per_minute", st->cfg.creations_per_minute},
            {"disable_after_credit_failures", st->cfg.workers.disable_after_credit_failures}});
  return std::unique_ptr<service>(new service(std::move(st)));
}

void service::stop() {
  if (!st_ || st_->stopped)
    return;
  st_->stopped = true;
  if (st_->retention)
    st_->retention->stop();
  st_->sched->stop();
  st_->workers->stop();
}

scheduler& service::schedules() { return *st_->sched; }

run_workers& service::workers() { return *st_->workers; }

void service::mount(httplib::Server& server, bool own_listener, std::vector<std::string> loopback_authorities) {
  state& st = *st_;
  mount_api(server, st);
  handshake_config hc;
  hc.public_url = st.cfg.public_url;
  hc.loopback_authorities = std::move(loopback_authorities);
  hc.auth_requests_per_second = st.cfg.auth_requests_per_second;
  hc.auth_burst = st.cfg.auth_burst;
  mount_handshake(server, st.db, st.clk, st.log, std::move(hc));
  if (!own_listener)
    return;

  // What core::mount does for the core's listener: an X-Request-Id on every response and one
  // log line per request (docs/protocol.md §0), JSON errors for whatever no route answered.
  http::listener_options opt;
  opt.close_after_refusal = false;
  opt.name_method_not_allowed = false;
  opt.max_body = std::max(kMaxWebhookBody, kMaxManagementBody) + 1;
  // docs/triggers.md "Serving": the dashboard's page reaches these routes across origins with its
  // bearer token in Authorization, never with cookies; webhooks are called by servers, which send
  // no preflight, so they answer as before whatever the Origin.
  for (const auto& origin : st.cfg.page_origins)
    if (!origin.empty() && origin != "*")
      opt.cors.origins.push_back(origin);
  opt.cors.headers = {"Authorization", "Content-Type"};
  opt.cors.methods = {"GET", "POST", "PATCH", "DELETE"};
  http::serve_requests(server, st.log, opt);
}

}  // namespace enact::triggers
