// SPDX-License-Identifier: Apache-2.0
// The SQLite metering store (sqlite_store.hpp): the schema, a session (session.hpp) on the kit's
// connections, and the writer's committer (group_commit.hpp).
#include "metering/sqlite_store.hpp"

#include <exception>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>
#include <utility>

#include "metering/group_commit.hpp"
#include "metering/session.hpp"
#include "storage/sqlite.hpp"

namespace enact::metering {
namespace {

// The schema versions in SQLite's spelling (session.hpp): migration i takes version i to i + 1.
const std::vector<std::string>& migrations() {
  static const std::vector<std::string> m = sql::schema("INTEGER PRIMARY KEY AUTOINCREMENT");
  return m;
}
const std::vector<const char*>& migration_texts() {
  static const std::vector<const char*> t = [] {
    std::vector<const char*> out;
    for (const std::string& m : migrations())
      out.push_back(m.c_str());
    return out;
  }();
  return t;
}

class sqlite_session final : public sql::session {
 public:
  explicit sqlite_session(storage::connection& c) : c_(c) {}

  sql::rows exec(const sql::statement& s, const std::vector<sql::param>& params) override {
    storage::query q(c_, s.text);
    for (const sql::param& p : params)
      std::visit([&q](const auto& v) { q.bind(v); }, p);
    sql::rows out;
    const int columns = sqlite3_column_count(q.handle());
    while (q.next()) {
      auto& row = out.data.emplace_back();
      for (int i = 0; i < columns; ++i)
        row.push_back(q.is_null(i) ? std::nullopt : std::optional<std::string>(q.text(i)));
    }
    out.affected = columns == 0 ? c_.changes() : 0;
    return out;
  }

 private:
  storage::connection& c_;
};

class sqlite_store final : public sql::session_store {
 public:
  sqlite_store(const std::string& path, clock_fn now)
      : session_store(std::move(now)),
        db_(path, migration_texts(), storage::database_options{.synchronous_full = true}),
        committer_([this](std::span<sql::queued_write* const> batch) { run_batch(batch); }) {}

 private:
  /// A write through the committer, a read in a snapshot of a pooled reader.
  void transact(bool write, const std::function<bool(sql::session&)>& body) const override {
    if (write) {
      committer_.submit(body);
    } else {
      db_.read([&](storage::connection& c) {
        sqlite_session s(c);
        (void)body(s);
      });
    }
  }

  /// Holds: committed at once, in the WAL but not yet flushed to disk (group_commit.hpp).
  void transact_hold(const std::function<bool(sql::session&)>& body) const override {
    committer_.submit(body, false, /*durable=*/false);
  }

  /// A batch in the writer's one IMMEDIATE transaction, each write in its savepoint; one commit,
  /// with synchronous FULL (on disk before any of them is answered) unless the batch holds only
  /// holds: synchronous NORMAL then, whose commit the WAL keeps in order and the next FULL commit
  /// (or checkpoint) flushes with it. WAL stays consistent through a crash either way. Every
  /// statement here is one of the connection's prepared statements (storage::query), none parsed
  /// again per write.
  void run_batch(std::span<sql::queued_write* const> batch) {
    const bool durable = batch.front()->durable;
    if (durable != synchronous_full_) {
      // Between transactions, on the writer only this batch's leader uses.
      storage::query(db_.writer(), durable ? "PRAGMA synchronous = FULL" : "PRAGMA synchronous = NORMAL").run();
      synchronous_full_ = durable;
    }
    if (batch.size() == 1) {
      run_alone(*batch.front());
      return;
    }
    db_.write([&](storage::connection& c) {
      sqlite_session s(c);
      for (sql::queued_write* w : batch)
        sql::run_in_savepoint(
            *w,
            [&]() -> sql::session& {
              storage::query(c, "SAVEPOINT metering_write").run();
              return s;
            },
            [&] { storage::query(c, "RELEASE metering_write").run(); },
            [&] {
              storage::query(c, "ROLLBACK TO metering_write").run();
              storage::query(c, "RELEASE metering_write").run();
            },
            [](const std::exception_ptr&) { return false; });
    });
  }

  /// A lone write needs no savepoint: the transaction is its own, rolled back whole when the
  /// write refuses or throws (kept in its `error`, as a failed commit is).
  void run_alone(sql::queued_write& w) {
    try {
      (void)db_.write([&](storage::connection& c) -> std::optional<bool> {
        sqlite_session s(c);
        if ((*w.body)(s))
          return true;
        return std::nullopt;  // refused: nothing of it is committed
      });
    } catch (...) {
      w.error = std::current_exception();
    }
  }

  mutable storage::database db_;
  bool synchronous_full_ = true;         // the writer's PRAGMA synchronous: FULL (true) or NORMAL
  mutable sql::group_commit committer_;  // after db_: stopped before the database closes
};

}  // namespace

result<std::unique_ptr<store>> open_sqlite(const std::string& path, sqlite_options options) {
  try {
    return std::unique_ptr<store>(std::make_unique<sqlite_store>(path, std::move(options.now)));
  } catch (const std::exception& e) {
    return fail(metering_errc::storage, std::string("metering store: ") + e.what());
  }
}

}  // namespace enact::metering
