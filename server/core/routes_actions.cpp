// SPDX-License-Identifier: Apache-2.0
// Action metadata, group membership of actions, and the content store (docs/protocol.md §2).
#include <algorithm>
#include <chrono>

#include "core/content_store.hpp"
#include <httplib.h>

#include "core/errors.hpp"
#include "core/route.hpp"
#include "core/schema.hpp"
#include "enact/codec/hex.hpp"
#include "enact/codec/utf8.hpp"
#include "enact/ipfs/cid.hpp"

namespace enact::core {
namespace {

namespace s = schema;
using scopes::permission;

/// docs/protocol.md §2 "Action metadata": the account's catalogue of actions is written only by a key
/// that may put actions in groups (group:manageActions on some group, or on the wildcard 0). Each
/// write is a registry transaction, paid in gas on a real chain, so a key with no permission at
/// all makes none.
result<void> may_write_catalogue(const request_context& c) {
  const scopes::caller& who = c.who->scopes;
  if (who.kind == scopes::key_kind::account || !who.perms.manage_ipfs_ids_in_groups.empty())
    return {};
  return fail(api_errc::forbidden,
              "this key lacks group:manageActions on any group: only a key that may manage actions writes action "
              "metadata");
}

/// The writes of an action already listed: group:manageActions on every group that lists it (403
/// naming the first the key may not touch), or, listed nowhere, may_write_catalogue.
result<void> may_change_action(const request_context& c, const hash256& hashed_cid) {
  ENACT_TRY(const auto listing, c.svc.ledger->groups_listing(c.who->account.hash, hashed_cid));
  if (listing.empty())
    return may_write_catalogue(c);
  for (const auto& g : listing)
    ENACT_TRY_VOID(require_scope(c, scopes::permission::group_manage_actions, g.id));
  return {};
}

result<json::value> add_action(const request_context& c) {
  ENACT_TRY(const api::new_action req, api::read<api::new_action>(c.body));
  ENACT_TRY_VOID(may_write_catalogue(c));
  ledger::action a;
  a.cid = req.action_ipfs_cid;
  a.hashed_cid = ipfs::hashed_cid(a.cid);
  a.name = req.name;
  a.description = req.description.value_or("");
  a.created_at =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  ENACT_TRY_VOID(c.svc.ledger->add_action(relay(c), c.who->account.hash, a));
  return json::value_from(to_api(a));
}

/// The group id of a body, after which a handler checks its scope on that group before reading
/// the rest of the body.
result<scopes::group_id> managed_group(const request_context& c) {
  ENACT_TRY(const auto id, api::read_group_id(c.body.at("group_id"), "group_id"));
  ENACT_TRY_VOID(require_scope(c, permission::group_manage_actions, id));
  return id;
}

result<json::value> add_action_to_group(const request_context& c) {
  ENACT_TRY(const auto id, managed_group(c));
  ENACT_TRY(const api::group_action req, api::read<api::group_action>(c.body));
  ENACT_TRY(const auto g, c.svc.ledger->add_action_to_group(relay(c), c.who->account.hash, id,
                                                            ipfs::hashed_cid(req.action_ipfs_cid)));
  return json::value_from(to_api(g));
}

result<json::value> remove_action_from_group(const request_context& c) {
  ENACT_TRY(const auto id, managed_group(c));
  ENACT_TRY(const api::group_action_hash req, api::read<api::group_action_hash>(c.body));
  ENACT_TRY(const auto g, c.svc.ledger->remove_action_from_group(relay(c), c.who->account.hash, id, req.hashed_cid));
  return json::value_from(to_api(g));
}

result<json::value> update_action_metadata(const request_context& c) {
  ENACT_TRY(const api::action_metadata req, api::read<api::action_metadata>(c.body));
  ENACT_TRY_VOID(may_change_action(c, req.hashed_cid));
  ENACT_TRY(const auto a, c.svc.ledger->update_action_metadata(relay(c), c.who->account.hash, req.hashed_cid, req.name,
                                                               req.description));
  return json::value_from(to_api(a));
}

result<json::value> delete_action(const request_context& c) {
  ENACT_TRY(const api::action_ref req, api::read<api::action_ref>(c.body));
  // docs/protocol.md §2: deleting an action removes it from every group that lists it, so the key needs
  // group:manageActions on each of them (403 naming the first it may not touch); a key with no
  // permission at all could otherwise strip an action from every group.
  ENACT_TRY_VOID(may_change_action(c, req.hashed_cid));
  ENACT_TRY_VOID(c.svc.ledger->delete_action(relay(c), c.who->account.hash, req.hashed_cid));
  return json::value_from(req);
}

result<json::value> list_actions(const request_context& c) {
  ENACT_TRY(const auto p, read_page(c.http));
  std::optional<scopes::group_id> group;
  if (c.http.has_param("group_id")) {
    ENACT_TRY(group, api::read_group_id(json::value(c.http.get_param_value("group_id")), "group_id"));
  }
  ENACT_TRY(const auto actions, c.svc.ledger->list_actions(c.who->account.hash, group, p));
  return page_answer<api::action>(actions, p, [](const ledger::action& a) { return to_api(a); });
}

result<json::value> upload_action(const request_context& c) {
  const auto& code = c.body.at("code").as_string();
  if (code.size() > c.cfg.max_action_code_bytes)
    return fail(api_errc::payload_too_large, "body.code: " + std::to_string(code.size()) + " bytes, at most " +
                                                 std::to_string(c.cfg.max_action_code_bytes));
  // The account's quota of stored code (distinct CIDs and their bytes): 403 when exhausted, a
  // lasting state of the account rather than a wait (429) or an oversized body (413).
  const upload_quota quota{c.cfg.upload_quota_bytes, c.cfg.upload_quota_count};
  ENACT_TRY(const std::string cid, c.svc.store->put_for(c.who->account.hash, as_bytes(std::string_view(code)), quota));
  return json::value_from(api::uploaded_action{cid, ipfs::hashed_cid(cid)});
}

/// The one answer for every action code the caller may not read, whether another account's, this
/// account's but outside the key's groups, or unknown: no oracle telling whose code exists.
result<json::value> no_such_action() {
  return fail(api_errc::not_found, "no action with this CID that this key may read");
}

/// docs/protocol.md §2 /get_action_code: the account key reads the code of every action its
/// account registered under exactly this CID string and stored itself (uploaded, or ran and had
/// kept); a usage key reads it when it may also run it or manage it: execute or
/// group:manageActions on a group listing the action, or group:manageActions on the wildcard
/// group 0 (which lets it put the action in any group).
result<json::value> get_action_code(const request_context& c) {
  if (!c.http.has_param("action_ipfs_cid"))
    return fail(api_errc::invalid_request, "query.action_ipfs_cid: required");
  const std::string cid = c.http.get_param_value("action_ipfs_cid");
  if (auto parsed = ipfs::parse(cid); !parsed)
    return fail(api_errc::invalid_request, "query.action_ipfs_cid: " + parsed.err().message);
  const hash256 hashed = ipfs::hashed_cid(cid);
  const auto& account = c.who->account.hash;
  auto registered = c.svc.ledger->get_action(account, hashed);
  if (!registered) {
    if (registered.code() == ledger_errc::unknown_action)
      return no_such_action();
    return registered.err();
  }
  if (!scopes::allows(c.who->scopes, permission::group_manage_actions, scopes::kAllGroups)) {
    ENACT_TRY(const auto listing, c.svc.ledger->groups_listing(account, hashed));
    const bool may = std::any_of(listing.begin(), listing.end(), [&](const ledger::group& g) {
      return scopes::allows(c.who->scopes, permission::execute, g.id) ||
             scopes::allows(c.who->scopes, permission::group_manage_actions, g.id);
    });
    if (!may)
      return no_such_action();
  }
  ENACT_TRY(const auto code, c.svc.store->get(cid));
  if (!code)
    return fail(api_errc::not_found, "the code of this action is not in this server's content store");
  // Only code this account put in the store itself (an upload, or a run that had it kept): an
  // account that registers a CID it learned (another account's upload) may run that code, which
  // tells it no more than that run would, but never reads its source.
  ENACT_TRY(const bool own, c.svc.store->stored_by(account, cid));
  if (!own)
    return no_such_action();
  std::string text(code->begin(), code->end());
  if (!codec::utf8::is_valid(text))
    return fail(api_errc::conflict, "the stored code of this action is not UTF-8 text");
  return json::object{{"action_ipfs_cid", cid}, {"code", std::move(text)}};
}

json::object group_id_schema() {
  return s::any_of({s::integer("group id", 1), s::string("group id as a decimal string", 20)}, "group id");
}

}  // namespace

void add_action_routes(std::vector<route>& out) {
  const json::object cid = s::string("IPFS CID (CIDv0 Qm… or CIDv1)", 256);
  out.push_back(route{
      "POST",
      "/add_action",
      "addAction",
      "actions",
      "Register an action's metadata by its raw CID (hashed server-side). A usage key needs group:manageActions "
      "on some group.",
      auth_kind::key,
      true,
      {},
      s::object({{"action_ipfs_cid", cid, true}, {"name", s::name(), true}, {"description", s::string("", 4096)}}),
      s::ref("Action"),
      add_action});
  out.push_back(route{"POST",
                      "/add_action_to_group",
                      "addActionToGroup",
                      "actions",
                      "Permit an action (raw CID) in a group (scope group:manageActions on it).",
                      auth_kind::key,
                      true,
                      {},
                      s::object({{"group_id", group_id_schema(), true}, {"action_ipfs_cid", cid, true}}),
                      s::ref("Group"),
                      add_action_to_group});
  out.push_back(route{"POST",
                      "/remove_action_from_group",
                      "removeActionFromGroup",
                      "actions",
                      "Remove an action (hashed CID) from a group (scope group:manageActions on it).",
                      auth_kind::key,
                      true,
                      {},
                      s::object({{"group_id", group_id_schema(), true}, {"hashed_cid", s::hash(), true}}),
                      s::ref("Group"),
                      remove_action_from_group});
  out.push_back(route{
      "POST",
      "/update_action_metadata",
      "updateActionMetadata",
      "actions",
      "Change an action's name and description. A usage key needs group:manageActions on every group that "
      "lists the action, or on some group when none does.",
      auth_kind::key,
      true,
      {},
      s::object(
          {{"hashed_cid", s::hash(), true}, {"name", s::name(), true}, {"description", s::string("", 4096), true}}),
      s::ref("Action"),
      update_action_metadata});
  out.push_back(route{"POST",
                      "/delete_action",
                      "deleteAction",
                      "actions",
                      "Delete an action's metadata and remove it from every group of the account. "
                      "A usage key needs group:manageActions on every group that lists the action "
                      "(403 naming the first it may not touch), or on some group when none does.",
                      auth_kind::key,
                      true,
                      {},
                      s::object({{"hashed_cid", s::hash(), true}}),
                      s::object({{"hashed_cid", s::hash(), true}}),
                      delete_action});
  out.push_back(route{"GET",
                      "/list_actions",
                      "listActions",
                      "actions",
                      "Actions of the account, or of one group with group_id.",
                      auth_kind::key,
                      false,
                      {{"group_id", s::integer("group id", 1), false}},
                      {},
                      s::ref("ActionPage"),
                      list_actions});
  out.push_back(
      route{"POST",
            "/upload_action",
            "uploadAction",
            "actions",
            "Store action code in the server's content store so it runs without an "
            "IPFS gateway; returns its CID.",
            auth_kind::key,
            false,
            {},
            s::object({{"code", s::string("JavaScript source, at most 256 KiB (larger: 413)", size_t{1} << 20), true}}),
            s::object({{"action_ipfs_cid", s::string(), true}, {"hashed_cid", s::hash(), true}}),
            upload_action,
            (size_t{256} << 10) + 4096,
            false,
            false,
            json::object{{"403",
                          "forbidden: the account's upload quota (distinct "
                          "actions stored, or their total bytes; "
                          "limits.upload_quota_count, limits.upload_quota_bytes) "
                          "is used up; code the account stored before uploads "
                          "again without counting"},
                         {"429",
                          "rate_limited: the key's request rate "
                          "(limits.key_rate_per_second; Retry-After set)"}}});
  out.push_back(
      route{"GET",
            "/get_action_code",
            "getActionCode",
            "actions",
            "The code of an action of the account, read back from the server's content store. The account "
            "key reads every action its account registered under this CID string and stored itself "
            "(uploaded, or ran and had kept); a usage key those it may also run or manage (execute or "
            "group:manageActions on a group listing it, or group:manageActions on the wildcard group 0).",
            auth_kind::key,
            false,
            {{"action_ipfs_cid", s::string("the CID as registered (CIDv0 Qm… or CIDv1)", 256), true}},
            {},
            s::object({{"action_ipfs_cid", s::string("the CID as given"), true},
                       {"code", s::string("the action's JavaScript source (UTF-8)", size_t{1} << 20), true}}),
            get_action_code,
            0,
            false,
            false,
            json::object{{"404",
                          "not_found: no action with this CID that this key may read (another account's, code "
                          "this account did not store, one outside the key's groups and unknown CIDs answer "
                          "alike); or, for an action the key may read, its code is not in this server's "
                          "content store"},
                         {"409", "conflict: the stored code is not UTF-8 text"}}});
}

}  // namespace enact::core
