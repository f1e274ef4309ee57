// SPDX-License-Identifier: Apache-2.0
// The metering store in one SQLite file (store.hpp), through the storage kit (server/storage): WAL
// journal, synchronous FULL (a credit or a charge, once answered, survives a power loss), the
// schema versioned with PRAGMA user_version. Writes go to the store's committer
// (group_commit.hpp): the writes queued meanwhile run in one IMMEDIATE transaction on the one
// writer connection, each in its savepoint, and one commit, so writes never interleave and no
// update is lost; reads use the kit's reader pool beside it.
#pragma once

#include <memory>
#include <string>

#include "metering/store.hpp"

namespace enact::metering {

struct sqlite_options {
  /// The clock reservations expire by; the system clock when empty.
  clock_fn now;
};

/// Opens (creating when absent) the store at `path`; storage when it cannot.
[[nodiscard]] result<std::unique_ptr<store>> open_sqlite(const std::string& path, sqlite_options options = {});

}  // namespace enact::metering
