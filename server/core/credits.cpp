// SPDX-License-Identifier: Apache-2.0
#include "core/credits.hpp"

#include "core/errors.hpp"

namespace enact::core {

result<credit_hold> credit_hold::take(const request_context& c, uint64_t amount, std::string run_id) {
  if (c.svc.metering == nullptr)
    return fail(api_errc::unavailable, "no metering store configured: calls that cost credits cannot be paid");
  metering::reserve_request q;
  q.account = c.who->account.hash;
  q.key = c.who->key_hash;
  q.amount = amount;
  q.key_cap = c.who->key_cap;
  q.run_id = std::move(run_id);
  q.ttl = kCreditHoldTtl;
  ENACT_TRY(auto r, c.svc.metering->reserve(q));
  return credit_hold(*c.svc.metering, std::move(r));
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

void credit_hold::release() noexcept {
  if (!r_)
    return;
  // A release that fails (the store unreachable) leaves the reservation to expire: the credits
  // come back then, and nothing is charged.
  (void)store_->release(r_->account, r_->id);
  r_.reset();
}

}  // namespace enact::core
