// SPDX-License-Identifier: Apache-2.0
#include "app/fetch_config.hpp"

#include "app/setting_values.hpp"
#include "core/errors.hpp"
#include "runtime/egress.hpp"

namespace enact::app {
namespace {

namespace json = boost::json;

using setting::boolean;
using setting::number;
using setting::usage;

// Each entry a host name, "*." and a domain, or an IP address.
result<void> set_hosts(runtime::fetch_settings& s, const json::value& v, const std::string& what) {
  std::vector<std::string> items;
  const auto add = [&](std::string_view item) -> result<void> {
    while (!item.empty() && item.front() == ' ')
      item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ')
      item.remove_suffix(1);
    if (item.empty())
      return {};
    const std::string_view bare = item.starts_with("*.") ? item.substr(2) : item;
    const bool v6 = bare.find(':') != std::string_view::npos;
    const runtime::egress::host h = runtime::egress::parse_host(v6 ? "[" + std::string(bare) + "]" : std::string(bare));
    if (h.type == runtime::egress::host::kind::invalid ||
        (item.starts_with("*.") && h.type != runtime::egress::host::kind::name))
      return usage(what + ": '" + std::string(item) + "' is not a host name, *.domain or IP address");
    items.emplace_back(item);
    return {};
  };
  if (v.is_array()) {
    for (const json::value& e : v.get_array()) {
      if (!e.is_string())
        return usage(what + ": expected an array of strings");
      ENACT_TRY_VOID(add(e.get_string()));
    }
  } else if (v.is_string()) {
    const std::string_view t = v.get_string();
    for (size_t at = 0; at <= t.size();) {
      const size_t comma = std::min(t.find(',', at), t.size());
      ENACT_TRY_VOID(add(t.substr(at, comma - at)));
      at = comma + 1;
    }
  } else {
    return usage(what + ": expected a comma-separated string or an array of strings");
  }
  s.policy.allow_hosts = std::move(items);
  return {};
}

}  // namespace

std::optional<result<void>> apply_fetch_setting(runtime::fetch_settings& s, std::string_view key, const json::value& v,
                                                const std::string& what) {
  const auto apply = [&]() -> result<void> {
    if (key == "fetch.allow_loopback") {
      ENACT_TRY(s.policy.allow_loopback, boolean(v, what));
      return {};
    }
    if (key == "fetch.allow_hosts")
      return set_hosts(s, v, what);
    if (key == "fetch.max_per_run") {
      ENACT_TRY(const uint64_t n, number<uint64_t>(v, what));
      if (n > 1000)
        return usage(what + ": expected 0 to 1000");
      s.max_fetches = static_cast<size_t>(n);
      return {};
    }
    if (key == "fetch.max_response_bytes") {
      ENACT_TRY(const uint64_t n, number<uint64_t>(v, what));
      if (n == 0 || n > runtime::kMaxFetchResponseBytes)
        return usage(what + ": expected 1 to " + std::to_string(runtime::kMaxFetchResponseBytes));
      s.max_response_bytes = static_cast<size_t>(n);
      return {};
    }
    if (key == "fetch.timeout_ms") {
      ENACT_TRY(const uint64_t n, number<uint64_t>(v, what));
      if (n == 0 || n > 600000)
        return usage(what + ": expected 1 to 600000");
      s.timeout = std::chrono::milliseconds(n);
      return {};
    }
    // key == "fetch.price_credits"
    ENACT_TRY(s.price_credits, number<uint64_t>(v, what));
    return {};
  };
  if (key != "fetch.allow_loopback" && key != "fetch.allow_hosts" && key != "fetch.max_per_run" &&
      key != "fetch.max_response_bytes" && key != "fetch.timeout_ms" && key != "fetch.price_credits")
    return std::nullopt;
  return apply();
}

}  // namespace enact::app
