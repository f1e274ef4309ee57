// SPDX-License-Identifier: Apache-2.0
// The Stripe stand-in: cpp-httplib server, state under one mutex, bodies built with Boost.JSON.
// Error bodies, codes and messages follow https://docs.stripe.com/api/errors and the answers of
// Stripe's test mode to the same mistakes.
#include "stripe_fixture.hpp"

#include <httplib.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <boost/json.hpp>

#include <array>
#include <chrono>
#include <mutex>
#include <random>
#include <stdexcept>
#include <thread>
#include <utility>

#include "enact/codec/hex.hpp"

namespace enact::test {

namespace {

namespace json = boost::json;

constexpr uint64_t kStripeMinAmount = 50;        // $0.50, Stripe's minimum charge in USD
constexpr uint64_t kStripeMaxAmount = 99999999;  // $999,999.99
constexpr size_t kMaxIdempotencyKey = 255;
constexpr size_t kMaxMetadataKey = 40;
constexpr size_t kMaxMetadataValue = 500;

/// Percent-decoding of one form component ('+' is a space); nullopt on a broken escape.
std::optional<std::string> form_decode(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+') {
      out += ' ';
    } else if (s[i] == '%') {
      if (i + 2 >= s.size())
        return std::nullopt;
      const auto byte = enact::codec::hex::decode_fixed<1>(s.substr(i + 1, 2));
      if (!byte)
        return std::nullopt;
      out += static_cast<char>((*byte)[0]);
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

std::optional<std::map<std::string, std::string>> parse_form(std::string_view body) {
  std::map<std::string, std::string> form;
  while (!body.empty()) {
    const size_t amp = body.find('&');
    const std::string_view pair = body.substr(0, amp);
    body = amp == std::string_view::npos ? std::string_view{} : body.substr(amp + 1);
    if (pair.empty())
      continue;
    const size_t eq = pair.find('=');
    auto key = form_decode(pair.substr(0, eq));
    auto value = form_decode(eq == std::string_view::npos ? std::string_view{} : pair.substr(eq + 1));
    if (!key || !value)
      return std::nullopt;
    form[std::move(*key)] = std::move(*value);
  }
  return form;
}

std::string stripe_error(std::string_view type, std::string_view code, std::string_view message,
                         std::string_view param = {}) {
  json::object e;
  if (!code.empty()) {
    e["code"] = code;
    e["doc_url"] = "https://stripe.com/docs/error-codes/" + std::string(code);
  }
  e["message"] = message;
  if (!param.empty())
    e["param"] = param;
  e["type"] = type;
  return json::serialize(json::object{{"error", std::move(e)}});
}

void reply(httplib::Response& res, int status, const std::string& body) {
  res.status = status;
  res.set_content(body, "application/json");
}

void invalid_request(httplib::Response& res, std::string_view code, std::string_view message,
                     std::string_view param = {}) {
  reply(res, 400, stripe_error("invalid_request_error", code, message, param));
}

}  // namespace

struct stripe_fixture::impl {
  std::string secret_key;
  httplib::Server server;
  int port = 0;
  std::thread thread;

  mutable std::mutex mutex;
  std::map<std::string, intent> intents;
  struct replay {
    std::map<std::string, std::string> form;
    std::string body;
  };
  std::map<std::string, replay> idempotent;
  size_t requests = 0;
  std::optional<request> last;
  std::string publishable_key{kPublishableKey};
  std::string webhook_url;
  std::string webhook_secret{kWebhookSecret};
  std::string script;
  int delivery_status = 0;
  int fail_count = 0;
  int fail_status = 500;
  std::string fail_body;
  std::mt19937_64 rng{std::random_device{}()};

  std::string random_alnum(size_t n) {
    constexpr std::string_view kAlphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    std::uniform_int_distribution<size_t> pick(0, kAlphabet.size() - 1);
    std::string s;
    for (size_t i = 0; i < n; ++i)
      s += kAlphabet[pick(rng)];
    return s;
  }

  static int64_t unix_now() {
    return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
  }

