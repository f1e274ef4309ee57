// SPDX-License-Identifier: Apache-2.0
#include "metering/process_holds.hpp"

#include <string>
#include <utility>

#include "metering/session.hpp"

namespace enact::metering {
namespace refusal = sql::operations::refusal;

bool process_holds::live(const open& o, millis now) { return o.settling || o.r.expires_at > now; }

committed_funds process_holds::sum(const account_holds& holds, const key_hash* key, millis now) {
  committed_funds out;
  for (const auto& [id, o] : holds) {
    if (!live(o, now))
      continue;
    // Bounded: every hold passed check_funds against a balance within int64.
    out.balance += o.r.amount;
    if (key != nullptr && o.r.key == *key)
      out.spent += o.r.amount;
  }
  return out;
}

size_t process_holds::forget_expired(account_holds& holds, millis now) {
  return std::erase_if(holds, [now](const auto& entry) { return !live(entry.second, now); });
}

result<reservation> process_holds::reserve(const reserve_request& q, const std::function<committed_funds()>& read,
                                           const clock_fn& clock) {
  ENACT_TRY_VOID(sql::operations::check_reserve(q));
  std::lock_guard lock(mu_);
  const committed_funds funds = read();
  const millis now = clock();
  account_holds& holds = by_account_[q.account];
  (void)forget_expired(holds, now);
  const committed_funds held = sum(holds, &q.key, now);
  auto checked = sql::operations::check_funds(q, funds.balance, held.balance, funds.spent, held.spent);
  if (!checked) {
    if (holds.empty())
      by_account_.erase(q.account);
    return checked.err();
  }
  reservation r{sql::operations::new_reservation_id(), q.account, q.key, q.amount, q.run_id, now + q.ttl.count()};
  holds.emplace(r.id, open{r, false});
  return r;
}

process_holds::open* process_holds::find(const account_hash& account, std::string_view id) {
  const auto a = by_account_.find(account);
  if (a == by_account_.end())
    return nullptr;
  const auto it = a->second.find(id);
  return it == a->second.end() ? nullptr : &it->second;
}

void process_holds::close(const account_hash& account, std::string_view id) {
  const auto a = by_account_.find(account);
  if (a == by_account_.end())
    return;
  if (const auto it = a->second.find(id); it != a->second.end())
    a->second.erase(it);
  if (a->second.empty())
    by_account_.erase(a);
}

result<reservation> process_holds::settling(const account_hash& account, std::string_view id, uint64_t amount,
                                            millis now) {
  std::lock_guard lock(mu_);
  open* o = find(account, id);
  if (o == nullptr || o->settling || o->r.expires_at <= now)
    return refusal::unknown_reservation(id);
  if (amount > o->r.amount)
    return refusal::over_reserved(o->r.id, amount, o->r.amount);
  o->settling = true;
  return o->r;
}

void process_holds::settled(const account_hash& account, std::string_view id) {
  std::lock_guard lock(mu_);
  close(account, id);
}

void process_holds::unsettled(const account_hash& account, std::string_view id) {
  std::lock_guard lock(mu_);
  if (open* o = find(account, id))
    o->settling = false;
}

result<void> process_holds::release(const account_hash& account, std::string_view id) {
  std::lock_guard lock(mu_);
  const open* o = find(account, id);
  if (o == nullptr || o->settling)
    return refusal::not_open(id);
  close(account, id);
  return {};
}

uint64_t process_holds::release_expired(millis now) {
  std::lock_guard lock(mu_);
  uint64_t n = 0;
  for (auto a = by_account_.begin(); a != by_account_.end();) {
    n += forget_expired(a->second, now);
    a = a->second.empty() ? by_account_.erase(a) : std::next(a);
  }
  return n;
}

process_holds::funds_and_holds process_holds::funds(const account_hash& account, const key_hash* key,
                                                    const std::function<committed_funds()>& read, millis now) const {
  std::lock_guard lock(mu_);
  funds_and_holds out{read(), {}};
  if (const auto a = by_account_.find(account); a != by_account_.end())
    out.held = sum(a->second, key, now);
  return out;
}

}  // namespace enact::metering
