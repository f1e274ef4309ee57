// SPDX-License-Identifier: Apache-2.0
// The PostgreSQL access of the trigger store (pg_store.cpp), on the storage layer (storage/pg.hpp).
// Not part of the store's interface. A database failure is an exception (`pg_failure`, with the
// SQLSTATE), caught at the backend's call boundary and answered as a store_errc.
#pragma once

#include <string>

#include "storage/pg.hpp"
#include "triggers/pg_store.hpp"
#include "triggers/sql_store.hpp"

namespace enact::triggers {
namespace pg_backend {

using namespace store_rows;

inline constexpr int kWriteAttempts = 3;  // a transaction failing on a deadlock or serialization is retried

// The storage layer's PostgreSQL types (storage/pg.hpp), under the names the store's body uses.
using pg_failure = storage::pg::failure;
using storage::pg::args;
using storage::pg::connection;
using storage::pg::rows;

/// The trigger store's contract: a write is durable when the call returns (store.hpp), whatever
/// the database's default.
inline const std::string kConnectionSetup =
    "SELECT set_config('synchronous_commit', 'on', false) WHERE current_setting('synchronous_commit') = 'off'";

using storage::pg::pool;

}  // namespace pg_backend
}  // namespace enact::triggers
