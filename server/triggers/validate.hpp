// SPDX-License-Identifier: Apache-2.0
// The rules a trigger's settings must pass before they are stored (docs/protocol.md §4): the config of each
// type, the minimum interval of a schedule, and the chains the deployment can watch. Every
// refusal is api_errc::invalid_request with a message naming the field ("config.cron: …").
#pragma once

#include <boost/json.hpp>

#include <array>
#include <chrono>
#include <map>
#include <string>
#include <string_view>

#include "enact/cron/cron.hpp"
#include "enact/result.hpp"
#include "triggers/store.hpp"

namespace enact::triggers {

/// Schedules firing more often than this are refused (trigger-service spec, "Limits").
inline constexpr std::chrono::seconds kMinScheduleInterval{30};

/// Chain names a chain-event trigger may name (docs/protocol.md §4).
inline constexpr std::array<std::string_view, 5> kChains = {"ethereum", "svc", "arbitrum", "bsc", "polygon"};

/// Confirmations a chain-event trigger may ask for at most.
inline constexpr uint64_t kMaxConfirmations = 1000;

/// What the deployment offers that configs depend on.
struct config_rules {
  /// Chain name → JSON-RPC URL (`--chain-rpc NAME=URL`); a chain-event trigger needs its chain here.
  std::map<std::string, std::string> chain_rpc;
};

/// The cron expression of a schedule, parsed, with its interval checked: the smallest gap
/// between consecutive firings over all time (cron::min_interval, exact rather than sampled) must
/// be at least kMinScheduleInterval.
[[nodiscard]] result<cron::schedule> parse_schedule(std::string_view expr);

/// Validates `config` for a trigger of type `t` and returns its stored form:
///  - webhook: `{}` (absent is `{}` too);
///  - schedule: `{"cron", "timezone": "UTC"}` (only UTC: the SDK's cron computes UTC times);
///  - chain-event: `{"chain", "contract" (checksummed), "event", "start_block"?,
///    "topic_filters"? (lowercase hex), "confirmations"?}`.
[[nodiscard]] result<json::object> validate_config(trigger_type t, const json::value* config,
                                                   const config_rules& rules);

}  // namespace enact::triggers
