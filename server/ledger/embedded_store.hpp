// SPDX-License-Identifier: Apache-2.0
// The embedded ledger's store (embedded_ledger.hpp): the limits it enforces, the row helpers its
// write and read methods share, the transaction boundaries (`embedded_ledger::store`) and the
// account write that appends the registry event. Internal to the ledger's
// source files (embedded_ledger.cpp and embedded_*.cpp, one per concern).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <boost/json.hpp>

#include "enact/chain/registry.hpp"
#include "enact/codec/hex.hpp"
#include "ledger/embedded_ledger.hpp"
#include "ledger/embedded_sqlite.hpp"

namespace enact::ledger {
namespace embedded {

namespace reg = chain::registry;

inline constexpr size_t kMaxName = 256;
inline constexpr size_t kMaxDescription = 4096;
inline constexpr size_t kMaxEmail = 256;
inline constexpr size_t kMaxCid = 256;
/// The largest count SQLite stores (an INTEGER is 64-bit signed).
inline constexpr uint64_t kMaxStored = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());

// ---------------------------------------------------------------------------------------------
// Small domain helpers

[[nodiscard]] inline int64_t now_seconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

template <size_t N>
[[nodiscard]] inline std::string hx(const std::array<uint8_t, N>& v) {
  return codec::hex::encode_prefixed(v);
}

template <size_t N>
[[nodiscard]] inline bool is_zero(const std::array<uint8_t, N>& v) {
  return std::all_of(v.begin(), v.end(), [](uint8_t b) { return b == 0; });
}

[[nodiscard]] inline error storage_error(const std::exception& e) { return fail(ledger_errc::storage, e.what()); }

[[nodiscard]] inline result<void> check_name(std::string_view field, std::string_view v) {
  if (v.empty())
    return fail(ledger_errc::invalid_argument, std::string(field) + ": must not be empty");
  if (v.size() > kMaxName)
    return fail(ledger_errc::invalid_argument, std::string(field) + ": longer than " + std::to_string(kMaxName) +
                                                   " bytes (" + std::to_string(v.size()) + ")");
  return {};
}

[[nodiscard]] inline result<void> check_length(std::string_view field, std::string_view v, size_t max) {
  if (v.size() > max)
    return fail(ledger_errc::invalid_argument, std::string(field) + ": longer than " + std::to_string(max) +
                                                   " bytes (" + std::to_string(v.size()) + ")");
  return {};
}

[[nodiscard]] inline result<void> check_metadata(std::string_view name, std::string_view description) {
  ENACT_TRY_VOID(check_name("name", name));
  return check_length("description", description, kMaxDescription);
}

/// The page's LIMIT and OFFSET (docs/protocol.md §0 pages are 1-based).
[[nodiscard]] inline result<std::pair<int64_t, int64_t>> page_bounds(page_request p) {
  if (p.number == 0 || p.size == 0)
    return fail(ledger_errc::invalid_argument, "page: number and size must be at least 1");
  const uint64_t size = std::min(p.size, kMaxStored);
  const uint64_t skip = p.number - 1;
  const uint64_t offset = skip > kMaxStored / size ? kMaxStored : skip * size;
  return std::pair{static_cast<int64_t>(size), static_cast<int64_t>(offset)};
}

[[nodiscard]] inline error unknown_account(const account_hash& h) {
  return fail(ledger_errc::unknown_account, "account " + hx(h) + ": no such account");
}
[[nodiscard]] inline error unknown_group(const account_hash& h, group_id id) {
  return fail(ledger_errc::unknown_group, "group_id " + std::to_string(id) + ": no such group in account " + hx(h));
}

struct account_row {
  int64_t id = 0;
  account acct;
  uint64_t next_group_id = 1;
  uint64_t wallets_registered = 0;
  uint64_t group_count = 0;
};

#define ENACT_ACCOUNT_SELECT                                                \
  "SELECT id, hash, admin, managed, name, description, email, created_at, " \
  "next_group_id, wallets_registered, group_count FROM accounts "

[[nodiscard]] inline account_row read_account(const query& q) {
  account_row r;
  r.id = q.i64(0);
  r.acct.hash = q.hash(1);
  r.acct.admin = q.addr(2);
  r.acct.managed = q.boolean(3);
  r.acct.name = q.text(4);
  r.acct.description = q.text(5);
  r.acct.email = q.text(6);
  r.acct.created_at = q.i64(7);
  r.next_group_id = q.u64(8);
  r.wallets_registered = q.u64(9);
  r.group_count = q.u64(10);
  return r;
}

[[nodiscard]] inline std::optional<account_row> load_account(connection& c, const account_hash& h) {
  query q(c, ENACT_ACCOUNT_SELECT "WHERE hash = ?");
  q.bind(h);
  if (!q.next())
    return std::nullopt;
  return read_account(q);
}

[[nodiscard]] inline std::optional<account_row> load_account_by_admin(connection& c, const address& a) {
  query q(c, ENACT_ACCOUNT_SELECT "WHERE admin = ?");
  q.bind(a);
  if (!q.next())
    return std::nullopt;
  return read_account(q);
}
#undef ENACT_ACCOUNT_SELECT

[[nodiscard]] inline result<account_row> require_account(connection& c, const account_hash& h) {
  std::optional<account_row> r = load_account(c, h);
  if (!r)
    return unknown_account(h);
  return std::move(*r);
}

[[nodiscard]] inline uint64_t count(connection& c, std::string_view sql, int64_t key) {
  query q(c, sql);
  q.bind(key);
  return q.next() ? q.u64(0) : 0;
}

// --- usage keys --------------------------------------------------------------------------------

#define ENACT_USAGE_KEY_SELECT                                                        \
  "SELECT k.hash, a.hash, k.wallet, k.name, k.description, k.expiration, k.balance, " \
  "k.permissions, k.created_at FROM usage_keys k JOIN accounts a ON a.id = k.account_id "

[[nodiscard]] inline usage_key read_usage_key(const query& q) {
  usage_key k;
  k.hash = q.hash(0);
  k.account = q.hash(1);
  k.wallet = q.addr(2);
  k.name = q.text(3);
  k.description = q.text(4);
  k.expiration = q.u64(5);
  k.balance = q.u64(6);
  const boost::json::value v = boost::json::parse(q.text(7));
  result<scopes::permission_set> perms = scopes::permission_set_from_json(v.as_object());
  if (!perms)
    throw sqlite_failure("corrupt usage key permissions: " + perms.err().message);
  k.permissions = std::move(perms).value();
  k.created_at = q.i64(8);
  return k;
}

/// Whether the account holds the usage key.
[[nodiscard]] inline bool usage_key_in(connection& c, int64_t account_id, const hash256& key_hash) {
  query q(c, "SELECT 1 FROM usage_keys WHERE account_id = ? AND hash = ?");
  q.bind(account_id, key_hash);
  return q.next();
}

[[nodiscard]] inline error unknown_usage_key(const account_hash& h, const hash256& key_hash) {
  return fail(ledger_errc::unknown_usage_key, "usage key " + hx(key_hash) + ": no such key in account " + hx(h));
}

[[nodiscard]] inline std::string permissions_text(const scopes::permission_set& p) {
  return boost::json::serialize(boost::json::value_from(p));
}

// --- groups ------------------------------------------------------------------------------------

struct group_row {
  int64_t row = 0;
  group g;
};

[[nodiscard]] inline std::optional<int64_t> find_group_row(connection& c, int64_t account_id, group_id id) {
  query q(c, "SELECT id FROM groups WHERE account_id = ? AND group_id = ?");
  q.bind(account_id, id);
  if (!q.next())
    return std::nullopt;
  return q.i64(0);
}

/// Groups of the account with group_id in [lo, hi], in id order, `limit` from `offset`, with their
/// members: three queries whatever the number of groups. The member queries walk the page's groups
/// and reach their members by index (CROSS JOIN fixes that order: SQLite would otherwise scan every
/// member row of every account and join them to the groups).
[[nodiscard]] inline std::vector<group> load_groups(connection& c, int64_t account_id, group_id lo, group_id hi,
                                                    int64_t limit, int64_t offset) {
  std::vector<group> out;
  std::unordered_map<int64_t, size_t> by_row;
  {
    query q(c,
            "SELECT id, group_id, name, description FROM groups WHERE account_id = ? AND "
            "group_id BETWEEN ? AND ? ORDER BY group_id LIMIT ? OFFSET ?");
    q.bind(account_id, static_cast<int64_t>(lo), static_cast<int64_t>(hi), limit, offset);
    while (q.next()) {
      group g;
      g.id = q.u64(1);
      g.name = q.text(2);
      g.description = q.text(3);
      by_row.emplace(q.i64(0), out.size());
      out.push_back(std::move(g));
    }
  }
  if (out.empty())
    return out;
  const auto first = static_cast<int64_t>(out.front().id);
  const auto last = static_cast<int64_t>(out.back().id);
  {
    query q(c,
            "SELECT m.group_row, m.pkp FROM groups g CROSS JOIN group_pkps m ON m.group_row = "
            "g.id WHERE g.account_id = ? AND g.group_id BETWEEN ? AND ? ORDER BY m.id");
    q.bind(account_id, first, last);
    while (q.next())
      if (auto it = by_row.find(q.i64(0)); it != by_row.end())
        out[it->second].pkps.push_back(q.addr(1));
  }
  {
    query q(c,
            "SELECT m.group_row, m.cid_hash FROM groups g CROSS JOIN group_cids m ON m.group_row "
            "= g.id WHERE g.account_id = ? AND g.group_id BETWEEN ? AND ? ORDER BY m.id");
    q.bind(account_id, first, last);
    while (q.next())
      if (auto it = by_row.find(q.i64(0)); it != by_row.end())
        out[it->second].cid_hashes.push_back(q.hash(1));
  }
  return out;
}

// Group ids are stored as SQLite int64; ids beyond that range cannot exist (they count from 1).
inline constexpr group_id kMaxGroupId = static_cast<group_id>(std::numeric_limits<int64_t>::max());

[[nodiscard]] inline std::optional<group> load_group(connection& c, int64_t account_id, group_id id) {
  if (id == 0 || id > kMaxGroupId)
    return std::nullopt;
  std::vector<group> v = load_groups(c, account_id, id, id, 1, 0);
  if (v.empty())
    return std::nullopt;
  return std::move(v.front());
}

[[nodiscard]] inline bool wallet_registered(connection& c, int64_t account_id, const address& pkp) {
  query q(c, "SELECT 1 FROM wallets WHERE account_id = ? AND pkp_id = ?");
  q.bind(account_id, pkp);
  return q.next();
}

/// Group sets as add_group / update_group take them: every PKP registered, nothing twice.
[[nodiscard]] inline result<void> check_group_sets(connection& c, const account_row& a, const group& g) {
  for (size_t i = 0; i < g.pkps.size(); ++i)
    if (std::find(g.pkps.begin(), g.pkps.begin() + static_cast<ptrdiff_t>(i), g.pkps[i]) !=
        g.pkps.begin() + static_cast<ptrdiff_t>(i))
      return fail(ledger_errc::invalid_argument,
                  "pkp_ids_permitted[" + std::to_string(i) + "]: " + hx(g.pkps[i]) + " listed twice");
  for (size_t i = 0; i < g.cid_hashes.size(); ++i)
    if (std::find(g.cid_hashes.begin(), g.cid_hashes.begin() + static_cast<ptrdiff_t>(i), g.cid_hashes[i]) !=
        g.cid_hashes.begin() + static_cast<ptrdiff_t>(i))
      return fail(ledger_errc::invalid_argument,
                  "cid_hashes_permitted[" + std::to_string(i) + "]: " + hx(g.cid_hashes[i]) + " listed twice");
  for (size_t i = 0; i < g.pkps.size(); ++i)
    if (!wallet_registered(c, a.id, g.pkps[i]))
      return fail(ledger_errc::unknown_wallet, "pkp_ids_permitted[" + std::to_string(i) + "]: " + hx(g.pkps[i]) +
                                                   " is not registered in account " + hx(a.acct.hash));
  return {};
}

inline void insert_group_members(connection& c, int64_t row, const group& g) {
  for (const address& p : g.pkps)
    query(c, "INSERT INTO group_pkps (group_row, pkp) VALUES (?, ?)").bind(row, p).run();
  for (const hash256& h : g.cid_hashes)
    query(c, "INSERT INTO group_cids (group_row, cid_hash) VALUES (?, ?)").bind(row, h).run();
}

// --- wallets and actions -----------------------------------------------------------------------

[[nodiscard]] inline wallet read_wallet(const query& q) {
  return {q.addr(0), q.hash(1), q.text(2), q.text(3), q.i64(4)};
}

[[nodiscard]] inline action read_action(const query& q) {
  return {q.text(1), q.hash(0), q.text(2), q.text(3), q.i64(4)};
}

[[nodiscard]] inline std::optional<action> load_action(connection& c, int64_t account_id, const hash256& hashed_cid) {
  query q(c,
          "SELECT hashed_cid, cid, name, description, created_at FROM actions "
          "WHERE account_id = ? AND hashed_cid = ?");
  q.bind(account_id, hashed_cid);
  if (!q.next())
    return std::nullopt;
  return read_action(q);
}

[[nodiscard]] inline error unknown_action(const account_hash& h, const hash256& cid) {
  return fail(ledger_errc::unknown_action, "hashed_cid " + hx(cid) + ": no such action in account " + hx(h));
}

}  // namespace embedded

