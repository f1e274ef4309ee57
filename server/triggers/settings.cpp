// SPDX-License-Identifier: Apache-2.0
#include "triggers/settings.hpp"

#include <algorithm>
#include <charconv>

#include "enact/api/errc.hpp"
#include "triggers/pg_store.hpp"
#include "triggers/validate.hpp"

namespace enact::triggers {
namespace {

namespace json = boost::json;

error usage(std::string msg) { return fail(api_errc::invalid_request, std::move(msg)); }

result<std::string> text(const json::value& v, const std::string& what) {
  if (!v.is_string())
    return usage(what + ": expected a string");
  return std::string(v.get_string());
}

result<uint64_t> number(const json::value& v, const std::string& what) {
  if (v.is_int64() && v.get_int64() >= 0)
    return static_cast<uint64_t>(v.get_int64());
  if (v.is_uint64())
    return v.get_uint64();
  if (v.is_string()) {
    uint64_t n = 0;
    const auto& t = v.get_string();
    const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), n);
    if (ec == std::errc{} && end == t.data() + t.size())
      return n;
  }
  return usage(what + ": expected a non-negative integer");
}

result<void> check_url(const std::string& url, const std::string& what) {
  if (!(url.starts_with("http://") || url.starts_with("https://")) || url.size() < 10)
    return usage(what + ": expected an http:// or https:// URL, got '" + url + "'");
  return {};
}

result<void> add_chain(settings& s, const std::string& name, const std::string& url, const std::string& what) {
  if (std::find(kChains.begin(), kChains.end(), name) == kChains.end())
    return usage(what + ": chain '" + name + "' is not one of ethereum, svc, arbitrum, bsc, polygon");
  ENACT_TRY_VOID(check_url(url, what));
  s.chain_rpc[name] = url;
  return {};
}

}  // namespace

std::optional<std::pair<std::string, int>> split_listen(std::string_view v) {
  const auto colon = v.rfind(':');
  if (colon == std::string_view::npos || colon == 0)
    return std::nullopt;
  int port = -1;
  const auto [end, ec] = std::from_chars(v.data() + colon + 1, v.data() + v.size(), port);
  if (ec != std::errc{} || end != v.data() + v.size() || port < 0 || port > 65535)
    return std::nullopt;
  return std::pair{std::string(v.substr(0, colon)), port};
}

