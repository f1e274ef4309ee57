// SPDX-License-Identifier: Apache-2.0
// Attacks across deployments (docs/protocol.md §1 "embedded chain"; docs/security.md "Threat
// model"): with the embedded ledger each server is a chain of its own, so what a wallet signed
// for one deployment must be refused by every other.
//
//   1. Replay a wallet's registry transaction (EIP-155: it names its chain) made for deployment A
//      on deployment B's /rpc, as sent and re-addressed to B's registry.
//   2. Present a wallet-proof envelope made for A (a minting request, an X-Wallet-Auth) to B.
//   3. Sign for chain 31337, the chain id every deployment had before each had its own.
//
// Around the attacks, the rule's edges: the pair each server answers is the one its TEE root
// derives, so servers sharing a root (a fleet) agree; a data directory's record is kept across
// restarts, an explicit chain id is recorded and one that contradicts the record, or a malformed
// record, stops the server; and a data directory with a ledger from before the record keeps chain
// id 31337 and the former fixed registry address, so its wallets' transactions still apply.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "enact/chain/registry.hpp"
#include "enact/chain/rpc.hpp"
#include "enact/chain/transaction.hpp"
#include "enact/crypto/keccak.hpp"
#include "enact/eip712/envelope.hpp"
#include "enact/pkp/pkp.hpp"
#include "steps.hpp"

