// SPDX-License-Identifier: Apache-2.0
#include "core/credits.hpp"

#include <algorithm>

#include "core/errors.hpp"
#include "runtime/runtime.hpp"

namespace enact::core {

std::chrono::milliseconds run_budget(const config& cfg) {
  const runtime::pool_config pool;  // the queue timeout and kill grace enact-server's pool keeps
  const auto gateway = std::chrono::milliseconds(cfg.ipfs_gateway.empty() ? 0 : std::max(cfg.gateway_timeout_ms, 0));
  return gateway + pool.queue_timeout + std::chrono::milliseconds(cfg.run_timeout_ms) + pool.kill_grace + kRunMargin;
}

result<credit_hold> credit_hold::take(const request_context& c, uint64_t amount, std::string run_id,
                                      std::chrono::milliseconds ttl) {
  if (c.svc.metering == nullptr)
    return fail(api_errc::unavailable, "no metering store configured: calls that cost credits cannot be paid");
  metering::reserve_request q;
  q.account = c.who->account.hash;
  q.key = c.who->key_hash;
  q.amount = amount;
  q.key_cap = c.who->key_cap;
  q.run_id = std::move(run_id);
  q.ttl = ttl;
  auto r = c.svc.metering->reserve(q);
  if (!r && r.code() == metering::metering_errc::insufficient_credits) {
    // An account in debt after a refund or dispute has a balance of 0: say why, and what ends it.
    if (const auto owed = c.svc.metering->owed(q.account); owed && *owed > 0)
      return fail(metering::metering_errc::insufficient_credits,
                  "the account owes " + std::to_string(*owed) +
                      " credits after a refund or dispute of a payment; it cannot run until a payment pays them back");
  }
  ENACT_TRY_VOID(r);
  return credit_hold(*c.svc.metering, std::move(*r));
}

credit_hold::credit_hold(credit_hold&& o) noexcept : store_(o.store_), r_(std::move(o.r_)) { o.r_.reset(); }

credit_hold& credit_hold::operator=(credit_hold&& o) noexcept {
  if (this != &o) {
    release();
    store_ = o.store_;
    r_ = std::move(o.r_);
    o.r_.reset();
  }
  return *this;
}

credit_hold::~credit_hold() { release(); }

result<void> credit_hold::settle() { return settle(r_ ? r_->amount : 0); }

result<void> credit_hold::settle(uint64_t amount) {
  if (!r_)
    return {};
  auto done = store_->settle(r_->account, r_->id, amount);
  r_.reset();
  if (!done)
    return done.err();
  return {};
}

result<void> credit_hold::settle_keeping(uint64_t amount, const metering::idempotency_request& q,
                                         const metering::kept_answer& a) {
  if (!r_)
    return fail(metering::metering_errc::unknown_reservation, "the hold was closed before its answer");
  ENACT_TRY_VOID(store_->settle_and_keep(r_->account, r_->id, amount, q, a));
  r_.reset();
  return {};
}

bool credit_hold::expired() const { return r_ && r_->expires_at <= metering::system_now(); }

void credit_hold::release() noexcept {
  if (!r_)
    return;
  // A release that fails (the store unreachable) leaves the reservation to expire: the credits
  // come back then, and nothing is charged.
  (void)store_->release(r_->account, r_->id);
  r_.reset();
}

}  // namespace enact::core
