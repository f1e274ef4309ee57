// SPDX-License-Identifier: Apache-2.0
// The embedded ledger's JSON-RPC surface (POST /rpc, ledger/rpc_surface.hpp) against the real
// server: a ChainSecured journey through the SDK's registry_client (a wallet creates its account,
// mints a PKP and a usage key with wallet-signed envelopes, registers them on /rpc, adds a group
// with an uploaded action, funds the account by X-Wallet-Auth billing, and the usage key runs the
// action); every refusal of the registry seen as a node shows it (eth_estimateGas error 3 with the
// custom error's revert data, a mined transaction with status 0, typed SDK errors); the
// transaction pool's refusals (nonces, chain id, recipient, encoding); the JSON-RPC 2.0 envelope
// (batches, notifications, error codes and ids); receipts, nonces and blocks across a restart; and
// the logs of API-mode writes, decoded, against the events the ledger recorded.
#include <doctest/doctest.h>

#include <boost/json.hpp>

#include <sqlite3.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "enact/chain/client.hpp"
#include "enact/chain/registry.hpp"
#include "enact/chain/registry_client.hpp"
#include "enact/chain/rpc.hpp"
#include "enact/chain/transaction.hpp"
#include "enact/client/api_error.hpp"
#include "enact/client/core_client.hpp"
#include "enact/eip712/envelope.hpp"
#include "ledger/embedded_ledger.hpp"
#include "ledger/rpc_surface.hpp"
#include "steps.hpp"

