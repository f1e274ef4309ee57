// SPDX-License-Identifier: Apache-2.0
// The wire model of the trigger service (docs/protocol.md §4): trigger types and run statuses with their
// wire names, the type-specific trigger configs, a trigger and a run as the service answers them.
// `value_from` writes each as the service does (same members, same order); `value_to` reads one
// and throws `enact::Error` on a bad value, and the `read_*` functions read the same without
// throwing, returning an `enact::error` (api_errc::invalid_request) whose message names the field
// by its path ("config.topic_filters[1][0]: missing 0x prefix").
#pragma once

#include <boost/json/fwd.hpp>
#include <boost/json/value.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "enact/bytes.hpp"
#include "enact/result.hpp"

namespace enact::api {

namespace json = boost::json;

// --- names ---------------------------------------------------------------------------------------

enum class trigger_type { webhook, schedule, chain_event };
enum class run_status { queued, running, success, failed };

/// "webhook", "schedule", "chain-event".
[[nodiscard]] std::string_view name(trigger_type t) noexcept;
[[nodiscard]] std::optional<trigger_type> trigger_type_from_name(std::string_view name) noexcept;
/// "queued", "running", "success", "failed".
[[nodiscard]] std::string_view name(run_status s) noexcept;
[[nodiscard]] std::optional<run_status> run_status_from_name(std::string_view name) noexcept;

// --- configs -------------------------------------------------------------------------------------

/// A webhook trigger has no settings: its URL is `webhook_url` of the trigger.
struct webhook_config {
  friend bool operator==(const webhook_config&, const webhook_config&) = default;
};

/// 5 fields (minute first) or 6 (seconds first); the service refuses an interval under 30 s.
struct schedule_config {
  std::string cron;
  std::string timezone = "UTC";  // the only zone the service accepts
  friend bool operator==(const schedule_config&, const schedule_config&) = default;
};

/// A log filter on one chain (docs/protocol.md §4). `topic_filters[i]` filters the i-th indexed parameter:
/// empty matches anything (null on the wire), one topic matches it, several match any of them.
struct chain_event_config {
  std::string chain;  // "ethereum", "svc", "arbitrum", "bsc", "polygon"
  address contract{};
  std::string event;  // "Transfer(address indexed from, address indexed to, uint256 value)"
  std::optional<uint64_t> start_block;
  std::vector<std::vector<hash256>> topic_filters;
  std::optional<uint32_t> confirmations;
  friend bool operator==(const chain_event_config&, const chain_event_config&) = default;
};

using trigger_config = std::variant<webhook_config, schedule_config, chain_event_config>;

[[nodiscard]] trigger_type type_of(const trigger_config& c) noexcept;

// --- triggers and runs ---------------------------------------------------------------------------

struct trigger {
  std::string id;  // "trg_" + 32 hex digits
  trigger_type type = trigger_type::webhook;
  std::string name;
  bool enabled = true;
  std::string action_ipfs_cid;
  std::optional<address> pkp_id;
  hash256 usage_api_key_hash{};  // keccak256 of the usage key's text
  /// Firings accepted per calendar minute, and runs waiting or running at once (docs/protocol.md §4);
  /// a firing over either is refused (webhook: 429) or recorded as a failed run (rate_limited).
  uint32_t max_runs_per_minute = 60;
  uint32_t max_queued_runs = 100;
  trigger_config config;
  std::string created_at;  // RFC 3339 UTC
  std::string updated_at;
  std::string webhook_url;  // webhook triggers only; empty otherwise
};

struct run_error {
  std::string code;
  std::string message;
  std::string stack;  // the JavaScript stack when the action threw; empty otherwise
};

struct run {
  std::string id;  // "run_…"
  std::string trigger_id;
  run_status status = run_status::queued;
  uint64_t attempts = 0;
  json::value params;              // what the action saw as `params`
  json::value response;            // success: the action's output; null otherwise
  std::optional<run_error> error;  // failed only
  std::string queued_at;
  std::string started_at;   // empty until the first attempt
  std::string finished_at;  // empty until success or failed
  [[nodiscard]] bool finished() const noexcept { return status == run_status::success || status == run_status::failed; }
};

// --- JSON ----------------------------------------------------------------------------------------

void tag_invoke(json::value_from_tag, json::value& v, const webhook_config& c);
void tag_invoke(json::value_from_tag, json::value& v, const schedule_config& c);
/// `contract` in EIP-55 form, a topic filter of one topic as a string, of several as an array.
void tag_invoke(json::value_from_tag, json::value& v, const chain_event_config& c);
void tag_invoke(json::value_from_tag, json::value& v, const trigger& t);
/// `response` only for a successful run; `started_at` and `finished_at` only when set.
void tag_invoke(json::value_from_tag, json::value& v, const run& r);

/// The config of a trigger of type `t`; a `start_block` may also be a 0x quantity.
[[nodiscard]] result<trigger_config> read_config(trigger_type t, const json::value& v);
/// A trigger as the service answers it; `max_runs_per_minute` and `max_queued_runs` absent (a
/// service older than the run limits) read as the defaults.
[[nodiscard]] result<trigger> read_trigger(const json::value& v);
[[nodiscard]] result<run> read_run(const json::value& v);

schedule_config tag_invoke(json::value_to_tag<schedule_config>, const json::value& v);
chain_event_config tag_invoke(json::value_to_tag<chain_event_config>, const json::value& v);
trigger tag_invoke(json::value_to_tag<trigger>, const json::value& v);
run tag_invoke(json::value_to_tag<run>, const json::value& v);

}  // namespace enact::api
