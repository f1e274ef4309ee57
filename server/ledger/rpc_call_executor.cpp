// SPDX-License-Identifier: Apache-2.0
// The call executor of the embedded ledger's JSON-RPC surface (rpc_call_executor.hpp): one
// overload of `call_runner` per registry call type, chosen by std::visit over the decoded call.
#include "ledger/rpc_call_executor.hpp"

#include <algorithm>
#include <iterator>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "enact/chain/registry.hpp"
#include "ledger/embedded_ledger.hpp"
#include "ledger/rpc_surface.hpp"

namespace enact::ledger::rpc {
namespace {

namespace reg = chain::registry;

outcome returned(bytes b) { return {false, std::move(b)}; }

template <reg::error_type E>
outcome reverted(const E& e) {
  return {true, reg::encode_revert(e)};
}

/// What a refused call was about, to fill the custom error's arguments.
struct refusal {
  hash256 account{};
  std::optional<u256> group{};
  std::optional<hash256> usage_key{};
  std::vector<address> wallets{};  // unknown_wallet: the first one the account lacks
  std::optional<hash256> hashed_cid{};
  std::string duplicate{};  // Duplicate(what)
  // The address the error names: newAccount's admin (AccountHashNotCanonical(apiKeyHash, admin)),
  // convertToChainSecured's new admin (NewAdminNotSender(accountHash, newAdmin)).
  address admin{};
};

std::string over_64_bits(std::string_view field) {
  return std::string(field) + ": above 2^64-1 is not supported by the embedded registry";
}

u256 unix_u256(int64_t t) { return u256{static_cast<uint64_t>(std::max<int64_t>(t, 0))}; }

reg::group_view group_view(const group& g) { return {g.id, g.name, g.description, g.pkps, g.cid_hashes}; }
reg::wallet_view wallet_view(const wallet& w) {
  return {w.pkp_id, w.derivation_path, w.name, w.description, unix_u256(w.created_at)};
}
reg::action_view action_view(const action& a) {
  return {a.hashed_cid, a.cid, a.name, a.description, unix_u256(a.created_at)};
}
reg::usage_key_view usage_key_view(const usage_key& k) {
  return {k.account, k.hash,        k.wallet,      u256{k.expiration},     u256{k.balance},
          k.name,    k.description, k.permissions, unix_u256(k.created_at)};
}

/// Runs one registry call with `sender` as msg.sender: one overload per call type. Writes go
/// straight to the ledger; the executor wraps them in a batch.
class call_runner {
 public:
  call_runner(embedded_ledger& ledger, const address& sender) : ledger_(ledger), sender_(sender), w_{sender} {}

  // --- registry administration ----------------------------------------------------------------

  result<outcome> operator()(const reg::owner_call&) const {
    const auto p = ledger_.api_payers();
    return returned(reg::encode_result<reg::owner_call>(p.empty() ? address{} : p.front()));
  }
  result<outcome> operator()(const reg::api_payers_call&) const {
    return returned(reg::encode_result<reg::api_payers_call>(ledger_.api_payers()));
  }
  result<outcome> operator()(const reg::is_api_payer_call& c) const {
    return returned(reg::encode_result<reg::is_api_payer_call>(is_api_payer(c.who)));
  }
  result<outcome> operator()(const reg::set_api_payer_call&) const { return reverted(reg::not_owner_error{sender_}); }
  result<outcome> operator()(const reg::multicall_call&) const {
    return reverted(
        reg::invalid_argument_error{"multicall: a nested multicall is not supported by the embedded registry"});
  }

  // --- accounts -------------------------------------------------------------------------------

