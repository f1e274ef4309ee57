// SPDX-License-Identifier: Apache-2.0
// Serving the route table over HTTP on the request pipeline (http/pipeline.hpp): the core's
// stages — request id, rate limits, authentication, the schema-checked body, Idempotency-Key,
// the surcharge hold, the handler, the charge, the answer, the kept answer and the log line —
// the same for every route, so handlers only see validated requests from known callers and
// answer through their return value.
#include <httplib.h>

#include <algorithm>
#include <array>
#include <chrono>

#include "core/credits.hpp"
#include "core/envelope_check.hpp"
#include "core/errors.hpp"
#include "core/idempotency.hpp"
#include "core/log.hpp"
#include "core/rate_limiter.hpp"
#include "core/route.hpp"
#include "core/routes_attestation.hpp"
#include "core/schema.hpp"
#include "core/swagger_mount.hpp"
#include "dashboard/dashboard.hpp"
#include "enact/codec/hex.hpp"
#include "enact/crypto/keccak.hpp"
#include "enact/secret.hpp"
#include "enact/eip712/envelope.hpp"
#include "http/pipeline.hpp"
#include "http/request.hpp"

namespace enact::core {
namespace {

using clock = std::chrono::steady_clock;

struct mount_state {
  const services& svc;
  const config& cfg;
  rate_limiter per_key;  // per credential hash, and per admin wallet for X-Wallet-Auth
  rate_limiter per_ip;   // unauthenticated routes that create accounts or mint secrets
  mount_state(const services& s, const config& c)
      : svc(s),
        cfg(c),
        per_key(c.key_rate_per_second,
                c.key_rate_burst > 0 ? std::max(c.key_rate_burst, c.key_rate_per_second) : 2 * c.key_rate_per_second,
                c.rate_table_entries),
        per_ip(c.new_account_per_ip_per_minute / 60.0, std::max(1.0, c.new_account_per_ip_per_minute),
               c.rate_table_entries) {}
};

std::string_view auth_name(auth_kind a) {
  switch (a) {
    case auth_kind::none:
      return "none";
    case auth_kind::key:
      return "key";
    case auth_kind::owner:
      return "owner";
    case auth_kind::billing:
      return "billing";
  }
  return "key";
}

bool is_list(const route& r) {
  const auto* ref = r.response.if_contains("$ref");
  return ref != nullptr && ref->as_string().ends_with("Page");
}

int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

/// The credential of docs/protocol.md §0: X-Api-Key or Authorization: Bearer (equal when both are sent).
result<std::optional<std::string>> credential(const httplib::Request& req) {
  std::optional<std::string> key;
  if (req.has_header("X-Api-Key"))
    key = req.get_header_value("X-Api-Key");
  if (req.has_header("Authorization")) {
    const std::string h = req.get_header_value("Authorization");
    if (!h.starts_with("Bearer "))
      return fail(api_errc::unauthenticated, "Authorization: expected 'Bearer <api key>'");
    std::string bearer = h.substr(7);
    if (key && !constant_time_equal(as_bytes(*key), as_bytes(bearer)))
      return fail(api_errc::invalid_request, "X-Api-Key and Authorization carry different keys; send one");
    key = std::move(bearer);
  }
  if (key && key->empty())
    return fail(api_errc::unauthenticated, "empty API key");
  return key;
}

/// Whether `key` has the form of an issued key: 43 standard-base64 symbols whose last carries no
/// bits beyond the 32 bytes, then one '='. Checked without branching on the symbols.
bool is_key_form(std::string_view key) {
  if (key.size() != 44 || key[43] != '=')
    return false;
  unsigned bad = 0;
  unsigned last = 0;
  for (size_t i = 0; i < 43; ++i) {
    const auto ch = static_cast<unsigned char>(key[i]);
    const unsigned upper = static_cast<unsigned>(ch - 'A') < 26u;
    const unsigned lower = static_cast<unsigned>(ch - 'a') < 26u;
    const unsigned digit = static_cast<unsigned>(ch - '0') < 10u;
    const unsigned plus = ch == '+';
    const unsigned slash = ch == '/';
    bad |= (upper | lower | digit | plus | slash) ^ 1u;
    last = upper * (ch - 'A') + lower * (ch - 'a' + 26) + digit * (ch - '0' + 52) + plus * 62 + slash * 63;
  }
  // 32 bytes are 256 bits; 43 symbols carry 258, so the last symbol's two low bits are zero.
  bad |= last & 3u;
  return bad == 0;
}

result<caller> authenticate(const route& r, mount_state& st, const httplib::Request& req) {
  ENACT_TRY(auto key, credential(req));
  if (!key) {
    if (r.auth == auth_kind::billing && req.has_header("X-Wallet-Auth")) {
      ENACT_TRY(const auto parts, eip712::envelope::decode_wallet_auth(req.get_header_value("X-Wallet-Auth")));
      // docs/protocol.md §2 "Envelope version 2": the header authorizes this request only (its
      // method, its target as sent and its body), on this deployment.
      envelope_binding binding;
      binding.request = eip712::envelope::bind_request(req.method, req.target, req.body);
      ENACT_TRY(const auto checked, check_envelope(st.svc, st.cfg, eip712::envelope::kind::billing_auth,
                                                   std::string_view(parts.first), parts.second, binding));
      const address signer = checked.signer;
      auto account = st.svc.ledger->account_by_admin(signer);
      if (!account)
        return fail(api_errc::unauthenticated, "X-Wallet-Auth: no account has this admin wallet");
      caller c{std::move(*account), scopes::caller{scopes::key_kind::account, {}}, {}, true};
      return c;
    }
    return fail(api_errc::unauthenticated, "missing credential: send X-Api-Key or Authorization: Bearer <api key>");
  }
  // docs/protocol.md §1: every key is 32 bytes from the CSPRNG in standard base64 (44 characters). Any
  // other string is refused before its hash is looked up: the registry cannot tell a key's hash
  // from any other 32 bytes, so without this a string whose keccak256 some account or usage key
  // was registered under — an on-chain account's canonical hash crypto::keccak256(admin address), say —
  // would authenticate as it.
  if (!is_key_form(*key)) {
    detail::secure_wipe(key->data(), key->size());
    return fail(api_errc::unauthenticated, "malformed API key: expected 32 bytes in standard base64 (44 characters)");
  }
  const hash256 h = crypto::keccak256(std::string_view(*key));
  detail::secure_wipe(key->data(), key->size());
  caller c;
  c.key_hash = h;
  if (auto account = st.svc.ledger->get_account(h)) {
    c.account = std::move(*account);
    c.scopes.kind = scopes::key_kind::account;
    // docs/protocol.md §0 401 row: a ChainSecured account has no account-level key, so the former master
    // key of a converted account authorizes nothing — not a write, not a read, not a run.
    if (!c.account.managed)
      return fail(api_errc::unauthenticated,
                  "this account was converted to ChainSecured; its former master key no longer "
                  "authorizes anything (use a usage key, X-Wallet-Auth for billing, or write "
                  "on-chain from the admin wallet)");
  } else if (account.code() != ledger_errc::unknown_account) {
    return account.err();
  } else {
    auto k = st.svc.ledger->find_usage_key(h);
    if (!k) {
      if (k.code() == ledger_errc::unknown_usage_key)
        return fail(api_errc::unauthenticated, "unknown or deleted API key");
      return k.err();
    }
    // Unsigned comparison: an expiration above INT64_MAX is far in the future, not negative.
    if (k->expiration != 0 && k->expiration <= static_cast<uint64_t>(unix_now()))
      return fail(api_errc::unauthenticated, "this usage key expired");
    ENACT_TRY(c.account, st.svc.ledger->get_account(k->account));
    c.scopes = scopes::caller{scopes::key_kind::usage, std::move(k->permissions)};
    c.key_cap = k->balance;
  }
  if (r.auth == auth_kind::owner && c.scopes.kind != scopes::key_kind::account)
    return fail(api_errc::forbidden, "only the account key may call " + std::string(r.path) + "; a usage key may not");
  return c;
}

result<json::value> parse_body(const route& r, const config& cfg, const httplib::Request& req) {
  if (r.method != "GET") {
    ENACT_TRY_VOID(http::check_body_size(req, r.max_body != 0 ? r.max_body : cfg.max_body_bytes));
    // Checked before the query: httplib reads a form-encoded body into the request's parameters.
    ENACT_TRY_VOID(http::check_json_media_type(req));
  }
  // docs/protocol.md §0: unknown request fields are rejected, query parameters included (no POST route
  // declares any), so that a misplaced field is never silently dropped.
  for (const auto& [name, value] : req.params) {
    bool known = is_list(r) && (name == "page_number" || name == "page_size");
    for (const auto& q : r.query)
      known = known || q.name == name;
    if (!known)
      return fail(api_errc::invalid_request, "query." + name + ": unknown parameter");
  }
  if (r.method == "GET")
    return json::value(nullptr);
  ENACT_TRY(json::value body, http::parse_json_body(req));
  ENACT_TRY_VOID(schema::validate(body, r.request, components()));
  return body;
}

/// Key values created by a handler are sent once; the copy in the JSON tree is wiped after.
void wipe_secrets(json::value& v) {
  if (auto* o = v.if_object())
    for (const char* field : {"api_key", "usage_api_key"})
      if (auto* s = o->if_contains(field); s && s->is_string())
        detail::secure_wipe(s->get_string().data(), s->get_string().size());
}

struct core_exchange;
void send(core_exchange& x);

// --- the core's stages (docs/architecture.md "The request pipeline") -----------------------------

/// A /core/v1 request as it passes the stages.
struct core_exchange : http::exchange<charge> {
  const route& r;
  mount_state& st;
  request_context ctx;
  std::optional<idempotent_call> idempotent;  // with an Idempotency-Key (core/idempotency.hpp)
  std::optional<credit_hold> surcharge;       // a relayed ledger write's (core/credits.hpp)
  std::string error_code;                     // of the answer, for the log line
  int64_t auth_us = -1;
  int64_t handler_us = -1;
  core_exchange(const route& route, mount_state& state, const httplib::Request& req, httplib::Response& res)
      : http::exchange<charge>(req, res),
        r(route),
        st(state),
        ctx{.http = req, .svc = state.svc, .cfg = state.cfg, .request_id = {}} {}
};

int64_t us_since(clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::microseconds>(clock::now() - t).count();
}

result<void> request_id(core_exchange& x) {
  http::take_request_id(x.req, x.res, x.request_id);
  x.ctx.request_id = x.request_id;
  return {};
}

/// Public routes that create accounts or mint secrets: one bucket per route and client IP, so
/// minting ChainSecured wallets does not use up the address's account creations.
result<void> per_ip_limit(core_exchange& x) {
  const route& r = x.r;
  if (r.auth != auth_kind::none || (r.path != "/new_account" && !r.per_ip_limited) || !x.st.per_ip.enabled())
    return {};
  const int wait = x.st.per_ip.take(std::string(r.path) + " " + client_of(x.req.remote_addr));
  if (wait == 0)
    return {};
  x.out.retry_after = wait;
  const std::string what = r.path == "/new_account" ? std::string("too many accounts created")
                                                    : "too many " + std::string(r.path) + " requests";
  return fail(api_errc::rate_limited, what + " from this address; retry in " + std::to_string(wait) + " s");
}

result<void> authenticated(core_exchange& x) {
  if (x.r.auth == auth_kind::none)
    return {};
  const auto start = clock::now();
  auto who = authenticate(x.r, x.st, x.req);
  x.auth_us = us_since(start);
  ENACT_TRY(x.ctx.who, std::move(who));
  return {};
}

/// A key by its hash; an X-Wallet-Auth caller (no key) by its wallet, the recovered signer,
/// which authenticate() found as the account's admin.
result<void> per_key_limit(core_exchange& x) {
  if (!x.ctx.who || !x.st.per_key.enabled())
    return {};
  const bool wallet = x.ctx.who->wallet_auth;
  const std::string k =
      wallet ? "wallet " + codec::hex::encode(x.ctx.who->account.admin) : codec::hex::encode(x.ctx.who->key_hash);
  const int wait = x.st.per_key.take(k);
  if (wait == 0)
    return {};
  x.out.retry_after = wait;
  return fail(api_errc::rate_limited, std::string(wallet ? "rate limit of this wallet" : "rate limit of this key") +
                                          " exceeded; retry in " + std::to_string(wait) + " s");
}

result<void> read_body(core_exchange& x) {
  ENACT_TRY(x.ctx.body, parse_body(x.r, x.st.cfg, x.req));
  if (x.r.body_is_json_string && !x.ctx.body.is_string())
    return fail(api_errc::invalid_request, "body: expected a JSON string holding the code");
  return {};
}

/// The same request under an Idempotency-Key answers its first answer, without running again.
result<void> idempotency(core_exchange& x) {
  ENACT_TRY(x.idempotent, idempotent_call::begin(x.r, x.ctx, x.out));
  if (x.idempotent && x.idempotent->replay())
    x.done = true;
  else if (x.idempotent)
    x.ctx.idempotent = &*x.idempotent;
  return {};
}

/// A relayed ledger write costs the surcharge: held before the write, debited by the charge
/// stage once it succeeded, given back when it was refused. Billing's own writes (payment
/// intents, confirmations) are the metering store's and cost nothing.
result<void> hold_surcharge(core_exchange& x) {
  const bool ledger_write = (x.r.writes || x.r.surcharged) && x.r.auth != auth_kind::billing;
  if (!ledger_write || !x.ctx.who || x.st.cfg.write_surcharge_credits <= 0)
    return {};
  ENACT_TRY(x.surcharge,
            credit_hold::take(x.ctx, x.st.cfg.write_surcharge_credits, "write " + x.request_id, kCreditHoldTtl));
  return {};
}

result<void> handle(core_exchange& x) {
  const auto start = clock::now();
  x.out = x.r.handle(x.ctx);
  x.handler_us = us_since(start);
  return {};
}

/// The one place money is settled. A write that was made keeps its answer even when its
/// surcharge cannot be debited (the hold then expires uncharged). A run's charge is debited with
/// the answer kept for its Idempotency-Key in one store transaction, or alone without one; when
/// the debit cannot be made the run's result is withheld. Unsettled holds are released.
result<void> settle(core_exchange& x) {
  if (x.out.ok() && x.surcharge)
    if (auto paid = x.surcharge->settle(); !paid)
      x.st.svc.log->error("write surcharge not debited",
                          {{"request_id", x.request_id}, {"route", x.r.path}, {"detail", paid.err().message}});
  x.surcharge.reset();
  if (!x.out.charge)
    return {};
  const charge owed = std::move(*x.out.charge);
  x.out.charge.reset();
  if (!x.idempotent) {
    if (auto paid = owed.hold->settle(owed.amount); !paid)
      x.out.fail(paid.err());
    return {};
  }
  send(x);
  if (auto paid = x.idempotent->finish_charging(*owed.hold, owed.amount, x.res.status, x.res.body); !paid) {
    json::value details = std::move(x.out.details);  // an action's failure keeps its details
    x.out.fail(paid.err());
    x.out.details = std::move(details);
  }
  return {};
}

result<void> answer_stage(core_exchange& x) {
  if (x.done) {
    const metering::kept_answer& kept = *x.idempotent->replay();
    x.res.status = kept.status;
    x.res.set_content(kept.body, "application/json");
    x.res.set_header("Idempotent-Replayed", "true");
    if (kept.status >= 400)
      x.error_code = "replayed";
    return {};
  }
  send(x);
  if (x.out.ok())
    wipe_secrets(*x.out.value);
  return {};
}

/// The answer kept for an Idempotency-Key (or the key freed when the answer had no effect).
result<void> keep(core_exchange& x) {
  if (!x.idempotent)
    return {};
  if (auto kept = x.idempotent->finish(x.res.status, x.res.body); !kept)
    x.st.svc.log->error("Idempotency-Key answer not kept",
                        {{"request_id", x.request_id}, {"route", x.r.path}, {"detail", kept.err().message}});
  return {};
}

/// The request's log line, and at debug level its timings: authentication (a ledger lookup of
/// the key hash) and the handler (the route's ledger reads and writes, or the action run).
result<void> log_line(core_exchange& x) {
  const auto& who = x.ctx.who;
  json::object line =
      http::access_line(x.r.method, "/core/v1" + std::string(x.r.path), x.res.status, std::move(x.error_code));
  if (who)
    line["caller"] = who->wallet_auth ? "wallet" : who->scopes.kind == scopes::key_kind::account ? "account" : "usage";
  if (x.st.svc.log->enabled(logger::level::debug)) {
    // The caller as the hashes docs/protocol.md publishes, never the credential itself.
    json::object detail{{"request_id", x.request_id},          {"route_pattern", std::string(x.r.path)},
                        {"auth", auth_name(x.r.auth)},         {"request_bytes", x.req.body.size()},
                        {"response_bytes", x.res.body.size()}, {"auth_us", x.auth_us},
                        {"handler_us", x.handler_us}};
    if (who) {
      if (!who->wallet_auth)
        detail["caller_key_hash"] = codec::hex::encode_prefixed(who->key_hash);
      detail["account_hash"] = codec::hex::encode_prefixed(who->account.hash);
    }
    x.st.svc.log->debug("request detail", std::move(detail));
  }
  x.st.svc.log->info("request", std::move(line));
  http::mark_logged();
  return {};
}

/// Writes the exchange's answer: the value, or the error body of docs/protocol.md §0 (a failure of
/// the server or its storage is logged with its detail, which the body never carries).
void send(core_exchange& x) {
  if (x.out.ok()) {
    http::send_value(x.res, 200, *x.out.value);
    x.error_code.clear();
    return;
  }
  const error& e = x.out.value.err();
  http_error h = to_http(e);
  x.error_code = std::string(name(h.code));
  http::send_failure(x.res, h, x.out.details, x.out.error_status, x.out.retry_after);
  if (h.code == api_errc::internal || e.code == ledger_errc::storage || e.code == metering::metering_errc::storage)
    x.st.svc.log->error("request failed", {{"request_id", x.request_id}, {"route", x.r.path}, {"detail", e.message}});
}

constexpr std::array<http::stage<core_exchange>, 12> kStages{{
    {"request id", request_id, true},
    {"per-IP limit", per_ip_limit},
    {"authenticate", authenticated},
    {"per-key limit", per_key_limit},
    {"body", read_body},
    {"idempotency", idempotency},
    {"surcharge hold", hold_surcharge},
    {"handler", handle},
    {"charge", settle, true},
    {"answer", answer_stage, true},
    {"keep", keep, true},
    {"log", log_line, true},
}};

}  // namespace

void mount(httplib::Server& server, const services& svc, const config& cfg) {
  auto* st = new mount_state(svc, cfg);  // lives as long as the routes (the server's lifetime)
  for (const route& r : routes()) {
    const std::string path = "/core/v1" + std::string(r.path);
    auto fn = [&r, st](const httplib::Request& req, httplib::Response& res) {
      core_exchange x(r, *st, req, res);
      http::run_stages<core_exchange>(kStages, x);
    };
    if (r.method == "GET")
      server.Get(path, fn);
    else
      server.Post(path, fn);
  }
  server.Get("/core/v1/openapi.json", [&cfg](const httplib::Request&, httplib::Response& res) {
    static const std::string doc = json::serialize(openapi_document(cfg));
    res.set_content(doc, "application/json");
  });
  mount_swagger_ui(server, "/core/v1");
  dashboard::mount(server);        // /dashboard: the browser front end of these routes
  mount_attestation(server, svc);  // host root: /attestation, /info, /evidences/

  // Request ids and log lines for every response, including those no route produced; the error
  // body of docs/protocol.md §0 for anything the routes did not answer.
  http::listener_options opt;
  // The largest body any route accepts; each route checks its own limit.
  opt.max_body = std::max(cfg.max_body_bytes, cfg.max_action_code_bytes + 4096) + 1;
  opt.cors.origins = cfg.cors_origins;
  http::serve_requests(server, *svc.log, opt);
}

}  // namespace enact::core
