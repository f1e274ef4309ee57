// SPDX-License-Identifier: Apache-2.0
// The handlers of the trigger service's routes (triggers/api_handlers.hpp): they read the typed
// request, call the store (and the scheduler or the workers) and answer the wire model of
// enact/api/triggers.hpp (docs/protocol.md §4).
#include "triggers/api_handlers.hpp"

#include <httplib.h>

#include <algorithm>
#include <array>
#include <charconv>

#include "enact/address.hpp"
#include "enact/codec/base64.hpp"
#include "enact/crypto/keccak.hpp"
#include "enact/secret.hpp"
#include "http/errors.hpp"
#include "http/rate_limiter.hpp"
#include "http/request.hpp"
#include "triggers/ids.hpp"
#include "triggers/key_check.hpp"
#include "triggers/respond.hpp"
#include "triggers/seal.hpp"
#include "triggers/tokens.hpp"
#include "triggers/webhook.hpp"

namespace enact::triggers::routes {

namespace {

using steady = std::chrono::steady_clock;

constexpr uint64_t kMaxLimit = 100;

error invalid(std::string msg) { return fail(api_errc::invalid_request, std::move(msg)); }

/// An error answered with Retry-After.
answer refused(int wait, error e) {
  answer a(std::move(e));
  a.retry_after = wait;
  return a;
}

/// Wipes the usage key's text from a parsed body (the request read from it holds its own copy).
void wipe_key(json::value& body) {
  if (auto* o = body.if_object())
    if (auto* k = o->if_contains("usage_api_key"); k && k->is_string())
      detail::secure_wipe(k->get_string().data(), k->get_string().size());
}

result<uint64_t> query_number(const httplib::Request& req, const char* name, uint64_t fallback, uint64_t min,
                              uint64_t max) {
  if (!req.has_param(name))
    return fallback;
  const std::string v = req.get_param_value(name);
  uint64_t n = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (v.empty() || ec != std::errc{} || end != v.data() + v.size() || n < min || n > max)
    return invalid(std::string("query.") + name + ": expected an integer from " + std::to_string(min) + " to " +
                   std::to_string(max));
  return n;
}

result<page> read_page(const httplib::Request& req) {
  ENACT_TRY_VOID(http::only_query(req, {"limit", "offset"}));
  page p;
  ENACT_TRY(p.limit, query_number(req, "limit", 20, 1, kMaxLimit));
  ENACT_TRY(p.offset, query_number(req, "offset", 0, 0, uint64_t{1} << 53));
  return p;
}

/// A usage key's text checked against the core for `cid` and `pkp` (key_check.hpp): a usage key
/// that may execute `cid` (with `pkp`).
result<void> check_key(state& st, const Secret& key, std::string_view cid, const std::optional<address>& pkp) {
  key_check_config kc;
  kc.core_url = st.cfg.workers.core_url;
  kc.timeout = st.cfg.key_check_timeout;
  auto checked = check_trigger_key(kc, key, cid, pkp);
  if (!checked && checked.code() == api_errc::unavailable)
    st.log.warn("usage key check failed: the core is unavailable",
                {{"core_url", kc.core_url}, {"detail", checked.err().message}});
  return checked;
}

struct sealed_key {
  bytes sealed;
  hash256 hash{};
};

/// Seals a usage key (docs/protocol.md §1: 32 random bytes, standard base64, as api::read checked it).
result<sealed_key> seal_key(state& st, const Secret& key) {
  const std::string_view text = as_chars(key.view());
  sealed_key out;
  out.hash = crypto::keccak256(text);
  auto sealed = seal_usage_key(st.tee, text);
  if (!sealed)
    return fail(api_errc::internal, "cannot seal the usage key: " + sealed.err().message);
  out.sealed = std::move(*sealed);
  return out;
}

/// The first fire time of a schedule config after `now`.
result<schedule_state> first_schedule(const api::trigger_config& config, time_point now) {
  ENACT_TRY(const auto s, parse_schedule(std::get<api::schedule_config>(config).cron));
  const auto next = cron::next_after(s, std::chrono::floor<std::chrono::seconds>(now));
  if (!next)
    return invalid("config.cron: the schedule never fires again");
  return schedule_state{time_point(*next), std::nullopt};
}

// --- answers of docs/protocol.md §4: the store's records as the wire model (enact/api/triggers.hpp) ------

std::string base_url(const state& st, const httplib::Request& req) {
  if (!st.cfg.public_url.empty())
    return st.cfg.public_url;
  const std::string host = req.get_header_value("Host");
  return "http://" + (host.empty() ? std::string("localhost") : host);
}

api::trigger wire_trigger(const trigger& t, const std::string& base) {
  api::trigger w;
  w.id = t.id;
  w.type = t.type;
  w.name = t.name;
  w.enabled = t.enabled;
  w.action_ipfs_cid = t.action_cid;
  w.pkp_id = t.pkp_id;
  w.usage_api_key_hash = t.usage_key_hash;
  w.max_runs_per_minute = t.max_runs_per_minute;
  w.max_queued_runs = t.max_queued_runs;
  w.config = t.config;
  w.created_at = to_rfc3339(t.created_at);
  w.updated_at = to_rfc3339(t.updated_at);
  w.disabled_reason = t.disabled_reason;
  if (t.type == trigger_type::webhook)
    w.webhook_url = base + "/webhook/" + t.id;
  return w;
}

api::run wire_run(const run& r) {
  api::run w;
  w.id = r.id;
  w.trigger_id = r.trigger_id;
  w.status = r.status;
  w.attempts = r.attempts;
  w.params = r.params;
  if (r.response)
    w.response = *r.response;
  if (r.error)
    w.error = api::run_error{r.error->code, r.error->message, r.error->stack.value_or("")};
  w.queued_at = to_rfc3339(r.queued_at);
  if (r.started_at)
    w.started_at = to_rfc3339(*r.started_at);
  if (r.finished_at)
    w.finished_at = to_rfc3339(*r.finished_at);
  return w;
}

/// A page of the store as the wire's listing, each item converted by `wire`.
template <class T, class Wire>
json::value wire_listing(const listing<T>& l, Wire wire) {
  api::listing<decltype(wire(l.items.front()))> out;
  out.total = l.total;
  for (const T& item : l.items)
    out.items.push_back(wire(item));
  return json::value_from(out);
}

}  // namespace

// --- handlers ----------------------------------------------------------------------------------

answer me(api_call& c) {
  const token_record& who = *c.who;
  return json::value_from(api::token_info{who.user_id, to_rfc3339(who.expires_at)});
}

answer create_trigger(api_call& c) {
  state& st = c.st;
  const httplib::Request& req = c.http;
  const token_record& who = *c.who;
  auto request = api::read<api::new_trigger>(c.body);
  wipe_key(c.body);
  if (!request)
    return request.err();
  const api::new_trigger& in = *request;
  ENACT_TRY_VOID(check_config(in.config, st.cfg.rules));
  trigger t;
  t.type = api::type_of(in.config);
  t.name = in.name;
  t.enabled = in.enabled;
  t.action_cid = in.action_ipfs_cid;
  t.pkp_id = in.pkp_id;
  t.config = in.config;
  t.max_runs_per_minute = in.max_runs_per_minute.value_or(kDefaultMaxRunsPerMinute);
  t.max_queued_runs = in.max_queued_runs.value_or(kDefaultMaxQueuedRuns);
  // docs/protocol.md §4 "Limits": a well-formed creation takes its user's token before anything
  // that costs (the core's key check, the store); a malformed one was refused above for nothing.
  if (st.creations_per_user->enabled())
    if (const int wait = st.creations_per_user->take(who.user_id); wait > 0) {
      return refused(wait,
                     fail(api_errc::rate_limited, "this user is creating triggers faster than the " +
                                                      std::to_string(st.cfg.creations_per_minute) +
                                                      " a minute this service allows (triggers.creations_per_minute); "
                                                      "retry in " +
                                                      std::to_string(wait) + " s"));
    }
  // Last of the checks (it asks the core): a trigger is stored only with a key that can run it.
  ENACT_TRY_VOID(check_key(st, in.usage_api_key, t.action_cid, t.pkp_id));
  ENACT_TRY(sealed_key k, seal_key(st, in.usage_api_key));
  t.sealed_usage_key = std::move(k.sealed);
  t.usage_key_hash = k.hash;
  t.id = new_trigger_id();
  t.owner = who.user_id;
  t.created_at = t.updated_at = st.clk.now();
  std::optional<schedule_state> first;
  if (t.type == trigger_type::schedule) {
    ENACT_TRY(first, first_schedule(t.config, t.created_at));
  }
  auto created = st.db.create_trigger(t, first, st.cfg.max_triggers_per_user);
  if (!created && created.code() == store_errc::limit_reached)
    return fail(api_errc::forbidden, "this user has " + std::to_string(st.cfg.max_triggers_per_user) +
                                         " triggers, the most this service allows one user "
                                         "(triggers.max_triggers_per_user); delete one to create another");
  ENACT_TRY(const trigger made, std::move(created));
  if (made.type == trigger_type::schedule)
    st.sched->refresh(made.id);
  st.log.info("trigger created", {{"trigger_id", made.id}, {"type", to_string(made.type)}, {"user_id", who.user_id}});
  return answer(json::value_from(wire_trigger(made, base_url(st, req))), 201);
}

answer list_triggers(api_call& c) {
  state& st = c.st;
  const httplib::Request& req = c.http;
  const token_record& who = *c.who;
  ENACT_TRY(const page p, read_page(req));
  ENACT_TRY(const auto l, st.db.list_triggers(who.user_id, p));
  const std::string base = base_url(st, req);
  return wire_listing(l, [&](const trigger& t) { return wire_trigger(t, base); });
}

result<std::string> trigger_id(const httplib::Request& req) {
  std::string id = req.matches[1];
  if (!is_id(id, "trg_"))
    return fail(api_errc::not_found, "trigger " + id.substr(0, 80) + ": no such trigger");
  return id;
}

result<std::string> run_id(const httplib::Request& req) {
  std::string id = req.matches[1];
  if (!is_id(id, "run_"))
    return fail(api_errc::not_found, "run " + id.substr(0, 80) + ": no such run");
  return id;
}

result<std::string> webhook_id(const httplib::Request& req) {
  std::string id = req.matches[1];
  if (!is_id(id, "trg_"))
    return fail(api_errc::not_found, "no webhook at this URL");
  return id;
}

answer get_trigger(api_call& c) {
  state& st = c.st;
  const httplib::Request& req = c.http;
  const token_record& who = *c.who;
  ENACT_TRY(const trigger t, st.db.get_trigger(who.user_id, c.id));
  return json::value_from(wire_trigger(t, base_url(st, req)));
}

answer patch_trigger(api_call& c) {
  state& st = c.st;
  const httplib::Request& req = c.http;
  const token_record& who = *c.who;
  const std::string& id = c.id;
  // The body is read at the type of the trigger it changes (its config is of that type).
  auto current = st.db.get_trigger(who.user_id, id);
  auto request = current ? api::read_trigger_patch(c.body, current->type) : result<api::trigger_patch>(current.err());
  wipe_key(c.body);
  if (!request)
    return request.err();
  const api::trigger_patch& in = *request;
  trigger_patch p;
  p.now = st.clk.now();
  p.name = in.name;
  p.enabled = in.enabled;
  p.action_cid = in.action_ipfs_cid;
  p.pkp_id = in.pkp_id;
  p.config = in.config;
  p.max_runs_per_minute = in.max_runs_per_minute;
  p.max_queued_runs = in.max_queued_runs;
  if (p.config)
    ENACT_TRY_VOID(check_config(*p.config, st.cfg.rules));
  // A new key, action or PKP is checked against the core before it is stored: the key (the new
  // one, or the stored one) must still be a usage key that may run the action with the PKP.
  const std::string& cid = p.action_cid ? *p.action_cid : current->action_cid;
  const std::optional<address>& pkp = p.pkp_id ? *p.pkp_id : current->pkp_id;
  if (in.usage_api_key) {
    ENACT_TRY_VOID(check_key(st, *in.usage_api_key, cid, pkp));
    ENACT_TRY(sealed_key k, seal_key(st, *in.usage_api_key));
    p.sealed_usage_key = std::move(k.sealed);
    p.usage_key_hash = k.hash;
  } else if (p.action_cid || p.pkp_id) {
    auto stored = unseal_usage_key(st.tee, current->sealed_usage_key);
    if (!stored)
      return fail(api_errc::internal, "the trigger's usage key cannot be unsealed by this server's TEE");
    ENACT_TRY_VOID(check_key(st, *stored, cid, pkp));
  }
  // A new cron, or re-enabling, restarts the schedule from now: firings missed while disabled
  // are not made up.
  const bool reenabled = p.enabled && *p.enabled && !current->enabled;
  if (current->type == trigger_type::schedule && (p.config || reenabled)) {
    ENACT_TRY(p.schedule, first_schedule(p.config ? *p.config : current->config, p.now));
  }
  ENACT_TRY(const trigger t, st.db.update_trigger(who.user_id, id, p));
  if (t.type == trigger_type::schedule)
    st.sched->refresh(t.id);
  return json::value_from(wire_trigger(t, base_url(st, req)));
}

answer delete_trigger(api_call& c) {
  state& st = c.st;
  const token_record& who = *c.who;
  ENACT_TRY_VOID(st.db.delete_trigger(who.user_id, c.id));
  st.sched->refresh(c.id);
  st.log.info("trigger deleted", {{"trigger_id", c.id}, {"user_id", who.user_id}});
  return answer(nullptr, 204);
}

answer list_runs(api_call& c) {
  state& st = c.st;
  const httplib::Request& req = c.http;
  const token_record& who = *c.who;
  ENACT_TRY(const page p, read_page(req));
  ENACT_TRY(const auto l, st.db.list_runs(who.user_id, c.id, p));
  return wire_listing(l, wire_run);
}

answer get_run(api_call& c) {
  ENACT_TRY(const run r, c.st.db.get_run(c.who->user_id, c.id));
  return json::value_from(wire_run(r));
}

namespace {

/// The wait a 429 of the webhook names: the rest of the calendar minute for max_runs_per_minute
/// (the store counts runs per minute), a second for max_queued_runs (a worker frees a place as
/// soon as a run ends).
int retry_after_of(const error& e, time_point now) {
  if (e.code == store_errc::rate_limited) {
    const auto next_minute = std::chrono::floor<std::chrono::minutes>(now) + std::chrono::minutes(1);
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(next_minute - now).count();
    return std::max<int>(1, static_cast<int>((ms + 999) / 1000));
  }
  return 1;
}

}  // namespace

answer webhook(api_call& c) {
  state& st = c.st;
  const httplib::Request& req = c.http;
  const std::string& id = c.id;
  if (req.body.size() > kMaxWebhookBody)
    return fail(api_errc::payload_too_large,
                "body: " + std::to_string(req.body.size()) + " bytes, at most " + std::to_string(kMaxWebhookBody));
  std::vector<std::pair<std::string, std::string>> headers(req.headers.begin(), req.headers.end());
  new_run r{new_run_id(), id, webhook_params(req.body, req.get_header_value("Content-Type"), headers), st.clk.now()};
  // The params carry the body twice (event and event_raw): refused now rather than queued for a
  // run the core would refuse on every attempt.
  if (const size_t run_bytes = run_request_bytes(r.params.get_object()); run_bytes > st.cfg.core_max_body)
    return fail(api_errc::payload_too_large, "body: " + std::to_string(req.body.size()) +
                                                 " bytes make a run request of about " + std::to_string(run_bytes) +
                                                 " bytes, over the core's limit of " +
                                                 std::to_string(st.cfg.core_max_body));
  const auto enqueue_start = steady::now();
  auto queued = st.db.enqueue_run(r, trigger_type::webhook);
  if (st.log.enabled(http::logger::level::debug)) {
    const auto enqueue_us =
        std::chrono::duration_cast<std::chrono::microseconds>(steady::now() - enqueue_start).count();
    st.log.debug("webhook intake", {{"trigger_id", id},
                                    {"run_id", queued ? json::value(queued->id) : json::value(nullptr)},
                                    {"body_bytes", req.body.size()},
                                    {"header_count", headers.size()},
                                    {"enqueue_us", enqueue_us},
                                    {"queued", queued.has_value()}});
  }
  if (!queued) {
    switch (static_cast<store_errc>(queued.code().value())) {
      case store_errc::not_found:
      case store_errc::wrong_type:
        return fail(api_errc::not_found, "no webhook at this URL");
      case store_errc::disabled:
        return fail(api_errc::conflict, "this webhook's trigger is disabled");
      case store_errc::rate_limited:
      case store_errc::queue_full: {
        const int wait = retry_after_of(queued.err(), r.queued_at);
        return refused(wait,
                       fail(api_errc::rate_limited,
                            std::string(queued.code() == store_errc::rate_limited
                                            ? "this webhook's trigger took its max_runs_per_minute runs in this minute"
                                            : "this webhook's trigger has its max_queued_runs runs waiting") +
                                "; retry in " + std::to_string(wait) + " s"));
      }
      default:
        return queued.err();
    }
  }
  // A delivery the trigger's config.dedup_header names as seen before answers its first run:
  // 200, nothing queued (docs/triggers.md "Webhooks").
  if (queued->id != r.id)
    return json::value_from(api::webhook_receipt{queued->id});
  st.workers->notify();
  return answer(json::value_from(api::webhook_receipt{queued->id}), 202);
}

answer list_tokens(api_call& c) {
  const token_record& who = *c.who;
  ENACT_TRY(const auto all, c.st.db.list_tokens(who.user_id));
  const time_point now = c.st.clk.now();
  api::listing<api::token_summary> out;
  for (const auto& t : all)
    if (!t.revoked && t.expires_at > now)
      out.items.push_back(
          {codec::base64::encode_url(t.hash), t.client_name, to_rfc3339(t.created_at), to_rfc3339(t.expires_at)});
  out.total = out.items.size();
  return json::value_from(out);
}

answer revoke(api_call& c) {
  const token_record& who = *c.who;
  const std::string& id = c.id;
  auto h = id.size() == 43 ? codec::base64::decode_url(id, "id") : result<bytes>(invalid(""));
  if (!h || h->size() != 32)
    return fail(api_errc::not_found, "no such token");
  hash256 hash{};
  std::copy(h->begin(), h->end(), hash.begin());
  if (auto r = c.st.db.revoke_token(hash, who.user_id); !r) {
    if (r.code() == store_errc::not_found)
      return fail(api_errc::not_found, "no such token");
    return r.err();
  }
  c.st.log.info("token revoked", {{"user_id", who.user_id}});
  return answer(nullptr, 204);
}

}  // namespace enact::triggers::routes
