// SPDX-License-Identifier: Apache-2.0
#include "triggers/validate.hpp"

#include "enact/client/api_error.hpp"

namespace enact::triggers {

namespace {

error invalid(std::string msg) { return fail(api_errc::invalid_request, std::move(msg)); }

}  // namespace

result<cron::schedule> parse_schedule(std::string_view expr) {
  auto s = cron::parse(expr);
  if (!s)
    return invalid("config.cron: " + s.err().message);
  const auto gap = cron::min_interval(*s);
  if (gap < kMinScheduleInterval)
    return invalid("config.cron: '" + std::string(expr) + "' fires " + std::to_string(gap.count()) +
                   " s apart at its closest; the minimum interval is " + std::to_string(kMinScheduleInterval.count()) +
                   " s");
  return std::move(*s);
}

result<void> check_config(const api::trigger_config& config, const config_rules& rules) {
  if (const auto* s = std::get_if<api::schedule_config>(&config)) {
    ENACT_TRY_VOID(parse_schedule(s->cron));
  } else if (const auto* e = std::get_if<api::chain_event_config>(&config); e && !rules.chain_rpc.contains(e->chain)) {
    return invalid("config.chain: this deployment has no RPC endpoint for " + e->chain +
                   " (the operator configures one with --chain-rpc " + e->chain + "=URL)");
  }
  return {};
}

result<api::trigger_config> validate_config(trigger_type t, const json::value* config, const config_rules& rules) {
  ENACT_TRY(api::trigger_config c, api::read_request_config(t, config));
  ENACT_TRY_VOID(check_config(c, rules));
  return c;
}

}  // namespace enact::triggers