namespace enact::itest {
namespace {

namespace fs = std::filesystem;
namespace reg = chain::registry;

constexpr uint64_t kOldChainId = 31337;

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  REQUIRE_MESSAGE(f.good(), "cannot read " << path);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

/// The pair docs/protocol.md §1 "embedded chain" derives from the root key of `data_dir`, computed
/// here from the rule as written, with the SDK's server-key derivation.
chain_env derived_from_root(const std::string& data_dir) {
  const std::string raw = read_file(data_dir + "/tee-root.key");
  REQUIRE(raw.size() == 32);
  const Secret root(as_bytes(std::string_view(raw)));
  const Secret key = pkp::server_key(root, "ledger/embedded-chain/v1").value();
  const hash256 id = crypto::keccak256(key.view());
  uint64_t head = 0;
  for (size_t i = 0; i < 8; ++i)
    head = (head << 8) | id[i];
  chain_env e;
  e.chain_id = (uint64_t{1} << 32) + head % ((uint64_t{1} << 52) - (uint64_t{1} << 33));
  std::copy(id.end() - 20, id.end(), e.registry.begin());
  return e;
}

/// The registry address of every data directory from before the record.
address old_registry() {
  const hash256 h = crypto::keccak256(std::string_view("enact/embedded-registry"));
  address a{};
  std::copy(h.begin() + 12, h.end(), a.begin());
  return a;
}

Secret wallet_key(std::string_view label) {
  return Secret(crypto::keccak256("deployments attack " + std::string(label)));
}

address address_of(const Secret& key) {
  return crypto::secp256k1::to_address(crypto::secp256k1::public_key_of(key).value());
}

/// A registry transaction of `key`, signed for `chain_id` and addressed to `registry`.
std::string signed_tx(const Secret& key, uint64_t chain_id, const address& registry, uint64_t nonce,
                      const bytes& data) {
  chain::eip1559_tx tx;
  tx.chain_id = chain_id;
  tx.nonce = nonce;
  tx.max_priority_fee_per_gas = u256{1000000000};
  tx.max_fee_per_gas = u256{3000000000};
  tx.gas_limit = 300000;
  tx.to = registry;
  tx.data = data;
  return chain::rpc::data(chain::sign(tx, key).value());
}

/// The newAccount a wallet sends to create its own ChainSecured account (docs/protocol.md §3).
bytes new_account_of(const Secret& key, std::string_view name) {
  const address from = address_of(key);
  return reg::encode(
      reg::new_account_call{crypto::keccak256(bytes_view(from)), from, false, std::string(name), "", ""});
}

/// One JSON-RPC call on the server's /rpc: its whole response object.
json::object rpc(const server_process& srv, std::string_view method, json::array params = {}) {
  http_client c = srv.client();
  const response r = c.request("POST", "/rpc", chain::rpc::request_body(1, method, std::move(params)));
  REQUIRE_MESSAGE(r.status == 200, r.describe());
  return r.obj();
}

std::string rpc_error(const json::object& answer) {
  const auto* e = answer.if_contains("error");
  return e != nullptr ? std::string(e->at("message").as_string()) : std::string();
}

uint64_t nonce_of(const server_process& srv, const address& a) {
  const json::object r = rpc(srv, "eth_getTransactionCount", {chain::rpc::data(a), "latest"});
  return chain::rpc::parse_quantity_u64(r.at("result")).value();
}

json::object mint_body(const Secret& key, uint64_t chain_id) {
  const auto env =
      eip712::envelope::sign(eip712::envelope::kind::create_wallet, chain_id, key, static_cast<uint64_t>(unix_now()))
          .value();
  return json::object{{"typed_data", env.typed_data}, {"signature", env.signature}};
}

}  // namespace

TEST_CASE("attack: what a wallet signed for one deployment is refused by another") {
  server_process a({"--dev"});
  server_process b({"--dev"});
  const chain_env env_a = env_of(a);
  const chain_env env_b = env_of(b);

  // Two TEE roots, two chains: each the pair its root derives, neither the former common one.
  for (const auto& [srv, env] : {std::pair{&a, env_a}, std::pair{&b, env_b}}) {
    const chain_env want = derived_from_root(srv->data_dir());
    CHECK(env.chain_id == want.chain_id);
    CHECK(env.registry == want.registry);
    CHECK(env.chain_id >= (uint64_t{1} << 32));
    CHECK(env.chain_id < (uint64_t{1} << 52) - (uint64_t{1} << 32));
    CHECK(rpc(*srv, "eth_chainId").at("result") == json::value(chain::rpc::quantity(u256{env.chain_id})));
    CHECK(rpc(*srv, "net_version").at("result") == json::value(std::to_string(env.chain_id)));
  }
  CHECK(env_a.chain_id != env_b.chain_id);
  CHECK(env_a.registry != env_b.registry);

  // 1. A wallet's registry transaction for A applies on A ...
  const Secret wallet = wallet_key("replayed");
  const address from = address_of(wallet);
  const std::string for_a = signed_tx(wallet, env_a.chain_id, env_a.registry, 0, new_account_of(wallet, "on A"));
  const json::object sent = rpc(a, "eth_sendRawTransaction", {for_a});
  REQUIRE_MESSAGE(sent.contains("result"), json::serialize(sent));
  CHECK(nonce_of(a, from) == 1);
  // ... and is refused by B, as sent, and re-addressed to B's registry under A's chain id.
  const json::object replayed = rpc(b, "eth_sendRawTransaction", {for_a});
  CHECK_MESSAGE(rpc_error(replayed).find("invalid chain id") != std::string::npos, json::serialize(replayed));
  const std::string readdressed = signed_tx(wallet, env_a.chain_id, env_b.registry, 0, new_account_of(wallet, "on B"));
  CHECK(rpc_error(rpc(b, "eth_sendRawTransaction", {readdressed})).find("invalid chain id") != std::string::npos);
  // Nothing of it reached B: the wallet's nonce there is untouched and it administers no account.
  CHECK(nonce_of(b, from) == 0);
  {
    http_client cb = b.client();
    check_error_shape(cb.get("/billing/balance", wallet_auth(env_b, wallet)), 401, "unauthenticated");
    http_client ca = a.client();
    ITEST_CHECK_STATUS(ca.get("/billing/balance", wallet_auth(env_a, wallet)), 200);
  }

  // 2. A wallet-proof envelope made for A: accepted by A, refused by B.
  {
    http_client ca = a.client();
    http_client cb = b.client();
    const Secret minter = wallet_key("minter");
    const json::object for_a_env = mint_body(minter, env_a.chain_id);
    ITEST_CHECK_STATUS(ca.post("/create_wallet_with_signature", for_a_env), 200);
    check_error(b, cb.post("/create_wallet_with_signature", for_a_env), 400, "chain_id_mismatch",
                "/core/v1/create_wallet_with_signature");
    check_error(b, cb.get("/billing/balance", wallet_auth(env_a, wallet)), 400, "chain_id_mismatch",
                "/core/v1/billing/balance");

    // 3. Signed for 31337, every deployment's chain before each had its own: refused by both.
    for (const server_process* srv : {&a, &b}) {
      http_client c = srv->client();
      check_error(*srv, c.post("/create_wallet_with_signature", mint_body(minter, kOldChainId)), 400,
                  "chain_id_mismatch", "/core/v1/create_wallet_with_signature");
      const chain_env own = env_of(*srv);
      const std::string old = signed_tx(wallet_key("old chain"), kOldChainId, own.registry, 0,
                                        new_account_of(wallet_key("old chain"), "x"));
      CHECK(rpc_error(rpc(*srv, "eth_sendRawTransaction", {old})).find("invalid chain id") != std::string::npos);
    }
  }
  CHECK(a.stop().clean());
  CHECK(b.stop().clean());
}

TEST_CASE("the embedded chain is the data directory's: shared by one root, recorded, and refused when contradicted") {
  // Servers that share a TEE root (a fleet's, docs/deployment.md "A fleet") derive one chain.
  temp_dir first_dir;
  temp_dir second_dir;
  chain_env first;
  {
    server_process srv({"--dev"}, first_dir.path());
    first = env_of(srv);
    CHECK(srv.stop().clean());
  }
  for (const char* file : {"tee-root.key", "key-derivation"}) {
    fs::copy_file(first_dir.path() + "/" + file, second_dir.path() + "/" + file);
    fs::permissions(second_dir.path() + "/" + file, fs::perms::owner_read | fs::perms::owner_write,
                    fs::perm_options::replace);
  }
  {
    server_process srv({"--dev"}, second_dir.path());
    const chain_env second = env_of(srv);
    CHECK(second.chain_id == first.chain_id);
    CHECK(second.registry == first.registry);
    CHECK(srv.stop().clean());
  }
  // The record: two lines, read back on the next start.
  CHECK(read_file(first_dir.path() + "/embedded-chain") ==
        "chain_id " + std::to_string(first.chain_id) + "\nregistry " + to_checksum_address(first.registry) + "\n");

  // An explicit chain id is recorded for a new directory and kept without the flag; one that
  // contradicts the record stops the server, naming the record.
  temp_dir fixed_dir;
  {
    server_process srv({"--chain-id", "4242"}, fixed_dir.path());
    CHECK(env_of(srv).chain_id == 4242);
    CHECK(srv.stop().clean());
  }
  {
    server_process srv({}, fixed_dir.path());
    CHECK(env_of(srv).chain_id == 4242);
    CHECK(srv.stop().clean());
  }
  {
    server_process srv({"--chain-id", "4242"}, fixed_dir.path());
    CHECK(srv.stop().clean());
  }
  const finished_run contradicted =
      run_to_exit({"--listen", "127.0.0.1:0", "--data-dir", fixed_dir.path(), "--chain-id", "4243"});
  CHECK(contradicted.status.code == 1);
  CHECK(contradicted.stderr_text.find("contradicts " + fixed_dir.path() + "/embedded-chain") != std::string::npos);
  CHECK(contradicted.stdout_text.find("listening on") == std::string::npos);
  const finished_run other_registry = run_to_exit({"--listen", "127.0.0.1:0", "--data-dir", fixed_dir.path(),
                                                   "--chain-contract-address", to_checksum_address(old_registry())});
  CHECK(other_registry.status.code == 1);
  CHECK(other_registry.stderr_text.find("contradicts") != std::string::npos);

  // A record that is not the server's two lines stops it; nothing is rewritten.
  for (const std::string& bad :
       {std::string("chain_id 4242\n"), std::string("chain_id 04242\nregistry 0x") + std::string(40, '1') + "\n",
        std::string("chain_id 4242\nregistry 0x") + std::string(40, '0') + "\n"}) {
    INFO(bad);
    { std::ofstream(fixed_dir.path() + "/embedded-chain", std::ios::binary | std::ios::trunc) << bad; }
    const finished_run run = run_to_exit({"--listen", "127.0.0.1:0", "--data-dir", fixed_dir.path()});
    CHECK(run.status.code == 1);
    CHECK_MESSAGE(run.stderr_text.find("embedded-chain is malformed") != std::string::npos, run.stderr_text);
    CHECK(read_file(fixed_dir.path() + "/embedded-chain") == bad);
  }
}

TEST_CASE("a data directory with a ledger from before the record keeps chain id 31337 and the fixed registry") {
  // The state the previous release leaves: a ledger and its /rpc chain on chain 31337 at the fixed
  // address, and no record. Made here by a server told those values, whose record is then removed.
  temp_dir dir;
  const Secret wallet = wallet_key("old wallet");
  const address from = address_of(wallet);
  {
    server_process srv({"--chain-id", "31337", "--chain-contract-address", to_checksum_address(old_registry())},
                       dir.path());
    const json::object sent = rpc(srv, "eth_sendRawTransaction",
                                  {signed_tx(wallet, kOldChainId, old_registry(), 0, new_account_of(wallet, "old"))});
    REQUIRE_MESSAGE(sent.contains("result"), json::serialize(sent));
    CHECK(srv.stop().clean());
  }
  fs::remove(dir.path() + "/embedded-chain");
  REQUIRE(fs::exists(dir.path() + "/ledger.sqlite"));

  server_process srv({"--dev"}, dir.path());
  const chain_env env = env_of(srv);
  CHECK(env.chain_id == kOldChainId);
  CHECK(env.registry == old_registry());
  CHECK(read_file(dir.path() + "/embedded-chain") ==
        "chain_id 31337\nregistry " + to_checksum_address(old_registry()) + "\n");
  // The wallet's account and its next transaction, signed for 31337, still apply.
  CHECK(nonce_of(srv, from) == 1);
  const json::object next =
      rpc(srv, "eth_sendRawTransaction",
          {signed_tx(wallet, kOldChainId, old_registry(), 1,
                     reg::encode(reg::add_group_call{crypto::keccak256(bytes_view(from)), "g", "", {}, {}}))});
  CHECK_MESSAGE(next.contains("result"), json::serialize(next));
  CHECK(nonce_of(srv, from) == 2);
  http_client c = srv.client();
  ITEST_CHECK_STATUS(c.get("/billing/balance", wallet_auth(env, wallet)), 200);
  CHECK(srv.stop().clean());
}

}  // namespace enact::itest