  result<outcome> operator()(const reg::new_account_call& c) const {
    const account a{c.api_key_hash, c.admin, c.managed, c.name, c.description, c.email};
    auto r = ledger_.new_account(w_, a);
    refusal why{c.api_key_hash};
    why.admin = c.admin;
    if (!r && r.code() == ledger_errc::duplicate)
      why.duplicate = r.err().message.starts_with("admin") ? "admin" : "apiKeyHash";
    return written(r, why);
  }
  result<outcome> operator()(const reg::convert_to_chain_secured_call& c) const {
    refusal why{c.account_hash};
    why.duplicate = "newAdmin";
    why.admin = c.new_admin;
    return written(ledger_.convert_to_chain_secured(w_, c.account_hash, c.new_admin), why);
  }
  result<outcome> operator()(const reg::get_account_call& c) const {
    return account_view(ledger_.get_account(c.account_hash), refusal{c.account_hash});
  }
  result<outcome> operator()(const reg::account_by_admin_call& c) const {
    return account_view(ledger_.account_by_admin(c.admin), refusal{});
  }

  // --- usage keys -----------------------------------------------------------------------------

  result<outcome> operator()(const reg::set_usage_api_key_call& c) const { return set_usage_key(c, address{}); }
  result<outcome> operator()(const reg::set_usage_api_key_with_wallet_call& c) const {
    return set_usage_key(c, c.wallet);
  }
  result<outcome> operator()(const reg::update_usage_api_key_metadata_call& c) const {
    refusal why{c.account_hash};
    why.usage_key = c.usage_key_hash;
    return written(ledger_.update_usage_key_metadata(w_, c.account_hash, c.usage_key_hash, c.name, c.description), why);
  }
  result<outcome> operator()(const reg::remove_usage_api_key_call& c) const {
    refusal why{c.account_hash};
    why.usage_key = c.usage_key_hash;
    return written(ledger_.remove_usage_key(w_, c.account_hash, c.usage_key_hash), why);
  }
  result<outcome> operator()(const reg::get_usage_api_key_call& c) const {
    auto k = ledger_.find_usage_key(c.usage_key_hash);
    refusal why{};
    why.usage_key = c.usage_key_hash;
    if (!k)
      return refused(k.err(), why);
    return returned(reg::encode_result<reg::get_usage_api_key_call>(usage_key_view(*k)));
  }
  result<outcome> operator()(const reg::list_usage_api_keys_call& c) const {
    return list_view<reg::usage_key_view, usage_key>(
        [&](page_request p) { return ledger_.list_usage_keys(c.account_hash, p); }, c, refusal{c.account_hash},
        usage_key_view);
  }

  // --- groups ---------------------------------------------------------------------------------

  result<outcome> operator()(const reg::add_group_call& c) const {
    const group g{0, c.name, c.description, c.pkp_ids, c.cid_hashes};
    auto r = ledger_.add_group(w_, c.account_hash, g);
    if (!r) {
      refusal why{c.account_hash};
      why.wallets = c.pkp_ids;
      return refused(r.err(), why);
    }
    return returned(reg::encode_result<reg::add_group_call>(r->id));
  }
  result<outcome> operator()(const reg::update_group_call& c) const {
    const group g{c.group_id, c.name, c.description, c.pkp_ids, c.cid_hashes};
    refusal why{c.account_hash, u256{c.group_id}};
    why.wallets = c.pkp_ids;
    return written(ledger_.update_group(w_, c.account_hash, g), why);
  }
  result<outcome> operator()(const reg::remove_group_call& c) const {
    return written(ledger_.remove_group(w_, c.account_hash, c.group_id), refusal{c.account_hash, u256{c.group_id}});
  }
  result<outcome> operator()(const reg::add_pkp_to_group_call& c) const {
    return written(ledger_.add_pkp_to_group(w_, c.account_hash, c.group_id, c.pkp_id), pkp_refusal(c));
  }
  result<outcome> operator()(const reg::remove_pkp_from_group_call& c) const {
    return written(ledger_.remove_pkp_from_group(w_, c.account_hash, c.group_id, c.pkp_id), pkp_refusal(c));
  }
  result<outcome> operator()(const reg::add_action_to_group_call& c) const {
    return written(ledger_.add_action_to_group(w_, c.account_hash, c.group_id, c.hashed_cid), group_cid_refusal(c));
  }
  result<outcome> operator()(const reg::remove_action_from_group_call& c) const {
    return written(ledger_.remove_action_from_group(w_, c.account_hash, c.group_id, c.hashed_cid),
                   group_cid_refusal(c));
  }
  result<outcome> operator()(const reg::get_group_call& c) const {
    auto g = ledger_.get_group(c.account_hash, c.group_id);
    if (!g)
      return refused(g.err(), refusal{c.account_hash, u256{c.group_id}});
    return returned(reg::encode_result<reg::get_group_call>(group_view(*g)));
  }
  result<outcome> operator()(const reg::list_groups_call& c) const {
    return list_view<reg::group_view, group>([&](page_request p) { return ledger_.list_groups(c.account_hash, p); }, c,
                                             refusal{c.account_hash}, group_view);
  }