std::optional<result<void>> apply_setting(settings& s, std::string_view key, const json::value& v,
                                          const std::string& what) {
  const auto apply = [&]() -> result<void> {
    if (key == "chain_rpc") {
      ENACT_TRY(const auto t, text(v, what));
      const auto eq = t.find('=');
      if (eq == std::string::npos || eq == 0)
        return usage(what + ": expected NAME=URL (e.g. ethereum=https://rpc.example.org)");
      return add_chain(s, t.substr(0, eq), t.substr(eq + 1), what);
    }
    if (key.starts_with("chain_rpc.")) {
      ENACT_TRY(const auto t, text(v, what));
      return add_chain(s, std::string(key.substr(10)), t, what);
    }
    if (key == "chain_confirmations" || key.starts_with("chain_confirmations.")) {
      std::string name;
      json::value n = v;
      if (key == "chain_confirmations") {
        ENACT_TRY(const auto t, text(v, what));
        const auto eq = t.find('=');
        if (eq == std::string::npos || eq == 0)
          return usage(what + ": expected NAME=N (e.g. ethereum=12)");
        name = t.substr(0, eq);
        n = t.substr(eq + 1);
      } else {
        name = std::string(key.substr(20));
      }
      if (std::find(kChains.begin(), kChains.end(), name) == kChains.end())
        return usage(what + ": chain '" + name + "' is not one of ethereum, svc, arbitrum, bsc, polygon");
      ENACT_TRY(const auto c, number(n, what));
      if (c > kMaxConfirmations)
        return usage(what + ": expected 0 to " + std::to_string(kMaxConfirmations));
      s.chain_confirmations[name] = c;
      return {};
    }
    const std::string_view k = key.substr(9);  // after "triggers."
    if (k == "enabled") {
      if (v.is_bool()) {
        s.enabled = v.get_bool();
        return {};
      }
      if (v.is_string() && (v.get_string() == "true" || v.get_string() == "false")) {
        s.enabled = v.get_string() == "true";
        return {};
      }
      return usage(what + ": expected true or false");
    }
    if (k == "listen") {
      ENACT_TRY(s.listen, text(v, what));
      if (!split_listen(s.listen))
        return usage(what + ": expected HOST:PORT (e.g. 127.0.0.1:8081), got '" + s.listen + "'");
      return {};
    }
    if (k == "core_url") {
      ENACT_TRY(s.core_url, text(v, what));
      while (s.core_url.ends_with("/"))
        s.core_url.pop_back();
      return check_url(s.core_url, what);
    }
    if (k == "public_url") {
      ENACT_TRY(s.public_url, text(v, what));
      while (s.public_url.ends_with("/"))
        s.public_url.pop_back();
      return check_url(s.public_url, what);
    }
    if (k == "workers") {
      ENACT_TRY(const auto n, number(v, what));
      if (n > 256)
        return usage(what + ": expected 0 to 256");
      s.workers = static_cast<size_t>(n);
      return {};
    }
    if (k == "retry_base_ms") {
      ENACT_TRY(s.retry_base_ms, number(v, what));
      if (s.retry_base_ms > 600000)
        return usage(what + ": expected at most 600000");
      return {};
    }
    if (k == "run_retention_days") {
      ENACT_TRY(s.run_retention_days, number(v, what));
      if (s.run_retention_days > 36500)
        return usage(what + ": expected 0 to 36500");
      return {};
    }
    if (k == "max_triggers_per_user" || k == "creations_per_minute" || k == "disable_after_credit_failures") {
      ENACT_TRY(const auto n, number(v, what));
      if (n > 1000000)
        return usage(what + ": expected 0 to 1000000");
      (k == "max_triggers_per_user"  ? s.max_triggers_per_user
       : k == "creations_per_minute" ? s.creations_per_minute
                                     : s.disable_after_credit_failures) = n;
      return {};
    }
    if (k == "store_pool") {
      ENACT_TRY(const auto n, number(v, what));
      if (n < 1 || n > 1024)
        return usage(what + ": expected 1 to 1024");
      s.store_pool = static_cast<size_t>(n);
      return {};
    }
    if (k == "core_max_body_bytes") {
      ENACT_TRY(s.core_max_body_bytes, number(v, what));
      if (s.core_max_body_bytes != 0 && s.core_max_body_bytes < 4096)
        return usage(what + ": expected 0 or at least 4096");
      return {};
    }
    if (k == "lease_ms") {
      ENACT_TRY(s.lease_ms, number(v, what));
      if (s.lease_ms < 1000)
        return usage(what + ": expected at least 1000");
      return {};
    }
    if (k == "webhook_requests_per_second" || k == "webhook_burst") {
      ENACT_TRY(const auto n, number(v, what));
      if (n > 1000000)
        return usage(what + ": expected 0 to 1000000");
      if (k == "webhook_burst") {
        if (n == 0)
          return usage(what + ": expected at least 1");
        s.webhook_burst = static_cast<double>(n);
      } else {
        s.webhook_requests_per_second = static_cast<double>(n);
      }
      return {};
    }
    if (k == "chain_poll_ms") {
      ENACT_TRY(const auto ms, number(v, what));
      if (ms < 10 || ms > 600000)
        return usage(what + ": expected 10 to 600000");
      s.chain_poll_ms = ms;
      return {};
    }
    if (k == "store") {
      ENACT_TRY(s.store, text(v, what));
      if (s.store == "sqlite")
        s.store.clear();
      // The value is not echoed: a URL may carry a password.
      if (!s.store.empty() && !is_postgres_url(s.store))
        return usage(what + ": expected sqlite or a postgres:// (postgresql://) connection URL");
      return {};
    }
    if (k == "sync") {
      ENACT_TRY(s.sync, text(v, what));
      if (s.sync != "full" && s.sync != "normal")
        return usage(what + ": expected full or normal");
      return {};
    }
    return usage(what + ": unknown setting");
  };
  if (key != "chain_rpc" && !key.starts_with("chain_rpc.") && key != "chain_confirmations" &&
      !key.starts_with("chain_confirmations.") && !key.starts_with("triggers."))
    return std::nullopt;
  return apply();
}

}  // namespace enact::triggers
