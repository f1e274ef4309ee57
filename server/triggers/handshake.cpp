// SPDX-License-Identifier: Apache-2.0
// The approval handshake's routes (handshake.hpp; docs/triggers.md "Signing in a client").
// Handlers read and check the request, call the store, and answer JSON of docs/protocol.md §0's shape; the
// handshake's own outcomes (authorization_pending, access_denied, expired_token) use the codes of
// OAuth 2.0 device authorization (RFC 8628 §3.5), which client libraries already know.
#include "triggers/handshake.hpp"

#include <httplib.h>

#include <algorithm>
#include <array>
#include <memory>

#include "enact/api/errc.hpp"
#include "enact/codec/base64.hpp"
#include "enact/codec/hex.hpp"
#include "enact/address.hpp"
#include "enact/crypto/random.hpp"
#include "enact/secret.hpp"
#include "enact/crypto/sha2.hpp"
#include "enact/siwe/siwe.hpp"
#include "http/errors.hpp"
#include "http/log.hpp"
#include "http/rate_limiter.hpp"
#include "http/request.hpp"
#include "triggers/handshake_page.hpp"
#include "triggers/respond.hpp"
#include "triggers/tokens.hpp"

namespace enact::triggers {

namespace {

constexpr std::string_view kCookie = "enact_session";
constexpr size_t kMaxBody = 16 * 1024;
constexpr size_t kMaxClientName = 100;

error invalid(std::string msg) { return fail(api_errc::invalid_request, std::move(msg)); }

bool has_control(std::string_view s) {
  return std::any_of(s.begin(), s.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u < 0x20 || u == 0x7f;
  });
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z')
      c = static_cast<char>(c - 'A' + 'a');
  return out;
}

}  // namespace

std::string wallet_user_id(const address& a) { return codec::hex::encode_prefixed(a); }

std::vector<std::string> loopback_authorities(std::string_view host, int port) {
  std::string h = lower(host);
  if (h.size() > 2 && h.front() == '[' && h.back() == ']')
    h = h.substr(1, h.size() - 2);
  const std::string p = ":" + std::to_string(port);
  if (h == "localhost")
    return {"localhost" + p, "127.0.0.1" + p};
  if (h == "::1")
    return {"[::1]" + p, "localhost" + p};
  // 127.0.0.0/8, as a dotted quad (what a listen address is; no name resolution here).
  unsigned parts[4] = {};
  size_t at = 0;
  for (int i = 0; i < 4; ++i) {
    size_t end = at;
    while (end < h.size() && h[end] >= '0' && h[end] <= '9' && end - at < 3)
      ++end;
    if (end == at)
      return {};
    parts[i] = static_cast<unsigned>(std::stoul(h.substr(at, end - at)));
    if (parts[i] > 255)
      return {};
    at = end;
    if (i < 3) {
      if (at >= h.size() || h[at] != '.')
        return {};
      ++at;
    }
  }
  if (at != h.size() || parts[0] != 127)
    return {};
  return {h + p, "localhost" + p};
}

