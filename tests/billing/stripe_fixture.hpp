// SPDX-License-Identifier: Apache-2.0
// `enact::test::stripe_fixture`: a local stand-in for the two Stripe endpoints the server uses,
// for tests of the payment providers and of the core's billing routes (CMake target
// enact_test_stripe_fixture). It listens on a free loopback port from construction until
// destruction, in its own thread.
//
// What it answers, shaped like Stripe (https://docs.stripe.com/api/payment_intents):
//   POST /v1/payment_intents       form-encoded amount, currency, metadata[<key>],
//                                  automatic_payment_methods[enabled], optional description
//   GET  /v1/payment_intents/{id}
//   GET  /v1/charges/{id}          the charge a succeeded intent made (its latest_charge)
//   POST /v1/payment_intents/{id}/confirm   what Stripe.js sends for stripe.confirmPayment: form
//                                  key=<publishable key>, client_secret, payment_method
//                                  (pm_card_visa succeeds; pm_card_chargeDeclined is a 402
//                                  card_error card_declined, as Stripe's test payment methods);
//                                  answered with `Access-Control-Allow-Origin: *` since a page
//                                  calls it. A confirm that succeeds is followed, before it is
//                                  answered, by a signed payment_intent.succeeded delivery to the
//                                  webhook endpoint when one is set.
//   GET  /v3/                      the stand-in Stripe.js set with serve_script (404 without)
//   POST /_fixture/webhook_endpoint  (the secret key's Bearer) form url=<endpoint>, or empty to
//                                  stop deliveries: for a test in another process
// - Every request needs `Authorization: Bearer <secret key>`, else 401 with Stripe's error body
//   `{"error": {"type": "invalid_request_error", "message": …}}`.
// - Form checks as Stripe makes them, each a 400 with `error.code`: parameter_missing,
//   parameter_invalid_integer, parameter_unknown, amount_too_small (< 50), amount_too_large
//   (> 99999999); a currency other than usd or a boolean other than true/false is a 400 too.
// - Idempotency-Key: a repeated key with the same form replays the first response (with
//   `Idempotent-Replayed: true`); with a different form it is a 400 of type idempotency_error.
// - An unknown id is a 404 with code resource_missing; any other path a 404.
// Objects carry every field the API version pinned (2024-06-20) sends, null where unset
// (https://docs.stripe.com/api/payment_intents/object, /charges/object, /disputes/object).
// Events: `event` builds a webhook delivery for a stored intent (an `event` object whose
// data.object is the intent as GET would answer it), `charge_event` and `dispute_event` one whose
// data.object is the intent's charge or a dispute of it, and signs it as Stripe signs deliveries to an
// endpoint (https://docs.stripe.com/webhooks#verify-manually): `Stripe-Signature: t=<unix
// seconds>,v1=<HMAC-SHA256 of "<t>.<body>" under the endpoint secret>`.
// Failures injected with `fail_next` are answered before anything else is looked at, so they
// behave like an outage in front of Stripe: nothing is stored and no idempotency key is used up.
#pragma once

#include <boost/json/fwd.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace enact::test {

class stripe_fixture {
 public:
  /// The secret key the fixture accepts unless another is given.
  static constexpr std::string_view kSecretKey = "sk_test_enact_fixture_0000000000000000";

  /// An intent as stored, with what the client sent to create it.
  struct intent {
    std::string id;  // "pi_" + 24 alphanumerics
    std::string client_secret;
    uint64_t amount = 0;
    std::string currency;
    std::string status;  // "requires_payment_method" until set_status
    std::map<std::string, std::string> metadata;
    std::optional<bool> automatic_payment_methods;  // automatic_payment_methods[enabled]
    std::string idempotency_key;                    // "" when none was sent
    std::string latest_charge;                      // "ch_…" once succeeded
    uint64_t amount_refunded = 0;                   // the charge's, cumulative (refund)
  };

  /// The last request received (injected failures and refused requests included).
  struct request {
    std::string method;
    std::string path;
    std::string content_type;
    std::string idempotency_key;
    std::string stripe_version;
    std::map<std::string, std::string> form;  // decoded form fields of a POST
  };

