// SPDX-License-Identifier: Apache-2.0
// The embedded ledger's accounts and usage keys (embedded_ledger.hpp).
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
// accounts

result<void> embedded_ledger::new_account(const write_context& w, const account& a) {
  return store_->write([&](connection& c) -> result<void> {
    ENACT_TRY_VOID(store_->check_sender(w.sender, a.admin, a.managed, a.hash));
    // docs/protocol.md §3 identity rules: a wallet (past check_sender, it is the admin) creates only its
    // own ChainSecured account under the hash every client derives from its address, so no one
    // squats another wallet's account or creates one under a hash of its choosing (a victim's
    // usage-key hash, say).
    if (!store_->is_api_payer(w.sender)) {
      if (a.managed)
        return fail(ledger_errc::managed_not_allowed,
                    "sender " + hx(w.sender) +
                        ": a wallet creates only an unmanaged (ChainSecured) account; API-mode "
                        "accounts are created by the server");
      if (a.hash != crypto::keccak256(bytes_view(a.admin)))
        return fail(ledger_errc::hash_not_canonical,
                    "account " + hx(a.hash) + ": a wallet's account hash must be " +
                        "keccak256(abi.encodePacked(admin)) = " + hx(crypto::keccak256(bytes_view(a.admin))));
    }
    if (is_zero(a.admin))
      return fail(ledger_errc::invalid_argument, "admin: must not be the zero address");
    ENACT_TRY_VOID(check_metadata(a.name, a.description));
    ENACT_TRY_VOID(check_length("email", a.email, kMaxEmail));
    if (load_account(c, a.hash))
      return fail(ledger_errc::duplicate, "account " + hx(a.hash) + ": exists already");
    // One namespace: an account under a usage key's hash would take that key over.
    {
      query q(c, "SELECT 1 FROM usage_keys WHERE hash = ?");
      q.bind(a.hash);
      if (q.next())
        return fail(ledger_errc::hash_is_usage_key, "account " + hx(a.hash) + ": the hash is a usage key's");
    }
    if (std::optional<account_row> other = load_account_by_admin(c, a.admin))
      return fail(ledger_errc::duplicate,
                  "admin " + hx(a.admin) + ": administers account " + hx(other->acct.hash) + " already");
    const int64_t now = now_seconds();
    query(c,
          "INSERT INTO accounts (hash, admin, managed, name, description, email, created_at) "
          "VALUES (?, ?, ?, ?, ?, ?, ?)")
        .bind(a.hash, a.admin, a.managed, a.name, a.description, a.email, now)
        .run();
    account_row row;
    row.acct = a;
    account_write tx{c, w, row};
    tx.emit(reg::account_created_event{a.hash, a.admin, a.managed, a.name, a.description});
    return {};
  });
}

result<account> embedded_ledger::get_account(const account_hash& h) const {
  return store_->read(
      [&](connection& c) -> result<account> {
        ENACT_TRY(account_row r, require_account(c, h));
        return std::move(r.acct);
      },
      false);
}

result<account> embedded_ledger::account_by_admin(const address& admin) const {
  return store_->read(
      [&](connection& c) -> result<account> {
        std::optional<account_row> r = load_account_by_admin(c, admin);
        if (!r)
          return fail(ledger_errc::unknown_account, "admin " + hx(admin) + ": administers no account");
        return std::move(r->acct);
      },
      false);
}

result<void> embedded_ledger::convert_to_chain_secured(const write_context& w, const account_hash& h,
                                                       const address& new_admin) {
  return store_->write([&](connection& c) -> result<void> {
    ENACT_TRY(account_row a, store_->writable_account(c, w.sender, h));
    if (is_zero(new_admin))
      return fail(ledger_errc::invalid_argument, "new_admin: must not be the zero address");
    if (!a.acct.managed)
      return fail(ledger_errc::already_unmanaged, "account " + hx(h) + ": converted to ChainSecured already");
    // Consent of the new admin: a wallet converts its account only to itself; handing it to
    // another wallet (which then could not create its own account, and whose mints and billing
    // would land here) needs that wallet's signature, which only the api_payer's relay carries.
    if (new_admin != w.sender && !store_->is_api_payer(w.sender))
      return fail(ledger_errc::new_admin_not_sender,
                  "account " + hx(h) + ": new_admin " + hx(new_admin) +
                      " is not the sender; the admin converts only to its own address (another "
                      "wallet consents through the core service's ConvertAccount envelope)");
    if (new_admin != a.acct.admin)
      if (std::optional<account_row> other = load_account_by_admin(c, new_admin))
        return fail(ledger_errc::duplicate,
                    "new_admin " + hx(new_admin) + ": administers account " + hx(other->acct.hash) + " already");
    account_write tx{c, w, a};
    query(c, "UPDATE accounts SET admin = ?, managed = 0 WHERE id = ?").bind(new_admin, a.id).run();
    tx.emit(reg::account_converted_event{h, a.acct.admin, new_admin});
    return {};
  });
}

