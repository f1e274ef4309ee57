// SPDX-License-Identifier: Apache-2.0
// Request bodies of the trigger service's management API, read without exceptions
// (enact/api/triggers.hpp): a new trigger, a change to one, and the type-specific config of
// either. The messages are the service's answers (docs/triggers.md), so it forwards them as is.
#include <algorithm>
#include <charconv>

#include "enact/address.hpp"
#include "enact/api/triggers.hpp"
#include "enact/codec/abi.hpp"
#include "enact/codec/base64.hpp"
#include "enact/codec/hex.hpp"
#include "enact/cron/cron.hpp"
#include "enact/ipfs/cid.hpp"

namespace enact::api {

namespace {

error invalid(std::string message) { return fail(api_errc::invalid_request, std::move(message)); }

result<void> only_keys(const json::object& o, std::initializer_list<std::string_view> keys, std::string_view where) {
  for (const auto& kv : o)
    if (std::find(keys.begin(), keys.end(), std::string_view(kv.key())) == keys.end())
      return invalid(std::string(where) + "." + std::string(kv.key()) + ": unknown field");
  return {};
}

// --- config ------------------------------------------------------------------------------------

result<hash256> topic(const json::value& v, const std::string& where) {
  const auto bad = [&] {
    return invalid(where + ": expected a 32-byte topic (0x + 64 hex digits)");
  };
  if (!v.is_string() || !codec::hex::detail::has_prefix(v.get_string()))
    return bad();
  auto t = codec::hex::decode_fixed<32>(v.get_string(), where);
  if (!t)
    return bad();
  return *t;
}

result<uint64_t> start_block(const json::value& v) {
  if (v.is_int64() && v.get_int64() >= 0)
    return static_cast<uint64_t>(v.get_int64());
  if (v.is_uint64())
    return v.get_uint64();
  if (!v.is_string())
    return invalid("config.start_block: expected a non-negative integer or a 0x-hex string");
  const json::string& s = v.get_string();
  uint64_t n = 0;
  const bool prefixed = s.size() > 2 && codec::hex::detail::has_prefix(s);
  const auto [end, ec] =
      prefixed ? std::from_chars(s.data() + 2, s.data() + s.size(), n, 16) : std::from_chars(s.data(), s.data(), n, 16);
  if (!prefixed || ec != std::errc{} || end != s.data() + s.size())
    return invalid("config.start_block: expected a non-negative integer or a 0x-hex string of at most 16 digits");
  return n;
}

/// Topic filters of an event with `indexed` indexed parameters: null (any), a topic, or 1 to 100
/// alternatives; a non-null filter past the indexed parameters could never match.
result<std::vector<std::vector<hash256>>> topic_filters(const json::value& v, size_t indexed) {
  if (!v.is_array())
    return invalid("config.topic_filters: expected an array of up to 3 entries");
  const json::array& a = v.get_array();
  if (a.size() > 3)
    return invalid("config.topic_filters: at most 3 entries after topic0 (got " + std::to_string(a.size()) + ")");
  std::vector<std::vector<hash256>> out;
  for (size_t i = 0; i < a.size(); ++i) {
    const std::string where = "config.topic_filters[" + std::to_string(i) + "]";
    std::vector<hash256>& any = out.emplace_back();
    if (a[i].is_null())
      continue;
    if (i >= indexed)
      return invalid(where + ": the event has " + std::to_string(indexed) +
                     " indexed parameters, so this topic never exists; use null");
    if (!a[i].is_array()) {
      ENACT_TRY(const hash256 t, topic(a[i], where));
      any.push_back(t);
      continue;
    }
    const json::array& alts = a[i].get_array();
    if (alts.empty() || alts.size() > 100)
      return invalid(where + ": expected 1 to 100 alternative topics");
    for (size_t j = 0; j < alts.size(); ++j) {
      ENACT_TRY(const hash256 t, topic(alts[j], where + "[" + std::to_string(j) + "]"));
      any.push_back(t);
    }
  }
  return out;
}

result<chain_event_config> chain_event(const json::object& c) {
  ENACT_TRY_VOID(
      only_keys(c, {"chain", "contract", "event", "start_block", "topic_filters", "confirmations"}, "config"));
  chain_event_config out;
  const auto* chain = c.if_contains("chain");
  if (chain == nullptr || !chain->is_string())
    return invalid("config.chain: required, one of ethereum, svc, arbitrum, bsc, polygon");
  out.chain = std::string(chain->get_string());
  if (std::find(kChains.begin(), kChains.end(), out.chain) == kChains.end())
    return invalid("config.chain: '" + out.chain + "' is not one of ethereum, svc, arbitrum, bsc, polygon");

  const auto* contract = c.if_contains("contract");
  if (contract == nullptr || !contract->is_string())
    return invalid("config.contract: required, a contract address (0x + 40 hex digits)");
  auto addr = parse_address(contract->get_string(), "config.contract");
  if (!addr)
    return invalid(addr.err().message);
  out.contract = *addr;

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
  out.event = std::string(event->get_string());

  if (const auto* sb = c.if_contains("start_block")) {
    ENACT_TRY(out.start_block, start_block(*sb));
  }
  if (const auto* tf = c.if_contains("topic_filters")) {
    ENACT_TRY(out.topic_filters, topic_filters(*tf, indexed));
  }
  if (const auto* conf = c.if_contains("confirmations")) {
    // A parsed number below 2^63 is an int64; one built in memory (value_from) may be a uint64.
    const bool ok = (conf->is_int64() && conf->get_int64() >= 0 && conf->get_int64() <= int64_t{kMaxConfirmations}) ||
                    (conf->is_uint64() && conf->get_uint64() <= kMaxConfirmations);
    if (!ok)
      return invalid("config.confirmations: expected an integer from 0 to " + std::to_string(kMaxConfirmations));
    out.confirmations = static_cast<uint32_t>(conf->is_int64() ? conf->get_int64() : conf->get_uint64());
  }
  return out;
}

result<schedule_config> schedule(const json::object& c) {
  ENACT_TRY_VOID(only_keys(c, {"cron", "timezone"}, "config"));
  const auto* expr = c.if_contains("cron");
  if (expr == nullptr || !expr->is_string())
    return invalid("config.cron: required, a 5-field cron expression or a 6-field one with seconds");
  if (const auto* tz = c.if_contains("timezone"); tz != nullptr && !(tz->is_string() && tz->get_string() == "UTC"))
    return invalid("config.timezone: only \"UTC\" is supported");
  if (auto parsed = cron::parse(expr->get_string()); !parsed)
    return invalid("config.cron: " + parsed.err().message);
  return schedule_config{std::string(expr->get_string()), "UTC"};
}

// --- fields of both bodies -----------------------------------------------------------------------

result<std::string> name_of(const json::value& v) {
  if (!v.is_string() || v.get_string().empty() || v.get_string().size() > kMaxTriggerName)
    return invalid("body.name: expected a non-empty string of at most " + std::to_string(kMaxTriggerName) + " bytes");
  return std::string(v.get_string());
}

result<bool> enabled_of(const json::value& v) {
  if (!v.is_bool())
    return invalid("body.enabled: expected true or false");
  return v.get_bool();
}

result<std::string> cid_of(const json::value& v) {
  if (!v.is_string() || v.get_string().size() > 256)
    return invalid("body.action_ipfs_cid: expected a CID string");
  if (auto c = ipfs::parse(v.get_string()); !c)
    return invalid("body.action_ipfs_cid: " + c.err().message);
  return std::string(v.get_string());
}

result<std::optional<address>> pkp_of(const json::value& v) {
  if (v.is_null())
    return std::optional<address>{};
  if (!v.is_string())
    return invalid("body.pkp_id: expected an address (0x + 40 hex digits) or null");
  auto a = parse_address(v.get_string(), "body.pkp_id");
  if (!a)
    return invalid(a.err().message);
  return std::optional<address>(*a);
}

/// max_runs_per_minute / max_queued_runs: an integer from 1 to `max`.
result<uint32_t> limit_of(const json::value& v, std::string_view field, uint32_t max) {
  const bool ok = (v.is_uint64() && v.get_uint64() >= 1 && v.get_uint64() <= max) ||
                  (v.is_int64() && v.get_int64() >= 1 && v.get_int64() <= int64_t{max});
  if (!ok)
    return invalid("body." + std::string(field) + ": expected an integer from 1 to " + std::to_string(max));
  return static_cast<uint32_t>(v.is_uint64() ? v.get_uint64() : static_cast<uint64_t>(v.get_int64()));
}

/// A usage key (docs/protocol.md §1: standard base64 of 32 random bytes), as its text; the decoded bytes
/// are wiped at once.
result<Secret> usage_key_of(const json::value& v) {
  if (!v.is_string())
    return invalid("body.usage_api_key: expected the usage API key (base64 of 32 bytes)");
  const std::string_view key = v.get_string();
  auto raw = codec::base64::decode(key, "body.usage_api_key");
  const bool ok = raw && raw->size() == 32;
  if (raw)
    enact::detail::secure_wipe(raw->data(), raw->size());
  if (!ok)
    return invalid("body.usage_api_key: expected a usage API key (standard base64 of 32 bytes)");
  return Secret(as_bytes(key));
}

/// The fields a create and an update body share, each read when present, in the order the
/// service checks them.
template <class Body>
result<void> read_common(const json::object& o, trigger_type type, Body& out) {
  if (const auto* v = o.if_contains("name")) {
    ENACT_TRY(out.name, name_of(*v));
  }
  if (const auto* v = o.if_contains("enabled")) {
    ENACT_TRY(out.enabled, enabled_of(*v));
  }
  if (const auto* v = o.if_contains("action_ipfs_cid")) {
    ENACT_TRY(out.action_ipfs_cid, cid_of(*v));
  }
  if (const auto* v = o.if_contains("pkp_id")) {
    ENACT_TRY(out.pkp_id, pkp_of(*v));
  }
  if (const auto* v = o.if_contains("config"); v != nullptr || std::is_same_v<Body, new_trigger>) {
    ENACT_TRY(out.config, read_request_config(type, v));
  }
  if (const auto* v = o.if_contains("max_runs_per_minute")) {
    ENACT_TRY(out.max_runs_per_minute, limit_of(*v, "max_runs_per_minute", kMaxRunsPerMinuteLimit));
  }
  if (const auto* v = o.if_contains("max_queued_runs")) {
    ENACT_TRY(out.max_queued_runs, limit_of(*v, "max_queued_runs", kMaxQueuedRunsLimit));
  }
  if (const auto* v = o.if_contains("usage_api_key")) {
    ENACT_TRY(out.usage_api_key, usage_key_of(*v));
  }
  return {};
}

result<const json::object*> object_of(const json::value& body) {
  if (!body.is_object())
    return invalid("body: expected a JSON object");
  return &body.get_object();
}

/// A body of exactly the string fields `keys` (an unknown field named by its first 64 bytes).
result<const json::object*> string_fields(const json::value& body, std::initializer_list<std::string_view> keys) {
  ENACT_TRY(const json::object* o, object_of(body));
  for (const auto& kv : *o)
    if (std::find(keys.begin(), keys.end(), std::string_view(kv.key())) == keys.end())
      return invalid("body." + std::string(kv.key().substr(0, 64)) + ": unknown field");
  for (const std::string_view k : keys)
    if (const auto* f = o->if_contains(k); f == nullptr || !f->is_string())
      return invalid("body." + std::string(k) + ": required, a string");
  return o;
}

}  // namespace

result<trigger_config> read_request_config(trigger_type t, const json::value* config) {
  static const json::object empty;
  if (config != nullptr && !config->is_object())
    return invalid("config: expected an object");
  const json::object& c = config != nullptr ? config->get_object() : empty;
  switch (t) {
    case trigger_type::webhook: {
      ENACT_TRY_VOID(only_keys(c, {"dedup_header"}, "config"));
      webhook_config w;
      if (const json::value* h = c.if_contains("dedup_header"); h && !h->is_null()) {
        if (!h->is_string())
          return invalid("config.dedup_header: expected a header name");
        w.dedup_header = std::string(h->get_string());
      }
      return trigger_config(std::move(w));
    }
    case trigger_type::schedule: {
      ENACT_TRY(schedule_config s, schedule(c));
      return trigger_config(std::move(s));
    }
    case trigger_type::chain_event:
      if (config == nullptr)
        return invalid("config: required for a chain-event trigger");
      ENACT_TRY(chain_event_config e, chain_event(c));
      return trigger_config(std::move(e));
  }
  return invalid("type: unknown");
}

template <>
result<new_trigger> read<new_trigger>(const json::value& body) {
  ENACT_TRY(const json::object* o, object_of(body));
  ENACT_TRY_VOID(only_keys(*o,
                           {"type", "name", "enabled", "action_ipfs_cid", "pkp_id", "usage_api_key", "config",
                            "max_runs_per_minute", "max_queued_runs"},
                           "body"));
  const auto* type_v = o->if_contains("type");
  const auto type =
      type_v != nullptr && type_v->is_string() ? trigger_type_from_name(type_v->get_string()) : std::nullopt;
  if (!type)
    return invalid("body.type: required, one of webhook, schedule, chain-event");
  if (!o->contains("name"))
    return invalid("body.name: required");
  if (!o->contains("action_ipfs_cid"))
    return invalid("body.action_ipfs_cid: required");
  if (!o->contains("usage_api_key"))
    return invalid("body.usage_api_key: required (a usage API key of the core service that may execute the action)");
  new_trigger t;
  ENACT_TRY_VOID(read_common(*o, *type, t));
  return t;
}

template <>
result<token_request> read<token_request>(const json::value& body) {
  ENACT_TRY(const json::object* o, string_fields(body, {"challenge", "token"}));
  return token_request{std::string(o->at("challenge").get_string()),
                       Secret(as_bytes(std::string_view(o->at("token").get_string())))};
}

template <>
result<sign_in_request> read<sign_in_request>(const json::value& body) {
  ENACT_TRY(const json::object* o, string_fields(body, {"message", "signature"}));
  return sign_in_request{std::string(o->at("message").get_string()), std::string(o->at("signature").get_string())};
}

template <>
result<decision_request> read<decision_request>(const json::value& body) {
  ENACT_TRY(const json::object* o, string_fields(body, {"challenge"}));
  return decision_request{std::string(o->at("challenge").get_string())};
}

result<trigger_patch> read_trigger_patch(const json::value& body, trigger_type t) {
  ENACT_TRY(const json::object* o, object_of(body));
  ENACT_TRY_VOID(only_keys(*o,
                           {"name", "enabled", "config", "action_ipfs_cid", "pkp_id", "usage_api_key",
                            "max_runs_per_minute", "max_queued_runs"},
                           "body"));
  trigger_patch p;
  ENACT_TRY_VOID(read_common(*o, t, p));
  return p;
}

}  // namespace enact::api
