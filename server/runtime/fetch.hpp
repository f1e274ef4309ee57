// SPDX-License-Identifier: Apache-2.0
// Enact.fetch on the server's side (docs/architecture.md §4 "Action runtime"; docs/actions.md
// "Fetching from the outside world"). The action's worker has no network: its `fetch` call
// reaches the pool as the capability call "fetch" with {url, init}, and a `fetch_session` of the
// run makes the request from the server process under the egress policy (egress.hpp):
//
//   - the URL checked (https, allow-list, no credentials), the host resolved once, every address
//     checked, and the connection made to a checked address while the Host header and TLS's
//     server name (and certificate check, against the system's CAs) stay the URL's host;
//   - at most kMaxRedirects redirects, each checked the same way before anything connects; a
//     redirect to another origin drops the action's Authorization and Cookie headers;
//   - per run: at most `max_fetches` fetches, `max_response_bytes` of response bodies in all,
//     each fetch at most `timeout` and never past the run's wall time (capability_handler::
//     on_start gives the deadline);
//   - each fetch logged (method, URL without its query, status, sizes, time, header names, or
//     why it was refused), never a body or a header's value;
//   - every refusal and failure an Error the action can catch, its message starting "fetch: ".
//
// The answer to the worker is {status, ok, url, headers, body}: the body as text (bytes that are
// not UTF-8 become U+FFFD), the headers an object of lower-case names (repeated ones joined with
// ", "). The worker turns it into the response object (status, ok, url, headers, text(), json()).
#pragma once

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "enact/result.hpp"
#include "runtime/egress.hpp"
#include "runtime/runtime.hpp"

namespace enact::runtime {

/// Redirects a fetch follows; one more is refused.
inline constexpr size_t kMaxRedirects = 3;

/// The operator's fetch settings (enact-server --fetch-*, docs/configuration.md).
struct fetch_settings {
  egress::policy policy;
  size_t max_fetches = 10;                      // per run; 0: Enact.fetch is refused
  size_t max_response_bytes = size_t{4} << 20;  // per run, all response bodies together
  std::chrono::milliseconds timeout{5000};      // per fetch (redirects included)
  uint64_t price_credits = 0;                   // per fetch made
};

/// Largest max_response_bytes a server accepts: the answers must fit a worker's frame.
inline constexpr size_t kMaxFetchResponseBytes = size_t{8} << 20;

/// The fetches of one run.
class fetch_session {
 public:
  using log_fn = std::function<void(std::string_view message, boost::json::object fields)>;
  /// `resolver` and `settings` must outlive the session; `log` may be empty.
  fetch_session(const fetch_settings& settings, egress::resolver& resolver, log_fn log);

  /// The run's wall time ends at `deadline`: no fetch runs past it.
  void set_deadline(std::chrono::steady_clock::time_point deadline) { deadline_ = deadline; }

  /// Performs the fetch `args` ({url, init}) describes; the error's message is the action's.
  [[nodiscard]] result<boost::json::value> fetch(const boost::json::object& args);

  /// Fetches that went out to a server (charged at price_credits each).
  [[nodiscard]] size_t made() const { return made_; }

 private:
  const fetch_settings& settings_;
  egress::resolver& resolver_;
  log_fn log_;
  std::chrono::steady_clock::time_point deadline_;
  size_t calls_ = 0;
  size_t made_ = 0;
  size_t received_ = 0;
};

/// A capability handler that answers Enact.fetch through `session` and hands every other call to
/// `inner`; it passes the run's deadline on to the session.
class fetching_handler final : public capability_handler {
 public:
  fetching_handler(capability_handler& inner, fetch_session& session) : inner_(inner), session_(session) {}
  void on_start(std::chrono::steady_clock::time_point wall_deadline) override;
  [[nodiscard]] result<boost::json::value> call(std::string_view method, const boost::json::object& args) override;

 private:
  capability_handler& inner_;
  fetch_session& session_;
};

}  // namespace enact::runtime
