// SPDX-License-Identifier: Apache-2.0
// `enact chain …`: the permission registry (docs/protocol.md §3) on-chain through the SDK's
// registry_client, the ChainSecured owner's side of docs/chainsecured.md; docs/cli.md says where the
// node, the registry and the key come from.
#include <sys/stat.h>

#include <boost/json.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cli.hpp"
#include "chain_commands.hpp"
#include "commands.hpp"
#include "output.hpp"
#include "enact/chain/client.hpp"
#include "enact/chain/registry.hpp"
#include "enact/chain/registry_client.hpp"
#include "enact/client/core_client.hpp"
#include "enact/codec/base64.hpp"
#include "enact/codec/hex.hpp"
#include "enact/address.hpp"
#include "enact/crypto/keccak.hpp"
#include "enact/crypto/secp256k1.hpp"
#include "enact/ipfs/cid.hpp"

#include <fcntl.h>
#include <unistd.h>

namespace enact::cli {
namespace chain_cmd {

namespace json = boost::json;

// --- arguments ---------------------------------------------------------------------------------

namespace {

constexpr std::string_view kDefaultUrl = "http://127.0.0.1:8080";

const std::set<std::string> kCommon = {"rpc-url", "registry", "key-file", "url"};

std::string core_url(const args& a) {
  if (auto url = a.get("url"))
    return *url;
  if (const char* env = std::getenv("ENACT_URL"); env != nullptr && *env != '\0')
    return env;
  return std::string(kDefaultUrl);
}

json::object tx_json(const chain::receipt& r) {
  return {{"transaction_hash", codec::hex::encode_prefixed(r.transaction_hash)}, {"block_number", r.block_number}};
}

}  // namespace

args parse_args(const std::vector<std::string>& argv, std::set<std::string> options, std::set<std::string> flags) {
  for (const std::string& a : argv)
    for (const std::string_view refused : {"--key", "--private-key"})
      if (a == refused || a.rfind(std::string(refused) + "=", 0) == 0)
        throw usage_error(std::string(refused) +
                          ": private keys are not accepted on the command line (other users can "
                          "read them in the process list); pass --key-file FILE");
  options.insert(kCommon.begin(), kCommon.end());
  return args(argv, std::move(options), std::move(flags));
}

client::core_client core(const args& a) {
  client::client_options o;
  o.base_url = core_url(a);
  try {
    return client::core_client(std::move(o));
  } catch (const api_error& e) {
    throw usage_error("--url: " + e.message());
  }
}

Secret owner_key(const std::string& path) {
  struct stat st {};
  if (path != "-") {
    if (::stat(path.c_str(), &st) != 0)
      throw input_error(path + ": cannot open file");
    if ((st.st_mode & 077) != 0) {
      char mode[8];
      std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
      throw input_error(path + ": the key file is readable by its group or others (mode " + mode +
                        "); it controls the account: chmod 600 " + path);
    }
  }
  return read_key_file(path);
}

address address_arg(const std::string& text, std::string_view what) {
  auto r = parse_address(text, what);
  if (!r)
    throw usage_error(r.err().message);
  return *r;
}

hash256 hash_arg(const std::string& text, std::string_view what) {
  auto h = codec::hex::decode_fixed<32>(text, what);
  if (!h)
    throw usage_error(h.err().message + " (expected 0x + 64 hex digits)");
  return *h;
}

hash256 hashed_cid_arg(const std::string& text, std::string_view what) {
  if (codec::hex::detail::has_prefix(text))
    return hash_arg(text, what);
  if (auto c = ipfs::parse(text); !c)
    throw usage_error(std::string(what) + ": expected 0x + 64 hex digits or a CID (" + c.err().message + ")");
  return ipfs::hashed_cid(text);
}

std::vector<address> address_list(const std::string& text, std::string_view what) {
  return parse_list(text, [&](const std::string& item) { return address_arg(item, what); });
}

std::vector<hash256> hashed_cid_list(const std::string& text, std::string_view what) {
  return parse_list(text, [&](const std::string& item) { return hashed_cid_arg(item, what); });
}

uint64_t group_arg(const args& a, size_t i) { return parse_u64(a.at(i, "GROUP_ID"), "GROUP_ID"); }

// --- the registry --------------------------------------------------------------------------------

std::optional<std::string> rpc_url_of(const args& a) {
  if (auto url = a.get("rpc-url"))
    return *url;
  for (const char* name : {"ENACT_RPC_URL", "ETH_RPC_URL"})
    if (const char* env = std::getenv(name); env != nullptr && *env != '\0')
      return std::string(env);
  return std::nullopt;
}

session connect(const args& a, bool need_key) {
  chain::rpc_options o;
  o.url = rpc_url_of(a).value_or(core_url(a) + "/rpc");
  auto rpc = chain::rpc_client::create(o);
  if (!rpc)
    throw usage_error("--rpc-url: " + rpc.err().message);
  session s;
  s.rpc = std::make_shared<const chain::rpc_client>(std::move(*rpc));

  address registry{};
  if (auto r = a.get("registry"))
    registry = address_arg(*r, "--registry");
  else if (const char* env = std::getenv("ENACT_REGISTRY"); env != nullptr && *env != '\0')
    registry = address_arg(env, "ENACT_REGISTRY");
  else
    registry = core(a).get_node_chain_config().contract_address;

  const auto path = a.get("key-file");
  if (!path) {
    if (need_key)
      throw usage_error("missing --key-file FILE (the wallet's 0x-hex private key)");
    s.registry.emplace(s.rpc, registry);
    return s;
  }
  chain::sender_options so;
  so.poll_interval = std::chrono::milliseconds(50);
  s.registry.emplace(take(chain::registry_client::create(s.rpc, registry, owner_key(*path), so)));
  s.from = s.registry->sender_address();
  return s;
}

hash256 account_of(const args& a, const session& s, bool allow_admin_option) {
  if (auto h = a.get("account"))
    return hash_arg(*h, "--account");
  std::optional<address> admin = s.from;
  if (allow_admin_option)
    if (auto x = a.get("admin"))
      admin = address_arg(*x, "--admin");
  if (!admin)
    throw usage_error("give --account HASH, or --key-file FILE of the account's admin wallet");
  auto v = s.registry->account_by_admin(*admin);
  if (!v) {
    if (v.code() == registry_errc::unknown_account)
      throw input_error(to_checksum_address(*admin) +
                        " administers no account (create one with `enact chain new-account`, or "
                        "give --account HASH)");
    throw input_error(v.err().message);
  }
  return v->account_hash;
}

json::object with_tx(json::object o, const chain::receipt& r) {
  for (auto& [k, v] : tx_json(r))
    o[k] = v;
  return o;
}

uint64_t chain_id_of(const session& s) { return take(s.rpc->chain_id()); }

/// The wallet address of a usage key (its base64 bytes are a secp256k1 key, docs/protocol.md §1).
std::optional<address> usage_key_wallet(const Secret& key) {
  auto raw = codec::base64::decode(as_chars(key.view()), "usage key");
  if (!raw || raw->size() != 32)
    return std::nullopt;
  const Secret k(*raw);
  detail::secure_wipe(raw->data(), raw->size());
  auto pub = crypto::secp256k1::public_key_of(k);
  if (!pub)
    return std::nullopt;
  return crypto::secp256k1::to_address(*pub);
}
}  // namespace chain_cmd

std::vector<command> chain_commands() {
  using namespace chain_cmd;
  const std::string g = " --key-file K [--account HASH] [--rpc-url URL] [--registry ADDR] [--url URL]";
  const std::string r =
      " [--account HASH | --admin ADDR | --key-file K] [--rpc-url URL] "
      "[--registry ADDR] [--url URL]";
  const std::string window = " [--offset N] [--limit N]";
  const std::string perms =
      " [--can-create-groups] [--can-delete-groups] [--can-create-pkps] "
      "[--manage-ipfs-ids-in-groups IDS] [--add-pkp-to-groups IDS] [--remove-pkp-from-groups IDS] "
      "[--execute-in-groups IDS]";
  return {
      {"chain new-account",
       "--name N [--description D] [--email E] --key-file K [--rpc-url URL] [--registry ADDR] "
       "[--url URL]",
       "create the key's ChainSecured account on-chain (apiKeyHash = keccak256(admin))", new_account},
      {"chain register-wallet", "--name N [--description D] [--wallet ADDR --derivation-path 0x...]" + g,
       "registerWalletDerivation; without --wallet, first mints a PKP for the key's signature", register_wallet},
      {"chain set-usage-key",
       "--name N [--description D] [--expiration UNIX] [--balance N]" + perms +
           " [--usage-key-file F | --usage-key-hash H [--wallet ADDR] | --key-out FILE]" + g,
       "setUsageApiKey (IDS: comma-separated group ids, 'all' = 0); without a key, mints one, "
       "registers its wallet and prints it once (or writes it 0600 to --key-out)",
       set_usage_key},
      {"chain remove-usage-key", "--usage-key-file F | --usage-key-hash H" + g, "removeUsageApiKey", remove_usage_key},
      {"chain add-group", "--name N [--description D] [--pkps A,B] [--cid-hashes H|CID,...]" + g,
       "addGroup; prints the new group id", add_group},
      {"chain update-group", "GROUP_ID [--name N] [--description D] [--pkps A,B] [--cid-hashes H|CID,...]" + g,
       "updateGroup; fields not given keep their current value", update_group},
      {"chain remove-group", "GROUP_ID" + g, "removeGroup", remove_group},
      {"chain add-pkp", "GROUP_ID PKP_ID" + g, "addPkpToGroup", add_pkp},
      {"chain remove-pkp", "GROUP_ID PKP_ID" + g, "removePkpFromGroup", remove_pkp},
      {"chain add-action", "CID --name N [--description D]" + g, "addAction (action metadata)", add_action},
      {"chain add-action-to-group", "GROUP_ID HASHED_CID|CID" + g, "addActionToGroup", add_action_to_group},
      {"chain remove-action-from-group", "GROUP_ID HASHED_CID|CID" + g, "removeActionFromGroup",
       remove_action_from_group},
      {"chain convert", "[--new-admin ADDR]" + g,
       "convertToChainSecured from the admin wallet to itself (one-way); --new-admin, when given, "
       "must be the key's own wallet (another wallet consents through "
       "/convert_to_chain_secured_account)",
       convert},
      {"chain account", r.substr(1), "getAccount: the account's admin, mode, balance, wallets", account},
      {"chain list-groups", window.substr(1) + r, "listGroups", list_groups},
      {"chain list-keys", window.substr(1) + r, "listUsageApiKeys", list_keys},
      {"chain list-wallets", "[--group ID]" + window + r,
       "listWallets / listWalletsInGroup; usageKeyWallet marks a wallet a usage key records", list_wallets},
      {"chain list-actions", "[--group ID]" + window + r, "listActions / listActionsInGroup", list_actions},
      {"chain deploy", "--rpc-url URL --key-file K [--api-payers A,B]",
       "deploy the registry (anvil, a public chain); the key's wallet becomes its owner", deploy},
  };
}

}  // namespace enact::cli
