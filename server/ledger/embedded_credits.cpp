// SPDX-License-Identifier: Apache-2.0
// The embedded ledger's credits and payments (embedded_ledger.hpp).
#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ledger/embedded_store.hpp"

namespace enact::ledger {

using namespace embedded;  // NOLINT(google-build-using-namespace): the store's helpers

// -----------------------------------------------------------------------------------------------
// credits

result<uint64_t> embedded_ledger::balance(const account_hash& account) const {
  return store_->read(
      [&](connection& c) -> result<uint64_t> {
        ENACT_TRY(account_row a, require_account(c, account));
        return a.balance;
      },
      false);
}

result<std::vector<std::pair<account_hash, uint64_t>>> embedded_ledger::balances() const {
  return store_->read(
      [&](connection& c) -> result<std::vector<std::pair<account_hash, uint64_t>>> {
        std::vector<std::pair<account_hash, uint64_t>> out;
        query q(c, "SELECT hash, balance FROM accounts WHERE balance > 0 ORDER BY id");
        while (q.next())
          out.emplace_back(q.hash(0), q.u64(1));
        return out;
      },
      false);
}

result<uint64_t> embedded_ledger::debit(const account_hash& account, uint64_t amount) {
  if (amount == 0)
    return fail(ledger_errc::invalid_argument, "amount: must be at least 1 credit");
  const write_context w{};  // server-side bookkeeping: no registry sender
  return store_->write([&](connection& c) -> result<uint64_t> {
    ENACT_TRY(account_row a, require_account(c, account));
    if (a.balance < amount)
      return fail(ledger_errc::insufficient_credits, "account " + hx(account) + ": balance " +
                                                         std::to_string(a.balance) + " below " +
                                                         std::to_string(amount) + " credits");
    query(c, "UPDATE accounts SET balance = balance - ? WHERE id = ?").bind(amount, a.id).run();
    a.balance -= amount;
    account_write tx{c, w, a};
    tx.emit(reg::credits_debited_event{account, u256{amount}, u256{a.balance}});
    return a.balance;
  });
}

result<void> embedded_ledger::record_payment(const payment& p) {
  if (p.intent_id.empty())
    return fail(ledger_errc::invalid_argument, "intent_id: must not be empty");
  ENACT_TRY_VOID(check_length("intent_id", p.intent_id, kMaxIntentId));
  if (p.provider.empty())
    return fail(ledger_errc::invalid_argument, "provider: must not be empty");
  ENACT_TRY_VOID(check_length("provider", p.provider, kMaxProvider));
  if (p.amount_cents == 0 || p.amount_cents > kMaxBalance)
    return fail(ledger_errc::invalid_argument, "amount_cents: " + std::to_string(p.amount_cents) + " out of range");
  if (p.credited)
    return fail(ledger_errc::invalid_argument,
                "credited: a payment is recorded uncredited and credited by credit_payment");
  return store_->write([&](connection& c) -> result<void> {
    ENACT_TRY(account_row a, require_account(c, p.account));
    {
      query q(c, "SELECT 1 FROM payments WHERE intent_id = ?");
      q.bind(p.intent_id);
      if (q.next())
        return fail(ledger_errc::duplicate, "intent_id " + p.intent_id + ": recorded already");
    }
    query(c,
          "INSERT INTO payments (account_id, intent_id, amount_cents, provider, created_at) "
          "VALUES (?, ?, ?, ?, ?)")
        .bind(a.id, p.intent_id, p.amount_cents, p.provider, now_seconds())
        .run();
    return {};
  });
}

result<payment> embedded_ledger::get_payment(const account_hash& account, std::string_view intent_id) const {
  return store_->read([&](connection& c) -> result<payment> {
    ENACT_TRY(account_row a, require_account(c, account));
    std::optional<payment_row> r = load_payment(c, a, intent_id);
    if (!r)
      return fail(ledger_errc::unknown_payment,
                  "intent_id " + std::string(intent_id) + ": no such payment for account " + hx(account));
    return std::move(r->p);
  });
}

result<uint64_t> embedded_ledger::credit_payment(const account_hash& account, std::string_view intent_id) {
  const write_context w{};  // server-side bookkeeping: no registry sender
  return store_->write([&](connection& c) -> result<uint64_t> {
    ENACT_TRY(account_row a, require_account(c, account));
    std::optional<payment_row> r = load_payment(c, a, intent_id);
    if (!r)
      return fail(ledger_errc::unknown_payment,
                  "intent_id " + std::string(intent_id) + ": no such payment for account " + hx(account));
    if (r->p.credited)
      return fail(ledger_errc::already_credited, "intent_id " + std::string(intent_id) + ": credited already");
    if (r->p.amount_cents > kMaxBalance - a.balance)
      return fail(ledger_errc::invalid_argument, "amount_cents: balance would overflow");
    query(c, "UPDATE payments SET credited = 1 WHERE id = ?").bind(r->id).run();
    query(c, "UPDATE accounts SET balance = balance + ? WHERE id = ?").bind(r->p.amount_cents, a.id).run();
    a.balance += r->p.amount_cents;
    account_write tx{c, w, a};
    tx.emit(
        reg::payment_credited_event{account, r->p.intent_id, u256{r->p.amount_cents}, r->p.provider, u256{a.balance}});
    return a.balance;
  });
}

}  // namespace enact::ledger
