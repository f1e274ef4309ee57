// SPDX-License-Identifier: Apache-2.0
// Groups and PKP wallets (docs/protocol.md §2 "Groups, wallets, actions").
#include <algorithm>
#include <chrono>
#include <set>

#include <httplib.h>

#include "core/errors.hpp"
#include "core/key_cache.hpp"
#include "core/route.hpp"
#include "core/schema.hpp"
#include "enact/pkp/pkp.hpp"
#include "tee/tee.hpp"

namespace enact::core {
namespace {

namespace s = schema;
using scopes::permission;

template <class T>
bool adds_any(const std::vector<T>& before, const std::vector<T>& after) {
  return std::any_of(after.begin(), after.end(),
                     [&](const T& x) { return std::find(before.begin(), before.end(), x) == before.end(); });
}

result<json::value> add_group(const request_context& c) {
  ENACT_TRY_VOID(require_scope(c, permission::group_create));
  ENACT_TRY(const api::new_group req, api::read<api::new_group>(c.body));
  ledger::group g;
  g.name = req.name;
  g.description = req.description.value_or("");
  g.pkps = req.pkp_ids_permitted;
  g.cid_hashes = req.cid_hashes_permitted;
  // docs/protocol.md §2: a group born with PKPs or actions binds them as add_pkp_to_group and
  // add_action_to_group would, on a group no key holds scopes on yet; so the key needs those
  // scopes on the wildcard group 0. Without this, group:create alone would bind any PKP of the
  // account to code of the caller's choosing.
  if (!g.pkps.empty())
    ENACT_TRY_VOID(require_scope(c, permission::group_add_pkp, scopes::group_id{0}));
  if (!g.cid_hashes.empty())
    ENACT_TRY_VOID(require_scope(c, permission::group_manage_actions, scopes::group_id{0}));
  ENACT_TRY(const auto created, c.svc.ledger->add_group(relay(c), c.who->account.hash, g));
  return json::value_from(to_api(created));
}

json::value group_page(const ledger::page<ledger::group>& groups, ledger::page_request p) {
  return page_answer<api::group>(groups, p, [](const ledger::group& g) { return to_api(g); });
}

/// The wallets the account's usage keys record as their own (setUsageApiKey's wallet): any of them
/// registered as a wallet is that key's, no PKP (docs/protocol.md §2 "Wallet"). Read up to
/// kUsageWalletScan keys, so a listing costs a bounded number of ledger pages.
constexpr uint64_t kUsageWalletScan = 4096;
result<std::set<address>> usage_key_wallets(const request_context& c) {
  std::set<address> out;
  for (uint64_t number = 1; (number - 1) * 256 < kUsageWalletScan; ++number) {
    ENACT_TRY(const auto keys, c.svc.ledger->list_usage_keys(c.who->account.hash, {number, 256}));
    for (const auto& k : keys.items)
      out.insert(k.wallet);
    if (keys.items.size() < 256 || number * 256 >= keys.total)
      break;
  }
  return out;
}

/// A wallet as the wallet routes answer it: its record and the Solana address of its Ed25519 key
/// (docs/protocol.md §2 "Wallet"), derived only under the owning-account check signing makes
/// (docs/protocol.md §1 "owning account"): when the registered derivation path under this account
/// does not give the registered wallet, the key is not this account's and `solana_address` is null.
/// `usage_key_wallet` marks the wallet of a usage key: one a key records (`usage_wallets`), one the
/// usage-key derivation gives, or a PKP whose key was handed out as a usage key.
result<api::wallet> wallet_answer(const request_context& c, const ledger::wallet& w,
                                  const std::set<address>& usage_wallets) {
  api::wallet out = to_api(w);
  // Both derivations are paid once per (account, path, wallet) for the process's lifetime
  // (core/key_cache.hpp), so a page of wallets costs lookups, not two derivations per wallet.
  ENACT_TRY(out.solana_address,
            shared_key_cache().solana_address(*c.svc.tee, c.who->account.hash, w.derivation_path, w.pkp_id));
  if (usage_wallets.contains(w.pkp_id)) {
    out.usage_key_wallet = true;
    return out;
  }
  ENACT_TRY(out.usage_key_wallet,
            shared_key_cache().usage_key_wallet(*c.svc.tee, c.who->account.hash, w.derivation_path, w.pkp_id,
                                                usage_key_lookup(*c.svc.ledger)));
  return out;
}

/// The wire form of a wallet answer: `solana_address` is always present, null when not derived.
json::value wallet_json(const api::wallet& w) {
  json::value v = json::value_from(w);
  if (!w.solana_address)
    v.as_object()["solana_address"] = nullptr;
  return v;
}

result<json::value> wallet_page(const request_context& c, const ledger::page<ledger::wallet>& wallets,
                                ledger::page_request p) {
  ledger::page<api::wallet> answered;
  answered.total = wallets.total;
  answered.items.reserve(wallets.items.size());
  // A key's recorded wallet can only be one the account's derivation does not give (a usage key is
  // never a PKP's key), so the keys are read only when the page holds such a wallet.
  bool unowned = false;
  for (const auto& w : wallets.items) {
    ENACT_TRY(const bool owned, shared_key_cache().owns(*c.svc.tee, c.who->account.hash, w.derivation_path, w.pkp_id));
    unowned = unowned || !owned;
  }
  std::set<address> usage_wallets;
  if (unowned) {
    ENACT_TRY(usage_wallets, usage_key_wallets(c));
  }
  for (const auto& w : wallets.items) {
    ENACT_TRY(auto a, wallet_answer(c, w, usage_wallets));
    answered.items.push_back(std::move(a));
  }
  json::value v = page_answer<api::wallet>(answered, p, [](const api::wallet& w) { return w; });
  for (auto& item : v.as_object()["items"].as_array())
    if (!item.as_object().contains("solana_address"))
      item.as_object()["solana_address"] = nullptr;
  return v;
}

result<json::value> list_groups(const request_context& c) {
  ENACT_TRY(const auto p, read_page(c.http));
  ENACT_TRY(const auto groups, c.svc.ledger->list_groups(c.who->account.hash, p));
  return group_page(groups, p);
}

result<json::value> update_group(const request_context& c) {
  ENACT_TRY(const auto id, api::read_group_id(c.body.at("group_id"), "group_id"));
  // Editing a group is group:manageActions on it; changing its PKP set also needs group:addPkp
  // for additions and group:removePkp for removals.
  ENACT_TRY_VOID(require_scope(c, permission::group_manage_actions, id));
  ENACT_TRY(const auto before, c.svc.ledger->get_group(c.who->account.hash, id));
  ENACT_TRY(const api::group req, api::read<api::group>(c.body));
  ledger::group g;
  g.id = id;
  g.name = req.name;
  g.description = req.description;
  g.pkps = req.pkp_ids_permitted;
  g.cid_hashes = req.cid_hashes_permitted;
  if (adds_any(before.pkps, g.pkps))
    ENACT_TRY_VOID(require_scope(c, permission::group_add_pkp, id));
  if (adds_any(g.pkps, before.pkps))
    ENACT_TRY_VOID(require_scope(c, permission::group_remove_pkp, id));
  ENACT_TRY(const auto updated, c.svc.ledger->update_group(relay(c), c.who->account.hash, g));
  return json::value_from(to_api(updated));
}

result<json::value> remove_group(const request_context& c) {
  ENACT_TRY_VOID(require_scope(c, permission::group_delete));
  ENACT_TRY(const api::group_ref req, api::read<api::group_ref>(c.body));
  ENACT_TRY_VOID(c.svc.ledger->remove_group(relay(c), c.who->account.hash, req.group_id));
  return json::value_from(req);
}

result<json::value> create_wallet(const request_context& c) {
  ENACT_TRY_VOID(require_scope(c, permission::pkp_create));
  ENACT_TRY(const api::new_wallet req, api::read<api::new_wallet>(c.body));
  const auto& account = c.who->account.hash;
  ENACT_TRY(uint64_t index, c.svc.ledger->wallet_count(account));
  // The n-th API-mode wallet sits at crypto::keccak256(apiKeyHash ‖ n) under the caller's own account
  // (docs/protocol.md §1: the key belongs to that account). Two concurrent
  // creations may read the same n; the loser's registration is a duplicate and moves on to the
  // registry's current count (moving on by one only, a slower request falls further behind the
  // others with every retry and runs out of attempts).
  for (int attempt = 0; attempt < 16; ++attempt) {
    ledger::wallet w;
    w.derivation_path = pkp::api_mode_path(account, index);
    ENACT_TRY(w.pkp_id, c.svc.tee->wallet_address(account, w.derivation_path));
    w.name = req.name;
    w.description = req.description.value_or("");
    w.created_at =
        std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
    auto r = c.svc.ledger->register_wallet(relay(c), account, w);
    if (r) {
      ENACT_TRY(const auto answer, wallet_answer(c, w, {}));
      return wallet_json(answer);
    }
    if (r.code() != ledger_errc::duplicate)
      return r.err();
    ENACT_TRY(const uint64_t count, c.svc.ledger->wallet_count(account));
    index = std::max(index + 1, count);
  }
  return fail(api_errc::unavailable, "too many concurrent wallet creations; retry");
}

result<json::value> list_wallets(const request_context& c) {
  ENACT_TRY(const auto p, read_page(c.http));
  ENACT_TRY(const auto ws, c.svc.ledger->list_wallets(c.who->account.hash, p));
  return wallet_page(c, ws, p);
}

/// The `group_id` query parameter of a GET route.
result<uint64_t> query_group_id(const request_context& c) {
  if (!c.http.has_param("group_id"))
    return fail(api_errc::invalid_request, "query.group_id: required");
  return api::read_group_id(json::value(c.http.get_param_value("group_id")), "group_id");
}

result<json::value> list_wallets_in_group(const request_context& c) {
  ENACT_TRY(const auto p, read_page(c.http));
  ENACT_TRY(const auto id, query_group_id(c));
  ENACT_TRY(const auto ws, c.svc.ledger->list_wallets_in_group(c.who->account.hash, id, p));
  return wallet_page(c, ws, p);
}

result<json::value> get_group(const request_context& c) {
  ENACT_TRY(const auto id, query_group_id(c));
  ENACT_TRY(const auto g, c.svc.ledger->get_group(c.who->account.hash, id));
  return json::value_from(to_api(g));
}

/// add_pkp_to_group and remove_pkp_from_group: the group id, then the scope `p` on that group,
/// then the PKP id, in this order (a key without the scope gets 403 whatever the PKP field holds).
template <class Change>
result<json::value> change_pkp(const request_context& c, permission p, Change change) {
  ENACT_TRY(const auto id, api::read_group_id(c.body.at("group_id"), "group_id"));
  ENACT_TRY_VOID(require_scope(c, p, id));
  ENACT_TRY(const api::group_pkp req, api::read<api::group_pkp>(c.body));
  ENACT_TRY(const auto g, change(relay(c), c.who->account.hash, id, req.pkp_id));
  return json::value_from(to_api(g));
}

result<json::value> add_pkp_to_group(const request_context& c) {
  return change_pkp(c, permission::group_add_pkp, [&](auto&&... a) { return c.svc.ledger->add_pkp_to_group(a...); });
}

result<json::value> remove_pkp_from_group(const request_context& c) {
  return change_pkp(c, permission::group_remove_pkp,
                    [&](auto&&... a) { return c.svc.ledger->remove_pkp_from_group(a...); });
}

json::object group_id_schema(std::string_view d = "group id") {
  return s::any_of({s::integer(d, 1), s::string("group id as a decimal string", 20)}, d);
}

}  // namespace

void add_group_routes(std::vector<route>& out) {
  const json::object pkps = s::array(s::address("PKP id (wallet address)"), "permitted PKP ids");
  const json::object cids = s::array(s::hash("hashed CID"), "permitted action CID hashes");
  out.push_back(route{"POST",
                      "/add_group",
                      "addGroup",
                      "groups",
                      "Create a group (scope group:create; plus group:addPkp on the wildcard group 0 "
                      "when pkp_ids_permitted is not empty, and group:manageActions on 0 when "
                      "cid_hashes_permitted is not empty).",
                      auth_kind::key,
                      true,
                      {},
                      s::object({{"name", s::name(), true},
                                 {"description", s::string("", 4096)},
                                 {"pkp_ids_permitted", pkps},
                                 {"cid_hashes_permitted", cids}}),
                      s::ref("Group"),
                      add_group});
  out.push_back(route{"GET",
                      "/list_groups",
                      "listGroups",
                      "groups",
                      "The account's groups.",
                      auth_kind::key,
                      false,
                      {},
                      {},
                      s::ref("GroupPage"),
                      list_groups});
  out.push_back(route{"GET",
                      "/get_group",
                      "getGroup",
                      "groups",
                      "One group of the account.",
                      auth_kind::key,
                      false,
                      {{"group_id", s::integer("group id", 1), true}},
                      {},
                      s::ref("Group"),
                      get_group});
  out.push_back(route{"POST",
                      "/update_group",
                      "updateGroup",
                      "groups",
                      "Replace a group's name, description and sets (group:manageActions on it; "
                      "group:addPkp / group:removePkp when PKPs are added / removed).",
                      auth_kind::key,
                      true,
                      {},
                      s::object({{"group_id", group_id_schema(), true},
                                 {"name", s::name(), true},
                                 {"description", s::string("", 4096), true},
                                 {"pkp_ids_permitted", pkps, true},
                                 {"cid_hashes_permitted", cids, true}}),
                      s::ref("Group"),
                      update_group});
  out.push_back(route{"POST",
                      "/remove_group",
                      "removeGroup",
                      "groups",
                      "Delete a group (scope group:delete).",
                      auth_kind::key,
                      true,
                      {},
                      s::object({{"group_id", group_id_schema(), true}}),
                      s::object({{"group_id", s::integer("", 1), true}}),
                      remove_group});
  out.push_back(route{"POST",
                      "/create_wallet",
                      "createWallet",
                      "wallets",
                      "Create a PKP wallet in the account's registry (scope pkp:create). Its key "
                      "is derived in the TEE; nothing secret is stored.",
                      auth_kind::key,
                      true,
                      {},
                      s::object({{"name", s::name(), true}, {"description", s::string("", 4096)}}),
                      s::ref("Wallet"),
                      create_wallet});
  out.push_back(route{"GET",
                      "/list_wallets",
                      "listWallets",
                      "wallets",
                      "The account's PKP wallets.",
                      auth_kind::key,
                      false,
                      {},
                      {},
                      s::ref("WalletPage"),
                      list_wallets});
  out.push_back(route{"GET",
                      "/list_wallets_in_group",
                      "listWalletsInGroup",
                      "wallets",
                      "The PKP wallets of a group.",
                      auth_kind::key,
                      false,
                      {{"group_id", s::integer("group id", 1), true}},
                      {},
                      s::ref("WalletPage"),
                      list_wallets_in_group});
  out.push_back(route{"POST",
                      "/add_pkp_to_group",
                      "addPkpToGroup",
                      "groups",
                      "Add a PKP to a group (scope group:addPkp on it).",
                      auth_kind::key,
                      true,
                      {},
                      s::object({{"group_id", group_id_schema(), true}, {"pkp_id", s::address("PKP id"), true}}),
                      s::ref("Group"),
                      add_pkp_to_group});
  out.push_back(route{"POST",
                      "/remove_pkp_from_group",
                      "removePkpFromGroup",
                      "groups",
                      "Remove a PKP from a group (scope group:removePkp on it).",
                      auth_kind::key,
                      true,
                      {},
                      s::object({{"group_id", group_id_schema(), true}, {"pkp_id", s::address("PKP id"), true}}),
                      s::ref("Group"),
                      remove_pkp_from_group});
}

}  // namespace enact::core
