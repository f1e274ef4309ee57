// SPDX-License-Identifier: Apache-2.0
// session_store (session.hpp): each store call as one operation on a session of the backend's
// choosing (read, write, hold or single statement).
#include <string_view>

#include "metering/session.hpp"

namespace enact::metering::sql {

namespace ops = operations;

result<uint64_t> session_store::balance(const account_hash& a) const {
  return run(access::read, [&](session& s) { return ops::balance(s, a); });
}
result<uint64_t> session_store::available(const account_hash& a) const {
  return run(access::read, [&](session& s) { return ops::available(s, a, now_()); });
}
result<void> session_store::record_payment(const payment& p) {
  return run(access::write, [&](session& s) { return ops::record_payment(s, p, now_()); });
}
result<payment> session_store::get_payment(const account_hash& a, std::string_view id) const {
  return run(access::read, [&](session& s) { return ops::get_payment(s, a, id); });
}
result<credit_result> session_store::credit_payment(const account_hash& a, std::string_view id) {
  return run(access::write, [&](session& s) { return ops::credit_payment(s, a, id, now_()); });
}
result<reversal_result> session_store::reverse_payment(const reversal_request& r) {
  return run(access::write, [&](session& s) { return ops::reverse_payment(s, r, now_()); });
}
result<uint64_t> session_store::owed(const account_hash& a) const {
  return run(access::read, [&](session& s) { return ops::owed(s, a); });
}
result<reservation> session_store::reserve(const reserve_request& r) {
  return run(access::hold, [&](session& s) { return ops::reserve(s, r, now_); });
}
result<uint64_t> session_store::settle(const account_hash& a, std::string_view id, uint64_t amount) {
  return run(access::write, [&](session& s) { return ops::settle(s, a, id, amount, now_()); });
}
result<void> session_store::release(const account_hash& a, std::string_view id) {
  return run(access::hold, [&](session& s) { return ops::release(s, a, id); });
}
result<uint64_t> session_store::release_expired() {
  return run(access::hold, [&](session& s) { return ops::release_expired(s, now_()); });
}
result<key_spending> session_store::spending(const account_hash& a, const key_hash& k) const {
  return run(access::read, [&](session& s) { return ops::spending(s, a, k, now_()); });
}
result<page<usage_record>> session_store::usage(const account_hash& a, page_request p) const {
  return run(access::read, [&](session& s) { return ops::usage(s, a, p); });
}
result<page<payment>> session_store::payments(const account_hash& a, page_request p) const {
  return run(access::read, [&](session& s) { return ops::payments(s, a, p); });
}
result<idempotency_claim> session_store::claim_idempotency(const idempotency_request& r) {
  return run(access::write, [&](session& s) { return ops::claim_idempotency(s, r, now_()); });
}
result<void> session_store::keep_answer(const idempotency_request& r, const kept_answer& a) {
  return run(access::write, [&](session& s) { return ops::keep_answer(s, r, a); });
}
result<void> session_store::drop_claim(const idempotency_request& r) {
  return run(access::write, [&](session& s) { return ops::drop_claim(s, r); });
}
result<void> session_store::renew_claim(const idempotency_request& r) {
  return run(access::write, [&](session& s) { return ops::renew_claim(s, r, now_()); });
}
result<uint64_t> session_store::settle_and_keep(const account_hash& a, std::string_view id, uint64_t amount,
                                                const idempotency_request& r, const kept_answer& k) {
  return run(access::write, [&](session& s) { return ops::settle_and_keep(s, a, id, amount, r, k, now_()); });
}
result<uint64_t> session_store::expire_idempotency() {
  return run(access::write, [&](session& s) { return ops::expire_idempotency(s, now_()); });
}
result<bool> session_store::use_once(const hash256& id, millis expires_at) {
  return run(access::single, [&](session& s) { return ops::use_once(s, id, expires_at, now_()); });
}
result<uint64_t> session_store::expire_nonces() {
  // What expired by the sweep's start: a sweep ends even while uses keep expiring behind it.
  const millis now = now_();
  uint64_t total = 0;
  for (;;) {
    ENACT_TRY(const uint64_t n,
              run(access::write, [&](session& s) { return ops::expire_nonces(s, now, kNonceExpiryBatch); }));
    total += n;
    if (n < kNonceExpiryBatch)
      return total;
  }
}

}  // namespace enact::metering::sql
