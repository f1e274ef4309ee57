// SPDX-License-Identifier: Apache-2.0
#include "triggers/validate.hpp"

#include <algorithm>
#include <charconv>

#include "enact/client/api_error.hpp"
#include "enact/codec/abi.hpp"
#include "enact/codec/hex.hpp"
#include "enact/address.hpp"

namespace enact::triggers {
namespace {

error invalid(std::string msg) { return fail(api_errc::invalid_request, std::move(msg)); }

result<void> only_keys(const json::object& o, std::initializer_list<std::string_view> keys, std::string_view where) {
  for (const auto& kv : o)
    if (std::find(keys.begin(), keys.end(), std::string_view(kv.key())) == keys.end())
      return invalid(std::string(where) + "." + std::string(kv.key()) + ": unknown field");
  return {};
}

result<std::string> topic(const json::value& v, const std::string& where) {
  if (!v.is_string())
    return invalid(where + ": expected a 32-byte topic (0x + 64 hex digits)");
  auto t = codec::hex::decode_fixed<32>(v.get_string(), where);
  if (!t || !(v.get_string().starts_with("0x") || v.get_string().starts_with("0X")))
    return invalid(where + ": expected a 32-byte topic (0x + 64 hex digits)");
  return codec::hex::encode_prefixed(*t);
}

result<json::object> chain_event_config(const json::object& c, const config_rules& rules) {
  ENACT_TRY_VOID(
      only_keys(c, {"chain", "contract", "event", "start_block", "topic_filters", "confirmations"}, "config"));
  json::object out;
  const auto* chain = c.if_contains("chain");
  if (chain == nullptr || !chain->is_string())
    return invalid("config.chain: required, one of ethereum, svc, arbitrum, bsc, polygon");
  const std::string name(chain->get_string());
  if (std::find(kChains.begin(), kChains.end(), name) == kChains.end())
    return invalid("config.chain: '" + name + "' is not one of ethereum, svc, arbitrum, bsc, polygon");
  if (!rules.chain_rpc.contains(name))
    return invalid("config.chain: this deployment has no RPC endpoint for " + name +
                   " (the operator configures one with --chain-rpc " + name + "=URL)");
  out["chain"] = name;

  const auto* contract = c.if_contains("contract");
  if (contract == nullptr || !contract->is_string())
    return invalid("config.contract: required, a contract address (0x + 40 hex digits)");
  auto addr = parse_address(contract->get_string(), "config.contract");
  if (!addr)
    return invalid(addr.err().message);
  out["contract"] = to_checksum_address(*addr);

  const auto* event = c.if_contains("event");
  if (event == nullptr || !event->is_string())
    return invalid(
        "config.event: required, an event signature such as "
        "\"Transfer(address indexed from, address indexed to, uint256 value)\"");
  auto sig = codec::abi::parse_signature(event->get_string());
  if (!sig)
    return invalid("config.event: " + sig.err().message);
  const auto indexed = static_cast<size_t>(std::count(sig->indexed.begin(), sig->indexed.end(), true));
  if (indexed > 3)
    return invalid("config.event: at most 3 parameters can be indexed");
  out["event"] = event->get_string();

  if (const auto* sb = c.if_contains("start_block")) {
    if (sb->is_int64() && sb->get_int64() >= 0) {
      out["start_block"] = sb->get_int64();
    } else if (sb->is_uint64()) {
      out["start_block"] = sb->get_uint64();
    } else if (sb->is_string()) {
      const auto& s = sb->get_string();
      uint64_t n = 0;
      const bool prefixed = s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
      const auto [end, ec] = prefixed ? std::from_chars(s.data() + 2, s.data() + s.size(), n, 16)
                                      : std::from_chars(s.data(), s.data(), n, 16);
      if (!prefixed || ec != std::errc{} || end != s.data() + s.size())
        return invalid(
            "config.start_block: expected a non-negative integer or a 0x-hex string "
            "of at most 16 digits");
      out["start_block"] = s;
    } else {
      return invalid("config.start_block: expected a non-negative integer or a 0x-hex string");
    }
  }

  if (const auto* tf = c.if_contains("topic_filters")) {
    if (!tf->is_array())
      return invalid("config.topic_filters: expected an array of up to 3 entries");
    const auto& a = tf->get_array();
    if (a.size() > 3)
      return invalid("config.topic_filters: at most 3 entries after topic0 (got " + std::to_string(a.size()) + ")");
    json::array norm;
    for (size_t i = 0; i < a.size(); ++i) {
      const std::string where = "config.topic_filters[" + std::to_string(i) + "]";
      if (a[i].is_null()) {
        norm.emplace_back(nullptr);
        continue;
      }
      if (i >= indexed)
        return invalid(where + ": the event has " + std::to_string(indexed) +
                       " indexed parameters, so this topic never exists; use null");
      if (a[i].is_array()) {
        const auto& alts = a[i].get_array();
        if (alts.empty() || alts.size() > 100)
          return invalid(where + ": expected 1 to 100 alternative topics");
        json::array one;
        for (size_t j = 0; j < alts.size(); ++j) {
          ENACT_TRY(auto t, topic(alts[j], where + "[" + std::to_string(j) + "]"));
          one.emplace_back(t);
        }
        norm.emplace_back(std::move(one));
      } else {
        ENACT_TRY(auto t, topic(a[i], where));
        norm.emplace_back(t);
      }
    }
    out["topic_filters"] = std::move(norm);
  }

  if (const auto* conf = c.if_contains("confirmations")) {
    if (!(conf->is_int64() && conf->get_int64() >= 0 && static_cast<uint64_t>(conf->get_int64()) <= kMaxConfirmations))
      return invalid("config.confirmations: expected an integer from 0 to " + std::to_string(kMaxConfirmations));
    out["confirmations"] = conf->get_int64();
  }
  return out;
}

}  // namespace

result<cron::schedule> parse_schedule(std::string_view expr) {
  auto s = cron::parse(expr);
  if (!s)
    return invalid("config.cron: " + s.err().message);
  const auto gap = cron::min_interval(*s);
  if (gap < kMinScheduleInterval)
    return invalid("config.cron: '" + std::string(expr) + "' fires " + std::to_string(gap.count()) +
                   " s apart at its closest; the minimum interval is " + std::to_string(kMinScheduleInterval.count()) +
                   " s");
  return std::move(*s);
}

result<json::object> validate_config(trigger_type t, const json::value* config, const config_rules& rules) {
  static const json::object empty;
  if (config != nullptr && !config->is_object())
    return invalid("config: expected an object");
  const json::object& c = config != nullptr ? config->get_object() : empty;
  switch (t) {
    case trigger_type::webhook:
      ENACT_TRY_VOID(only_keys(c, {}, "config"));
      return json::object{};
    case trigger_type::schedule: {
      ENACT_TRY_VOID(only_keys(c, {"cron", "timezone"}, "config"));
      const auto* cron = c.if_contains("cron");
      if (cron == nullptr || !cron->is_string())
        return invalid("config.cron: required, a 5-field cron expression or a 6-field one with seconds");
      if (const auto* tz = c.if_contains("timezone"); tz != nullptr && !(tz->is_string() && tz->get_string() == "UTC"))
        return invalid("config.timezone: only \"UTC\" is supported");
      ENACT_TRY_VOID(parse_schedule(cron->get_string()));
      return json::object{{"cron", cron->get_string()}, {"timezone", "UTC"}};
    }
    case trigger_type::chain_event:
      if (config == nullptr)
        return invalid("config: required for a chain-event trigger");
      return chain_event_config(c, rules);
  }
  return invalid("type: unknown");
}

}  // namespace enact::triggers
