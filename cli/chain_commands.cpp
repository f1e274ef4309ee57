// SPDX-License-Identifier: Apache-2.0
// `enact chain …`: the permission registry (docs/protocol.md §3) on-chain, through the SDK's registry_client
// — the ChainSecured owner's side of docs/chainsecured.md. Every command prints one object through
// output.hpp: text, or one JSON line with --json.
//
// Where: --rpc-url URL (else $ENACT_RPC_URL, else $ETH_RPC_URL, else <core URL>/rpc: enact-server's embedded ledger),
// --registry ADDR (else $ENACT_REGISTRY, else the core service's /get_node_chain_config), the
// core service at --url (else $ENACT_URL, else http://127.0.0.1:8080) for the defaults and for
// minting PKPs and usage keys with wallet-signed envelopes. Who: --key-file FILE holding the
// wallet's 0x-hex private key; a file that its group or others may read is refused (it controls
// the account), and keys are never taken from the command line. The account: --account HASH,
// else the one the key's wallet administers (accountByAdmin). A refused write prints
// `enact chain …: <function>: <custom error>(args…) (revert data 0x…)` and exits 1.
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
namespace {

namespace json = boost::json;
namespace reg = chain::registry;

constexpr std::string_view kDefaultUrl = "http://127.0.0.1:8080";

template <class T>
T take(result<T> r) {
  if (!r)
    throw input_error(r.err().message);
  return std::move(r).value();
}

// --- arguments ---------------------------------------------------------------------------------

const std::set<std::string> kCommon = {"rpc-url", "registry", "key-file", "url"};

args parse_args(const std::vector<std::string>& argv, std::set<std::string> options, std::set<std::string> flags = {}) {
  for (const std::string& a : argv)
    for (const std::string_view refused : {"--key", "--private-key"})
      if (a == refused || a.rfind(std::string(refused) + "=", 0) == 0)
        throw usage_error(std::string(refused) +
                          ": private keys are not accepted on the command line (other users can "
                          "read them in the process list); pass --key-file FILE");
  options.insert(kCommon.begin(), kCommon.end());
  return args(argv, std::move(options), std::move(flags));
}

std::string core_url(const args& a) {
  if (auto url = a.get("url"))
    return *url;
  if (const char* env = std::getenv("ENACT_URL"); env != nullptr && *env != '\0')
    return env;
  return std::string(kDefaultUrl);
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

/// The owner's key: a 0x-hex private key in a file only its owner may read.
secret owner_key(const std::string& path) {
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

/// A hashed CID given as 0x + 64 hex, or a CID (hashed as written, docs/protocol.md §1 `hashed_cid`).
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

struct session {
  std::shared_ptr<const chain::rpc_client> rpc;
  std::optional<chain::registry_client> registry;
  std::optional<address> from;  // the key's wallet, when a key file was given
};

/// The node's URL: --rpc-url, else $ENACT_RPC_URL, else $ETH_RPC_URL (the name foundry's cast and
/// other Ethereum tools read).
std::optional<std::string> rpc_url_of(const args& a) {
  if (auto url = a.get("rpc-url"))
    return *url;
  for (const char* name : {"ENACT_RPC_URL", "ETH_RPC_URL"})
    if (const char* env = std::getenv(name); env != nullptr && *env != '\0')
      return std::string(env);
  return std::nullopt;
}

/// Connects to the node and the registry; with `need_key`, --key-file is required.
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

/// --account, else --admin's account, else the account the key's wallet administers.
hash256 account_of(const args& a, const session& s, bool allow_admin_option = false) {
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

json::object tx_json(const chain::receipt& r) {
  return {{"transaction_hash", codec::hex::encode_prefixed(r.transaction_hash)}, {"block_number", r.block_number}};
}

json::object with_tx(json::object o, const chain::receipt& r) {
  for (auto& [k, v] : tx_json(r))
    o[k] = v;
  return o;
}

uint64_t chain_id_of(const session& s) { return take(s.rpc->chain_id()); }

/// The usage key (base64 text, as issued) in a file.
secret usage_key_file(const std::string& path) {
  std::string text = read_input(path);
  const auto begin = text.find_first_not_of(" \t\r\n");
  const auto end = text.find_last_not_of(" \t\r\n");
  if (begin == std::string::npos) {
    detail::secure_wipe(text.data(), text.size());
    throw input_error(path + ": empty key file");
  }
  secret key(as_bytes(std::string_view(text).substr(begin, end - begin + 1)));
  detail::secure_wipe(text.data(), text.size());
  return key;
}

/// The wallet address of a usage key (its base64 bytes are a secp256k1 key, docs/protocol.md §1).
std::optional<address> usage_key_wallet(const secret& key) {
  auto raw = codec::base64::decode(as_chars(key.view()), "usage key");
  if (!raw || raw->size() != 32)
    return std::nullopt;
  const secret k(*raw);
  detail::secure_wipe(raw->data(), raw->size());
  auto pub = crypto::secp256k1::public_key_of(k);
  if (!pub)
    return std::nullopt;
  return crypto::secp256k1::to_address(*pub);
}

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
  std::optional<secret> minted_key;
  if (auto path = a.get("usage-key-file")) {
    const secret key = usage_key_file(*path);
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
    key_hash = crypto::keccak256(as_chars(usage_key_file(*path).view()));
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

// --- reads -------------------------------------------------------------------------------------

int account(const std::vector<std::string>& argv) {
  args a = parse_args(argv, {"account", "admin"});
  a.at_most(0);
  session s = connect(a, false);
  const hash256 h = account_of(a, s, true);
  emit(reg::result_to_json<reg::get_account_call>(take(s.registry->get_account(h))));
  return 0;
}

struct window {
  uint64_t offset = 0;
  uint64_t limit = 100;
};

window window_of(const args& a) {
  window w;
  if (auto v = a.get("offset"))
    w.offset = parse_u64(*v, "--offset");
  if (auto v = a.get("limit"))
    w.limit = parse_u64(*v, "--limit");
  return w;
}

template <class F>
int list(const std::vector<std::string>& argv, bool by_group, F&& read) {
  std::set<std::string> options = {"account", "admin", "offset", "limit"};
  if (by_group)
    options.insert("group");
  args a = parse_args(argv, options);
  a.at_most(0);
  const window w = window_of(a);
  std::optional<uint64_t> group;
  if (auto g = a.get("group"))
    group = parse_u64(*g, "--group");
  session s = connect(a, false);
  const hash256 h = account_of(a, s, true);
  emit(read(*s.registry, h, group, w));
  return 0;
}

int list_groups(const std::vector<std::string>& argv) {
  return list(argv, false, [](chain::registry_client& rc, const hash256& h, std::optional<uint64_t>, const window& w) {
    return reg::result_to_json<reg::list_groups_call>(take(rc.list_groups(h, w.offset, w.limit)));
  });
}

int list_keys(const std::vector<std::string>& argv) {
  return list(argv, false, [](chain::registry_client& rc, const hash256& h, std::optional<uint64_t>, const window& w) {
    return reg::result_to_json<reg::list_usage_api_keys_call>(take(rc.list_usage_api_keys(h, w.offset, w.limit)));
  });
}

/// The wallets the account's usage keys record (setUsageApiKey's wallet), all pages of them.
std::set<address> usage_key_wallets(chain::registry_client& rc, const hash256& account) {
  std::set<address> out;
  constexpr uint64_t kPage = 100;
  for (uint64_t offset = 0;; offset += kPage) {
    const auto page = take(rc.list_usage_api_keys(account, offset, kPage));
    for (const auto& k : page.items)
      if (k.wallet != address{})
        out.insert(k.wallet);
    if (page.items.size() < kPage || u256{offset + page.items.size()} >= page.total)
      return out;
  }
}

int list_wallets(const std::vector<std::string>& argv) {
  return list(argv, true, [](chain::registry_client& rc, const hash256& h, std::optional<uint64_t> g, const window& w) {
    const auto page =
        take(g ? rc.list_wallets_in_group(h, *g, w.offset, w.limit) : rc.list_wallets(h, w.offset, w.limit));
    json::value out = reg::result_to_json<reg::list_wallets_call>(page);
    // A usage key's wallet is registered like a PKP but never signs in a run (the service refuses
    // it, docs/protocol.md §1 "usage key by signature"): labelled from the wallets the account's
    // usage keys record, which is what `chain set-usage-key` writes for a minted key.
    const std::set<address> usage = usage_key_wallets(rc, h);
    json::array& items = out.as_object().at("items").as_array();
    for (size_t i = 0; i < items.size() && i < page.items.size(); ++i)
      items[i].as_object()["usageKeyWallet"] = usage.contains(page.items[i].wallet);
    return out;
  });
}

int list_actions(const std::vector<std::string>& argv) {
  return list(argv, true, [](chain::registry_client& rc, const hash256& h, std::optional<uint64_t> g, const window& w) {
    return reg::result_to_json<reg::list_actions_call>(
        take(g ? rc.list_actions_in_group(h, *g, w.offset, w.limit) : rc.list_actions(h, w.offset, w.limit)));
  });
}

}  // namespace

std::vector<command> chain_commands() {
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