namespace enact::itest {
namespace {

namespace reg = chain::registry;

std::shared_ptr<const chain::rpc_client> rpc_of(const chain_env& e) {
  chain::rpc_options o;
  o.url = e.rpc_url;
  return std::make_shared<const chain::rpc_client>(chain::rpc_client::create(o).value());
}

client::client_options options_for(const server_process& srv) {
  client::client_options o;
  o.base_url = "http://127.0.0.1:" + std::to_string(srv.port());
  o.read_timeout = std::chrono::seconds(30);
  return o;
}

Secret key_of(std::string_view label) { return Secret(crypto::keccak256("rpc test key " + std::string(label))); }

address address_of(const Secret& key) {
  return crypto::secp256k1::to_address(crypto::secp256k1::public_key_of(key).value());
}

/// One raw JSON-RPC exchange: the HTTP status and the parsed body.
response rpc_raw(http_client& c, const std::string& body) { return c.request("POST", "/rpc", body); }

/// The response object of one request (REQUIREs HTTP 200 and a JSON object).
json::object rpc(http_client& c, std::string_view method, json::array params = {}) {
  const response r = rpc_raw(c, chain::rpc::request_body(7, method, std::move(params)));
  REQUIRE_MESSAGE(r.status == 200, r.describe());
  REQUIRE_MESSAGE(r.body.is_object(), r.describe());
  return r.body.as_object();
}

json::value result_of(http_client& c, std::string_view method, json::array params = {}) {
  const json::object o = rpc(c, method, std::move(params));
  REQUIRE_MESSAGE(o.contains("result"), json::serialize(o));
  return o.at("result");
}

int64_t error_code_of(const json::object& o) {
  REQUIRE_MESSAGE(o.contains("error"), json::serialize(o));
  return o.at("error").at("code").to_number<int64_t>();
}

std::string error_message_of(const json::object& o) {
  REQUIRE_MESSAGE(o.contains("error"), json::serialize(o));
  return std::string(o.at("error").at("message").as_string());
}

json::object call_object(const address& from, const address& to, const bytes& data) {
  return {{"from", chain::rpc::data(from)}, {"to", chain::rpc::data(to)}, {"data", chain::rpc::data(data)}};
}

/// A signed EIP-1559 transaction.
bytes signed_tx(const Secret& key, uint64_t chain_id, uint64_t nonce, std::optional<address> to, const bytes& data,
                uint64_t gas = 300000) {
  chain::eip1559_tx tx;
  tx.chain_id = chain_id;
  tx.nonce = nonce;
  tx.max_priority_fee_per_gas = u256{1000000000};
  tx.max_fee_per_gas = u256{3000000000};
  tx.gas_limit = gas;
  tx.to = to;
  tx.data = data;
  return chain::sign(tx, key).value();
}

std::string nonce_hex(http_client& c, const address& a) {
  return std::string(result_of(c, "eth_getTransactionCount", {chain::rpc::data(a), "pending"}).as_string());
}

/// The registry client of `key` on the server's /rpc, with a short receipt poll.
chain::registry_client registry_of(const chain_env& e, const Secret& key) {
  chain::sender_options o;
  o.poll_interval = std::chrono::milliseconds(20);
  return chain::registry_client::create(rpc_of(e), e.registry, key.clone(), o).value();
}

const char* kActionCode = "Enact.setResponse({signer: Enact.getAddress({pkpId: params.pkp}), n: params.n + 1});\n";

// =================================================================================================

TEST_CASE("a ChainSecured journey through /rpc with the SDK registry client") {
  server_process srv({"--dev"});
  const chain_env env = env_of(srv);
  CHECK(env.registry != address{});
  const Secret owner_key = key_of("journey owner");
  const address owner = address_of(owner_key);
  chain::registry_client registry = registry_of(env, owner_key);
  client::core_client anon(options_for(srv));

  // 1. The wallet creates its own account: apiKeyHash = crypto::keccak256(abi.encodePacked(admin)).
  const chain::account_created created = registry.new_account("journey", "made on /rpc").value();
  const hash256 account = created.account_hash;
  CHECK(account == crypto::keccak256(bytes_view(owner)));
  CHECK(created.tx.status);
  CHECK(created.tx.from == owner);
  REQUIRE(created.tx.logs.size() == 1);
  CHECK(created.tx.logs[0].address == env.registry);
  const reg::account_view view = registry.get_account(account).value();
  CHECK(view.admin == owner);
  CHECK_FALSE(view.managed);
  CHECK(view.name == "journey");
  CHECK(registry.account_by_admin(owner).value().account_hash == account);

  // 2. A PKP minted for the wallet's envelope, registered on /rpc.
  const client::minted_wallet pkp = anon.create_wallet_with_signature(owner_key, env.chain_id);
  REQUIRE(
      registry
          .register_wallet_derivation(account, pkp.wallet_address, pkp.derivation_path, "signer", "minted by signature")
          .has_value());
  const reg::wallet_view wv = registry.get_wallet(account, pkp.wallet_address).value();
  CHECK(wv.derivation_path == pkp.derivation_path);

  // 3. A usage key minted the same way, registered (its wallet, then the key) on /rpc.
  const client::minted_usage_key minted = anon.add_usage_api_key_with_signature(owner_key, env.chain_id);
  const std::string usage_key(as_chars(minted.usage_api_key.view()));
  const hash256 usage_hash = crypto::keccak256(std::string_view(usage_key));
  REQUIRE(
      registry.register_wallet_derivation(account, minted.wallet_address, minted.derivation_path, "usage key wallet")
          .has_value());
  scopes::permission_set perms;
  perms.execute_in_groups = {1};
  REQUIRE(registry
              .set_usage_api_key(account, usage_hash, u256{}, u256{}, "runner", "runs actions", perms,
                                 minted.wallet_address)
              .has_value());
  const reg::usage_key_view kv = registry.get_usage_api_key(usage_hash).value();
  CHECK(kv.account_hash == account);
  CHECK(kv.wallet == minted.wallet_address);
  CHECK(kv.permissions == perms);
  CHECK(registry.list_usage_api_keys(account).value().total == u256{1});

  // The key now authenticates at the core service (GET /account).
  http_client http = srv.client();
  const response who = http.get("/account", api_key(usage_key));
  ITEST_REQUIRE_STATUS(who, 200);
  CHECK(s_of(who.body, "api_key_hash") == codec::hex::encode_prefixed(account));
  CHECK_FALSE(who.obj().at("managed").as_bool());

  // 4. An uploaded action in a group with the PKP, added on /rpc.
  const response up = http.post("/upload_action", json::object{{"code", kActionCode}}, api_key(usage_key));
  ITEST_REQUIRE_STATUS(up, 200);
  const hash256 cid_hash = codec::hex::decode_fixed<32>(s_of(up.body, "hashed_cid")).value();
  const chain::group_added group = registry.add_group(account, "signers", "", {pkp.wallet_address}, {cid_hash}).value();
  CHECK(group.group_id == 1);
  const reg::group_view gv = registry.get_group(account, 1).value();
  CHECK(gv.pkp_ids == std::vector<address>{pkp.wallet_address});
  CHECK(gv.cid_hashes == std::vector<hash256>{cid_hash});
  REQUIRE(registry.add_action(account, s_of(up.body, "action_ipfs_cid"), "sign", "").has_value());
  CHECK(registry.list_actions_in_group(account, 1).value().items.at(0).name == "sign");

  // 5. Funded through X-Wallet-Auth billing, the usage key runs the action with the PKP.
  // A version 2 BillingAuth names the request it authorizes: method, target and body as sent.
  const auto proof = [&](const char* method, const std::string& target, const std::string& body) {
    return eip712::envelope::sign_billing({env.chain_id, env.registry}, owner_key, static_cast<uint64_t>(unix_now()),
                                          eip712::envelope::bind_request(method, target, body))
        .value();
  };
  const client::payment_intent intent = anon.create_payment_intent(
      500, proof("POST", "/core/v1/billing/create_payment_intent", R"({"amount_cents":500})"));
  CHECK(anon.confirm_payment(intent.payment_intent_id,
                             proof("POST", "/core/v1/billing/confirm_payment",
                                   R"({"payment_intent_id":")" + intent.payment_intent_id + "\"}")) == 500);
  // Credits live in the server's metering store, not in the registry (docs/architecture.md §1).
  CHECK(anon.balance(proof("GET", "/core/v1/billing/balance", "")).balance_credits == 500);
  client::core_client runner(options_for(srv), minted.usage_api_key.clone());
  client::run_action_request run;
  run.action_ipfs_cid = s_of(up.body, "action_ipfs_cid");
  run.pkp_id = pkp.wallet_address;
  run.params = {{"pkp", to_checksum_address(pkp.wallet_address)}, {"n", 41}};
  const client::run_action_result out = runner.run_action(run);
  CHECK(out.response.at("signer").as_string() == to_checksum_address(pkp.wallet_address));
  CHECK(out.response.at("n").to_number<int64_t>() == 42);
  CHECK(out.charged_credits == 1);
  CHECK(anon.balance(proof("GET", "/core/v1/billing/balance", "")).balance_credits == 499);

