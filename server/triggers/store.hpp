// SPDX-License-Identifier: Apache-2.0
// `enact::triggers::store`: where the trigger service keeps its state (docs/architecture.md §4 "Trigger
// service") — triggers, their runs, the scheduler's due times, the chain watcher's checkpoints and
// seen logs, bearer tokens and pending browser approvals. One implementation over SQL
// (sql_store.hpp) with two backends: SQLite (sqlite_store.hpp, one process) and PostgreSQL
// (pg_store.hpp, several instances sharing the work); the suite in tests/triggers/store_suite.hpp
// runs unchanged on each.
//
// Contract of every implementation:
//  - every method is thread-safe and every write is atomic (all of it or none of it);
//  - a write has reached the backend's durable log before the method returns;
//  - the store has no clock: methods that depend on time take `now` (tests move time freely);
//  - usage API keys are only ever handed to it sealed (AES-256-GCM under the TEE, see seal.hpp);
//    the store never sees a key in plaintext, only its sealed bytes and its keccak256 hash;
//  - runs are handed to workers by leases: `lease_runs` moves due runs to running under a lease
//    that expires, so several workers (threads, processes, instances) never run one attempt twice,
//    and a crashed worker's run is picked up again once its lease expires. The worker's later
//    writes (`complete_run`, `fail_run`, `retry_run_later`, `renew_lease`) name the lease they
//    hold (worker id and attempt); a writer that lost its lease gets store_errc::lease_lost and
//    changes nothing.
#pragma once

#include <boost/json.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "enact/api/triggers.hpp"
#include "enact/bytes.hpp"
#include "enact/error.hpp"
#include "enact/result.hpp"

namespace enact::triggers {

enum class store_errc {
  not_found = 1,     // no such trigger / run / token / approval (or it belongs to another user)
  disabled,          // the trigger exists but is disabled (a webhook answers 409)
  wrong_type,        // the trigger is of another type than the operation needs
  conflict,          // a unique value exists already, or the state forbids the change
  lease_lost,        // the run's lease expired and went to another worker, or the run is gone
  invalid_argument,  // a value the store cannot hold (a field too long, an empty id)
  storage,           // the backend failed (I/O, lock timeout, corruption); transient for callers
  rate_limited,      // the trigger queued max_runs_per_minute runs in this minute already
  queue_full,        // the trigger has max_queued_runs runs waiting or running already
  limit_reached,     // the owner has the most triggers one owner may have (create_trigger)
};

inline const std::error_category& store_category() noexcept {
  static const enact::detail::errc_category<store_errc> c(
      "enact.triggers.store", {"", "not found", "trigger disabled", "wrong trigger type", "conflict", "lease lost",
                               "invalid argument", "storage failure", "over the trigger's max_runs_per_minute",
                               "over the trigger's max_queued_runs", "over the owner's trigger limit"});
  return c;
}
inline std::error_code make_error_code(store_errc e) noexcept { return {static_cast<int>(e), store_category()}; }

}  // namespace enact::triggers
ENACT_ERRC_ENUM(enact::triggers::store_errc)

