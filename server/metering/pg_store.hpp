// SPDX-License-Identifier: Apache-2.0
// The metering store in PostgreSQL (store.hpp), for several servers sharing one account's credits:
// the same database the trigger service may use, its own tables. Connections come from the
// storage kit's pool (storage/pg.hpp); each operation locks the account row (SELECT … FOR UPDATE) before
// it reads what it changes and debits with a conditional UPDATE … WHERE balance >= $n, so
// concurrent servers neither lose an update nor spend a credit twice. Reads are one READ
// COMMITTED transaction each; writes go to the store's committer (group_commit.hpp), which runs
// the writes queued meanwhile in one READ COMMITTED transaction, each in its savepoint, and one
// commit. The run path's reserve and settle are one call each of a server-side function
// (pg_functions.hpp) that refuses before it writes, so they need no savepoint, and a batch of
// nothing but such calls is sent in one round trip (storage::pg::connection::pipeline). A transaction PostgreSQL
// aborts as a deadlock or a serialization failure is run again (a batch: write by write).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "metering/store.hpp"

namespace enact::metering {

struct pg_options {
  /// Connections of the store's pool at most (its pipelined batches keep one more).
  size_t pool_size = 8;
  /// How long a write waits on a lock another session holds (a stuck transaction of another
  /// server) before it fails as a storage error (SET lock_timeout), instead of stalling the
  /// committer and every write behind it.
  int lock_timeout_seconds = 10;
  /// The clock reservations expire by; the system clock when empty.
  clock_fn now;
};

/// Whether `s` names a PostgreSQL database ("postgres://…" or "postgresql://…").
[[nodiscard]] bool is_postgres_url(std::string_view s) noexcept;

/// Connects to `url` (postgres://…) and creates or migrates the schema (serialized between
/// servers opening at once by an advisory lock); storage when it cannot. The error message never
/// carries the URL's password.
[[nodiscard]] result<std::unique_ptr<store>> open_postgres(const std::string& url, pg_options options = {});

}  // namespace enact::metering