  static json::object metadata_of(const intent& pi) {
    json::object metadata;
    for (const auto& [k, v] : pi.metadata)
      metadata[k] = v;
    return metadata;
  }

  static std::string to_json(const intent& pi) {
    json::object o{
        {"id", pi.id},
        {"object", "payment_intent"},
        {"amount", pi.amount},
        {"amount_capturable", 0},
        {"amount_details", json::object{{"tip", json::object{}}}},
        {"amount_received", pi.status == "succeeded" ? pi.amount : 0},
        {"application", nullptr},
        {"application_fee_amount", nullptr},
        {"canceled_at", nullptr},
        {"cancellation_reason", nullptr},
        // The API version pinned (2024-06-20) creates intents captured asynchronously by default.
        {"capture_method", "automatic_async"},
        {"client_secret", pi.client_secret},
        {"confirmation_method", "automatic"},
        {"created", unix_now()},
        {"currency", pi.currency},
        {"customer", nullptr},
        {"description", nullptr},
        {"invoice", nullptr},
        {"last_payment_error", nullptr},
        {"latest_charge", pi.latest_charge.empty() ? json::value(nullptr) : json::value(pi.latest_charge)},
        {"livemode", false},
        {"metadata", metadata_of(pi)},
        {"next_action", nullptr},
        {"on_behalf_of", nullptr},
        {"payment_method", pi.status == "succeeded" ? json::value("pm_card_visa") : json::value(nullptr)},
        {"payment_method_configuration_details", nullptr},
        {"payment_method_options", json::object{{"card", json::object{{"installments", nullptr},
                                                                      {"mandate_options", nullptr},
                                                                      {"network", nullptr},
                                                                      {"request_three_d_secure", "automatic"}}}}},
        {"payment_method_types", json::array{"card"}},
        {"processing", nullptr},
        {"receipt_email", nullptr},
        {"review", nullptr},
        {"setup_future_usage", nullptr},
        {"shipping", nullptr},
        {"source", nullptr},
        {"statement_descriptor", nullptr},
        {"statement_descriptor_suffix", nullptr},
        {"status", pi.status},
        {"transfer_data", nullptr},
        {"transfer_group", nullptr},
    };
    if (pi.automatic_payment_methods)
      o["automatic_payment_methods"] =
          json::object{{"allow_redirects", "always"}, {"enabled", *pi.automatic_payment_methods}};
    else
      o["automatic_payment_methods"] = nullptr;
    return json::serialize(o);
  }

  /// The intent's charge (https://docs.stripe.com/api/charges/object), as GET /v1/charges answers.
  static json::object charge_json(const intent& pi) {
    return json::object{
        {"id", pi.latest_charge},
        {"object", "charge"},
        {"amount", pi.amount},
        {"amount_captured", pi.amount},
        {"amount_refunded", pi.amount_refunded},
        {"application", nullptr},
        {"application_fee", nullptr},
        {"application_fee_amount", nullptr},
        {"balance_transaction", "txn_" + pi.latest_charge.substr(3)},
        {"billing_details",
         json::object{{"address", nullptr}, {"email", nullptr}, {"name", nullptr}, {"phone", nullptr}}},
        {"calculated_statement_descriptor", "ENACT"},
        {"captured", true},
        {"created", unix_now()},
        {"currency", pi.currency},
        {"customer", nullptr},
        {"description", nullptr},
        {"disputed", false},
        {"failure_balance_transaction", nullptr},
        {"failure_code", nullptr},
        {"failure_message", nullptr},
        {"fraud_details", json::object{}},
        {"invoice", nullptr},
        {"livemode", false},
        {"metadata", metadata_of(pi)},
        {"on_behalf_of", nullptr},
        {"outcome", json::object{{"network_status", "approved_by_network"},
                                 {"reason", nullptr},
                                 {"risk_level", "normal"},
                                 {"seller_message", "Payment complete."},
                                 {"type", "authorized"}}},
        {"paid", true},
        {"payment_intent", pi.id},
        {"payment_method", "pm_card_visa"},
        {"payment_method_details", json::object{{"type", "card"}}},
        {"receipt_email", nullptr},
        {"receipt_url", nullptr},
        {"refunded", pi.amount_refunded == pi.amount},
        {"review", nullptr},
        {"shipping", nullptr},
        {"source_transfer", nullptr},
        {"statement_descriptor", nullptr},
        {"statement_descriptor_suffix", nullptr},
        {"status", "succeeded"},
        {"transfer_data", nullptr},
        {"transfer_group", nullptr},
    };
  }

