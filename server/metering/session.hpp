// SPDX-License-Identifier: Apache-2.0
// The metering store's rules said once for both backends (store.hpp): `operations` runs each of
// them on a `session`, one SQL transaction the backend opened, that executes statements written
// once in the dialect both databases share. Placeholders are SQLite's numbered `?1`, `?2`, …
// (the PostgreSQL session rewrites them to `$1`, `$2`, …); a statement marked `lock` is a
// `SELECT … FOR UPDATE` in PostgreSQL, which locks the account row for the rest of the
// transaction, and runs as written in SQLite, whose one writer transaction is already exclusive.
// Hashes are stored as lowercase hex text, amounts and instants as 64-bit integers.
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "metering/store.hpp"

namespace enact::metering::sql {

using param = std::variant<int64_t, std::string>;

/// What a statement answered: its rows (every column as text, NULL as nullopt) and, for
/// INSERT/UPDATE/DELETE, the rows it changed.
struct rows {
  std::vector<std::vector<std::optional<std::string>>> data;
  int64_t affected = 0;

  [[nodiscard]] bool empty() const noexcept { return data.empty(); }
  [[nodiscard]] bool null(size_t row, size_t col) const { return !data.at(row).at(col).has_value(); }
  [[nodiscard]] std::string text(size_t row, size_t col) const { return data.at(row).at(col).value_or(""); }
  /// The column as an integer; 0 for NULL; throws std::runtime_error for anything else.
  [[nodiscard]] int64_t i64(size_t row, size_t col) const;
  [[nodiscard]] uint64_t u64(size_t row, size_t col) const { return static_cast<uint64_t>(i64(row, col)); }
};

/// A statement: SQL text with `?N` placeholders (a string literal: SQLite caches it by address),
/// and whether PostgreSQL locks the rows it reads.
struct statement {
  const char* text;
  bool lock = false;
};

/// One open transaction of a backend. Failures throw (the backend maps them to storage).
class session {
 public:
  virtual ~session() = default;
  virtual rows exec(const statement& s, const std::vector<param>& params) = 0;
};

/// The schema, version by version (element i takes version i to i + 1; append, never edit), in
/// types both databases read alike, with `seq_column` the spelling of an auto-incremented
/// primary key (list order): SQLite's INTEGER PRIMARY KEY AUTOINCREMENT, PostgreSQL's identity.
[[nodiscard]] std::vector<std::string> schema(std::string_view seq_column);

/// The store's operations on a session (store.hpp documents each); `now` is the caller's clock.
namespace operations {
[[nodiscard]] result<uint64_t> balance(session& s, const account_hash& account);
[[nodiscard]] result<uint64_t> available(session& s, const account_hash& account, millis now);
[[nodiscard]] result<void> record_payment(session& s, const payment& p, millis now);
[[nodiscard]] result<payment> get_payment(session& s, const account_hash& account, std::string_view id);
[[nodiscard]] result<credit_result> credit_payment(session& s, const account_hash& account, std::string_view id,
                                                   millis now);
[[nodiscard]] result<reversal_result> reverse_payment(session& s, const reversal_request& r, millis now);
[[nodiscard]] result<uint64_t> owed(session& s, const account_hash& account);
/// The refusals of reserve, settle and release, word for word as every backend answers them (the
/// conformance suite compares the backends' messages).
namespace refusal {
[[nodiscard]] error insufficient_to_reserve(uint64_t balance, uint64_t held, uint64_t amount);
[[nodiscard]] error cap_exceeded(uint64_t cap, uint64_t used, uint64_t amount);
/// No open reservation `id` of the account to settle (unknown, settled, released or expired).
[[nodiscard]] error unknown_reservation(std::string_view id);
/// No open reservation `id` of the account to release.
[[nodiscard]] error not_open(std::string_view id);
[[nodiscard]] error over_reserved(std::string_view id, uint64_t amount, uint64_t reserved);
[[nodiscard]] error insufficient_to_settle(uint64_t balance, uint64_t amount);
}  // namespace refusal
/// Validates a reservation's request (amount, run id, ttl): invalid_argument.
[[nodiscard]] result<void> check_reserve(const reserve_request& q);
/// The rule a reservation passes: `balance` less `held_all` (the account's open reservations)
/// covers `q.amount` (insufficient_credits), and when `q.key_cap` is set, the key's `spent` plus
/// `held_key` plus the amount stay within it (cap_exceeded).
[[nodiscard]] result<void> check_funds(const reserve_request& q, uint64_t balance, uint64_t held_all, uint64_t spent,
                                       uint64_t held_key);
/// A fresh reservation id ("rsv_" and 32 random hex digits).
[[nodiscard]] std::string new_reservation_id();
/// Reads `clock` after the account's row is locked: a reservation made after a wait for the lock
/// expires `r.ttl` after it is made.
[[nodiscard]] result<reservation> reserve(session& s, const reserve_request& r, const clock_fn& clock);
[[nodiscard]] result<uint64_t> settle(session& s, const account_hash& account, std::string_view id, uint64_t amount,
                                      millis now);
/// The charge of reservation `r`, closed elsewhere (metering/process_holds.hpp): `amount` debited
/// (insufficient_credits when the balance is short; 0 debits nothing), added to its key's spending
/// and to the usage history; returns the balance after it.
[[nodiscard]] result<uint64_t> charge(session& s, const reservation& r, uint64_t amount, millis now);
/// `charge` and `keep_answer` in one transaction.
[[nodiscard]] result<uint64_t> charge_and_keep(session& s, const reservation& r, uint64_t amount,
                                               const idempotency_request& q, const kept_answer& a, millis now);
[[nodiscard]] result<void> release(session& s, const account_hash& account, std::string_view id);
[[nodiscard]] result<uint64_t> release_expired(session& s, millis now);
[[nodiscard]] result<key_spending> spending(session& s, const account_hash& account, const key_hash& key, millis now);
[[nodiscard]] result<page<usage_record>> usage(session& s, const account_hash& account, page_request p);
[[nodiscard]] result<page<payment>> payments(session& s, const account_hash& account, page_request p);
[[nodiscard]] result<idempotency_claim> claim_idempotency(session& s, const idempotency_request& r, millis now);
[[nodiscard]] result<void> keep_answer(session& s, const idempotency_request& r, const kept_answer& a);
[[nodiscard]] result<void> drop_claim(session& s, const idempotency_request& r);
[[nodiscard]] result<void> renew_claim(session& s, const idempotency_request& r, millis now);
[[nodiscard]] result<uint64_t> settle_and_keep(session& s, const account_hash& account, std::string_view id,
                                               uint64_t amount, const idempotency_request& r, const kept_answer& a,
                                               millis now);
[[nodiscard]] result<uint64_t> expire_idempotency(session& s, millis now);
/// One statement (session_store runs it as a single-statement write).
[[nodiscard]] result<bool> use_once(session& s, const hash256& id, millis expires_at, millis now);
/// Deletes at most `limit` expired uses; returns how many.
[[nodiscard]] result<uint64_t> expire_nonces(session& s, millis now, uint64_t limit);
}  // namespace operations

/// A store whose every method is its operation in one transaction of the backend: a backend
/// says only how it opens, commits and rolls back a session.
class session_store : public store {
 public:
  [[nodiscard]] result<uint64_t> balance(const account_hash& a) const override;
  [[nodiscard]] result<uint64_t> available(const account_hash& a) const override;
  [[nodiscard]] result<void> record_payment(const payment& p) override;
  [[nodiscard]] result<payment> get_payment(const account_hash& a, std::string_view id) const override;
  [[nodiscard]] result<credit_result> credit_payment(const account_hash& a, std::string_view id) override;
  [[nodiscard]] result<reversal_result> reverse_payment(const reversal_request& r) override;
  [[nodiscard]] result<uint64_t> owed(const account_hash& a) const override;
  [[nodiscard]] result<reservation> reserve(const reserve_request& r) override;
  [[nodiscard]] result<uint64_t> settle(const account_hash& a, std::string_view id, uint64_t amount) override;
  [[nodiscard]] result<void> release(const account_hash& a, std::string_view id) override;
  [[nodiscard]] result<uint64_t> release_expired() override;
  [[nodiscard]] result<key_spending> spending(const account_hash& a, const key_hash& k) const override;
  [[nodiscard]] result<page<usage_record>> usage(const account_hash& a, page_request p) const override;
  [[nodiscard]] result<page<payment>> payments(const account_hash& a, page_request p) const override;
  [[nodiscard]] result<idempotency_claim> claim_idempotency(const idempotency_request& r) override;
  [[nodiscard]] result<void> keep_answer(const idempotency_request& r, const kept_answer& a) override;
  [[nodiscard]] result<void> drop_claim(const idempotency_request& r) override;
  [[nodiscard]] result<void> renew_claim(const idempotency_request& r) override;
  [[nodiscard]] result<uint64_t> settle_and_keep(const account_hash& a, std::string_view id, uint64_t amount,
                                                 const idempotency_request& r, const kept_answer& k) override;
  [[nodiscard]] result<uint64_t> expire_idempotency() override;
  [[nodiscard]] result<bool> use_once(const hash256& id, millis expires_at) override;
  [[nodiscard]] result<uint64_t> expire_nonces() override;

