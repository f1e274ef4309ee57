// SPDX-License-Identifier: Apache-2.0
// The wire model of the trigger service (docs/protocol.md §4): trigger types and run statuses with their
// wire names, the type-specific trigger configs, a trigger and a run as the service answers them.
// `value_from` writes each as the service does (same members, same order); `value_to` reads one
// and throws `enact::Error` on a bad value, and the `read_*` functions read the same without
// throwing, returning an `enact::error` (api_errc::invalid_request) whose message names the field
// by its path ("config.topic_filters[1][0]: missing 0x prefix").
//
// The requests of the management API (a new trigger, a change to one) and its small answers (who
// a token belongs to, a page of a list, a webhook's receipt) are here too, so the service and its
// client (enact/client/trigger_client.hpp) share them: `value_from` writes a request as the client
// sends it, and `read<new_trigger>` / `read_trigger_patch` read one as the service does, without
// throwing, with the service's words for what is wrong (docs/architecture.md §4 "Trigger service").
// The deployment's own rules (a chain it has an RPC endpoint for, the shortest schedule interval)
// are the service's to check on top.
#pragma once

#include <boost/json/fwd.hpp>
#include <boost/json/value.hpp>
#include <boost/json/value_from.hpp>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "enact/api/read.hpp"
#include "enact/bytes.hpp"
#include "enact/result.hpp"
#include "enact/secret.hpp"

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

