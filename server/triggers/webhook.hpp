// SPDX-License-Identifier: Apache-2.0
// What a webhook's action sees (docs/protocol.md §4 "Params"):
//   {"event": <parsed JSON body, or the text of a non-JSON body>,
//    "event_raw": "<the exact body>", ["event_raw_encoding": "base64",]
//    "headers": {<lowercased name>: <value>}}
// - event_raw is the body exactly as received: as a UTF-8 string when the bytes are valid UTF-8,
//   otherwise base64 (standard alphabet) with "event_raw_encoding": "base64". A body that is not
//   UTF-8 has no text form, so its event is null.
// - event is the parsed JSON when the body parses as JSON and its Content-Type is not text/*;
//   otherwise the body text (a JSON-looking text/plain body stays text). Nesting is limited so
//   that the params still parse wherever the run is sent (see kMaxEventDepth).
// - headers: names lowercased; values of repeated names joined with ", " (RFC 9110 §5.3);
//   credentials stripped (authorization, cookie, set-cookie, x-api-key, proxy-authorization, and
//   x-wallet-auth, the core's wallet-signed credential, which a sender may replay), and
//   the connection details the HTTP library adds as pseudo-headers (remote_addr, …). Everything
//   else passes through, notably signature headers (x-hub-signature-256, stripe-signature, …) so
//   the action can verify its sender.
#pragma once

#include <boost/json.hpp>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace enact::triggers {

/// Bodies over this answer 413 (docs/protocol.md §4).
inline constexpr size_t kMaxWebhookBody = size_t{1} << 20;

/// Deepest JSON event kept as JSON: the run request wraps it in two more levels
/// ({"params": {"event": …}}), and JSON parsers on the way stop at 32.
inline constexpr unsigned kMaxEventDepth = 28;

/// Longest config.dedup_header, and longest de-duplication value kept (a longer value is
/// refused with 400: a delivery id is short).
inline constexpr size_t kMaxDedupHeaderName = 128;
inline constexpr size_t kMaxDedupValue = 512;

/// Header names never passed to the action (lowercase).
inline constexpr std::string_view kStrippedHeaders[] = {"authorization", "cookie", "set-cookie", "x-api-key",
                                                        "proxy-authorization", "x-wallet-auth",
                                                        // added by cpp-httplib, not sent by the client
                                                        "remote_addr", "remote_port", "local_addr", "local_port"};

/// The core's body limit of POST /core/v1/run_action: 256 KiB of code and 64 KiB besides
/// (docs/triggers.md "Webhooks"). It is the route's own, not limits.max_body_bytes.
inline constexpr size_t kCoreRunRequestLimit = (size_t{256} << 10) + (size_t{64} << 10);

/// What a run request to the core adds to its params at most: the field names, the action's CID
/// and the PKP id.
inline constexpr size_t kRunRequestOverhead = 1024;

/// The largest body of the run request (POST /core/v1/run_action) that carries `params`: the
/// params serialized as the core client sends them, plus kRunRequestOverhead. A webhook whose
/// run request would exceed the core's body limit is refused at intake (docs/triggers.md
/// "Webhooks"), since the core would refuse every attempt of its run.
[[nodiscard]] size_t run_request_bytes(const boost::json::object& params);

[[nodiscard]] boost::json::object webhook_params(std::string_view body, std::string_view content_type,
                                                 const std::vector<std::pair<std::string, std::string>>& headers);

}  // namespace enact::triggers