namespace enact::triggers {

namespace json = boost::json;

/// Instants are UTC with millisecond precision (stored as Unix milliseconds).
using time_point = std::chrono::sys_time<std::chrono::milliseconds>;

/// Run limits of a trigger (docs/protocol.md §4): defaults, and the largest values accepted.
inline constexpr uint32_t kDefaultMaxRunsPerMinute = 60;
inline constexpr uint32_t kDefaultMaxQueuedRuns = 100;
using api::kMaxQueuedRunsLimit;
using api::kMaxRunsPerMinuteLimit;
/// The error code of a run that a schedule or chain event fired over its trigger's limits.
inline constexpr std::string_view kRateLimitedCode = "rate_limited";
/// The core's error code of a run refused for lack of credits (its 402, docs/protocol.md §0): the
/// one failure that counts towards a schedule's credit failures (fail_run).
inline constexpr std::string_view kInsufficientCreditsCode = "insufficient_credits";
/// The `disabled_reason` of a schedule trigger that fail_run disabled after `failures` runs in a
/// row failed with kInsufficientCreditsCode (docs/protocol.md §4 "Limits").
[[nodiscard]] inline std::string credit_disabled_reason(uint32_t failures) {
  return "disabled by the service: " + std::to_string(failures) +
         " runs in a row failed with insufficient_credits (the account has no credits to run the action); "
         "add credits, then enable the trigger again";
}

/// The wire model's enums (enact/api/triggers.hpp), with their wire names (docs/protocol.md §4).
using api::run_status;
using api::trigger_type;
/// "webhook", "schedule", "chain-event".
[[nodiscard]] inline std::string_view to_string(trigger_type t) noexcept { return api::name(t); }
[[nodiscard]] inline std::optional<trigger_type> trigger_type_from(std::string_view s) noexcept {
  return api::trigger_type_from_name(s);
}
/// "queued", "running", "success", "failed".
[[nodiscard]] inline std::string_view to_string(run_status s) noexcept { return api::name(s); }
[[nodiscard]] inline std::optional<run_status> run_status_from(std::string_view s) noexcept {
  return api::run_status_from_name(s);
}

struct trigger {
  /// 128 random bits (trigger_id() in ids.hpp): unguessable, because /webhook/<id> is public and
  /// the id is all a sender needs.
  std::string id;
  std::string owner;  // user id of the bearer token that created it
  trigger_type type = trigger_type::webhook;
  std::string name;
  bool enabled = true;
  std::string action_cid;
  std::optional<address> pkp_id;
  /// The usage API key, sealed (nonce ‖ ciphertext ‖ tag); never the key itself.
  bytes sealed_usage_key;
  /// keccak256 of the key's text (docs/protocol.md §1 "usage key hash").
  hash256 usage_key_hash{};
  /// Type-specific settings, already validated (docs/protocol.md §4); the alternative matches `type`. Kept
  /// typed: only the backends' row mapping (store_rows.hpp) turns it into JSON and back.
  api::trigger_config config;
  /// Firings accepted per calendar minute (UTC), and runs waiting or running at once; a firing
  /// over either is refused (enqueue_run) or recorded as a failed run (schedules, chain events).
  uint32_t max_runs_per_minute = kDefaultMaxRunsPerMinute;
  uint32_t max_queued_runs = kDefaultMaxQueuedRuns;
  time_point created_at{};
  time_point updated_at{};
  /// Why the service disabled the trigger (fail_run's credit rule); absent when it did not, and
  /// cleared, with credit_failures, when the owner enables the trigger again. Written only by the
  /// store: create_trigger ignores both.
  std::optional<std::string> disabled_reason;
  /// Runs of this schedule trigger that failed with kInsufficientCreditsCode since its last run
  /// that ended otherwise (fail_run, complete_run).
  uint32_t credit_failures = 0;
};

/// The scheduler's state of one schedule trigger: the planned time of its next firing, and of the
/// last one it fired.
struct schedule_state {
  time_point next_due{};
  std::optional<time_point> last_planned;
};

/// A change to a trigger; each field that is set replaces the stored one.
struct trigger_patch {
  std::optional<std::string> name;
  std::optional<bool> enabled;
  std::optional<api::trigger_config> config;
  std::optional<std::string> action_cid;
  std::optional<std::optional<address>> pkp_id;  // a set empty optional clears it
  std::optional<bytes> sealed_usage_key;         // set together with usage_key_hash
  std::optional<hash256> usage_key_hash;
  std::optional<uint32_t> max_runs_per_minute;
  std::optional<uint32_t> max_queued_runs;
  /// Replaces the schedule state in the same transaction (a new cron, or re-enabling, restarts
  /// the schedule from now).
  std::optional<schedule_state> schedule;
  time_point now{};
};

/// An enabled schedule trigger as the scheduler needs it.
struct scheduled_trigger {
  std::string trigger_id;
  std::string cron;                     // config.cron
  std::optional<schedule_state> state;  // absent until the first state is written
};

/// A run to create.
struct new_run {
  std::string id;  // run_id() in ids.hpp
  std::string trigger_id;
  json::value params;  // what the action sees as `params` (docs/protocol.md §4)
  time_point queued_at{};
};

/// One firing of a schedule trigger, as store::fire_schedule takes it.
struct schedule_firing {
  std::string trigger_id;
  time_point expected_due{};
  time_point planned{};
  new_run r;
  time_point next_due{};
};

struct run_error {
  std::string code;  // the core's error code ("action_failed", "unavailable", …)
  std::string message;
  std::optional<std::string> stack;  // the JavaScript stack when the action threw
};

struct run {
  std::string id;
  std::string trigger_id;
  /// queued: waiting for its first attempt, or returned by an expired lease; running: leased to a
  /// worker, or waiting for the backoff of a retry (spec: running → running on a transient
  /// failure); success / failed: final.
  run_status status = run_status::queued;
  uint32_t attempts = 0;  // leases taken so far (each lease is one attempt)
  json::value params;
  std::optional<json::value> response;
  std::optional<run_error> error;  // the last failure (kept while a retry waits)
  time_point queued_at{};
  std::optional<time_point> started_at;   // first lease
  std::optional<time_point> finished_at;  // success or failed
  time_point next_attempt_at{};           // not leased before this
  std::string lease_owner;                // worker id; empty when not leased
  std::optional<time_point> lease_expires_at;
};

/// A run handed to a worker, with what the worker needs from its trigger.
struct leased_run {
  run r;  // status running, attempts counting this lease
  std::string owner;
  std::string action_cid;
  std::optional<address> pkp_id;
  bytes sealed_usage_key;
};

/// A transiently failing run is retried up to this many times after its first attempt (the
/// specification's "retried up to 3 times", docs/triggers.md "Runs and retries").
inline constexpr uint32_t kMaxRunRetries = 3;
/// Attempts of one run in all: the first and its retries.
inline constexpr uint32_t kMaxRunAttempts = 1 + kMaxRunRetries;

struct lease_request {
  std::string worker_id;  // unique per worker thread and process (instance id / thread index)
  size_t max_runs = 1;
  std::chrono::milliseconds duration{30000};
  time_point now{};
  /// A run whose lease expired after this many attempts is failed (code "lease_expired") instead
  /// of being handed out again: a run that kills its worker every time ends.
  uint32_t max_attempts = kMaxRunAttempts;
};

/// Identifies the lease a worker holds on a run.
struct lease_ref {
  std::string run_id;
  std::string worker_id;
  uint32_t attempt = 0;  // run.attempts as lease_runs returned it
};

/// offset/limit paging of the management API (docs/protocol.md §4 `?limit&offset`).
struct page {
  uint64_t limit = 20;
  uint64_t offset = 0;
};

template <class T>
struct listing {
  std::vector<T> items;
  uint64_t total = 0;
};

// --- chain watcher (used by the watcher; the store keeps its state) ------------------------------

/// A log the watcher has processed for a trigger, keyed (trigger, block hash, log index), so a
/// restart or a re-read range never fires it twice; `removed` marks logs of a reorganised block.
struct seen_log {
  std::string trigger_id;
  hash256 block_hash{};
  uint64_t log_index = 0;
  uint64_t block_number = 0;
  bool removed = false;
  std::string run_id;  // the run it queued; empty when none was queued
  time_point seen_at{};
};

/// A chain-event trigger's checkpoint: the last fully processed block and, when the watcher
/// stored it, that block's hash, so that after a restart the watcher resumes from the checkpoint
/// when the chain still has that block and re-checks for a reorganisation when it does not.
struct chain_position {
  uint64_t block = 0;
  std::optional<hash256> block_hash;  // absent for checkpoints written without one
  bool operator==(const chain_position&) const = default;
};

/// What the watcher writes after processing a block range of one trigger, atomically: the logs
/// (each with the run it fires), and the new checkpoint.
struct chain_batch {
  std::string trigger_id;
  struct entry {
    seen_log log;
    new_run fire;  // queued only when the log was not seen before
  };
  std::vector<entry> logs;
  std::optional<uint64_t> checkpoint_block;  // last fully processed block
  std::optional<hash256> checkpoint_hash;    // its hash, stored with it
  /// When set, the batch is written only while the stored checkpoint's block is still this one
  /// (nullopt: no checkpoint), and is store_errc::conflict otherwise, writing nothing: the
  /// checkpoint moved under the watcher (a PATCH of start_block dropped it, another instance
  /// advanced it), and the range is read again from the stored one.
  std::optional<std::optional<uint64_t>> expected_checkpoint;
};

// --- management API credentials ---------------------------------------------------------------

/// A bearer token of the management API: only its SHA-256 is stored.
struct token_record {
  hash256 hash{};  // sha256 of the token's 32 bytes (tokens.hpp)
  std::string user_id;
  std::string client_name;
  time_point created_at{};
  time_point expires_at{};  // created + 30 days
  bool revoked = false;
};

enum class approval_status { pending, approved, denied };
[[nodiscard]] std::string_view to_string(approval_status s) noexcept;

/// A pending browser approval of the token handshake (docs/protocol.md §4): the client's challenge
/// (base64url of the token's SHA-256), approved or denied by a signed-in user, then claimed once.
struct approval {
  std::string challenge;
  std::string client_name;
  approval_status status = approval_status::pending;
  std::string user_id;                // who decided; empty while pending
  std::optional<hash256> token_hash;  // set when claimed
  time_point created_at{};
  time_point expires_at{};
};

/// A browser session of the approval page (handshake.hpp); only the SHA-256 of its cookie value
/// is stored. Before sign-in it holds the single-use EIP-4361 nonce issued to that browser and no
/// user; sign-in replaces it by a session of the user without a nonce.
struct browser_session {
  hash256 hash{};
  std::string user_id;  // empty before sign-in
  std::string nonce;    // empty after sign-in
  time_point created_at{};
  time_point expires_at{};
};

/// What the browser-session methods of a backend without them answer.
[[nodiscard]] inline error browser_sessions_unsupported() {
  return fail(store_errc::storage, "this trigger store keeps no browser sessions");
}

class store {
 public:
  virtual ~store() = default;