  // 6. Changes of the group on /rpc take effect at once: without the PKP the run is refused.
  REQUIRE(registry.remove_pkp_from_group(account, 1, pkp.wallet_address).has_value());
  CHECK_THROWS_AS((void)runner.run_action(run), api_error);
  CHECK(registry.get_group(account, 1).value().pkp_ids.empty());

  // A run writes nothing to the chain: the account's logs are its registry writes only (the
  // earlier versions' CreditsDebited is no event of the registry); its charge is in the usage
  // history.
  chain::log_filter f;
  f.from_block = chain::block_tag::earliest();
  f.addresses = {env.registry};
  f.topics = {{}, {account}};
  const std::vector<chain::log_entry> account_logs = rpc_of(env)->get_logs(f).value();
  CHECK_FALSE(account_logs.empty());
  for (const chain::log_entry& l : account_logs)
    CHECK(reg::decode_log(l.topics, l.data).has_value());
  const hash256 debited = crypto::keccak256(std::string_view("CreditsDebited(uint256,uint256,uint256)"));
  f.topics = {{debited}, {account}};
  CHECK(rpc_of(env)->get_logs(f).value().empty());
  const auto usage = anon.billing_usage(proof("GET", "/core/v1/billing/usage?page_number=1&page_size=20", ""));
  REQUIRE(usage.items.size() == 1);
  CHECK(usage.items[0].charged_credits == 1);

