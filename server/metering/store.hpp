// SPDX-License-Identifier: Apache-2.0
// `enact::metering::store`: the money of the core service, kept off the chain (docs/architecture.md
// §1 and §4 "Request path of run action"): per-account credit balances, the payments that credit
// them, per-usage-key spending against the key's cap, the reservations of runs in flight, and the
// usage and payment histories. The permission ledger keeps permissions only; a run costs no chain
// transaction.
//
// Rules every backend keeps (tests/metering runs one conformance suite on each):
//   - a payment is recorded once per id (ids are global across accounts) and credits its account
//     at most once: a second credit of the same id changes nothing and answers the first credit's
//     result (`credited_now` false), so a replayed confirmation or webhook never pays twice;
//   - `reserve` holds credits for a run: it fails with insufficient_credits when the balance less
//     the account's open reservations is short, and with cap_exceeded when the key's spending plus
//     its open reservations plus the amount would pass the key's cap (0: no cap);
//   - `settle` debits at most what was reserved (over_reserved otherwise) and closes the
//     reservation; `release` closes it without a charge; both only for the reservation's own
//     account (another account's id is unknown_reservation, as an unknown id is);
//   - every reservation carries an expiry: an expired one no longer holds credits, cannot be
//     settled (unknown_reservation), and is deleted by the next write of its account or by
//     `release_expired`, so the runs of a server that crashed are released, never charged twice;
//   - a single-use value (`use_once`) is recorded once until it expires: of all the calls with
//     one id before then, on one server or several, exactly one answers true;
//   - a payment taken back (a refund or a dispute, `reverse_payment`) is recorded once per event
//     id and debits its account by what it adds to the payment's reversed total, never twice:
//     what the balance lacks is kept as credits the account owes, which the next credits pay
//     first (docs/protocol.md §2 "Billing");
//   - a balance never goes below zero and stays within int64; concurrent callers (threads, or
//     servers sharing one PostgreSQL) never lose an update: SQLite writes in one writer
//     transaction, PostgreSQL locks the account row (SELECT … FOR UPDATE) and debits with a
//     conditional UPDATE … WHERE balance >= $n.
// Backends: SQLite (sqlite_store.hpp, in the data directory by default) and PostgreSQL
// (pg_store.hpp, for several servers sharing the work).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "enact/api/core.hpp"
#include "enact/bytes.hpp"
#include "enact/error.hpp"
#include "enact/result.hpp"

