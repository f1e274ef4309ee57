// SPDX-License-Identifier: Apache-2.0
// The embedded ledger's PKP registry (wallets) and actions (embedded_ledger.hpp).
#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "enact/crypto/keccak.hpp"
#include "ledger/embedded_store.hpp"

namespace enact::ledger {

using namespace embedded;  // NOLINT(google-build-using-namespace): the store's helpers

// -----------------------------------------------------------------------------------------------
// PKP registry

result<void> embedded_ledger::register_wallet(const write_context& w, const account_hash& account, const wallet& wl) {
  return store_->write([&](connection& c) -> result<void> {
    ENACT_TRY(account_row a, store_->writable_account(c, w.sender, account));
    if (is_zero(wl.pkp_id))
      return fail(ledger_errc::invalid_argument, "pkp_id: must not be the zero address");
    ENACT_TRY_VOID(check_metadata(wl.name, wl.description));
    account_write tx{c, w, a};
    if (wallet_registered(c, a.id, wl.pkp_id))
      return fail(ledger_errc::duplicate,
                  "pkp_id " + hx(wl.pkp_id) + ": registered in account " + hx(account) + " already");
    query(c,
          "INSERT INTO wallets (account_id, pkp_id, derivation_path, name, description, "
          "created_at) VALUES (?, ?, ?, ?, ?, ?)")
        .bind(a.id, wl.pkp_id, wl.derivation_path, wl.name, wl.description, now_seconds())
        .run();
    query(c, "UPDATE accounts SET wallets_registered = wallets_registered + 1 WHERE id = ?").bind(a.id).run();
    tx.emit(reg::wallet_derivation_registered_event{account, wl.pkp_id, wl.derivation_path, wl.name, wl.description});
    return {};
  });
}

#define ENACT_WALLET_COLUMNS "w.pkp_id, w.derivation_path, w.name, w.description, w.created_at "

result<wallet> embedded_ledger::get_wallet(const account_hash& account, const address& pkp_id) const {
  return store_->read([&](connection& c) -> result<wallet> {
    ENACT_TRY(account_row a, require_account(c, account));
    query q(c, "SELECT " ENACT_WALLET_COLUMNS "FROM wallets w WHERE w.account_id = ? AND w.pkp_id = ?");
    q.bind(a.id, pkp_id);
    if (!q.next())
      return fail(ledger_errc::unknown_wallet, "pkp_id " + hx(pkp_id) + ": not registered in account " + hx(account));
    return read_wallet(q);
  });
}

result<page<wallet>> embedded_ledger::list_wallets(const account_hash& account, page_request p) const {
  ENACT_TRY(const auto bounds, page_bounds(p));
  return store_->read([&](connection& c) -> result<page<wallet>> {
    ENACT_TRY(account_row a, require_account(c, account));
    page<wallet> out;
    out.total = count(c, "SELECT COUNT(*) FROM wallets WHERE account_id = ?", a.id);
    query q(c, "SELECT " ENACT_WALLET_COLUMNS "FROM wallets w WHERE w.account_id = ? ORDER BY w.id LIMIT ? OFFSET ?");
    q.bind(a.id, bounds.first, bounds.second);
    while (q.next())
      out.items.push_back(read_wallet(q));
    return out;
  });
}

result<page<wallet>> embedded_ledger::list_wallets_in_group(const account_hash& account, group_id id,
                                                            page_request p) const {
  ENACT_TRY(const auto bounds, page_bounds(p));
  return store_->read([&](connection& c) -> result<page<wallet>> {
    ENACT_TRY(account_row a, require_account(c, account));
    const std::optional<int64_t> row = id == 0 || id > kMaxGroupId ? std::nullopt : find_group_row(c, a.id, id);
    if (!row)
      return unknown_group(account, id);
    page<wallet> out;
    out.total = count(c, "SELECT COUNT(*) FROM group_pkps WHERE group_row = ?", *row);
    query q(c, "SELECT " ENACT_WALLET_COLUMNS
               "FROM group_pkps m JOIN wallets w ON w.account_id = ? AND w.pkp_id = m.pkp "
               "WHERE m.group_row = ? ORDER BY m.id LIMIT ? OFFSET ?");
    q.bind(a.id, *row, bounds.first, bounds.second);
    while (q.next())
      out.items.push_back(read_wallet(q));
    return out;
  });
}
#undef ENACT_WALLET_COLUMNS

result<uint64_t> embedded_ledger::wallet_count(const account_hash& account) const {
  return store_->read(
      [&](connection& c) -> result<uint64_t> {
        ENACT_TRY(account_row a, require_account(c, account));
        return a.wallets_registered;
      },
      false);
}

// -----------------------------------------------------------------------------------------------
// actions

result<void> embedded_ledger::add_action(const write_context& w, const account_hash& account, const action& act) {
  return store_->write([&](connection& c) -> result<void> {
    ENACT_TRY(account_row a, store_->writable_account(c, w.sender, account));
    if (act.cid.empty())
      return fail(ledger_errc::invalid_argument, "cid: must not be empty");
    ENACT_TRY_VOID(check_length("cid", act.cid, kMaxCid));
    if (crypto::keccak256(std::string_view(act.cid)) != act.hashed_cid)
      return fail(ledger_errc::invalid_argument, "hashed_cid: " + hx(act.hashed_cid) + " is not keccak256 of the CID");
    ENACT_TRY_VOID(check_metadata(act.name, act.description));
    account_write tx{c, w, a};
    if (load_action(c, a.id, act.hashed_cid))
      return fail(ledger_errc::duplicate,
                  "hashed_cid " + hx(act.hashed_cid) + ": registered in account " + hx(account) + " already");
    query(c,
          "INSERT INTO actions (account_id, hashed_cid, cid, name, description, created_at) "
          "VALUES (?, ?, ?, ?, ?, ?)")
        .bind(a.id, act.hashed_cid, act.cid, act.name, act.description, now_seconds())
        .run();
    tx.emit(reg::action_added_event{account, act.hashed_cid, act.cid, act.name, act.description});
    return {};
  });
}

result<action> embedded_ledger::update_action_metadata(const write_context& w, const account_hash& account,
                                                       const hash256& hashed_cid, std::string_view name,
                                                       std::string_view description) {
  return store_->write([&](connection& c) -> result<action> {
    ENACT_TRY(account_row a, store_->writable_account(c, w.sender, account));
    ENACT_TRY_VOID(check_metadata(name, description));
    account_write tx{c, w, a};
    std::optional<action> act = load_action(c, a.id, hashed_cid);
    if (!act)
      return unknown_action(account, hashed_cid);
    query(c, "UPDATE actions SET name = ?, description = ? WHERE account_id = ? AND hashed_cid = ?")
        .bind(name, description, a.id, hashed_cid)
        .run();
    act->name = std::string(name);
    act->description = std::string(description);
    tx.emit(reg::action_metadata_updated_event{account, hashed_cid, std::string(name), std::string(description)});
    return std::move(*act);
  });
}

result<void> embedded_ledger::delete_action(const write_context& w, const account_hash& account,
                                            const hash256& hashed_cid) {
  return store_->write([&](connection& c) -> result<void> {
    ENACT_TRY(account_row a, store_->writable_account(c, w.sender, account));
    account_write tx{c, w, a};
    if (!load_action(c, a.id, hashed_cid))
      return unknown_action(account, hashed_cid);
    query(c, "DELETE FROM actions WHERE account_id = ? AND hashed_cid = ?").bind(a.id, hashed_cid).run();
    query(c,
          "DELETE FROM group_cids WHERE cid_hash = ? AND group_row IN "
          "(SELECT id FROM groups WHERE account_id = ?)")
        .bind(hashed_cid, a.id)
        .run();
    tx.emit(reg::action_deleted_event{account, hashed_cid});
    return {};
  });
}

result<action> embedded_ledger::get_action(const account_hash& account, const hash256& hashed_cid) const {
  return store_->read([&](connection& c) -> result<action> {
    ENACT_TRY(account_row a, require_account(c, account));
    std::optional<action> act = load_action(c, a.id, hashed_cid);
    if (!act)
      return unknown_action(account, hashed_cid);
    return std::move(*act);
  });
}

result<page<action>> embedded_ledger::list_actions(const account_hash& account, std::optional<group_id> group,
                                                   page_request p) const {
  ENACT_TRY(const auto bounds, page_bounds(p));
  return store_->read([&](connection& c) -> result<page<action>> {
    ENACT_TRY(account_row a, require_account(c, account));
    page<action> out;
    if (!group) {
      out.total = count(c, "SELECT COUNT(*) FROM actions WHERE account_id = ?", a.id);
      query q(c,
              "SELECT hashed_cid, cid, name, description, created_at FROM actions "
              "WHERE account_id = ? ORDER BY id LIMIT ? OFFSET ?");
      q.bind(a.id, bounds.first, bounds.second);
      while (q.next())
        out.items.push_back(read_action(q));
      return out;
    }
    const std::optional<int64_t> row =
        *group == 0 || *group > kMaxGroupId ? std::nullopt : find_group_row(c, a.id, *group);
    if (!row)
      return unknown_group(account, *group);
    out.total = count(c, "SELECT COUNT(*) FROM group_cids WHERE group_row = ?", *row);
    // A group may list CIDs that are not registered actions: those come with empty metadata.
    query q(c,
            "SELECT m.cid_hash, a.cid, a.name, a.description, a.created_at FROM group_cids m "
            "LEFT JOIN actions a ON a.account_id = ? AND a.hashed_cid = m.cid_hash "
            "WHERE m.group_row = ? ORDER BY m.id LIMIT ? OFFSET ?");
    q.bind(a.id, *row, bounds.first, bounds.second);
    while (q.next())
      out.items.push_back(read_action(q));
    return out;
  });
}

}  // namespace enact::ledger
