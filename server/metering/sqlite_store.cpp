// SPDX-License-Identifier: Apache-2.0
// The SQLite metering store (sqlite_store.hpp): the schema, a session (session.hpp) on the kit's
// connections, the writer's committer (group_commit.hpp), and the open reservations in the process
// (process_holds.hpp) under an exclusive lock on the file.
#include "metering/sqlite_store.hpp"

#include <exception>
#include <functional>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "enact/codec/hex.hpp"
#include "metering/group_commit.hpp"
#include "metering/process_holds.hpp"
#include "metering/session.hpp"
#include "storage/file_lock.hpp"
#include "storage/sqlite.hpp"

namespace enact::metering {
namespace {

namespace ops = sql::operations;

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
        lock_(storage::file_lock::for_file(path, path + " is open in another metering store (another server on the "
                                                        "same file?): a file serves one server at a time")),
        db_(path, migration_texts(), storage::database_options{.synchronous_full = true}),
        committer_([this](std::span<sql::queued_write* const> batch) { run_batch(batch); }) {
    // Reservations an earlier version kept in the file belong to runs its process took with it.
    db_.write([](storage::connection& c) { storage::query(c, "DELETE FROM metering_reservations").run(); });
  }

  [[nodiscard]] result<uint64_t> available(const account_hash& a) const override {
    try {
      const auto f = holds_.funds(
          a, nullptr, [&] { return committed(a, a); }, clock()());
      return f.committed.balance > f.held.balance ? f.committed.balance - f.held.balance : 0;
    } catch (const std::exception& e) {
      return fail(metering_errc::storage, std::string("metering store: ") + e.what());
    }
  }

  [[nodiscard]] result<reservation> reserve(const reserve_request& q) override {
    try {
      return holds_.reserve(
          q, [&] { return committed(q.account, q.key); }, clock());
    } catch (const std::exception& e) {
      return fail(metering_errc::storage, std::string("metering store: ") + e.what());
    }
  }

  [[nodiscard]] result<uint64_t> settle(const account_hash& a, std::string_view id, uint64_t amount) override {
    return charge_held(a, id, amount, [&](sql::session& s, const reservation& r, millis now) {
      return ops::charge(s, r, amount, now);
    });
  }

  [[nodiscard]] result<uint64_t> settle_and_keep(const account_hash& a, std::string_view id, uint64_t amount,
                                                 const idempotency_request& q, const kept_answer& k) override {
    return charge_held(a, id, amount, [&](sql::session& s, const reservation& r, millis now) {
      return ops::charge_and_keep(s, r, amount, q, k, now);
    });
  }

  [[nodiscard]] result<void> release(const account_hash& a, std::string_view id) override {
    return holds_.release(a, id);
  }

  [[nodiscard]] result<uint64_t> release_expired() override { return holds_.release_expired(clock()()); }

  [[nodiscard]] sql::group_commit_stats commit_stats() const { return committer_.stats(); }

  [[nodiscard]] result<key_spending> spending(const account_hash& a, const key_hash& k) const override {
    try {
      const auto f = holds_.funds(
          a, &k, [&] { return committed(a, k); }, clock()());
      return key_spending{f.committed.spent, f.held.spent};
    } catch (const std::exception& e) {
      return fail(metering_errc::storage, std::string("metering store: ") + e.what());
    }
  }

 private:
  /// The account's balance and the key's settled spending, as committed (one statement: one
  /// snapshot).
  committed_funds committed(const account_hash& a, const key_hash& k) const {
    return db_.read(
        [&](storage::connection& c) {
          const std::string account = codec::hex::encode(a);
          storage::query q(c,
                           "SELECT (SELECT balance FROM metering_accounts WHERE account = ?1), (SELECT spent FROM "
                           "metering_key_spending WHERE account = ?1 AND key_hash = ?2)");
          q.bind(account, codec::hex::encode(k));
          if (!q.next())
            throw std::runtime_error("no row from a scalar query");
          return committed_funds{q.is_null(0) ? 0 : q.u64(0), q.is_null(1) ? 0 : q.u64(1)};
        },
        /*snapshot=*/false);
  }

  /// A settle: the reservation taken from the book (it keeps holding its credits meanwhile), its
  /// charge committed durably by `charge`, and only then closed; a charge that fails leaves it
  /// open, as a rolled-back settle leaves its row.
  template <class Charge>
  result<uint64_t> charge_held(const account_hash& a, std::string_view id, uint64_t amount, Charge&& charge) {
    const millis now = clock()();
    ENACT_TRY(const reservation r, holds_.settling(a, id, amount, now));
    auto out = run(access::write, [&](sql::session& s) { return charge(s, r, now); });
    if (out)
      holds_.settled(a, id);
    else
      holds_.unsettled(a, id);
    return out;
  }

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

  /// A batch in the writer's one IMMEDIATE transaction, each write in its savepoint (whose
  /// statements the connection prepared once); one commit, with synchronous FULL: on disk before
  /// any of them is answered. (Holds never come here: they live in the process.)
  void run_batch(std::span<sql::queued_write* const> batch) {
    if (batch.size() == 1) {
      run_alone(*batch.front());
      return;
    }
    db_.write([&](storage::connection& c) {
      sqlite_session s(c);
      for (sql::queued_write* w : batch) {
        std::optional<storage::savepoint> sp;
        sql::run_in_savepoint(
            *w,
            [&]() -> sql::session& {
              sp.emplace(c, "metering_write");
              return s;
            },
            [&] { sp->release(); }, [&] { sp->rollback(); }, [](const std::exception_ptr&) { return false; });
      }
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

  /// The store's file taken for this process alone, by the file's one name (storage::file_lock),
  /// before db_ opens it and let go after db_ closed it. Open reservations live in the process
  /// (process_holds.hpp), so a second store on the file, in this process or another, would not see
  /// them and could spend the same credits: it fails to open instead.
  storage::file_lock lock_;
  mutable storage::database db_;
  process_holds holds_;
  mutable sql::group_commit committer_;  // after db_: stopped before the database closes
};

}  // namespace

std::optional<sql::group_commit_stats> sqlite_commit_stats(const store& s) {
  const auto* sq = dynamic_cast<const sqlite_store*>(&s);
  if (sq == nullptr)
    return std::nullopt;
  return sq->commit_stats();
}

result<std::unique_ptr<store>> open_sqlite(const std::string& path, sqlite_options options) {
  try {
    return std::unique_ptr<store>(std::make_unique<sqlite_store>(path, std::move(options.now)));
  } catch (const std::exception& e) {
    return fail(metering_errc::storage, std::string("metering store: ") + e.what());
  }
}

}  // namespace enact::metering
