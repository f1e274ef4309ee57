// SPDX-License-Identifier: Apache-2.0
// The metering store in one SQLite file (store.hpp), through the storage kit (server/storage): WAL
// journal, synchronous FULL (a credit or a charge, once answered, survives a power loss), the
// schema versioned with PRAGMA user_version. Writes go to the store's committer
// (group_commit.hpp): the writes queued meanwhile run in one IMMEDIATE transaction on the one
// writer connection, each in its savepoint, and one commit, so writes never interleave and no
// update is lost; reads use the kit's reader pool beside it.
//
// The file serves one store at a time (an exclusive lock on `<path>.lock`; a second open fails
// with storage), and the open reservations live in that store's process (process_holds.hpp,
// docs/architecture.md §4 "Holds live in the process on SQLite"): a run dies with its server, and
// its reservation with it, so a reservation is never written, a charged run writes once (its
// settle), and a reopened file has no reservation open.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "metering/group_commit.hpp"
#include "metering/store.hpp"

namespace enact::metering {

struct sqlite_options {
  /// The clock reservations expire by; the system clock when empty.
  clock_fn now;
};

/// Opens (creating when absent) the store at `path`; storage when it cannot.
[[nodiscard]] result<std::unique_ptr<store>> open_sqlite(const std::string& path, sqlite_options options = {});

/// What the committer of `s`, a store open_sqlite opened, did so far (group_commit.hpp), for
/// tests and measures; nullopt for any other store.
[[nodiscard]] std::optional<sql::group_commit_stats> sqlite_commit_stats(const store& s);

}  // namespace enact::metering
