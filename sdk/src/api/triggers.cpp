// SPDX-License-Identifier: Apache-2.0
#include "enact/api/triggers.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <charconv>
#include <limits>
#include <utility>

#include "../client/json_read.hpp"
#include "enact/codec/hex.hpp"
#include "enact/address.hpp"

namespace enact::api {

namespace rd = enact::client::detail::read;

namespace {

constexpr std::pair<trigger_type, std::string_view> kTypes[] = {{trigger_type::webhook, "webhook"},
                                                                {trigger_type::schedule, "schedule"},
                                                                {trigger_type::chain_event, "chain-event"}};
constexpr std::pair<run_status, std::string_view> kStatuses[] = {{run_status::queued, "queued"},
                                                                 {run_status::running, "running"},
                                                                 {run_status::success, "success"},
                                                                 {run_status::failed, "failed"}};

/// The wire name of `e` in `table` (the first entry's for a value outside the enum).
template <class E, size_t N>
std::string_view name_in(const std::pair<E, std::string_view> (&table)[N], E e) noexcept {
  for (const auto& [value, name] : table)
    if (value == e)
      return name;
  return table[0].second;
}

template <class E, size_t N>
std::optional<E> value_in(const std::pair<E, std::string_view> (&table)[N], std::string_view name) noexcept {
  for (const auto& [value, n] : table)
    if (n == name)
      return value;
  return std::nullopt;
}

/// Runs a throwing reader and returns its value or its failure as invalid_request.
template <class F>
auto no_throw(F&& read) -> result<decltype(read())> {
  try {
    return read();
  } catch (const Error& e) {
    return fail(api_errc::invalid_request, e.what());
  }
}

std::vector<hash256> topic_filter_of(const json::value& v, const std::string& what) {
  if (v.is_null())
    return {};
  if (v.is_string())
    return {rd::to_hash(v, what)};
  if (!v.is_array())
    rd::bad(what + ": expected a topic, an array of topics or null");
  std::vector<hash256> out;
  for (size_t i = 0; i < v.get_array().size(); ++i)
    out.push_back(rd::to_hash(v.get_array()[i], what + "[" + std::to_string(i) + "]"));
  return out;
}

schedule_config schedule_of(const json::value& v) {
  const json::object& c = rd::expect_object(v, "config");
  schedule_config s;
  s.cron = rd::get_string(c, "cron");
  if (const std::string tz = rd::get_text(c, "timezone"); !tz.empty())
    s.timezone = tz;
  return s;
}

chain_event_config chain_event_of(const json::value& v) {
  const json::object& c = rd::expect_object(v, "config");
  chain_event_config e;
  e.chain = rd::get_string(c, "chain");
  e.contract = rd::get_address(c, "contract");
  e.event = rd::get_string(c, "event");
  if (const json::value* sb = c.if_contains("start_block"); sb && !sb->is_null()) {
    if (sb->is_string() && codec::hex::detail::has_prefix(sb->get_string())) {
      const std::string_view digits = sb->get_string().subview(2);
      uint64_t n = 0;
      auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n, 16);
      if (digits.empty() || ec != std::errc() || p != digits.data() + digits.size())
        rd::bad("config.start_block: expected a block number");
      e.start_block = n;
    } else {
      e.start_block = rd::to_u64(*sb, "config.start_block");
    }
  }
  if (const json::value* tf = c.if_contains("topic_filters"); tf && !tf->is_null()) {
    if (!tf->is_array())
      rd::bad("config.topic_filters: expected an array");
    for (size_t i = 0; i < tf->get_array().size(); ++i)
      e.topic_filters.push_back(topic_filter_of(tf->get_array()[i], "config.topic_filters[" + std::to_string(i) + "]"));
  }
  if (const json::value* n = c.if_contains("confirmations"); n && !n->is_null())
    e.confirmations = static_cast<uint32_t>(rd::to_u64(*n, "config.confirmations"));
  return e;
}

trigger_config config_of(trigger_type t, const json::value& v) {
  switch (t) {
    case trigger_type::schedule:
      return schedule_of(v);
    case trigger_type::chain_event:
      return chain_event_of(v);
    default: {
      const json::object& c = rd::expect_object(v, "config");
      webhook_config w;
      if (const json::value* h = c.if_contains("dedup_header"); h && !h->is_null())
        w.dedup_header = rd::get_string(c, "dedup_header");
      return w;
    }
  }
}

trigger trigger_of(const json::value& v) {
  const json::object& o = rd::expect_object(v, "trigger");
  trigger t;
  t.id = rd::get_string(o, "id");
  const std::string type = rd::get_string(o, "type");
  const auto tt = trigger_type_from_name(type);
  if (!tt)
    rd::bad("type: unknown trigger type '" + type + "'");
  t.type = *tt;
  t.name = rd::get_text(o, "name");
  t.enabled = rd::get_bool(o, "enabled");
  t.action_ipfs_cid = rd::get_string(o, "action_ipfs_cid");
  if (const json::value* p = o.if_contains("pkp_id"); p && !p->is_null())
    t.pkp_id = rd::to_address(*p, "pkp_id");
  t.usage_api_key_hash = rd::get_hash(o, "usage_api_key_hash");
  // Absent from a service older than the run limits: the defaults of docs/protocol.md §4.
  const auto limit = [&](std::string_view key, uint32_t fallback) -> uint32_t {
    if (!o.contains(key))
      return fallback;
    const uint64_t n = rd::get_u64(o, key);
    if (n == 0 || n > std::numeric_limits<uint32_t>::max())
      rd::bad(std::string(key) + ": expected a positive 32-bit integer");
    return static_cast<uint32_t>(n);
  };
  t.max_runs_per_minute = limit("max_runs_per_minute", 60);
  t.max_queued_runs = limit("max_queued_runs", 100);
  t.config = config_of(t.type, rd::require(o, "config"));
  t.created_at = rd::get_string(o, "created_at");
  t.updated_at = rd::get_string(o, "updated_at");
  t.webhook_url = rd::get_text(o, "webhook_url");
  if (const json::value* r = o.if_contains("disabled_reason"); r && !r->is_null())
    t.disabled_reason = rd::get_string(o, "disabled_reason");
  return t;
}

run run_of(const json::value& v) {
  const json::object& o = rd::expect_object(v, "run");
  run r;
  r.id = rd::get_string(o, "id");
  r.trigger_id = rd::get_string(o, "trigger_id");
  const std::string status = rd::get_string(o, "status");
  const auto s = run_status_from_name(status);
  if (!s)
    rd::bad("status: unknown run status '" + status + "'");
  r.status = *s;
  r.attempts = rd::get_u64(o, "attempts", false);
  if (const json::value* p = o.if_contains("params"))
    r.params = *p;
  if (const json::value* p = o.if_contains("response"))
    r.response = *p;
  if (const json::value* e = o.if_contains("error"); e && !e->is_null()) {
    const json::object& eo = rd::expect_object(*e, "error");
    r.error = run_error{rd::get_string(eo, "code"), rd::get_text(eo, "message"), rd::get_text(eo, "stack")};
  }
  r.queued_at = rd::get_string(o, "queued_at");
  r.started_at = rd::get_text(o, "started_at");
  r.finished_at = rd::get_text(o, "finished_at");
  return r;
}

}  // namespace

