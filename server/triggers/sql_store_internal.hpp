// SPDX-License-Identifier: Apache-2.0
// What the files of the SQL trigger store share (sql_store.cpp, sql_store_runs.cpp and the
// backends' own statements): loading a trigger, queuing a run under the trigger's run limits, and
// taking back expired leases. Not part of the store's interface.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "triggers/sql_store.hpp"

namespace enact::triggers::sql {

/// The trigger `id`; with `lock`, its row is locked until the transaction ends.
[[nodiscard]] std::optional<trigger> load_trigger(connection& c, std::string_view id, bool lock = false);

/// A trigger's run limits (docs/protocol.md §4).
struct run_limits {
  int64_t per_minute = 0;
  int64_t queued = 0;
};

/// The run limits of trigger `id`, which must exist (not_found), be of type `expected`
/// (wrong_type) and be enabled (disabled) for a run of it to be queued.
[[nodiscard]] result<run_limits> queueable(connection& c, const std::string& id, trigger_type expected);

/// A webhook run's de-duplication key: the value its trigger's config.dedup_header has among the
/// headers of the run's params; nullopt when the trigger names none or the delivery lacks it.
[[nodiscard]] std::optional<std::string> dedup_key(connection& c, const new_run& r);
/// The run of trigger `trigger_id` queued with de-duplication key `key`, if any.
[[nodiscard]] std::optional<run> find_duplicate(connection& c, const std::string& trigger_id, const std::string& key);

/// Inserts a queued run (the caller has checked its trigger).
run insert_run(connection& c, const new_run& r, const std::string& params_json);

/// The run limits of docs/protocol.md §4, checked in the transaction that would queue a run of trigger `id`
/// at `at`: nullopt when it may be queued, otherwise why not. The minute is the calendar minute of
/// `at`; the trigger's newest runs by seq are counted, at most the limit of them (runs refused by
/// the limits, failed and never attempted, do not count).
[[nodiscard]] std::optional<error> over_limits(connection& c, std::string_view id, int64_t per_minute, int64_t queued,
                                               time_point at);

/// Queues `r`, or records it as a run that failed at once (never attempted) when the trigger is
/// over its run limits.
run insert_or_refuse(connection& c, const new_run& r, const std::string& params_json, int64_t per_minute,
                     int64_t queued);

/// A leased run from a row of RUN_COLUMNS followed by its trigger's owner, action_cid, pkp_id and
/// sealed_usage_key.
[[nodiscard]] leased_run read_leased(const cursor& q);

/// Fails (after max_attempts) or requeues runs whose lease expired by `now`; everything leased
/// when `all` is set. Rows another transaction holds are skipped: that one is handling them.
size_t expire(connection& c, time_point now, uint32_t max_attempts, bool all);

}  // namespace enact::triggers::sql
