// SPDX-License-Identifier: Apache-2.0
// The approval handshake (server/triggers/handshake.hpp, docs/triggers.md "Signing in a client")
// against the trigger service in-process on a loopback port, on a manual clock: the client's
// poll, the wallet sign-in (EIP-4361 + EIP-191, signed here with the SDK), approve and deny, the
// token issued once and working on /api/me, listing and revoking, and the refusals; the domain a
// sign-in must name (the public URL, or the loopback listen address; never the Host header).
#include <doctest/doctest.h>
#include <httplib.h>

#include <cctype>
#include <filesystem>
#include <functional>
#include <random>
#include <thread>

#include "core/log.hpp"
#include "enact/client/api_error.hpp"
#include "enact/codec/base64.hpp"
#include "enact/codec/hex.hpp"
#include "enact/address.hpp"
#include "enact/crypto/eip191.hpp"
#include "enact/crypto/secp256k1.hpp"
#include "enact/crypto/sha2.hpp"
#include "support.hpp"
#include "tee/tee.hpp"
#include "triggers/handshake.hpp"
#include "triggers/service.hpp"
#include "triggers/sqlite_store.hpp"
#include "triggers/tokens.hpp"

namespace enact::triggers::test {
namespace {

using namespace std::chrono_literals;

using enact::test::temp_dir;

const time_point t0 = time_point{std::chrono::sys_days{std::chrono::year{2026} / 11 / 1}.time_since_epoch()};

/// A wallet of the tests: a fixed private key, signing like personal_sign.
struct wallet {
  Secret key;
  address addr{};
  explicit wallet(uint8_t fill) : key(bytes(32, fill)) {
    addr = crypto::secp256k1::to_address(crypto::secp256k1::public_key_of(key).value());
  }
  [[nodiscard]] std::string sign(std::string_view message) const {
    return codec::hex::encode_prefixed(
        crypto::secp256k1::sign(crypto::personal_message_hash(message), key).value().to_bytes());
  }
  [[nodiscard]] std::string user() const { return codec::hex::encode_prefixed(addr); }
};

struct client_token {
  std::string token;
  std::string challenge;
};

client_token draw_token(uint8_t seed) {
  bytes raw(32);
  std::mt19937 rng(seed);
  for (auto& b : raw)
    b = static_cast<uint8_t>(rng());
  return {codec::base64::encode_url(raw), codec::base64::encode_url(crypto::sha256(raw))};
}

std::string siwe(std::string_view domain, std::string_view account, std::string_view nonce, time_point issued,
                 std::string_view uri_path = "/auth/authorize", std::string_view scheme = "http://") {
  return std::string(domain) + " wants you to sign in with your Ethereum account:\n" + std::string(account) +
         "\n\nSign in to approve a client.\n\nURI: " + std::string(scheme) + std::string(domain) +
         std::string(uri_path) + "\nVersion: 1\nChain ID: 1\nNonce: " + std::string(nonce) +
         "\nIssued At: " + to_rfc3339(issued);
}

std::string error_code(const httplib::Result& r) {
  if (!r)
    return "(no answer)";
  std::error_code ec;
  const json::value v = json::parse(r->body, ec);
  if (ec || !v.is_object() || !v.as_object().contains("error"))
    return "(no error body)";
  return std::string(v.at("error").at("code").as_string());
}

json::value body_of(const httplib::Result& r) {
  REQUIRE(r);
  return json::parse(r->body);
}

/// The trigger service (no run workers) with the handshake, on a loopback port.
struct fixture {
  temp_dir dir{"enact-handshake"};
  std::unique_ptr<sqlite_store> db = sqlite_store::open(dir.str() + "/triggers.sqlite").value();
  std::unique_ptr<tee::tee> the_tee = tee::open_simulated(dir.str()).value();
  core::logger log{stderr, core::logger::level::warn};
  manual_clock clk{t0};
  std::unique_ptr<service> svc;
  httplib::Server server;
  std::thread thread;
  int port = 0;
  std::string host;

