// SPDX-License-Identifier: Apache-2.0
// The trigger service's HTTP surface (docs/protocol.md §4) and its assembly. Handlers are thin: they read
// and validate the request, call the store (and the scheduler or the workers), and write the JSON
// of docs/protocol.md §4; errors take the shape of docs/protocol.md §0 through triggers/respond.hpp, and the listener's
// plumbing (request ids, access log, JSON body rules) is the HTTP kit's (http/request.hpp).
#include "triggers/service.hpp"

#include <httplib.h>

#include <algorithm>
#include <charconv>
#include <functional>
#include <type_traits>

#include "enact/client/api_error.hpp"
#include "enact/address.hpp"
#include "enact/crypto/keccak.hpp"
#include "enact/secret.hpp"
#include "http/errors.hpp"
#include "http/log.hpp"
#include "http/rate_limiter.hpp"
#include "http/request.hpp"
#include "triggers/handshake.hpp"
#include "triggers/housekeeping.hpp"
#include "triggers/ids.hpp"
#include "triggers/key_check.hpp"
#include "triggers/respond.hpp"
#include "triggers/seal.hpp"
#include "triggers/tokens.hpp"
#include "triggers/webhook.hpp"

namespace enact::triggers {

struct service::state {
  store& db;
  const tee::tee& tee;
  core::logger& log;
  const clock& clk;
  service_config cfg;
  std::unique_ptr<run_workers> workers;
  std::unique_ptr<scheduler> sched;
  bool stopped = false;
  std::unique_ptr<run_retention> retention;  // with cfg.run_retention set
  /// One bucket per client address over POST /webhook/<id> (service_config).
  std::unique_ptr<http::rate_limiter> webhook_per_ip;
  /// One bucket per user id over trigger creations (service_config::creations_per_minute).
  std::unique_ptr<http::rate_limiter> creations_per_user;
};

namespace {

using steady = std::chrono::steady_clock;
using state = service::state;

constexpr size_t kMaxManagementBody = size_t{1} << 20;
constexpr uint64_t kMaxLimit = 100;

error invalid(std::string msg) { return fail(api_errc::invalid_request, std::move(msg)); }

core::logger::level level_of(severity s) {
  switch (s) {
    case severity::debug:
      return core::logger::level::debug;
    case severity::info:
      return core::logger::level::info;
    case severity::warn:
      return core::logger::level::warn;
    case severity::error:
      return core::logger::level::error;
  }
  return core::logger::level::info;
}

using http::only_query;
using http::send_json;

void send_error(state& st, const httplib::Request& req, httplib::Response& res, const error& e) {
  const http::http_error h = wire_error(e);
  http::send_error(res, h);
  if (is_server_failure(h))
    st.log.error("trigger request failed", {{"method", req.method}, {"path", req.path}, {"detail", e.message}});
}

// --- reading requests --------------------------------------------------------------------------

result<json::value> body_of(const httplib::Request& req) {
  // docs/protocol.md §0: JSON bodies, as the core has them.
  ENACT_TRY(json::object body, http::json_object_body(req, kMaxManagementBody));
  return json::value(std::move(body));
}

/// A request body that carried a usage key: its bytes are wiped once read.
void wipe_body(const httplib::Request& req) {
  auto& body = const_cast<std::string&>(req.body);
  detail::secure_wipe(body.data(), body.size());
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
  ENACT_TRY_VOID(only_query(req, {"limit", "offset"}));
  page p;
  ENACT_TRY(p.limit, query_number(req, "limit", 20, 1, kMaxLimit));
  ENACT_TRY(p.offset, query_number(req, "offset", 0, 0, uint64_t{1} << 53));
  return p;
}

/// A usage key's text checked against the core for `cid` and `pkp` (key_check.hpp): a usage key
/// that may execute `cid` (with `pkp`).
result<void> check_key(state& st, const secret& key, std::string_view cid, const std::optional<address>& pkp) {
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
result<sealed_key> seal_key(state& st, const secret& key) {
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

// --- handlers ----------------------------------------------------------------------------------

struct reply {
  int status = 200;
  json::value body;  // null: no body (204)
};

result<reply> me(state&, const httplib::Request& req, const token_record& who) {
  ENACT_TRY_VOID(only_query(req, {}));
  return reply{200, json::value_from(api::token_info{who.user_id, to_rfc3339(who.expires_at)})};
}

result<reply> create_trigger(state& st, const httplib::Request& req, httplib::Response& res, const token_record& who) {
  ENACT_TRY_VOID(only_query(req, {}));
  ENACT_TRY(json::value body, body_of(req));
  wipe_body(req);
  auto request = api::read<api::new_trigger>(body);
  wipe_key(body);
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
      res.set_header("Retry-After", std::to_string(wait));
      return fail(api_errc::rate_limited, "this user is creating triggers faster than the " +
                                              std::to_string(st.cfg.creations_per_minute) +
                                              " a minute this service allows (triggers.creations_per_minute); "
                                              "retry in " +
                                              std::to_string(wait) + " s");
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
  return reply{201, json::value_from(wire_trigger(made, base_url(st, req)))};
}

result<reply> list_triggers(state& st, const httplib::Request& req, const token_record& who) {
  ENACT_TRY(const page p, read_page(req));
  ENACT_TRY(const auto l, st.db.list_triggers(who.user_id, p));
  const std::string base = base_url(st, req);
  return reply{200, wire_listing(l, [&](const trigger& t) { return wire_trigger(t, base); })};
}

result<std::string> trigger_id_of(const httplib::Request& req) {
  std::string id = req.matches[1];
  if (!is_id(id, "trg_"))
    return fail(api_errc::not_found, "trigger " + id.substr(0, 80) + ": no such trigger");
  return id;
}

result<reply> get_trigger(state& st, const httplib::Request& req, const token_record& who) {
  ENACT_TRY_VOID(only_query(req, {}));
  ENACT_TRY(const std::string id, trigger_id_of(req));
  ENACT_TRY(const trigger t, st.db.get_trigger(who.user_id, id));
  return reply{200, json::value_from(wire_trigger(t, base_url(st, req)))};
}

result<reply> patch_trigger(state& st, const httplib::Request& req, const token_record& who) {
  ENACT_TRY_VOID(only_query(req, {}));
  ENACT_TRY(const std::string id, trigger_id_of(req));
  ENACT_TRY(json::value body, body_of(req));
  wipe_body(req);
  // The body is read at the type of the trigger it changes (its config is of that type).
  auto current = st.db.get_trigger(who.user_id, id);
  auto request = current ? api::read_trigger_patch(body, current->type) : result<api::trigger_patch>(current.err());
  wipe_key(body);
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
  return reply{200, json::value_from(wire_trigger(t, base_url(st, req)))};
}

result<reply> delete_trigger(state& st, const httplib::Request& req, const token_record& who) {
  ENACT_TRY_VOID(only_query(req, {}));
  ENACT_TRY(const std::string id, trigger_id_of(req));
  ENACT_TRY_VOID(st.db.delete_trigger(who.user_id, id));
  st.sched->refresh(id);
  st.log.info("trigger deleted", {{"trigger_id", id}, {"user_id", who.user_id}});
  return reply{204, nullptr};
}

result<reply> list_runs(state& st, const httplib::Request& req, const token_record& who) {
  ENACT_TRY(const std::string id, trigger_id_of(req));
  ENACT_TRY(const page p, read_page(req));
  ENACT_TRY(const auto l, st.db.list_runs(who.user_id, id, p));
  return reply{200, wire_listing(l, wire_run)};
}

result<reply> get_run(state& st, const httplib::Request& req, const token_record& who) {
  ENACT_TRY_VOID(only_query(req, {}));
  const std::string id = req.matches[1];
  if (!is_id(id, "run_"))
    return fail(api_errc::not_found, "run " + id.substr(0, 80) + ": no such run");
  ENACT_TRY(const run r, st.db.get_run(who.user_id, id));
  return reply{200, json::value_from(wire_run(r))};
}

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

/// POST /webhook/<id>: 202 {"run_id"} once the run is durably queued.
result<reply> webhook(state& st, const httplib::Request& req, httplib::Response& res) {
  // The per-address bucket comes first: a flood of one sender costs no store access.
  if (st.webhook_per_ip && st.webhook_per_ip->enabled()) {
    if (const int wait = st.webhook_per_ip->take(req.remote_addr); wait > 0) {
      res.set_header("Retry-After", std::to_string(wait));
      return fail(api_errc::rate_limited,
                  "too many webhook requests from this address; retry in " + std::to_string(wait) + " s");
    }
  }
  const std::string id = req.matches[1];
  if (!is_id(id, "trg_"))
    return fail(api_errc::not_found, "no webhook at this URL");
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
  if (st.log.enabled(core::logger::level::debug)) {
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
        res.set_header("Retry-After", std::to_string(wait));
        return fail(api_errc::rate_limited,
                    std::string(queued.code() == store_errc::rate_limited
                                    ? "this webhook's trigger took its max_runs_per_minute runs in this minute"
                                    : "this webhook's trigger has its max_queued_runs runs waiting") +
                        "; retry in " + std::to_string(wait) + " s");
      }
      default:
        return queued.err();
    }
  }
  // A delivery the trigger's config.dedup_header names as seen before answers its first run:
  // 200, nothing queued (docs/triggers.md "Webhooks").
  if (queued->id != r.id)
    return reply{200, json::value_from(api::webhook_receipt{queued->id})};
  st.workers->notify();
  return reply{202, json::value_from(api::webhook_receipt{queued->id})};
}

void respond(state& st, const httplib::Request& req, httplib::Response& res, result<reply> out) {
  if (!out) {
    send_error(st, req, res, out.err());
    return;
  }
  if (out->body.is_null())
    res.status = out->status;
  else
    send_json(res, out->status, out->body);
}

/// A handler of an /api route behind the bearer token: `h(state, request, who)`, or with the
/// response as well, `h(state, request, response, who)`, for one that sets its own headers.
template <class Handler>
httplib::Server::Handler authed(state& st, Handler h) {
  return [&st, h](const httplib::Request& req, httplib::Response& res) {
    const auto start = steady::now();
    auto who = authenticate(st.db, req.get_header_value("Authorization"), st.clk.now());
    if (!who) {
      respond(st, req, res, who.err());
      return;
    }
    const auto authed_at = steady::now();
    if constexpr (std::is_invocable_v<Handler, state&, const httplib::Request&, httplib::Response&,
                                      const token_record&>)
      respond(st, req, res, h(st, req, res, *who));
    else
      respond(st, req, res, h(st, req, *who));
    if (st.log.enabled(core::logger::level::debug)) {
      using std::chrono::duration_cast;
      using std::chrono::microseconds;
      const auto auth_us = duration_cast<microseconds>(authed_at - start).count();
      const auto handler_us = duration_cast<microseconds>(steady::now() - authed_at).count();
      // The caller by its user id (the token's owner), never the bearer token.
      st.log.debug("trigger api request", {{"method", req.method},
                                           {"route", http::well_formed_utf8(req.path)},
                                           {"user_id", who->user_id},
                                           {"request_bytes", req.body.size()},
                                           {"response_bytes", res.body.size()},
                                           {"status", res.status},
                                           {"auth_us", auth_us},
                                           {"handler_us", handler_us}});
    }
  };
}

}  // namespace

// --- assembly ------------------------------------------------------------------------------------

service::service(std::unique_ptr<state> st) : st_(std::move(st)) {}

service::~service() { stop(); }

result<std::unique_ptr<service>> service::start(store& s, const tee::tee& t, core::logger& log, const clock& c,
                                                service_config cfg) {
  auto st = std::unique_ptr<state>(
      new state{s, t, log, c, std::move(cfg), nullptr, nullptr, false, nullptr, nullptr, nullptr});
  event_sink sink = [&log](severity level, std::string_view msg, json::object fields) {
    log.log(level_of(level), msg, std::move(fields));
  };
  if (st->cfg.release_leases_at_start) {
    ENACT_TRY(const size_t released, s.release_all_leases(c.now(), st->cfg.workers.max_attempts));
    if (released > 0)
      log.warn("runs left running by a stopped process taken back", {{"runs", released}});
  }
  st->webhook_per_ip =
      std::make_unique<http::rate_limiter>(st->cfg.webhook_requests_per_second, std::max(1.0, st->cfg.webhook_burst));
  // A minute's worth at once, then one every 60/N s.
  const auto per_minute = static_cast<double>(st->cfg.creations_per_minute);
  st->creations_per_user = std::make_unique<http::rate_limiter>(per_minute / 60.0, std::max(1.0, per_minute));
  st->workers = std::make_unique<run_workers>(s, t, c, st->cfg.workers, sink);
  run_workers* w = st->workers.get();
  st->sched = std::make_unique<scheduler>(
      s, c, [w] { w->notify(); }, sink);
  ENACT_TRY_VOID(st->sched->load());
  st->sched->start();
  st->workers->start();
  if (st->cfg.run_retention.count() > 0)
    st->retention = std::make_unique<run_retention>(
        s, c, st->cfg.run_retention, st->cfg.retention_period, [&log](const result<size_t>& swept) {
          if (swept)
            log.info("finished runs past the retention deleted", {{"runs", *swept}});
          else
            log.warn("deleting finished runs past the retention", {{"error", swept.err().message}});
        });
  log.info("trigger service started",
           {{"workers", st->cfg.workers.threads},
            {"core_url", st->cfg.workers.core_url},
            {"schedules", st->sched->size()},
            {"run_retention_days", st->cfg.run_retention.count() / 24},
            {"max_triggers_per_user", st->cfg.max_triggers_per_user},
            {"creations_per_minute", st->cfg.creations_per_minute},
            {"disable_after_credit_failures", st->cfg.workers.disable_after_credit_failures}});
  return std::unique_ptr<service>(new service(std::move(st)));
}

void service::stop() {
  if (!st_ || st_->stopped)
    return;
  st_->stopped = true;
  if (st_->retention)
    st_->retention->stop();
  st_->sched->stop();
  st_->workers->stop();
}

scheduler& service::schedules() { return *st_->sched; }

run_workers& service::workers() { return *st_->workers; }

void service::mount(httplib::Server& server, bool own_listener, std::vector<std::string> loopback_authorities) {
  state& st = *st_;
  server.Get("/api/me", authed(st, me));
  server.Post("/api/triggers", authed(st, create_trigger));
  server.Get("/api/triggers", authed(st, list_triggers));
  server.Get(R"(/api/triggers/([^/]+))", authed(st, get_trigger));
  server.Patch(R"(/api/triggers/([^/]+))", authed(st, patch_trigger));
  server.Delete(R"(/api/triggers/([^/]+))", authed(st, delete_trigger));
  server.Get(R"(/api/triggers/([^/]+)/runs)", authed(st, list_runs));
  server.Get(R"(/api/runs/([^/]+))", authed(st, get_run));
  server.Post(R"(/webhook/([^/]+))", [&st](const httplib::Request& req, httplib::Response& res) {
    respond(st, req, res, webhook(st, req, res));
  });
  handshake_config hc;
  hc.public_url = st.cfg.public_url;
  hc.loopback_authorities = std::move(loopback_authorities);
  hc.auth_requests_per_second = st.cfg.auth_requests_per_second;
  hc.auth_burst = st.cfg.auth_burst;
  mount_handshake(server, st.db, st.clk, st.log, std::move(hc));
  if (!own_listener)
    return;

  // What core::mount does for the core's listener: an X-Request-Id on every response and one
  // log line per request (docs/protocol.md §0), JSON errors for whatever no route answered.
  http::listener_options opt;
  opt.close_after_refusal = false;
  opt.name_method_not_allowed = false;
  opt.max_body = std::max(kMaxWebhookBody, kMaxManagementBody) + 1;
  // docs/triggers.md "Serving": the dashboard's page reaches these routes across origins with its
  // bearer token in Authorization, never with cookies; webhooks are called by servers, which send
  // no preflight, so they answer as before whatever the Origin.
  for (const auto& origin : st.cfg.page_origins)
    if (!origin.empty() && origin != "*")
      opt.cors.origins.push_back(origin);
  opt.cors.headers = {"Authorization", "Content-Type"};
  opt.cors.methods = {"GET", "POST", "PATCH", "DELETE"};
  http::serve_requests(server, st.log, opt);
}

}  // namespace enact::triggers
