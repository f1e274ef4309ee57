// SPDX-License-Identifier: Apache-2.0
// The evm ledger's permission_ledger methods (evm_ledger.hpp), in the interface's order: each a
// view or a write of the registry through the ledger's state (evm_state.hpp).
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "enact/chain/registry.hpp"
#include "ledger/evm_ledger.hpp"
#include "ledger/evm_state.hpp"
#include "ledger/evm_support.hpp"

namespace enact::ledger {

using namespace evm;  // NOLINT(google-build-using-namespace): the ledger's helpers

namespace {
/// `v`, its `code` error (the registry's revert, which names no argument) worded as `message`.
template <class T>
result<T> worded(result<T> v, ledger_errc code, std::string message) {
  if (!v && v.code() == code)
    return fail(code, std::move(message));
  return v;
}
}  // namespace

// =============================================================================================
// accounts

result<void> evm_ledger::new_account(const write_context& w, const account& a) {
  ENACT_TRY_VOID(
      state_->write(w, reg::encode(reg::new_account_call{a.hash, a.admin, a.managed, a.name, a.description, a.email})));
  return {};
}

result<account> evm_ledger::get_account(const account_hash& h) const {
  ENACT_TRY(const reg::account_view v, state_->view(reg::get_account_call{h}, h));
  return to_account(v);
}

result<account> evm_ledger::account_by_admin(const address& admin) const {
  ENACT_TRY(const auto v, worded(state_->view(reg::account_by_admin_call{admin}, std::nullopt),
                                 ledger_errc::unknown_account, "admin " + hx(admin) + ": administers no account"));
  return to_account(v);
}

result<void> evm_ledger::convert_to_chain_secured(const write_context& w, const account_hash& h,
                                                  const address& new_admin) {
  ENACT_TRY_VOID(state_->write(w, reg::encode(reg::convert_to_chain_secured_call{h, new_admin})));
  return {};
}

// =============================================================================================
// usage keys

result<void> evm_ledger::set_usage_key(const write_context& w, const usage_key& k) {
  reg::set_usage_api_key_with_wallet_call c;
  c.account_hash = k.account;
  c.usage_key_hash = k.hash;
  c.expiration = u256{k.expiration};
  c.balance = u256{k.balance};
  c.name = k.name;
  c.description = k.description;
  c.permissions = k.permissions;
  c.wallet = k.wallet;
  ENACT_TRY_VOID(state_->write(w, reg::encode(c)));
  return {};
}

result<void> evm_ledger::update_usage_key_metadata(const write_context& w, const account_hash& account,
                                                   const hash256& key_hash, std::string_view name,
                                                   std::string_view description) {
  ENACT_TRY_VOID(state_->write(w, reg::encode(reg::update_usage_api_key_metadata_call{
                                      account, key_hash, std::string(name), std::string(description)})));
  return {};
}

result<void> evm_ledger::remove_usage_key(const write_context& w, const account_hash& account,
                                          const hash256& key_hash) {
  ENACT_TRY_VOID(state_->write(w, reg::encode(reg::remove_usage_api_key_call{account, key_hash})));
  return {};
}

result<usage_key> evm_ledger::find_usage_key(const hash256& key_hash) const {
  ENACT_TRY(const auto v, worded(state_->view(reg::get_usage_api_key_call{key_hash}, std::nullopt),
                                 ledger_errc::unknown_usage_key, "usage key " + hx(key_hash) + ": no such key"));
  return to_usage_key(v);
}

result<page<usage_key>> evm_ledger::list_usage_keys(const account_hash& account, page_request p) const {
  ENACT_TRY(const auto args, page_args(p));
  ENACT_TRY(const auto v, state_->view(reg::list_usage_api_keys_call{account, args.first, args.second}, account));
  return to_page<usage_key>(v, to_usage_key);
}

// =============================================================================================
// groups

result<group> evm_ledger::add_group(const write_context& w, const account_hash& account, const group& g) {
  ENACT_TRY(const chain::receipt r,
            state_->write(w, reg::encode(reg::add_group_call{account, g.name, g.description, g.pkps, g.cid_hashes})));
  ENACT_TRY(const reg::group_added_event e, state_->receipt_event<reg::group_added_event>(r));
  group out = g;
  out.id = e.group_id;
  return out;
}

result<group> evm_ledger::update_group(const write_context& w, const account_hash& account, const group& g) {
  ENACT_TRY_VOID(state_->write(
      w, reg::encode(reg::update_group_call{account, g.id, g.name, g.description, g.pkps, g.cid_hashes})));
  return g;
}

result<void> evm_ledger::remove_group(const write_context& w, const account_hash& account, group_id id) {
  ENACT_TRY_VOID(state_->write(w, reg::encode(reg::remove_group_call{account, id})));
  return {};
}

result<group> evm_ledger::get_group(const account_hash& account, group_id id) const {
  ENACT_TRY(const reg::group_view v, state_->view(reg::get_group_call{account, id}, account));
  return to_group(v);
}

result<page<group>> evm_ledger::list_groups(const account_hash& account, page_request p) const {
  ENACT_TRY(const auto args, page_args(p));
  ENACT_TRY(const auto v, state_->view(reg::list_groups_call{account, args.first, args.second}, account));
  return to_page<group>(v, to_group);
}

result<std::vector<group>> evm_ledger::all_groups(const account_hash& account) const {
  ENACT_TRY(const auto v, state_->view(reg::list_groups_call{account, u256{0}, u256::max()}, account));
  std::vector<group> out;
  out.reserve(v.items.size());
  for (const auto& g : v.items)
    out.push_back(to_group(g));
  return out;
}

namespace {
/// Sends `call` (a change to the members of group `id`) and answers the group as the block of
/// its receipt left it (the write's own answer, past the cache).
template <class Call>
result<group> write_group_members(evm_ledger::state& s, const write_context& w, const account_hash& account,
                                  group_id id, const Call& call) {
  ENACT_TRY(const chain::receipt r, s.write(w, reg::encode(call)));
  ENACT_TRY(const reg::group_view v,
            s.view(reg::get_group_call{account, id}, account, chain::block_tag::number(r.block_number)));
  return to_group(v);
}
}  // namespace

result<group> evm_ledger::add_pkp_to_group(const write_context& w, const account_hash& account, group_id id,
                                           const address& pkp) {
  return write_group_members(*state_, w, account, id, reg::add_pkp_to_group_call{account, id, pkp});
}

result<group> evm_ledger::remove_pkp_from_group(const write_context& w, const account_hash& account, group_id id,
                                                const address& pkp) {
  return write_group_members(*state_, w, account, id, reg::remove_pkp_from_group_call{account, id, pkp});
}

result<group> evm_ledger::add_action_to_group(const write_context& w, const account_hash& account, group_id id,
                                              const hash256& hashed_cid) {
  return write_group_members(*state_, w, account, id, reg::add_action_to_group_call{account, id, hashed_cid});
}

result<group> evm_ledger::remove_action_from_group(const write_context& w, const account_hash& account, group_id id,
                                                   const hash256& hashed_cid) {
  return write_group_members(*state_, w, account, id, reg::remove_action_from_group_call{account, id, hashed_cid});
}

// =============================================================================================
// PKP registry

result<void> evm_ledger::register_wallet(const write_context& w, const account_hash& account, const wallet& wl) {
  ENACT_TRY_VOID(state_->write(w, reg::encode(reg::register_wallet_derivation_call{
                                      account, wl.pkp_id, wl.derivation_path, wl.name, wl.description})));
  return {};
}

result<wallet> evm_ledger::get_wallet(const account_hash& account, const address& pkp_id) const {
  ENACT_TRY(const reg::wallet_view v, state_->view(reg::get_wallet_call{account, pkp_id}, account));
  return to_wallet(v);
}

result<page<wallet>> evm_ledger::list_wallets(const account_hash& account, page_request p) const {
  ENACT_TRY(const auto args, page_args(p));
  ENACT_TRY(const auto v, state_->view(reg::list_wallets_call{account, args.first, args.second}, account));
  return to_page<wallet>(v, to_wallet);
}

result<page<wallet>> evm_ledger::list_wallets_in_group(const account_hash& account, group_id id, page_request p) const {
  ENACT_TRY(const auto args, page_args(p));
  ENACT_TRY(const auto v, state_->view(reg::list_wallets_in_group_call{account, id, args.first, args.second}, account));
  return to_page<wallet>(v, to_wallet);
}

result<uint64_t> evm_ledger::wallet_count(const account_hash& account) const {
  ENACT_TRY(const reg::account_view v, state_->view(reg::get_account_call{account}, account));
  return clamp64(v.wallet_count);
}

// =============================================================================================
// actions

result<void> evm_ledger::add_action(const write_context& w, const account_hash& account, const action& a) {
  ENACT_TRY_VOID(
      state_->write(w, reg::encode(reg::add_action_call{account, a.hashed_cid, a.cid, a.name, a.description})));
  return {};
}

result<action> evm_ledger::update_action_metadata(const write_context& w, const account_hash& account,
                                                  const hash256& hashed_cid, std::string_view name,
                                                  std::string_view description) {
  ENACT_TRY(const chain::receipt r,
            state_->write(w, reg::encode(reg::update_action_metadata_call{account, hashed_cid, std::string(name),
                                                                          std::string(description)})));
  ENACT_TRY(const reg::action_view v,
            state_->view(reg::get_action_call{account, hashed_cid}, account, chain::block_tag::number(r.block_number)));
  return to_action(v);
}

result<void> evm_ledger::delete_action(const write_context& w, const account_hash& account, const hash256& hashed_cid) {
  ENACT_TRY_VOID(state_->write(w, reg::encode(reg::delete_action_call{account, hashed_cid})));
  return {};
}

result<action> evm_ledger::get_action(const account_hash& account, const hash256& hashed_cid) const {
  ENACT_TRY(const reg::action_view v, state_->view(reg::get_action_call{account, hashed_cid}, account));
  return to_action(v);
}

result<page<action>> evm_ledger::list_actions(const account_hash& account, std::optional<group_id> group,
                                              page_request p) const {
  ENACT_TRY(const auto args, page_args(p));
  if (!group) {
    ENACT_TRY(const auto v, state_->view(reg::list_actions_call{account, args.first, args.second}, account));
    return to_page<action>(v, to_action);
  }
  ENACT_TRY(const auto v,
            state_->view(reg::list_actions_in_group_call{account, *group, args.first, args.second}, account));
  return to_page<action>(v, to_action);
}

// =============================================================================================
// events

result<std::vector<event>> evm_ledger::events_after(uint64_t after, size_t limit) const {
  if (limit == 0)
    return std::vector<event>{};
  std::lock_guard lock(state_->index_mu);
  ENACT_TRY_VOID(state_->sync_locked());
  const std::vector<event>& all = state_->events;
  std::vector<event> out;
  if (after >= all.size())
    return out;
  const size_t n = std::min<size_t>(limit, all.size() - after);
  out.assign(all.begin() + static_cast<ptrdiff_t>(after), all.begin() + static_cast<ptrdiff_t>(after + n));
  return out;
}

}  // namespace enact::ledger