  /// `auth_rate` 0: the service's default limit of the /auth routes. `public_url`: the service's
  /// configured public URL; without one, sign-in accepts the loopback listen address, unless
  /// `loopback` is false (then nothing).
  explicit fixture(double auth_rate = 0, double auth_burst = 0, std::string public_url = {}, bool loopback = true) {
    service_config cfg;
    if (auth_rate > 0) {
      cfg.auth_requests_per_second = auth_rate;
      cfg.auth_burst = auth_burst;
    }
    cfg.workers.threads = 0;
    cfg.workers.core_url = "http://127.0.0.1:1";
    cfg.public_url = std::move(public_url);
    svc = service::start(*db, *the_tee, log, clk, cfg).value();
    port = server.bind_to_any_port("127.0.0.1");
    REQUIRE(port > 0);
    svc->mount(server, true, loopback ? loopback_authorities("127.0.0.1", port) : std::vector<std::string>{});
    host = "127.0.0.1:" + std::to_string(port);
    // Connections made before the accept loop runs wait in the listen backlog.
    thread = std::thread([this] { server.listen_after_bind(); });
  }
  ~fixture() {
    // stop() is lost when the accept loop has not started yet.
    while (!server.is_running())
      std::this_thread::yield();
    server.stop();
    thread.join();
    svc->stop();
  }

  [[nodiscard]] httplib::Client client() const {
    httplib::Client c("127.0.0.1", port);
    c.set_read_timeout(10, 0);
    return c;
  }

  /// GET /auth/nonce: the pre-sign-in cookie and its nonce.
  std::pair<std::string, std::string> nonce() {
    auto r = client().Get("/auth/nonce");
    REQUIRE(r);
    REQUIRE(r->status == 200);
    const std::string set = r->get_header_value("Set-Cookie");
    CHECK(set.find("HttpOnly") != std::string::npos);
    CHECK(set.find("SameSite=Strict") != std::string::npos);
    CHECK(set.find("Path=/auth") != std::string::npos);
    const auto eq = set.find('=');
    const std::string cookie = set.substr(eq + 1, set.find(';') - eq - 1);
    return {cookie, std::string(json::parse(r->body).at("nonce").as_string())};
  }

  httplib::Result sign_in(const std::string& cookie, const std::string& message, const std::string& signature) {
    httplib::Headers h;
    if (!cookie.empty())
      h.emplace("Cookie", "enact_session=" + cookie);
    return client().Post("/auth/sign-in", h,
                         json::serialize(json::object{{"message", message}, {"signature", signature}}),
                         "application/json");
  }

  /// A signed-in session cookie of `w`.
  std::string session_of(const wallet& w) {
    auto [pre, n] = nonce();
    const std::string msg = siwe(host, to_checksum_address(w.addr), n, clk.now());
    auto r = sign_in(pre, msg, w.sign(msg));
    REQUIRE(r);
    REQUIRE(r->status == 200);
    CHECK(json::parse(r->body).at("user_id").as_string() == w.user());
    const std::string set = r->get_header_value("Set-Cookie");
    const auto eq = set.find('=');
    return set.substr(eq + 1, set.find(';') - eq - 1);
  }

  httplib::Result authorize(const std::string& challenge, const std::string& client_name) {
    std::string q;
    for (const unsigned char ch : client_name) {
      if (std::isalnum(ch) != 0) {
        q += static_cast<char>(ch);
      } else {
        static constexpr char kHex[] = "0123456789ABCDEF";
        q += '%';
        q += kHex[ch >> 4];
        q += kHex[ch & 15];
      }
    }
    return client().Get("/auth/authorize?challenge=" + challenge + "&client=" + q);
  }