  CHECK(srv.stop().clean());
}

TEST_CASE("the registry's refusals arrive as a node shows reverts") {
  server_process srv({"--dev"});
  const chain_env env = env_of(srv);
  http_client c = srv.client();
  const Secret owner_key = key_of("refusals owner");
  const Secret stranger_key = key_of("refusals stranger");
  const address owner = address_of(owner_key);
  const address stranger = address_of(stranger_key);
  chain::registry_client registry = registry_of(env, owner_key);
  const hash256 account = registry.new_account("refusals").value().account_hash;
  const address pkp = parse_address(random_address_hex()).value();
  REQUIRE(
      registry.register_wallet_derivation(account, pkp, crypto::keccak256(std::string_view("p")), "pkp").has_value());
  const std::string payer_text = s_of(c.get("/get_admin_api_payer").body, "admin_api_payer");
  const address payer = parse_address(payer_text).value();
  // An API-mode account: its account key's wallet is the admin (docs/protocol.md §1), which may convert
  // the account only to itself; handing it to another wallet needs that wallet's consent.
  const response api = c.post("/new_account", json::object{{"name", "api mode"}});
  REQUIRE(api.status == 200);
  const hash256 api_account = codec::hex::decode_fixed<32>(s_of(api.body, "api_key_hash")).value();
  const address api_admin = parse_address(s_of(api.body, "wallet_address")).value();

  struct case_ {
    const char* what;
    address from;
    bytes data;
    bytes revert;
  };
  const case_ cases[] = {
      {"a write by someone else than the admin", stranger, reg::encode(reg::add_group_call{account, "g", "", {}, {}}),
       reg::encode_revert(reg::not_admin_error{account, stranger})},
      {"an api_payer relay for an unmanaged account", payer, reg::encode(reg::add_group_call{account, "g", "", {}, {}}),
       reg::encode_revert(reg::relay_not_allowed_error{account, payer})},
      {"a duplicate wallet", owner,
       reg::encode(reg::register_wallet_derivation_call{account, pkp, hash256{}, "again", ""}),
       reg::encode_revert(reg::duplicate_error{"wallet"})},
      {"a duplicate account", owner, reg::encode(reg::new_account_call{account, owner, false, "again", "", ""}),
       reg::encode_revert(reg::duplicate_error{"apiKeyHash"})},
      {"an unknown group", owner, reg::encode(reg::remove_group_call{account, 9}),
       reg::encode_revert(reg::unknown_group_error{account, u256{9}})},
      {"an unregistered PKP in a group", owner, reg::encode(reg::add_group_call{account, "g", "", {pkp, stranger}, {}}),
       reg::encode_revert(reg::unknown_wallet_error{account, stranger})},
      {"an unknown account", owner,
       reg::encode(reg::add_action_to_group_call{crypto::keccak256(std::string_view("none")), 1, {}}),
       reg::encode_revert(reg::unknown_account_error{crypto::keccak256(std::string_view("none"))})},
      {"an empty name", owner, reg::encode(reg::add_group_call{account, "", "", {}, {}}),
       reg::encode_revert(reg::invalid_argument_error{"name: must not be empty"})},
      {"conversion of an unmanaged account", owner, reg::encode(reg::convert_to_chain_secured_call{account, stranger}),
       reg::encode_revert(reg::already_unmanaged_error{account})},
      {"conversion to another wallet by the admin", api_admin,
       reg::encode(reg::convert_to_chain_secured_call{api_account, stranger}),
       reg::encode_revert(reg::new_admin_not_sender_error{api_account, stranger})},
      {"setApiPayer", owner, reg::encode(reg::set_api_payer_call{stranger, true}),
       reg::encode_revert(reg::not_owner_error{owner})},
  };
  for (const case_& k : cases) {
    CAPTURE(k.what);
    // eth_estimateGas and eth_call: error 3, "execution reverted", the revert data exactly.
    for (const char* method : {"eth_estimateGas", "eth_call"}) {
      CAPTURE(method);
      json::array params{call_object(k.from, env.registry, k.data)};
      if (std::string_view(method) == "eth_call")
        params.emplace_back("latest");
      const json::object o = rpc(c, method, params);
      CHECK(error_code_of(o) == 3);
      CHECK(error_message_of(o).starts_with("execution reverted"));
      CHECK(o.at("error").at("data").as_string() == chain::rpc::data(k.revert));
    }
  }

  // The credit functions of earlier registries are gone (docs/architecture.md §4: credits are the
  // metering store's): their selectors revert without data, as a contract without them does, for
  // the api payer as for anyone.
  using codec::abi::value;
  const std::pair<const char*, std::vector<value>> retired[] = {
      {"debitCredits(uint256,uint256)", {value::number(u256::load_be(account.data())), value::number(u256{1})}},
      {"chargeCredits(uint256,uint256)", {value::number(u256::load_be(account.data())), value::number(u256{1})}},
      {"recordPayment(uint256,string,uint256,string)",
       {value::number(u256::load_be(account.data())), value::text("pi_1"), value::number(u256{500}),
        value::text("dev")}},
      {"creditPayment(uint256,string)", {value::number(u256::load_be(account.data())), value::text("pi_1")}},
      {"creditBalance(uint256)", {value::number(u256::load_be(account.data()))}},
      {"getPayment(uint256,string)", {value::number(u256::load_be(account.data())), value::text("pi_1")}},
  };
  for (const auto& [signature, args] : retired)
    for (const address& from : {payer, owner, stranger}) {
      CAPTURE(signature);
      const json::object o = rpc(
          c, "eth_call", {call_object(from, env.registry, codec::abi::encode_call(signature, args).value()), "latest"});
      CHECK(error_message_of(o) == "execution reverted");
      CHECK_FALSE(o.at("error").as_object().contains("data"));
    }

  // Sent anyway (gas given, no estimate): mined with status 0, the reason in revertReason.
  const bytes refused = reg::encode(reg::add_group_call{account, "g", "", {}, {}});
  const bytes raw = signed_tx(stranger_key, env.chain_id, 0, env.registry, refused);
  const json::value hash = result_of(c, "eth_sendRawTransaction", {chain::rpc::data(raw)});
  CHECK(hash.as_string() == chain::rpc::data(chain::tx_hash(raw)));
  const json::value receipt = result_of(c, "eth_getTransactionReceipt", {hash});
  CHECK(receipt.at("status").as_string() == "0x0");
  CHECK(receipt.at("logs").as_array().empty());
  CHECK(receipt.at("revertReason").as_string() ==
        chain::rpc::data(reg::encode_revert(reg::not_admin_error{account, stranger})));
  CHECK(nonce_hex(c, stranger) == "0x1");  // a reverted transaction uses its nonce
  CHECK(registry.list_groups(account).value().total == u256{});

  // The SDK's registry client: each refusal is an enact::error with the registry_errc.
  chain::registry_client as_stranger = registry_of(env, stranger_key);
  auto e = as_stranger.add_group(account, "g");
  REQUIRE_FALSE(e.has_value());
  CHECK(e.code() == registry_errc::not_admin);
  CHECK(e.err().message.starts_with("addGroup: "));
  CHECK(chain::revert_data(e.err()) == reg::encode_revert(reg::not_admin_error{account, stranger}));
  auto dup = registry.register_wallet_derivation(account, pkp, hash256{}, "again");
  CHECK(dup.code() == registry_errc::duplicate);
  auto unknown = registry.get_group(account, 5);
  CHECK(unknown.code() == registry_errc::unknown_group);
  CHECK(registry.get_usage_api_key(crypto::keccak256(std::string_view("none"))).code() ==
        registry_errc::unknown_usage_key);
  // Sent without estimation (a fixed gas limit): mined with status 0, the reason found by
  // replaying the call.
  auto mined = as_stranger.send(reg::remove_group_call{account, 1}, 300000);
  CHECK(mined.code() == registry_errc::not_admin);
  CHECK_MESSAGE(mined.err().message.find("status 0") != std::string::npos, mined.err().message);
  chain::registry_client read_only(rpc_of(env), env.registry);
  CHECK(read_only.remove_group(account, 1).code() == std::errc::operation_not_permitted);
  CHECK(read_only.get_account(account).value().admin == owner);

  // A multicall is atomic: a failing call undoes the ones before it.
  const bytes multi = reg::encode(reg::multicall_call{{reg::encode(reg::add_group_call{account, "first", "", {}, {}}),
                                                       reg::encode(reg::remove_group_call{account, 7})}});
  const json::object m = rpc(c, "eth_estimateGas", {call_object(owner, env.registry, multi)});
  CHECK(m.at("error").at("data").as_string() ==
        chain::rpc::data(reg::encode_revert(reg::unknown_group_error{account, u256{7}})));
  auto sent = registry.send(reg::multicall_call{{reg::encode(reg::add_group_call{account, "first", "", {}, {}}),
                                                 reg::encode(reg::add_group_call{account, "second", "", {}, {}})}});
  REQUIRE(sent.has_value());
  CHECK(sent->logs.size() == 2);
  CHECK(registry.list_groups(account).value().total == u256{2});
  CHECK(srv.stop().clean());
}

TEST_CASE("the transaction pool's refusals: nonces, chain id, recipient, encoding") {
  server_process srv({"--dev"});
  const chain_env env = env_of(srv);
  http_client c = srv.client();
  const Secret key = key_of("pool");
  const address from = address_of(key);
  const bytes create =
      reg::encode(reg::new_account_call{crypto::keccak256(bytes_view(from)), from, false, "pool", "", ""});
  CHECK(nonce_hex(c, from) == "0x0");
  REQUIRE(rpc(c, "eth_sendRawTransaction", {chain::rpc::data(signed_tx(key, env.chain_id, 0, env.registry, create))})
              .contains("result"));
  CHECK(nonce_hex(c, from) == "0x1");

  const bytes later = reg::encode(reg::remove_group_call{crypto::keccak256(bytes_view(from)), 1});
  struct case_ {
    const char* what;
    bytes raw;
    int64_t code;
    std::string message;  // the start of the node's message
  };
  bytes garbage = {0x02, 0xc0};
  bytes legacy = signed_tx(key, env.chain_id, 1, env.registry, later);
  legacy[0] = 0xf8;
  const case_ cases[] = {
      {"nonce too low", signed_tx(key, env.chain_id, 0, env.registry, later), -32000, "nonce too low"},
      {"nonce too high", signed_tx(key, env.chain_id, 5, env.registry, later), -32000, "nonce too high"},
      {"another chain", signed_tx(key, 1, 1, env.registry, later), -32000,
       "invalid sender: invalid chain id for signer: have 1 want " + std::to_string(env.chain_id)},
      {"another recipient", signed_tx(key, env.chain_id, 1, from, later), -32000, "transaction to "},
      {"contract creation", signed_tx(key, env.chain_id, 1, std::nullopt, later), -32000,
       "contract creation is not supported"},
      {"gas below the intrinsic 21000", signed_tx(key, env.chain_id, 1, env.registry, later, 20000), -32000,
       "intrinsic gas too low"},
      {"not a transaction", garbage, -32000, "invalid transaction"},
      {"a legacy transaction", legacy, -32000, "transaction type not supported"},
  };
  for (const case_& k : cases) {
    CAPTURE(k.what);
    const json::object o = rpc(c, "eth_sendRawTransaction", {chain::rpc::data(k.raw)});
    CHECK(error_code_of(o) == k.code);
    CHECK_MESSAGE(error_message_of(o).starts_with(k.message), error_message_of(o));
  }
  CHECK(nonce_hex(c, from) == "0x1");  // nothing refused used a nonce
  // The same transaction twice.
  const bytes once = signed_tx(key, env.chain_id, 1, env.registry, later);
  REQUIRE(rpc(c, "eth_sendRawTransaction", {chain::rpc::data(once)}).contains("result"));
  CHECK(error_message_of(rpc(c, "eth_sendRawTransaction", {chain::rpc::data(once)})) == "already known");

  // estimateGas and eth_call to anything but the registry.
  CHECK(error_code_of(rpc(c, "eth_estimateGas", {call_object(from, from, later)})) == -32000);
  CHECK(result_of(c, "eth_call", {call_object(from, from, later), "latest"}).as_string() == "0x");
  CHECK(result_of(c, "eth_getCode", {chain::rpc::data(from), "latest"}).as_string() == "0x");
  CHECK(result_of(c, "eth_getCode", {chain::rpc::data(env.registry), "latest"}).as_string() != "0x");
  // Unknown calldata and value on a non-payable function revert without data, as Solidity does.
  const json::object bad = rpc(c, "eth_call", {call_object(from, env.registry, {1, 2, 3, 4})});
  CHECK(error_code_of(bad) == -32000);
  CHECK(error_message_of(bad) == "execution reverted");
  json::object with_value = call_object(from, env.registry, later);
  with_value["value"] = "0x1";
  CHECK(error_message_of(rpc(c, "eth_estimateGas", {with_value})) == "execution reverted");
  CHECK(srv.stop().clean());
}

TEST_CASE("the JSON-RPC 2.0 envelope: batches, notifications, error codes and ids") {
  server_process srv({"--dev"});
  http_client c = srv.client();
  // eth_chainId and net_version answer the server's own chain (docs/protocol.md §1 "embedded chain").
  const uint64_t chain_id = env_of(srv).chain_id;
  const std::string chain_hex = chain::rpc::quantity(u256{chain_id});
  struct case_ {
    const char* what;
    std::string body;
    std::string expected;  // the whole response body
  };
  const case_ cases[] = {
      {"parse error", "{\"jsonrpc\":", ""},
      {"unknown method", R"j({"jsonrpc":"2.0","id":"a","method":"eth_mine"})j",
       R"j({"jsonrpc":"2.0","id":"a","error":{"code":-32601,"message":"the method eth_mine does not exist/is not available"}})j"},
      {"no jsonrpc member", R"j({"id":3,"method":"eth_chainId"})j",
       R"j({"jsonrpc":"2.0","id":3,"error":{"code":-32600,"message":"invalid request: jsonrpc must be \"2.0\""}})j"},
      {"an object id", R"j({"jsonrpc":"2.0","id":{},"method":"eth_chainId"})j",
       R"j({"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: id must be a string, a number or null"}})j"},
      {"empty batch", "[]",
       R"j({"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: empty batch"}})j"},
      {"by-name params", R"j({"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":{}})j",
       R"j({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"invalid params: by-name params are not supported"}})j"},
      {"a batch with a notification and a bad element",
       R"j([{"jsonrpc":"2.0","id":1,"method":"eth_chainId"},{"jsonrpc":"2.0","method":"eth_chainId"},2,{"jsonrpc":"2.0","id":null,"method":"net_version"}])j",
       R"j([{"jsonrpc":"2.0","id":1,"result":")j" + chain_hex +
           R"j("},{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: expected an object"}},{"jsonrpc":"2.0","id":null,"result":")j" +
           std::to_string(chain_id) + R"j("}])j"},
      {"missing params", R"j({"jsonrpc":"2.0","id":9,"method":"eth_getBalance"})j",
       R"j({"jsonrpc":"2.0","id":9,"error":{"code":-32602,"message":"missing value for required argument 0 (address)"}})j"},
  };
  for (const case_& k : cases) {
    CAPTURE(k.what);
    const response r = rpc_raw(c, k.body);
    CHECK(r.status == 200);
    CHECK_FALSE(r.header("X-Request-Id").empty());
    CHECK(r.header("Content-Type").starts_with("application/json"));
    if (k.expected.empty()) {
      CHECK(r.body.at("error").at("code").to_number<int64_t>() == -32700);
      CHECK(r.body.at("id").is_null());
    } else {
      CHECK(r.text == k.expected);
    }
  }
  // Notifications only: nothing to answer.
  const response n = rpc_raw(c, R"j([{"jsonrpc":"2.0","method":"eth_chainId"}])j");
  CHECK(n.status == 204);
  CHECK(n.text.empty());
  // Each /rpc request has its log line with its request id.
  const response one = rpc_raw(c, R"j({"jsonrpc":"2.0","id":1,"method":"eth_blockNumber"})j");
  const auto lines = srv.await_request_lines(one.header("X-Request-Id"));
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].at("route").as_string() == "/rpc");
  CHECK(lines[0].at("status").to_number<int>() == 200);
  CHECK(srv.stop().clean());
}

