// SPDX-License-Identifier: Apache-2.0
// `enact::billing::payment_provider`: where card payments for credits are made (docs/protocol.md §2
// "Billing"). The core routes create an intent for an amount, hand its client secret to the
// client, and on confirm retrieve it again and credit the account only when the provider says it
// succeeded; crediting is the ledger's job and happens once per intent id.
// Providers: `dev` (dev_provider.hpp: local, intents succeed on confirm, every response marked
// "mode": "dev", refused unless the server runs with --dev) and `stripe` (stripe_provider.hpp:
// Stripe's HTTP API).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <system_error>

#include "enact/error.hpp"
#include "enact/result.hpp"

namespace enact {

enum class billing_errc {
  unknown_intent = 1,  // the provider knows no such intent
  provider_error,      // the provider refused the request (4xx other than not-found)
  unavailable,         // the provider could not be reached, timed out or answered 5xx
  bad_response,        // the provider's answer could not be understood
  invalid_amount,      // amount not accepted (below the minimum, too large)
  no_webhook,          // this provider takes no webhooks, or no endpoint secret is configured
  signature_invalid,   // a webhook without a valid signature of the endpoint secret
  signature_expired,   // a webhook signed outside the tolerance window
  bad_event,           // a signed webhook whose event could not be understood
};

namespace detail {
inline const std::error_category& billing_category() noexcept {
  static const errc_category<billing_errc> c(
      "enact.billing",
      {"", "unknown payment intent", "payment provider refused the request", "payment provider unavailable",
       "unreadable payment provider response", "invalid amount", "no webhook endpoint", "webhook signature invalid",
       "webhook signature expired", "unreadable webhook event"});
  return c;
}
}  // namespace detail
inline std::error_code make_error_code(billing_errc e) noexcept {
  return {static_cast<int>(e), detail::billing_category()};
}

}  // namespace enact
ENACT_ERRC_ENUM(enact::billing_errc)

namespace enact::billing {

/// Smallest payment accepted (core-api spec, Limits).
inline constexpr uint64_t kMinAmountCents = 500;
/// Largest single payment accepted (Stripe's own limit for USD is $999,999.99).
inline constexpr uint64_t kMaxAmountCents = 99'999'999;

struct payment_intent {
  std::string id;             // "pi_…"
  std::string client_secret;  // handed to the client's payment form
  uint64_t amount_cents = 0;
  std::string currency = "usd";
  /// The provider's status: "requires_payment_method", "processing", "succeeded", "canceled", …
  std::string status;
};

/// A charge or a dispute an event is about (charge.refunded, charge.dispute.*; docs/protocol.md
/// §2 "Billing"): what finds its payment intent and what it takes back.
struct charge_object {
  std::string object;          // "charge" or "dispute"; "" when the event is about neither
  std::string id;              // "ch_…" or "dp_…"
  std::string charge;          // the charge: the object's own id, or the dispute's `charge`
  std::string payment_intent;  // "pi_…"; "" when the object does not name it
  /// charge: amount_refunded (cumulative over its refunds); dispute: amount.
  uint64_t amount_cents = 0;
  std::string currency;
  std::string status;  // the dispute's: "needs_response", "won", "lost", "warning_closed", …
};

/// An event the provider pushed to the server (a webhook), once its signature is verified.
struct webhook_event {
  std::string id;    // "evt_…"
  std::string type;  // "payment_intent.succeeded", …
  /// The payment intent the event is about (its `data.object`); an empty id for other objects.
  payment_intent intent;
  /// The intent's `metadata[account]`: the account reference create_intent attached ("" when none).
  std::string account_ref;
  /// The charge or dispute the event is about (its `data.object`), when it is one.
  charge_object charge;
};

class payment_provider {
 public:
  virtual ~payment_provider() = default;
  /// "dev" or "stripe"; the dev provider's responses carry it as "mode".
  [[nodiscard]] virtual std::string_view mode() const noexcept = 0;
  /// The key a browser payment form needs (GET /billing/stripe_config).
  [[nodiscard]] virtual std::string publishable_key() const = 0;
  /// Creates an intent for `amount_cents` USD cents. `account_ref` (the account hash as hex) is
  /// attached as metadata; `idempotency_key` makes a retried create return the same intent.
  [[nodiscard]] virtual result<payment_intent> create_intent(uint64_t amount_cents, std::string_view account_ref,
                                                             std::string_view idempotency_key) = 0;
  /// The intent as the provider sees it now. The dev provider moves an intent to "succeeded"
  /// when it is confirmed (retrieve with confirm = true); Stripe's status is whatever the
  /// customer's payment made it.
  [[nodiscard]] virtual result<payment_intent> retrieve_intent(std::string_view id, bool confirm) = 0;
  /// The payment intent of the charge `charge_id` ("" when the charge has none): unknown_intent
  /// when the provider knows no such charge.
  [[nodiscard]] virtual result<std::string> charge_intent(std::string_view charge_id) {
    (void)charge_id;
    return fail(billing_errc::unknown_intent, "this payment provider has no charges");
  }
  /// Verifies a webhook delivery (`payload` the exact body, `signature` the provider's signature
  /// header) and reads its event: signature_invalid, signature_expired, bad_event; no_webhook
  /// when this provider takes none (the dev provider) or has no endpoint secret.
  [[nodiscard]] virtual result<webhook_event> verify_webhook(std::string_view payload,
                                                             std::string_view signature) const {
    (void)payload;
    (void)signature;
    return fail(billing_errc::no_webhook, "no payment provider webhook is configured on this server");
  }
};

}  // namespace enact::billing
