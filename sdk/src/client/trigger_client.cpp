// SPDX-License-Identifier: Apache-2.0
#include "enact/client/trigger_client.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <cctype>

#include "enact/codec/base64.hpp"
#include "enact/codec/hex.hpp"
#include "enact/address.hpp"
#include "enact/crypto/random.hpp"
#include "enact/crypto/sha2.hpp"
#include "json_read.hpp"
#include "transport.hpp"

namespace enact::client {

namespace {

namespace json = boost::json;
namespace rd = detail::read;
using detail::decode_answer;
using detail::http_answer;
using detail::http_method;
using detail::http_request;

/// Percent-encodes everything but RFC 3986 unreserved characters.
std::string percent_encode(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (std::isalnum(c) || c == '_' || c == '-' || c == '.' || c == '~') {
      out += ch;
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

/// A path segment taken from the caller (a trigger or run id): percent-encoded, so that an id can
/// never change which endpoint is called.
std::string segment(std::string_view id, std::string_view what) {
  if (id.empty())
    throw api_error(api_errc::invalid_request, 0, {}, std::string(what) + ": empty");
  return percent_encode(id);
}

trigger trigger_of(const json::value& v) { return json::value_to<trigger>(v); }
run run_of(const json::value& v) { return json::value_to<run>(v); }

template <class T, class F>
listing<T> listing_of(const json::value& v, F&& item) {
  const json::object& o = rd::expect_object(v, "answer");
  const json::value& items = rd::require(o, "items");
  if (!items.is_array())
    rd::bad("items: expected an array");
  listing<T> out;
  for (const json::value& i : items.get_array())
    out.items.push_back(item(i));
  out.total = rd::get_u64(o, "total");
  return out;
}

}  // namespace

struct trigger_client::impl {
  detail::transport http;
  Secret token;

  impl(client_options o, Secret t) : http(std::move(o), detail::transport::credential::bearer), token(std::move(t)) {}

  http_answer call(http_method m, std::string target, std::string body = {}, std::vector<bytes_view> redact = {}) {
    http_request r;
    r.method = m;
    r.target = std::move(target);
    r.body = std::move(body);
    r.bearer = &token;
    r.redact = std::move(redact);
    return http.send(r);
  }

  trigger patch(std::string_view id, std::string body, std::vector<bytes_view> redact = {}) {
    return decode_answer(
        call(http_method::patch, "/api/triggers/" + segment(id, "trigger id"), std::move(body), std::move(redact)),
        trigger_of);
  }
};

trigger_client::trigger_client(client_options options, Secret token)
    : impl_(std::make_unique<impl>(std::move(options), std::move(token))) {}
trigger_client::~trigger_client() = default;
trigger_client::trigger_client(trigger_client&&) noexcept = default;
trigger_client& trigger_client::operator=(trigger_client&&) noexcept = default;

void trigger_client::set_token(Secret token) { impl_->token = std::move(token); }
bool trigger_client::has_token() const noexcept { return !impl_->token.empty(); }

// --- token handshake -----------------------------------------------------------------------------

pending_login trigger_client::start_login(std::string_view client_name) {
  // docs/protocol.md §4: the client draws the token; only its hash (the challenge) appears in the URL the
  // user opens, so the token itself never passes through the browser.
  Secret raw = crypto::random_secret(32);
  pending_login p;
  p.challenge = codec::base64::encode_url(crypto::sha256(raw.view()));
  std::string text = codec::base64::encode_url(raw.view());
  p.token = Secret(as_bytes(text));
  enact::detail::secure_wipe(text.data(), text.size());
  p.authorize_url =
      impl_->http.url("/auth/authorize?challenge=" + p.challenge + "&client=" + percent_encode(client_name));
  return p;
}

Secret trigger_client::finish_login(const pending_login& login, login_options o) {
  const auto deadline = std::chrono::steady_clock::now() + o.timeout;
  for (;;) {
    http_request r;
    r.method = http_method::post;
    r.target = "/auth/token";
    r.body = detail::serialize_wiped(json::value_from(api::token_request{login.challenge, login.token.clone()}));
    r.redact = {login.token.view()};
    std::chrono::milliseconds wait = o.interval;
    try {
      (void)impl_->http.send(r);
      impl_->token = login.token.clone();
      return login.token.clone();
    } catch (const api_error& e) {
      if (e.code_name() == "rate_limited") {
        // The service limits polls per address: wait as long as it says, then poll again.
        if (const auto ra = e.retry_after())
          wait = std::max(wait, std::chrono::duration_cast<std::chrono::milliseconds>(*ra));
      } else if (e.code_name() != "authorization_pending") {
        throw;
      }
    }
    if (std::chrono::steady_clock::now() >= deadline)
      throw api_error(api_errc::timeout, 0, {},
                      "the token was not approved within " + std::to_string(o.timeout.count()) + " ms");
    impl_->http.pause(wait);
  }
}

// --- management API ------------------------------------------------------------------------------

token_info trigger_client::me() {
  return decode_answer(impl_->call(http_method::get, "/api/me"),
                       [](const json::value& v) { return json::value_to<token_info>(v); });
}

trigger trigger_client::create(const new_trigger& t) {
  // The body holds the usage key: serialised once, then wiped from the JSON tree.
  return decode_answer(impl_->call(http_method::post, "/api/triggers", detail::serialize_wiped(json::value_from(t)),
                                   {t.usage_api_key.view()}),
                       trigger_of);
}

listing<trigger> trigger_client::list(uint32_t limit, uint64_t offset) {
  return decode_answer(impl_->call(http_method::get, "/api/triggers?limit=" + std::to_string(limit) +
                                                         "&offset=" + std::to_string(offset)),
                       [](const json::value& v) { return listing_of<trigger>(v, trigger_of); });
}

trigger trigger_client::get(std::string_view trigger_id) {
  return decode_answer(impl_->call(http_method::get, "/api/triggers/" + segment(trigger_id, "trigger id")), trigger_of);
}

trigger trigger_client::update(std::string_view trigger_id, const trigger_patch& p) {
  std::vector<bytes_view> redact;
  if (p.usage_api_key)
    redact.push_back(p.usage_api_key->view());
  return impl_->patch(trigger_id, detail::serialize_wiped(json::value_from(p)), std::move(redact));
}

trigger trigger_client::enable(std::string_view trigger_id) { return impl_->patch(trigger_id, R"({"enabled":true})"); }

trigger trigger_client::disable(std::string_view trigger_id) {
  return impl_->patch(trigger_id, R"({"enabled":false})");
}

void trigger_client::remove(std::string_view trigger_id) {
  (void)impl_->call(http_method::del, "/api/triggers/" + segment(trigger_id, "trigger id"));
}

listing<run> trigger_client::runs(std::string_view trigger_id, uint32_t limit, uint64_t offset) {
  return decode_answer(
      impl_->call(http_method::get, "/api/triggers/" + segment(trigger_id, "trigger id") +
                                        "/runs?limit=" + std::to_string(limit) + "&offset=" + std::to_string(offset)),
      [](const json::value& v) { return listing_of<run>(v, run_of); });
}

run trigger_client::get_run(std::string_view run_id) {
  return decode_answer(impl_->call(http_method::get, "/api/runs/" + segment(run_id, "run id")), run_of);
}

run trigger_client::wait_for_run(std::string_view run_id, std::chrono::milliseconds timeout,
                                 std::chrono::milliseconds interval) {
  // The service has no push channel for runs: polling is the contract (docs/protocol.md §4).
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    run r = get_run(run_id);
    if (r.finished())
      return r;
    if (std::chrono::steady_clock::now() >= deadline)
      throw api_error(api_errc::timeout, 0, {},
                      "run " + std::string(run_id) + " still " + std::string(name(r.status)) + " after " +
                          std::to_string(timeout.count()) + " ms");
    impl_->http.pause(interval);
  }
}

// --- webhook intake
// --------------------------------------------------------------------------------

std::string trigger_client::fire_webhook(std::string_view trigger_id, const webhook_request& w) {
  http_request r;
  r.method = http_method::post;
  r.target = "/webhook/" + segment(trigger_id, "trigger id");
  r.body = w.body;
  r.content_type = w.content_type;
  for (const auto& [k, v] : w.headers) {
    for (const char c : k + v)
      if (c == '\r' || c == '\n' || c == '\0')
        throw api_error(api_errc::invalid_request, 0, {}, "webhook header " + k + ": holds a line break or NUL");
    r.extra.emplace_back(k, v);
  }
  return decode_answer(impl_->http.send(r),
                       [](const json::value& v) { return json::value_to<api::webhook_receipt>(v).run_id; });
}

}  // namespace enact::client