TEST_CASE("receipts, nonces and blocks survive a restart") {
  temp_dir data;
  json::value receipt, block, logs;
  std::string hash;
  bytes next_raw;
  chain_env env;
  const Secret key = key_of("restart");
  const address from = address_of(key);
  {
    server_process srv({"--dev"}, data.path());
    env = env_of(srv);
    chain::registry_client registry = registry_of(env, key);
    const hash256 account = registry.new_account("restart").value().account_hash;
    const chain::group_added g = registry.add_group(account, "kept").value();
    // An API-mode write in between gets its own block.
    http_client c = srv.client();
    (void)create_account(c, "api");
    hash = chain::rpc::data(g.tx.transaction_hash);
    receipt = result_of(c, "eth_getTransactionReceipt", {hash});
    block = result_of(c, "eth_getBlockByNumber", {"latest", true});
    logs = result_of(c, "eth_getLogs", {json::object{{"fromBlock", "earliest"}}});
    CHECK(nonce_hex(c, from) == "0x2");
    next_raw = signed_tx(key, env.chain_id, 2, env.registry, reg::encode(reg::remove_group_call{account, g.group_id}));
    CHECK(srv.stop().clean());
  }
  server_process srv({"--dev"}, data.path());
  http_client c = srv.client();
  CHECK(result_of(c, "eth_getTransactionReceipt", {hash}) == receipt);
  CHECK(result_of(c, "eth_getBlockByNumber", {"latest", true}) == block);
  CHECK(result_of(c, "eth_getLogs", {json::object{{"fromBlock", "earliest"}}}) == logs);
  CHECK(nonce_hex(c, from) == "0x2");
  CHECK(logs.as_array().size() == 3);  // AccountCreated, GroupAdded, the API account's
  // The old nonce is refused, the next one goes through and extends the same chain.
  const bytes old = signed_tx(key, env.chain_id, 1, env.registry, {});
  CHECK(error_message_of(rpc(c, "eth_sendRawTransaction", {chain::rpc::data(old)})).starts_with("nonce too low"));
  const json::value h = result_of(c, "eth_sendRawTransaction", {chain::rpc::data(next_raw)});
  const json::value r = result_of(c, "eth_getTransactionReceipt", {h});
  CHECK(r.at("status").as_string() == "0x1");
  const json::value latest = result_of(c, "eth_getBlockByNumber", {"latest", false});
  CHECK(latest.at("parentHash") == block.at("hash"));
  CHECK(srv.stop().clean());
}