  // --- triggers ------------------------------------------------------------------------------
  /// Inserts `t` (its id must be new: conflict otherwise) and, for a schedule trigger, its first
  /// schedule state, in one transaction. With `max_per_owner` > 0 the owner's triggers are
  /// counted in that transaction, under a lock per owner that every instance of a shared store
  /// takes, and limit_reached answers when `t.owner` has that many already: concurrent creations
  /// never pass the limit (docs/protocol.md §4 "Limits").
  [[nodiscard]] virtual result<trigger> create_trigger(const trigger& t, const std::optional<schedule_state>& s,
                                                       uint64_t max_per_owner) = 0;
  /// create_trigger without a limit on the owner's triggers.
  [[nodiscard]] result<trigger> create_trigger(const trigger& t, const std::optional<schedule_state>& s) {
    return create_trigger(t, s, 0);
  }
  /// The trigger `id` of `owner` (not_found for another owner's trigger).
  [[nodiscard]] virtual result<trigger> get_trigger(std::string_view owner, std::string_view id) const = 0;
  /// The trigger `id`, whoever owns it (for the service's own components).
  [[nodiscard]] virtual result<trigger> find_trigger(std::string_view id) const = 0;
  /// `owner`'s triggers, oldest first.
  [[nodiscard]] virtual result<listing<trigger>> list_triggers(std::string_view owner, page p) const = 0;
  /// A chain-event config whose start_block is set and differs from the stored one drops the
  /// trigger's checkpoint in the same transaction: the watcher restarts from the new start_block
  /// (an earlier one backfills; logs seen before do not fire again). A patch that enables a
  /// disabled trigger clears its disabled_reason and credit_failures.
  [[nodiscard]] virtual result<trigger> update_trigger(std::string_view owner, std::string_view id,
                                                       const trigger_patch& patch) = 0;
  /// Deletes the trigger with its runs, schedule state and chain state.
  [[nodiscard]] virtual result<void> delete_trigger(std::string_view owner, std::string_view id) = 0;