namespace {

using namespace std::chrono_literals;

struct ctx {
  store& db;
  const clock& clk;
  http::logger& log;
  handshake_config cfg;
  bool secure_cookie = false;
  /// The domains sign-in messages and Origin headers may name: the public URL's authority, or
  /// without one the loopback listen address's (never the request's Host header).
  std::vector<std::string> authorities;
  /// One bucket per client address over the unauthenticated /auth routes (the page, nonces,
  /// sign-in, session, decisions, sign-out and the client's token poll).
  std::unique_ptr<http::rate_limiter> per_ip;
};

// --- replies -------------------------------------------------------------------------------------

void send_json(httplib::Response& res, int status, const json::value& body) {
  res.set_header("Cache-Control", "no-store");
  http::send_json(res, status, body);
}

/// An outcome of the token poll that docs/protocol.md §0's table has no code for (RFC 8628 §3.5 names).
void send_code(httplib::Response& res, int status, std::string_view code, std::string_view message) {
  send_json(res, status, json::object{{"error", json::object{{"code", code}, {"message", message}}}});
}

void send_error(ctx& c, const httplib::Request& req, httplib::Response& res, const error& e) {
  const http::http_error h = wire_error(e);
  send_json(res, h.status, http::error_body(h));
  if (is_server_failure(h))
    c.log.error("auth request failed", {{"method", req.method}, {"path", req.path}, {"detail", e.message}});
}

// --- reading requests ------------------------------------------------------------------------------

/// A JSON object body. Requiring application/json is also the CSRF guard of the cookie routes: a
/// page of another site cannot send it without a CORS preflight, which this service never grants.
result<json::value> json_body(const httplib::Request& req) {
  if (req.body.size() > kMaxBody)
    return fail(api_errc::payload_too_large, "body: over " + std::to_string(kMaxBody) + " bytes");
  if (!http::is_json_media_type(req.get_header_value("Content-Type")))
    return invalid("Content-Type: expected application/json");
  std::error_code ec;
  json::value v = json::parse(req.body, ec);
  if (ec || !v.is_object())
    return invalid("body: expected a JSON object");
  return v;
}

/// The value of cookie `name` in the Cookie header, or empty.
std::string cookie_value(const httplib::Request& req, std::string_view name) {
  const std::string header = req.get_header_value("Cookie");
  std::string_view rest = header;
  while (!rest.empty()) {
    const auto semi = rest.find(';');
    std::string_view pair = rest.substr(0, semi);
    rest = semi == std::string_view::npos ? std::string_view() : rest.substr(semi + 1);
    while (!pair.empty() && pair.front() == ' ')
      pair.remove_prefix(1);
    const auto eq = pair.find('=');
    if (eq != std::string_view::npos && pair.substr(0, eq) == name)
      return std::string(pair.substr(eq + 1));
  }
  return {};
}

/// sha256 of a cookie value (base64url of 32 bytes); nullopt for anything else.
std::optional<hash256> cookie_hash(std::string_view value) {
  return token_hash(value);  // same form as a bearer token
}

std::string authority_of(std::string_view url) {
  const auto scheme = url.find("://");
  if (scheme != std::string_view::npos)
    url.remove_prefix(scheme + 3);
  return lower(url.substr(0, url.find_first_of("/?#")));
}

bool is_own_authority(const ctx& c, std::string_view authority) {
  const std::string a = lower(authority);
  return std::find(c.authorities.begin(), c.authorities.end(), a) != c.authorities.end();
}

/// The scheme of this service's URLs: the public URL's, or http on loopback.
std::string_view own_scheme(const ctx& c) { return c.secure_cookie ? "https://" : "http://"; }

struct new_cookie {
  std::string value;
  hash256 hash{};
};

new_cookie draw_cookie() {
  Secret raw = crypto::random_secret(32);
  return {codec::base64::encode_url(raw.view()), crypto::sha256(raw.view())};
}

void set_cookie(const ctx& c, httplib::Response& res, const std::string& value, std::chrono::seconds max_age) {
  res.set_header("Set-Cookie", std::string(kCookie) + "=" + value +
                                   "; Path=/auth; HttpOnly; SameSite=Strict; Max-Age=" +
                                   std::to_string(max_age.count()) + (c.secure_cookie ? "; Secure" : ""));
}

/// The signed-in user of the request's session cookie.
result<std::string> session_user(ctx& c, const httplib::Request& req) {
  const auto h = cookie_hash(cookie_value(req, kCookie));
  if (!h)
    return fail(api_errc::unauthenticated, "not signed in: sign in with your wallet first");
  auto s = c.db.find_session(*h);
  if (!s) {
    if (s.code() == store_errc::not_found)
      return fail(api_errc::unauthenticated, "not signed in: sign in with your wallet first");
    return s.err();
  }
  if (s->user_id.empty() || s->expires_at <= c.clk.now() || !constant_time_equal(s->hash, *h))
    return fail(api_errc::unauthenticated, "the session expired: sign in again");
  return s->user_id;
}

/// The challenge of a request: base64url (canonical, unpadded) of 32 bytes.
result<std::string> challenge_of(std::string_view v, std::string_view where) {
  auto raw = v.size() == 43 ? codec::base64::decode_url(v, where) : result<bytes>(invalid(""));
  if (!raw || raw->size() != 32 || codec::base64::encode_url(*raw) != v)
    return invalid(std::string(where) + ": expected base64url(sha256(token)), 43 characters");
  return std::string(v);
}

result<std::string> client_name_of(std::string_view v) {
  if (v.empty() || v.size() > kMaxClientName || !http::is_well_formed_utf8(v) || has_control(v))
    return invalid("query.client: expected the client's name, 1 to " + std::to_string(kMaxClientName) +
                   " bytes of UTF-8 without control characters");
  return std::string(v);
}

// --- handlers ------------------------------------------------------------------------------------------

void authorize(ctx& c, const httplib::Request& req, httplib::Response& res) {
  auto shown = [&]() -> result<approval> {
    ENACT_TRY_VOID(http::only_query(req, {"challenge", "client"}));
    ENACT_TRY(const std::string challenge, challenge_of(req.get_param_value("challenge"), "query.challenge"));
    ENACT_TRY(const std::string client, client_name_of(req.get_param_value("client")));
    auto a = c.db.get_approval(challenge);
    if (a || a.code() != store_errc::not_found)
      return a;
    approval fresh;
    fresh.challenge = challenge;
    fresh.client_name = client;
    fresh.created_at = c.clk.now();
    fresh.expires_at = fresh.created_at + c.cfg.request_lifetime;
    if (auto w = c.db.create_approval(fresh); !w) {
      if (w.code() != store_errc::conflict)
        return w.err();
      return c.db.get_approval(challenge);  // opened twice at once: the first one counts
    }
    c.log.info("token requested", {{"client_name", client}});
    return fresh;
  }();
  if (!shown) {
    const http::http_error h = wire_error(shown.err());
    send_error_page(res, h.status, h.message);
    return;
  }
  std::array<uint8_t, 16> n{};
  crypto::random_bytes(n);
  const std::string nonce = codec::hex::encode(n);
  send_page(res, 200, approval_page(*shown, shown->expires_at <= c.clk.now(), nonce), nonce);
}

result<json::value> nonce(ctx& c, const httplib::Request& req, httplib::Response& res) {
  ENACT_TRY_VOID(http::only_query(req, {}));
  std::array<uint8_t, 16> n{};
  crypto::random_bytes(n);
  const new_cookie cookie = draw_cookie();
  browser_session s;
  s.hash = cookie.hash;
  s.nonce = codec::hex::encode(n);
  s.created_at = c.clk.now();
  s.expires_at = s.created_at + c.cfg.nonce_lifetime;
  ENACT_TRY_VOID(c.db.create_session(s));
  set_cookie(c, res, cookie.value, c.cfg.nonce_lifetime);
  return json::value_from(api::sign_in_nonce{s.nonce, to_rfc3339(s.expires_at)});
}

result<json::value> sign_in(ctx& c, const httplib::Request& req, httplib::Response& res) {
  ENACT_TRY_VOID(http::only_query(req, {}));
  ENACT_TRY(const json::value raw, json_body(req));
  ENACT_TRY(const api::sign_in_request body, api::read<api::sign_in_request>(raw));
  const auto pre = cookie_hash(cookie_value(req, kCookie));
  if (!pre)
    return fail(api_errc::unauthenticated, "no sign-in nonce for this browser: GET /auth/nonce first");
  const std::string_view text = body.message;
  ENACT_TRY(const siwe::message m, siwe::parse(text));

  // docs/protocol.md §4: the domain and URI are checked against the configured public URL (or the loopback
  // listen address), never against the request's Host header, which the sender chooses: a
  // message a wallet signed for another site must not sign in here.
  if (c.authorities.empty())
    return fail(api_errc::signature_invalid,
                "sign-in is not available: the trigger service has no public URL (triggers.public_url) "
                "and does not listen on a loopback address");
  if (!is_own_authority(c, m.domain))
    return fail(api_errc::signature_invalid, "message.domain: '" + m.domain.substr(0, 100) +
                                                 "' is not this service's (" + c.authorities.front() + ")");
  const std::string uri = lower(m.uri);
  const std::string base = std::string(own_scheme(c)) + lower(m.domain);
  if (uri != base && !uri.starts_with(base + "/"))
    return fail(api_errc::signature_invalid,
                "message.uri: not a URI of this service (expected " + base.substr(0, 100) + "/…)");

  const time_point now = c.clk.now();
  if (m.issued_at < now - c.cfg.issued_at_window || m.issued_at > now + c.cfg.issued_at_window)
    return fail(api_errc::signature_expired, "message.issued_at: " + to_rfc3339(m.issued_at) +
                                                 " is more than 5 minutes from the server's time " + to_rfc3339(now));
  if (m.expiration_time && *m.expiration_time <= now)
    return fail(api_errc::signature_expired, "message.expiration_time: passed");
  if (m.not_before && *m.not_before > now)
    return fail(api_errc::signature_expired, "message.not_before: not yet");

  auto sig = codec::hex::decode_prefixed(body.signature, "body.signature");
  if (!sig || sig->size() != 65)
    return invalid("body.signature: expected 0x + 130 hex digits (r ‖ s ‖ v)");
  if (auto signed_by = siwe::verify_signature(text, m, *sig); !signed_by)
    return fail(api_errc::signature_invalid, "body." + signed_by.err().message);

  const new_cookie cookie = draw_cookie();
  browser_session s;
  s.hash = cookie.hash;
  s.user_id = wallet_user_id(m.account);
  s.created_at = now;
  s.expires_at = now + c.cfg.session_lifetime;
  if (auto w = c.db.sign_in_session(*pre, m.nonce, s, now); !w) {
    if (w.code() == store_errc::not_found)
      return fail(api_errc::signature_invalid,
                  "message.nonce: unknown, used already, expired, or not issued to this browser");
    return w.err();
  }
  set_cookie(c, res, cookie.value, c.cfg.session_lifetime);
  c.log.info("signed in", {{"user_id", s.user_id}});
  return json::value_from(api::session_info{s.user_id});
}

/// GET /auth/session: the page's question "am I signed in?" — asked on every load, so not being
/// signed in is an answer (user_id null), not an error.
result<json::value> session(ctx& c, const httplib::Request& req, httplib::Response&) {
  ENACT_TRY_VOID(http::only_query(req, {}));
  auto user = session_user(c, req);
  if (!user) {
    if (user.code() == api_errc::unauthenticated)
      return json::value_from(api::session_info{});
    return user.err();
  }
  return json::value_from(api::session_info{*user});
}

/// The page's writes (approve, deny, sign-out): SameSite=Strict and the JSON body already keep
/// other sites out; a browser's Origin header, when sent, must be this service too.
result<void> same_origin(ctx& c, const httplib::Request& req) {
  if (req.has_header("Origin")) {
    const std::string origin = req.get_header_value("Origin");
    if (!is_own_authority(c, authority_of(origin)))
      return fail(api_errc::forbidden, "Origin: not this service");
  }
  return {};
}

result<json::value> sign_out(ctx& c, const httplib::Request& req, httplib::Response& res) {
  ENACT_TRY_VOID(http::only_query(req, {}));
  ENACT_TRY_VOID(same_origin(c, req));
  const auto h = cookie_hash(cookie_value(req, kCookie));
  if (!h)
    return fail(api_errc::unauthenticated, "not signed in");
  if (auto ended = c.db.end_session(*h); !ended) {
    if (ended.code() == store_errc::not_found)
      return fail(api_errc::unauthenticated, "not signed in");
    return ended.err();
  }
  set_cookie(c, res, "", std::chrono::seconds(0));  // the browser drops it
  return json::object{{"signed_out", true}};
}

result<json::value> decide(ctx& c, const httplib::Request& req, bool approve) {
  ENACT_TRY_VOID(http::only_query(req, {}));
  ENACT_TRY_VOID(same_origin(c, req));
  ENACT_TRY(const std::string user, session_user(c, req));
  ENACT_TRY(const json::value raw, json_body(req));
  ENACT_TRY(const api::decision_request body, api::read<api::decision_request>(raw));
  ENACT_TRY(const std::string challenge, challenge_of(body.challenge, "body.challenge"));
  auto a = c.db.decide_approval(challenge, user, approve, c.clk.now());
  if (!a) {
    if (a.code() == store_errc::not_found)
      return fail(api_errc::not_found, "no token request with this challenge");
    if (a.code() == store_errc::conflict)
      return fail(api_errc::conflict, "this request was decided already, or it expired");
    return a.err();
  }
  c.log.info(approve ? "token request approved" : "token request denied",
             {{"client_name", a->client_name}, {"user_id", user}});
  return json::value_from(api::decision{std::string(to_string(a->status))});
}

/// POST /auth/token: the client's poll. Answers nothing but the outcome to whoever cannot show
/// the token behind the challenge.
void token(ctx& c, const httplib::Request& req, httplib::Response& res) {
  auto& raw_body = const_cast<std::string&>(req.body);
  auto request = [&]() -> result<api::token_request> {
    ENACT_TRY_VOID(http::only_query(req, {}));
    ENACT_TRY(json::value body, json_body(req));
    auto r = api::read<api::token_request>(body);
    if (auto* tok = body.as_object().if_contains("token"); tok != nullptr && tok->is_string())
      detail::secure_wipe(tok->get_string().data(), tok->get_string().size());
    return r;
  }();
  detail::secure_wipe(raw_body.data(), raw_body.size());
  if (!request) {
    send_error(c, req, res, request.err());
    return;
  }
  const auto h = token_hash(as_chars(request->token.view()));
  if (!h) {
    send_error(c, req, res, invalid("body.token: expected the token, base64url of 32 bytes (43 characters)"));
    return;
  }
  const std::string_view challenge = request->challenge;
  const std::string from_token = codec::base64::encode_url(*h);
  if (challenge.size() != from_token.size() || !constant_time_equal(as_bytes(challenge), as_bytes(from_token))) {
    send_error(c, req, res, invalid("body.token: its sha256 is not the challenge"));
    return;
  }
  const time_point now = c.clk.now();
  auto a = c.db.get_approval(challenge);
  if (!a) {
    if (a.code() == store_errc::not_found)  // the page has not been opened yet
      return send_code(res, 400, "authorization_pending", "waiting for the user to open the approval page");
    return send_error(c, req, res, a.err());
  }
  if (a->status == approval_status::denied)
    return send_code(res, 403, "access_denied", "the user denied this request");
  if (a->token_hash)
    return send_error(c, req, res, fail(api_errc::conflict, "this challenge already yielded its token"));
  if (a->expires_at <= now)
    return send_code(res, 400, "expired_token", "this request expired; start a new one");
  if (a->status == approval_status::pending)
    return send_code(res, 400, "authorization_pending", "waiting for the user to approve");

  token_record t;
  t.hash = *h;
  t.user_id = a->user_id;
  t.client_name = a->client_name;
  t.created_at = now;
  t.expires_at = now + kTokenLifetime;
  auto claimed = c.db.claim_approval(challenge, t, now);
  if (!claimed) {
    if (claimed.code() == store_errc::conflict)
      return send_error(c, req, res, fail(api_errc::conflict, "this challenge already yielded its token, or expired"));
    return send_error(c, req, res, claimed.err());
  }
  c.log.info("token issued", {{"client_name", t.client_name}, {"user_id", t.user_id}});
  send_json(res, 200,
            json::value_from(api::issued_token{"bearer", t.user_id, to_rfc3339(t.expires_at), t.client_name}));
}

}  // namespace