// -----------------------------------------------------------------------------------------------
// The store: one writer, a pool of readers, and the transaction boundaries.

struct embedded_ledger::store {
  store(std::string p, std::vector<address> payers)
      : path(std::move(p)),
        api_payers(std::move(payers)),
        readers(path, embedded::kReadConnections, embedded::kBusyTimeoutMs) {}

  std::string path;
  std::vector<address> api_payers;
  std::mutex write_mu;
  std::unique_ptr<embedded::connection> writer;
  embedded::reader_pool readers;

  /// Runs `f(connection&)` (returning result<T>) as one write transaction: committed when it
  /// succeeds, rolled back when it fails or SQLite does. Inside batch() on this thread it is a
  /// savepoint of the batch's transaction instead, released or rolled back on its own.
  template <class F>
  auto write(F&& f) -> decltype(f(std::declval<embedded::connection&>())) {
    if (t_batch_store == this)
      return write_in_batch(std::forward<F>(f));
    std::lock_guard lock(write_mu);
    embedded::connection& c = *writer;
    try {
      embedded::query(c, "BEGIN IMMEDIATE").run();
      auto r = f(c);
      if (!r) {
        c.rollback();
        return r;
      }
      embedded::query(c, "COMMIT").run();
      return r;
    } catch (const std::exception& e) {
      c.rollback();
      return embedded::storage_error(e);
    }
  }