  // --- runs ----------------------------------------------------------------------------------
  /// Queues a run of trigger `r.trigger_id`, which must exist (not_found), be of type `expected`
  /// (wrong_type), be enabled (disabled) and be within its run limits, checked in the same
  /// statement or transaction as the insert: rate_limited when it queued max_runs_per_minute runs
  /// in the calendar minute of `r.queued_at` already, queue_full when max_queued_runs of its runs
  /// are queued or running. Returns once the run is durable: a webhook answers 202 only after
  /// this. (Runs refused by the limits, see fire_schedule, do not count towards them.)
  [[nodiscard]] virtual result<run> enqueue_run(const new_run& r, trigger_type expected) = 0;
  /// The run `run_id` of one of `owner`'s triggers.
  [[nodiscard]] virtual result<run> get_run(std::string_view owner, std::string_view run_id) const = 0;
  /// The runs of `owner`'s trigger, newest first.
  [[nodiscard]] virtual result<listing<run>> list_runs(std::string_view owner, std::string_view trigger_id,
                                                       page p) const = 0;
  /// Atomically: fails or requeues runs whose lease expired (see lease_request::max_attempts),
  /// then moves up to `max_runs` due runs (queued, or running without a lease, whose
  /// next_attempt_at ≤ now), oldest first, to running under a lease of `worker_id` until
  /// now + duration, counting one attempt each, and returns them.
  [[nodiscard]] virtual result<std::vector<leased_run>> lease_runs(const lease_request& r) = 0;
  /// Extends a held lease to `expires_at`.
  [[nodiscard]] virtual result<void> renew_lease(const lease_ref& l, time_point expires_at) = 0;
  /// running → success with `response`; the lease ends, and the trigger's credit_failures go
  /// back to 0 in the same transaction.
  [[nodiscard]] virtual result<void> complete_run(const lease_ref& l, const json::value& response, time_point now) = 0;
  /// running → failed with `e`; the lease ends. In the same transaction, the credit rule of
  /// docs/protocol.md §4 "Limits": a failure with code kInsufficientCreditsCode adds one to the
  /// credit_failures of a schedule trigger, and any other failure sets them back to 0; once they
  /// reach `disable_after_credit_failures` (0: never) an enabled trigger is disabled with
  /// credit_disabled_reason as its disabled_reason. Answers whether this failure disabled it.
  [[nodiscard]] virtual result<bool> fail_run(const lease_ref& l, const run_error& e, time_point now,
                                              uint32_t disable_after_credit_failures) = 0;
  /// The attempt failed transiently: the run stays running, without a lease, until
  /// `next_attempt_at`; `e` is kept as its last error.
  [[nodiscard]] virtual result<void> retry_run_later(const lease_ref& l, const run_error& e,
                                                     time_point next_attempt_at) = 0;
  /// lease_runs' first step alone: runs whose lease expired by `now` go back to queued (or to
  /// failed after `max_attempts`). Returns how many changed.
  [[nodiscard]] virtual result<size_t> expire_leases(time_point now, uint32_t max_attempts) = 0;
  /// Treats every lease as expired at once (as expire_leases does with expired ones). Only for a
  /// backend that one process serves, when that process starts: it knows no worker is alive, so
  /// the runs a killed process left running are picked up again at once.
  [[nodiscard]] virtual result<size_t> release_all_leases(time_point now, uint32_t max_attempts) = 0;
  /// Run history retention: deletes up to `limit` finished runs (success or failed) whose
  /// finished_at is before `before`, oldest first, and returns how many; queued and running runs
  /// stay whatever their age.
  [[nodiscard]] virtual result<size_t> delete_finished_runs(time_point before, size_t limit) = 0;
  /// When lease_runs could next find work without a new run arriving: the earliest
  /// next_attempt_at of an unleased run or lease expiry; nullopt when there is none.
  [[nodiscard]] virtual result<std::optional<time_point>> next_run_wakeup() const = 0;

