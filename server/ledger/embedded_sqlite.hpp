// SPDX-License-Identifier: Apache-2.0
// The SQLite access of the embedded ledger (embedded_ledger.hpp), on the storage kit
// (storage/sqlite.hpp): the kit's connections and reader pool, and a `query` with the ledger's
// column forms. An SQLite failure is an exception (`sqlite_failure`, the kit's sqlite_error); the
// store answers it as ledger_errc::storage.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "enact/bytes.hpp"
#include "storage/sqlite.hpp"

namespace enact::ledger::embedded {

// WAL readers never block the writer; four cover the HTTP server's threads on a small machine
// (more callers wait for a free connection rather than opening without bound).
inline constexpr size_t kReadConnections = 4;
// Another process holding the write lock (a backup, the sqlite3 shell) is waited for this long.
inline constexpr int kBusyTimeoutMs = 5000;

using storage::connection;
using storage::reader_pool;
using sqlite_failure = storage::sqlite_error;

/// A cached statement in use (storage::query) as the ledger's rows need it: uint64 values
/// (expirations, key balances, group ids) keep their bits in SQLite's int64 rather than being
/// capped, a NULL blob reads as zeros (a LEFT JOIN without a match), hashes and addresses by name.
class query {
 public:
  query(connection& c, std::string_view sql) : q_(c, sql) {}

  template <class... A>
  query& bind(const A&... args) {
    (bind_one(args), ...);
    return *this;
  }

  /// True with a row to read, false when done.
  [[nodiscard]] bool next() { return q_.next(); }
  void run() { q_.run(); }

  [[nodiscard]] int64_t i64(int col) const { return q_.i64(col); }
  [[nodiscard]] uint64_t u64(int col) const { return q_.u64(col); }
  [[nodiscard]] bool boolean(int col) const { return q_.boolean(col); }
  [[nodiscard]] std::string text(int col) const { return q_.text(col); }
  template <size_t N>
  [[nodiscard]] std::array<uint8_t, N> fixed(int col) const {
    if (q_.is_null(col))
      return {};
    return q_.fixed<N>(col);
  }
  [[nodiscard]] hash256 hash(int col) const { return fixed<32>(col); }
  [[nodiscard]] address addr(int col) const { return fixed<20>(col); }

 private:
  void bind_one(uint64_t v) { q_.bind(static_cast<int64_t>(v)); }
  template <class T>
  void bind_one(const T& v) {
    q_.bind(v);
  }

  storage::query q_;
};

}  // namespace enact::ledger::embedded