TEST_CASE("eth_getLogs of API-mode writes decode to the events the ledger recorded") {
  temp_dir data;
  std::vector<reg::event> decoded;
  std::vector<std::string> tx_hashes;
  std::string payer;
  {
    server_process srv({"--dev"}, data.path());
    const chain_env env = env_of(srv);
    http_client c = srv.client();
    payer = s_of(c.get("/get_admin_api_payer").body, "admin_api_payer");
    const account_keys a = create_account(c, "api mode");
    const response w = c.post("/create_wallet", json::object{{"name", "w"}}, a.auth());
    ITEST_REQUIRE_STATUS(w, 200);
    const std::string cid = cid_of_code("Enact.setResponse(1);");
    ITEST_REQUIRE_STATUS(c.post("/add_action", json::object{{"action_ipfs_cid", cid}, {"name", "one"}}, a.auth()), 200);
    ITEST_REQUIRE_STATUS(c.post("/add_group",
                                json::object{{"name", "g"},
                                             {"pkp_ids_permitted", json::array{s_of(w.body, "pkp_id")}},
                                             {"cid_hashes_permitted", json::array{hashed_cid_hex(cid)}}},
                                a.auth()),
                         200);
    (void)create_usage_key(c, a.auth(), {{"execute_in_groups", json::array{1}}});
    (void)buy_credits(c, a.auth(), 500);
    ITEST_REQUIRE_STATUS(c.post("/update_group",
                                json::object{{"group_id", 1},
                                             {"name", "g2"},
                                             {"description", "d"},
                                             {"pkp_ids_permitted", json::array{}},
                                             {"cid_hashes_permitted", json::array{}}},
                                a.auth()),
                         200);

    chain::log_filter f;
    f.from_block = chain::block_tag::earliest();
    f.to_block = chain::block_tag::latest();
    const auto logs = rpc_of(env)->get_logs(f).value();
    for (const chain::log_entry& l : logs) {
      CHECK(l.address == env.registry);
      CHECK(l.log_index == 0);
      decoded.push_back(reg::decode_log(l.topics, l.data).value());
      tx_hashes.push_back(chain::rpc::data(l.transaction_hash));
    }
    // Each relayed write is a transaction from the api_payer (bookkeeping: from 0x0).
    const json::value tx = result_of(c, "eth_getTransactionByHash", {tx_hashes.front()});
    CHECK(tx.at("from").as_string() == codec::hex::encode_prefixed(parse_address(payer).value()));
    CHECK(tx.at("blockNumber").as_string() == "0x1");
    const json::value rc = result_of(c, "eth_getTransactionReceipt", {tx_hashes.front()});
    CHECK(rc.at("status").as_string() == "0x1");
    CHECK(rc.at("logs").as_array().size() == 1);
    // Filters by topic: the account's GroupUpdated only.
    f.topics = {{reg::topic0<reg::group_updated_event>()}, {codec::hex::decode_fixed<32>(a.api_key_hash).value()}};
    CHECK(rpc_of(env)->get_logs(f).value().size() == 1);
    CHECK(srv.stop().clean());
  }
  auto ledger = ledger::embedded_ledger::open(data.path() + "/ledger.sqlite", {}).value();
  const auto events = ledger->events_after(0, 1000).value();
  REQUIRE(events.size() == decoded.size());
  for (size_t i = 0; i < events.size(); ++i) {
    CAPTURE(events[i].name);
    CHECK(decoded[i].name == events[i].name);
    CHECK(decoded[i].args == events[i].data);
  }
  // The writes: AccountCreated, WalletDerivationRegistered, ActionAdded, GroupAdded,
  // UsageApiKeySet, GroupUpdated (the payment is the metering store's: no registry event).
  CHECK(events.size() == 6);
  CHECK(std::set<std::string>(tx_hashes.begin(), tx_hashes.end()).size() == tx_hashes.size());
}

