// SPDX-License-Identifier: Apache-2.0
// Every setting by its dotted name (apply_setting.hpp); docs/deployment.md lists them and the
// generated config reference proves the list.
#include "app/apply_setting.hpp"

#include <charconv>

#include "app/fetch_config.hpp"
#include "app/flag_table.hpp"
#include "app/http_config.hpp"
#include "app/setting_values.hpp"
#include "core/errors.hpp"
#include "enact/address.hpp"
#include "enact/codec/hex.hpp"

namespace enact::app {
namespace {

namespace json = boost::json;
using setting::boolean;
using setting::number;
using setting::number_in;
using setting::text;
using setting::usage;

result<void> set_listen(settings& s, const std::string& v, const std::string& what) {
  const auto colon = v.rfind(':');
  int port = -1;
  if (colon != std::string::npos) {
    const auto [end, ec] = std::from_chars(v.data() + colon + 1, v.data() + v.size(), port);
    if (ec != std::errc{} || end != v.data() + v.size())
      port = -1;
  }
  if (colon == std::string::npos || colon == 0 || port < 0 || port > 65535)
    return usage(what + ": expected HOST:PORT (e.g. 127.0.0.1:8080), got '" + v + "'");
  s.listen_host = v.substr(0, colon);
  s.listen_port = port;
  return {};
}

}  // namespace

result<void> apply_setting(settings& s, const std::string& key, const json::value& v, const std::string& what) {
  if (key == "listen") {
    ENACT_TRY(auto t, text(v, what));
    return set_listen(s, t, what);
  }
  if (key == "data_dir") {
    ENACT_TRY(s.data_dir, text(v, what));
    return {};
  }
  if (key == "content_store") {
    ENACT_TRY(s.content_store, text(v, what));
    if (s.content_store != "local" && s.content_store != "postgres" && !s.content_store.starts_with("postgres://") &&
        !s.content_store.starts_with("postgresql://"))
      return usage(what + ": expected local, postgres or a postgres://… URL");
    return {};
  }
  if (key == "dev") {
    ENACT_TRY(s.dev, boolean(v, what));
    return {};
  }
  if (key == "log_level") {
    ENACT_TRY(s.log_level, text(v, what));
    if (s.log_level != "debug" && s.log_level != "info" && s.log_level != "warn" && s.log_level != "error")
      return usage(what + ": expected debug, info, warn or error");
    return {};
  }
  if (key == "threads") {
    ENACT_TRY(s.threads, number<int>(v, what));
    return {};
  }
  if (key == "chain.chain_id") {
    ENACT_TRY(s.core.chain_id, number<uint64_t>(v, what));
    s.chain_id_set = true;
    return {};
  }
  if (key == "chain.chain_name") {
    ENACT_TRY(s.core.chain_name, text(v, what));
    return {};
  }
  if (key == "chain.rpc_url") {
    ENACT_TRY(s.rpc_url, text(v, what));
    return {};
  }
  if (key == "ledger.backend") {
    ENACT_TRY(s.ledger, text(v, what));
    if (s.ledger != "embedded" && s.ledger != "evm")
      return usage(what + ": expected embedded or evm");
    return {};
  }
  if (key == "ledger.cache") {
    if (v.is_string() && (v.get_string() == "on" || v.get_string() == "off")) {
      s.ledger_cache = v.get_string() == "on";
      return {};
    }
    auto b = boolean(v, what);
    if (!b)
      return usage(what + ": expected on or off");
    s.ledger_cache = *b;
    return {};
  }
  if (key == "chain.envelope_v1") {
    if (!v.is_string() || (v.get_string() != "accept" && v.get_string() != "refuse"))
      return usage(what + ": expected accept or refuse");
    s.core.accept_envelope_v1 = v.get_string() == "accept";
    return {};
  }
  if (key == "chain.contract_address") {
    ENACT_TRY(auto t, text(v, what));
    auto a = parse_address(t, what);
    if (!a)
      return usage(a.err().message);
    s.core.contract_address = *a;
    return {};
  }
  if (key == "billing.provider") {
    ENACT_TRY(s.billing, text(v, what));
    if (s.billing != "auto" && s.billing != "dev" && s.billing != "stripe" && s.billing != "none")
      return usage(what + ": expected auto, dev, stripe or none");
    return {};
  }
  if (key == "billing.stripe_api_base") {
    ENACT_TRY(s.stripe.api_base, text(v, what));
    return {};
  }
  if (key == "billing.stripe_js_url") {
    ENACT_TRY(auto url, text(v, what));
    if (auto origin = dashboard::stripe_js_origin(url); !origin)
      return usage(what + ": " + origin.err().message);
    s.stripe.js_url = std::move(url);
    return {};
  }
  if (key == "billing.stripe_publishable_key") {
    ENACT_TRY(s.stripe.publishable_key, text(v, what));
    return {};
  }
  if (key == "billing.stripe_secret_key") {
    ENACT_TRY(s.stripe.secret_key, text(v, what));
    return {};
  }
  if (key == "billing.stripe_webhook_secret") {
    ENACT_TRY(s.stripe.webhook_secret, text(v, what));
    return {};
  }
  if (key == "billing.write_surcharge_credits") {
    ENACT_TRY(s.core.write_surcharge_credits, number<uint64_t>(v, what));
    return {};
  }
  if (key == "billing.metering_store") {
    ENACT_TRY(s.metering_store, text(v, what));
    return {};
  }
  if (key == "billing.metering_store_pool") {
    ENACT_TRY(s.metering_store_pool, number_in<size_t>(v, what, 1, 1024));
    return {};
  }
  if (key == "billing.metering_lock_timeout_seconds") {
    ENACT_TRY(const uint64_t seconds, number_in<uint64_t>(v, what, 1, 3600));
    s.metering_lock_timeout_seconds = static_cast<int>(seconds);
    return {};
  }
  if (key == "billing.run_price_credits") {
    ENACT_TRY(s.core.run_price_credits, number<uint64_t>(v, what));
    return {};
  }
  if (key == "sandbox.workers") {
    ENACT_TRY(s.sandbox_workers, number<size_t>(v, what));
    return {};
  }
  if (key == "sandbox.run_timeout_ms") {
    ENACT_TRY(s.run_timeout_ms, number<uint64_t>(v, what));
    if (s.run_timeout_ms == 0)
      return usage(what + ": must be positive");
    return {};
  }
  if (key == "sandbox.run_heap_mib") {
    ENACT_TRY(s.run_heap_mib, number_in<uint64_t>(v, what, 1, 4096));
    return {};
  }
  if (key == "sandbox.action_engine") {
    ENACT_TRY(s.action_engine, text(v, what));
    if (s.action_engine != "spidermonkey" && s.action_engine != "duktape")
      return usage(what + ": expected spidermonkey or duktape");
    return {};
  }
  if (key == "tee.backend") {
    ENACT_TRY(s.tee, text(v, what));
    if (s.tee != "simulated" && s.tee != "dstack")
      return usage(what + ": expected simulated or dstack");
    return {};
  }
  if (key == "tee.dstack_socket") {
    ENACT_TRY(s.dstack_socket, text(v, what));
    return {};
  }
  if (key == "tee.dstack_kms_root_key") {
    ENACT_TRY(s.dstack_kms_root_key, text(v, what));
    std::string_view hex = s.dstack_kms_root_key;
    if (hex.starts_with("0x"))
      hex.remove_prefix(2);
    const auto key_bytes = codec::hex::decode(hex, what);
    if (!key_bytes || key_bytes->size() != 33 || ((*key_bytes)[0] != 2 && (*key_bytes)[0] != 3))
      return usage(what + ": expected the hex of a 33-byte compressed secp256k1 public key (02… or 03…)");
    return {};
  }
  if (key == "tee.allow_unstable_keys") {
    ENACT_TRY(s.tee_allow_unstable_keys, boolean(v, what));
    return {};
  }
  if (key == "tee.evidence_dir") {
    ENACT_TRY(s.evidence_dir, text(v, what));
    return {};
  }
  if (key == "sandbox.unsafe_allow_weak") {
    ENACT_TRY(s.sandbox_allow_weak, boolean(v, what));
    return {};
  }
  if (key == "sandbox.ipfs_gateway") {
    ENACT_TRY(s.core.ipfs_gateway, text(v, what));
    return {};
  }
  if (key == "cors_origins") {
    // A comma-separated string (the flag and its variable) or, in a file, an array of strings.
    std::vector<std::string> items;
    if (v.is_array()) {
      for (const auto& e : v.as_array()) {
        ENACT_TRY(auto t, text(e, what));
        items.push_back(std::move(t));
      }
    } else {
      ENACT_TRY(const auto t, text(v, what));
      for (size_t at = 0; at <= t.size();) {
        const size_t comma = std::min(t.find(',', at), t.size());
        std::string item = t.substr(at, comma - at);
        while (!item.empty() && item.front() == ' ')
          item.erase(item.begin());
        while (!item.empty() && item.back() == ' ')
          item.pop_back();
        if (!item.empty())
          items.push_back(std::move(item));
        at = comma + 1;
      }
    }
    for (const auto& o : items) {
      // An origin is scheme://host[:port] with nothing after it, or "*".
      const size_t scheme = o.find("://");
      if (o != "*" &&
          (scheme == std::string::npos || (o.compare(0, scheme, "http") != 0 && o.compare(0, scheme, "https") != 0) ||
           o.size() == scheme + 3 || o.find('/', scheme + 3) != std::string::npos))
        return usage(what + ": '" + o +
                     "' is not an origin (scheme://host[:port], e.g. https://app.example.org, or *)");
    }
    s.core.cors_origins = std::move(items);
    return {};
  }
  if (key == "limits.account_concurrent_runs") {
    ENACT_TRY(s.account_concurrent_runs, number<size_t>(v, what));
    return {};
  }
  if (key == "limits.account_run_seconds_per_minute") {
    ENACT_TRY(s.account_run_seconds_per_minute, number_in<uint64_t>(v, what, 0, 86400));
    return {};
  }
  if (key == "limits.max_body_bytes") {
    ENACT_TRY(s.core.max_body_bytes, number<size_t>(v, what));
    return {};
  }
  if (key == "limits.key_rate_per_second") {
    ENACT_TRY(auto n, number<uint64_t>(v, what));
    s.core.key_rate_per_second = double(n);
    return {};
  }
  if (key == "limits.key_rate_burst") {
    ENACT_TRY(auto n, number<uint64_t>(v, what));
    s.core.key_rate_burst = double(n);
    return {};
  }
  if (key == "limits.new_accounts_per_ip_per_minute") {
    ENACT_TRY(auto n, number<uint64_t>(v, what));
    s.core.new_account_per_ip_per_minute = double(n);
    return {};
  }
  if (key == "limits.rpc_writes_per_ip_per_minute") {
    ENACT_TRY(auto n, number<uint64_t>(v, what));
    s.core.rpc_writes_per_ip_per_minute = double(n);
    return {};
  }
  if (key == "limits.rpc_calls_per_ip_per_second") {
    ENACT_TRY(auto n, number<uint64_t>(v, what));
    s.core.rpc_calls_per_ip_per_second = double(n);
    return {};
  }
  if (key == "limits.rpc_max_batch") {
    ENACT_TRY(s.core.rpc_max_batch, number_in<size_t>(v, what, 1, 1000));
    return {};
  }
  if (key == "limits.rate_table_entries") {
    ENACT_TRY(s.core.rate_table_entries, number<size_t>(v, what));
    if (s.core.rate_table_entries == 0)
      return usage(what + ": must be positive");
    return {};
  }
  if (key == "limits.upload_quota_bytes") {
    ENACT_TRY(s.core.upload_quota_bytes, number<uint64_t>(v, what));
    return {};
  }
  if (key == "limits.upload_quota_count") {
    ENACT_TRY(s.core.upload_quota_count, number<uint64_t>(v, what));
    return {};
  }
  if (auto r = triggers::apply_setting(s.triggers, key, v, what))
    return *r;
  if (auto r = apply_http_setting(s.http, key, v, what))
    return *r;
  if (auto r = apply_fetch_setting(s.fetch, key, v, what))
    return *r;
  return usage(what + ": unknown setting");
}

}  // namespace enact::app