  /// Counting, injected failures and authentication, first thing in every route (not in a
  /// pre-routing handler: that runs before the body is read, and a body left unread would
  /// corrupt the next request on a kept-alive connection). True when `res` is already answered.
  /// Called with `mutex` held.
  bool screen(const httplib::Request& req, httplib::Response& res) {
    ++requests;
    request r;
    r.method = req.method;
    r.path = req.path;
    r.content_type = req.get_header_value("Content-Type");
    r.idempotency_key = req.get_header_value("Idempotency-Key");
    r.stripe_version = req.get_header_value("Stripe-Version");
    if (req.method == "POST")
      if (auto form = parse_form(req.body))
        r.form = std::move(*form);
    last = std::move(r);

    if (fail_count > 0) {
      --fail_count;
      reply(res, fail_status,
            fail_body.empty() ? stripe_error("api_error", "",
                                             "An unknown error occurred while processing your "
                                             "request. Please try again.")
                              : fail_body);
      return true;
    }

    const std::string auth = req.get_header_value("Authorization");
    constexpr std::string_view kBearer = "Bearer ";
    if (auth.empty()) {
      reply(res, 401,
            stripe_error("invalid_request_error", "",
                         "You did not provide an API key. You need to provide your API "
                         "key in the Authorization header, using Bearer auth (e.g. "
                         "'Authorization: Bearer YOUR_SECRET_KEY')."));
      return true;
    }
    const std::string presented = auth.starts_with(kBearer) ? auth.substr(kBearer.size()) : std::string();
    if (presented != secret_key) {
      // Stripe shows only the last four characters of a wrong key.
      const std::string tail = presented.size() > 4 ? presented.substr(presented.size() - 4) : "";
      reply(res, 401, stripe_error("invalid_request_error", "", "Invalid API Key provided: sk_****" + tail));
      return true;
    }
    return false;
  }

