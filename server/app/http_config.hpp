// SPDX-License-Identifier: Apache-2.0
// The `[http]` section of enact-server's configuration (docs/configuration.md, docs/protocol.md §6
// "Connections"): the bounds every listener puts on a connection. app/config.cpp hands every
// setting to `apply_http_setting`.
#pragma once

#include <boost/json/value.hpp>

#include <optional>
#include <string>
#include <string_view>

#include "enact/result.hpp"
#include "http/bounded_server.hpp"

namespace enact::app {

/// Applies `key` if it is an http setting: "http.max_header_bytes", "http.max_headers",
/// "http.request_timeout_seconds" or "http.max_connections_per_client". nullopt when `key` is
/// none of these; otherwise the result of applying it (usage errors name `what`).
[[nodiscard]] std::optional<result<void>> apply_http_setting(http::connection_limits& s, std::string_view key,
                                                             const boost::json::value& v, const std::string& what);

}  // namespace enact::app