  httplib::Result decide(const std::string& session, const std::string& challenge, bool approve,
                         const std::string& content_type = "application/json") {
    httplib::Headers h{{"Cookie", "enact_session=" + session}};
    return client().Post(approve ? "/auth/approve" : "/auth/deny", h,
                         json::serialize(json::object{{"challenge", challenge}}), content_type.c_str());
  }

  httplib::Result poll(const std::string& challenge, const std::string& token) {
    return client().Post("/auth/token", json::serialize(json::object{{"challenge", challenge}, {"token", token}}),
                         "application/json");
  }

  httplib::Result bearer_get(const std::string& path, const std::string& token) {
    return client().Get(path, httplib::Headers{{"Authorization", "Bearer " + token}});
  }
};

}  // namespace

TEST_CASE("handshake: sign-out ends the browser session") {
  fixture f;
  const wallet alice(0x11);
  const std::string session = f.session_of(alice);
  const httplib::Headers with_cookie{{"Cookie", "enact_session=" + session}};
  auto s = f.client().Get("/auth/session", with_cookie);
  REQUIRE(s);
  CHECK(json::parse(s->body).at("user_id").as_string() == alice.user());

  auto out = f.client().Post("/auth/sign-out", with_cookie, "{}", "application/json");
  REQUIRE(out);
  CHECK(out->status == 200);
  const std::string set = out->get_header_value("Set-Cookie");
  CHECK(set.find("enact_session=;") == 0);
  CHECK(set.find("Max-Age=0") != std::string::npos);
  // The session is gone from the store: the old cookie is nobody's.
  s = f.client().Get("/auth/session", with_cookie);
  REQUIRE(s);
  CHECK(json::parse(s->body).at("user_id").is_null());
  const client_token t = draw_token(7);
  REQUIRE(f.authorize(t.challenge, "cli")->status == 200);
  auto d = f.decide(session, t.challenge, true);
  REQUIRE(d);
  CHECK(d->status == 401);
  CHECK(json::parse(d->body).at("error").at("code").as_string() == "unauthenticated");
  // Signing out twice, or without a cookie, is refused the same way.
  for (const auto& h : {with_cookie, httplib::Headers{}}) {
    auto again = f.client().Post("/auth/sign-out", h, "{}", "application/json");
    REQUIRE(again);
    CHECK(again->status == 401);
  }
  // Another site cannot sign a browser out.
  const std::string other = f.session_of(alice);
  auto cross =
      f.client().Post("/auth/sign-out", {{"Cookie", "enact_session=" + other}, {"Origin", "https://evil.example"}},
                      "{}", "application/json");
  REQUIRE(cross);
  CHECK(cross->status == 403);
  s = f.client().Get("/auth/session", {{"Cookie", "enact_session=" + other}});
  REQUIRE(s);
  CHECK(json::parse(s->body).at("user_id").as_string() == alice.user());
}

TEST_CASE("handshake: the unauthenticated /auth routes are limited per client address") {
  fixture f(1, 4);  // 1 request a second, 4 at once
  std::vector<int> statuses;
  std::string last_retry_after;
  std::string last_body;
  for (int i = 0; i < 6; ++i) {
    auto r = f.client().Post("/auth/token", "{}", "application/json");
    REQUIRE(r);
    statuses.push_back(r->status);
    last_retry_after = r->get_header_value("Retry-After");
    last_body = r->body;
  }
  // The burst answers as usual (400: the body lacks its fields); then 429 with Retry-After and
  // the error shape, on every /auth route of that address, the page included.
  CHECK(statuses == std::vector<int>{400, 400, 400, 400, 429, 429});
  CHECK(last_retry_after == "1");
  CHECK(json::parse(last_body).at("error").at("code").as_string() == "rate_limited");
  auto page = f.client().Get("/auth/authorize?challenge=" + draw_token(3).challenge + "&client=x");
  REQUIRE(page);
  CHECK(page->status == 429);
  auto n = f.client().Get("/auth/nonce");
  REQUIRE(n);
  CHECK(n->status == 429);
  // Bearer routes are not counted: a token holder is identified by its token.
  auto me = f.client().Get("/api/me");
  REQUIRE(me);
  CHECK(me->status == 401);
  // The bucket refills.
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  auto later = f.client().Get("/auth/nonce");
  REQUIRE(later);
  CHECK(later->status == 200);
}

TEST_CASE("handshake: approve, poll, token once, /api/me, list, revoke") {
  fixture f;
  const wallet alice(0x11);
  const client_token t = draw_token(1);
  const std::string name = "<b>enact CLI</b> & \"friends\"";

  // Before the page is opened, and while it waits, the poll says pending.
  auto p = f.poll(t.challenge, t.token);
  REQUIRE(p);
  CHECK(p->status == 400);
  CHECK(error_code(p) == "authorization_pending");

  auto page = f.authorize(t.challenge, name);
  REQUIRE(page);
  CHECK(page->status == 200);
  CHECK(page->get_header_value("Content-Type").starts_with("text/html"));
  CHECK(page->body.find("&lt;b&gt;enact CLI&lt;/b&gt; &amp; &quot;friends&quot;") != std::string::npos);
  CHECK(page->body.find("<b>enact") == std::string::npos);
  CHECK(page->get_header_value("Content-Security-Policy").find("frame-ancestors 'none'") != std::string::npos);
  CHECK(error_code(f.poll(t.challenge, t.token)) == "authorization_pending");

  // Reopening shows the stored name, not the new one.
  auto again = f.authorize(t.challenge, "someone else");
  REQUIRE(again);
  CHECK(again->body.find("someone else") == std::string::npos);

  auto nobody = f.client().Get("/auth/session");
  REQUIRE(nobody);
  CHECK(nobody->status == 200);
  CHECK(body_of(nobody).at("user_id").is_null());
  const std::string session = f.session_of(alice);
  auto who = f.client().Get("/auth/session", httplib::Headers{{"Cookie", "enact_session=" + session}});
  REQUIRE(who);
  CHECK(who->status == 200);
  CHECK(body_of(who).at("user_id").as_string() == alice.user());

  // A token that is not the challenge's learns nothing.
  const client_token other = draw_token(2);
  auto wrong = f.poll(t.challenge, other.token);
  REQUIRE(wrong);
  CHECK(wrong->status == 400);
  CHECK(error_code(wrong) == "invalid_request");

  auto ok = f.decide(session, t.challenge, true);
  REQUIRE(ok);
  CHECK(ok->status == 200);
  CHECK(body_of(ok).at("status").as_string() == "approved");
  CHECK(f.decide(session, t.challenge, false)->status == 409);

  // The token is not usable before the client claims it.
  CHECK(f.bearer_get("/api/me", t.token)->status == 401);
  CHECK(error_code(f.poll(t.challenge, other.token)) == "invalid_request");

  auto claimed = f.poll(t.challenge, t.token);
  REQUIRE(claimed);
  CHECK(claimed->status == 200);
  const json::value c = body_of(claimed);
  CHECK(c.at("token_type").as_string() == "bearer");
  CHECK(c.at("user_id").as_string() == alice.user());
  CHECK(c.at("expires_at").as_string() == to_rfc3339(t0 + kTokenLifetime));
  CHECK(c.at("client_name").as_string() == name);
  CHECK(claimed->body.find(t.token) == std::string::npos);

  // Exactly once.
  auto twice = f.poll(t.challenge, t.token);
  REQUIRE(twice);
  CHECK(twice->status == 409);
  CHECK(error_code(twice) == "conflict");

  auto me = f.bearer_get("/api/me", t.token);
  REQUIRE(me);
  CHECK(me->status == 200);
  CHECK(body_of(me).at("user_id").as_string() == alice.user());

  // An operator token of the same user is listed too; another user's is not.
  const issued_token op = issue_token(*f.db, alice.user(), "issue-token", t0 + 1s).value();
  (void)issue_token(*f.db, "bob", "issue-token", t0).value();
  auto list = f.bearer_get("/auth/tokens", t.token);
  REQUIRE(list);
  CHECK(list->status == 200);
  CHECK(list->body.find(t.token) == std::string::npos);
  const json::value l = body_of(list);
  REQUIRE(l.at("total") == 2);
  CHECK(l.at("items").at(0).at("client_name").as_string() == "issue-token");  // newest first
  CHECK(l.at("items").at(1).at("id").as_string() == t.challenge);
  CHECK(l.at("items").at(1).at("client_name").as_string() == name);
  CHECK(l.at("items").at(1).as_object().size() == 4);

  // Revoking: another user's or an unknown id is 404; the revoked token stops at once.
  const issued_token bob = issue_token(*f.db, "bob", "b", t0).value();
  auto del_other =
      f.client().Delete("/auth/tokens/" + t.challenge, httplib::Headers{{"Authorization", "Bearer " + bob.token}});
  REQUIRE(del_other);
  CHECK(del_other->status == 404);
  CHECK(f.client().Delete("/auth/tokens/nope", httplib::Headers{{"Authorization", "Bearer " + op.token}})->status ==
        404);
  auto del =
      f.client().Delete("/auth/tokens/" + t.challenge, httplib::Headers{{"Authorization", "Bearer " + op.token}});
  REQUIRE(del);
  CHECK(del->status == 204);
  CHECK(f.bearer_get("/api/me", t.token)->status == 401);
  CHECK(f.bearer_get("/api/me", op.token)->status == 200);
  CHECK(body_of(f.bearer_get("/auth/tokens", op.token)).at("total") == 1);
  CHECK(f.client().Get("/auth/tokens")->status == 401);
}

TEST_CASE("handshake: denied, expired, refused decisions") {
  fixture f;
  const wallet alice(0x11);
  const std::string session = f.session_of(alice);

  SUBCASE("denied") {
    const client_token t = draw_token(3);
    REQUIRE(f.authorize(t.challenge, "cli")->status == 200);
    auto d = f.decide(session, t.challenge, false);
    REQUIRE(d);
    CHECK(body_of(d).at("status").as_string() == "denied");
    auto p = f.poll(t.challenge, t.token);
    REQUIRE(p);
    CHECK(p->status == 403);
    CHECK(error_code(p) == "access_denied");
    CHECK(f.decide(session, t.challenge, true)->status == 409);
    CHECK(f.bearer_get("/api/me", t.token)->status == 401);
    CHECK(f.authorize(t.challenge, "cli")->body.find("was denied") != std::string::npos);
  }
  SUBCASE("expired before approval") {
    const client_token t = draw_token(4);
    REQUIRE(f.authorize(t.challenge, "cli")->status == 200);
    f.clk.advance(10min);
    auto p = f.poll(t.challenge, t.token);
    REQUIRE(p);
    CHECK(p->status == 400);
    CHECK(error_code(p) == "expired_token");
    CHECK(f.decide(session, t.challenge, true)->status == 409);
    CHECK(f.authorize(t.challenge, "cli")->body.find("expired") != std::string::npos);
  }
  SUBCASE("approved but claimed too late") {
    const client_token t = draw_token(5);
    REQUIRE(f.authorize(t.challenge, "cli")->status == 200);
    REQUIRE(f.decide(session, t.challenge, true)->status == 200);
    f.clk.advance(10min);
    CHECK(error_code(f.poll(t.challenge, t.token)) == "expired_token");
    CHECK(f.bearer_get("/api/me", t.token)->status == 401);
  }
  SUBCASE("decisions need a session, JSON and this origin") {
    const client_token t = draw_token(6);
    REQUIRE(f.authorize(t.challenge, "cli")->status == 200);
    CHECK(f.decide("", t.challenge, true)->status == 401);
    CHECK(error_code(f.decide("", t.challenge, true)) == "unauthenticated");
    CHECK(f.decide(draw_token(7).token, t.challenge, true)->status == 401);
    auto form = f.decide(session, t.challenge, true, "text/plain");
    REQUIRE(form);
    CHECK(form->status == 400);
    auto cross = f.client().Post(
        "/auth/approve", httplib::Headers{{"Cookie", "enact_session=" + session}, {"Origin", "https://evil.example"}},
        json::serialize(json::object{{"challenge", t.challenge}}), "application/json");
    REQUIRE(cross);
    CHECK(cross->status == 403);
    CHECK(f.decide(session, draw_token(8).challenge, true)->status == 404);
    // The pre-sign-in cookie is no session.
    CHECK(f.decide(f.nonce().first, t.challenge, true)->status == 401);
    // A session expires.
    f.clk.advance(30min);
    CHECK(f.decide(session, t.challenge, true)->status == 401);
    CHECK(error_code(f.poll(t.challenge, t.token)) == "expired_token");
  }
  SUBCASE("bad authorize requests") {
    const client_token t = draw_token(9);
    struct case_ {
      const char* what;
      std::string target;
    };
    const case_ bad[] = {
        {"no challenge", "/auth/authorize?client=cli"},
        {"short challenge", "/auth/authorize?challenge=abc&client=cli"},
        {"padded challenge", "/auth/authorize?challenge=" + t.challenge.substr(0, 42) + "%3D&client=cli"},
        {"no client", "/auth/authorize?challenge=" + t.challenge},
        {"control character in client", "/auth/authorize?challenge=" + t.challenge + "&client=a%0Ab"},
        {"client too long", "/auth/authorize?challenge=" + t.challenge + "&client=" + std::string(101, 'x')},
        {"unknown parameter", "/auth/authorize?challenge=" + t.challenge + "&client=cli&x=1"},
    };
    for (const auto& c : bad) {
      CAPTURE(c.what);
      auto r = f.client().Get(c.target);
      REQUIRE(r);
      CHECK(r->status == 400);
    }
    CHECK(error_code(f.poll(t.challenge, t.token)) == "authorization_pending");  // nothing recorded
  }
}

TEST_CASE("handshake: sign-in refusals") {
  fixture f;
  const wallet alice(0x11);
  const wallet mallory(0x22);
  const std::string acct = to_checksum_address(alice.addr);

  struct case_ {
    const char* what;
    std::function<std::pair<std::string, std::string>(const std::string& nonce)> message_and_sig;
    int status;
    const char* code;
  };
  const auto signed_by = [](const wallet& w, std::string m) {
    return std::pair{m, w.sign(m)};
  };
  const case_ cases[] = {
      {"wrong domain",
       [&](const std::string& n) {
         std::string m = siwe(f.host, acct, n, f.clk.now());  // the URI stays this service's
         m.replace(0, f.host.size(), "evil.example");
         return signed_by(alice, m);
       },
       401, "signature_invalid"},
      {"URI on another host",
       [&](const std::string& n) {
         std::string m = siwe(f.host, acct, n, f.clk.now());
         m.replace(m.find("URI: http://") + 12, f.host.size(), "evil.example");
         return signed_by(alice, m);
       },
       401, "signature_invalid"},
      {"issued 10 minutes ago",
       [&](const std::string& n) { return signed_by(alice, siwe(f.host, acct, n, f.clk.now() - 10min)); }, 401,
       "signature_expired"},
      {"issued 10 minutes ahead",
       [&](const std::string& n) { return signed_by(alice, siwe(f.host, acct, n, f.clk.now() + 10min)); }, 401,
       "signature_expired"},
      {"signed by another key",
       [&](const std::string& n) { return signed_by(mallory, siwe(f.host, acct, n, f.clk.now())); }, 401,
       "signature_invalid"},
      {"nonce not issued",
       [&](const std::string&) { return signed_by(alice, siwe(f.host, acct, "0123456789abcdef", f.clk.now())); }, 401,
       "signature_invalid"},
      {"malformed message", [&](const std::string& n) { return signed_by(alice, "hello " + n); }, 400,
       "invalid_request"},
      {"malformed signature",
       [&](const std::string& n) {
         return std::pair{siwe(f.host, acct, n, f.clk.now()), std::string("0x1234")};
       },
       400, "invalid_request"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.what);
    auto [pre, n] = f.nonce();
    const auto [m, sig] = c.message_and_sig(n);
    auto r = f.sign_in(pre, m, sig);
    REQUIRE(r);
    CHECK(r->status == c.status);
    CHECK(error_code(r) == c.code);
    CHECK(!r->has_header("Set-Cookie"));
    // The failure did not use the nonce up: the right message still signs in.
    const std::string good = siwe(f.host, acct, n, f.clk.now());
    CHECK(f.sign_in(pre, good, alice.sign(good))->status == 200);
  }

  SUBCASE("the Host header is never the reference") {
    // A message a wallet signed for evil.example, replayed here with a Host header naming
    // evil.example: the service compares with its own listen address, not with Host.
    auto [pre, n] = f.nonce();
    const std::string m = siwe("evil.example", acct, n, f.clk.now());
    auto r = f.client().Post(
        "/auth/sign-in", httplib::Headers{{"Cookie", "enact_session=" + pre}, {"Host", "evil.example"}},
        json::serialize(json::object{{"message", m}, {"signature", alice.sign(m)}}), "application/json");
    REQUIRE(r);
    CHECK(r->status == 401);
    CHECK(error_code(r) == "signature_invalid");
    CHECK(!r->has_header("Set-Cookie"));
    // localhost names the same loopback listener.
    const std::string local = siwe("localhost:" + std::to_string(f.port), acct, n, f.clk.now());
    CHECK(f.sign_in(pre, local, alice.sign(local))->status == 200);
  }
  SUBCASE("a nonce is single-use and bound to its browser") {
    auto [pre, n] = f.nonce();
    const std::string m = siwe(f.host, acct, n, f.clk.now());
    auto first = f.sign_in(pre, m, alice.sign(m));
    REQUIRE(first);
    CHECK(first->status == 200);
    auto replay = f.sign_in(pre, m, alice.sign(m));
    REQUIRE(replay);
    CHECK(replay->status == 401);
    CHECK(error_code(replay) == "signature_invalid");
    // Another browser's cookie with this (spent) nonce, or with a fresh nonce of someone else.
    auto [pre2, n2] = f.nonce();
    CHECK(f.sign_in(pre2, m, alice.sign(m))->status == 401);
    auto [pre3, n3] = f.nonce();
    const std::string m2 = siwe(f.host, acct, n2, f.clk.now());
    CHECK(f.sign_in(pre3, m2, alice.sign(m2))->status == 401);
    (void)n3;
  }
  SUBCASE("no cookie, or an expired nonce") {
    auto [pre, n] = f.nonce();
    const std::string m = siwe(f.host, acct, n, f.clk.now());
    auto none = f.sign_in("", m, alice.sign(m));
    REQUIRE(none);
    CHECK(none->status == 401);
    CHECK(error_code(none) == "unauthenticated");
    f.clk.advance(10min);
    const std::string late = siwe(f.host, acct, n, f.clk.now());
    CHECK(f.sign_in(pre, late, alice.sign(late))->status == 401);
  }
  SUBCASE("a lowercase address names the same user") {
    auto [pre, n] = f.nonce();
    const std::string m = siwe(f.host, alice.user(), n, f.clk.now());
    auto r = f.sign_in(pre, m, alice.sign(m));
    REQUIRE(r);
    CHECK(r->status == 200);
    CHECK(body_of(r).at("user_id").as_string() == alice.user());
  }
}

TEST_CASE("handshake: the public URL is the only sign-in domain; Secure cookies over https") {
  fixture f(0, 0, "https://Triggers.Example.org");
  const wallet alice(0x11);
  const std::string acct = to_checksum_address(alice.addr);
  const auto cookie_flags = [](const httplib::Result& r) {
    return r->get_header_value("Set-Cookie");
  };
  auto [pre, n] = f.nonce();
  // The loopback address, which the service does listen on, is not its public name.
  const std::string local = siwe(f.host, acct, n, f.clk.now());
  CHECK(error_code(f.sign_in(pre, local, alice.sign(local))) == "signature_invalid");
  // The public domain, with an http URI: not this service's scheme.
  const std::string plain = siwe("triggers.example.org", acct, n, f.clk.now());
  CHECK(error_code(f.sign_in(pre, plain, alice.sign(plain))) == "signature_invalid");
  // The public domain with a Host header of another site still works: Host plays no part.
  const std::string good = siwe("triggers.example.org", acct, n, f.clk.now(), "/auth/authorize", "https://");
  auto r = f.client().Post(
      "/auth/sign-in", httplib::Headers{{"Cookie", "enact_session=" + pre}, {"Host", "evil.example"}},
      json::serialize(json::object{{"message", good}, {"signature", alice.sign(good)}}), "application/json");
  REQUIRE(r);
  CHECK(r->status == 200);
  CHECK(cookie_flags(r).find("; Secure") != std::string::npos);
  auto nonce_again = f.client().Get("/auth/nonce");
  REQUIRE(nonce_again);
  CHECK(cookie_flags(nonce_again).find("; Secure") != std::string::npos);
  // An Origin of the public URL passes the page's same-origin check; the loopback one does not.
  const client_token t = draw_token(21);
  REQUIRE(f.authorize(t.challenge, "cli")->status == 200);
  const std::string set = cookie_flags(r);
  const std::string session = set.substr(set.find('=') + 1, set.find(';') - set.find('=') - 1);
  const auto approve_from = [&](const std::string& origin) {
    return f.client().Post("/auth/approve",
                           httplib::Headers{{"Cookie", "enact_session=" + session}, {"Origin", origin}},
                           json::serialize(json::object{{"challenge", t.challenge}}), "application/json");
  };
  CHECK(approve_from("http://" + f.host)->status == 403);
  CHECK(approve_from("https://triggers.example.org")->status == 200);
}

TEST_CASE("handshake: without a public URL or a loopback listener, sign-in is refused") {
  fixture f(0, 0, {}, false);
  const wallet alice(0x11);
  auto [pre, n] = f.nonce();
  const std::string m = siwe(f.host, to_checksum_address(alice.addr), n, f.clk.now());
  auto r = f.sign_in(pre, m, alice.sign(m));
  REQUIRE(r);
  CHECK(r->status == 401);
  CHECK(error_code(r) == "signature_invalid");
  CHECK(r->get_header_value("Set-Cookie").find("Secure") == std::string::npos);
}

TEST_CASE("loopback_authorities") {
  using v = std::vector<std::string>;
  CHECK(loopback_authorities("127.0.0.1", 8080) == v{"127.0.0.1:8080", "localhost:8080"});
  CHECK(loopback_authorities("127.1.2.3", 9) == v{"127.1.2.3:9", "localhost:9"});
  CHECK(loopback_authorities("localhost", 80) == v{"localhost:80", "127.0.0.1:80"});
  CHECK(loopback_authorities("::1", 8080) == v{"[::1]:8080", "localhost:8080"});
  CHECK(loopback_authorities("[::1]", 8080) == v{"[::1]:8080", "localhost:8080"});
  for (const char* h : {"0.0.0.0", "::", "[::]", "", "10.0.0.1", "128.0.0.1", "127.0.0.256", "127.0.0", "127.0.0.1.5",
                        "example.org", "127.0.0.1x"}) {
    CAPTURE(h);
    CHECK(loopback_authorities(h, 8080).empty());
  }
}

}  // namespace enact::triggers::test