  // --- schedules -----------------------------------------------------------------------------
  /// Every enabled schedule trigger with its state (the scheduler's index at start).
  [[nodiscard]] virtual result<std::vector<scheduled_trigger>> list_schedules() const = 0;
  /// One schedule trigger's entry; nullopt when it is gone, disabled or not a schedule.
  [[nodiscard]] virtual result<std::optional<scheduled_trigger>> get_schedule(std::string_view trigger_id) const = 0;
  /// Fires a schedule trigger once, atomically: when it is enabled and its next_due still equals
  /// `expected_due` (no other scheduler fired it, no change replaced it), queues `r`, sets
  /// last_planned = `planned` and next_due = `next_due`, and returns the run; otherwise changes
  /// nothing and returns nullopt. A firing over the trigger's run limits (see enqueue_run) is
  /// recorded as a run that failed at once with code kRateLimitedCode, and never attempted.
  [[nodiscard]] virtual result<std::optional<run>> fire_schedule(std::string_view trigger_id, time_point expected_due,
                                                                 time_point planned, const new_run& r,
                                                                 time_point next_due) = 0;
  /// Fires several schedule triggers: element i of the answer is what fire_schedule would answer
  /// for `firings[i]`, and runs are queued in the order given. The default fires them one by
  /// one; a store may commit them together (the SQLite store does: one transaction for a whole
  /// second's worth of firings instead of one each).
  [[nodiscard]] virtual std::vector<result<std::optional<run>>> fire_schedules(
      const std::vector<schedule_firing>& firings) {
    std::vector<result<std::optional<run>>> out;
    out.reserve(firings.size());
    for (const auto& f : firings)
      out.push_back(fire_schedule(f.trigger_id, f.expected_due, f.planned, f.r, f.next_due));
    return out;
  }
  /// Writes a schedule trigger's state (e.g. the first one, when none was stored).
  [[nodiscard]] virtual result<void> set_schedule_state(std::string_view trigger_id, const schedule_state& s) = 0;