namespace enact::metering {

enum class metering_errc {
  insufficient_credits = 1,  // the balance less the open reservations is below the amount
  cap_exceeded,              // the usage key's spending cap would be passed
  unknown_reservation,       // no open reservation with that id for the account (or it expired)
  over_reserved,             // settle of more than was reserved
  unknown_payment,           // no payment with that id for the account
  duplicate_payment,         // record of a payment id that exists already
  invalid_argument,          // an amount of 0, an empty id, a value out of range
  storage,                   // the database failed
  unknown_claim,             // no open claim of that idempotency key for this request
};

namespace detail {
inline const std::error_category& metering_category() noexcept {
  static const enact::detail::errc_category<metering_errc> c(
      "enact.metering",
      {"", "insufficient credits", "spending cap exceeded", "unknown reservation", "over reserved", "unknown payment",
       "duplicate payment", "invalid argument", "storage failure", "unknown idempotency claim"});
  return c;
}
}  // namespace detail
inline std::error_code make_error_code(metering_errc e) noexcept {
  return {static_cast<int>(e), detail::metering_category()};
}

using account_hash = hash256;  // the account's apiKeyHash
using key_hash = hash256;      // keccak256 of the key that pays (the account hash for the account key)

/// Milliseconds since the Unix epoch: every instant the store keeps.
using millis = int64_t;

/// How a payment was taken back (docs/protocol.md §2 "Billing", GET /billing/payments).
enum class reversal_kind { refund, dispute, dispute_won };
[[nodiscard]] std::string_view to_string(reversal_kind k) noexcept;

/// One reversal as recorded: a refund's increase of the amount refunded, a dispute's amount, or
/// (dispute_won) the amount a won dispute gave back.
struct reversal {
  std::string event_id;  // the provider's event that reported it
  reversal_kind kind = reversal_kind::refund;
  std::string ref;  // the charge (refund) or the dispute it is about
  uint64_t amount_cents = 0;
  millis created_at = 0;
};

/// A payment of the account, recorded when its intent is created and credited once it succeeded.
struct payment {
  std::string id;  // the provider's payment intent id
  account_hash account{};
  uint64_t amount_cents = 0;  // credits it brings (1 credit = 1 US cent)
  std::string provider;       // "dev", "stripe"
  bool credited = false;
  millis created_at = 0;
  std::optional<millis> credited_at;
  uint64_t balance_after = 0;  // the account's balance right after the credit (0 until credited)
  /// What refunds and open or lost disputes take back now (at most amount_cents), and the
  /// reversals recorded, oldest first.
  uint64_t reversed_cents = 0;
  std::vector<reversal> reversals;
};

/// A reversal the provider reported, as `reverse_payment` takes it.
struct reversal_request {
  std::string event_id;    // the provider's event id: a second call with it changes nothing
  std::string payment_id;  // the payment intent the charge belongs to
  std::string provider;    // the payment's provider ("stripe"); another provider's is unknown
  reversal_kind kind = reversal_kind::refund;
  std::string ref;  // the charge (refund) or dispute id
  /// refund: the charge's cumulative amount refunded; dispute, dispute_won: the dispute's amount.
  uint64_t amount_cents = 0;
};

/// What a reversal did: `applied_now` false when the event was recorded before or adds nothing
/// (an older refund total, a dispute already known); the account's standing after it.
struct reversal_result {
  account_hash account{};
  bool applied_now = false;
  uint64_t reversed_cents = 0;  // the payment's total taken back now
  uint64_t balance = 0;
  uint64_t owed = 0;  // credits the account owes (its balance is 0 then)
};

/// What a credit answered: the balance after the first credit of the payment, and whether this
/// call made it (false: credited before, nothing changed).
struct credit_result {
  uint64_t balance = 0;
  bool credited_now = false;
};

/// A run's hold on credits.
struct reserve_request {
  account_hash account{};
  key_hash key{};
  uint64_t amount = 0;
  uint64_t key_cap = 0;  // the key's spending cap (setUsageApiKey's balance); 0: none
  std::string run_id;    // recorded in the usage history when settled
  std::chrono::milliseconds ttl{std::chrono::minutes(10)};  // open at most this long
};

struct reservation {
  std::string id;
  account_hash account{};
  key_hash key{};
  uint64_t amount = 0;
  std::string run_id;
  millis expires_at = 0;
};

/// One settled charge, as the usage history lists it.
struct usage_record {
  std::string run_id;
  key_hash key{};
  uint64_t amount = 0;
  millis at = 0;
};

/// A usage key's spending: settled charges and the open reservations' credits.
struct key_spending {
  uint64_t spent = 0;
  uint64_t reserved = 0;
};

/// A page of a history, newest first; `number` from 1 (the wire model's type).
using page_request = api::page_request;
template <class T>
struct page {
  std::vector<T> items;
  uint64_t total = 0;
};

/// How long an Idempotency-Key names its first request's answer (docs/protocol.md §0
/// "Idempotency"): a key older than this is free again, and `expire_idempotency` deletes it.
inline constexpr std::chrono::hours kIdempotencyRetention{24};

/// Expired single-use values `expire_nonces` deletes in one transaction at most.
inline constexpr uint64_t kNonceExpiryBatch = 1000;

/// A request under an Idempotency-Key, as `claim_idempotency` takes it. Keys are per account:
/// the same key of two accounts names two unrelated requests.
struct idempotency_request {
  account_hash account{};
  std::string key;  // the Idempotency-Key header: 1 to 255 printable ASCII characters
  /// What makes two requests the same (the caller's hash of route, credential and body): the
  /// key's first request and a later one with another fingerprint are different requests.
  hash256 fingerprint{};
  /// How long the claim stays the claimant's while it runs: the longest the request may take
  /// (the core's is the run's budget, core/idempotency.hpp). A claim not answered within it (its
  /// server died) is taken over by the next request with the key; never before.
  std::chrono::milliseconds lease{std::chrono::minutes(15)};
  /// Who claims (a random token per request): keep_answer and drop_claim act only on the claim
  /// this owner holds, so a claimant whose lease ran out and was taken over cannot answer or free
  /// the key under its new claimant. At most 64 characters; empty is an owner like any other.
  std::string owner;
};

/// The answer kept for a key: the HTTP status and the exact body sent.
struct kept_answer {
  int status = 0;
  std::string body;
};

/// What a claim found.
enum class claim_state {
  claimed,      // the key was free (new, older than the retention and answered or no longer leased,
                // or its claimant's lease ran out):
                // the caller runs the request, then keep_answer or drop_claim
  answered,     // the same request was answered: `answer` is that answer
  in_progress,  // the same request runs now, on this or another server
  mismatch,     // the key names a different request (another fingerprint) of the account
};
struct idempotency_claim {
  claim_state state = claim_state::claimed;
  std::optional<kept_answer> answer;  // set when answered
  /// When in_progress: the instant (store clock) the claimant's lease ends, after which the next
  /// request takes the key over (a 409's Retry-After counts down to it).
  millis lease_until = 0;
};

/// Every method is safe to call from several threads at once (and, on PostgreSQL, from several
/// servers: an SQLite file serves one store at a time); each write is atomic.
class store {
 public:
  virtual ~store() = default;

