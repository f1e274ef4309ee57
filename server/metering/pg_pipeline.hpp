// SPDX-License-Identifier: Apache-2.0
// One libpq connection of the PostgreSQL metering store that runs a batch of statements in
// pipeline mode (docs/architecture.md §4 "Group commit"): all sent at once and followed by one
// Sync, so they run in ONE implicit transaction that commits at the Sync (or, when one fails,
// rolls back whole), answered in one round trip instead of one per statement. The committer
// uses it for the batches whose every write is one call of the store's functions
// (pg_functions.hpp), whose answers it reads only after the commit. Each statement is prepared
// once per connection. libpqxx 6 has no pipeline mode, hence libpq itself.
#pragma once

#include <string>
#include <vector>

#include "metering/session.hpp"

struct pg_conn;

namespace enact::metering::pg {

class pipeline {
 public:
  /// A statement in PostgreSQL's spelling ($N placeholders), and its parameters.
  struct statement {
    const std::string* text;  // lives as long as the pipeline (its prepared name is kept by address)
    std::vector<sql::param> params;
  };

  /// What a batch came to: committed (every statement succeeded) with each statement's rows in
  /// order, or not (one failed: PostgreSQL rolled back the whole transaction), with its error and
  /// whether that was a deadlock or a serialization failure (running the writes again may cure it).
  struct outcome {
    bool committed = false;
    std::vector<sql::rows> rows;
    std::string error;
    bool retryable = false;
  };

  /// `url`: as the store's pool; connects on first use, with `setup` (SQL run once per
  /// connection, e.g. session settings). The pipeline overwrites its copy of the URL when it goes.
  pipeline(std::string url, std::string setup);
  ~pipeline();
  pipeline(const pipeline&) = delete;
  pipeline& operator=(const pipeline&) = delete;

  /// Runs `batch` in one implicit transaction. Throws std::runtime_error when the connection
  /// fails (it is closed, and opened again by the next run): whether the batch committed is then
  /// unknown, as with a commit whose answer was lost. One caller at a time.
  [[nodiscard]] outcome run(const std::vector<statement>& batch);

 private:
  void connect();
  void close() noexcept;
  [[noreturn]] void broken(const std::string& what);
  const std::string& prepared(const std::string* text);

  std::string url_;
  std::string setup_;
  pg_conn* c_ = nullptr;
  std::vector<std::pair<const std::string*, std::string>> names_;  // statement text → prepared name
};

}  // namespace enact::metering::pg
