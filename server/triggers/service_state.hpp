// SPDX-License-Identifier: Apache-2.0
// What the trigger service's parts share once assembled (service.cpp): the store, the TEE, the
// log, the clock, the configuration, the workers and scheduler, and the per-address and per-user
// rate limits its routes take from (api.cpp, api_handlers.cpp).
#pragma once

#include <memory>

#include "http/log.hpp"
#include "http/rate_limiter.hpp"
#include "triggers/housekeeping.hpp"
#include "triggers/service.hpp"

namespace enact::triggers {

struct service::state {
  store& db;
  const tee::tee& tee;
  http::logger& log;
  const clock& clk;
  service_config cfg;
  std::unique_ptr<run_workers> workers;
  std::unique_ptr<scheduler> sched;
  bool stopped = false;
  std::unique_ptr<run_retention> retention;  // with cfg.run_retention set
  /// One bucket per client address over POST /webhook/<id> (service_config).
  std::unique_ptr<http::rate_limiter> webhook_per_ip;
  /// One bucket per user id over trigger creations (service_config::creations_per_minute).
  std::unique_ptr<http::rate_limiter> creations_per_user;
};

}  // namespace enact::triggers
