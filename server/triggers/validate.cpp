// SPDX-License-Identifier: Apache-2.0
#include "triggers/validate.hpp"

#include "enact/api/errc.hpp"
#include "triggers/webhook.hpp"

namespace enact::triggers {

namespace {

error invalid(std::string msg) { return fail(api_errc::invalid_request, std::move(msg)); }

/// An HTTP field name (RFC 9110 §5.1: a token) the action may see: not a credential, not one of
/// the pseudo-headers, which webhook_params strips (the de-duplication key is read from the
/// headers the run's params carry, and is stored with the run).
result<void> check_dedup_header(std::string_view name) {
  constexpr std::string_view kTchar = "!#$%&'*+-.^_`|~";
  if (name.empty() || name.size() > kMaxDedupHeaderName)
    return invalid("config.dedup_header: 1 to " + std::to_string(kMaxDedupHeaderName) + " characters");
  std::string lower;
  for (const char ch : name) {
    const bool alnum = (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z');
    if (!alnum && kTchar.find(ch) == std::string_view::npos)
      return invalid("config.dedup_header: not an HTTP header name");
    lower += static_cast<char>(ch >= 'A' && ch <= 'Z' ? ch - 'A' + 'a' : ch);
  }
  for (const std::string_view stripped : kStrippedHeaders)
    if (lower == stripped)
      return invalid("config.dedup_header: " + lower + " is a credential or connection detail, never stored");
  return {};
}

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
  if (const auto* w = std::get_if<api::webhook_config>(&config); w && w->dedup_header) {
    ENACT_TRY_VOID(check_dedup_header(*w->dedup_header));
  } else if (const auto* s = std::get_if<api::schedule_config>(&config)) {
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
