// SPDX-License-Identifier: Apache-2.0
#include "core/idempotency.hpp"

#include <httplib.h>

#include <algorithm>
#include <array>
#include <thread>

#include "core/credits.hpp"
#include "core/errors.hpp"
#include "enact/codec/base64.hpp"
#include "enact/codec/hex.hpp"
#include "enact/crypto/keccak.hpp"
#include "enact/crypto/random.hpp"
#include "enact/secret.hpp"
#include "tee/tee.hpp"

namespace enact::core {
namespace {

/// The route, the credential and the body: what makes two requests under one key the same.
hash256 fingerprint(const route& r, const request_context& c) {
  std::string text(r.method);
  text += ' ';
  text += r.path;
  text += '\n';
  text += c.who->wallet_auth ? "wallet " + codec::hex::encode(c.who->account.admin)
                             : "key " + codec::hex::encode(c.who->key_hash);
  text += '\n';
  text += json::serialize(c.body);
  return crypto::keccak256(std::string_view(text));
}

/// Names this request's claim (metering::idempotency_request::owner).
std::string owner_token() {
  std::array<uint8_t, 16> b{};
  crypto::random_bytes(b);
  return codec::hex::encode(b);
}

/// Answers that leave no effect behind: nothing ran and nothing was charged.
bool had_no_effect(int status) { return status == 402 || status == 429 || status >= 500; }

/// What a sealed answer is bound to: the account and the request (fingerprint()), in this order
/// ahead of the body in the sealed plaintext.
constexpr size_t kBindingSize = 2 * sizeof(hash256);

/// The kept body `stored` opened for the request `q`. The error (for the log, 500 to the caller)
/// names why it does not open, never the body.
result<std::string> open_answer(const tee::tee& t, const metering::idempotency_request& q, const std::string& stored) {
  // A body kept before answers were sealed is plain JSON: replayed as it is. Such rows expire
  // within 24 hours of this change (docs/protocol.md §0 "Idempotency").
  if (stored.starts_with('{'))
    return stored;
  const auto refused = [&](std::string_view why) {
    return fail(api_errc::internal,
                "the answer kept for Idempotency-Key " + q.key + " does not open: " + std::string(why));
  };
  if (!stored.starts_with(kSealedAnswerPrefix))
    return refused("not a sealed answer");
  auto sealed = codec::base64::decode(std::string_view(stored).substr(kSealedAnswerPrefix.size()), "kept answer");
  if (!sealed)
    return refused("not base64");
  auto opened = t.server_unseal(kAnswerSealPurpose, *sealed);
  if (!opened)
    return refused("the seal does not open (tampered, or sealed under another server key)");
  bytes& plain = *opened;
  const wipe_on_exit wipe(plain);
  if (plain.size() < kBindingSize || !std::equal(q.account.begin(), q.account.end(), plain.begin()) ||
      !std::equal(q.fingerprint.begin(), q.fingerprint.end(), plain.begin() + sizeof(hash256)))
    return refused("sealed for another account or request");
  return std::string(plain.begin() + kBindingSize, plain.end());
}

}  // namespace

result<std::optional<idempotent_call>> idempotent_call::begin(const route& r, const request_context& c,
                                                              answer& refusal) {
  if (!r.idempotent || !c.who || !c.http.has_header(std::string(kIdempotencyHeader)))
    return std::optional<idempotent_call>();
  if (c.svc.metering == nullptr)
    return fail(api_errc::unavailable, "no metering store configured: Idempotency-Key cannot be kept");
  if (c.svc.tee == nullptr)
    return fail(api_errc::unavailable, "no TEE configured: Idempotency-Key answers cannot be sealed");
  metering::idempotency_request q;
  q.account = c.who->account.hash;
  q.key = c.http.get_header_value(std::string(kIdempotencyHeader));
  q.fingerprint = fingerprint(r, c);
  // Leased for the longest the request may take: a claim still open after it is a dead server's.
  // The run's budget also covers the billing writes (one payment provider call each).
  q.lease = run_budget(c.cfg);
  q.owner = owner_token();
  idempotent_call call(*c.svc.metering, *c.svc.tee, std::move(q));
  const auto deadline = std::chrono::steady_clock::now() + kIdempotencyWait;
  auto pause = std::chrono::milliseconds(10);
  for (;;) {
    auto claim = call.store_->claim_idempotency(call.q_);
    if (!claim) {
      if (claim.code() == metering::metering_errc::invalid_argument)
        return fail(api_errc::invalid_request, claim.err().message + " (1 to 255 characters)");
      return claim.err();
    }
    switch (claim->state) {
      case metering::claim_state::claimed:
        call.open_ = true;
        return std::optional<idempotent_call>(std::move(call));
      case metering::claim_state::answered: {
        // An answer that does not open is refused, and the request is not run again: the key was
        // answered once, and a run now would be a second effect under it.
        ENACT_TRY(claim->answer->body, open_answer(*call.tee_, call.q_, claim->answer->body));
        call.replay_ = std::move(claim->answer);
        return std::optional<idempotent_call>(std::move(call));
      }
      case metering::claim_state::mismatch:
        refusal.error_status = 422;
        return fail(api_errc::invalid_request,
                    "Idempotency-Key " + call.q_.key +
                        " was used for a different request (another route, credential or body) within 24 hours; "
                        "use a new key for a new request");
      case metering::claim_state::in_progress:
        break;
    }
    if (std::chrono::steady_clock::now() + pause > deadline) {
      // Retry-After: until the claimant's lease ends, when a retry finds its answer or takes over.
      const metering::millis left = claim->lease_until - metering::system_now();
      refusal.retry_after = static_cast<int>(std::max<metering::millis>(1, (left + 999) / 1000));
      return fail(api_errc::conflict,
                  "a request with Idempotency-Key " + call.q_.key + " is still in progress; retry it later");
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(200));
  }
}

idempotent_call::idempotent_call(idempotent_call&& o) noexcept
    : store_(o.store_), tee_(o.tee_), q_(std::move(o.q_)), replay_(std::move(o.replay_)), open_(o.open_) {
  o.open_ = false;
}

idempotent_call& idempotent_call::operator=(idempotent_call&& o) noexcept {
  if (this != &o) {
    if (open_)
      (void)store_->drop_claim(q_);
    wipe_replay();
    store_ = o.store_;
    tee_ = o.tee_;
    q_ = std::move(o.q_);
    replay_ = std::move(o.replay_);
    open_ = o.open_;
    o.open_ = false;
  }
  return *this;
}

idempotent_call::~idempotent_call() {
  if (open_)
    (void)store_->drop_claim(q_);
  wipe_replay();
}

void idempotent_call::wipe_replay() noexcept {
  // The opened answer may hold a secret (a client_secret, an action's result): not left in freed
  // memory once it was sent.
  if (replay_)
    detail::secure_wipe(replay_->body.data(), replay_->body.size());
}

result<void> idempotent_call::renew(std::chrono::milliseconds lease, int& retry_after) {
  if (!open_)
    return {};
  q_.lease = lease;
  auto renewed = store_->renew_claim(q_);
  if (!renewed && renewed.code() == metering::metering_errc::unknown_claim) {
    // Another request with the key took the claim over (or may now): it is that one's to answer.
    open_ = false;
    retry_after = static_cast<int>(std::max<int64_t>(1, (lease.count() + 999) / 1000));
    return fail(api_errc::conflict, "the request with Idempotency-Key " + q_.key +
                                        " was delayed past its lease and another request with the key may run it; "
                                        "retry it later");
  }
  return renewed;
}

result<metering::kept_answer> idempotent_call::sealed(int status, const std::string& body) const {
  bytes plain;
  const wipe_on_exit wipe(plain);
  plain.reserve(kBindingSize + body.size());
  plain.insert(plain.end(), q_.account.begin(), q_.account.end());
  plain.insert(plain.end(), q_.fingerprint.begin(), q_.fingerprint.end());
  plain.insert(plain.end(), body.begin(), body.end());
  ENACT_TRY(bytes sealed, tee_->server_seal(kAnswerSealPurpose, plain));
  return metering::kept_answer{status, std::string(kSealedAnswerPrefix) + codec::base64::encode(sealed)};
}

result<void> idempotent_call::finish_charging(credit_hold& hold, uint64_t amount, int status, const std::string& body) {
  if (!open_)
    return fail(metering::metering_errc::unknown_claim, "Idempotency-Key " + q_.key + ": no open claim");
  ENACT_TRY(metering::kept_answer kept, sealed(status, body));
  ENACT_TRY_VOID(hold.settle_keeping(amount, q_, kept));
  open_ = false;
  return {};
}

result<void> idempotent_call::finish(int status, const std::string& body) {
  if (!open_)
    return {};
  open_ = false;
  if (had_no_effect(status))
    return store_->drop_claim(q_);
  ENACT_TRY(metering::kept_answer kept, sealed(status, body));
  return store_->keep_answer(q_, kept);
}

}  // namespace enact::core
