// SPDX-License-Identifier: Apache-2.0
// Stripe over cpp-httplib and Boost.JSON. Each attempt borrows a client from a small pool (a
// client is one keep-alive connection and serves one request at a time), so concurrent calls
// neither share a socket nor pay a TLS handshake every time.
#include "billing/stripe_provider.hpp"

#include <httplib.h>

#include <boost/json.hpp>

#include <array>
#include <chrono>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "billing/create_checks.hpp"
#include "billing/stripe_webhook.hpp"
#include "enact/codec/hex.hpp"
#include "enact/crypto/random.hpp"

namespace enact::billing {

namespace {

namespace json = boost::json;

constexpr size_t kMaxIdleClients = 4;
constexpr std::chrono::milliseconds kFirstRetryDelay{100};  // doubled for each further retry
constexpr size_t kMaxIntentIdLength = 255;
constexpr size_t kMaxProviderMessageLength = 500;

[[nodiscard]] constexpr bool is_ascii_alnum(char c) noexcept {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

[[nodiscard]] error bad_config(std::string message) {
  return error{std::make_error_code(std::errc::invalid_argument), std::move(message)};
}

struct api_base_parts {
  std::string origin;       // "https://api.stripe.com" or "http://127.0.0.1:4242"
  std::string path_prefix;  // "" or "/prefix", without a trailing slash
};

/// `http(s)://host[:port][/prefix]`; httplib takes the origin, the prefix goes before each path.
[[nodiscard]] result<api_base_parts> parse_api_base(std::string_view base) {
  std::string_view rest;
  std::string_view scheme;
  if (base.starts_with("https://")) {
    scheme = "https://";
  } else if (base.starts_with("http://")) {
    scheme = "http://";
  } else {
    return bad_config("stripe.api_base: expected an http:// or https:// URL");
  }
  rest = base.substr(scheme.size());
  const size_t slash = rest.find('/');
  const std::string_view authority = rest.substr(0, slash);
  std::string_view path = slash == std::string_view::npos ? std::string_view{} : rest.substr(slash);
  while (path.ends_with('/'))
    path.remove_suffix(1);
  if (authority.empty())
    return bad_config("stripe.api_base: missing host");
  for (const char c : authority)
    if (!(is_ascii_alnum(c) || c == '.' || c == '-' || c == ':' || c == '[' || c == ']'))
      return bad_config("stripe.api_base: invalid character in host");
  if (!detail::is_printable_ascii(path) || path.find_first_of("?# ") != std::string_view::npos)
    return bad_config("stripe.api_base: path may not contain a query, fragment or space");
  return api_base_parts{std::string(scheme) + std::string(authority), std::string(path)};
}

/// `<prefix>` + [A-Za-z0-9_]: Stripe's id alphabet, and nothing that needs escaping in a path.
[[nodiscard]] bool is_stripe_id(std::string_view id, std::string_view prefix) noexcept {
  if (id.size() <= prefix.size() || id.size() > kMaxIntentIdLength || !id.starts_with(prefix))
    return false;
  for (const char c : id)
    if (!(is_ascii_alnum(c) || c == '_'))
      return false;
  return true;
}

[[nodiscard]] bool is_intent_id(std::string_view id) noexcept { return is_stripe_id(id, "pi_"); }

/// application/x-www-form-urlencoded (RFC 3986 unreserved characters kept, the rest %XX).
void append_form_value(std::string& out, std::string_view s) {
  constexpr std::string_view kHex = "0123456789ABCDEF";
  for (const char ch : s) {
    if (is_ascii_alnum(ch) || ch == '-' || ch == '.' || ch == '_' || ch == '~') {
      out += ch;
    } else {
      out += '%';
      const auto c = static_cast<unsigned char>(ch);
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    }
  }
}

void append_form_field(std::string& out, std::string_view key, std::string_view value) {
  if (!out.empty())
    out += '&';
  append_form_value(out, key);
  out += '=';
  append_form_value(out, value);
}

[[nodiscard]] std::string_view string_field(const json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  if (v == nullptr || !v->is_string())
    return {};
  return v->get_string();
}

/// A successful body as a payment intent, or bad_response naming what is missing.
[[nodiscard]] result<payment_intent> parse_intent(std::string_view body) {
  std::error_code ec;
  const json::value v = json::parse(body, ec);
  if (ec || !v.is_object())
    return fail(billing_errc::bad_response, "stripe: response is not a JSON object");
  const auto& o = v.get_object();
  if (const auto* kind = o.if_contains("object");
      kind != nullptr && !(kind->is_string() && kind->get_string() == "payment_intent"))
    return fail(billing_errc::bad_response, "stripe: response object is not a payment_intent");

  payment_intent pi;
  pi.id = string_field(o, "id");
  if (!is_intent_id(pi.id))
    return fail(billing_errc::bad_response, "stripe: response id: missing or not a payment intent id");
  // Null when the key that reads it may not see it; the browser needs it only after a create.
  if (const auto* cs = o.if_contains("client_secret"); cs != nullptr && !cs->is_null()) {
    if (!cs->is_string())
      return fail(billing_errc::bad_response, "stripe: response client_secret: expected a string");
    pi.client_secret = cs->get_string();
  }
  const auto* amount = o.if_contains("amount");
  if (amount == nullptr || !(amount->is_int64() || amount->is_uint64()) ||
      (amount->is_int64() && amount->get_int64() < 0))
    return fail(billing_errc::bad_response, "stripe: response amount: expected a non-negative integer");
  pi.amount_cents = amount->is_uint64() ? amount->get_uint64() : static_cast<uint64_t>(amount->get_int64());
  pi.currency = string_field(o, "currency");
  if (pi.currency.empty())
    return fail(billing_errc::bad_response, "stripe: response currency: missing");
  pi.status = string_field(o, "status");
  if (pi.status.empty())
    return fail(billing_errc::bad_response, "stripe: response status: missing");
  return pi;
}

/// A successful body as a charge: its payment_intent, a string, an expanded intent, or null
/// ("": a charge made without an intent).
[[nodiscard]] result<std::string> parse_charge_intent(std::string_view body) {
  std::error_code ec;
  const json::value v = json::parse(body, ec);
  if (ec || !v.is_object() || string_field(v.get_object(), "object") != "charge")
    return fail(billing_errc::bad_response, "stripe: response is not a charge");
  const auto* pi = v.get_object().if_contains("payment_intent");
  if (pi == nullptr || pi->is_null())
    return std::string();
  if (pi->is_string())
    return std::string(pi->get_string());
  if (pi->is_object())
    return std::string(string_field(pi->get_object(), "id"));
  return fail(billing_errc::bad_response, "stripe: response payment_intent: expected a string");
}

/// The outcome of one attempt (the body of a 2xx), and whether another attempt may change it.
struct attempt {
  result<std::string> value;
  bool retryable = false;
};

}  // namespace

struct stripe_provider::state {
  api_base_parts base;
  Secret secret_key;
  std::string publishable_key;
  int timeout_ms = 0;
  Secret webhook_secret;
  int64_t webhook_tolerance_s = 300;

