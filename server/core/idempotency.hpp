// SPDX-License-Identifier: Apache-2.0
// Idempotency-Key (docs/protocol.md §0 "Idempotency"): on the routes marked `idempotent`
// (run_action and the billing writes), a request carrying the header is run once per account and
// key within 24 hours. The key's first answer is kept in the metering store (so it survives a
// restart and holds across servers sharing one PostgreSQL) and a later request with the same key
// and the same request answers it again, status and body byte for byte, without running or
// charging anything; a different request under the key is refused with 422. Keys are the
// account's own: another account's request with the same key is a request of its own.
//
// "The same request" is the route, the credential that authenticated it (a key's hash, or the
// admin wallet for X-Wallet-Auth) and the parsed body, so another usage key of the same account
// cannot read an answer made for a key with other permissions either.
//
// Answers that had no effect (402, 429, 5xx: nothing ran, nothing was charged) are not kept: the
// key is freed and a retry runs. A request arriving while the first one with its key still runs
// waits for its answer (up to kIdempotencyWait, then 409 conflict with a Retry-After of the
// seconds until the claim's lease ends, at least 1).
//
// The claim is leased for the longest the request may take (core/credits.hpp run_budget: the
// run's wall time, the code's fetch, the wait for a sandbox worker, plus a margin). A claim whose
// lease ran out unanswered was its server's, killed mid-request: the next request with the key
// takes it over (of several, exactly one) and runs. A claim whose lease holds is never taken over,
// so a live request is never run twice: right before it runs, the claimant renews its claim
// (a compare-and-set on owner and live lease, renew()) and does not run when the claim is gone. Each claim is named by
// a random owner, so a claimant taken over can neither answer nor free the key of its successor.
//
// Kept answers are sealed at rest (docs/architecture.md "Idempotency-Key answers"): they carry
// secrets (a payment intent's client_secret, whatever an action returned), so the store holds
// `sealed:v1:` and the base64 of AES-256-GCM under the server key kAnswerSealPurpose (every server
// of a fleet shares the TEE root, so any of them opens what another kept). The sealed plaintext is
// the account hash and the request's fingerprint (32 bytes each) followed by the body, and opening
// checks both against the request answered: a sealed answer copied into another row (another
// account's, or another request's of the same account) does not open there. An answer that does
// not open is answered 500 internal, never by running the request again.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "core/route.hpp"
#include "metering/store.hpp"

namespace enact::tee {
class tee;
}

namespace enact::core {

/// The header's name.
inline constexpr std::string_view kIdempotencyHeader = "Idempotency-Key";
/// How long a request waits for the answer of the same request in progress.
inline constexpr std::chrono::seconds kIdempotencyWait{60};
/// The purpose label of the server key that seals kept answers (docs/protocol.md §1 "server keys").
inline constexpr std::string_view kAnswerSealPurpose = "core/idempotency-answer/v1";
/// What a sealed kept body starts with; the base64 of nonce ‖ ciphertext ‖ tag follows.
inline constexpr std::string_view kSealedAnswerPrefix = "sealed:v1:";

class idempotent_call {
 public:
  /// For a request of an idempotent route carrying the header: claims the key, or finds its
  /// kept answer (replay()). Nullopt when the route is not idempotent or the header is absent.
  /// 422 invalid_request (the answer's error_status) for another request under the key, 409 after
  /// waiting kIdempotencyWait for one in progress (with the answer's retry_after), 400 for a malformed key,
  /// 503 without a metering store or TEE, 500 internal for a kept answer that does not open for
  /// this request (tampered, sealed for another row or under another server key).
  [[nodiscard]] static result<std::optional<idempotent_call>> begin(const route& r, const request_context& c,
                                                                    answer& refusal);

  idempotent_call(idempotent_call&& o) noexcept;
  /// Frees the key this one had claimed, and takes over `o`'s.
  idempotent_call& operator=(idempotent_call&& o) noexcept;
  idempotent_call(const idempotent_call&) = delete;
  idempotent_call& operator=(const idempotent_call&) = delete;
  /// Frees the key when the request ended without finish() (an exception).
  ~idempotent_call();

  /// The answer kept for the key, opened, to send instead of running the request.
  [[nodiscard]] const std::optional<metering::kept_answer>& replay() const noexcept { return replay_; }

  /// Extends the claim by `lease` from now, right before the request's effect (the run): when
  /// the claim is no longer this call's (its lease ran out while the request was delayed, and a
  /// retry may have taken it over), 409 conflict with `retry_after` set, and the request must make no
  /// effect; finish() then leaves the key to its new claimant. A call without an open claim
  /// (replayed) has nothing to renew.
  [[nodiscard]] result<void> renew(std::chrono::milliseconds lease, int& retry_after);

  /// Keeps the answer sent (status and exact body, sealed), or frees the key when the answer had no
  /// effect (402, 429, 5xx). An error of the store is returned for the log: the answer stands.
  [[nodiscard]] result<void> finish(int status, const std::string& body);

  /// Keeps the answer (sealed) and debits the run's charge with it, in one store transaction (a run's
  /// answer under a key, the charge a handler answered). On failure nothing is charged or
  /// kept, the hold stays open (released when it goes away) and the key stays claimed: the
  /// caller answers the error and finish()es with it.
  [[nodiscard]] result<void> finish_charging(credit_hold& hold, uint64_t amount, int status, const std::string& body);

 private:
  /// Overwrites the opened answer's body (replay()), if any.
  void wipe_replay() noexcept;

  idempotent_call(metering::store& s, const tee::tee& t, metering::idempotency_request q)
      : store_(&s), tee_(&t), q_(std::move(q)) {}

  /// The answer as the store keeps it: sealed and bound to this call's account and fingerprint.
  [[nodiscard]] result<metering::kept_answer> sealed(int status, const std::string& body) const;

  metering::store* store_;
  const tee::tee* tee_;
  metering::idempotency_request q_;
  std::optional<metering::kept_answer> replay_;
  bool open_ = false;  // claimed by this call and not yet finished
};

}  // namespace enact::core