  void create(const httplib::Request& req, httplib::Response& res) {
    const std::lock_guard lock(mutex);
    if (screen(req, res))
      return;
    if (req.get_header_value("Content-Type").find("application/x-www-form-urlencoded") != 0)
      return invalid_request(res, "", "Invalid request: expected a form-encoded body.");
    auto parsed = parse_form(req.body);
    if (!parsed)
      return invalid_request(res, "", "Invalid request: malformed form encoding.");
    const auto& form = *parsed;

    const std::string key = req.get_header_value("Idempotency-Key");
    if (key.size() > kMaxIdempotencyKey)
      return reply(res, 400,
                   stripe_error("idempotency_error", "", "Idempotency keys can be no longer than 255 characters."));
    if (!key.empty()) {
      if (const auto it = idempotent.find(key); it != idempotent.end()) {
        if (it->second.form != form)
          return reply(res, 400,
                       stripe_error("idempotency_error", "",
                                    "Keys for idempotent requests can only be used with the same "
                                    "parameters they were first used with. Try using a key other "
                                    "than '" +
                                        key +
                                        "' if you meant to execute a different "
                                        "request."));
        res.set_header("Idempotent-Replayed", "true");
        return reply(res, 200, it->second.body);
      }
    }

    intent pi;
    for (const auto& [k, v] : form) {
      if (k == "amount" || k == "currency" || k == "description" || k == "automatic_payment_methods[enabled]")
        continue;
      if (k.starts_with("metadata[") && k.ends_with("]") && k.size() > 10) {
        const std::string mk = k.substr(9, k.size() - 10);
        if (mk.size() > kMaxMetadataKey)
          return invalid_request(res, "", "Metadata keys can have up to 40 characters.", k);
        if (v.size() > kMaxMetadataValue)
          return invalid_request(res, "", "Metadata values can have up to 500 characters.", k);
        pi.metadata[mk] = v;
        continue;
      }
      return invalid_request(res, "parameter_unknown", "Received unknown parameter: " + k, k);
    }

    const auto amount = form.find("amount");
    if (amount == form.end())
      return invalid_request(res, "parameter_missing", "Missing required param: amount.", "amount");
    const std::string& a = amount->second;
    if (a.empty() || a.size() > 18 || a.find_first_not_of("0123456789") != std::string::npos)
      return invalid_request(res, "parameter_invalid_integer", "Invalid integer: " + a, "amount");
    pi.amount = std::stoull(a);
    if (pi.amount < kStripeMinAmount)
      return invalid_request(res, "amount_too_small", "Amount must be at least $0.50 usd", "amount");
    if (pi.amount > kStripeMaxAmount)
      return invalid_request(res, "amount_too_large", "Amount must be no more than $999,999.99", "amount");

    const auto currency = form.find("currency");
    if (currency == form.end())
      return invalid_request(res, "parameter_missing", "Missing required param: currency.", "currency");
    if (currency->second != "usd")
      return invalid_request(res, "", "Invalid currency: " + currency->second, "currency");
    pi.currency = currency->second;

    if (const auto apm = form.find("automatic_payment_methods[enabled]"); apm != form.end()) {
      if (apm->second != "true" && apm->second != "false")
        return invalid_request(res, "", "Invalid boolean: " + apm->second, "automatic_payment_methods[enabled]");
      pi.automatic_payment_methods = apm->second == "true";
    }

    pi.id = "pi_" + random_alnum(24);
    pi.client_secret = pi.id + "_secret_" + random_alnum(25);
    pi.status = "requires_payment_method";
    pi.idempotency_key = key;
    std::string body = to_json(pi);
    intents.emplace(pi.id, std::move(pi));
    if (!key.empty())
      idempotent.emplace(key, replay{form, body});
    reply(res, 200, body);
  }

  void retrieve(const httplib::Request& req, httplib::Response& res) {
    const std::lock_guard lock(mutex);
    if (screen(req, res))
      return;
    const std::string id = req.matches[1];
    const auto it = intents.find(id);
    if (it == intents.end())
      return reply(
          res, 404,
          stripe_error("invalid_request_error", "resource_missing", "No such payment_intent: '" + id + "'", "intent"));
    reply(res, 200, to_json(it->second));
  }

  void retrieve_charge(const httplib::Request& req, httplib::Response& res) {
    const std::lock_guard lock(mutex);
    if (screen(req, res))
      return;
    const std::string id = req.matches[1];
    for (const auto& [_, pi] : intents)
      if (pi.latest_charge == id)
        return reply(res, 200, json::serialize(charge_json(pi)));
    reply(res, 404, stripe_error("invalid_request_error", "resource_missing", "No such charge: '" + id + "'", "id"));
  }

