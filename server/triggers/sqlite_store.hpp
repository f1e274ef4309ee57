// The trigger store on SQLite (`<data_dir>/triggers.sqlite`), for one server process.
//
// Writes go through one writer thread that commits them in groups: requests that arrive while a
// transaction is being written wait, then share the next one (each in its own savepoint, so one
// failing write rolls back alone). Every caller returns only after the transaction holding its
// write committed. Under load, one commit (and one fsync with `synchronous = FULL`) serves many
// webhook intakes; alone, a write commits at once. Reads use a small pool of read-only connections
// (WAL: readers never wait for the writer).
//
// Durability (docs/triggers.md "Durability"): the database is in WAL mode.
//  - synchronous = FULL (default): a commit returns after the WAL is fsynced. Nothing acknowledged
//    is lost when the process is killed, nor when the machine loses power (on storage that
//    honours fsync).
//  - synchronous = NORMAL: a commit returns once its WAL frames are written to the file (the OS
//    page cache); the WAL is fsynced only at checkpoints. A killed process (SIGKILL, crash, OOM)
//    loses nothing, because the kernel still writes its pages; a power loss or kernel crash may
//    lose the transactions committed since the last checkpoint (the database stays consistent).
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "triggers/store.hpp"

namespace enact::triggers {

struct sqlite_options {
  /// PRAGMA synchronous FULL (true) or NORMAL (false); see above.
  bool synchronous_full = true;
  /// Read-only connections for concurrent reads.
  size_t read_connections = 4;
  /// Most writes committed in one transaction.
  size_t max_batch = 1024;
};

class sqlite_store final : public store {
 public:
  static constexpr int kSchemaVersion = 3;

  /// Opens (creating, migrating) the database at `path`. Refuses a file whose schema is newer
  /// than this build's.
  [[nodiscard]] static result<std::unique_ptr<sqlite_store>> open(const std::string& path, sqlite_options options = {});
  ~sqlite_store() override;
  sqlite_store(const sqlite_store&) = delete;
  sqlite_store& operator=(const sqlite_store&) = delete;

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
  /// One group of transactions for all of them (see fire_schedules in store.hpp).
  std::vector<result<std::optional<run>>> fire_schedules(const std::vector<schedule_firing>& firings) override;
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

  /// Transactions committed and writes they held since open (for the benchmark's report: the
  /// average group size is writes / commits).
  struct commit_stats {
    uint64_t commits = 0;
    uint64_t writes = 0;
  };
  [[nodiscard]] commit_stats stats() const;

 private:
  struct impl;
  explicit sqlite_store(std::unique_ptr<impl> i);
  std::unique_ptr<impl> impl_;
};

}  // namespace enact::triggers
