// SPDX-License-Identifier: Apache-2.0
// The embedded (SQLite) permission ledger; the rules it enforces are listed in embedded_ledger.hpp.
// Inside the ledger's source files an SQLite failure is an exception (`sqlite_failure`), so the
// domain code reads straight through; every public method catches it at its transaction boundary
// (embedded_store.hpp), rolls back and answers ledger_errc::storage with SQLite's message. Domain
// failures are results, as elsewhere. This file opens and migrates the file, runs batches and
// reads the event log and the balances an older version kept; the methods live by concern in
// embedded_accounts.cpp (accounts, usage keys), embedded_groups.cpp and embedded_catalog.cpp
// (wallets, actions).
#include "ledger/embedded_ledger.hpp"

#include <array>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ledger/embedded_store.hpp"

namespace enact::ledger {

using namespace embedded;  // NOLINT(google-build-using-namespace): the store's helpers

namespace {

// Schema migrations: kMigrations[i] takes user_version i to i + 1. Append, never edit.
// Accounts are referenced by a surrogate row id; lists are ordered by row id, i.e. by creation
// (group members by their row id, i.e. by insertion). Blobs: hashes 32 bytes, addresses 20 bytes.
// Retired: accounts.balance, the payments table and events.charged_credits held credits while the
// ledger kept them (credits are the metering store's now); no write touches them any more, and
// balances() reads the first once, to carry an older data directory's credits over.
constexpr auto kMigrations = std::to_array<const char*>({
    R"sql(
CREATE TABLE accounts (
  id                 INTEGER PRIMARY KEY,
  hash               BLOB    NOT NULL UNIQUE,
  admin              BLOB    NOT NULL UNIQUE,
  managed            INTEGER NOT NULL,
  name               TEXT    NOT NULL,
  description        TEXT    NOT NULL,
  email              TEXT    NOT NULL,
  balance            INTEGER NOT NULL DEFAULT 0 CHECK (balance >= 0),
  next_group_id      INTEGER NOT NULL DEFAULT 1,
  wallets_registered INTEGER NOT NULL DEFAULT 0,
  created_at         INTEGER NOT NULL
);
CREATE TABLE usage_keys (
  id          INTEGER PRIMARY KEY,
  hash        BLOB    NOT NULL UNIQUE,
  account_id  INTEGER NOT NULL REFERENCES accounts(id),
  wallet      BLOB    NOT NULL,
  name        TEXT    NOT NULL,
  description TEXT    NOT NULL,
  expiration  INTEGER NOT NULL,
  balance     INTEGER NOT NULL,
  permissions TEXT    NOT NULL,
  created_at  INTEGER NOT NULL
);
CREATE INDEX usage_keys_by_account ON usage_keys(account_id);
CREATE TABLE groups (
  id          INTEGER PRIMARY KEY,
  account_id  INTEGER NOT NULL REFERENCES accounts(id),
  group_id    INTEGER NOT NULL,
  name        TEXT    NOT NULL,
  description TEXT    NOT NULL,
  created_at  INTEGER NOT NULL,
  UNIQUE (account_id, group_id)
);
CREATE TABLE group_pkps (
  id        INTEGER PRIMARY KEY,
  group_row INTEGER NOT NULL REFERENCES groups(id) ON DELETE CASCADE,
  pkp       BLOB    NOT NULL,
  UNIQUE (group_row, pkp)
);
CREATE TABLE group_cids (
  id        INTEGER PRIMARY KEY,
  group_row INTEGER NOT NULL REFERENCES groups(id) ON DELETE CASCADE,
  cid_hash  BLOB    NOT NULL,
  UNIQUE (group_row, cid_hash)
);
CREATE INDEX group_cids_by_hash ON group_cids(cid_hash);
CREATE TABLE wallets (
  id              INTEGER PRIMARY KEY,
  account_id      INTEGER NOT NULL REFERENCES accounts(id),
  pkp_id          BLOB    NOT NULL,
  derivation_path BLOB    NOT NULL,
  name            TEXT    NOT NULL,
  description     TEXT    NOT NULL,
  created_at      INTEGER NOT NULL,
  UNIQUE (account_id, pkp_id)
);
CREATE INDEX wallets_by_account ON wallets(account_id);
CREATE TABLE actions (
  id          INTEGER PRIMARY KEY,
  account_id  INTEGER NOT NULL REFERENCES accounts(id),
  hashed_cid  BLOB    NOT NULL,
  cid         TEXT    NOT NULL,
  name        TEXT    NOT NULL,
  description TEXT    NOT NULL,
  created_at  INTEGER NOT NULL,
  UNIQUE (account_id, hashed_cid)
);
CREATE INDEX actions_by_account ON actions(account_id);
CREATE TABLE payments (
  id           INTEGER PRIMARY KEY,
  account_id   INTEGER NOT NULL REFERENCES accounts(id),
  intent_id    TEXT    NOT NULL UNIQUE,
  amount_cents INTEGER NOT NULL,
  provider     TEXT    NOT NULL,
  credited     INTEGER NOT NULL DEFAULT 0,
  created_at   INTEGER NOT NULL
);
-- sequence is the rowid: max + 1 on insert; writes are serialized and rows never deleted, so the
-- committed sequence has no gaps.
CREATE TABLE events (
  sequence        INTEGER PRIMARY KEY,
  name            TEXT    NOT NULL,
  account         BLOB    NOT NULL,
  sender          BLOB    NOT NULL,
  data            TEXT    NOT NULL,
  charged_credits INTEGER NOT NULL DEFAULT 0,
  created_at      INTEGER NOT NULL
);
)sql",
    // 1 → 2: the account's group count, kept by add_group / remove_group, so a page of
    // list_groups answers its total without counting the account's groups.
    R"sql(
ALTER TABLE accounts ADD COLUMN group_count INTEGER NOT NULL DEFAULT 0 CHECK (group_count >= 0);
UPDATE accounts SET group_count = (SELECT COUNT(*) FROM groups g WHERE g.account_id = accounts.id);
)sql",
});
static_assert(kMigrations.size() == embedded_ledger::kSchemaVersion, "kSchemaVersion must count the migrations");

}  // namespace

