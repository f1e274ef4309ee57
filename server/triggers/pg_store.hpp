// The trigger store on PostgreSQL (libpq), for several enact-server instances sharing one database
// (DESIGN.md §4 "Trigger service"; docs/triggers.md "PostgreSQL store").
//
// Sharing: every instance sees the same triggers, runs, schedules, chain checkpoints, tokens and
// approvals. Runs are handed out by `lease_runs` inside one transaction: expired leases are taken
// back, then due runs are picked with `SELECT ... FOR UPDATE SKIP LOCKED`, so two instances leasing
// at once never block on, nor both take, the same run; each lease carries an expiry, and a run
// whose worker died (its instance crashed, lost the network) is leased again once it expires.
// A shared store never releases leases at start (`release_all_leases`): the other instances'
// workers are alive.
//
// Durability: a write returns after its transaction committed; the session runs with
// synchronous_commit on (raised from off if the server's default is off), so the commit record
// reached the server's WAL on disk (and the synchronous standbys, when configured).
//
// Threads: a libpq connection serves one thread at a time. The store keeps a pool of at most
// `pg_options::connections` connections; a call takes one for its duration (never two), and a
// connection that broke is dropped and replaced on a later call.
//
// Usage keys reach the store sealed (seal.hpp) like on SQLite: the database holds the sealed bytes
// and the keccak256 hash only. Every statement is parameterised (prepared once per connection).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "triggers/store.hpp"

namespace enact::triggers {

struct pg_options {
  /// Most connections open at once (and so most calls served at once).
  size_t connections = 16;
};

/// True for a libpq connection URI ("postgres://…" or "postgresql://…").
[[nodiscard]] bool is_postgres_url(std::string_view s) noexcept;

class pg_store final : public store {
 public:
  static constexpr int kSchemaVersion = 2;

  /// Connects to `url` (a libpq URI) and creates or migrates the schema (idempotent; several
  /// instances opening at once serialise on an advisory lock). Refuses a database whose schema is
  /// newer than this build's. Error messages never contain the URL (it may hold a password).
  [[nodiscard]] static result<std::unique_ptr<pg_store>> open(const std::string& url, pg_options options = {});
  ~pg_store() override;
  pg_store(const pg_store&) = delete;
  pg_store& operator=(const pg_store&) = delete;

  result<trigger> create_trigger(const trigger& t, const std::optional<schedule_state>& s) override;
  result<trigger> get_trigger(std::string_view owner, std::string_view id) const override;
  result<trigger> find_trigger(std::string_view id) const override;
  result<listing<trigger>> list_triggers(std::string_view owner, page p) const override;
  result<trigger> update_trigger(std::string_view owner, std::string_view id, const trigger_patch& patch) override;
  result<void> delete_trigger(std::string_view owner, std::string_view id) override;

  result<run> enqueue_run(const new_run& r, trigger_type expected) override;
  result<run> get_run(std::string_view owner, std::string_view run_id) const override;
  result<listing<run>> list_runs(std::string_view owner, std::string_view trigger_id, page p) const override;
  result<std::vector<leased_run>> lease_runs(const lease_request& r) override;
  result<void> renew_lease(const lease_ref& l, time_point expires_at) override;
  result<void> complete_run(const lease_ref& l, const json::value& response, time_point now) override;
  result<void> fail_run(const lease_ref& l, const run_error& e, time_point now) override;
  result<void> retry_run_later(const lease_ref& l, const run_error& e, time_point next_attempt_at) override;
  result<size_t> expire_leases(time_point now, uint32_t max_attempts) override;
  result<size_t> release_all_leases(time_point now, uint32_t max_attempts) override;
  result<std::optional<time_point>> next_run_wakeup() const override;

  result<std::vector<scheduled_trigger>> list_schedules() const override;
  result<std::optional<scheduled_trigger>> get_schedule(std::string_view trigger_id) const override;
  result<std::optional<run>> fire_schedule(std::string_view trigger_id, time_point expected_due, time_point planned,
                                           const new_run& r, time_point next_due) override;
  result<void> set_schedule_state(std::string_view trigger_id, const schedule_state& s) override;

  result<std::optional<uint64_t>> chain_checkpoint(std::string_view trigger_id) const override;
  result<std::vector<run>> record_chain_batch(const chain_batch& b) override;
  result<size_t> mark_logs_removed(std::string_view trigger_id, const hash256& block_hash) override;
  result<std::optional<seen_log>> find_seen_log(std::string_view trigger_id, const hash256& block_hash,
                                                uint64_t log_index) const override;
  result<std::vector<trigger>> list_chain_triggers() const override;
  result<std::vector<seen_log>> list_seen_logs(std::string_view trigger_id, uint64_t from_block) const override;

  result<void> insert_token(const token_record& t) override;
  result<token_record> find_token(const hash256& hash) const override;
  result<void> revoke_token(const hash256& hash, std::string_view user_id) override;
  result<std::vector<token_record>> list_tokens(std::string_view user_id) const override;

  result<void> create_approval(const approval& a) override;
  result<approval> get_approval(std::string_view challenge) const override;
  result<approval> decide_approval(std::string_view challenge, std::string_view user_id, bool approve,
                                   time_point now) override;
  result<token_record> claim_approval(std::string_view challenge, const token_record& t, time_point now) override;

  result<void> create_session(const browser_session& s) override;
  result<browser_session> find_session(const hash256& hash) const override;
  result<void> sign_in_session(const hash256& pre, std::string_view nonce, const browser_session& signed_in,
                               time_point now) override;
  result<void> end_session(const hash256& hash) override;

 private:
  struct impl;
  explicit pg_store(std::unique_ptr<impl> i);
  std::unique_ptr<impl> impl_;
};

}  // namespace enact::triggers