  /// The publishable key confirmations from a browser must name unless another is set.
  static constexpr std::string_view kPublishableKey = "pk_test_enact";

  /// The webhook endpoint secret the fixture signs events with unless told another.
  static constexpr std::string_view kWebhookSecret = "whsec_enact_fixture_00000000000000000000";

  /// A webhook delivery: the exact body and its Stripe-Signature header.
  struct delivery {
    std::string event_id;  // "evt_…"
    std::string body;
    std::string signature;
  };

  /// Starts listening on 127.0.0.1 at a free port. Throws std::runtime_error if it cannot.
  explicit stripe_fixture(std::string secret_key = std::string(kSecretKey));
  /// Stops the server and joins its thread.
  ~stripe_fixture();
  stripe_fixture(const stripe_fixture&) = delete;
  stripe_fixture& operator=(const stripe_fixture&) = delete;

  /// "http://127.0.0.1:<port>", the api_base for stripe_provider.
  [[nodiscard]] std::string base_url() const;
  [[nodiscard]] int port() const;
  [[nodiscard]] const std::string& secret_key() const;

  /// Sets the status of a stored intent (as a customer's payment would). False if unknown.
  bool set_status(std::string_view id, std::string_view status);
  /// Answers the next `n` requests, whatever they are, with `status` and `body` (by default
  /// Stripe's api_error body). A 200 with a body that is not an intent tests unreadable answers.
  void fail_next(int n, int status = 500, std::string body = {});

  /// A `type` event about the stored intent `id` (as it is now; `edit` may change its JSON, as a
  /// forger would), signed with `secret` at `timestamp` (now when 0). Throws when `id` is unknown.
  [[nodiscard]] delivery event(std::string_view id, std::string_view type = "payment_intent.succeeded",
                               int64_t timestamp = 0, std::string_view secret = kWebhookSecret,
                               const std::function<void(boost::json::object& intent)>& edit = {}) const;
  /// Refunds `cents` more of the intent's charge (as a refund made in Stripe's dashboard would);
  /// returns the charge id. Throws when the intent has no charge (not succeeded).
  std::string refund(std::string_view intent_id, uint64_t cents);
  /// A `type` event (charge.refunded by default) whose data.object is the intent's charge as GET
  /// /v1/charges answers it; `edit` may change it.
  [[nodiscard]] delivery charge_event(std::string_view intent_id, std::string_view type = "charge.refunded",
                                      const std::function<void(boost::json::object& charge)>& edit = {}) const;
  /// A `type` event whose data.object is the dispute `dispute_id` of the intent's charge, of
  /// `amount` cents with `status`; `edit` may change it.
  [[nodiscard]] delivery dispute_event(std::string_view intent_id, std::string_view type, std::string_view dispute_id,
                                       uint64_t amount, std::string_view status,
                                       const std::function<void(boost::json::object& dispute)>& edit = {}) const;
  /// The v1 signature of `body` at `timestamp` under `secret` (lowercase hex).
  [[nodiscard]] static std::string sign(std::string_view body, int64_t timestamp,
                                        std::string_view secret = kWebhookSecret);

  /// Where a confirmation that succeeds delivers its payment_intent.succeeded event, signed with
  /// `secret` (synchronously, before the confirmation is answered); "" delivers nothing.
  void deliver_webhooks_to(std::string url, std::string secret = std::string(kWebhookSecret));
  /// The body GET /v3/ answers as text/javascript: a stand-in for Stripe.js.
  void serve_script(std::string body);
  /// The status of the last webhook delivery (0: none made, -1: the endpoint was unreachable).
  [[nodiscard]] int last_delivery_status() const;

  /// GET and POST requests received so far, whatever their path or outcome.
  [[nodiscard]] size_t requests() const;
  /// Intents stored so far.
  [[nodiscard]] size_t intent_count() const;
  [[nodiscard]] std::optional<intent> find_intent(std::string_view id) const;
  [[nodiscard]] std::optional<request> last_request() const;

 private:
  void deliver(const std::string& id);
  struct impl;
  std::unique_ptr<impl> impl_;
  [[nodiscard]] delivery wrap(std::string_view type, boost::json::object object, int64_t timestamp,
                              std::string_view secret) const;
};

}  // namespace enact::test
