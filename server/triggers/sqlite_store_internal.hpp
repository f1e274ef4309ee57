// SPDX-License-Identifier: Apache-2.0
// What the files of the SQLite trigger store share (sqlite_store.cpp: schema, writer thread,
// open, triggers; sqlite_store_runs.cpp: runs, schedules, chain logs; sqlite_store_auth.cpp:
// tokens, approvals, browser sessions). Not part of the store's interface.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "storage/sqlite.hpp"
#include "triggers/sqlite_store.hpp"
#include "triggers/store_rows.hpp"

namespace enact::triggers {
namespace sqlite_backend {

using storage::connection;
using storage::query;
using namespace store_rows;

class write_queue;
class checkpointer;

/// store_errc::storage with the failure's message.
[[nodiscard]] error storage_error(const std::exception& e);

[[nodiscard]] std::optional<trigger> load_trigger(connection& c, std::string_view id);
/// Inserts a queued run (the caller has checked its trigger).
run insert_run(connection& c, const new_run& r, const std::string& params_json);
/// The run limits of docs/protocol.md §4, checked in the transaction that would queue a run of trigger
/// `id` at `at`: nullopt when it may be queued, otherwise why not.
[[nodiscard]] std::optional<error> over_limits(connection& c, std::string_view id, int64_t per_minute, int64_t queued,
                                               time_point at);
/// Queues `r`, or records it refused when the trigger is over its run limits.
run insert_or_refuse(connection& c, const new_run& r, const std::string& params_json, int64_t per_minute,
                     int64_t queued);
/// Fails (after max_attempts) or requeues runs whose lease expired by `now`; everything leased
/// when `all` is set.
size_t expire(connection& c, time_point now, uint32_t max_attempts, bool all);

}  // namespace sqlite_backend

struct sqlite_store::impl {
  using connection = storage::connection;

  impl(const std::string& path, const sqlite_options& o);
  ~impl();

  mutable storage::database db;  // the writer (used by the writer thread only) and the readers
  sqlite_options options;
  std::unique_ptr<sqlite_backend::checkpointer> checkpoints;
  std::unique_ptr<sqlite_backend::write_queue> queue;

  /// Runs inside the writer's transaction; returns whether to keep its changes. Must not throw.
  using write_op = std::function<bool(connection&)>;
  /// Hands `fn` to the writer thread; true once its transaction committed, false with `error`.
  bool submit(write_op fn, std::string& error);
  /// Hands in several writes at once, in order, so that they share transactions; `errors[i]` is
  /// empty once write i's transaction committed.
  void submit_all(std::vector<write_op> fns, std::vector<std::string>& errors);

  template <class F>
  auto read(F&& f) const -> decltype(f(std::declval<connection&>())) {
    try {
      storage::reader_pool::lease l = db.readers().acquire();
      return f(*l);
    } catch (const std::exception& e) {
      return sqlite_backend::storage_error(e);
    }
  }

  template <class F>
  auto write(F&& f) -> decltype(f(std::declval<connection&>())) {
    using R = decltype(f(std::declval<connection&>()));
    std::optional<R> out;
    std::string error;
    const bool committed = submit(
        [&](connection& c) -> bool {
          try {
            out.emplace(f(c));
          } catch (const std::exception& e) {
            out.emplace(sqlite_backend::storage_error(e));
          }
          return out->has_value();
        },
        error);
    if (!committed)
      return fail(store_errc::storage, error);
    return std::move(*out);
  }
};

}  // namespace enact::triggers
