// SPDX-License-Identifier: Apache-2.0
#include "triggers/key_check.hpp"

#include <vector>

#include "enact/client/api_error.hpp"
#include "enact/client/core_client.hpp"
#include "enact/address.hpp"
#include "enact/crypto/keccak.hpp"
#include "enact/scopes/scopes.hpp"

namespace enact::triggers {

namespace {

/// The core's answer in the trigger API's terms.
error refused_by_core(const api_error& e) {
  const int s = e.status();
  if (s == 401 || s == 402 || s == 403)
    return fail(api_errc::invalid_request,
                "body.usage_api_key: the core service refuses this key (" + std::string(e.code_name()) + ")");
  if (s == 0 || s >= 500 || s == 429)
    return fail(api_errc::unavailable,
                "the core service cannot check the usage key now (" + std::string(e.code_name()) + "); retry");
  // Any other answer to two GETs without parameters of ours means the core is not a compatible
  // one, or is broken: nothing is stored on its word.
  return fail(api_errc::unavailable, "the core service answered the usage-key check with " + std::to_string(s) + " " +
                                         std::string(e.code_name()) + "; retry");
}

}  // namespace

result<void> check_trigger_key(const key_check_config& cfg, const Secret& usage_key, std::string_view action_cid,
                               const std::optional<address>& pkp) {
  try {
    client::client_options o;
    o.base_url = cfg.core_url;
    o.connect_timeout = std::min(o.connect_timeout, cfg.timeout);
    o.read_timeout = cfg.timeout;
    o.max_retries = 0;  // the caller answers 503 and its client retries
    o.user_agent = "enact-triggers/0.1";
    client::core_client core(o, usage_key.clone());

    const client::account_info who = core.account();
    if (who.key.kind == scopes::key_kind::account)
      return fail(api_errc::invalid_request,
                  "body.usage_api_key: this is an account key, and an account key may not be stored in a "
                  "trigger; create a usage key with execute on the action's group");
    if (!who.key.permissions)
      return fail(api_errc::unavailable,
                  "the core service does not tell a usage key's permissions (GET /core/v1/account "
                  "key.permissions); the key cannot be checked");
    const scopes::caller caller{scopes::key_kind::usage, *who.key.permissions};

    const hash256 cid_hash = crypto::keccak256(action_cid);
    std::vector<client::group> groups;
    for (uint64_t number = 1;; ++number) {
      client::page<client::group> p = core.list_groups(client::page_request{number, 100});
      for (auto& g : p.items)
        groups.push_back(std::move(g));
      if (p.items.empty() || groups.size() >= p.total)
        break;
      if (groups.size() >= cfg.max_groups)
        return fail(api_errc::unavailable, "the account has over " + std::to_string(cfg.max_groups) +
                                               " groups; the usage key cannot be checked");
    }
    std::vector<scopes::group_view> views;
    views.reserve(groups.size());
    for (const auto& g : groups)
      views.push_back(scopes::group_view{g.group_id, g.pkp_ids_permitted, g.cid_hashes_permitted});
    if (scopes::find_executable_group(caller, views, cid_hash, pkp))
      return {};
    // Name what is missing: the action alone, or the action with this PKP.
    if (pkp && scopes::find_executable_group(caller, views, cid_hash, std::nullopt))
      return fail(api_errc::forbidden, "execute: the usage key may run action " + std::string(action_cid) +
                                           " but not with PKP " + to_checksum_address(*pkp) +
                                           " (no group it may execute in lists both)");
    return fail(api_errc::forbidden, "execute: the usage key may not run action " + std::string(action_cid) +
                                         " (no group it may execute in lists it)");
  } catch (const api_error& e) {
    return refused_by_core(e);
  } catch (const std::exception& e) {
    return fail(api_errc::unavailable,
                std::string("the core service cannot check the usage key now: ") + e.what() + "; retry");
  }
}

}  // namespace enact::triggers
