// SPDX-License-Identifier: Apache-2.0
// The content store in PostgreSQL (core/content_store.hpp), for a fleet of servers behind one load
// balancer: code uploaded through any instance runs by CID on every other. The code is kept in one
// row per CIDv0 and the upload record (what each account stored, for its quota) beside it, in the
// database the metering store uses (`--content-store postgres`) or another (`--content-store
// postgres://…`); docs/architecture.md §2, docs/deployment.md "A fleet".
//
// What the local store guarantees holds here too: code is stored under the CID computed from its
// bytes, and what is read back runs only when it hashes to the CID asked for (content_store::get),
// so a row changed in the database is refused, never run; storing it again repairs the row. A
// row larger than `max_code_bytes` is refused on write and on read. An account's quota is checked
// and its upload recorded in one transaction that holds a per-account advisory lock, so instances
// uploading for one account at once never count past its quota.
#pragma once

#include <cstddef>
#include <string>

#include "core/content_store.hpp"
#include "enact/result.hpp"

namespace enact::core {

struct pg_content_options {
  /// Connections the store opens at most (uploads and reads of code not cached by the caller).
  size_t pool_size = 4;
  /// The largest code kept or handed back; 0: no limit.
  size_t max_code_bytes = 0;
  /// Longest a statement waits for a lock another session holds (the account's upload lock, a
  /// row another server is inserting), in seconds: an upload held up by a stuck transaction fails
  /// as unavailable after it instead of hanging its request. The default is longer than a run's
  /// budget at the default run timeout (37 to 46 s), so that such a wait still lets the request's
  /// Idempotency-Key lease run out first (the lease, not this, decides whether a delayed run may
  /// still start); with a longer run timeout the upload fails first, as unavailable. At least 1.
  int lock_timeout_seconds = 60;
};

/// Connects to `url` (postgres://…) and creates or migrates the schema (serialized between servers
/// opening at once by an advisory lock): unavailable when it cannot. The message never carries the
/// URL's password.
[[nodiscard]] result<content_store> open_postgres_content_store(const std::string& url,
                                                                pg_content_options options = {});

}  // namespace enact::core
