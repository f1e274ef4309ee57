// SPDX-License-Identifier: Apache-2.0
// Enact.fetch's part of enact-server's configuration (docs/configuration.md, docs/actions.md
// "Fetching from the outside world"): the `[fetch]` section of the config file and its flags, and
// the price per fetch. app/config.cpp hands every setting to `apply_fetch_setting`.
#pragma once

#include <boost/json/value.hpp>

#include <optional>
#include <string>
#include <string_view>

#include "enact/result.hpp"
#include "runtime/fetch.hpp"

namespace enact::app {

/// Applies `key` if it is a fetch setting: "fetch.allow_loopback" (true/false), "fetch.allow_hosts"
/// (a comma-separated string, or in a file an array of strings), "fetch.max_per_run",
/// "fetch.max_response_bytes" (at most runtime::kMaxFetchResponseBytes), "fetch.timeout_ms" or
/// "fetch.price_credits". nullopt when `key` is none of these; otherwise the result of
/// applying it (usage errors name `what`).
[[nodiscard]] std::optional<result<void>> apply_fetch_setting(runtime::fetch_settings& s, std::string_view key,
                                                              const boost::json::value& v, const std::string& what);

}  // namespace enact::app
