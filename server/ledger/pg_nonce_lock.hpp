// SPDX-License-Identifier: Apache-2.0
// The nonce lock of a fleet's relayer (chain::nonce_lock, enact/chain/client.hpp) in PostgreSQL:
// servers that relay registry writes with one api payer key take turns, per sending address, from
// reading the node's pending nonce to the node's acceptance of the signed transaction
// (docs/architecture.md §2, docs/deployment.md "A fleet"). No two of them sign one nonce, so no
// write replaces another's in the node's pool and none is refused as a replacement.
//
// The lock is a transaction-level advisory lock (pg_advisory_xact_lock) on a pooled connection:
// released when the send returns, whatever it returned, and by PostgreSQL when the session ends
// (a server killed while holding it), so a nonce read and never sent is read again by the next
// holder and leaves no gap. A holder waits at most `wait` for the lock (a server that hangs while
// holding it stalls the others no longer); then the write fails as
// ledger_errc::storage (503 unavailable) and the client retries.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include "enact/chain/client.hpp"
#include "enact/result.hpp"

namespace enact::ledger {

struct pg_nonce_lock_options {
  /// Connections open at most: one per send in progress in this process (sends from one
  /// address are serialised in the process first, so one per address is enough).
  size_t pool_size = 2;
  /// The longest wait for the lock (PostgreSQL's lock_timeout).
  std::chrono::milliseconds wait{30000};
};

/// A lock on the PostgreSQL database at `url` (postgres://…); connects nothing yet (the first send
/// does; a database that cannot be reached fails that send, ledger_errc::storage). The error messages never
/// carry the URL's password.
[[nodiscard]] std::shared_ptr<chain::nonce_lock> pg_nonce_lock(const std::string& url,
                                                               pg_nonce_lock_options options = {});

}  // namespace enact::ledger
