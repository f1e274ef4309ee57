// SPDX-License-Identifier: Apache-2.0
// The handlers of the trigger service's routes (docs/protocol.md §4), which api.cpp mounts on the
// request pipeline (http/pipeline.hpp): each takes the request the stages read and checked and
// returns its answer; none writes to the HTTP response.
#pragma once

#include <boost/json.hpp>

#include <string>

#include "enact/result.hpp"
#include "http/pipeline.hpp"
#include "triggers/service_state.hpp"
#include "triggers/tokens.hpp"

namespace httplib {
struct Request;
}

namespace enact::triggers::routes {

using state = service::state;
using answer = http::answer<>;

/// What a handler sees of its request: the service, the HTTP request, the caller (null on the
/// webhook), the path's checked id and the JSON body (null without one; the handler wipes the
/// usage key it carries once read).
struct api_call {
  state& st;
  const httplib::Request& http;
  const token_record* who = nullptr;
  std::string id;
  boost::json::value body = nullptr;
};

/// The path's id of a route, checked for its form: not_found otherwise, as an unknown id.
[[nodiscard]] result<std::string> trigger_id(const httplib::Request& req);
[[nodiscard]] result<std::string> run_id(const httplib::Request& req);
[[nodiscard]] result<std::string> webhook_id(const httplib::Request& req);

answer me(api_call& c);
answer create_trigger(api_call& c);
answer list_triggers(api_call& c);
answer get_trigger(api_call& c);
answer patch_trigger(api_call& c);
answer delete_trigger(api_call& c);
answer list_runs(api_call& c);
answer get_run(api_call& c);
/// POST /webhook/<id>: 202 {"run_id"} once the run is durably queued.
answer webhook(api_call& c);
/// GET /auth/tokens and DELETE /auth/tokens/<id> (docs/triggers.md "Signing in a client").
answer list_tokens(api_call& c);
answer revoke(api_call& c);

}  // namespace enact::triggers::routes