  // --- chain watcher -------------------------------------------------------------------------
  /// The last fully processed block of a chain-event trigger, with its hash; nullopt before the first.
  [[nodiscard]] virtual result<std::optional<chain_position>> chain_checkpoint(std::string_view trigger_id) const = 0;
  /// Records a processed range atomically: each log not seen before (by trigger, block hash, log
  /// index) is inserted and its run queued (or, over the trigger's run limits, recorded as failed
  /// with code kRateLimitedCode, as fire_schedule does); logs seen before queue nothing; then the
  /// checkpoint moves (with its hash; see chain_batch::expected_checkpoint). Returns the runs
  /// queued or refused. The trigger must be an enabled chain-event trigger.
  [[nodiscard]] virtual result<std::vector<run>> record_chain_batch(const chain_batch& b) = 0;
  /// Marks the seen logs of a reorganised-away block `removed`; returns how many.
  [[nodiscard]] virtual result<size_t> mark_logs_removed(std::string_view trigger_id, const hash256& block_hash) = 0;
  [[nodiscard]] virtual result<std::optional<seen_log>> find_seen_log(std::string_view trigger_id,
                                                                      const hash256& block_hash,
                                                                      uint64_t log_index) const = 0;
  /// Every enabled chain-event trigger, whoever owns it, oldest first (the watcher's work list).
  [[nodiscard]] virtual result<std::vector<trigger>> list_chain_triggers() const = 0;
  /// The trigger's seen logs not marked removed whose block_number ≥ `from_block`, ordered by
  /// block_number then log_index: what a reorganisation may have dropped.
  [[nodiscard]] virtual result<std::vector<seen_log>> list_seen_logs(std::string_view trigger_id,
                                                                     uint64_t from_block) const = 0;