// --- names ---------------------------------------------------------------------------------------

std::string_view name(trigger_type t) noexcept { return name_in(kTypes, t); }
std::optional<trigger_type> trigger_type_from_name(std::string_view name) noexcept { return value_in(kTypes, name); }
std::string_view name(run_status s) noexcept { return name_in(kStatuses, s); }
std::optional<run_status> run_status_from_name(std::string_view name) noexcept { return value_in(kStatuses, name); }

trigger_type type_of(const trigger_config& c) noexcept {
  switch (c.index()) {
    case 1:
      return trigger_type::schedule;
    case 2:
      return trigger_type::chain_event;
    default:
      return trigger_type::webhook;
  }
}

json::value config_json(const trigger_config& c) {
  return std::visit([](const auto& cfg) { return json::value_from(cfg); }, c);
}

// --- JSON ----------------------------------------------------------------------------------------

void tag_invoke(json::value_from_tag, json::value& v, const webhook_config& c) {
  json::object o;
  if (c.dedup_header)
    o["dedup_header"] = *c.dedup_header;
  v = std::move(o);
}

void tag_invoke(json::value_from_tag, json::value& v, const schedule_config& c) {
  v = json::object{{"cron", c.cron}, {"timezone", c.timezone}};
}

void tag_invoke(json::value_from_tag, json::value& v, const chain_event_config& c) {
  json::object o{{"chain", c.chain}, {"contract", to_checksum_address(c.contract)}, {"event", c.event}};
  if (c.start_block)
    o["start_block"] = *c.start_block;
  if (!c.topic_filters.empty()) {
    json::array filters;
    for (const auto& f : c.topic_filters) {
      if (f.empty()) {
        filters.emplace_back(nullptr);
      } else if (f.size() == 1) {
        filters.emplace_back(codec::hex::encode_prefixed(f[0]));
      } else {
        json::array any;
        for (const hash256& h : f)
          any.emplace_back(codec::hex::encode_prefixed(h));
        filters.emplace_back(std::move(any));
      }
    }
    o["topic_filters"] = std::move(filters);
  }
  if (c.confirmations)
    o["confirmations"] = *c.confirmations;
  v = std::move(o);
}

