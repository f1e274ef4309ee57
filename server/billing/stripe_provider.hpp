// SPDX-License-Identifier: Apache-2.0
// `enact::billing::stripe_provider`: card payments through Stripe's HTTP API (docs/protocol.md §2
// "Billing"). create_intent is `POST /v1/payment_intents` (form-encoded amount, currency=usd,
// metadata[account], automatic_payment_methods[enabled]=true, with an Idempotency-Key header);
// retrieve_intent is `GET /v1/payment_intents/{id}`. The customer's browser confirms the payment
// with the client secret, so `confirm` is ignored here: the server only reads the status.
//
// charge_intent is `GET /v1/charges/{id}`, read for its payment_intent when a refund or dispute
// event does not name it.
//
// Errors: 404 resource_missing → unknown_intent; 429, 5xx, connection failure or timeout →
// unavailable; 401 and 403 (the secret key refused: the server is misconfigured, and the client
// cannot fix it) → unavailable, not retried; any other 4xx → provider_error carrying Stripe's
// message; an answer that is not a payment intent → bad_response. Requests that failed with unavailable (or 409, or
// that Stripe marks with `Stripe-Should-Retry: true`) are retried up to twice; a create is retried with the same
// Idempotency-Key, which Stripe guarantees cannot create a second intent.
//
// Webhooks (POST /core/v1/billing/stripe/webhook) are verified with the endpoint's signing secret
// (stripe_webhook.hpp). The secret key and the webhook secret are held as `enact::Secret`s; the
// secret key is sent only in the Authorization header, and neither is put into an error message. Thread-safe;
// connections are kept alive and reused.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "billing/payment_provider.hpp"
#include "enact/secret.hpp"

namespace enact::billing {

struct stripe_config {
  /// Scheme, host, optional port and optional path prefix; http:// serves local test fixtures.
  std::string api_base = "https://api.stripe.com";
  Secret secret_key;            // "sk_live_…" / "sk_test_…"
  std::string publishable_key;  // "pk_live_…" / "pk_test_…", handed to browsers
  /// Applies separately to connecting, sending and each read of one attempt.
  int timeout_ms = 10000;
  /// The webhook endpoint's signing secret ("whsec_…"); empty: webhooks are refused (no_webhook).
  Secret webhook_secret;
  /// How far a webhook's signed timestamp may be from now, seconds (Stripe's libraries: 300).
  int64_t webhook_tolerance_s = 300;
};

class stripe_provider final : public payment_provider {
 public:
  /// The Stripe API version every request pins, so a change of the account's default version
  /// cannot change the responses parsed here.
  static constexpr std::string_view kApiVersion = "2024-06-20";
  /// Retries after the first attempt for a transient failure.
  static constexpr int kMaxRetries = 2;

  /// Checks the configuration (api_base a http(s) URL, keys non-empty printable ASCII, timeout
  /// positive); fails with std::errc::invalid_argument naming the field. Makes no request.
  [[nodiscard]] static result<std::unique_ptr<stripe_provider>> create(stripe_config config);

  ~stripe_provider() override;
  stripe_provider(const stripe_provider&) = delete;
  stripe_provider& operator=(const stripe_provider&) = delete;

  [[nodiscard]] std::string_view mode() const noexcept override { return "stripe"; }
  [[nodiscard]] std::string publishable_key() const override;
  /// An empty `idempotency_key` is replaced by a random one for this call, so retries of this
  /// call stay safe but a new call creates a new intent.
  [[nodiscard]] result<payment_intent> create_intent(uint64_t amount_cents, std::string_view account_ref,
                                                     std::string_view idempotency_key) override;
  /// An id that is not `pi_` + [A-Za-z0-9_] fails with unknown_intent without any request.
  [[nodiscard]] result<payment_intent> retrieve_intent(std::string_view id, bool confirm) override;
  /// An id that is not `ch_`/`py_` + [A-Za-z0-9_] fails with unknown_intent without any request.
  [[nodiscard]] result<std::string> charge_intent(std::string_view charge_id) override;
  /// The `Stripe-Signature` header checked against webhook_secret (stripe_webhook.hpp).
  [[nodiscard]] result<webhook_event> verify_webhook(std::string_view payload,
                                                     std::string_view signature) const override;

 private:
  struct state;
  explicit stripe_provider(std::unique_ptr<state> s) noexcept;
  std::unique_ptr<state> s_;
};

}  // namespace enact::billing
