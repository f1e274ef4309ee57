// SPDX-License-Identifier: Apache-2.0
// What the SQLite and PostgreSQL trigger stores share: the column lists their SELECTs read, the
// mapping of a row to a trigger, run, token, approval, browser session or schedule (written once
// over any row type with the accessors below), the records a queued or refused run becomes, and
// the argument checks and not-found/lease-lost errors both answer.
//
// A row type provides: text(col), i64(col), is_null(col), boolean(col), blob(col) and
// fixed<N>(col) (a blob of exactly N bytes, throwing otherwise). A row that does not map (an
// unknown enum, JSON that does not parse) throws `corrupt_row`; each store answers it as
// store_errc::storage with its backend's name in front.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "triggers/store.hpp"

namespace enact::triggers::store_rows {

// The columns of a trigger row `t` and of a run row `r`, in the order read_trigger and read_run
// read them.
#define TRIGGER_COLUMNS                                                                    \
  "t.id, t.owner, t.type, t.name, t.enabled, t.action_cid, t.pkp_id, t.sealed_usage_key, " \
  "t.usage_key_hash, t.config, t.created_at, t.updated_at, t.max_runs_per_minute, "        \
  "t.max_queued_runs, t.disabled_reason, t.credit_failures "
#define RUN_COLUMNS                                                                               \
  "r.id, r.trigger_id, r.status, r.attempts, r.params, r.response, r.error_code, "                \
  "r.error_message, r.error_stack, r.queued_at, r.started_at, r.finished_at, r.next_attempt_at, " \
  "r.lease_owner, r.lease_expires_at "
inline constexpr int kRunColumns = 15;

/// Most bytes of a free-text field (names, error messages) unless a field says otherwise.
inline constexpr size_t kMaxText = 4096;

/// A stored row that does not map to a record.
struct corrupt_row : std::runtime_error {
  explicit corrupt_row(const std::string& what) : std::runtime_error("corrupt row: " + what) {}
};

/// Instants are stored as Unix milliseconds.
[[nodiscard]] inline time_point stored_time(int64_t ms) { return time_point{std::chrono::milliseconds{ms}}; }
/// JSON is stored as the exact text it was written as; throws corrupt_row when it does not parse.
[[nodiscard]] json::value stored_json(std::string_view text);
/// A trigger's config as its row stores it (the JSON the API answers), and back for a trigger of
/// type `t`; the latter throws corrupt_row when the text is no config of that type.
[[nodiscard]] std::string config_text(const api::trigger_config& c);
[[nodiscard]] api::trigger_config stored_config(trigger_type t, std::string_view text);

template <class Row>
[[nodiscard]] time_point time_at(const Row& q, int col) {
  return stored_time(q.i64(col));
}
template <class Row>
[[nodiscard]] std::optional<time_point> opt_time_at(const Row& q, int col) {
  if (q.is_null(col))
    return std::nullopt;
  return time_at(q, col);
}

template <class Row>
[[nodiscard]] trigger read_trigger(const Row& q, int at = 0) {
  trigger t;
  t.id = q.text(at);
  t.owner = q.text(at + 1);
  const auto type = trigger_type_from(q.text(at + 2));
  if (!type)
    throw corrupt_row("unknown trigger type");
  t.type = *type;
  t.name = q.text(at + 3);
  t.enabled = q.boolean(at + 4);
  t.action_cid = q.text(at + 5);
  if (!q.is_null(at + 6))
    t.pkp_id = q.template fixed<20>(at + 6);
  t.sealed_usage_key = q.blob(at + 7);
  t.usage_key_hash = q.template fixed<32>(at + 8);
  t.config = stored_config(t.type, q.text(at + 9));
  t.created_at = time_at(q, at + 10);
  t.updated_at = time_at(q, at + 11);
  t.max_runs_per_minute = static_cast<uint32_t>(q.i64(at + 12));
  t.max_queued_runs = static_cast<uint32_t>(q.i64(at + 13));
  if (!q.is_null(at + 14))
    t.disabled_reason = q.text(at + 14);
  t.credit_failures = static_cast<uint32_t>(q.i64(at + 15));
  return t;
}

template <class Row>
[[nodiscard]] run read_run(const Row& q, int at = 0) {
  run r;
  r.id = q.text(at);
  r.trigger_id = q.text(at + 1);
  const auto status = run_status_from(q.text(at + 2));
  if (!status)
    throw corrupt_row("unknown run status");
  r.status = *status;
  r.attempts = static_cast<uint32_t>(q.i64(at + 3));
  r.params = stored_json(q.text(at + 4));
  if (!q.is_null(at + 5))
    r.response = stored_json(q.text(at + 5));
  if (!q.is_null(at + 6)) {
    run_error e;
    e.code = q.text(at + 6);
    e.message = q.text(at + 7);
    if (!q.is_null(at + 8))
      e.stack = q.text(at + 8);
    r.error = std::move(e);
  }
  r.queued_at = time_at(q, at + 9);
  r.started_at = opt_time_at(q, at + 10);
  r.finished_at = opt_time_at(q, at + 11);
  r.next_attempt_at = time_at(q, at + 12);
  r.lease_owner = q.text(at + 13);
  r.lease_expires_at = opt_time_at(q, at + 14);
  return r;
}

/// A page of rows: the total from the first column of `count`'s row, the items read by
/// `read(row)` from each row of `items`.
template <class T, class Count, class Rows, class Read>
[[nodiscard]] listing<T> read_listing(Count& count, Rows& items, Read read) {
  listing<T> out;
  if (count.next())
    out.total = count.u64(0);
  while (items.next())
    out.items.push_back(read(items));
  return out;
}

/// Columns: hash, user_id, client_name, created_at, expires_at, revoked.
template <class Row>
[[nodiscard]] token_record read_token(const Row& q) {
  return token_record{q.template fixed<32>(0), q.text(1), q.text(2), time_at(q, 3), time_at(q, 4), q.boolean(5)};
}

/// Columns: challenge, client_name, status, user_id, token_hash, created_at, expires_at.
template <class Row>
[[nodiscard]] approval read_approval(const Row& q) {
  approval a;
  a.challenge = q.text(0);
  a.client_name = q.text(1);
  const std::string s = q.text(2);
  a.status = s == "approved" ? approval_status::approved
             : s == "denied" ? approval_status::denied
                             : approval_status::pending;
  a.user_id = q.text(3);
  if (!q.is_null(4))
    a.token_hash = q.template fixed<32>(4);
  a.created_at = time_at(q, 5);
  a.expires_at = time_at(q, 6);
  return a;
}

/// Columns: hash, user_id, nonce, created_at, expires_at.
template <class Row>
[[nodiscard]] browser_session read_session(const Row& q) {
  return browser_session{q.template fixed<32>(0), q.text(1), q.text(2), time_at(q, 3), time_at(q, 4)};
}

/// Columns: trigger id, config, next_due, last_planned (NULL without a schedule state) of a
/// schedule trigger. nullopt for a config that is no schedule's (the API never stores one).
template <class Row>
[[nodiscard]] std::optional<scheduled_trigger> read_schedule(const Row& q) {
  scheduled_trigger s;
  s.trigger_id = q.text(0);
  const auto config = api::read_config(trigger_type::schedule, stored_json(q.text(1)));
  if (!config)
    return std::nullopt;
  s.cron = std::get<api::schedule_config>(*config).cron;
  if (!q.is_null(2))
    s.state = schedule_state{time_at(q, 2), opt_time_at(q, 3)};
  return s;
}

/// The record of `r` once queued, and once refused by the run limits with `why` (failed at once,
/// never attempted).
[[nodiscard]] run queued_run(const new_run& r);
[[nodiscard]] run refused_run(const new_run& r, const std::string& why);

[[nodiscard]] result<void> check_text(std::string_view field, std::string_view v, size_t max = kMaxText);
[[nodiscard]] result<void> check_new_run(const new_run& r);
/// A new trigger's id and owner are set, its text fields within their limits, and its config of
/// its type.
[[nodiscard]] result<void> check_new_trigger(const trigger& t);
/// A patch's text fields are within their limits, and the usage key and its hash change together.
[[nodiscard]] result<void> check_patch(const trigger_patch& patch);
/// `t` with the fields `patch` sets, updated at `patch.now`; enabling a disabled trigger clears
/// its disabled_reason and credit_failures (store.hpp).
void apply_patch(trigger& t, const trigger_patch& patch);
[[nodiscard]] error no_trigger(std::string_view id);
[[nodiscard]] error no_run(std::string_view id);
[[nodiscard]] error lease_lost(const lease_ref& l);

}  // namespace enact::triggers::store_rows