void tag_invoke(json::value_from_tag, json::value& v, const trigger& t) {
  json::object o{{"id", t.id},
                 {"type", name(t.type)},
                 {"name", t.name},
                 {"enabled", t.enabled},
                 {"action_ipfs_cid", t.action_ipfs_cid}};
  if (t.pkp_id)
    o["pkp_id"] = to_checksum_address(*t.pkp_id);
  o["usage_api_key_hash"] = codec::hex::encode_prefixed(t.usage_api_key_hash);
  o["max_runs_per_minute"] = t.max_runs_per_minute;
  o["max_queued_runs"] = t.max_queued_runs;
  o["config"] = config_json(t.config);
  o["created_at"] = t.created_at;
  o["updated_at"] = t.updated_at;
  if (!t.webhook_url.empty())
    o["webhook_url"] = t.webhook_url;
  if (t.disabled_reason)
    o["disabled_reason"] = *t.disabled_reason;
  v = std::move(o);
}

void tag_invoke(json::value_from_tag, json::value& v, const run& r) {
  json::object o{{"id", r.id},
                 {"trigger_id", r.trigger_id},
                 {"status", name(r.status)},
                 {"attempts", r.attempts},
                 {"params", r.params}};
  if (r.status == run_status::success)
    o["response"] = r.response;
  if (r.error) {
    json::object e{{"code", r.error->code}, {"message", r.error->message}};
    if (!r.error->stack.empty())
      e["stack"] = r.error->stack;
    o["error"] = std::move(e);
  }
  o["queued_at"] = r.queued_at;
  if (!r.started_at.empty())
    o["started_at"] = r.started_at;
  if (!r.finished_at.empty())
    o["finished_at"] = r.finished_at;
  v = std::move(o);
}

namespace {

/// The fields a create and an update body share, each written when set.
template <class Body>
void write_common(json::object& o, const Body& b) {
  if (b.pkp_id) {
    if constexpr (std::is_same_v<Body, trigger_patch>)
      o["pkp_id"] = *b.pkp_id ? json::value(to_checksum_address(**b.pkp_id)) : json::value(nullptr);
    else
      o["pkp_id"] = to_checksum_address(*b.pkp_id);
  }
  if (b.max_runs_per_minute)
    o["max_runs_per_minute"] = *b.max_runs_per_minute;
  if (b.max_queued_runs)
    o["max_queued_runs"] = *b.max_queued_runs;
}

json::string key_text(const Secret& key) { return json::string(as_chars(key.view())); }

}  // namespace

void tag_invoke(json::value_from_tag, json::value& v, const new_trigger& t) {
  json::object o{{"type", name(type_of(t.config))},
                 {"name", t.name},
                 {"enabled", t.enabled},
                 {"action_ipfs_cid", t.action_ipfs_cid},
                 {"config", config_json(t.config)}};
  write_common(o, t);
  o["usage_api_key"] = key_text(t.usage_api_key);
  v = std::move(o);
}