  template <class F>
  auto write_in_batch(F&& f) -> decltype(f(std::declval<embedded::connection&>())) {
    embedded::connection& c = *writer;
    try {
      embedded::query(c, "SAVEPOINT batch_write").run();
      auto r = f(c);
      if (!r)
        embedded::query(c, "ROLLBACK TO batch_write").run();
      embedded::query(c, "RELEASE batch_write").run();
      return r;
    } catch (const std::exception& e) {
      batch_failed = true;  // the savepoint's state is unknown: the batch rolls back
      return embedded::storage_error(e);
    }
  }

  /// The store whose batch() runs on this thread (its writes are savepoints, the lock is held).
  static thread_local const store* t_batch_store;
  bool batch_failed = false;  // guarded by write_mu

  /// Runs `f(connection&)` on a read embedded::connection; inside one read transaction (a consistent
  /// snapshot) when it reads more than one statement.
  template <class F>
  auto read(F&& f, bool snapshot = true) -> decltype(f(std::declval<embedded::connection&>())) {
    try {
      embedded::reader_pool::lease lease = readers.acquire();
      embedded::connection& c = *lease;
      try {
        if (snapshot)
          embedded::query(c, "BEGIN").run();
        auto r = f(c);
        if (snapshot)
          embedded::query(c, "COMMIT").run();
        return r;
      } catch (...) {
        c.rollback();
        throw;
      }
    } catch (const std::exception& e) {
      return embedded::storage_error(e);
    }
  }