  std::mutex pool_mutex;
  std::vector<std::unique_ptr<httplib::Client>> idle;

  [[nodiscard]] std::unique_ptr<httplib::Client> acquire() {
    {
      const std::lock_guard lock(pool_mutex);
      if (!idle.empty()) {
        auto c = std::move(idle.back());
        idle.pop_back();
        return c;
      }
    }
    auto c = std::make_unique<httplib::Client>(base.origin);
    const auto t = std::chrono::milliseconds(timeout_ms);
    c->set_connection_timeout(t);
    c->set_read_timeout(t);
    c->set_write_timeout(t);
    c->set_keep_alive(true);
    c->set_tcp_nodelay(true);  // headers and body go out in separate writes
    c->set_follow_location(false);
    return c;
  }

  void release(std::unique_ptr<httplib::Client> c) {
    const std::lock_guard lock(pool_mutex);
    if (idle.size() < kMaxIdleClients)
      idle.push_back(std::move(c));
  }

  /// Stripe's message, with the secret key cut out should it ever appear in one.
  [[nodiscard]] std::string scrub(std::string_view message) const {
    std::string m(message);
    const std::string_view key = as_chars(secret_key.view());
    for (size_t at; !key.empty() && (at = m.find(key)) != std::string::npos;)
      m.replace(at, key.size(), "[redacted]");
    if (m.size() > kMaxProviderMessageLength)
      m.resize(kMaxProviderMessageLength);
    return m;
  }