// -----------------------------------------------------------------------------------------------
// usage keys

result<void> embedded_ledger::set_usage_key(const write_context& w, const usage_key& k) {
  return store_->write([&](connection& c) -> result<void> {
    ENACT_TRY(account_row a, store_->writable_account(c, w.sender, k.account));
    ENACT_TRY_VOID(check_metadata(k.name, k.description));
    // One namespace (docs/protocol.md §3): a key under an account's hash, or under another account's key
    // hash, would make that credential authenticate here.
    if (load_account(c, k.hash))
      return fail(ledger_errc::hash_is_account, "usage key " + hx(k.hash) + ": the hash is an account's");
    account_write tx{c, w, a};
    std::optional<int64_t> existing;
    {
      query q(c, "SELECT id, account_id FROM usage_keys WHERE hash = ?");
      q.bind(k.hash);
      if (q.next()) {
        if (q.i64(1) != a.id)
          return fail(ledger_errc::usage_key_of_another_account,
                      "usage key " + hx(k.hash) + ": another account holds a key with this hash");
        existing = q.i64(0);
      }
    }
    const std::string perms = permissions_text(k.permissions);
    if (existing) {
      query(c,
            "UPDATE usage_keys SET wallet = ?, name = ?, description = ?, expiration = ?, "
            "balance = ?, permissions = ? WHERE id = ?")
          .bind(k.wallet, k.name, k.description, k.expiration, k.balance, perms, *existing)
          .run();
    } else {
      query(c,
            "INSERT INTO usage_keys (hash, account_id, wallet, name, description, expiration, "
            "balance, permissions, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)")
          .bind(k.hash, a.id, k.wallet, k.name, k.description, k.expiration, k.balance, perms, now_seconds())
          .run();
    }
    tx.emit(reg::usage_api_key_set_event{k.account, k.hash, k.wallet, u256{k.expiration}, u256{k.balance}, k.name,
                                         k.description, k.permissions});
    return {};
  });
}

result<void> embedded_ledger::update_usage_key_metadata(const write_context& w, const account_hash& account,
                                                        const hash256& key_hash, std::string_view name,
                                                        std::string_view description) {
  return store_->write([&](connection& c) -> result<void> {
    ENACT_TRY(account_row a, store_->writable_account(c, w.sender, account));
    ENACT_TRY_VOID(check_metadata(name, description));
    account_write tx{c, w, a};
    if (!usage_key_in(c, a.id, key_hash))
      return unknown_usage_key(account, key_hash);
    query(c, "UPDATE usage_keys SET name = ?, description = ? WHERE account_id = ? AND hash = ?")
        .bind(name, description, a.id, key_hash)
        .run();
    tx.emit(reg::usage_api_key_metadata_updated_event{account, key_hash, std::string(name), std::string(description)});
    return {};
  });
}

result<void> embedded_ledger::remove_usage_key(const write_context& w, const account_hash& account,
                                               const hash256& key_hash) {
  return store_->write([&](connection& c) -> result<void> {
    ENACT_TRY(account_row a, store_->writable_account(c, w.sender, account));
    account_write tx{c, w, a};
    if (!usage_key_in(c, a.id, key_hash))
      return unknown_usage_key(account, key_hash);
    query(c, "DELETE FROM usage_keys WHERE account_id = ? AND hash = ?").bind(a.id, key_hash).run();
    tx.emit(reg::usage_api_key_removed_event{account, key_hash});
    return {};
  });
}

result<usage_key> embedded_ledger::find_usage_key(const hash256& key_hash) const {
  return store_->read(
      [&](connection& c) -> result<usage_key> {
        query q(c, ENACT_USAGE_KEY_SELECT "WHERE k.hash = ?");
        q.bind(key_hash);
        if (!q.next())
          return fail(ledger_errc::unknown_usage_key, "usage key " + hx(key_hash) + ": no such key");
        return read_usage_key(q);
      },
      false);
}

result<page<usage_key>> embedded_ledger::list_usage_keys(const account_hash& account, page_request p) const {
  ENACT_TRY(const auto bounds, page_bounds(p));
  return store_->read([&](connection& c) -> result<page<usage_key>> {
    ENACT_TRY(account_row a, require_account(c, account));
    page<usage_key> out;
    out.total = count(c, "SELECT COUNT(*) FROM usage_keys WHERE account_id = ?", a.id);
    query q(c, ENACT_USAGE_KEY_SELECT "WHERE k.account_id = ? ORDER BY k.id LIMIT ? OFFSET ?");
    q.bind(a.id, bounds.first, bounds.second);
    while (q.next())
      out.items.push_back(read_usage_key(q));
    return out;
  });
}
#undef ENACT_USAGE_KEY_SELECT

}  // namespace enact::ledger
