// SPDX-License-Identifier: Apache-2.0
// What the `enact core …` command files share: their arguments (--url, --key-file, pages, ids) and
// the commands that core_commands() lists.
#pragma once

#include <functional>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "cli.hpp"
#include "enact/api/core.hpp"
#include "enact/client/core_client.hpp"

namespace enact::cli::core_cmd {

using client::core_client;

/// Parses a core command's arguments: its own options and flags, plus --url and --key-file.
args parse_args(const std::vector<std::string>& argv, std::set<std::string> options, std::set<std::string> flags = {});

/// A client of the service at --url, else $ENACT_URL, else the default; `with_key`: with the API key.
core_client connect(const args& a, bool with_key);

api::page_request page_of(const args& a);
uint64_t id_arg(const args& a, size_t i, std::string_view what);
address address_arg(const std::string& text, std::string_view what);
/// A hashed CID given as 0x + 64 hex, or a CID (hashed as written, docs/protocol.md §1 `hashed_cid`).
hash256 hashed_cid_arg(const std::string& text, std::string_view what);
std::vector<address> address_list(const std::string& text, std::string_view what);
std::vector<hash256> hashed_cid_list(const std::string& text, std::string_view what);

/// Walks the pages of a listing (100 items each) for the first item `match` accepts.
template <class T>
std::optional<T> find_listed(const std::function<api::page<T>(api::page_request)>& list,
                             const std::function<bool(const T&)>& match) {
  for (api::page_request p{1, 100};; ++p.number) {
    api::page<T> page = list(p);
    for (T& item : page.items)
      if (match(item))
        return std::move(item);
    if (page.items.empty() || p.number * p.size >= page.total)
      return std::nullopt;
  }
}

using command_fn = int(const std::vector<std::string>&);

// core_key_commands.cpp
command_fn new_account, account, keys_add, keys_list, keys_update, keys_update_metadata, keys_remove;
// core_group_commands.cpp
command_fn groups_add, groups_list, groups_update, groups_remove, groups_add_pkp, groups_remove_pkp, groups_add_action,
    groups_remove_action, wallets_create, wallets_list, wallets_list_in_group;
// core_action_commands.cpp
command_fn actions_add, actions_upload, actions_code, actions_update, actions_delete, actions_list, run;
// core_billing_commands.cpp
command_fn billing_balance, billing_create_intent, billing_confirm, billing_stripe_config, chain_config, api_payers,
    server_cid;

}  // namespace enact::cli::core_cmd