  /// Maps an HTTP answer to an intent or an error (the table in stripe_provider.hpp).
  [[nodiscard]] attempt classify(const httplib::Response& res) const {
    if (res.status >= 200 && res.status < 300)
      return {res.body, false};

    std::string type;
    std::string code;
    std::string message;
    std::error_code ec;
    const json::value v = json::parse(res.body, ec);
    if (!ec && v.is_object()) {
      if (const auto* e = v.get_object().if_contains("error"); e != nullptr && e->is_object()) {
        type = string_field(e->get_object(), "type");
        code = string_field(e->get_object(), "code");
        message = scrub(string_field(e->get_object(), "message"));
      }
    }
    std::string text = "stripe: HTTP " + std::to_string(res.status);
    if (!code.empty())
      text += " " + code;
    else if (!type.empty())
      text += " " + type;
    if (!message.empty())
      text += ": " + message;

    // Stripe says whether a retry can help; without the header, retry what is transient.
    const std::string should_retry = res.get_header_value("Stripe-Should-Retry");
    const bool transient = res.status >= 500 || res.status == 429 || res.status == 409;
    const bool retryable = should_retry == "true" || (should_retry != "false" && transient);

    if (res.status >= 500 || res.status == 429)
      return {fail(billing_errc::unavailable, std::move(text)), retryable};
    // A key Stripe refuses is the operator's to fix: no client request or retry can.
    if (res.status == 401 || res.status == 403)
      return {fail(billing_errc::unavailable,
                   std::move(text) + " (the server's Stripe secret key was refused; check STRIPE_SECRET_KEY)"),
              false};
    if (res.status == 404 && code == "resource_missing")
      return {fail(billing_errc::unknown_intent, std::move(text)), false};
    if (res.status >= 400)
      return {fail(billing_errc::provider_error, std::move(text)), retryable};
    return {fail(billing_errc::bad_response, std::move(text)), false};
  }

  /// One request: a GET when `form` is empty, else a form POST with `idempotency_key`.
  [[nodiscard]] attempt send(const std::string& path, const std::string& form, std::string_view idempotency_key) {
    const std::string_view key = as_chars(secret_key.view());
    std::string authorization;
    authorization.reserve(7 + key.size());
    authorization.append("Bearer ").append(key);
    httplib::Headers headers{{"Stripe-Version", std::string(stripe_provider::kApiVersion)}};
    headers.emplace("Authorization", std::move(authorization));
    if (!form.empty())
      headers.emplace("Idempotency-Key", std::string(idempotency_key));

    auto client = acquire();
    const std::string target = base.path_prefix + path;
    httplib::Result res = form.empty() ? client->Get(target, headers)
                                       : client->Post(target, headers, form, "application/x-www-form-urlencoded");
    for (auto& [name, value] : headers)
      if (name == "Authorization")
        enact::detail::secure_wipe(value.data(), value.size());

    if (!res)
      return {fail(billing_errc::unavailable, "stripe: request failed: " + httplib::to_string(res.error())), true};
    release(std::move(client));
    return classify(*res);
  }

