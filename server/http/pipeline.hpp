// SPDX-License-Identifier: Apache-2.0
// One request pipeline for every listener of the server (docs/architecture.md "The request
// pipeline"): a route table of handlers and an ordered list of stages, each a function of the
// request's exchange, composed the way an Envoy filter chain is. A stage that fails turns the
// exchange into an error answer; the stages after it run only when marked `always` (settling
// money, answering, keeping an Idempotency-Key's answer, the log line), so every request ends in
// exactly one answer and one log line whatever stage stopped it.
#pragma once

#include <boost/json.hpp>

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "enact/result.hpp"
#include "http/errors.hpp"

namespace httplib {
struct Request;
struct Response;
}  // namespace httplib

namespace enact::http {

/// A route's answer when it owes no money.
struct no_charge {};

/// What a handler answers: a value (with its status) or an error (with what docs/protocol.md §0
/// lets an error carry), and the money the handler made owed, which the pipeline's charge stage
/// alone settles. Handlers never write to the HTTP response.
template <class Charge = no_charge>
struct answer {
  result<boost::json::value> value = boost::json::value(nullptr);
  int status = 200;                      // of a value: 200, 201, 202, or 204 with no body
  boost::json::value details = nullptr;  // of an error: its `details`
  int error_status = 0;                  // of an error: a status other than its code's (0: status_of)
  int retry_after = 0;                   // seconds, sent as Retry-After (0: none)
  std::optional<Charge> charge{};        // what the request owes once answered

  answer() = default;
  answer(result<boost::json::value> v) : value(std::move(v)) {}  // NOLINT: handlers return results
  answer(error e) : value(std::move(e)) {}                       // NOLINT
  answer(boost::json::value v) : value(std::move(v)) {}          // NOLINT
  answer(boost::json::value v, int s) : value(std::move(v)), status(s) {}

  [[nodiscard]] bool ok() const { return value.has_value(); }
  /// Replaces the answer by the error `e`, keeping the money owed (the charge stage decides).
  void fail(error e) {
    value = std::move(e);
    details = nullptr;
    error_status = 0;
  }
};

/// The request as it passes the stages: what the stages read from it and the answer they build.
/// A service derives its own (with its caller, its services, its route) from this.
template <class Charge = no_charge>
struct exchange {
  exchange(const httplib::Request& q, httplib::Response& r) : req(q), res(r) {}
  const httplib::Request& req;
  httplib::Response& res;
  std::string request_id;
  answer<Charge> out{};
  /// Answered before the handler (an Idempotency-Key's kept answer): the stages that are not
  /// `always` are skipped, as after a failure.
  bool done = false;
};

/// One stage: `run` may fail the exchange; an `always` stage runs after a failure too.
template <class X>
struct stage {
  std::string_view name;
  result<void> (*run)(X&);
  bool always = false;
};

/// Runs `stages` in order over `x`. A stage's error becomes the exchange's answer (the
/// Retry-After or details a stage set before failing stay with it).
template <class X>
void run_stages(std::span<const stage<X>> stages, X& x) {
  for (const auto& s : stages) {
    if ((!x.out.ok() || x.done) && !s.always)
      continue;
    if (auto r = s.run(x); !r)
      x.out.value = std::move(r).err();
  }
}

/// The request id stage: this request's id (http/request.hpp), on the response as X-Request-Id.
void take_request_id(const httplib::Request& req, httplib::Response& res, std::string& id);

/// The answer stage's work: a value as JSON with its status (204: no body)...
void send_value(httplib::Response& res, int status, const boost::json::value& v);
/// ...or an error's body of docs/protocol.md §0 from its wire form `h`, with the answer's
/// details, its status when not the code's own, and Retry-After.
void send_failure(httplib::Response& res, http_error h, const boost::json::value& details, int status, int retry_after);

}  // namespace enact::http
