// SPDX-License-Identifier: Apache-2.0
// `enact chain` writes to the permission registry (docs/protocol.md §3). A refused write prints
// `enact chain …: <function>: <custom error>(args…) (revert data 0x…)` and exits 1.
#include <boost/json.hpp>

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "chain_commands.hpp"
#include "cli.hpp"
#include "output.hpp"
#include "enact/address.hpp"
#include "enact/chain/registry.hpp"
#include "enact/chain/registry_client.hpp"
#include "enact/codec/hex.hpp"
#include "enact/crypto/keccak.hpp"
#include "enact/crypto/secp256k1.hpp"
#include "enact/ipfs/cid.hpp"

namespace enact::cli::chain_cmd {

namespace json = boost::json;
namespace reg = chain::registry;

// --- writes ------------------------------------------------------------------------------------

int new_account(const std::vector<std::string>& argv) {
  args a = parse_args(argv, {"name", "description", "email"});
  a.at_most(0);
  const std::string name = a.require("name");
  session s = connect(a, true);
  const chain::account_created c =
      take(s.registry->new_account(name, a.get("description").value_or(""), a.get("email").value_or("")));
  emit(with_tx({{"account_hash", codec::hex::encode_prefixed(c.account_hash)},
                {"admin", to_checksum_address(*s.from)},
                {"managed", false}},
               c.tx));
  return 0;
}

int register_wallet(const std::vector<std::string>& argv) {
  args a = parse_args(argv, {"account", "wallet", "derivation-path", "name", "description"});
  a.at_most(0);
  const std::string name = a.require("name");
  if (a.get("wallet").has_value() != a.get("derivation-path").has_value())
    throw usage_error("give both --wallet and --derivation-path, or neither (mint a new PKP)");
  session s = connect(a, true);
  const hash256 account = account_of(a, s);
  address wallet{};
  hash256 path{};
  bool minted = false;
  if (auto w = a.get("wallet")) {
    wallet = address_arg(*w, "--wallet");
    path = hash_arg(*a.get("derivation-path"), "--derivation-path");
  } else {
    // POST /create_wallet_with_signature: the wallet's version 2 envelope for the service's
    // deployment, signed now; a service on another chain than the RPC's is chain_id_mismatch.
    const client::minted_wallet m = core(a).create_wallet_with_signature(owner_key(*a.get("key-file")), chain_id_of(s));
    wallet = m.wallet_address;
    path = m.derivation_path;
    minted = true;
  }
  const chain::receipt r =
      take(s.registry->register_wallet_derivation(account, wallet, path, name, a.get("description").value_or("")));
  emit(with_tx({{"account_hash", codec::hex::encode_prefixed(account)},
                {"pkp_id", to_checksum_address(wallet)},
                {"derivation_path", codec::hex::encode_prefixed(path)},
                {"minted", minted}},
               r));
  return 0;
}

const std::set<std::string> kSpecFlags = {"can-create-groups", "can-delete-groups", "can-create-pkps"};

int set_usage_key(const std::vector<std::string>& argv) {
  args a = parse_args(
      argv,
      {"account", "usage-key-file", "usage-key-hash", "wallet", "key-out", "name", "description", "expiration",
       "balance", "manage-ipfs-ids-in-groups", "add-pkp-to-groups", "remove-pkp-from-groups", "execute-in-groups"},
      kSpecFlags);
  a.at_most(0);
  const std::string name = a.require("name");
  const std::string description = a.get("description").value_or("");
  const u256 expiration{a.get("expiration") ? parse_u64(*a.get("expiration"), "--expiration") : 0};
  const u256 balance{a.get("balance") ? parse_u64(*a.get("balance"), "--balance") : 0};
  const scopes::permission_set perms = permissions_of(a);
  const int given = int(a.get("usage-key-file").has_value()) + int(a.get("usage-key-hash").has_value()) +
                    int(a.get("key-out").has_value());
  if (given > 1)
    throw usage_error("give one of --usage-key-file, --usage-key-hash, or --key-out (mint)");
  std::optional<address> wallet;
  if (auto w = a.get("wallet"))
    wallet = address_arg(*w, "--wallet");
  std::optional<key_file> out;
  if (auto path = a.get("key-out"))
    out.emplace(*path, "the key is lost");
  session s = connect(a, true);
  const hash256 account = account_of(a, s);

  hash256 key_hash{};
  json::object o{{"account_hash", codec::hex::encode_prefixed(account)}};
  std::optional<Secret> minted_key;
  if (auto path = a.get("usage-key-file")) {
    const Secret key = read_api_key_file(*path);
    key_hash = crypto::keccak256(as_chars(key.view()));
    if (!wallet)
      wallet = usage_key_wallet(key);
  } else if (auto h = a.get("usage-key-hash")) {
    key_hash = hash_arg(*h, "--usage-key-hash");
  } else {
    // A new key minted for the wallet's envelope (POST /add_usage_api_key_with_signature); its
    // wallet joins the account's registry before the key is set (docs/protocol.md §2).
    client::minted_usage_key m =
        core(a).add_usage_api_key_with_signature(owner_key(*a.get("key-file")), chain_id_of(s));
    key_hash = crypto::keccak256(as_chars(m.usage_api_key.view()));
    wallet = m.wallet_address;
    const chain::receipt reg_tx = take(
        s.registry->register_wallet_derivation(account, m.wallet_address, m.derivation_path, name, "usage key wallet"));
    o["derivation_path"] = codec::hex::encode_prefixed(m.derivation_path);
    o["wallet_transaction_hash"] = codec::hex::encode_prefixed(reg_tx.transaction_hash);
    minted_key = std::move(m.usage_api_key);
  }
  const chain::receipt r =
      wallet ? take(s.registry->set_usage_api_key(account, key_hash, expiration, balance, name, description, perms,
                                                  *wallet))
             : take(s.registry->set_usage_api_key(account, key_hash, expiration, balance, name, description, perms));
  o["usage_key_hash"] = codec::hex::encode_prefixed(key_hash);
  o["wallet_address"] = wallet ? json::value(to_checksum_address(*wallet)) : json::value(nullptr);
  o["permissions"] = json::value_from(perms);
  o = with_tx(std::move(o), r);
  if (minted_key) {
    if (out) {
      out->write(*minted_key);
      o["key_file"] = *a.get("key-out");
    } else {
      // Printing the key is what was asked for (no --key-out); every copy made here is wiped.
      emit_with_key(std::move(o), "usage_api_key", *minted_key);
      return 0;
    }
  }
  emit(o);
  return 0;
}

int remove_usage_key(const std::vector<std::string>& argv) {
  args a = parse_args(argv, {"account", "usage-key-file", "usage-key-hash"});
  a.at_most(0);
  if (a.get("usage-key-file").has_value() == a.get("usage-key-hash").has_value())
    throw usage_error("give exactly one of --usage-key-file and --usage-key-hash");
  hash256 key_hash{};
  if (auto path = a.get("usage-key-file"))
    key_hash = crypto::keccak256(as_chars(read_api_key_file(*path).view()));
  else
    key_hash = hash_arg(*a.get("usage-key-hash"), "--usage-key-hash");
  session s = connect(a, true);
  const hash256 account = account_of(a, s);
  const chain::receipt r = take(s.registry->remove_usage_api_key(account, key_hash));
  emit(with_tx({{"account_hash", codec::hex::encode_prefixed(account)},
                {"usage_key_hash", codec::hex::encode_prefixed(key_hash)}},
               r));
  return 0;
}

json::value group_json(const reg::group_view& g) { return reg::result_to_json<reg::get_group_call>(g); }

int add_group(const std::vector<std::string>& argv) {
  args a = parse_args(argv, {"account", "name", "description", "pkps", "cid-hashes"});
  a.at_most(0);
  const std::string name = a.require("name");
  std::vector<address> pkps;
  std::vector<hash256> cids;
  if (auto v = a.get("pkps"))
    pkps = address_list(*v, "--pkps");
  if (auto v = a.get("cid-hashes"))
    cids = hashed_cid_list(*v, "--cid-hashes");
  session s = connect(a, true);
  const hash256 account = account_of(a, s);
  const chain::group_added g =
      take(s.registry->add_group(account, name, a.get("description").value_or(""), pkps, cids));
  emit(with_tx({{"account_hash", codec::hex::encode_prefixed(account)}, {"group_id", g.group_id}}, g.tx));
  return 0;
}

int update_group(const std::vector<std::string>& argv) {
  args a = parse_args(argv, {"account", "name", "description", "pkps", "cid-hashes"});
  a.at_most(1);
  const uint64_t id = group_arg(a, 0);
  session s = connect(a, true);
  const hash256 account = account_of(a, s);
  // updateGroup replaces everything; what is not given keeps its current value.
  reg::group_view g = take(s.registry->get_group(account, id));
  if (auto v = a.get("name"))
    g.name = *v;
  if (auto v = a.get("description"))
    g.description = *v;
  if (auto v = a.get("pkps"))
    g.pkp_ids = address_list(*v, "--pkps");
  if (auto v = a.get("cid-hashes"))
    g.cid_hashes = hashed_cid_list(*v, "--cid-hashes");
  const chain::receipt r = take(s.registry->update_group(account, id, g.name, g.description, g.pkp_ids, g.cid_hashes));
  emit(with_tx({{"account_hash", codec::hex::encode_prefixed(account)}, {"group", group_json(g)}}, r));
  return 0;
}

/// A write on GROUP_ID of the account: prints the account, the group id and the transaction.
template <class F>
int group_write(const std::vector<std::string>& argv, size_t positionals, F&& write) {
  args a = parse_args(argv, {"account"});
  a.at_most(positionals);
  const uint64_t id = group_arg(a, 0);
  session s = connect(a, true);
  const hash256 account = account_of(a, s);
  const chain::receipt r = take(write(a, *s.registry, account, id));
  emit(with_tx({{"account_hash", codec::hex::encode_prefixed(account)}, {"group_id", id}}, r));
  return 0;
}

int remove_group(const std::vector<std::string>& argv) {
  return group_write(argv, 1, [](const args&, chain::registry_client& rc, const hash256& h, uint64_t id) {
    return rc.remove_group(h, id);
  });
}

int add_pkp(const std::vector<std::string>& argv) {
  return group_write(argv, 2, [](const args& a, chain::registry_client& rc, const hash256& h, uint64_t id) {
    return rc.add_pkp_to_group(h, id, address_arg(a.at(1, "PKP_ID"), "PKP_ID"));
  });
}

int remove_pkp(const std::vector<std::string>& argv) {
  return group_write(argv, 2, [](const args& a, chain::registry_client& rc, const hash256& h, uint64_t id) {
    return rc.remove_pkp_from_group(h, id, address_arg(a.at(1, "PKP_ID"), "PKP_ID"));
  });
}

int add_action_to_group(const std::vector<std::string>& argv) {
  return group_write(argv, 2, [](const args& a, chain::registry_client& rc, const hash256& h, uint64_t id) {
    return rc.add_action_to_group(h, id, hashed_cid_arg(a.at(1, "HASHED_CID|CID"), "HASHED_CID"));
  });
}

int remove_action_from_group(const std::vector<std::string>& argv) {
  return group_write(argv, 2, [](const args& a, chain::registry_client& rc, const hash256& h, uint64_t id) {
    return rc.remove_action_from_group(h, id, hashed_cid_arg(a.at(1, "HASHED_CID|CID"), "HASHED_CID"));
  });
}

int add_action(const std::vector<std::string>& argv) {
  args a = parse_args(argv, {"account", "name", "description"});
  a.at_most(1);
  const std::string cid = a.at(0, "CID");
  if (auto c = ipfs::parse(cid); !c)
    throw usage_error("CID: " + c.err().message);
  const std::string name = a.require("name");
  session s = connect(a, true);
  const hash256 account = account_of(a, s);
  const chain::receipt r = take(s.registry->add_action(account, cid, name, a.get("description").value_or("")));
  emit(with_tx({{"account_hash", codec::hex::encode_prefixed(account)},
                {"action_ipfs_cid", cid},
                {"hashed_cid", codec::hex::encode_prefixed(ipfs::hashed_cid(cid))}},
               r));
  return 0;
}

int convert(const std::vector<std::string>& argv) {
  args a = parse_args(argv, {"account", "new-admin"});
  a.at_most(0);
  std::optional<address> named;
  if (auto v = a.get("new-admin"))
    named = address_arg(*v, "--new-admin");
  session s = connect(a, true);
  // The admin converts only to its own wallet (the registry reverts NewAdminNotSender otherwise):
  // handing an account to another wallet needs that wallet's consent, which only the core
  // service's relay of its ConvertAccount envelope carries. Refused here, before anything is sent.
  const address new_admin = named.value_or(*s.from);
  if (new_admin != *s.from)
    throw input_error("--new-admin " + to_checksum_address(new_admin) + " is not the key's wallet " +
                      to_checksum_address(*s.from) +
                      ": the admin converts an account only to its own address (the registry "
                      "reverts NewAdminNotSender). To hand it to another wallet, that wallet "
                      "signs a ConvertAccount envelope (enact envelope new --type ConvertAccount) "
                      "and the account key sends it to POST /core/v1/convert_to_chain_secured_account");
  const hash256 account = account_of(a, s);
  const chain::receipt r = take(s.registry->convert_to_chain_secured(account, new_admin));
  emit(with_tx({{"account_hash", codec::hex::encode_prefixed(account)},
                {"new_admin_wallet_address", to_checksum_address(new_admin)}},
               r));
  return 0;
}

int deploy(const std::vector<std::string>& argv) {
  args a = parse_args(argv, {"api-payers"});
  a.at_most(0);
  std::vector<address> payers;
  if (auto v = a.get("api-payers"))
    payers = address_list(*v, "--api-payers");
  // No registry yet: --registry is not needed (a placeholder keeps connect() from asking).
  chain::rpc_options o;
  if (auto url = rpc_url_of(a))
    o.url = *url;
  else
    throw usage_error("missing --rpc-url URL (or ENACT_RPC_URL / ETH_RPC_URL) of the node to deploy on");
  auto rpc = chain::rpc_client::create(o);
  if (!rpc)
    throw usage_error("--rpc-url: " + rpc.err().message);
  chain::sender_options so;
  so.poll_interval = std::chrono::milliseconds(50);
  auto sender = take(chain::transaction_sender::create(std::make_shared<const chain::rpc_client>(std::move(*rpc)),
                                                       owner_key(a.require("key-file")), so));
  const chain::receipt r = take(sender.deploy(reg::deployment_data(payers)));
  if (!r.contract_address)
    throw input_error("the deployment's receipt names no contract address");
  json::array list;
  for (const address& p : payers)
    list.emplace_back(to_checksum_address(p));
  emit(with_tx({{"contract_address", to_checksum_address(*r.contract_address)},
                {"owner", to_checksum_address(sender.from())},
                {"api_payers", std::move(list)}},
               r));
  return 0;
}

}  // namespace enact::cli::chain_cmd