  /// Credits the account holds (settled charges deducted; open reservations not): 0 for an account
  /// the store has not seen.
  [[nodiscard]] virtual result<uint64_t> balance(const account_hash& account) const = 0;
  /// The balance less the open, unexpired reservations: what a new reservation may take.
  [[nodiscard]] virtual result<uint64_t> available(const account_hash& account) const = 0;

  /// Records a payment created with the provider, uncredited (duplicate_payment when the id is
  /// known, for any account).
  [[nodiscard]] virtual result<void> record_payment(const payment& p) = 0;
  /// The account's payment `id` (unknown_payment when none, or when it is another account's).
  [[nodiscard]] virtual result<payment> get_payment(const account_hash& account, std::string_view id) const = 0;
  /// Credits the recorded payment `id` to its account once; a second call answers the first
  /// credit's balance with credited_now false.
  [[nodiscard]] virtual result<credit_result> credit_payment(const account_hash& account, std::string_view id) = 0;
  /// Records a refund or dispute of the payment `r.payment_id` (of any account) and, when the
  /// payment was credited, moves its account by the change of the payment's reversed total in
  /// the same transaction: a debit the balance cannot cover is owed, a won dispute pays what is
  /// owed first. The reversed total counts the highest refund total reported plus the open and
  /// lost disputes, capped at the payment's amount, so redelivered or reordered events never
  /// debit twice. A payment credited later brings its amount less what was reversed.
  /// unknown_payment (no such payment of that provider), invalid_argument (an empty id, an amount
  /// above the payment's).
  [[nodiscard]] virtual result<reversal_result> reverse_payment(const reversal_request& r) = 0;
  /// Credits the account owes after reversals (0 for most): it cannot reserve until they are paid.
  [[nodiscard]] virtual result<uint64_t> owed(const account_hash& account) const = 0;

  /// Holds `r.amount` credits for a run (insufficient_credits, cap_exceeded).
  [[nodiscard]] virtual result<reservation> reserve(const reserve_request& r) = 0;
  /// Debits `amount` (at most what was reserved; 0 charges nothing) and closes the reservation;
  /// returns the account's balance after it.
  [[nodiscard]] virtual result<uint64_t> settle(const account_hash& account, std::string_view reservation_id,
                                                uint64_t amount) = 0;
  /// Closes the reservation without a charge.
  [[nodiscard]] virtual result<void> release(const account_hash& account, std::string_view reservation_id) = 0;
  /// Deletes every expired reservation; returns how many.
  [[nodiscard]] virtual result<uint64_t> release_expired() = 0;