  // --- wallets --------------------------------------------------------------------------------

  result<outcome> operator()(const reg::register_wallet_derivation_call& c) const {
    const wallet wl{c.wallet, c.derivation_path, c.name, c.description};
    refusal why{c.admin_hash};
    why.wallets = {c.wallet};
    why.duplicate = "wallet";
    return written(ledger_.register_wallet(w_, c.admin_hash, wl), why);
  }
  result<outcome> operator()(const reg::get_wallet_call& c) const {
    auto wl = ledger_.get_wallet(c.account_hash, c.wallet);
    refusal why{c.account_hash};
    why.wallets = {c.wallet};
    if (!wl)
      return refused(wl.err(), why);
    return returned(reg::encode_result<reg::get_wallet_call>(wallet_view(*wl)));
  }
  result<outcome> operator()(const reg::list_wallets_call& c) const {
    return list_view<reg::wallet_view, wallet>([&](page_request p) { return ledger_.list_wallets(c.account_hash, p); },
                                               c, refusal{c.account_hash}, wallet_view);
  }
  result<outcome> operator()(const reg::list_wallets_in_group_call& c) const {
    return list_view<reg::wallet_view, wallet>(
        [&](page_request p) { return ledger_.list_wallets_in_group(c.account_hash, c.group_id, p); }, c,
        refusal{c.account_hash, u256{c.group_id}}, wallet_view);
  }

  // --- actions --------------------------------------------------------------------------------

  result<outcome> operator()(const reg::add_action_call& c) const {
    const action a{c.cid, c.hashed_cid, c.name, c.description};
    refusal why = cid_refusal(c);
    why.duplicate = "hashedCid";
    return written(ledger_.add_action(w_, c.account_hash, a), why);
  }
  result<outcome> operator()(const reg::update_action_metadata_call& c) const {
    return written(ledger_.update_action_metadata(w_, c.account_hash, c.hashed_cid, c.name, c.description),
                   cid_refusal(c));
  }
  result<outcome> operator()(const reg::delete_action_call& c) const {
    return written(ledger_.delete_action(w_, c.account_hash, c.hashed_cid), cid_refusal(c));
  }
  result<outcome> operator()(const reg::get_action_call& c) const {
    auto a = ledger_.get_action(c.account_hash, c.hashed_cid);
    if (!a)
      return refused(a.err(), cid_refusal(c));
    return returned(reg::encode_result<reg::get_action_call>(action_view(*a)));
  }
  result<outcome> operator()(const reg::list_actions_call& c) const {
    return list_view<reg::action_view, action>(
        [&](page_request p) { return ledger_.list_actions(c.account_hash, std::nullopt, p); }, c,
        refusal{c.account_hash}, action_view);
  }
  result<outcome> operator()(const reg::list_actions_in_group_call& c) const {
    return list_view<reg::action_view, action>(
        [&](page_request p) { return ledger_.list_actions(c.account_hash, c.group_id, p); }, c,
        refusal{c.account_hash, u256{c.group_id}}, action_view);
  }

 private:
  bool is_api_payer(const address& a) const {
    const auto p = ledger_.api_payers();
    return std::find(p.begin(), p.end(), a) != p.end();
  }