  /// The account `h` (unknown_account when there is none) once `sender` passed check_sender for it:
  /// the start of every write to an account.
  [[nodiscard]] result<embedded::account_row> writable_account(embedded::connection& c, const address& sender,
                                                               const account_hash& h) const {
    ENACT_TRY(embedded::account_row a, embedded::require_account(c, h));
    ENACT_TRY_VOID(check_sender(sender, a.acct.admin, a.acct.managed, h));
    return a;
  }

  /// The sender rule of docs/protocol.md §3: the admin, or an api_payer relaying for a managed account.
  [[nodiscard]] result<void> check_sender(const address& sender, const address& admin, bool managed,
                                          const account_hash& h) const {
    if (sender == admin)
      return {};
    if (std::find(api_payers.begin(), api_payers.end(), sender) != api_payers.end()) {
      if (managed)
        return {};
      return fail(
          ledger_errc::relay_not_allowed,
          "sender " + embedded::hx(sender) + ": api_payer relay refused for unmanaged account " + embedded::hx(h));
    }
    return fail(ledger_errc::not_admin,
                "sender " + embedded::hx(sender) + ": not the admin of account " + embedded::hx(h));
  }

  [[nodiscard]] bool is_api_payer(const address& a) const {
    return std::find(api_payers.begin(), api_payers.end(), a) != api_payers.end();
  }
};

namespace embedded {

/// A write on an existing account, past the sender rule: appends the event.
struct account_write {
  connection& c;
  const write_context& w;
  account_row& a;

  /// Appends the write's registry event; its row keeps the event's name and JSON arguments
  /// (reg::to_json), read back into the typed value by events_after. (The column charged_credits,
  /// which older versions filled with a write's surcharge, keeps its default of 0.)
  void emit(const reg::any_event& e) {
    query(c, "INSERT INTO events (name, account, sender, data, created_at) VALUES (?, ?, ?, ?, ?)")
        .bind(reg::event_name(e), a.acct.hash, w.sender, boost::json::serialize(reg::to_json(e)), now_seconds())
        .run();
  }
};

}  // namespace embedded
}  // namespace enact::ledger
