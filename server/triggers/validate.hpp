// SPDX-License-Identifier: Apache-2.0
// The rules a trigger's settings must pass before they are stored (docs/protocol.md §4): the config of each
// type as the API reads it (enact/api/triggers.hpp), then what depends on the deployment — the
// minimum interval of a schedule and the chains it can watch. Every refusal is
// api_errc::invalid_request with a message naming the field ("config.cron: …").
#pragma once

#include <boost/json.hpp>

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

/// Chain names a chain-event trigger may name, and the most confirmations it may ask for (docs/protocol.md §4).
using api::kChains;
using api::kMaxConfirmations;

/// What the deployment offers that configs depend on.
struct config_rules {
  /// Chain name → JSON-RPC URL (`--chain-rpc NAME=URL`); a chain-event trigger needs its chain here.
  std::map<std::string, std::string> chain_rpc;
};

/// The cron expression of a schedule, parsed, with its interval checked: the smallest gap
/// between consecutive firings over all time (cron::min_interval, exact rather than sampled) must
/// be at least kMinScheduleInterval.
[[nodiscard]] result<cron::schedule> parse_schedule(std::string_view expr);

/// The deployment's rules over a config as the API read it (api::read_request_config): a
/// chain-event trigger's chain has an RPC endpoint here, a schedule fires at most every
/// kMinScheduleInterval.
[[nodiscard]] result<void> check_config(const api::trigger_config& config, const config_rules& rules);

/// Reads `config` (nullptr: absent) for a trigger of type `t` as the API does, then checks it
/// against `rules`: the config a trigger of the request is stored with.
[[nodiscard]] result<api::trigger_config> validate_config(trigger_type t, const json::value* config,
                                                          const config_rules& rules);

}  // namespace enact::triggers