/// A webhook trigger's URL is `webhook_url` of the trigger. `dedup_header` names a header its
/// sender sets once per event (a provider's delivery id, such as X-GitHub-Delivery): a second
/// delivery with the same value answers the first run's id and queues no run (docs/triggers.md
/// "Webhooks"). Compared case-insensitively; never a credential header.
struct webhook_config {
  std::optional<std::string> dedup_header;
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
/// The JSON of a config of any type (as the `value_from` of its alternative writes it).
[[nodiscard]] json::value config_json(const trigger_config& c);

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
  /// Why the service disabled the trigger (a schedule whose runs failed in a row for lack of
  /// credits, docs/protocol.md §4 "Limits"); absent (null on the wire, or left out) otherwise, and
  /// cleared when the owner enables it again.
  std::optional<std::string> disabled_reason;
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

// --- requests and small answers ------------------------------------------------------------------

/// `POST /api/triggers`: a new trigger, of the type of its config.
struct new_trigger {
  std::string name;  // 1 to 256 bytes
  bool enabled = true;
  std::string action_ipfs_cid;
  std::optional<address> pkp_id;
  Secret usage_api_key;  // the core usage key's base64 text, exactly as issued
  trigger_config config;
  /// Absent: the service's defaults (60 and 100).
  std::optional<uint32_t> max_runs_per_minute;
  std::optional<uint32_t> max_queued_runs;
};

/// `PATCH /api/triggers/<id>`: each field that is set replaces the trigger's.
struct trigger_patch {
  std::optional<std::string> name;
  std::optional<bool> enabled;
  std::optional<trigger_config> config;  // of the trigger's own type
  std::optional<std::string> action_ipfs_cid;
  /// Set to `std::optional<address>{}` to clear the PKP.
  std::optional<std::optional<address>> pkp_id;
  std::optional<Secret> usage_api_key;
  std::optional<uint32_t> max_runs_per_minute;
  std::optional<uint32_t> max_queued_runs;
};

/// A list answer of the trigger service: `{"items", "total"}` (limit/offset paging).
template <class T>
struct listing {
  std::vector<T> items;
  uint64_t total = 0;
};

/// What `GET /api/me` answers: whose token this is and until when it is accepted.
struct token_info {
  std::string user_id;
  std::string token_expires_at;  // RFC 3339 UTC
};

/// What `POST /webhook/<id>` answers (202) once the run is durably queued.
struct webhook_receipt {
  std::string run_id;
};

// The token handshake (docs/protocol.md §4): the client's poll for the token it drew, and the tokens of a
// user as the service lists them (never a token itself, only its id: base64url of its SHA-256).

/// `POST /auth/token`: the challenge (base64url of the token's SHA-256) and the token's text.
struct token_request {
  std::string challenge;
  Secret token;
};

/// What `POST /auth/token` answers once the user approved and the token is issued.
struct issued_token {
  std::string token_type = "bearer";
  std::string user_id;
  std::string expires_at;  // RFC 3339 UTC
  std::string client_name;
};

/// One unrevoked, unexpired token of the caller, as `GET /auth/tokens` lists it.
struct token_summary {
  std::string id;  // base64url of the token's SHA-256: `DELETE /auth/tokens/<id>` revokes it
  std::string client_name;
  std::string created_at;  // RFC 3339 UTC
  std::string expires_at;
};

// The approval page's calls (same origin, cookie session): a sign-in nonce, sign-in with an
// EIP-4361 message, who is signed in, and the user's decision on a token request.

/// `GET /auth/nonce`: the single-use nonce the sign-in message must carry.
struct sign_in_nonce {
  std::string nonce;
  std::string expires_at;  // RFC 3339 UTC
};

/// `POST /auth/sign-in`: an EIP-4361 message and its EIP-191 signature (0x + 130 hex digits).
struct sign_in_request {
  std::string message;
  std::string signature;
};

/// What `POST /auth/sign-in` and `GET /auth/session` answer: the signed-in user, or none.
struct session_info {
  std::optional<std::string> user_id;  // null on the wire when no one is signed in
};

/// `POST /auth/approve` and `POST /auth/deny`: the challenge of the token request decided.
struct decision_request {
  std::string challenge;
};

/// What a decision answers: "approved" or "denied".
struct decision {
  std::string status;
};

/// Most bytes of a trigger's name; the largest run limits a request may ask for.
inline constexpr size_t kMaxTriggerName = 256;
inline constexpr uint32_t kMaxRunsPerMinuteLimit = 6000;
inline constexpr uint32_t kMaxQueuedRunsLimit = 10000;
/// Confirmations a chain-event trigger may ask for at most.
inline constexpr uint32_t kMaxConfirmations = 1000;
/// The chains a chain-event trigger may name.
inline constexpr std::array<std::string_view, 5> kChains = {"ethereum", "svc", "arbitrum", "bsc", "polygon"};

/// The `config` of a request for a trigger of type `t` (nullptr: absent, which a webhook or a
/// schedule may be), as the service reads it: unknown fields refused, a schedule's cron parsed
/// and its timezone UTC, a chain-event's chain one of the five, its contract an address, its
/// event a signature with at most 3 indexed parameters, its topic filters no more than those,
/// a start block a non-negative integer or a 0x quantity, confirmations 0 to kMaxConfirmations.
/// Messages name the field as "config.<field>: …".
[[nodiscard]] result<trigger_config> read_request_config(trigger_type t, const json::value* config);

/// The create body: unknown fields refused, `type` one of the three, `name`, `action_ipfs_cid`
/// (a CID that parses) and `usage_api_key` (standard base64 of 32 bytes) required, the run
/// limits from 1 to their largest. The body's copy of the usage key is left to the caller to wipe.
template <>
result<new_trigger> read<new_trigger>(const json::value& body);
/// The poll body: exactly the string fields `challenge` and `token` (an unknown field is named
/// by its first 64 bytes). The body's copy of the token is left to the caller to wipe.
template <>
result<token_request> read<token_request>(const json::value& body);

/// The approval page's bodies, each exactly its string fields, read as the poll body is.
template <>
result<sign_in_request> read<sign_in_request>(const json::value& body);
template <>
result<decision_request> read<decision_request>(const json::value& body);

/// The update body of a trigger of type `t` (whose config it may replace), checked as the create
/// body is.
[[nodiscard]] result<trigger_patch> read_trigger_patch(const json::value& body, trigger_type t);

// --- JSON ----------------------------------------------------------------------------------------

void tag_invoke(json::value_from_tag, json::value& v, const webhook_config& c);
void tag_invoke(json::value_from_tag, json::value& v, const schedule_config& c);
/// `contract` in EIP-55 form, a topic filter of one topic as a string, of several as an array.
void tag_invoke(json::value_from_tag, json::value& v, const chain_event_config& c);
void tag_invoke(json::value_from_tag, json::value& v, const trigger& t);
/// `response` only for a successful run; `started_at` and `finished_at` only when set.
void tag_invoke(json::value_from_tag, json::value& v, const run& r);

/// The request bodies as the client sends them, the usage key's text included (serialise, then
/// wipe the tree); a patch writes only the fields it sets (`pkp_id` null to clear it).
void tag_invoke(json::value_from_tag, json::value& v, const new_trigger& t);
void tag_invoke(json::value_from_tag, json::value& v, const trigger_patch& p);
void tag_invoke(json::value_from_tag, json::value& v, const token_info& t);
void tag_invoke(json::value_from_tag, json::value& v, const webhook_receipt& r);
/// The token's text included (serialise, then wipe the tree).
void tag_invoke(json::value_from_tag, json::value& v, const token_request& r);
void tag_invoke(json::value_from_tag, json::value& v, const issued_token& t);
void tag_invoke(json::value_from_tag, json::value& v, const token_summary& t);
void tag_invoke(json::value_from_tag, json::value& v, const sign_in_nonce& n);
void tag_invoke(json::value_from_tag, json::value& v, const session_info& s);
void tag_invoke(json::value_from_tag, json::value& v, const decision& d);
template <class T>
void tag_invoke(json::value_from_tag, json::value& v, const listing<T>& l) {
  json::array items;
  items.reserve(l.items.size());
  for (const T& i : l.items)
    items.push_back(json::value_from(i));
  v = json::object{{"items", std::move(items)}, {"total", l.total}};
}

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
token_info tag_invoke(json::value_to_tag<token_info>, const json::value& v);
webhook_receipt tag_invoke(json::value_to_tag<webhook_receipt>, const json::value& v);
issued_token tag_invoke(json::value_to_tag<issued_token>, const json::value& v);
token_summary tag_invoke(json::value_to_tag<token_summary>, const json::value& v);

}  // namespace enact::api
