// SPDX-License-Identifier: Apache-2.0
#include "app/ledger_backend.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string_view>
#include <vector>

#include "core/errors.hpp"
#include "enact/chain/client.hpp"
#include "enact/chain/registry.hpp"
#include "enact/codec/hex.hpp"
#include "enact/address.hpp"
#include "enact/crypto/keccak.hpp"
#include "ledger/evm_ledger.hpp"
#include "ledger/pg_nonce_lock.hpp"
#include "metering/pg_store.hpp"

namespace enact::app {
namespace {

using std::chrono::milliseconds;

error usage(std::string msg) { return fail(api_errc::invalid_request, std::move(msg)); }

// The server waits this long for a node's answer, and for a write's receipt; a write without a
// receipt after kReplaceAfter is sent again with a higher fee (evm_ledger.hpp, key_signer).
constexpr milliseconds kRpcTimeout{10000};
constexpr milliseconds kReceiptTimeout{180000};
constexpr milliseconds kReplaceAfter{45000};
constexpr unsigned kMaxReplacements = 3;

/// The PostgreSQL database the instances of a fleet share, or empty when there is none.
std::string fleet_database(const settings& s) {
  if (metering::is_postgres_url(s.metering_store))
    return s.metering_store;
  if (metering::is_postgres_url(s.triggers.store))
    return s.triggers.store;
  return {};
}

}  // namespace

result<std::unique_ptr<ledger::permission_ledger>> open_evm_ledger(const settings& s, const tee::tee& t,
                                                                   const address& payer, core::logger& log) {
  if (s.rpc_url.empty())
    return usage("--rpc-url: required with --ledger evm");
  if (s.core.contract_address == address{})
    return usage(
        "--registry-address: required with --ledger evm (deploy a registry with `enact-server "
        "deploy-registry`)");
  chain::rpc_options ro;
  ro.url = s.rpc_url;
  ro.timeout = kRpcTimeout;
  auto client = chain::rpc_client::create(ro);
  if (!client)
    return usage("--rpc-url: " + client.err().message);
  auto rpc = std::make_shared<chain::rpc_client>(std::move(*client));
  ENACT_TRY(Secret key, t.server_signing_key(api_payer_purpose(0)));
  std::vector<Secret> keys;
  keys.push_back(std::move(key));
  chain::sender_options so;
  so.receipt_timeout = kReceiptTimeout;
  so.replace_after = kReplaceAfter;
  so.max_replacements = kMaxReplacements;
  // A fleet relays with one api payer from every instance: with a shared PostgreSQL database (the
  // metering store's, else the trigger store's), the instances take turns per nonce
  // (ledger/pg_nonce_lock.hpp) instead of each counting its own.
  if (const std::string db = fleet_database(s); !db.empty())
    so.shared_nonces = ledger::pg_nonce_lock(db);
  ENACT_TRY(std::unique_ptr<ledger::key_signer> signer, ledger::key_signer::create(rpc, std::move(keys), so));

  ledger::evm_options o;
  o.rpc_url = s.rpc_url;
  o.registry = s.core.contract_address;
  o.chain_id = s.core.chain_id;
  o.rpc_timeout = kRpcTimeout;
  o.cache = s.ledger_cache;
  auto l = ledger::open_evm(o, {std::shared_ptr<ledger::tx_signer>(std::move(signer))});
  if (!l) {
    if (l.code() == ledger_errc::invalid_argument)
      return usage("--ledger evm: " + l.err().message);
    return error{l.code(), "ledger: " + l.err().message};
  }
  const std::vector<address> payers = (*l)->api_payers();
  if (std::find(payers.begin(), payers.end(), payer) == payers.end())
    return usage("--ledger evm: the server's api payer " + to_checksum_address(payer) +
                 " is not an api payer of registry " + to_checksum_address(o.registry) +
                 ": its owner adds it with setApiPayer(" + to_checksum_address(payer) +
                 ", true), or deploy a registry for this data directory with `enact-server "
                 "deploy-registry`");
  // An api payer without ether cannot pay for a write; each would fail with 503.
  if (auto wei = rpc->balance(payer); wei && *wei == u256{})
    log.warn("the api payer has no ether for gas: relayed writes will fail until it is funded",
             {{"api_payer", to_checksum_address(payer)}});
  log.info("evm ledger", {{"registry", to_checksum_address(o.registry)},
                          {"chain_id", o.chain_id},
                          {"deployment_block", (*l)->deployment_block()},
                          {"cache", o.cache}});
  return std::unique_ptr<ledger::permission_ledger>(std::move(*l));
}

namespace {

constexpr const char* kDeployUsage =
    "usage: enact-server deploy-registry --rpc-url URL --key-file FILE [--api-payer ADDR]...\n"
    "                                    [--data-dir DIR] [--tee simulated|dstack]\n"
    "                                    [--dstack-socket PATH] [--tee-allow-unstable-keys]\n\n"
    "Deploys the permission registry (contracts/) from the key in FILE (0x-hex;\n"
    "that wallet becomes the registry's owner), with the api payer of the data directory's TEE\n"
    "(default ./enact-data) and each --api-payer as api payers, and prints its address. Start\n"
    "the server on it with --ledger evm --rpc-url URL --registry-address ADDR --chain-id ID.\n";

int deploy_error(const std::string& msg, int code) {
  std::fprintf(stderr, "enact-server deploy-registry: %s\n", msg.c_str());
  return code;
}

/// The private key in `path`: 32 bytes as hex, with or without 0x, surrounding space ignored. The
/// file's text is wiped after use and never quoted in a message.
result<Secret> read_key_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f)
    return usage("--key-file: cannot read " + path);
  std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::string_view v(text);
  const auto b = v.find_first_not_of(" \t\r\n");
  const auto e = v.find_last_not_of(" \t\r\n");
  v = b == std::string_view::npos ? std::string_view() : v.substr(b, e - b + 1);
  if (v.starts_with("0x") || v.starts_with("0X"))
    v.remove_prefix(2);
  Secret out;
  if (v.size() == 64) {
    if (auto key = codec::hex::decode(v, "--key-file"); key) {
      out = Secret(*key);
      std::fill(key->begin(), key->end(), 0);
    }
  }
  std::fill(text.begin(), text.end(), '\0');
  if (out.size() != 32)
    return usage("--key-file: " + path + " does not hold a 32-byte private key in hex");
  return out;
}

}  // namespace

