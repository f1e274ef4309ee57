// SPDX-License-Identifier: Apache-2.0
#include "storage/sqlite.hpp"

#include <algorithm>
#include <exception>
#include <mutex>
#include <set>
#include <string>

namespace enact::storage {

void throw_sqlite(sqlite3* db, std::string_view what) {
  if (db == nullptr)
    throw sqlite_error("sqlite: " + std::string(what) + ": out of memory", SQLITE_NOMEM);
  throw sqlite_error("sqlite: " + std::string(what) + ": " + sqlite3_errmsg(db), sqlite3_extended_errcode(db));
}

// ---------------------------------------------------------------------------------------------
// connection

connection::connection(const std::string& path, connection_options options) : path_(path) {
  const int flags = (options.writer ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE : SQLITE_OPEN_READONLY) |
                    (options.serialized ? SQLITE_OPEN_FULLMUTEX : SQLITE_OPEN_NOMUTEX);
  sqlite3* db = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &db, flags, nullptr);
  db_.reset(db);  // even a failed open allocates a handle to close
  if (rc != SQLITE_OK)
    throw_sqlite(db, "open " + path);
  sqlite3_extended_result_codes(db, 1);
  sqlite3_busy_timeout(db, options.busy_timeout_ms);
}

connection::~connection() {
  for (auto& entry : cache_)
    sqlite3_finalize(entry.second);
}

sqlite3_stmt* connection::statement(std::string_view sql) {
  if (auto it = cache_.find(sql); it != cache_.end())
    return it->second;
  sqlite3_stmt* s = nullptr;
  if (sqlite3_prepare_v3(db_.get(), sql.data(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT, &s, nullptr) !=
      SQLITE_OK)
    throw_sqlite(db_.get(), "prepare");
  cache_.emplace(sql, s);
  return s;
}

void connection::exec(const std::string& sql) {
  if (sqlite3_exec(db_.get(), sql.c_str(), nullptr, nullptr, nullptr) != SQLITE_OK)
    throw_sqlite(db_.get(), "exec");
}

void connection::rollback() noexcept {
  if (in_transaction())
    sqlite3_exec(db_.get(), "ROLLBACK", nullptr, nullptr, nullptr);
}

void connection::enable_wal() {
  query q(*this, "PRAGMA journal_mode = WAL");
  if (!q.next() || q.text(0) != "wal")
    throw sqlite_error("sqlite: " + path_ + ": cannot enable WAL journal");
}

int64_t connection::user_version() {
  query q(*this, "PRAGMA user_version");
  return q.next() ? q.i64(0) : 0;
}

// ---------------------------------------------------------------------------------------------
// query

bool query::next() {
  const int rc = sqlite3_step(s_);
  if (rc == SQLITE_ROW)
    return true;
  if (rc == SQLITE_DONE)
    return false;
  throw_sqlite(db_, "step");
}

std::string query::text(int col) const {
  const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(s_, col));
  return p == nullptr ? std::string() : std::string(p, static_cast<size_t>(sqlite3_column_bytes(s_, col)));
}

bytes query::blob(int col) const {
  const auto* p = static_cast<const uint8_t*>(sqlite3_column_blob(s_, col));
  return p == nullptr ? bytes() : bytes(p, p + sqlite3_column_bytes(s_, col));
}

void query::copy_fixed(int col, uint8_t* out, size_t n) const {
  const void* p = sqlite3_column_blob(s_, col);
  const auto size = static_cast<size_t>(sqlite3_column_bytes(s_, col));
  if (size != n || p == nullptr)
    throw sqlite_error("sqlite: corrupt row: blob of " + std::to_string(size) + " bytes, expected " +
                       std::to_string(n));
  std::copy_n(static_cast<const uint8_t*>(p), n, out);
}

void query::check(int rc) const {
  if (rc != SQLITE_OK)
    throw_sqlite(db_, "bind");
}

// ---------------------------------------------------------------------------------------------
// transaction, savepoint

transaction::transaction(connection& c, kind k) : c_(c) {
  query(c_, k == kind::immediate ? "BEGIN IMMEDIATE" : "BEGIN").run();
}

transaction::~transaction() { rollback(); }

void transaction::commit() {
  if (!open_)
    throw sqlite_error("sqlite: commit: the transaction is no longer open");
  try {
    query(c_, "COMMIT").run();
  } catch (...) {
    rollback();
    throw;
  }
  open_ = false;
}