 protected:
  explicit session_store(clock_fn now) : now_(now ? std::move(now) : clock_fn(system_now)) {}

  /// The store's clock (a test's, or the system's).
  [[nodiscard]] const clock_fn& clock() const noexcept { return now_; }

  /// Runs `body` in one transaction (a write transaction when `write`): committed when it returns
  /// true, rolled back when it returns false or throws (the exception passed on). A backend may
  /// run `body` again when the database aborted the transaction (a deadlock).
  virtual void transact(bool write, const std::function<bool(session&)>& body) const = 0;

  /// Runs a write that only holds credits or lets them go (a reservation made, released or
  /// expired; docs/architecture.md §4 "Holds are not waited to disk"): a crash that loses it
  /// loses the runs it held for too, and an open reservation lost is one released, which every
  /// reader already allows for (a reservation may expire at any time). A backend may answer it
  /// once committed, before the commit reached the disk; a later durable commit makes it durable
  /// with everything before it. By default, a write like any other.
  virtual void transact_hold(const std::function<bool(session&)>& body) const { transact(true, body); }

  /// Runs a write that is one statement, which changes nothing when it refuses and cannot fail
  /// halfway (queued_write::single_statement, group_commit.hpp): a backend may run it without a
  /// transaction or savepoint of its own (PostgreSQL: one round trip when it runs alone). By
  /// default, a write like any other.
  virtual void transact_single(const std::function<bool(session&)>& body) const { transact(true, body); }

  enum class access { read, write, hold, single };
  /// Runs `f(session&)` (returning a result) by `a`'s transaction: a read, a write, a hold
  /// (transact_hold) or a single statement (transact_single); what the database threw answers
  /// storage.
  template <class F>
  auto run(access a, F&& f) const -> decltype(f(std::declval<session&>())) {
    std::optional<decltype(f(std::declval<session&>()))> out;
    const std::function<bool(session&)> body = [&](session& s) {
      out.emplace(f(s));
      return out->has_value();
    };
    try {
      if (a == access::hold)
        transact_hold(body);
      else if (a == access::single)
        transact_single(body);
      else
        transact(a == access::write, body);
    } catch (const std::exception& e) {
      return fail(metering_errc::storage, std::string("metering store: ") + e.what());
    }
    return std::move(*out);
  }

 private:
  clock_fn now_;
};

}  // namespace enact::metering::sql