  template <class C>
  result<outcome> set_usage_key(const C& c, const address& wallet) const {
    if (!c.expiration.fits_u64())
      return reverted(reg::invalid_argument_error{over_64_bits("expiration")});
    if (!c.balance.fits_u64())
      return reverted(reg::invalid_argument_error{over_64_bits("balance")});
    const usage_key k{c.usage_key_hash,
                      c.account_hash,
                      wallet,
                      c.name,
                      c.description,
                      static_cast<uint64_t>(c.expiration),
                      static_cast<uint64_t>(c.balance),
                      c.permissions};
    refusal why{c.account_hash};
    why.usage_key = c.usage_key_hash;
    why.duplicate = "usageKeyHash";
    return written(ledger_.set_usage_key(w_, k), why);
  }

  template <class C>
  static refusal pkp_refusal(const C& c) {
    refusal why{c.account_hash, u256{c.group_id}};
    why.wallets = {c.pkp_id};
    why.duplicate = "pkpId";
    return why;
  }
  template <class C>
  static refusal group_cid_refusal(const C& c) {
    refusal why{c.account_hash, u256{c.group_id}};
    why.hashed_cid = c.hashed_cid;
    why.duplicate = "hashedCid";
    return why;
  }
  template <class C>
  static refusal cid_refusal(const C& c) {
    refusal why{c.account_hash};
    why.hashed_cid = c.hashed_cid;
    return why;
  }

  /// A ledger refusal as the registry's revert; storage failures stay errors.
  result<outcome> refused(const error& e, const refusal& r) const {
    if (e.code.category() != enact::detail::ledger_category() || e.code == ledger_errc::storage)
      return e;
    switch (static_cast<ledger_errc>(e.code.value())) {
      case ledger_errc::not_admin:
        return reverted(reg::not_admin_error{r.account, sender_});
      case ledger_errc::relay_not_allowed:
        return reverted(reg::relay_not_allowed_error{r.account, sender_});
      case ledger_errc::already_unmanaged:
        return reverted(reg::already_unmanaged_error{r.account});
      case ledger_errc::unknown_account:
        return reverted(reg::unknown_account_error{r.account});
      case ledger_errc::unknown_usage_key:
        return reverted(reg::unknown_usage_key_error{r.account, r.usage_key.value_or(hash256{})});
      case ledger_errc::unknown_group:
        return reverted(reg::unknown_group_error{r.account, r.group.value_or(u256{})});
      case ledger_errc::unknown_wallet: {
        address w = r.wallets.empty() ? address{} : r.wallets.front();
        if (r.wallets.size() > 1)
          for (const address& candidate : r.wallets)
            if (!ledger_.get_wallet(r.account, candidate)) {
              w = candidate;
              break;
            }
        return reverted(reg::unknown_wallet_error{r.account, w});
      }
      case ledger_errc::unknown_action:
        return reverted(reg::unknown_action_error{r.account, r.hashed_cid.value_or(hash256{})});
      case ledger_errc::duplicate:
        return reverted(reg::duplicate_error{r.duplicate.empty() ? e.message : r.duplicate});
      case ledger_errc::hash_not_canonical:
        return reverted(reg::account_hash_not_canonical_error{r.account, r.admin});
      case ledger_errc::managed_not_allowed:
        return reverted(reg::managed_not_allowed_error{r.account, sender_});
      case ledger_errc::hash_is_usage_key:
        return reverted(reg::hash_is_usage_key_error{r.account});
      case ledger_errc::hash_is_account:
        return reverted(reg::hash_is_account_error{r.usage_key.value_or(hash256{})});
      case ledger_errc::usage_key_of_another_account:
        return reverted(reg::usage_key_of_another_account_error{r.account, r.usage_key.value_or(hash256{})});
      case ledger_errc::new_admin_not_sender:
        return reverted(reg::new_admin_not_sender_error{r.account, r.admin});
      default:
        return reverted(reg::invalid_argument_error{e.message});
    }
  }

  template <class T>
  result<outcome> written(const result<T>& r, const refusal& why) const {
    if (!r)
      return refused(r.err(), why);
    return returned({});
  }