  // --- tokens --------------------------------------------------------------------------------
  /// conflict when a token with this hash exists.
  [[nodiscard]] virtual result<void> insert_token(const token_record& t) = 0;
  /// The token whose SHA-256 is `hash` (revoked and expired ones too: the caller decides).
  [[nodiscard]] virtual result<token_record> find_token(const hash256& hash) const = 0;
  /// Revokes `user_id`'s token (not_found for another user's).
  [[nodiscard]] virtual result<void> revoke_token(const hash256& hash, std::string_view user_id) = 0;
  /// `user_id`'s tokens, newest first.
  [[nodiscard]] virtual result<std::vector<token_record>> list_tokens(std::string_view user_id) const = 0;

  // --- approvals -----------------------------------------------------------------------------
  /// conflict when the challenge exists already.
  [[nodiscard]] virtual result<void> create_approval(const approval& a) = 0;
  [[nodiscard]] virtual result<approval> get_approval(std::string_view challenge) const = 0;
  /// pending → approved or denied by `user_id` (conflict unless pending and unexpired at `now`).
  [[nodiscard]] virtual result<approval> decide_approval(std::string_view challenge, std::string_view user_id,
                                                         bool approve, time_point now) = 0;
  /// Claims an approved, unclaimed, unexpired approval: inserts `t` (whose user_id must be the
  /// approver's) and records its hash on the approval, atomically (conflict otherwise, so one
  /// approval yields at most one token).
  [[nodiscard]] virtual result<token_record> claim_approval(std::string_view challenge, const token_record& t,
                                                            time_point now) = 0;