  /// `send` with retries of transient failures, waiting 100 ms, then 200 ms.
  [[nodiscard]] result<std::string> call(const std::string& path, const std::string& form,
                                         std::string_view idempotency_key) {
    auto delay = kFirstRetryDelay;
    for (int retry = 0;; ++retry) {
      attempt a = send(path, form, idempotency_key);
      if (a.value || !a.retryable || retry == stripe_provider::kMaxRetries)
        return std::move(a.value);
      std::this_thread::sleep_for(delay);
      delay *= 2;
    }
  }
};

stripe_provider::stripe_provider(std::unique_ptr<state> s) noexcept : s_(std::move(s)) {}
stripe_provider::~stripe_provider() = default;

result<std::unique_ptr<stripe_provider>> stripe_provider::create(stripe_config config) {
  ENACT_TRY(auto base, parse_api_base(config.api_base));
  const std::string_view key = as_chars(config.secret_key.view());
  if (key.empty() || !detail::is_printable_ascii(key) || key.find(' ') != std::string_view::npos)
    return bad_config("stripe.secret_key: expected a non-empty key without spaces");
  if (config.publishable_key.empty() || !detail::is_printable_ascii(config.publishable_key))
    return bad_config("stripe.publishable_key: expected a non-empty printable key");
  if (config.timeout_ms <= 0)
    return bad_config("stripe.timeout_ms: expected a positive number of milliseconds");
  if (const std::string_view ws = as_chars(config.webhook_secret.view());
      !detail::is_printable_ascii(ws) || ws.find(' ') != std::string_view::npos)
    return bad_config("stripe.webhook_secret: expected a key without spaces");
  if (config.webhook_tolerance_s <= 0)
    return bad_config("stripe.webhook_tolerance_s: expected a positive number of seconds");

  auto s = std::make_unique<state>();
  s->base = std::move(base);
  s->secret_key = std::move(config.secret_key);
  s->publishable_key = std::move(config.publishable_key);
  s->timeout_ms = config.timeout_ms;
  s->webhook_secret = std::move(config.webhook_secret);
  s->webhook_tolerance_s = config.webhook_tolerance_s;
  // An origin httplib cannot use (bad port, say) is a configuration error, found now.
  if (!httplib::Client(s->base.origin).is_valid())
    return bad_config("stripe.api_base: not a usable URL");
  return std::unique_ptr<stripe_provider>(new stripe_provider(std::move(s)));
}

std::string stripe_provider::publishable_key() const { return s_->publishable_key; }

result<payment_intent> stripe_provider::create_intent(uint64_t amount_cents, std::string_view account_ref,
                                                      std::string_view idempotency_key) {
  ENACT_TRY_VOID(detail::check_create_request(amount_cents, account_ref, idempotency_key));
  std::string key(idempotency_key);
  if (key.empty()) {
    std::array<uint8_t, 16> r{};
    crypto::random_bytes(r);
    key = "enact-" + codec::hex::encode(r);
  }

  std::string form;
  append_form_field(form, "amount", std::to_string(amount_cents));
  append_form_field(form, "currency", "usd");
  append_form_field(form, "metadata[account]", account_ref);
  append_form_field(form, "automatic_payment_methods[enabled]", "true");

  ENACT_TRY(const auto body, s_->call("/v1/payment_intents", form, key));
  ENACT_TRY(auto pi, parse_intent(body));
  // The caller credits what it asked for; an intent for another sum is not that payment.
  if (pi.amount_cents != amount_cents || pi.currency != "usd")
    return fail(billing_errc::bad_response, "stripe: created intent is for " + std::to_string(pi.amount_cents) + " " +
                                                pi.currency + ", not " + std::to_string(amount_cents) + " usd");
  if (pi.client_secret.empty())
    return fail(billing_errc::bad_response, "stripe: created intent has no client_secret");
  return pi;
}

result<payment_intent> stripe_provider::retrieve_intent(std::string_view id, bool /*confirm*/) {
  if (!is_intent_id(id))
    return fail(billing_errc::unknown_intent, "payment_intent_id: not a payment intent id");
  ENACT_TRY(const auto body, s_->call("/v1/payment_intents/" + std::string(id), std::string(), {}));
  ENACT_TRY(auto pi, parse_intent(body));
  if (pi.id != id)
    return fail(billing_errc::bad_response, "stripe: asked for " + std::string(id) + ", received " + pi.id);
  return pi;
}

result<std::string> stripe_provider::charge_intent(std::string_view charge_id) {
  // py_: a charge of a non-card payment method, which Stripe also serves under /v1/charges.
  if (!is_stripe_id(charge_id, "ch_") && !is_stripe_id(charge_id, "py_"))
    return fail(billing_errc::unknown_intent, "charge: not a charge id");
  ENACT_TRY(const auto body, s_->call("/v1/charges/" + std::string(charge_id), std::string(), {}));
  return parse_charge_intent(body);
}

result<webhook_event> stripe_provider::verify_webhook(std::string_view payload, std::string_view signature) const {
  if (s_->webhook_secret.empty())
    return fail(billing_errc::no_webhook,
                "no Stripe webhook endpoint is configured on this server (STRIPE_WEBHOOK_SECRET)");
  const auto now =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch());
  ENACT_TRY_VOID(
      verify_stripe_signature(payload, signature, s_->webhook_secret.view(), now.count(), s_->webhook_tolerance_s));
  return parse_stripe_event(payload);
}

}  // namespace enact::billing
