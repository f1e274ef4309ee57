// SPDX-License-Identifier: Apache-2.0
// Stripe webhooks (docs/protocol.md §2 "Billing", POST /billing/stripe/webhook): the signature
// check of https://docs.stripe.com/webhooks#verify-manually and the event's reading.
//
// The `Stripe-Signature` header is `t=<unix seconds>,v1=<hex>[,v1=<hex>…][,v0=…]`: each v1 is
// HMAC-SHA256 keyed with the endpoint secret over `<t>.<exact body>`. The delivery is genuine when
// any v1 matches (several appear while the secret is being rolled), compared in constant time;
// other schemes (v0) are ignored. A genuine delivery whose t is more than the tolerance away from
// now is refused as expired, so a captured delivery cannot be replayed later. A replay within the
// window is harmless: a payment is credited once (metering store).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "billing/payment_provider.hpp"
#include "enact/bytes.hpp"

namespace enact::billing {

/// The longest Stripe-Signature header read; a longer one is signature_invalid.
inline constexpr size_t kMaxSignatureHeader = 4096;

/// signature_invalid (no header, malformed, no v1 matching), signature_expired (|now − t| over
/// `tolerance_s`); checked in that order, so only a genuine signature can be reported expired.
[[nodiscard]] result<void> verify_stripe_signature(std::string_view payload, std::string_view header, bytes_view secret,
                                                   int64_t now, int64_t tolerance_s);

/// The HMAC-SHA256 of `<timestamp>.<payload>` under `secret`, as lowercase hex: what a v1 entry
/// carries.
[[nodiscard]] std::string stripe_signature(std::string_view payload, bytes_view secret, int64_t timestamp);

/// Reads a verified event: `id`, `type`, and for a payment intent in `data.object` its id,
/// amount, currency, status and metadata.account; for charge.refunded the charge's id, intent,
/// currency and amount_refunded; for charge.dispute.* the dispute's id, charge, intent, currency,
/// amount and status. bad_event when these are missing or ill-typed.
[[nodiscard]] result<webhook_event> parse_stripe_event(std::string_view payload);

}  // namespace enact::billing