  // --- browser sessions of the approval page -------------------------------------------------
  // A backend that does not override these cannot serve the approval page's sign-in (the
  // handshake answers 503); bearer tokens and approvals work without them.
  /// Inserts `s` (conflict when its hash exists) and drops sessions expired at `s.created_at`.
  [[nodiscard]] virtual result<void> create_session(const browser_session& s) {
    (void)s;
    return browser_sessions_unsupported();
  }
  /// The session whose cookie hashes to `hash` (expired ones too: the caller decides).
  [[nodiscard]] virtual result<browser_session> find_session(const hash256& hash) const {
    (void)hash;
    return browser_sessions_unsupported();
  }
  /// Signs a browser in, once: atomically deletes the session `pre` when it is unexpired at `now`
  /// and holds the nonce `nonce` (non-empty), and inserts `signed_in`; not_found otherwise
  /// (unknown, expired, or its nonce used or different), changing nothing.
  [[nodiscard]] virtual result<void> sign_in_session(const hash256& pre, std::string_view nonce,
                                                     const browser_session& signed_in, time_point now) {
    (void)pre, (void)nonce, (void)signed_in, (void)now;
    return browser_sessions_unsupported();
  }
  /// Signs a browser out: deletes the session whose cookie hashes to `hash`; not_found when there
  /// is none.
  [[nodiscard]] virtual result<void> end_session(const hash256& hash) {
    (void)hash;
    return browser_sessions_unsupported();
  }
};

/// Declares, in an implementation's class body (sql_store.hpp), the override of every method of
/// store (documented above) but fire_schedules.
#define ENACT_TRIGGER_STORE_OVERRIDES                                                                                  \
  result<trigger> create_trigger(const trigger& t, const std::optional<schedule_state>& s, uint64_t max_per_owner)     \
      override;                                                                                                        \
  result<trigger> get_trigger(std::string_view owner, std::string_view id) const override;                             \
  result<trigger> find_trigger(std::string_view id) const override;                                                    \
  result<listing<trigger>> list_triggers(std::string_view owner, page p) const override;                               \
  result<trigger> update_trigger(std::string_view owner, std::string_view id, const trigger_patch& patch) override;    \
  result<void> delete_trigger(std::string_view owner, std::string_view id) override;                                   \
  result<run> enqueue_run(const new_run& r, trigger_type expected) override;                                           \
  result<run> get_run(std::string_view owner, std::string_view run_id) const override;                                 \
  result<listing<run>> list_runs(std::string_view owner, std::string_view trigger_id, page p) const override;          \
  result<std::vector<leased_run>> lease_runs(const lease_request& r) override;                                         \
  result<void> renew_lease(const lease_ref& l, time_point expires_at) override;                                        \
  result<void> complete_run(const lease_ref& l, const json::value& response, time_point now) override;                 \
  result<bool> fail_run(const lease_ref& l, const run_error& e, time_point now,                                        \
                        uint32_t disable_after_credit_failures) override;                                              \
  result<void> retry_run_later(const lease_ref& l, const run_error& e, time_point next_attempt_at) override;           \
  result<size_t> expire_leases(time_point now, uint32_t max_attempts) override;                                        \
  result<size_t> release_all_leases(time_point now, uint32_t max_attempts) override;                                   \
  result<size_t> delete_finished_runs(time_point before, size_t limit) override;                                       \
  result<std::optional<time_point>> next_run_wakeup() const override;                                                  \
  result<std::vector<scheduled_trigger>> list_schedules() const override;                                              \
  result<std::optional<scheduled_trigger>> get_schedule(std::string_view trigger_id) const override;                   \
  result<std::optional<run>> fire_schedule(std::string_view trigger_id, time_point expected_due, time_point planned,   \
                                           const new_run& r, time_point next_due) override;                            \
  result<void> set_schedule_state(std::string_view trigger_id, const schedule_state& s) override;                      \
  result<std::optional<chain_position>> chain_checkpoint(std::string_view trigger_id) const override;                  \
  result<std::vector<run>> record_chain_batch(const chain_batch& b) override;                                          \
  result<size_t> mark_logs_removed(std::string_view trigger_id, const hash256& block_hash) override;                   \
  result<std::optional<seen_log>> find_seen_log(std::string_view trigger_id, const hash256& block_hash,                \
                                                uint64_t log_index) const override;                                    \
  result<std::vector<trigger>> list_chain_triggers() const override;                                                   \
  result<std::vector<seen_log>> list_seen_logs(std::string_view trigger_id, uint64_t from_block) const override;       \
  result<void> insert_token(const token_record& t) override;                                                           \
  result<token_record> find_token(const hash256& hash) const override;                                                 \
  result<void> revoke_token(const hash256& hash, std::string_view user_id) override;                                   \
  result<std::vector<token_record>> list_tokens(std::string_view user_id) const override;                              \
  result<void> create_approval(const approval& a) override;                                                            \
  result<approval> get_approval(std::string_view challenge) const override;                                            \
  result<approval> decide_approval(std::string_view challenge, std::string_view user_id, bool approve, time_point now) \
      override;                                                                                                        \
  result<token_record> claim_approval(std::string_view challenge, const token_record& t, time_point now) override;     \
  result<void> create_session(const browser_session& s) override;                                                      \
  result<browser_session> find_session(const hash256& hash) const override;                                            \
  result<void> sign_in_session(const hash256& pre, std::string_view nonce, const browser_session& signed_in,           \
                               time_point now) override;                                                               \
  result<void> end_session(const hash256& hash) override;

}  // namespace enact::triggers
