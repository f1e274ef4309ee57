// `enact::client::trigger_client`: the typed client of the trigger service (API.md §4,
// docs/triggers.md) — the management API under `/api` (triggers, their runs, who the token belongs
// to), the public webhook intake `/webhook/<id>`, and the approval handshake that obtains a token
// (`/auth/authorize`, `/auth/token`). One method per endpoint; each sends one request (GETs may be
// retried, see options.hpp) and returns the decoded answer or throws `enact::api_error` (the
// server's `{"error": {code, message}}` of API.md §0, or a transport code).
//
// Credentials: the bearer token is a `Secret` holding its base64url text (43 characters), sent as
// `Authorization: Bearer`. A trigger's usage key (a core usage key, API.md §1) is write-only: it
// travels in create and update requests only, answers carry its keccak256 hash. Neither ever
// appears in an exception message.
//
// A client is not for concurrent use: give each thread its own.
#pragma once

#include <boost/json/value.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "enact/bytes.hpp"
#include "enact/client/api_error.hpp"
#include "enact/client/options.hpp"
#include "enact/crypto/secret.hpp"

namespace enact::client {

// --- triggers ------------------------------------------------------------------------------------

enum class trigger_type { webhook, schedule, chain_event };

/// The wire name: "webhook", "schedule", "chain-event".
[[nodiscard]] std::string_view name(trigger_type t) noexcept;
[[nodiscard]] std::optional<trigger_type> trigger_type_from_name(std::string_view name) noexcept;

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

/// A log filter on one chain (API.md §4). `topic_filters[i]` filters the i-th indexed parameter:
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

struct trigger {
  std::string id;  // "trg_" + 32 hex digits
  trigger_type type = trigger_type::webhook;
  std::string name;
  bool enabled = true;
  std::string action_ipfs_cid;
  std::optional<address> pkp_id;
  hash256 usage_api_key_hash{};  // keccak256 of the usage key's text
  /// Firings accepted per calendar minute, and runs waiting or running at once (API.md §4);
  /// a firing over either is refused (webhook: 429) or recorded as a failed run (rate_limited).
  uint32_t max_runs_per_minute = 60;
  uint32_t max_queued_runs = 100;
  trigger_config config;
  std::string created_at;  // RFC 3339 UTC
  std::string updated_at;
  std::string webhook_url;  // webhook triggers only; empty otherwise
};

struct new_trigger {
  std::string name;
  bool enabled = true;
  std::string action_ipfs_cid;
  std::optional<address> pkp_id;
  Secret usage_api_key;  // the core usage key's base64 text, exactly as issued
  trigger_config config;
  /// Absent: the service's defaults (60 and 100).
  std::optional<uint32_t> max_runs_per_minute;
  std::optional<uint32_t> max_queued_runs;
};

/// PATCH fields: an empty optional leaves the field as it is.
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

// --- runs
// ------------------------------------------------------------------------------------------

enum class run_status { queued, running, success, failed };

[[nodiscard]] std::string_view name(run_status s) noexcept;

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
  boost::json::value params;       // what the action saw as `params`
  boost::json::value response;     // success: the action's output; null otherwise
  std::optional<run_error> error;  // failed only
  std::string queued_at;
  std::string started_at;   // empty until the first attempt
  std::string finished_at;  // empty until success or failed
  [[nodiscard]] bool finished() const noexcept { return status == run_status::success || status == run_status::failed; }
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

/// A request for `POST /webhook/<id>`: any body, sent as is.
struct webhook_request {
  std::string body;
  std::string content_type = "application/json";
  /// Further headers the action sees (e.g. a signature); names as the sender spells them.
  std::vector<std::pair<std::string, std::string>> headers;
};

// --- the token handshake (API.md §4) -------------------------------------------------------------

/// A handshake in progress: show `authorize_url` to the user, then poll with finish_login.
struct pending_login {
  std::string authorize_url;  // <base>/auth/authorize?challenge=…&client=…
  std::string challenge;      // base64url(sha256(token bytes))
  Secret token;               // base64url text of the 32 random bytes; never shown
};

struct login_options {
  /// How long to keep polling before giving up (api_error timeout).
  std::chrono::milliseconds timeout{std::chrono::minutes(10)};
  /// Delay between two polls while the answer is `authorization_pending`; a `rate_limited` answer
  /// waits its Retry-After instead when that is longer.
  std::chrono::milliseconds interval{std::chrono::seconds(2)};
};

class trigger_client {
 public:
  /// Throws api_error (invalid_request, status 0) when `options.base_url` is not an http(s) URL
  /// of the accepted form. An empty `token` sends no credential (webhooks, the handshake).
  explicit trigger_client(client_options options, Secret token = {});
  ~trigger_client();
  trigger_client(trigger_client&&) noexcept;
  trigger_client& operator=(trigger_client&&) noexcept;
  trigger_client(const trigger_client&) = delete;
  trigger_client& operator=(const trigger_client&) = delete;

  void set_token(Secret token);
  [[nodiscard]] bool has_token() const noexcept;

  // --- token handshake (auth none)
  // ----------------------------------------------------------------
  /// Draws a token from the CSPRNG and returns the URL the user opens to approve it. Sends
  /// nothing. `client_name` is shown on the approval page.
  [[nodiscard]] pending_login start_login(std::string_view client_name);
  /// Polls `POST /auth/token` until the user approved (the token becomes this client's credential
  /// and is returned) or the server answers anything but `authorization_pending` (thrown: e.g.
  /// denied or expired, with the server's code in code_name()), or `o.timeout` passed (timeout).
  Secret finish_login(const pending_login& login, login_options o = {});

  // --- management API (auth bearer)
  // ---------------------------------------------------------------
  [[nodiscard]] token_info me();
  trigger create(const new_trigger& t);
  /// `limit` 1–100, oldest first.
  [[nodiscard]] listing<trigger> list(uint32_t limit = 20, uint64_t offset = 0);
  [[nodiscard]] trigger get(std::string_view trigger_id);
  trigger update(std::string_view trigger_id, const trigger_patch& patch);
  trigger enable(std::string_view trigger_id);
  trigger disable(std::string_view trigger_id);
  /// Deletes the trigger and its runs.
  void remove(std::string_view trigger_id);
  /// Newest first.
  [[nodiscard]] listing<run> runs(std::string_view trigger_id, uint32_t limit = 20, uint64_t offset = 0);
  [[nodiscard]] run get_run(std::string_view run_id);
  /// Polls the run until it finished (success or failed) and returns it; api_error timeout when
  /// it has not finished within `timeout`.
  run wait_for_run(std::string_view run_id, std::chrono::milliseconds timeout,
                   std::chrono::milliseconds interval = std::chrono::milliseconds(200));

  // --- webhook intake (public)
  // --------------------------------------------------------------------
  /// Posts the body to `/webhook/<id>`; returns the run id once the run is durably queued. Sends
  /// no credential. Never retried (a repeated POST would queue a second run).
  std::string fire_webhook(std::string_view trigger_id, const webhook_request& request);

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace enact::client