TEST_CASE("concurrent senders and API-mode writes map every ledger event once, in order") {
  temp_dir data;
  constexpr int kWallets = 4;
  constexpr int kWritesEach = 5;
  {
    server_process srv({"--dev"}, data.path());
    const chain_env env = env_of(srv);
    std::vector<std::thread> threads;
    std::atomic<int> failures{0};
    for (int i = 0; i < kWallets; ++i)
      threads.emplace_back([&, i] {
        chain::registry_client rc = registry_of(env, key_of("concurrent " + std::to_string(i)));
        auto created = rc.new_account("c" + std::to_string(i));
        if (!created) {
          ++failures;
          return;
        }
        for (int n = 0; n < kWritesEach; ++n)
          if (!rc.add_group(created->account_hash, "g" + std::to_string(n)))
            ++failures;
      });
    for (int i = 0; i < 2; ++i)
      threads.emplace_back([&] {
        http_client c = srv.client();
        for (int n = 0; n < kWritesEach; ++n)
          if (c.post("/new_account", json::object{{"name", "api"}}).status != 200)
            ++failures;
      });
    for (auto& t : threads)
      t.join();
    CHECK(failures.load() == 0);
    // Every block after genesis holds one transaction; the logs' ledger order is the block order.
    http_client c = srv.client();
    const uint64_t head = chain::rpc::parse_quantity_u64(result_of(c, "eth_blockNumber")).value();
    const json::array logs = result_of(c, "eth_getLogs", {json::object{{"fromBlock", "earliest"}}}).as_array();
    CHECK(head == static_cast<uint64_t>(kWallets * (1 + kWritesEach) + 2 * kWritesEach));
    CHECK(logs.size() == head);
    json::value parent = result_of(c, "eth_getBlockByNumber", {"earliest", false});
    for (uint64_t n = 1; n <= head; ++n) {
      const json::value b = result_of(c, "eth_getBlockByNumber", {chain::rpc::quantity(n), false});
      CHECK(b.at("parentHash") == parent.at("hash"));
      CHECK(b.at("transactions").as_array().size() == 1);
      CHECK(logs.at(n - 1).at("blockNumber").as_string() == chain::rpc::quantity(n));
      parent = b;
    }
    CHECK(srv.stop().clean());
  }
  // The same order as the ledger's event sequence.
  auto ledger = ledger::embedded_ledger::open(data.path() + "/ledger.sqlite", {}).value();
  CHECK(ledger->events_after(0, 1000).value().size() ==
        static_cast<size_t>(kWallets * (1 + kWritesEach) + 2 * kWritesEach));
}