thread_local const embedded_ledger::store* embedded_ledger::store::t_batch_store = nullptr;

// -----------------------------------------------------------------------------------------------
// open

result<std::unique_ptr<embedded_ledger>> embedded_ledger::open(const std::string& sqlite_path,
                                                               std::vector<address> api_payers) {
  auto s = std::make_unique<store>(sqlite_path, std::move(api_payers));
  try {
    s->writer = std::make_unique<connection>(sqlite_path, storage::connection_options{true, kBusyTimeoutMs});
    connection& c = *s->writer;
    c.enable_wal();
    c.exec("PRAGMA synchronous = NORMAL");
    c.exec("PRAGMA foreign_keys = ON");

    // Refuses a file of a later build (storage::migrate).
    storage::migrate(c, kMigrations);
    // One reader now, so that a file readers cannot open fails here rather than on first use.
    { reader_pool::lease l = s->readers.acquire(); }
  } catch (const std::exception& e) {
    return storage_error(e);
  }
  return std::unique_ptr<embedded_ledger>(new embedded_ledger(std::move(s)));
}

embedded_ledger::embedded_ledger(std::unique_ptr<store> s) : store_(std::move(s)) {}
embedded_ledger::~embedded_ledger() = default;

std::vector<address> embedded_ledger::api_payers() const { return store_->api_payers; }

// -----------------------------------------------------------------------------------------------
// batches

result<void> embedded_ledger::batch(bool commit, const std::function<result<void>()>& writes) {
  store& s = *store_;
  if (store::t_batch_store == &s)
    return fail(ledger_errc::invalid_argument, "batch: already inside a batch of this ledger");
  std::lock_guard lock(s.write_mu);
  connection& c = *s.writer;
  try {
    query(c, "BEGIN IMMEDIATE").run();
  } catch (const std::exception& e) {
    c.rollback();
    return storage_error(e);
  }
  s.batch_failed = false;
  store::t_batch_store = &s;
  result<void> r;
  try {
    r = writes();
  } catch (...) {
    store::t_batch_store = nullptr;
    c.rollback();
    throw;
  }
  store::t_batch_store = nullptr;
  if (r && s.batch_failed)
    r = fail(ledger_errc::storage, "batch: a write failed in storage");
  try {
    if (r && commit)
      query(c, "COMMIT").run();
    else
      c.rollback();
  } catch (const std::exception& e) {
    c.rollback();
    return storage_error(e);
  }
  return r;
}

// -----------------------------------------------------------------------------------------------
// events

result<std::vector<event>> embedded_ledger::events_after(uint64_t after, size_t limit) const {
  if (limit == 0 || after >= kMaxStored)
    return std::vector<event>{};
  return store_->read(
      [&](connection& c) -> result<std::vector<event>> {
        std::vector<event> out;
        // The credit events an older version appended (debits, credited payments) are metering
        // history, not registry events: they keep their sequence numbers and are left out.
        query q(c,
                "SELECT sequence, name, account, sender, data, created_at FROM events "
                "WHERE sequence > ? AND name NOT IN ('CreditsDebited', 'PaymentCredited') "
                "ORDER BY sequence LIMIT ?");
        q.bind(after, static_cast<int64_t>(std::min<uint64_t>(limit, kMaxStored)));
        while (q.next()) {
          event e;
          e.sequence = q.u64(0);
          e.name = q.text(1);
          e.account = q.hash(2);
          e.sender = q.addr(3);
          e.data = boost::json::parse(q.text(4)).as_object();
          e.created_at = q.i64(5);
          auto value = reg::event_from_json(e.name, e.data);
          if (!value)
            return fail(ledger_errc::storage,
                        "event " + std::to_string(e.sequence) + ": not a registry event: " + value.err().message);
          e.value = std::move(*value);
          out.push_back(std::move(e));
        }
        return out;
      },
      false);
}

// -----------------------------------------------------------------------------------------------
// credits an older version kept

result<std::vector<std::pair<account_hash, uint64_t>>> embedded_ledger::balances() const {
  return store_->read(
      [&](connection& c) -> result<std::vector<std::pair<account_hash, uint64_t>>> {
        std::vector<std::pair<account_hash, uint64_t>> out;
        query q(c, "SELECT hash, balance FROM accounts WHERE balance > 0 ORDER BY id");
        while (q.next())
          out.emplace_back(q.hash(0), q.u64(1));
        return out;
      },
      false);
}

}  // namespace enact::ledger
