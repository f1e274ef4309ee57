// SPDX-License-Identifier: Apache-2.0
// `enact::billing::dev_provider`: the payment provider of a server run with --dev (docs/protocol.md §2
// "Billing"). No money moves: an intent is created in "requires_payment_method" and moves to
// "succeeded" when it is confirmed (retrieve_intent with confirm = true). Intents live in a small
// SQLite file (WAL) so that a payment created before a restart can still be confirmed after it.
// Ids are `pi_dev_` + 24 random hex digits, client secrets `<id>_secret_` + 32 random hex digits.
// It refuses what Stripe would refuse: amounts outside [kMinAmountCents, kMaxAmountCents], an
// idempotency key reused with different parameters. Thread-safe.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "billing/payment_provider.hpp"

namespace enact::storage {
class connection;
}  // namespace enact::storage

namespace enact::billing {

class dev_provider final : public payment_provider {
 public:
  /// Opens (creating when missing) the intent store at `sqlite_path`. Fails with
  /// billing_errc::unavailable when the file cannot be opened or its schema created.
  [[nodiscard]] static result<std::unique_ptr<dev_provider>> open(const std::string& sqlite_path);

  ~dev_provider() override;
  dev_provider(const dev_provider&) = delete;
  dev_provider& operator=(const dev_provider&) = delete;

  [[nodiscard]] std::string_view mode() const noexcept override { return "dev"; }
  [[nodiscard]] std::string publishable_key() const override { return "pk_dev_enact"; }
  /// An empty `idempotency_key` creates a new intent on every call.
  [[nodiscard]] result<payment_intent> create_intent(uint64_t amount_cents, std::string_view account_ref,
                                                     std::string_view idempotency_key) override;
  /// Unknown or malformed ids fail with billing_errc::unknown_intent. Confirming an intent that
  /// already succeeded leaves it as it is.
  [[nodiscard]] result<payment_intent> retrieve_intent(std::string_view id, bool confirm) override;

 private:
  explicit dev_provider(std::unique_ptr<storage::connection> db) noexcept;

  std::mutex mutex_;  // one connection, used by one thread at a time
  std::unique_ptr<storage::connection> db_;
};

}  // namespace enact::billing
