// SPDX-License-Identifier: Apache-2.0
// The metering store's operations, written once over a backend's SQL session (session.hpp).
// Every write that touches an account's credits first locks the account row (`lock`), so the
// writers of one account are serialized in PostgreSQL as SQLite's single writer serializes all
// of them; a payment's credit locks the payment row, then the account's. Locks are always taken
// in that order, so two transactions never wait for each other.
#include <array>
#include <charconv>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "enact/codec/hex.hpp"
#include "enact/crypto/random.hpp"
#include "metering/operations_internal.hpp"

namespace enact::metering {

std::string_view to_string(reversal_kind k) noexcept {
  switch (k) {
    case reversal_kind::refund:
      return "refund";
    case reversal_kind::dispute:
      return "dispute";
    case reversal_kind::dispute_won:
      return "dispute_won";
  }
  return "refund";
}

millis system_now() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

namespace sql {
namespace operations {
namespace {

constexpr uint64_t kMaxAmount = std::numeric_limits<int64_t>::max();
constexpr size_t kMaxId = 256;
constexpr size_t kMaxProvider = 64;

hash256 unhex(const std::string& s) {
  auto h = codec::hex::decode_fixed<32>(s, "hash");
  if (!h)
    throw std::runtime_error("metering: corrupt row: " + h.err().message);
  return *h;
}

result<void> check_amount(std::string_view what, uint64_t amount) {
  if (amount == 0 || amount > kMaxAmount)
    return fail(metering_errc::invalid_argument,
                std::string(what) + ": " + std::to_string(amount) + " out of range (1 to 2^63-1)");
  return {};
}

/// The account's balance with its row locked for the transaction (0 when it has no row yet).
uint64_t locked_balance(session& s, const account_hash& account) {
  const rows r = s.exec({"SELECT balance FROM metering_accounts WHERE account = ?1", true}, {hx(account)});
  return r.empty() ? 0 : r.u64(0, 0);
}

/// Credits held by the account's unexpired reservations (of one key, when `key` is given).
uint64_t held(session& s, const account_hash& account, const key_hash* key, millis now) {
  const rows r = key == nullptr
                     ? s.exec({"SELECT COALESCE(SUM(amount), 0) FROM metering_reservations WHERE account = ?1 AND "
                               "expires_at > ?2"},
                              {hx(account), now})
                     : s.exec({"SELECT COALESCE(SUM(amount), 0) FROM metering_reservations WHERE account = ?1 AND "
                               "key_hash = ?2 AND expires_at > ?3"},
                              {hx(account), hx(*key), now});
  return r.u64(0, 0);
}

uint64_t spent(session& s, const account_hash& account, const key_hash& key) {
  const rows r =
      s.exec({"SELECT spent FROM metering_key_spending WHERE account = ?1 AND key_hash = ?2"}, {hx(account), hx(key)});
  return r.empty() ? 0 : r.u64(0, 0);
}

payment payment_of(const rows& r, size_t i) {
  payment p;
  p.id = r.text(i, 0);
  p.account = unhex(r.text(i, 1));
  p.amount_cents = r.u64(i, 2);
  p.provider = r.text(i, 3);
  p.created_at = r.i64(i, 4);
  if (!r.null(i, 5)) {
    p.credited = true;
    p.credited_at = r.i64(i, 5);
  }
  p.balance_after = r.u64(i, 6);
  return p;
}

constexpr const char* kPaymentColumns = "id, account, amount, provider, created_at, credited_at, balance_after";

reversal_kind kind_of(const std::string& k) {
  if (k == "refund")
    return reversal_kind::refund;
  if (k == "dispute")
    return reversal_kind::dispute;
  if (k == "dispute_won")
    return reversal_kind::dispute_won;
  throw std::runtime_error("metering: corrupt row: reversal kind '" + k + "'");
}

/// The payment's reversed total (store.hpp reverse_payment): every refund increase, plus the
/// disputes not won, at most the payment's amount.
uint64_t reversed_of(uint64_t amount, const std::vector<reversal>& rs) {
  uint64_t total = 0;
  for (const reversal& r : rs) {
    bool won = false;
    if (r.kind == reversal_kind::dispute)
      for (const reversal& w : rs)
        won |= w.kind == reversal_kind::dispute_won && w.ref == r.ref;
    if (r.kind == reversal_kind::refund || (r.kind == reversal_kind::dispute && !won))
      total += r.amount_cents;
  }
  return total < amount ? total : amount;
}

/// The payment's reversals, oldest first.
std::vector<reversal> reversals_of(session& s, const std::string& payment_id) {
  const rows r = s.exec({"SELECT event_id, kind, ref, amount, created_at FROM metering_reversals WHERE payment_id = ?1 "
                         "ORDER BY seq"},
                        {payment_id});
  std::vector<reversal> out;
  for (size_t i = 0; i < r.data.size(); ++i)
    out.push_back(reversal{r.text(i, 0), kind_of(r.text(i, 1)), r.text(i, 2), r.u64(i, 3), r.i64(i, 4)});
  return out;
}

void fill_reversals(session& s, payment& p) {
  p.reversals = reversals_of(s, p.id);
  p.reversed_cents = reversed_of(p.amount_cents, p.reversals);
}

/// The account's balance and what it owes, its row locked for the transaction.
struct standing {
  uint64_t balance = 0;
  uint64_t owed = 0;
};
standing locked_standing(session& s, const account_hash& account) {
  // The row made first, so the lock holds for an account not yet in the table: otherwise two
  // PostgreSQL sessions crediting a new account both read 0 and the second write replaces the first.
  s.exec({"INSERT INTO metering_accounts (account, balance, owed) VALUES (?1, 0, 0) ON CONFLICT (account) DO NOTHING"},
         {hx(account)});
  const rows r = s.exec({"SELECT balance, owed FROM metering_accounts WHERE account = ?1", true}, {hx(account)});
  return r.empty() ? standing{} : standing{r.u64(0, 0), r.u64(0, 1)};
}

/// Moves the account (its row locked, standing `was`) by `credit` credits and then `debit`: a
/// credit pays what is owed first, a debit the balance cannot cover is owed.
result<standing> move_credits(session& s, const account_hash& account, standing was, uint64_t credit, uint64_t debit) {
  standing now = was;
  const uint64_t repaid = credit < now.owed ? credit : now.owed;
  now.owed -= repaid;
  if (credit - repaid > kMaxAmount - now.balance)
    return fail(metering_errc::invalid_argument, "the balance would overflow");
  now.balance += credit - repaid;
  const uint64_t taken = debit < now.balance ? debit : now.balance;
  now.balance -= taken;
  if (debit - taken > kMaxAmount - now.owed)
    return fail(metering_errc::invalid_argument, "what the account owes would overflow");
  now.owed += debit - taken;
  s.exec({"INSERT INTO metering_accounts (account, balance, owed) VALUES (?1, ?2, ?3) ON CONFLICT (account) DO UPDATE "
          "SET balance = ?2, owed = ?3"},
         {hx(account), num(now.balance), num(now.owed)});
  return now;
}

/// The account's open reservation `id`, or unknown_reservation (none, another account's, expired).
result<reservation> open_reservation(session& s, const account_hash& account, std::string_view id, millis now) {
  const rows r = s.exec({"SELECT key_hash, amount, run_id, expires_at FROM metering_reservations WHERE id = ?1 AND "
                         "account = ?2"},
                        {std::string(id), hx(account)});
  if (r.empty() || r.i64(0, 3) <= now)
    return refusal::unknown_reservation(id);
  return reservation{std::string(id), account, unhex(r.text(0, 0)), r.u64(0, 1), r.text(0, 2), r.i64(0, 3)};
}

template <class T, class Read>
page<T> paged(session& s, const statement& list, const statement& count, const account_hash& account, page_request p,
              Read read) {
  page<T> out;
  const uint64_t offset = (p.number - 1) * p.size;
  const rows r = s.exec(list, {hx(account), num(p.size), num(offset)});
  for (size_t i = 0; i < r.data.size(); ++i)
    out.items.push_back(read(r, i));
  out.total = s.exec(count, {hx(account)}).u64(0, 0);
  return out;
}

result<void> check_page(page_request p) {
  if (p.number < 1 || p.size < 1 || p.size > 100 || p.number > (uint64_t{1} << 40))
    return fail(metering_errc::invalid_argument, "page: number from 1, size from 1 to 100");
  return {};
}

}  // namespace

result<uint64_t> balance(session& s, const account_hash& account) {
  const rows r = s.exec({"SELECT balance FROM metering_accounts WHERE account = ?1"}, {hx(account)});
  return r.empty() ? 0 : r.u64(0, 0);
}

result<uint64_t> available(session& s, const account_hash& account, millis now) {
  ENACT_TRY(const uint64_t b, balance(s, account));
  const uint64_t h = held(s, account, nullptr, now);
  return b > h ? b - h : 0;
}

result<void> record_payment(session& s, const payment& p, millis now) {
  ENACT_TRY_VOID(check_id("payment id", p.id, kMaxId));
  ENACT_TRY_VOID(check_id("provider", p.provider, kMaxProvider));
  ENACT_TRY_VOID(check_amount("amount_cents", p.amount_cents));
  const rows r =
      s.exec({"INSERT INTO metering_payments (id, account, amount, provider, created_at) VALUES (?1, ?2, ?3, ?4, "
              "?5) ON CONFLICT (id) DO NOTHING"},
             {p.id, hx(p.account), num(p.amount_cents), p.provider, now});
  if (r.affected == 0)
    return fail(metering_errc::duplicate_payment, "payment " + p.id + ": recorded already");
  return {};
}

result<payment> get_payment(session& s, const account_hash& account, std::string_view id) {
  static const std::string sql = std::string("SELECT ") + kPaymentColumns + " FROM metering_payments WHERE id = ?1";
  const rows r = s.exec({sql.c_str()}, {std::string(id)});
  if (r.empty() || unhex(r.text(0, 1)) != account)
    return fail(metering_errc::unknown_payment, "payment " + std::string(id) + ": no such payment for this account");
  payment p = payment_of(r, 0);
  fill_reversals(s, p);
  return p;
}

result<credit_result> credit_payment(session& s, const account_hash& account, std::string_view id, millis now) {
  const rows r =
      s.exec({"SELECT account, amount, credited_at, balance_after FROM metering_payments WHERE id = ?1", true},
             {std::string(id)});
  if (r.empty() || unhex(r.text(0, 0)) != account)
    return fail(metering_errc::unknown_payment, "payment " + std::string(id) + ": no such payment for this account");
  if (!r.null(0, 2))
    return credit_result{r.u64(0, 3), false};  // credited before: the first credit's answer
  const uint64_t amount = r.u64(0, 1);
  // A refund or dispute reported before the credit took its part already (reverse_payment).
  const uint64_t reversed = reversed_of(amount, reversals_of(s, std::string(id)));
  auto moved = move_credits(s, account, locked_standing(s, account), amount - reversed, 0);
  if (!moved)
    return fail(metering_errc::invalid_argument, "payment " + std::string(id) + ": " + moved.err().message);
  s.exec({"UPDATE metering_payments SET credited_at = ?2, balance_after = ?3 WHERE id = ?1"},
         {std::string(id), now, num(moved->balance)});
  return credit_result{moved->balance, true};
}

result<reversal_result> reverse_payment(session& s, const reversal_request& q, millis now) {
  ENACT_TRY_VOID(check_id("event id", q.event_id, kMaxId));
  ENACT_TRY_VOID(check_id("payment id", q.payment_id, kMaxId));
  ENACT_TRY_VOID(check_id("reversal ref", q.ref, kMaxId));
  if (q.amount_cents > kMaxAmount)
    return fail(metering_errc::invalid_argument, "amount_cents: out of range (0 to 2^63-1)");
  // The payment row first, then the account's: the lock order of credit_payment.
  const rows p = s.exec({"SELECT account, amount, provider, credited_at FROM metering_payments WHERE id = ?1", true},
                        {q.payment_id});
  if (p.empty() || p.text(0, 2) != q.provider)
    return fail(metering_errc::unknown_payment, "payment " + q.payment_id + ": no such " + q.provider + " payment");
  const account_hash account = unhex(p.text(0, 0));
  const uint64_t amount = p.u64(0, 1);
  if (q.amount_cents > amount)
    return fail(metering_errc::invalid_argument, "payment " + q.payment_id + ": " + std::to_string(q.amount_cents) +
                                                     " cents reversed, more than its " + std::to_string(amount));
  const standing was = locked_standing(s, account);
  std::vector<reversal> rs = reversals_of(s, q.payment_id);
  reversal_result out{account, false, reversed_of(amount, rs), was.balance, was.owed};
  for (const reversal& r : rs)
    if (r.event_id == q.event_id)
      return out;  // this event was recorded: a redelivery
  // The row this event adds, if any: a refund's increase over the refunds recorded, a dispute
  // or its win once per dispute (a won dispute gives back what its dispute took).
  std::optional<uint64_t> add;
  uint64_t refunded = 0;
  const reversal* disputed = nullptr;
  bool won = false;
  for (const reversal& r : rs) {
    if (r.kind == reversal_kind::refund)
      refunded += r.amount_cents;
    if (r.kind == reversal_kind::dispute && r.ref == q.ref)
      disputed = &r;
    won |= r.kind == reversal_kind::dispute_won && r.ref == q.ref;
  }
  if (q.kind == reversal_kind::refund && q.amount_cents > refunded)
    add = q.amount_cents - refunded;
  else if (q.kind == reversal_kind::dispute && disputed == nullptr && q.amount_cents > 0)
    add = q.amount_cents;
  else if (q.kind == reversal_kind::dispute_won && !won)
    add = disputed != nullptr ? disputed->amount_cents : q.amount_cents;
  if (!add)
    return out;
  const reversal row{q.event_id, q.kind, q.ref, *add, now};
  s.exec(
      {"INSERT INTO metering_reversals (event_id, payment_id, account, kind, ref, amount, created_at) VALUES (?1, ?2, "
       "?3, ?4, ?5, ?6, ?7)"},
      {row.event_id, q.payment_id, hx(account), std::string(to_string(row.kind)), row.ref, num(row.amount_cents), now});
  rs.push_back(row);
  const uint64_t before = out.reversed_cents;
  out.reversed_cents = reversed_of(amount, rs);
  out.applied_now = true;
  if (!p.null(0, 3)) {
    // Only a credited payment's credits are in the balance; an uncredited one brings its amount
    // less the reversed total when it is credited.
    const uint64_t credit = before > out.reversed_cents ? before - out.reversed_cents : 0;
    const uint64_t debit = out.reversed_cents > before ? out.reversed_cents - before : 0;
    ENACT_TRY(const standing after, move_credits(s, account, was, credit, debit));
    out.balance = after.balance;
    out.owed = after.owed;
  }
  return out;
}

result<uint64_t> owed(session& s, const account_hash& account) {
  const rows r = s.exec({"SELECT owed FROM metering_accounts WHERE account = ?1"}, {hx(account)});
  return r.empty() ? 0 : r.u64(0, 0);
}

namespace refusal {

error insufficient_to_reserve(uint64_t balance, uint64_t held, uint64_t amount) {
  return fail(metering_errc::insufficient_credits, "balance " + std::to_string(balance) + " credits, " +
                                                       std::to_string(held) + " reserved by runs in progress, " +
                                                       std::to_string(amount) + " needed");
}

error cap_exceeded(uint64_t cap, uint64_t used, uint64_t amount) {
  return fail(metering_errc::cap_exceeded, "this usage key's spending cap is " + std::to_string(cap) + " credits; " +
                                               std::to_string(used) + " spent or reserved, " + std::to_string(amount) +
                                               " needed");
}

error unknown_reservation(std::string_view id) {
  return fail(metering_errc::unknown_reservation,
              "reservation " + std::string(id) +
                  ": no open reservation of this account (unknown, settled, released or expired)");
}

error not_open(std::string_view id) {
  return fail(metering_errc::unknown_reservation,
              "reservation " + std::string(id) + ": no open reservation of this account");
}

error over_reserved(std::string_view id, uint64_t amount, uint64_t reserved) {
  return fail(metering_errc::over_reserved, "reservation " + std::string(id) + ": " + std::to_string(amount) +
                                                " credits to settle, " + std::to_string(reserved) + " reserved");
}

error insufficient_to_settle(uint64_t balance, uint64_t amount) {
  return fail(metering_errc::insufficient_credits,
              "balance " + std::to_string(balance) + " credits, below the " + std::to_string(amount) + " to settle");
}

}  // namespace refusal

result<void> check_reserve(const reserve_request& q) {
  ENACT_TRY_VOID(check_amount("amount", q.amount));
  ENACT_TRY_VOID(check_id("run id", q.run_id, kMaxId));
  if (q.ttl.count() <= 0)
    return fail(metering_errc::invalid_argument, "ttl: must be positive");
  return {};
}

result<void> check_funds(const reserve_request& q, uint64_t balance, uint64_t held_all, uint64_t spent,
                         uint64_t held_key) {
  if (balance < held_all || balance - held_all < q.amount)
    return refusal::insufficient_to_reserve(balance, held_all, q.amount);
  if (q.key_cap != 0) {
    const uint64_t used = spent + held_key;
    if (used < spent || used > q.key_cap || q.key_cap - used < q.amount)
      return refusal::cap_exceeded(q.key_cap, used, q.amount);
  }
  return {};
}

std::string new_reservation_id() {
  std::array<uint8_t, 16> b{};
  crypto::random_bytes(b);
  return "rsv_" + codec::hex::encode(b);
}

result<reservation> reserve(session& s, const reserve_request& q, const clock_fn& clock) {
  ENACT_TRY_VOID(check_reserve(q));
  const uint64_t bal = locked_balance(s, q.account);
  // Read after the lock: a wait for the account's row (another session holding it) does not
  // shorten the hold, which would otherwise be written already expired and the run go unpaid.
  const millis now = clock();
  s.exec({"DELETE FROM metering_reservations WHERE account = ?1 AND expires_at <= ?2"}, {hx(q.account), now});
  const uint64_t held_all = held(s, q.account, nullptr, now);
  ENACT_TRY_VOID(check_funds(q, bal, held_all, q.key_cap == 0 ? 0 : spent(s, q.account, q.key),
                             q.key_cap == 0 ? 0 : held(s, q.account, &q.key, now)));
  reservation out{new_reservation_id(), q.account, q.key, q.amount, q.run_id, now + q.ttl.count()};
  s.exec({"INSERT INTO metering_reservations (id, account, key_hash, amount, run_id, expires_at) VALUES (?1, ?2, ?3, "
          "?4, ?5, "
          "?6)"},
         {out.id, hx(out.account), hx(out.key), num(out.amount), out.run_id, out.expires_at});
  return out;
}

namespace {

/// The debit of a settle: `amount` (> 0) off the balance, onto the key's spending and into the
/// usage history. `bal` is the account's balance read under its lock.
result<uint64_t> debit(session& s, const reservation& r, uint64_t amount, uint64_t bal, millis now) {
  // The balance never goes below zero. A hold covers its settle unless a reversal (a refund or a
  // dispute, docs/protocol.md "Refunds and disputes") took the credits meanwhile: the run happened,
  // so it is charged, and what the balance no longer covers is owed like the reversal's own rest.
  if (bal < amount) {
    const rows d = s.exec({"UPDATE metering_accounts SET balance = 0, owed = owed + ?2 WHERE account = ?1"},
                          {hx(r.account), num(amount - bal)});
    if (d.affected != 1)
      return refusal::insufficient_to_settle(bal, amount);
  } else {
    const rows d = s.exec({"UPDATE metering_accounts SET balance = balance - ?2 WHERE account = ?1 AND balance >= ?2"},
                          {hx(r.account), num(amount)});
    if (d.affected != 1)
      return refusal::insufficient_to_settle(bal, amount);
  }
  s.exec({"INSERT INTO metering_key_spending (account, key_hash, spent) VALUES (?1, ?2, ?3) ON CONFLICT (account, "
          "key_hash) "
          "DO UPDATE SET spent = metering_key_spending.spent + ?3"},
         {hx(r.account), hx(r.key), num(amount)});
  s.exec({"INSERT INTO metering_charges (account, run_id, key_hash, amount, at) VALUES (?1, ?2, ?3, ?4, ?5)"},
         {hx(r.account), r.run_id, hx(r.key), num(amount), now});
  return bal < amount ? 0 : bal - amount;
}

}  // namespace

result<uint64_t> charge(session& s, const reservation& r, uint64_t amount, millis now) {
  const uint64_t bal = locked_balance(s, r.account);
  if (amount == 0)
    return bal;
  return debit(s, r, amount, bal, now);
}

result<uint64_t> charge_and_keep(session& s, const reservation& r, uint64_t amount, const idempotency_request& q,
                                 const kept_answer& a, millis now) {
  ENACT_TRY(const uint64_t after, charge(s, r, amount, now));
  ENACT_TRY_VOID(keep_answer(s, q, a));  // an error rolls the charge back with it
  return after;
}

result<uint64_t> settle(session& s, const account_hash& account, std::string_view id, uint64_t amount, millis now) {
  const uint64_t bal = locked_balance(s, account);
  ENACT_TRY(const reservation r, open_reservation(s, account, id, now));
  if (amount > r.amount)
    return refusal::over_reserved(r.id, amount, r.amount);
  s.exec({"DELETE FROM metering_reservations WHERE id = ?1"}, {r.id});
  if (amount == 0)
    return bal;
  return debit(s, r, amount, bal, now);
}

result<void> release(session& s, const account_hash& account, std::string_view id) {
  const rows r =
      s.exec({"DELETE FROM metering_reservations WHERE id = ?1 AND account = ?2"}, {std::string(id), hx(account)});
  if (r.affected == 0)
    return refusal::not_open(id);
  return {};
}

result<uint64_t> release_expired(session& s, millis now) {
  return static_cast<uint64_t>(s.exec({"DELETE FROM metering_reservations WHERE expires_at <= ?1"}, {now}).affected);
}

result<key_spending> spending(session& s, const account_hash& account, const key_hash& key, millis now) {
  return key_spending{spent(s, account, key), held(s, account, &key, now)};
}

result<page<usage_record>> usage(session& s, const account_hash& account, page_request p) {
  ENACT_TRY_VOID(check_page(p));
  return paged<usage_record>(s,
                             {"SELECT run_id, key_hash, amount, at FROM metering_charges WHERE account = ?1 ORDER BY "
                              "seq DESC LIMIT ?2 OFFSET ?3"},
                             {"SELECT COUNT(*) FROM metering_charges WHERE account = ?1"}, account, p,
                             [](const rows& r, size_t i) {
                               return usage_record{r.text(i, 0), unhex(r.text(i, 1)), r.u64(i, 2), r.i64(i, 3)};
                             });
}

result<page<payment>> payments(session& s, const account_hash& account, page_request p) {
  ENACT_TRY_VOID(check_page(p));
  static const std::string sql = std::string("SELECT ") + kPaymentColumns +
                                 " FROM metering_payments WHERE account = ?1 ORDER BY seq DESC LIMIT ?2 OFFSET ?3";
  auto out = paged<payment>(s, {sql.c_str()}, {"SELECT COUNT(*) FROM metering_payments WHERE account = ?1"}, account, p,
                            payment_of);
  for (payment& each : out.items)
    fill_reversals(s, each);
  return out;
}

}  // namespace operations
}  // namespace sql
}  // namespace enact::metering
