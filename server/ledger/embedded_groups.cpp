// SPDX-License-Identifier: Apache-2.0
// The embedded ledger's groups (embedded_ledger.hpp).
#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ledger/embedded_store.hpp"

namespace enact::ledger {

using namespace embedded;  // NOLINT(google-build-using-namespace): the store's helpers

// -----------------------------------------------------------------------------------------------
// groups

result<group> embedded_ledger::add_group(const write_context& w, const account_hash& account, const group& g) {
  return store_->write([&](connection& c) -> result<group> {
    ENACT_TRY(account_row a, store_->writable_account(c, w.sender, account));
    ENACT_TRY_VOID(check_metadata(g.name, g.description));
    account_write tx{c, w, a};
    ENACT_TRY_VOID(check_group_sets(c, a, g));
    group out = g;
    out.id = a.next_group_id;
    query(c,
          "INSERT INTO groups (account_id, group_id, name, description, created_at) "
          "VALUES (?, ?, ?, ?, ?)")
        .bind(a.id, out.id, g.name, g.description, now_seconds())
        .run();
    const int64_t row = c.last_insert_rowid();
    insert_group_members(c, row, g);
    query(c,
          "UPDATE accounts SET next_group_id = next_group_id + 1, group_count = group_count + 1 "
          "WHERE id = ?")
        .bind(a.id)
        .run();
    tx.emit(reg::group_added_event{account, out.id, out.name, out.description, out.pkps, out.cid_hashes});
    return out;
  });
}

result<group> embedded_ledger::update_group(const write_context& w, const account_hash& account, const group& g) {
  return store_->write([&](connection& c) -> result<group> {
    ENACT_TRY(account_row a, store_->writable_account(c, w.sender, account));
    ENACT_TRY_VOID(check_metadata(g.name, g.description));
    account_write tx{c, w, a};
    const std::optional<int64_t> row = g.id == 0 || g.id > kMaxGroupId ? std::nullopt : find_group_row(c, a.id, g.id);
    if (!row)
      return unknown_group(account, g.id);
    ENACT_TRY_VOID(check_group_sets(c, a, g));
    query(c, "UPDATE groups SET name = ?, description = ? WHERE id = ?").bind(g.name, g.description, *row).run();
    query(c, "DELETE FROM group_pkps WHERE group_row = ?").bind(*row).run();
    query(c, "DELETE FROM group_cids WHERE group_row = ?").bind(*row).run();
    insert_group_members(c, *row, g);
    tx.emit(reg::group_updated_event{account, g.id, g.name, g.description, g.pkps, g.cid_hashes});
    return g;
  });
}

result<void> embedded_ledger::remove_group(const write_context& w, const account_hash& account, group_id id) {
  return store_->write([&](connection& c) -> result<void> {
    ENACT_TRY(account_row a, store_->writable_account(c, w.sender, account));
    account_write tx{c, w, a};
    const std::optional<int64_t> row = id == 0 || id > kMaxGroupId ? std::nullopt : find_group_row(c, a.id, id);
    if (!row)
      return unknown_group(account, id);
    // group_pkps and group_cids follow by ON DELETE CASCADE.
    query(c, "DELETE FROM groups WHERE id = ?").bind(*row).run();
    query(c, "UPDATE accounts SET group_count = group_count - 1 WHERE id = ?").bind(a.id).run();
    tx.emit(reg::group_removed_event{account, id});
    return {};
  });
}

result<group> embedded_ledger::get_group(const account_hash& account, group_id id) const {
  return store_->read([&](connection& c) -> result<group> {
    ENACT_TRY(account_row a, require_account(c, account));
    std::optional<group> g = load_group(c, a.id, id);
    if (!g)
      return unknown_group(account, id);
    return std::move(*g);
  });
}

result<page<group>> embedded_ledger::list_groups(const account_hash& account, page_request p) const {
  ENACT_TRY(const auto bounds, page_bounds(p));
  return store_->read([&](connection& c) -> result<page<group>> {
    ENACT_TRY(account_row a, require_account(c, account));
    page<group> out;
    out.total = a.group_count;
    out.items = load_groups(c, a.id, 1, kMaxGroupId, bounds.first, bounds.second);
    return out;
  });
}

result<std::vector<group>> embedded_ledger::all_groups(const account_hash& account) const {
  return store_->read([&](connection& c) -> result<std::vector<group>> {
    ENACT_TRY(account_row a, require_account(c, account));
    return load_groups(c, a.id, 1, kMaxGroupId, std::numeric_limits<int64_t>::max(), 0);
  });
}

result<std::vector<group>> embedded_ledger::groups_listing(const account_hash& account,
                                                           const hash256& hashed_cid) const {
  // By the group_cids_by_hash index (CROSS JOIN keeps it the outer loop): the groups listing the
  // CID, then their PKPs, one indexed lookup each; the account's other groups are never read.
  return store_->read([&](connection& c) -> result<std::vector<group>> {
    ENACT_TRY(account_row a, require_account(c, account));
    std::vector<std::pair<int64_t, group>> rows;
    {
      query q(c,
              "SELECT g.id, g.group_id, g.name, g.description FROM group_cids m CROSS JOIN groups "
              "g ON g.id = m.group_row WHERE m.cid_hash = ? AND g.account_id = ? ORDER BY "
              "g.group_id");
      q.bind(hashed_cid, a.id);
      while (q.next()) {
        group g;
        g.id = q.u64(1);
        g.name = q.text(2);
        g.description = q.text(3);
        g.cid_hashes = {hashed_cid};
        rows.emplace_back(q.i64(0), std::move(g));
      }
    }
    std::vector<group> out;
    out.reserve(rows.size());
    for (auto& [row, g] : rows) {
      query q(c, "SELECT pkp FROM group_pkps WHERE group_row = ? ORDER BY id");
      q.bind(row);
      while (q.next())
        g.pkps.push_back(q.addr(0));
      out.push_back(std::move(g));
    }
    return out;
  });
}

namespace {

/// A change of one group's members (PKPs or CID hashes): the account, the sender rule and the
/// group are checked as for every write, then `change(c, a, tx, g)` checks its own argument,
/// applies itself to the group's rows, to `g` and to the event log.
template <class Store, class F>
result<group> change_members(Store& s, const write_context& w, const account_hash& account, group_id id, F&& change) {
  return s.write([&](connection& c) -> result<group> {
    ENACT_TRY(account_row a, s.writable_account(c, w.sender, account));
    account_write tx{c, w, a};
    std::optional<group> g = load_group(c, a.id, id);
    if (!g)
      return unknown_group(account, id);
    ENACT_TRY_VOID(change(c, a, tx, *g));
    return std::move(*g);
  });
}

}  // namespace

result<group> embedded_ledger::add_pkp_to_group(const write_context& w, const account_hash& account, group_id id,
                                                const address& pkp) {
  return change_members(
      *store_, w, account, id, [&](connection& c, const account_row& a, account_write& tx, group& g) -> result<void> {
        if (!wallet_registered(c, a.id, pkp))
          return fail(ledger_errc::unknown_wallet, "pkp_id " + hx(pkp) + ": not registered in account " + hx(account));
        if (std::find(g.pkps.begin(), g.pkps.end(), pkp) != g.pkps.end())
          return fail(ledger_errc::duplicate, "pkp_id " + hx(pkp) + ": in group " + std::to_string(id) + " already");
        const std::optional<int64_t> row = find_group_row(c, a.id, id);
        query(c, "INSERT INTO group_pkps (group_row, pkp) VALUES (?, ?)").bind(*row, pkp).run();
        g.pkps.push_back(pkp);
        tx.emit(reg::pkp_added_to_group_event{account, id, pkp});
        return {};
      });
}

result<group> embedded_ledger::remove_pkp_from_group(const write_context& w, const account_hash& account, group_id id,
                                                     const address& pkp) {
  return change_members(
      *store_, w, account, id, [&](connection& c, const account_row& a, account_write& tx, group& g) -> result<void> {
        auto it = std::find(g.pkps.begin(), g.pkps.end(), pkp);
        if (it == g.pkps.end())
          return fail(ledger_errc::unknown_wallet, "pkp_id " + hx(pkp) + ": not in group " + std::to_string(id));
        const std::optional<int64_t> row = find_group_row(c, a.id, id);
        query(c, "DELETE FROM group_pkps WHERE group_row = ? AND pkp = ?").bind(*row, pkp).run();
        g.pkps.erase(it);
        tx.emit(reg::pkp_removed_from_group_event{account, id, pkp});
        return {};
      });
}

result<group> embedded_ledger::add_action_to_group(const write_context& w, const account_hash& account, group_id id,
                                                   const hash256& hashed_cid) {
  return change_members(
      *store_, w, account, id, [&](connection& c, const account_row& a, account_write& tx, group& g) -> result<void> {
        if (std::find(g.cid_hashes.begin(), g.cid_hashes.end(), hashed_cid) != g.cid_hashes.end())
          return fail(ledger_errc::duplicate,
                      "hashed_cid " + hx(hashed_cid) + ": in group " + std::to_string(id) + " already");
        const std::optional<int64_t> row = find_group_row(c, a.id, id);
        query(c, "INSERT INTO group_cids (group_row, cid_hash) VALUES (?, ?)").bind(*row, hashed_cid).run();
        g.cid_hashes.push_back(hashed_cid);
        tx.emit(reg::action_added_to_group_event{account, id, hashed_cid});
        return {};
      });
}

result<group> embedded_ledger::remove_action_from_group(const write_context& w, const account_hash& account,
                                                        group_id id, const hash256& hashed_cid) {
  return change_members(
      *store_, w, account, id, [&](connection& c, const account_row& a, account_write& tx, group& g) -> result<void> {
        auto it = std::find(g.cid_hashes.begin(), g.cid_hashes.end(), hashed_cid);
        if (it == g.cid_hashes.end())
          return fail(ledger_errc::unknown_action,
                      "hashed_cid " + hx(hashed_cid) + ": not in group " + std::to_string(id));
        const std::optional<int64_t> row = find_group_row(c, a.id, id);
        query(c, "DELETE FROM group_cids WHERE group_row = ? AND cid_hash = ?").bind(*row, hashed_cid).run();
        g.cid_hashes.erase(it);
        tx.emit(reg::action_removed_from_group_event{account, id, hashed_cid});
        return {};
      });
}

}  // namespace enact::ledger