/// Runs SQL on a closed surface's file (to cut a transaction off as a crash would).
void sql(const std::string& path, const std::string& text) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  char* msg = nullptr;
  const int rc = sqlite3_exec(db, text.c_str(), nullptr, nullptr, &msg);
  const std::string why = msg ? msg : "";
  sqlite3_free(msg);
  sqlite3_close(db);
  REQUIRE_MESSAGE(rc == SQLITE_OK, why);
}

TEST_CASE("a transaction cut off between its ledger write and its receipt is completed at open") {
  temp_dir dir;
  const std::string ledger_path = dir.path() + "/ledger.sqlite";
  const std::string rpc_path = dir.path() + "/rpc.sqlite";
  const address registry = ledger::embedded_registry_address();
  const Secret key = key_of("recovery");
  const address from = address_of(key);
  const hash256 account = crypto::keccak256(bytes_view(from));
  auto book = ledger::embedded_ledger::open(ledger_path, {}).value();
  const auto ask = [](ledger::rpc_surface& s, std::string_view method, json::array params) {
    const json::value r = json::parse(s.handle(chain::rpc::request_body(1, method, params)));
    return r.as_object().contains("result") ? r.at("result") : json::value(r.at("error"));
  };
  const bytes create =
      signed_tx(key, 31337, 0, registry, reg::encode(reg::new_account_call{account, from, false, "cut", "", ""}));
  const bytes group = signed_tx(key, 31337, 1, registry, reg::encode(reg::add_group_call{account, "g", "", {}, {}}));
  json::value receipt;
  {
    auto s = ledger::rpc_surface::open(*book, {31337, registry, rpc_path}).value();
    CHECK(ask(*s, "eth_sendRawTransaction", {chain::rpc::data(create)}).is_string());
    receipt = ask(*s, "eth_getTransactionReceipt", {chain::rpc::data(chain::tx_hash(create))});
    REQUIRE(receipt.at("status").as_string() == "0x1");
  }
  // As if the process died after the ledger's commit: the receipt's rows are gone, the
  // transaction is pending, nothing was mapped after it.
  sql(rpc_path,
      "DELETE FROM logs; DELETE FROM transactions; DELETE FROM blocks WHERE number > 0;"
      "INSERT INTO pending (hash, sender, nonce, raw, after_sequence) VALUES (x'" +
          codec::hex::encode(chain::tx_hash(create)) + "', x'" + codec::hex::encode(from) + "', 0, x'" +
          codec::hex::encode(create) +
          "', 0);"
          "UPDATE meta SET value = 0 WHERE key = 'synced_sequence';");
  {
    auto s = ledger::rpc_surface::open(*book, {31337, registry, rpc_path}).value();
    const json::value again = ask(*s, "eth_getTransactionReceipt", {chain::rpc::data(chain::tx_hash(create))});
    CHECK(again.at("status").as_string() == "0x1");
    CHECK(again.at("logs").at(0).at("data") == receipt.at("logs").at(0).at("data"));
    CHECK(again.at("logs").at(0).at("topics") == receipt.at("logs").at(0).at("topics"));
    CHECK(ask(*s, "eth_getTransactionCount", {chain::rpc::data(from), "latest"}) == "0x1");
    CHECK(ask(*s, "eth_blockNumber", {}) == "0x1");
  }
  // A pending transaction the ledger never applied is dropped: its nonce is free again.
  sql(rpc_path, "INSERT INTO pending (hash, sender, nonce, raw, after_sequence) VALUES (x'" +
                    codec::hex::encode(chain::tx_hash(group)) + "', x'" + codec::hex::encode(from) + "', 1, x'" +
                    codec::hex::encode(group) + "', 1);");
  {
    auto s = ledger::rpc_surface::open(*book, {31337, registry, rpc_path}).value();
    CHECK(ask(*s, "eth_getTransactionReceipt", {chain::rpc::data(chain::tx_hash(group))}).is_null());
    CHECK(ask(*s, "eth_getTransactionCount", {chain::rpc::data(from), "latest"}) == "0x1");
    CHECK(ask(*s, "eth_sendRawTransaction", {chain::rpc::data(group)}).is_string());
    CHECK(book->list_groups(account, {}).value().total == 1);
  }
  // The file belongs to its chain: another chain id or registry is refused.
  CHECK(ledger::rpc_surface::open(*book, {1, registry, rpc_path}).code() == ledger_errc::storage);
  CHECK(ledger::rpc_surface::open(*book, {31337, address{}, rpc_path}).code() == ledger_errc::storage);
}

}  // namespace
}  // namespace enact::itest