  [[nodiscard]] virtual result<key_spending> spending(const account_hash& account, const key_hash& key) const = 0;
  /// Settled charges of the account, newest first.
  [[nodiscard]] virtual result<page<usage_record>> usage(const account_hash& account, page_request p) const = 0;
  /// Payments of the account (credited or not), newest first.
  [[nodiscard]] virtual result<page<payment>> payments(const account_hash& account, page_request p) const = 0;

  /// Takes the key for its request, or reports what holds it (claim_state). Atomic: of requests
  /// racing for one free key, on one server or several, exactly one is `claimed`; so is exactly
  /// one of those racing to take over a claim whose lease ran out (a compare-and-set on the
  /// claim's owner and lease), and a claim whose lease holds is never taken over.
  [[nodiscard]] virtual result<idempotency_claim> claim_idempotency(const idempotency_request& r) = 0;
  /// Keeps the claimed request's answer for the key's later requests (unknown_claim when the
  /// claim is not open or not `r.owner`'s: answered already, dropped, or taken over).
  [[nodiscard]] virtual result<void> keep_answer(const idempotency_request& r, const kept_answer& a) = 0;
  /// Frees a claimed key without an answer (the request had no effect; a retry may run it); only
  /// the owner's open claim (unknown_claim otherwise).
  [[nodiscard]] virtual result<void> drop_claim(const idempotency_request& r) = 0;
  /// Extends the owner's open claim to `r.lease` from now, on condition that it is still
  /// `r.owner`'s, unanswered and its lease has not ended (a compare-and-set): unknown_claim
  /// otherwise (taken over, or free to be). The claimant calls it right before the request's
  /// effect, and makes no effect when it fails: a request delayed past its lease never runs
  /// beside the one that took it over.
  [[nodiscard]] virtual result<void> renew_claim(const idempotency_request& r) = 0;
  /// `settle` and `keep_answer` in one transaction: the run's charge and the answer that reports
  /// it are kept together or not at all, so a server killed in between leaves neither (the
  /// reservation expires uncharged, the claim is taken over and runs once) and never a charge
  /// whose answer is lost (a retry would run and charge again). Fails with either's error.
  [[nodiscard]] virtual result<uint64_t> settle_and_keep(const account_hash& account, std::string_view reservation_id,
                                                         uint64_t amount, const idempotency_request& r,
                                                         const kept_answer& a) = 0;
  /// Deletes every key older than kIdempotencyRetention that is answered or whose lease ended
  /// (a live claim is its claimant's until it ends); returns how many.
  [[nodiscard]] virtual result<uint64_t> expire_idempotency() = 0;

  /// Records the use of a single-use value (a wallet-proof envelope's nonce, docs/protocol.md
  /// §2), named by `id` (the caller hashes signer, kind and nonce into it), kept until
  /// `expires_at` (store clock). True when this call recorded it; false when it was already
  /// recorded and has not expired (a replay). Exactly one of several concurrent calls with one id
  /// gets true, also across servers sharing one PostgreSQL store. An id whose use expired is
  /// recorded again (true, kept until the new `expires_at`). invalid_argument when `expires_at`
  /// is not after the store's now: such a use would be forgotten at once, and a replay taken for
  /// a first use.
  [[nodiscard]] virtual result<bool> use_once(const hash256& id, millis expires_at) = 0;
  /// Deletes the uses that expired, kNonceExpiryBatch rows per transaction so that the writes
  /// queued beside the sweep wait for one batch at most; returns how many.
  [[nodiscard]] virtual result<uint64_t> expire_nonces() = 0;
};

/// The clock a store reads (tests move it); the system clock by default.
using clock_fn = std::function<millis()>;
[[nodiscard]] millis system_now();

}  // namespace enact::metering

ENACT_ERRC_ENUM(enact::metering::metering_errc)