  /// What Stripe.js sends for stripe.confirmPayment (https://docs.stripe.com/api/payment_intents/confirm):
  /// the publishable key and the intent's client secret in the form, no Authorization header (so
  /// that a page's fetch is a CORS simple request). True when a webhook delivery should follow.
  bool confirm(const httplib::Request& req, httplib::Response& res) {
    const std::lock_guard lock(mutex);
    res.set_header("Access-Control-Allow-Origin", "*");
    if (req.has_header("Authorization")) {
      if (screen(req, res))
        return false;
    } else {
      ++requests;
      request r;
      r.method = req.method;
      r.path = req.path;
      r.content_type = req.get_header_value("Content-Type");
      last = std::move(r);
    }
    auto parsed = parse_form(req.body);
    if (!parsed) {
      invalid_request(res, "", "Invalid request: malformed form encoding.");
      return false;
    }
    auto& form = *parsed;
    if (last)
      last->form = form;
    if (!req.has_header("Authorization") && form["key"] != publishable_key) {
      const std::string& k = form["key"];
      reply(res, 401,
            stripe_error("invalid_request_error", "",
                         "Invalid API Key provided: pk_****" + (k.size() > 4 ? k.substr(k.size() - 4) : "")));
      return false;
    }
    const std::string id = req.matches[1];
    const auto it = intents.find(id);
    if (it == intents.end()) {
      reply(
          res, 404,
          stripe_error("invalid_request_error", "resource_missing", "No such payment_intent: '" + id + "'", "intent"));
      return false;
    }
    intent& pi = it->second;
    if (!req.has_header("Authorization") && form["client_secret"] != pi.client_secret) {
      invalid_request(res, "",
                      "The client_secret provided does not match any associated PaymentIntent on this account.",
                      "client_secret");
      return false;
    }
    if (pi.status == "succeeded") {
      invalid_request(res, "payment_intent_unexpected_state",
                      "You cannot confirm this PaymentIntent because it has already succeeded after being "
                      "previously confirmed.");
      return false;
    }
    const std::string& pm = form["payment_method"];
    if (pm.empty()) {
      invalid_request(res, "parameter_missing", "Missing required param: payment_method.", "payment_method");
      return false;
    }
    if (pm == "pm_card_chargeDeclined") {
      pi.status = "requires_payment_method";
      json::object e{{"type", "card_error"},
                     {"code", "card_declined"},
                     {"decline_code", "generic_decline"},
                     {"message", "Your card was declined."},
                     {"payment_intent", json::parse(to_json(pi))}};
      reply(res, 402, json::serialize(json::object{{"error", std::move(e)}}));
      return false;
    }
    if (pm != "pm_card_visa") {
      invalid_request(res, "resource_missing", "No such PaymentMethod: '" + pm + "'", "payment_method");
      return false;
    }
    pi.status = "succeeded";
    if (pi.latest_charge.empty())
      pi.latest_charge = "ch_" + random_alnum(24);
    reply(res, 200, to_json(pi));
    return !webhook_url.empty();
  }

  void set_webhook_endpoint(const httplib::Request& req, httplib::Response& res) {
    const std::lock_guard lock(mutex);
    if (screen(req, res))
      return;
    auto form = parse_form(req.body);
    if (!form)
      return invalid_request(res, "", "Invalid request: malformed form encoding.");
    webhook_url = (*form)["url"];
    reply(res, 200, json::serialize(json::object{{"url", webhook_url}}));
  }

