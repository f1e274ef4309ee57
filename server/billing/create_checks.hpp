// SPDX-License-Identifier: Apache-2.0
// Checks every provider applies to a create request before acting on it, so the dev provider
// refuses exactly what Stripe would refuse and a bad request never reaches the network.
// Internal to enact_server_billing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "billing/payment_provider.hpp"

namespace enact::billing::detail {

/// Stripe's limit on an Idempotency-Key header value.
inline constexpr size_t kMaxIdempotencyKeyLength = 255;
/// Stripe's limit on a metadata value (the account reference travels as `metadata[account]`).
inline constexpr size_t kMaxAccountRefLength = 500;

/// True when every character is printable ASCII, so the value is safe in an HTTP header.
[[nodiscard]] inline bool is_printable_ascii(std::string_view s) noexcept {
  for (const char c : s)
    if (c < 0x20 || c > 0x7e)
      return false;
  return true;
}

[[nodiscard]] inline result<void> check_create_request(uint64_t amount_cents, std::string_view account_ref,
                                                       std::string_view idempotency_key) {
  if (amount_cents < kMinAmountCents)
    return fail(billing_errc::invalid_amount, "amount_cents: " + std::to_string(amount_cents) +
                                                  " is below the minimum of " + std::to_string(kMinAmountCents));
  if (amount_cents > kMaxAmountCents)
    return fail(billing_errc::invalid_amount, "amount_cents: " + std::to_string(amount_cents) +
                                                  " is above the maximum of " + std::to_string(kMaxAmountCents));
  if (account_ref.size() > kMaxAccountRefLength || !is_printable_ascii(account_ref))
    return fail(billing_errc::provider_error, "account_ref: expected at most " + std::to_string(kMaxAccountRefLength) +
                                                  " printable ASCII characters");
  if (idempotency_key.size() > kMaxIdempotencyKeyLength || !is_printable_ascii(idempotency_key))
    return fail(billing_errc::provider_error, "idempotency_key: expected at most " +
                                                  std::to_string(kMaxIdempotencyKeyLength) +
                                                  " printable ASCII characters");
  return {};
}

}  // namespace enact::billing::detail