  /// The ledger's 1-based pages cut to the registry's (offset, limit) slice.
  template <class T, class F>
  static result<std::pair<std::vector<T>, uint64_t>> slice(F&& list, const u256& offset, const u256& limit) {
    const uint64_t n = limit.fits_u64() ? std::min<uint64_t>(static_cast<uint64_t>(limit), rpc_surface::kMaxListItems)
                                        : rpc_surface::kMaxListItems;
    if (n == 0 || !offset.fits_u64()) {
      ENACT_TRY(page<T> first, list(page_request{1, 1}));
      return std::pair{std::vector<T>{}, first.total};
    }
    const auto off = static_cast<uint64_t>(offset);
    const uint64_t within = off % n;
    ENACT_TRY(page<T> p, list(page_request{off / n + 1, n}));
    std::vector<T> items(std::make_move_iterator(p.items.begin()), std::make_move_iterator(p.items.end()));
    if (within > 0 && p.items.size() == n) {
      ENACT_TRY(page<T> next, list(page_request{off / n + 2, n}));
      std::move(next.items.begin(), next.items.end(), std::back_inserter(items));
    }
    std::vector<T> out;
    for (size_t i = within; i < items.size() && out.size() < n; ++i)
      out.push_back(std::move(items[i]));
    return std::pair{std::move(out), p.total};
  }

  template <class View, class T, class Call, class F, class Convert>
  result<outcome> list_view(F&& list, const Call& c, const refusal& why, Convert&& convert) const {
    auto s = slice<T>(std::forward<F>(list), c.offset, c.limit);
    if (!s)
      return refused(s.err(), why);
    reg::list_page<View> out;
    for (const T& x : s->first)
      out.items.push_back(convert(x));
    out.total = u256{s->second};
    return returned(reg::encode_result<Call>(out));
  }

  result<outcome> account_view(const result<account>& a, const refusal& why) const {
    if (!a)
      return refused(a.err(), why);
    auto wallets = ledger_.wallet_count(a->hash);
    if (!wallets)
      return refused(wallets.err(), why);
    reg::account_view v{
        a->hash, a->admin, a->managed, a->name, a->description, a->email, unix_u256(a->created_at), u256{*wallets}};
    return returned(reg::encode_result<reg::get_account_call>(v));
  }

  embedded_ledger& ledger_;
  address sender_;
  write_context w_;
};

}  // namespace

result<outcome> call_executor::execute(bytes_view calldata, const address& sender, const u256& value,
                                       bool commit) const {
  // The registry has no payable function and no fallback: Solidity reverts without data.
  if (value != u256{})
    return outcome{true, {}};
  auto decoded = reg::decode_call(calldata);
  if (!decoded)
    return outcome{true, {}};
  const reg::call& c = *decoded;
  const call_runner run(ledger_, sender);
  // View functions (kView, the ABI's stateMutability) run outside a ledger batch.
  if (std::visit([](const auto& x) { return std::decay_t<decltype(x)>::kView; }, c))
    return std::visit(run, c);
  outcome out;
  bool storage_failed = false;
  // One call's result inside the batch: a revert rolls the batch back and is the answer.
  const auto step = [&](const reg::call& call) -> result<outcome> {
    auto o = std::visit(run, call);
    if (!o) {
      storage_failed = true;
      return o.err();
    }
    if (o->reverted) {
      out = std::move(*o);
      return fail(ledger_errc::invalid_argument, "reverted");
    }
    return o;
  };
  auto r = ledger_.batch(commit, [&]() -> result<void> {
    if (const auto* m = std::get_if<reg::multicall_call>(&c)) {
      std::vector<bytes> results;
      for (const bytes& sub : m->calls) {
        auto inner = reg::decode_call(sub);
        if (!inner) {
          out = outcome{true, {}};
          return fail(ledger_errc::invalid_argument, "reverted");
        }
        ENACT_TRY(outcome o, step(*inner));
        results.push_back(std::move(o.data));
      }
      out = returned(reg::encode_result<reg::multicall_call>(results));
      return {};
    }
    ENACT_TRY(out, step(c));
    return {};
  });
  if (!r && (storage_failed || !out.reverted))
    return r.err();
  return out;
}

}  // namespace enact::ledger::rpc