  void unknown_route(const httplib::Request& req, httplib::Response& res) {
    const std::lock_guard lock(mutex);
    if (screen(req, res))
      return;
    reply(res, 404,
          stripe_error("invalid_request_error", "",
                       "Unrecognized request URL (" + req.method + ": " + req.path +
                           "). Please see https://stripe.com/docs or we can help at "
                           "https://support.stripe.com/."));
  }
};

stripe_fixture::stripe_fixture(std::string secret_key) : impl_(std::make_unique<impl>()) {
  impl_->secret_key = std::move(secret_key);
  auto& s = impl_->server;
  s.set_tcp_nodelay(true);
  s.Post("/v1/payment_intents",
         [this](const httplib::Request& req, httplib::Response& res) { impl_->create(req, res); });
  s.Get(R"(/v1/payment_intents/([^/]+))",
        [this](const httplib::Request& req, httplib::Response& res) { impl_->retrieve(req, res); });
  s.Get(R"(/v1/charges/([^/]+))",
        [this](const httplib::Request& req, httplib::Response& res) { impl_->retrieve_charge(req, res); });
  s.Post(R"(/v1/payment_intents/([^/]+)/confirm)", [this](const httplib::Request& req, httplib::Response& res) {
    if (impl_->confirm(req, res))
      deliver(req.matches[1]);
  });
  s.Post("/_fixture/webhook_endpoint",
         [this](const httplib::Request& req, httplib::Response& res) { impl_->set_webhook_endpoint(req, res); });
  s.Get("/v3/", [this](const httplib::Request&, httplib::Response& res) {
    const std::lock_guard lock(impl_->mutex);
    if (impl_->script.empty())
      return reply(res, 404, stripe_error("invalid_request_error", "", "no stand-in script is served"));
    res.set_content(impl_->script, "text/javascript; charset=utf-8");
  });
  const auto unknown = [this](const httplib::Request& req, httplib::Response& res) {
    impl_->unknown_route(req, res);
  };
  s.Get(".*", unknown);
  s.Post(".*", unknown);

  impl_->port = s.bind_to_any_port("127.0.0.1");
  if (impl_->port <= 0)
    throw std::runtime_error("stripe_fixture: cannot bind a loopback port");
  impl_->thread = std::thread([&s] { s.listen_after_bind(); });
  // stop() before the listening loop has started would be lost; wait for it to start.
  while (!s.is_running())
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

stripe_fixture::~stripe_fixture() {
  impl_->server.stop();
  if (impl_->thread.joinable())
    impl_->thread.join();
}

std::string stripe_fixture::base_url() const { return "http://127.0.0.1:" + std::to_string(impl_->port); }
int stripe_fixture::port() const { return impl_->port; }
const std::string& stripe_fixture::secret_key() const { return impl_->secret_key; }

bool stripe_fixture::set_status(std::string_view id, std::string_view status) {
  const std::lock_guard lock(impl_->mutex);
  const auto it = impl_->intents.find(std::string(id));
  if (it == impl_->intents.end())
    return false;
  it->second.status = status;
  if (status == "succeeded" && it->second.latest_charge.empty())
    it->second.latest_charge = "ch_" + impl_->random_alnum(24);
  return true;
}

std::string stripe_fixture::refund(std::string_view intent_id, uint64_t cents) {
  const std::lock_guard lock(impl_->mutex);
  const auto it = impl_->intents.find(std::string(intent_id));
  if (it == impl_->intents.end() || it->second.latest_charge.empty())
    throw std::runtime_error("stripe fixture: no charge of " + std::string(intent_id));
  intent& pi = it->second;
  if (cents > pi.amount - pi.amount_refunded)
    throw std::runtime_error("stripe fixture: refund above the charge's amount");
  pi.amount_refunded += cents;
  return pi.latest_charge;
}

void stripe_fixture::fail_next(int n, int status, std::string body) {
  const std::lock_guard lock(impl_->mutex);
  impl_->fail_count = n;
  impl_->fail_status = status;
  impl_->fail_body = std::move(body);
}

void stripe_fixture::deliver_webhooks_to(std::string url, std::string secret) {
  const std::lock_guard lock(impl_->mutex);
  impl_->webhook_url = std::move(url);
  impl_->webhook_secret = std::move(secret);
}

void stripe_fixture::serve_script(std::string body) {
  const std::lock_guard lock(impl_->mutex);
  impl_->script = std::move(body);
}

int stripe_fixture::last_delivery_status() const {
  const std::lock_guard lock(impl_->mutex);
  return impl_->delivery_status;
}

void stripe_fixture::deliver(const std::string& id) {
  std::string url;
  std::string secret;
  {
    const std::lock_guard lock(impl_->mutex);
    url = impl_->webhook_url;
    secret = impl_->webhook_secret;
  }
  // "http://host:port/path": the endpoint the test named, on loopback.
  const size_t path_at = url.find('/', url.find("://") + 3);
  httplib::Client client(url.substr(0, path_at));
  client.set_connection_timeout(5);
  client.set_read_timeout(10);
  const delivery d = event(id, "payment_intent.succeeded", 0, secret);
  const auto res = client.Post(path_at == std::string::npos ? "/" : url.substr(path_at),
                               httplib::Headers{{"Stripe-Signature", d.signature}}, d.body, "application/json");
  const std::lock_guard lock(impl_->mutex);
  impl_->delivery_status = res ? res->status : -1;
}

size_t stripe_fixture::requests() const {
  const std::lock_guard lock(impl_->mutex);
  return impl_->requests;
}
size_t stripe_fixture::intent_count() const {
  const std::lock_guard lock(impl_->mutex);
  return impl_->intents.size();
}
std::optional<stripe_fixture::intent> stripe_fixture::find_intent(std::string_view id) const {
  const std::lock_guard lock(impl_->mutex);
  const auto it = impl_->intents.find(std::string(id));
  if (it == impl_->intents.end())
    return std::nullopt;
  return it->second;
}
std::optional<stripe_fixture::request> stripe_fixture::last_request() const {
  const std::lock_guard lock(impl_->mutex);
  return impl_->last;
}

std::string stripe_fixture::sign(std::string_view body, int64_t timestamp, std::string_view secret) {
  const std::string text = std::to_string(timestamp) + "." + std::string(body);
  std::array<unsigned char, EVP_MAX_MD_SIZE> mac{};
  unsigned int len = 0;
  if (HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
           reinterpret_cast<const unsigned char*>(text.data()), text.size(), mac.data(), &len) == nullptr)
    throw std::runtime_error("stripe fixture: HMAC failed");
  return enact::codec::hex::encode(enact::bytes_view(mac.data(), len));
}

stripe_fixture::delivery stripe_fixture::wrap(std::string_view type, json::object object, int64_t timestamp,
                                              std::string_view secret) const {
  const int64_t now = impl::unix_now();
  if (timestamp == 0)
    timestamp = now;
  delivery d;
  {
    std::lock_guard lock(impl_->mutex);
    d.event_id = "evt_" + impl_->random_alnum(24);
  }
  const json::object ev{{"id", d.event_id},
                        {"object", "event"},
                        {"api_version", "2024-06-20"},
                        {"created", now},
                        {"livemode", false},
                        {"pending_webhooks", 1},
                        {"request", json::object{{"id", nullptr}, {"idempotency_key", nullptr}}},
                        {"type", type},
                        {"data", json::object{{"object", std::move(object)}}}};
  d.body = json::serialize(ev);
  d.signature = "t=" + std::to_string(timestamp) + ",v1=" + sign(d.body, timestamp, secret);
  return d;
}

stripe_fixture::delivery stripe_fixture::event(std::string_view id, std::string_view type, int64_t timestamp,
                                               std::string_view secret,
                                               const std::function<void(json::object& intent)>& edit) const {
  const auto pi = find_intent(id);
  if (!pi)
    throw std::runtime_error("stripe fixture: no intent " + std::string(id));
  json::object object = json::parse(impl::to_json(*pi)).as_object();
  if (edit)
    edit(object);
  return wrap(type, std::move(object), timestamp, secret);
}

stripe_fixture::delivery stripe_fixture::charge_event(std::string_view intent_id, std::string_view type,
                                                      const std::function<void(json::object& charge)>& edit) const {
  const auto pi = find_intent(intent_id);
  if (!pi || pi->latest_charge.empty())
    throw std::runtime_error("stripe fixture: no charge of " + std::string(intent_id));
  json::object object = impl::charge_json(*pi);
  if (edit)
    edit(object);
  return wrap(type, std::move(object), 0, kWebhookSecret);
}

stripe_fixture::delivery stripe_fixture::dispute_event(std::string_view intent_id, std::string_view type,
                                                       std::string_view dispute_id, uint64_t amount,
                                                       std::string_view status,
                                                       const std::function<void(json::object& dispute)>& edit) const {
  const auto pi = find_intent(intent_id);
  if (!pi || pi->latest_charge.empty())
    throw std::runtime_error("stripe fixture: no charge of " + std::string(intent_id));
  // https://docs.stripe.com/api/disputes/object
  json::object object{
      {"id", dispute_id},
      {"object", "dispute"},
      {"amount", amount},
      {"balance_transactions", json::array{}},
      {"charge", pi->latest_charge},
      {"created", impl::unix_now()},
      {"currency", pi->currency},
      {"evidence", json::object{}},
      {"evidence_details",
       json::object{{"due_by", nullptr}, {"has_evidence", false}, {"past_due", false}, {"submission_count", 0}}},
      {"is_charge_refundable", false},
      {"livemode", false},
      {"metadata", json::object{}},
      {"payment_intent", pi->id},
      {"reason", "fraudulent"},
      {"status", status}};
  if (edit)
    edit(object);
  return wrap(type, std::move(object), 0, kWebhookSecret);
}

}  // namespace enact::test
