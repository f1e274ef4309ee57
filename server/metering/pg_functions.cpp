// SPDX-License-Identifier: Apache-2.0
// The PostgreSQL metering store's server-side reserve and settle (pg_functions.hpp). Each function
// follows its operation in operations.cpp step for step; where the operation writes before a
// check that may still refuse (reserve's purge of expired holds, settle's delete of the
// reservation), the function moves the write after the checks, which read the same rows either
// way (an expired hold counts for nothing), so that a refusal has written nothing.
#include "metering/pg_functions.hpp"

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

namespace enact::metering::pg {
namespace {

namespace refusal = sql::operations::refusal;

// The result codes the functions answer (o_code), as the SQL text below spells them.
enum answer_code : int64_t {
  kDone = 0,
  kWaited = 1,              // reserve: waited for the account's row, checked and wrote nothing
  kInsufficient = 2,        // the balance (less the holds) is short
  kCapExceeded = 3,         // reserve: the key's cap would be passed
  kUnknownReservation = 4,  // settle: no open reservation of the account with that id
  kOverReserved = 5,        // settle: more than was reserved
};

/// `sql` with BATCH_LOCK_KEY spelled as kBatchLockKey: the key the writes' batches take alone
/// (pg_store.cpp) and metering_batch_lock_v2 takes shared must be one key.
std::string with_batch_lock_key(std::string sql) {
  const std::string key = std::to_string(kBatchLockKey);
  for (size_t at = sql.find("BATCH_LOCK_KEY"); at != std::string::npos; at = sql.find("BATCH_LOCK_KEY", at))
    sql.replace(at, 14, key);
  return sql;
}

}  // namespace

const std::string& function_definitions() {
  // metering_batch_lock_v2: a batch of function calls takes the batch lock shared (a batch of
  // other writes takes it alone, kBatchLock in pg_store.cpp, and waits for these) and then one
  // advisory lock per account of the batch (class 0x6d657472 "metr", PostgreSQL's hashtext of the
  // account), in ascending key order whatever order the caller names them in: two batches that
  // share accounts take their common locks in the same order, so they wait for each other and
  // never deadlock, and batches of different accounts run side by side. Any wait marks the
  // transaction waited (below). metering_batch_lock_v1, the lock alone, stays for servers of the
  // previous release during an upgrade.
  // reserve: the account's row locked first (SKIP LOCKED, then waiting only when another
  // transaction holds it, to tell the caller it waited: kWaited; every later reserve of the
  // transaction answers kWaited too, its clock being older than that wait, and so does every
  // reserve after metering_batch_lock_v1 waited for the batch lock), then the account's unexpired
  // holds against the balance, then the key's spending and holds against its cap, then the purge
  // of the account's expired holds and the new hold. One scan of the account's holds answers the
  // balance check, the cap check and whether any expired; it is a plain index scan (no bitmap
  // scan), which marks the index entries of holds deleted since the last vacuum dead as it passes
  // them, so that the next scans skip them cheaply: under a steady stream of runs a bitmap scan
  // visits every hold settled since the last vacuum, each time.
  // settle (v2; v1 stays for servers of the previous release in a rolling upgrade): the account's
  // row locked, the reservation (this account's, unexpired), the amount against it, the debit —
  // what a refund or dispute left the balance short of becomes owed — and only then the
  // reservation's delete, the key's spending and the charge.
  static const std::string s = with_batch_lock_key(R"sql(
CREATE OR REPLACE FUNCTION metering_reserve_v1(
    p_account text, p_key text, p_amount bigint, p_run_id text, p_id text, p_now bigint, p_ttl bigint,
    p_cap numeric,
    OUT o_code integer, OUT o_balance bigint, OUT o_held numeric, OUT o_used numeric, OUT o_expires_at bigint)
LANGUAGE plpgsql SET enable_bitmapscan = off AS $fn$
DECLARE
  v_key_held numeric;
  v_expired boolean;
BEGIN
  o_held := 0;
  o_used := 0;
  -- An earlier statement of this transaction waited (the batch lock, or another reserve for an
  -- account's row): p_now was read before that wait, so this call is run again with a clock read
  -- after it, as one that waited itself.
  IF current_setting('enact.metering_waited', true) = 'on' THEN
    o_code := 1;
    RETURN;
  END IF;
  SELECT balance INTO o_balance FROM metering_accounts WHERE account = p_account FOR UPDATE SKIP LOCKED;
  IF NOT FOUND THEN
    SELECT balance INTO o_balance FROM metering_accounts WHERE account = p_account FOR UPDATE;
    IF FOUND THEN
      PERFORM set_config('enact.metering_waited', 'on', true);
      o_code := 1;
      RETURN;
    END IF;
    o_balance := 0;
  END IF;
  SELECT COALESCE(SUM(amount) FILTER (WHERE expires_at > p_now), 0),
         COALESCE(SUM(amount) FILTER (WHERE expires_at > p_now AND key_hash = p_key), 0),
         COALESCE(bool_or(expires_at <= p_now), false)
    INTO o_held, v_key_held, v_expired
    FROM metering_reservations WHERE account = p_account;
  IF o_balance < o_held OR o_balance - o_held < p_amount THEN
    o_code := 2;
    RETURN;
  END IF;
  IF p_cap <> 0 THEN
    o_used := COALESCE((SELECT spent FROM metering_key_spending WHERE account = p_account AND key_hash = p_key), 0)
      + v_key_held;
    IF o_used > p_cap OR p_cap - o_used < p_amount THEN
      o_code := 3;
      RETURN;
    END IF;
  END IF;
  IF v_expired THEN
    DELETE FROM metering_reservations WHERE account = p_account AND expires_at <= p_now;
  END IF;
  o_expires_at := p_now + p_ttl;
  INSERT INTO metering_reservations (id, account, key_hash, amount, run_id, expires_at)
  VALUES (p_id, p_account, p_key, p_amount, p_run_id, o_expires_at);
  o_code := 0;
END
$fn$;

CREATE OR REPLACE FUNCTION metering_batch_lock_v1(p_key bigint) RETURNS void
LANGUAGE plpgsql AS $fn$
BEGIN
  IF NOT pg_try_advisory_xact_lock(p_key) THEN
    PERFORM pg_advisory_xact_lock(p_key);
    PERFORM set_config('enact.metering_waited', 'on', true);
  END IF;
END
$fn$;

CREATE OR REPLACE FUNCTION metering_batch_lock_v2(p_accounts text[]) RETURNS void
LANGUAGE plpgsql AS $fn$
DECLARE
  v_key integer;
BEGIN
  IF NOT pg_try_advisory_xact_lock_shared(BATCH_LOCK_KEY) THEN
    PERFORM pg_advisory_xact_lock_shared(BATCH_LOCK_KEY);
    PERFORM set_config('enact.metering_waited', 'on', true);
  END IF;
  FOR v_key IN SELECT DISTINCT hashtext(a) FROM unnest(p_accounts) AS a ORDER BY 1 LOOP
    IF NOT pg_try_advisory_xact_lock(1835365490, v_key) THEN
      PERFORM pg_advisory_xact_lock(1835365490, v_key);
      PERFORM set_config('enact.metering_waited', 'on', true);
    END IF;
  END LOOP;
END
$fn$;

CREATE OR REPLACE FUNCTION metering_settle_v1(
    p_account text, p_id text, p_amount numeric, p_now bigint,
    OUT o_code integer, OUT o_balance bigint, OUT o_reserved bigint)
LANGUAGE plpgsql AS $fn$
DECLARE
  v_key text;
  v_run_id text;
  v_expires_at bigint;
BEGIN
  SELECT balance INTO o_balance FROM metering_accounts WHERE account = p_account FOR UPDATE;
  IF NOT FOUND THEN
    o_balance := 0;
  END IF;
  SELECT key_hash, amount, run_id, expires_at INTO v_key, o_reserved, v_run_id, v_expires_at
    FROM metering_reservations WHERE id = p_id AND account = p_account;
  IF NOT FOUND OR v_expires_at <= p_now THEN
    o_code := 4;
    RETURN;
  END IF;
  IF p_amount > o_reserved THEN
    o_code := 5;
    RETURN;
  END IF;
  IF p_amount > 0 THEN
    UPDATE metering_accounts SET balance = balance - p_amount WHERE account = p_account AND balance >= p_amount;
    IF NOT FOUND THEN
      o_code := 2;
      RETURN;
    END IF;
  END IF;
  DELETE FROM metering_reservations WHERE id = p_id;
  IF p_amount > 0 THEN
    INSERT INTO metering_key_spending (account, key_hash, spent) VALUES (p_account, v_key, p_amount)
      ON CONFLICT (account, key_hash) DO UPDATE SET spent = metering_key_spending.spent + EXCLUDED.spent;
    INSERT INTO metering_charges (account, run_id, key_hash, amount, at)
      VALUES (p_account, v_run_id, v_key, p_amount, p_now);
  END IF;
  o_code := 0;
END
$fn$;

CREATE OR REPLACE FUNCTION metering_settle_v2(
    p_account text, p_id text, p_amount numeric, p_now bigint,
    OUT o_code integer, OUT o_balance bigint, OUT o_reserved bigint)
LANGUAGE plpgsql AS $fn$
DECLARE
  v_key text;
  v_run_id text;
  v_expires_at bigint;
BEGIN
  SELECT balance INTO o_balance FROM metering_accounts WHERE account = p_account FOR UPDATE;
  IF NOT FOUND THEN
    o_balance := 0;
  END IF;
  SELECT key_hash, amount, run_id, expires_at INTO v_key, o_reserved, v_run_id, v_expires_at
    FROM metering_reservations WHERE id = p_id AND account = p_account;
  IF NOT FOUND OR v_expires_at <= p_now THEN
    o_code := 4;
    RETURN;
  END IF;
  IF p_amount > o_reserved THEN
    o_code := 5;
    RETURN;
  END IF;
  IF p_amount > 0 THEN
    -- As operations.cpp's debit: what a reversal left the balance short of is owed.
    IF o_balance < p_amount THEN
      UPDATE metering_accounts SET balance = 0, owed = owed + (p_amount - o_balance) WHERE account = p_account;
    ELSE
      UPDATE metering_accounts SET balance = balance - p_amount WHERE account = p_account AND balance >= p_amount;
    END IF;
    IF NOT FOUND THEN
      o_code := 2;
      RETURN;
    END IF;
  END IF;
  DELETE FROM metering_reservations WHERE id = p_id;
  IF p_amount > 0 THEN
    INSERT INTO metering_key_spending (account, key_hash, spent) VALUES (p_account, v_key, p_amount)
      ON CONFLICT (account, key_hash) DO UPDATE SET spent = metering_key_spending.spent + EXCLUDED.spent;
    INSERT INTO metering_charges (account, run_id, key_hash, amount, at)
      VALUES (p_account, v_run_id, v_key, p_amount, p_now);
  END IF;
  o_code := 0;
END
$fn$;
)sql");
  return s;
}

const sql::statement kReserveCall{
    "SELECT o_code, o_balance, o_held, o_used, o_expires_at FROM metering_reserve_v1(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"};
const sql::statement kSettleCall{"SELECT o_code, o_balance, o_reserved FROM metering_settle_v2(?1, ?2, ?3, ?4)"};
const sql::statement kClearWaited{"SELECT set_config('enact.metering_waited', 'off', true)"};
const sql::statement kBatchLockCall{"SELECT metering_batch_lock_v2(?1)"};

bool plain_request(const reserve_request& q) { return sql::operations::check_reserve(q).has_value(); }

reserve_outcome decode_reserve(const sql::rows& r, const reserve_request& q, const std::string& id,
                               std::optional<result<reservation>>& out) {
  const int64_t code = r.i64(0, 0);
  switch (code) {
    case kDone:
      out.emplace(reservation{id, q.account, q.key, q.amount, q.run_id, r.i64(0, 4)});
      return reserve_outcome::reserved;
    case kWaited:
      return reserve_outcome::waited;
    case kInsufficient:
      out.emplace(refusal::insufficient_to_reserve(r.u64(0, 1), r.u64(0, 2), q.amount));
      return reserve_outcome::refused;
    case kCapExceeded:
      out.emplace(refusal::cap_exceeded(q.key_cap, r.u64(0, 3), q.amount));
      return reserve_outcome::refused;
    default:
      throw std::runtime_error("metering: metering_reserve_v1 answered code " + std::to_string(code));
  }
}

result<uint64_t> decode_settle(const sql::rows& r, std::string_view id, uint64_t amount) {
  const int64_t code = r.i64(0, 0);
  const uint64_t balance = r.u64(0, 1);
  switch (code) {
    case kDone:
      return balance >= amount ? balance - amount : 0;
    case kUnknownReservation:
      return refusal::unknown_reservation(id);
    case kOverReserved:
      return refusal::over_reserved(id, amount, r.u64(0, 2));
    case kInsufficient:
      return refusal::insufficient_to_settle(balance, amount);
    default:
      throw std::runtime_error("metering: metering_settle_v1 answered code " + std::to_string(code));
  }
}

}  // namespace enact::metering::pg
