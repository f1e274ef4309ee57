// SPDX-License-Identifier: Apache-2.0
// enact-server on the evm ledger (docs/architecture.md §4 "Permission ledger"): anvil, a registry deployed by
// `enact-server deploy-registry` for the data directory's api payer, the server started with
// --ledger evm; then the API-mode scenario end to end (account, usage key, wallet, group, action,
// run) with its state read back from the chain through the SDK's rpc_client, the answer of a
// node that went away, and the configurations the server refuses to start with (exit 2).
#include <doctest/doctest.h>

#include <fstream>
#include <string>
#include <vector>

#include "anvil_process.hpp"
#include "enact/chain/client.hpp"
#include "enact/chain/registry.hpp"
#include "steps.hpp"

namespace enact::itest {
namespace {

namespace reg = chain::registry;
using enact::test::anvil_process;

constexpr std::string_view kCode =
    "var sig = Enact.signEcdsa({pkpId: params.pkp, digest: params.digest, name: \"main\"});\n"
    "Enact.setResponse({address: Enact.getAddress({pkpId: params.pkp})});\n";

std::shared_ptr<chain::rpc_client> client_of(const anvil_process& node) {
  chain::rpc_options o;
  o.url = node.url();
  return std::make_shared<chain::rpc_client>(o);
}

/// A file holding dev key `i` as hex, as an operator's key file would.
std::string key_file(const temp_dir& dir, size_t i) {
  const std::string path = dir.path() + "/deployer.key";
  std::ofstream f(path);
  f << codec::hex::encode_prefixed(anvil_process::dev_private_keys().at(i)) << "\n";
  return path;
}

template <class Call>
typename Call::result_type view(const chain::rpc_client& rpc, const address& registry, const Call& c) {
  auto r = rpc.call(registry, reg::encode(c));
  REQUIRE_MESSAGE(r.has_value(), (r ? "" : r.err().message));
  auto v = reg::decode_result<Call>(*r);
  REQUIRE(v.has_value());
  return std::move(*v);
}

hash256 hash_of(const std::string& hex_text) { return codec::hex::decode_fixed<32>(hex_text).value(); }

/// `enact-server deploy-registry` on `node` with dev key 0 for the api payer of `data_dir`, which
/// must succeed; the first line it prints (the registry's checksummed address).
std::string deploy_registry(const anvil_process& node, const temp_dir& keys, const std::string& data_dir) {
  const finished_run deployed = run_to_exit(
      {"deploy-registry", "--rpc-url", node.url(), "--key-file", key_file(keys, 0), "--data-dir", data_dir});
  REQUIRE_MESSAGE(deployed.status.clean(), deployed.stderr_text);
  return deployed.stdout_text.substr(0, deployed.stdout_text.find('\n'));
}

/// anvil, and a registry `enact-server deploy-registry` put there for a fresh data directory.
struct deployed_chain {
  anvil_process node;
  temp_dir keys;
  temp_dir data;
  std::string data_dir = data.path() + "/data";
  std::string registry = deploy_registry(node, keys, data_dir);
};

}  // namespace

TEST_CASE("evm ledger: deploy-registry, then the API-mode scenario with its state on-chain") {
  deployed_chain chain;
  auto& [node, keys, data, data_dir, registry_text] = chain;
  const address registry = parse_address(registry_text).value();
  CHECK(registry_text == to_checksum_address(registry));
  const auto rpc = client_of(node);
  const std::vector<address> payers = view(*rpc, registry, reg::api_payers_call{});
  REQUIRE(payers.size() == 1);
  CHECK(view(*rpc, registry, reg::owner_call{}) == anvil_process::dev_addresses()[0]);
  // The api payer pays for gas: the operator funds it.
  (void)node.rpc("anvil_setBalance", {codec::hex::encode_prefixed(payers[0]), "0x3635c9adc5dea00000"});

  server_process srv({"--dev", "--sandbox-workers", "2", "--ledger", "evm", "--rpc-url", node.url(),
                      "--registry-address", registry_text, "--chain-id", "31337"},
                     data_dir);
  http_client c = srv.client();

  const response config = c.get("/get_node_chain_config");
  ITEST_REQUIRE_STATUS(config, 200);
  CHECK(s_of(config.body, "contract_address") == registry_text);
  CHECK(u_of(config.body, "chain_id") == 31337);
  const response api_payers = c.get("/get_api_payers");
  ITEST_REQUIRE_STATUS(api_payers, 200);
  REQUIRE(api_payers.obj().at("api_payers").as_array().size() == 1);
  CHECK(api_payers.obj().at("api_payers").as_array()[0].as_string() == to_checksum_address(payers[0]));

  // API mode end to end.
  const account_keys acct = create_account(c, "evm scenario");
  const response w = c.post("/create_wallet", json::object{{"name", "signer"}}, acct.auth());
  ITEST_REQUIRE_STATUS(w, 200);
  const std::string pkp = s_of(w.body, "pkp_id");
  const std::string cid = cid_of_code(kCode);
  const response added = c.post("/add_action", json::object{{"action_ipfs_cid", cid}, {"name", "sign"}}, acct.auth());
  ITEST_REQUIRE_STATUS(added, 200);
  const response g = c.post("/add_group",
                            json::object{{"name", "runners"},
                                         {"pkp_ids_permitted", json::array{json::string(pkp)}},
                                         {"cid_hashes_permitted", json::array{json::string(hashed_cid_hex(cid))}}},
                            acct.auth());
  ITEST_REQUIRE_STATUS(g, 200);
  const uint64_t group = u_of(g.body, "group_id");
  CHECK(group == 1);
  const usage_keys key = create_usage_key(c, acct.auth(), json::object{{"execute_in_groups", json::array{group}}});
  CHECK(buy_credits(c, acct.auth(), 500) == 500);
  const response ran =
      c.post("/run_action",
             json::object{{"code", kCode},
                          {"pkp_id", pkp},
                          {"params", json::object{{"pkp", pkp}, {"digest", "0x" + std::string(64, '1')}}}},
             key.auth());
  ITEST_REQUIRE_STATUS(ran, 200);
  CHECK(ran.obj().at("response").at("address").as_string() == pkp);
  CHECK(ran.obj().at("signatures").as_object().contains("main"));
  CHECK(balance_of(c, acct.auth()) == 499);

  // The same state, read from the chain.
  const hash256 account_hash = hash_of(acct.api_key_hash);
  const reg::account_view on_chain = view(*rpc, registry, reg::get_account_call{account_hash});
  CHECK(on_chain.managed);
  CHECK(to_checksum_address(on_chain.admin) == acct.wallet_address);
  CHECK(on_chain.name == "evm scenario");
  // Credits live in the metering store (499 above), not on the chain: the registry's account
  // record has no balance, and the run wrote nothing there.
  CHECK(on_chain.wallet_count == u256{1});
  const reg::group_view on_chain_group = view(*rpc, registry, reg::get_group_call{account_hash, group});
  CHECK(on_chain_group.name == "runners");
  REQUIRE(on_chain_group.pkp_ids.size() == 1);
  CHECK(to_checksum_address(on_chain_group.pkp_ids[0]) == pkp);
  REQUIRE(on_chain_group.cid_hashes.size() == 1);
  CHECK(codec::hex::encode_prefixed(on_chain_group.cid_hashes[0]) == hashed_cid_hex(cid));
  const reg::usage_key_view on_chain_key = view(*rpc, registry, reg::get_usage_api_key_call{hash_of(key.hash)});
  CHECK(on_chain_key.account_hash == account_hash);
  CHECK(on_chain_key.permissions.execute_in_groups == std::vector<scopes::group_id>{group});
  CHECK(to_checksum_address(on_chain_key.wallet) == key.wallet_address);
  const reg::action_view on_chain_action =
      view(*rpc, registry, reg::get_action_call{account_hash, ipfs::hashed_cid(cid)});
  CHECK(on_chain_action.cid == cid);
  // Every write was sent by the api payer.
  chain::log_filter f;
  f.from_block = chain::block_tag::earliest();
  f.addresses = {registry};
  f.topics = {{reg::topic0<reg::group_added_event>()}};
  const auto logs = rpc->get_logs(f);
  REQUIRE(logs.has_value());
  REQUIRE(logs->size() == 1);
  const auto rc = rpc->transaction_receipt((*logs)[0].transaction_hash);
  REQUIRE(rc.has_value());
  REQUIRE(rc->has_value());
  CHECK((*rc)->from == payers[0]);

  // The node goes away: reads and writes answer 503, the server stays up.
  node.stop();
  const response down = c.post("/add_group", json::object{{"name", "later"}}, acct.auth());
  check_error_shape(down, 503, "unavailable");
  CHECK(srv.running());
  CHECK(srv.stop().clean());
}

TEST_CASE("evm ledger: the server refuses a node, registry or api payer that do not match") {
  deployed_chain chain;
  auto& [node, keys, data, data_dir, registry] = chain;
  // A registry whose only api payer is someone else.
  auto sender = chain::transaction_sender::create(client_of(node), Secret(anvil_process::dev_private_keys()[1]));
  REQUIRE(sender.has_value());
  const std::vector<address> others = {anvil_process::dev_addresses()[5]};
  const auto foreign = sender->deploy(reg::deployment_data(others));
  REQUIRE(foreign.has_value());

  struct case_ {
    const char* what;
    std::vector<std::string> flags;
    const char* message;
  };
  const std::vector<case_> cases = {
      {"another chain id", {"--registry-address", registry, "--chain-id", "1"}, "chain_id"},
      {"no code at the address", {"--registry-address", "0x00000000000000000000000000000000000000aa"}, "no contract"},
      {"the api payer not in the registry",
       {"--registry-address", to_checksum_address(*foreign->contract_address)},
       "setApiPayer"},
      {"no registry address", {}, "--registry-address"},
  };
  for (const case_& c : cases) {
    INFO(std::string(c.what));
    std::vector<std::string> args = {"--data-dir", data_dir, "--listen",  "127.0.0.1:0",
                                     "--ledger",   "evm",    "--rpc-url", node.url()};
    args.insert(args.end(), c.flags.begin(), c.flags.end());
    const finished_run r = run_to_exit(args);
    INFO(r.stderr_text);
    CHECK(r.status.exited);
    CHECK(r.status.code == 2);
    CHECK(r.stderr_text.find(c.message) != std::string::npos);
  }
  // deploy-registry's own usage errors.
  const finished_run missing = run_to_exit({"deploy-registry", "--rpc-url", node.url()});
  CHECK(missing.status.code == 2);
  std::ofstream(keys.path() + "/bad.key") << "not a key\n";
  const finished_run bad =
      run_to_exit({"deploy-registry", "--rpc-url", node.url(), "--key-file", keys.path() + "/bad.key"});
  CHECK(bad.status.code == 2);
  CHECK(bad.stderr_text.find("--key-file") != std::string::npos);
  CHECK(bad.stderr_text.find("not a key") == std::string::npos);
}

}  // namespace enact::itest