void mount_handshake(httplib::Server& server, store& db, const clock& clk, http::logger& log, handshake_config cfg) {
  auto c = std::make_shared<ctx>(ctx{db, clk, log, std::move(cfg), false, {}, nullptr});
  c->per_ip = std::make_unique<http::rate_limiter>(c->cfg.auth_requests_per_second, std::max(1.0, c->cfg.auth_burst));
  c->secure_cookie = lower(c->cfg.public_url).starts_with("https://");
  if (!c->cfg.public_url.empty()) {
    c->authorities.push_back(authority_of(c->cfg.public_url));
  } else {
    for (const auto& a : c->cfg.loopback_authorities)
      c->authorities.push_back(lower(a));
  }

  // 429 rate_limited with Retry-After when the client address used up its bucket.
  const auto limited = [c](const httplib::Request& req, httplib::Response& res) {
    if (!c->per_ip->enabled())
      return false;
    const int wait = c->per_ip->take(req.remote_addr);
    if (wait == 0)
      return false;
    res.set_header("Retry-After", std::to_string(wait));
    send_error(*c, req, res,
               fail(api_errc::rate_limited,
                    "too many sign-in requests from this address; retry in " + std::to_string(wait) + " s"));
    return true;
  };
  using cookie_handler = result<json::value> (*)(ctx&, const httplib::Request&, httplib::Response&);
  const auto plain = [c, limited](cookie_handler h) {
    return [c, h, limited](const httplib::Request& req, httplib::Response& res) {
      if (limited(req, res))
        return;
      auto out = h(*c, req, res);
      if (!out)
        send_error(*c, req, res, out.err());
      else
        send_json(res, 200, *out);
    };
  };
  server.Get("/auth/authorize", [c, limited](const httplib::Request& req, httplib::Response& res) {
    if (!limited(req, res))
      authorize(*c, req, res);
  });
  server.Get("/auth/nonce", plain(nonce));
  server.Post("/auth/sign-in", plain(sign_in));
  server.Get("/auth/session", plain(session));
  server.Post("/auth/approve",
              plain([](ctx& x, const httplib::Request& req, httplib::Response&) { return decide(x, req, true); }));
  server.Post("/auth/deny",
              plain([](ctx& x, const httplib::Request& req, httplib::Response&) { return decide(x, req, false); }));
  server.Post("/auth/sign-out", plain(sign_out));
  server.Post("/auth/token", [c, limited](const httplib::Request& req, httplib::Response& res) {
    if (!limited(req, res))
      token(*c, req, res);
  });
}

}  // namespace enact::triggers