std::string api_payer_purpose(int index) { return "api-payer/" + std::to_string(index); }

std::string ledger_banner(const settings& s) {
  if (s.ledger == "evm")
    return "evm registry " + to_checksum_address(s.core.contract_address) + " on chain " +
           std::to_string(s.core.chain_id);
  return "embedded SQLite";
}

int deploy_registry_command(int argc, char** argv) {
  std::string rpc_url, key_file, data_dir = "./enact-data", tee_kind = "simulated";
  std::string dstack_socket;  // empty: looked up as dstack's SDKs do
  bool allow_unstable_keys = false;
  std::vector<address> extra;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::fputs(kDeployUsage, stdout);
      return 0;
    }
    if (a == "--tee-allow-unstable-keys") {
      allow_unstable_keys = true;
      continue;
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "enact-server deploy-registry: %s: missing value\n%s", a.c_str(), kDeployUsage);
      return 2;
    }
    const std::string v = argv[++i];
    if (a == "--rpc-url") {
      rpc_url = v;
    } else if (a == "--key-file") {
      key_file = v;
    } else if (a == "--data-dir") {
      data_dir = v;
    } else if (a == "--tee") {
      tee_kind = v;
    } else if (a == "--dstack-socket") {
      dstack_socket = v;
    } else if (a == "--api-payer") {
      auto p = parse_address(v, "--api-payer");
      if (!p)
        return deploy_error(p.err().message, 2);
      extra.push_back(*p);
    } else {
      std::fprintf(stderr, "enact-server deploy-registry: unknown option '%s'\n%s", a.c_str(), kDeployUsage);
      return 2;
    }
  }
  if (rpc_url.empty() || key_file.empty()) {
    std::fprintf(stderr, "enact-server deploy-registry: --rpc-url and --key-file are required\n%s", kDeployUsage);
    return 2;
  }
  if (tee_kind != "simulated" && tee_kind != "dstack")
    return deploy_error("--tee: expected simulated or dstack", 2);
  auto key = read_key_file(key_file);
  if (!key)
    return deploy_error(key.err().message, 2);

  result<std::unique_ptr<tee::tee>> t = fail(api_errc::internal, "no TEE");
  if (tee_kind == "dstack") {
    tee::dstack_options o;
    o.socket = dstack_socket;
    o.allow_unstable_keys = allow_unstable_keys;
    t = tee::open_dstack(o);
  } else {
    if (::mkdir(data_dir.c_str(), 0700) != 0 && errno != EEXIST)
      return deploy_error("cannot create " + data_dir + ": " + std::strerror(errno), 1);
    if (auto claimed = tee::claim_data_dir(data_dir); !claimed)
      return deploy_error(claimed.err().message, 1);
    t = tee::open_simulated(data_dir);
  }
  if (!t)
    return deploy_error("TEE: " + t.err().message, 1);
  auto payer = (*t)->server_address(api_payer_purpose(0));
  if (!payer)
    return deploy_error(payer.err().message, 1);
  std::vector<address> payers = {*payer};
  for (const address& a : extra)
    if (std::find(payers.begin(), payers.end(), a) == payers.end())
      payers.push_back(a);

  chain::rpc_options ro;
  ro.url = rpc_url;
  ro.timeout = kRpcTimeout;
  auto client = chain::rpc_client::create(ro);
  if (!client)
    return deploy_error("--rpc-url: " + client.err().message, 2);
  auto rpc = std::make_shared<chain::rpc_client>(std::move(*client));
  auto chain_id = rpc->chain_id();
  if (!chain_id)
    return deploy_error(chain_id.err().message, 1);
  chain::sender_options so;
  so.receipt_timeout = kReceiptTimeout;
  so.replace_after = kReplaceAfter;
  so.max_replacements = kMaxReplacements;
  auto sender = chain::transaction_sender::create(rpc, std::move(*key), so);
  if (!sender)
    return deploy_error("--key-file: not a valid secp256k1 private key", 2);
  auto r = sender->deploy(chain::registry::deployment_data(payers));
  if (!r)
    return deploy_error(r.err().message, 1);
  std::string list;
  for (const address& a : payers)
    list += (list.empty() ? "" : ", ") + to_checksum_address(a);
  std::fprintf(stderr,
               "enact-server deploy-registry: PermissionRegistry at %s, block %llu, transaction "
               "%s, chain %llu; owner %s; api payers %s\n"
               "  the api payer %s pays the gas of relayed writes: fund it\n",
               to_checksum_address(*r->contract_address).c_str(), static_cast<unsigned long long>(r->block_number),
               codec::hex::encode_prefixed(r->transaction_hash).c_str(), static_cast<unsigned long long>(*chain_id),
               to_checksum_address(sender->from()).c_str(), list.c_str(), to_checksum_address(*payer).c_str());
  std::printf("%s\n", to_checksum_address(*r->contract_address).c_str());
  return 0;
}

}  // namespace enact::app
