// SPDX-License-Identifier: Apache-2.0
// `enact::client::trigger_client`: the typed client of the trigger service (docs/protocol.md §4,
// docs/triggers.md) — the management API under `/api` (triggers, their runs, who the token belongs
// to), the public webhook intake `/webhook/<id>`, and the approval handshake that obtains a token
// (`/auth/authorize`, `/auth/token`). One method per endpoint; each sends one request (GETs may be
// retried, see options.hpp) and returns the decoded answer or throws `enact::api_error` (the
// server's `{"error": {code, message}}` of docs/protocol.md §0, or a transport code).
//
// Credentials: the bearer token is a `Secret` holding its base64url text (43 characters), sent as
// `Authorization: Bearer`. A trigger's usage key (a core usage key, docs/protocol.md §1) is write-only: it
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

#include "enact/api/triggers.hpp"
#include "enact/bytes.hpp"
#include "enact/client/api_error.hpp"
#include "enact/client/options.hpp"
#include "enact/secret.hpp"

namespace enact::client {

// --- triggers, runs and the requests: the wire model of enact/api/triggers.hpp -----------------

using api::chain_event_config;
using api::listing;
using api::name;
using api::new_trigger;
using api::run;
using api::run_error;
using api::run_status;
using api::schedule_config;
using api::token_info;
using api::trigger;
using api::trigger_config;
using api::trigger_patch;
using api::trigger_type;
using api::trigger_type_from_name;
using api::type_of;
using api::webhook_config;

/// A request for `POST /webhook/<id>`: any body, sent as is.
struct webhook_request {
  std::string body;
  std::string content_type = "application/json";
  /// Further headers the action sees (e.g. a signature); names as the sender spells them.
  std::vector<std::pair<std::string, std::string>> headers;
};

// --- the token handshake (docs/protocol.md §4) -------------------------------------------------------------

/// A handshake in progress: show `authorize_url` to the user, then poll with finish_login.
struct pending_login {
  std::string authorize_url;  // <base>/auth/authorize?challenge=…&client=…
  std::string challenge;      // base64url(crypto::sha256(token bytes))
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