void tag_invoke(json::value_from_tag, json::value& v, const trigger_patch& p) {
  json::object o;
  if (p.name)
    o["name"] = *p.name;
  if (p.enabled)
    o["enabled"] = *p.enabled;
  if (p.config)
    o["config"] = config_json(*p.config);
  if (p.action_ipfs_cid)
    o["action_ipfs_cid"] = *p.action_ipfs_cid;
  write_common(o, p);
  if (p.usage_api_key)
    o["usage_api_key"] = key_text(*p.usage_api_key);
  v = std::move(o);
}

void tag_invoke(json::value_from_tag, json::value& v, const token_info& t) {
  v = json::object{{"user_id", t.user_id}, {"token_expires_at", t.token_expires_at}};
}

void tag_invoke(json::value_from_tag, json::value& v, const webhook_receipt& r) {
  v = json::object{{"run_id", r.run_id}};
}

void tag_invoke(json::value_from_tag, json::value& v, const token_request& r) {
  v = json::object{{"challenge", r.challenge}, {"token", key_text(r.token)}};
}

void tag_invoke(json::value_from_tag, json::value& v, const issued_token& t) {
  v = json::object{{"token_type", t.token_type},
                   {"user_id", t.user_id},
                   {"expires_at", t.expires_at},
                   {"client_name", t.client_name}};
}

void tag_invoke(json::value_from_tag, json::value& v, const token_summary& t) {
  v = json::object{
      {"id", t.id}, {"client_name", t.client_name}, {"created_at", t.created_at}, {"expires_at", t.expires_at}};
}

void tag_invoke(json::value_from_tag, json::value& v, const sign_in_nonce& n) {
  v = json::object{{"nonce", n.nonce}, {"expires_at", n.expires_at}};
}

void tag_invoke(json::value_from_tag, json::value& v, const session_info& s) {
  v = json::object{{"user_id", s.user_id ? json::value(*s.user_id) : json::value(nullptr)}};
}

void tag_invoke(json::value_from_tag, json::value& v, const decision& d) { v = json::object{{"status", d.status}}; }

result<trigger_config> read_config(trigger_type t, const json::value& v) {
  return no_throw([&] { return config_of(t, v); });
}
result<trigger> read_trigger(const json::value& v) {
  return no_throw([&] { return trigger_of(v); });
}
result<run> read_run(const json::value& v) {
  return no_throw([&] { return run_of(v); });
}

schedule_config tag_invoke(json::value_to_tag<schedule_config>, const json::value& v) { return schedule_of(v); }
chain_event_config tag_invoke(json::value_to_tag<chain_event_config>, const json::value& v) {
  return chain_event_of(v);
}
trigger tag_invoke(json::value_to_tag<trigger>, const json::value& v) { return trigger_of(v); }
run tag_invoke(json::value_to_tag<run>, const json::value& v) { return run_of(v); }

token_info tag_invoke(json::value_to_tag<token_info>, const json::value& v) {
  const json::object& o = rd::expect_object(v, "answer");
  return token_info{rd::get_string(o, "user_id"), rd::get_string(o, "token_expires_at")};
}

issued_token tag_invoke(json::value_to_tag<issued_token>, const json::value& v) {
  const json::object& o = rd::expect_object(v, "answer");
  return issued_token{rd::get_string(o, "token_type"), rd::get_string(o, "user_id"), rd::get_string(o, "expires_at"),
                      rd::get_text(o, "client_name")};
}

token_summary tag_invoke(json::value_to_tag<token_summary>, const json::value& v) {
  const json::object& o = rd::expect_object(v, "token");
  return token_summary{rd::get_string(o, "id"), rd::get_text(o, "client_name"), rd::get_string(o, "created_at"),
                       rd::get_string(o, "expires_at")};
}

webhook_receipt tag_invoke(json::value_to_tag<webhook_receipt>, const json::value& v) {
  return webhook_receipt{rd::get_string(rd::expect_object(v, "answer"), "run_id")};
}

}  // namespace enact::api
