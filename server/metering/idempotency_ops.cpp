// SPDX-License-Identifier: Apache-2.0
// The metering store's idempotency records and single-use values (store.hpp), written once over a
// backend's SQL session (session.hpp) like the credit operations (operations.cpp).
#include <string>

#include "metering/operations_internal.hpp"

namespace enact::metering::sql::operations {
namespace {

constexpr size_t kMaxIdempotencyKey = 255;
constexpr size_t kMaxOwner = 64;

result<void> check_idempotency(const idempotency_request& r) {
  ENACT_TRY_VOID(check_id("Idempotency-Key", r.key, kMaxIdempotencyKey));
  for (const char c : r.key)
    if (c < 0x21 || c > 0x7e)
      return fail(metering_errc::invalid_argument, "Idempotency-Key: printable ASCII without spaces");
  if (r.lease.count() <= 0)
    return fail(metering_errc::invalid_argument, "lease: must be positive");
  if (r.owner.size() > kMaxOwner)
    return fail(metering_errc::invalid_argument, "owner: at most " + std::to_string(kMaxOwner) + " bytes");
  return {};
}

millis retention_start(millis now) {
  return now - std::chrono::duration_cast<std::chrono::milliseconds>(kIdempotencyRetention).count();
}

}  // namespace

result<idempotency_claim> claim_idempotency(session& s, const idempotency_request& q, millis now) {
  ENACT_TRY_VOID(check_idempotency(q));
  const std::string fp = hx(q.fingerprint);
  const millis lease_until = now + q.lease.count();
  const rows r = s.exec({"SELECT fingerprint, created_at, lease_until, status, body, owner FROM metering_idempotency "
                         "WHERE account = ?1 AND idem_key = ?2",
                         true},
                        {hx(q.account), q.key});
  if (r.empty()) {
    // Of two transactions inserting the same free key, PostgreSQL makes the second wait for the
    // first and then insert nothing: it finds the key claimed.
    const rows ins =
        s.exec({"INSERT INTO metering_idempotency (account, idem_key, fingerprint, created_at, lease_until, owner) "
                "VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (account, idem_key) DO NOTHING"},
               {hx(q.account), q.key, fp, now, lease_until, q.owner});
    if (ins.affected == 1)
      return idempotency_claim{claim_state::claimed, std::nullopt, 0};
    return idempotency_claim{claim_state::in_progress, std::nullopt, lease_until};
  }
  if (r.i64(0, 1) <= retention_start(now) && (!r.null(0, 3) || r.i64(0, 2) <= now)) {
    // Older than the retention, and answered or no longer leased: the key is free again, for any
    // request. A claim whose lease holds stays its claimant's (it may have been taken over late
    // in the retention, and its claimant still runs).
    s.exec({"UPDATE metering_idempotency SET fingerprint = ?3, created_at = ?4, lease_until = ?5, status = NULL, "
            "body = NULL, owner = ?6 WHERE account = ?1 AND idem_key = ?2"},
           {hx(q.account), q.key, fp, now, lease_until, q.owner});
    return idempotency_claim{claim_state::claimed, std::nullopt, 0};
  }
  if (r.text(0, 0) != fp)
    return idempotency_claim{claim_state::mismatch, std::nullopt, 0};
  if (!r.null(0, 3))
    return idempotency_claim{claim_state::answered, kept_answer{static_cast<int>(r.i64(0, 3)), r.text(0, 4)}, 0};
  const millis held_until = r.i64(0, 2);
  if (held_until > now)
    return idempotency_claim{claim_state::in_progress, std::nullopt, held_until};
  // The claimant's lease ran out without an answer (its server died): this request takes over,
  // on condition that the claim is still the one read (same owner, same lease, unanswered). The
  // row lock already serializes takers; the condition keeps two from both winning even where a
  // backend's read was not locked.
  const rows taken =
      s.exec({"UPDATE metering_idempotency SET lease_until = ?5, owner = ?6 WHERE account = ?1 AND idem_key = ?2 AND "
              "owner = ?3 AND lease_until = ?4 AND status IS NULL"},
             {hx(q.account), q.key, r.text(0, 5), held_until, lease_until, q.owner});
  if (taken.affected != 1)
    return idempotency_claim{claim_state::in_progress, std::nullopt, lease_until};
  return idempotency_claim{claim_state::claimed, std::nullopt, 0};
}

result<void> keep_answer(session& s, const idempotency_request& q, const kept_answer& a) {
  const rows r =
      s.exec({"UPDATE metering_idempotency SET status = ?4, body = ?5 WHERE account = ?1 AND idem_key = ?2 AND "
              "fingerprint = ?3 AND owner = ?6 AND status IS NULL"},
             {hx(q.account), q.key, hx(q.fingerprint), static_cast<int64_t>(a.status), a.body, q.owner});
  if (r.affected != 1)
    return fail(metering_errc::unknown_claim, "Idempotency-Key " + q.key + ": no open claim of this request");
  return {};
}

result<void> drop_claim(session& s, const idempotency_request& q) {
  const rows r =
      s.exec({"DELETE FROM metering_idempotency WHERE account = ?1 AND idem_key = ?2 AND fingerprint = ?3 AND "
              "owner = ?4 AND status IS NULL"},
             {hx(q.account), q.key, hx(q.fingerprint), q.owner});
  if (r.affected != 1)
    return fail(metering_errc::unknown_claim, "Idempotency-Key " + q.key + ": no open claim of this request");
  return {};
}

result<void> renew_claim(session& s, const idempotency_request& q, millis now) {
  ENACT_TRY_VOID(check_idempotency(q));
  const rows r = s.exec({"UPDATE metering_idempotency SET lease_until = ?5 WHERE account = ?1 AND idem_key = ?2 AND "
                         "fingerprint = ?3 AND owner = ?4 AND status IS NULL AND lease_until > ?6"},
                        {hx(q.account), q.key, hx(q.fingerprint), q.owner, now + q.lease.count(), now});
  if (r.affected != 1)
    return fail(metering_errc::unknown_claim,
                "Idempotency-Key " + q.key + ": the claim of this request ended (its lease ran out or was taken over)");
  return {};
}

result<uint64_t> settle_and_keep(session& s, const account_hash& account, std::string_view id, uint64_t amount,
                                 const idempotency_request& q, const kept_answer& a, millis now) {
  ENACT_TRY(const uint64_t after, settle(s, account, id, amount, now));
  ENACT_TRY_VOID(keep_answer(s, q, a));  // an error rolls the settle back with it
  return after;
}

result<uint64_t> expire_idempotency(session& s, millis now) {
  return static_cast<uint64_t>(
      s.exec({"DELETE FROM metering_idempotency WHERE created_at <= ?1 AND (status IS NOT NULL OR lease_until <= ?2)"},
             {retention_start(now), now})
          .affected);
}

result<bool> use_once(session& s, const hash256& id, millis expires_at, millis now) {
  if (expires_at <= now)
    return fail(metering_errc::invalid_argument, "use_once: expires_at " + std::to_string(expires_at) +
                                                     " is not after now (" + std::to_string(now) + ")");
  // First use and replay told apart by the one statement: a new id is inserted, an expired one's
  // row taken over (its expiry replaced), and a live one's left as it is, changing no row. In
  // PostgreSQL a second inserter of one id waits for the first and then re-checks the WHERE on
  // the row it committed, so it changes nothing either.
  const rows r = s.exec({"INSERT INTO metering_nonces (id, expires_at) VALUES (?1, ?2) ON CONFLICT (id) DO UPDATE "
                         "SET expires_at = excluded.expires_at WHERE metering_nonces.expires_at <= ?3"},
                        {hx(id), expires_at, now});
  return r.affected == 1;
}

result<uint64_t> expire_nonces(session& s, millis now, uint64_t limit) {
  // The outer condition is checked again on a row another transaction took over meanwhile (a new
  // use of an expired id, PostgreSQL): that use is kept.
  return static_cast<uint64_t>(
      s.exec({"DELETE FROM metering_nonces WHERE expires_at <= ?1 AND id IN (SELECT id FROM metering_nonces WHERE "
              "expires_at <= ?1 LIMIT ?2)"},
             {now, num(limit)})
          .affected);
}

}  // namespace enact::metering::sql::operations
