// SPDX-License-Identifier: Apache-2.0
// Credits held for a call while it runs (docs/architecture.md §4 "Request path of run action"):
// a run of an action, or an API-mode write relayed for its surcharge, reserves its price in the
// metering store before it starts and debits it once it is done; a call that fails before its
// effect, or never finishes (the server was killed: the reservation expires), is not charged.
// Reservations are the store's, so several servers sharing one PostgreSQL metering store never
// promise the same credits twice.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "core/route.hpp"
#include "metering/store.hpp"

namespace enact::core {

/// How long the hold of a relayed ledger write (its surcharge) stays open at most: the write
/// waits for its receipt (60 s per send with the evm ledger, behind the relayer's earlier
/// transactions of the same nonce sequence), so only a crashed server's write holds expire, after
/// 15 minutes.
inline constexpr std::chrono::minutes kCreditHoldTtl{15};

/// What a run may take beyond its parts' own limits: the metering store's writes, and a loaded
/// machine's scheduling.
inline constexpr std::chrono::seconds kRunMargin{30};

/// The longest a run_action request takes (docs/protocol.md §0 "Idempotency"): the code's fetch
/// from the IPFS gateway (config::gateway_timeout_ms, when a gateway is configured), the wait for an idle sandbox
/// worker (runtime::pool_config::queue_timeout), the run's wall time (config::run_timeout_ms; every Enact.fetch ends
/// within it) and the worker's kill grace, plus kRunMargin. With the defaults 5 + 10 + 1 + 30 = 46 s, 56 s with a
/// gateway. A run's hold expires after it (the credits of a server killed mid-run come back then), and an
/// Idempotency-Key's claim is leased for it.
[[nodiscard]] std::chrono::milliseconds run_budget(const config& cfg);

/// A reservation of the caller's credits, released when it goes away unsettled.
class credit_hold {
 public:
  /// Reserves `amount` for the caller of `c` (its account, its key and the key's cap), named
  /// after `run_id` in the usage history: 402 insufficient_credits when the balance less the
  /// open holds, or the key's cap less its spending, is short; 503 without a metering store.
  /// The hold expires after `ttl` unless settled or released first: run_budget for a run,
  /// kCreditHoldTtl for a relayed write.
  [[nodiscard]] static result<credit_hold> take(const request_context& c, uint64_t amount, std::string run_id,
                                                std::chrono::milliseconds ttl);

  credit_hold(credit_hold&& o) noexcept;
  /// Releases the hold this one had, and takes over `o`'s.
  credit_hold& operator=(credit_hold&& o) noexcept;
  credit_hold(const credit_hold&) = delete;
  credit_hold& operator=(const credit_hold&) = delete;
  ~credit_hold();

  /// Debits what was reserved; afterwards the hold is closed.
  [[nodiscard]] result<void> settle();
  /// Debits `amount` (at most what was reserved) and closes the hold: a run that reserved for
  /// the most fetches it may make pays for those it made.
  [[nodiscard]] result<void> settle(uint64_t amount);
  /// Debits `amount` and keeps the answer `a` for the Idempotency-Key request `q` in one store
  /// transaction (metering::store::settle_and_keep); on failure neither is made and the hold
  /// stays open.
  [[nodiscard]] result<void> settle_keeping(uint64_t amount, const metering::idempotency_request& q,
                                            const metering::kept_answer& a);
  /// Whether the hold expired (store clock): its credits are no longer held, so what it covered
  /// must not start (it would go unpaid).
  [[nodiscard]] bool expired() const;
  /// Gives the credits back now.
  void release() noexcept;

 private:
  credit_hold(metering::store& s, metering::reservation r) : store_(&s), r_(std::move(r)) {}
  metering::store* store_;
  std::optional<metering::reservation> r_;
};

}  // namespace enact::core
