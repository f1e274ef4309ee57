// SPDX-License-Identifier: Apache-2.0
// The run path's two writes of the PostgreSQL metering store as server-side functions
// (docs/architecture.md §4 "Group commit"): `reserve` and `settle` each do what
// operations::reserve / operations::settle do (session.hpp), the same checks in the same order on
// the same rows, in ONE statement, so a write costs one round trip to the database instead of one
// per statement. Each checks everything before it writes anything: a refusal changes nothing, and
// the committer runs the call without a savepoint (queued_write::single_statement). The function
// answers a result code and the numbers the refusal's message names; `decode_*` builds the same
// result operations.cpp answers, message for message.
//
// The functions carry a version in their names: servers of two releases sharing one database each
// call their own, and creating them (CREATE OR REPLACE, at open, under the schema's advisory lock)
// never replaces the other release's. A change to a function's text is a new version.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "metering/session.hpp"

namespace enact::metering::pg {

/// CREATE OR REPLACE FUNCTION statements for this release's functions (one string, several
/// statements).
[[nodiscard]] const std::string& function_definitions();

/// `SELECT … FROM metering_reserve_vN(?1 … ?8)`: account, key, amount, run id, reservation id,
/// now (ms), ttl (ms), key cap (0: none; decimal text, a cap may pass int64).
extern const sql::statement kReserveCall;
/// `SELECT … FROM metering_settle_vN(?1 … ?4)`: account, reservation id, amount (decimal text,
/// any uint64), now (ms).
extern const sql::statement kSettleCall;
/// Clears the transaction's mark that a statement of it waited (set by a reserve that waited for
/// its account's row, and by metering_batch_lock_v2 when it waited for a lock), after
/// which every reserve of the transaction answers waited: sent before a reserve is called again
/// with a clock read after the wait.
extern const sql::statement kClearWaited;
/// `SELECT metering_batch_lock_v2(?1)`: the lock a batch of calls takes before them, ?1 the
/// batch's accounts as a PostgreSQL text array literal (`{hex,hex}`): the batch lock shared, then
/// each account's lock, in one order for every batch; it marks the transaction as having waited
/// when any of them was held.
extern const sql::statement kBatchLockCall;
/// The fleet-wide batch lock's advisory key: a batch of other writes takes it alone (pg_store.cpp),
/// metering_batch_lock_v2 shared.
inline constexpr int64_t kBatchLockKey = 6872612823553061902;

/// What a reserve call answered.
enum class reserve_outcome {
  reserved,
  /// The account's row was held by another transaction, which the call waited for: nothing was
  /// checked or written, and the row is now locked by the caller's transaction. The caller reads
  /// its clock again (a hold made after a wait lasts its ttl from when it is made) and calls again
  /// in the same transaction; outside a transaction the lock ended with the statement.
  waited,
  refused,
};

/// Whether `q`'s arguments pass operations::reserve's checks (amount, run id, ttl); a request
/// that does not is refused before any statement, by operations::reserve itself.
[[nodiscard]] bool plain_request(const reserve_request& q);

/// The call's answer as operations::reserve's: `out` set to the reservation or the refusal
/// (unset when waited).
[[nodiscard]] reserve_outcome decode_reserve(const sql::rows& r, const reserve_request& q, const std::string& id,
                                             std::optional<result<reservation>>& out);

/// The call's answer as operations::settle's.
[[nodiscard]] result<uint64_t> decode_settle(const sql::rows& r, std::string_view id, uint64_t amount);

}  // namespace enact::metering::pg