void transaction::rollback() noexcept {
  if (!open_)
    return;
  open_ = false;
  c_.rollback();
}

namespace {

/// The statement text of `verb name`, kept for the life of the process: a connection caches its
/// prepared statements by their text (connection::statement), so the text must outlive it. Names
/// are a program's few literals, so the set stays small.
const std::string& savepoint_text(std::string_view verb, std::string_view name) {
  static std::mutex mu;
  static std::set<std::string, std::less<>> texts;
  std::string text;
  text.reserve(verb.size() + 1 + name.size());
  text.append(verb).append(" ").append(name);
  std::lock_guard lock(mu);
  return *texts.insert(std::move(text)).first;
}

}  // namespace

savepoint::savepoint(connection& c, std::string_view name)
    : c_(c), release_(savepoint_text("RELEASE", name)), rollback_to_(savepoint_text("ROLLBACK TO", name)) {
  query(c_, savepoint_text("SAVEPOINT", name)).run();
}

savepoint::~savepoint() {
  if (!open_)
    return;
  // Some errors (I/O, a full disk) end the whole transaction; then there is nothing to undo here.
  if (c_.in_transaction()) {
    try {
      undo();
    } catch (const std::exception&) {  // the transaction is lost: its owner rolls it back
    }
  }
}

void savepoint::release() {
  query(c_, release_).run();
  open_ = false;
}

void savepoint::rollback() {
  open_ = false;
  undo();
}

void savepoint::undo() {
  query(c_, rollback_to_).run();
  query(c_, release_).run();
}

// ---------------------------------------------------------------------------------------------
// migrations

namespace {

[[noreturn]] void refuse_newer(const connection& c, int64_t found, size_t known) {
  throw sqlite_error("sqlite: " + c.path() + ": schema version " + std::to_string(found) +
                     " is newer than this build's " + std::to_string(known));
}

}  // namespace

void migrate(connection& c, std::span<const migration> steps) {
  const auto target = static_cast<int64_t>(steps.size());
  int64_t version = c.user_version();
  if (version > target)
    refuse_newer(c, version, steps.size());
  while (version < target) {
    transaction tx(c, transaction::kind::immediate);
    version = c.user_version();  // another process may have migrated meanwhile
    if (version > target)
      refuse_newer(c, version, steps.size());
    if (version == target)
      break;  // tx rolls back an empty transaction
    const migration& step = steps[static_cast<size_t>(version)];
    if (step.sql != nullptr)
      c.exec(step.sql);
    if (step.apply != nullptr)
      step.apply(c);
    c.exec("PRAGMA user_version = " + std::to_string(version + 1));
    tx.commit();
    ++version;
  }
}

void migrate(connection& c, std::span<const char* const> steps) {
  std::vector<migration> all;
  all.reserve(steps.size());
  for (const char* sql : steps)
    all.push_back({sql, nullptr});
  migrate(c, std::span<const migration>(all));
}

// ---------------------------------------------------------------------------------------------
// reader_pool

reader_pool::reader_pool(std::string path, size_t max, int busy_timeout_ms)
    : pool<connection>(
          max,
          [path = std::move(path), busy_timeout_ms] {
            return std::make_unique<connection>(path, connection_options{false, busy_timeout_ms, false});
          },
          [](connection& c) {
            c.rollback();
            return true;
          }) {}

// ---------------------------------------------------------------------------------------------
// database

database::database(const std::string& path, database_options options)
    : writer_(path, connection_options{true, options.busy_timeout_ms, false}),
      readers_(path, options.read_connections, options.busy_timeout_ms) {
  writer_.enable_wal();
  writer_.exec(options.synchronous_full ? "PRAGMA synchronous = FULL" : "PRAGMA synchronous = NORMAL");
  if (options.foreign_keys)
    writer_.exec("PRAGMA foreign_keys = ON");
}

database::database(const std::string& path, std::span<const migration> steps, database_options options)
    : database(path, options) {
  migrate(writer_, steps);
  { reader_pool::lease l = readers_.acquire(); }
}

database::database(const std::string& path, std::span<const char* const> steps, database_options options)
    : database(path, options) {
  migrate(writer_, steps);
  { reader_pool::lease l = readers_.acquire(); }
}

}  // namespace enact::storage
