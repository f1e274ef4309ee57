// SPDX-License-Identifier: Apache-2.0
// What the `enact chain …` command files share: their arguments, the owner's key, the session with
// the node and the registry, and the commands that chain_commands() lists.
#pragma once

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/json.hpp>

#include "cli.hpp"
#include "enact/chain/client.hpp"
#include "enact/chain/registry_client.hpp"
#include "enact/client/core_client.hpp"

namespace enact::cli::chain_cmd {

template <class T>
T take(result<T> r) {
  if (!r)
    throw input_error(r.err().message);
  return std::move(r).value();
}

/// A chain command's arguments: its own options and flags, plus --rpc-url, --registry, --key-file
/// and --url. A private key on the command line is refused with the reason.
args parse_args(const std::vector<std::string>& argv, std::set<std::string> options, std::set<std::string> flags = {});

/// The core service at --url, else $ENACT_URL, else the default.
client::core_client core(const args& a);

/// The owner's key: a 0x-hex private key in a file only its owner may read.
Secret owner_key(const std::string& path);

address address_arg(const std::string& text, std::string_view what);
hash256 hash_arg(const std::string& text, std::string_view what);
/// A hashed CID given as 0x + 64 hex, or a CID (hashed as written, docs/protocol.md §1 `hashed_cid`).
hash256 hashed_cid_arg(const std::string& text, std::string_view what);
std::vector<address> address_list(const std::string& text, std::string_view what);
std::vector<hash256> hashed_cid_list(const std::string& text, std::string_view what);
uint64_t group_arg(const args& a, size_t i);

struct session {
  std::shared_ptr<const chain::rpc_client> rpc;
  std::optional<chain::registry_client> registry;
  std::optional<address> from;  // the key's wallet, when a key file was given
};

/// The node's URL: --rpc-url, else $ENACT_RPC_URL, else $ETH_RPC_URL (the name foundry's cast and
/// The node's URL: --rpc-url, else $ENACT_RPC_URL, else $ETH_RPC_URL (the name foundry's cast and
/// other Ethereum tools read).
std::optional<std::string> rpc_url_of(const args& a);

/// Connects to the node and the registry; with `need_key`, --key-file is required.
session connect(const args& a, bool need_key);

/// --account, else --admin's account, else the account the key's wallet administers.
hash256 account_of(const args& a, const session& s, bool allow_admin_option = false);

/// `o` with the transaction hash and block number of `r`.
boost::json::object with_tx(boost::json::object o, const chain::receipt& r);

uint64_t chain_id_of(const session& s);

/// The wallet address of a usage key (its base64 bytes are a secp256k1 key, docs/protocol.md §1).
std::optional<address> usage_key_wallet(const Secret& key);

using command_fn = int(const std::vector<std::string>&);

// chain_write_commands.cpp
command_fn new_account, register_wallet, set_usage_key, remove_usage_key, add_group, update_group, remove_group,
    add_pkp, remove_pkp, add_action, add_action_to_group, remove_action_from_group, convert, deploy;
// chain_read_commands.cpp
command_fn account, list_groups, list_keys, list_wallets, list_actions;

}  // namespace enact::cli::chain_cmd
