// SPDX-License-Identifier: Apache-2.0
// Attack: credits moved or runs made free through the chain (docs/security.md "Threat model";
// docs/architecture.md §4: the registry keeps permissions only, credits are the metering store's).
// enact-server runs on the evm ledger against a registry on anvil that `enact-server
// deploy-registry` put there for the data directory's api payer. The attacker holds what the
// strongest caller of the chain could: it sends as the api payer itself (anvil impersonation), as
// the account's admin wallet and as a stranger. Each must fail:
//   - the credit functions of earlier registries (debitCredits, chargeCredits, recordPayment,
//     creditPayment, creditBalance, getPayment) do not exist: eth_call and mined transactions
//     revert, log nothing and change nothing, whoever sends them, alone or inside a multicall;
//   - no ledger path makes a run free: a run and a relayed write send no transaction at all (the
//     api payer's nonce and the chain's height stay), each answered run is charged its price in
//     the metering store, and an account short of credits gets 402 for a run and for a
//     surcharged write, with nothing written on the chain, after every attempt above.
#include <doctest/doctest.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "anvil_process.hpp"
#include "enact/chain/client.hpp"
#include "enact/chain/registry.hpp"
#include "enact/codec/abi.hpp"
#include "steps.hpp"

namespace enact::itest {
namespace {

namespace reg = chain::registry;
using codec::abi::value;
using enact::test::anvil_process;

constexpr std::string_view kCode = "Enact.setResponse({ok: true});\n";
constexpr uint64_t kPrice = 100;  // credits per run

std::string key_file(const temp_dir& dir) {
  const std::string path = dir.path() + "/deployer.key";
  std::ofstream f(path);
  f << codec::hex::encode_prefixed(anvil_process::dev_private_keys().at(0)) << "\n";
  return path;
}

uint64_t quantity(const json::value& v) { return std::stoull(std::string(v.as_string()), nullptr, 16); }

/// The retired credit functions of the registry, as calldata for `account`.
std::vector<std::pair<std::string, bytes>> retired_calls(const hash256& account) {
  const value a = value::number(u256::load_be(account.data()));
  const std::pair<const char*, std::vector<value>> calls[] = {
      {"debitCredits(uint256,uint256)", {a, value::number(u256{1})}},
      {"chargeCredits(uint256,uint256)", {a, value::number(u256{1})}},
      {"recordPayment(uint256,string,uint256,string)",
       {a, value::text("pi_free"), value::number(u256{1'000'000}), value::text("dev")}},
      {"creditPayment(uint256,string)", {a, value::text("pi_free")}},
      {"creditBalance(uint256)", {a}},
      {"getPayment(uint256,string)", {a, value::text("pi_free")}},
  };
  std::vector<std::pair<std::string, bytes>> out;
  for (const auto& [sig, args] : calls)
    out.emplace_back(sig, codec::abi::encode_call(sig, args).value());
  return out;
}

struct chain_view {
  const anvil_process& node;
  std::string registry;

  [[nodiscard]] uint64_t height() const { return quantity(node.rpc("eth_blockNumber")); }
  [[nodiscard]] uint64_t nonce(const address& a) const {
    return quantity(node.rpc("eth_getTransactionCount", {codec::hex::encode_prefixed(a), "latest"}));
  }
  [[nodiscard]] size_t logs() const {
    const json::value l = node.rpc("eth_getLogs", {json::object{{"fromBlock", "0x0"}, {"address", registry}}});
    return l.as_array().size();
  }
  /// eth_call of `data` from `from`: whether it reverted, and with what data.
  [[nodiscard]] std::pair<bool, std::string> call(const address& from, const bytes& data) const {
    try {
      (void)node.rpc("eth_call", {json::object{{"from", codec::hex::encode_prefixed(from)},
                                               {"to", registry},
                                               {"data", codec::hex::encode_prefixed(data)}},
                                  "latest"});
      return {false, ""};
    } catch (const std::exception& e) {
      return {true, e.what()};
    }
  }
  /// Sends `data` as `from` (impersonated, gas given so no estimate refuses it first) and returns
  /// the receipt once mined.
  [[nodiscard]] json::object send(const address& from, const bytes& data) const {
    const std::string who = codec::hex::encode_prefixed(from);
    (void)node.rpc("anvil_impersonateAccount", {who});
    (void)node.rpc("anvil_setBalance", {who, "0x3635c9adc5dea00000"});
    const json::value hash = node.rpc(
        "eth_sendTransaction",
        {json::object{
            {"from", who}, {"to", registry}, {"data", codec::hex::encode_prefixed(data)}, {"gas", "0x30d40"}}});
    (void)node.rpc("anvil_stopImpersonatingAccount", {who});
    for (int i = 0; i < 200; ++i) {
      const json::value r = node.rpc("eth_getTransactionReceipt", {hash});
      if (r.is_object())
        return r.as_object();
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    FAIL("no receipt for " << json::serialize(hash));
    return {};
  }
};

}  // namespace

TEST_CASE("evm ledger: no registry call moves credits, and no ledger path makes a run free") {
  anvil_process node;
  temp_dir keys;
  temp_dir data;
  const std::string data_dir = data.path() + "/data";
  const finished_run deployed =
      run_to_exit({"deploy-registry", "--rpc-url", node.url(), "--key-file", key_file(keys), "--data-dir", data_dir});
  REQUIRE_MESSAGE(deployed.status.clean(), deployed.stderr_text);
  const std::string registry = deployed.stdout_text.substr(0, deployed.stdout_text.find('\n'));
  const chain_view chain{node, registry};
  const json::value payers = node.rpc(
      "eth_call",
      {json::object{{"to", registry}, {"data", codec::hex::encode_prefixed(reg::encode(reg::api_payers_call{}))}},
       "latest"});
  const auto payer_list =
      reg::decode_result<reg::api_payers_call>(codec::hex::decode(payers.as_string()).value()).value();
  REQUIRE(payer_list.size() == 1);
  const address payer = payer_list[0];
  (void)node.rpc("anvil_setBalance", {codec::hex::encode_prefixed(payer), "0x3635c9adc5dea00000"});

  server_process srv(
      {"--dev", "--sandbox-workers", "2", "--ledger", "evm", "--rpc-url", node.url(), "--registry-address", registry,
       "--chain-id", "31337", "--write-surcharge", "1", "--run-price", std::to_string(kPrice)},
      data_dir);
  http_client c = srv.client();

  // A funded account with everything a run needs, and an account that holds no credit.
  const account_keys acct = create_account(c, "funded");
  const account_keys broke = create_account(c, "broke");
  CHECK(buy_credits(c, acct.auth(), 500) == 500);
  const response w = c.post("/create_wallet", json::object{{"name", "signer"}}, acct.auth());
  ITEST_REQUIRE_STATUS(w, 200);
  const std::string pkp = s_of(w.body, "pkp_id");
  const std::string cid = cid_of_code(kCode);
  const response g = c.post("/add_group",
                            json::object{{"name", "runners"},
                                         {"pkp_ids_permitted", json::array{json::string(pkp)}},
                                         {"cid_hashes_permitted", json::array{json::string(hashed_cid_hex(cid))}}},
                            acct.auth());
  ITEST_REQUIRE_STATUS(g, 200);
  const usage_keys key =
      create_usage_key(c, acct.auth(), json::object{{"execute_in_groups", json::array{u_of(g.body, "group_id")}}});
  const uint64_t funded = balance_of(c, acct.auth());  // 500 less the surcharged writes above
  CHECK(funded == 500 - 3);
  const hash256 account = codec::hex::decode_fixed<32>(acct.api_key_hash).value();
  const hash256 broke_account = codec::hex::decode_fixed<32>(broke.api_key_hash).value();
  const address admin = parse_address(acct.wallet_address).value();
  const address stranger = anvil_process::dev_addresses()[7];

  SUBCASE("the retired credit selectors revert for every sender, alone and in a multicall") {
    const uint64_t logs = chain.logs();
    for (const hash256& target : {account, broke_account})
      for (const auto& [sig, data] : retired_calls(target))
        for (const address& from : {payer, admin, stranger}) {
          CAPTURE(sig);
          CAPTURE(codec::hex::encode_prefixed(from));
          const auto [reverted, message] = chain.call(from, data);
          CHECK(reverted);
          const json::object receipt = chain.send(from, data);
          CHECK(receipt.at("status").as_string() == "0x0");
          CHECK(receipt.at("logs").as_array().empty());
          // Wrapped in a multicall with a real write: the whole batch reverts.
          reg::multicall_call m;
          m.calls = {reg::encode(reg::add_group_call{target, "free", "", {}, {}}), data};
          CHECK(chain.call(from, reg::encode(m)).first);
        }
    CHECK(chain.logs() == logs);
    // The registry's state and the metering store's balances are what they were.
    CHECK(balance_of(c, acct.auth()) == funded);
    CHECK(balance_of(c, broke.auth()) == 0);
    const response groups = c.get("/list_groups", acct.auth());
    ITEST_REQUIRE_STATUS(groups, 200);
  }

  SUBCASE("runs and relayed writes send nothing to the chain; without credits they are refused") {
    const json::object run{{"code", kCode}, {"pkp_id", pkp}};
    const uint64_t height = chain.height();
    const uint64_t payer_nonce = chain.nonce(payer);
    // At 100 credits a run, the funded account pays for 4 runs and is short for the fifth.
    constexpr uint64_t kRuns = 4;
    for (uint64_t i = 0; i < kRuns; ++i) {
      const response r = c.post("/run_action", run, key.auth());
      ITEST_REQUIRE_STATUS(r, 200);
      CHECK(u_of(r.body, "charged_credits") == kPrice);
      CHECK(balance_of(c, acct.auth()) == funded - (i + 1) * kPrice);
    }
    CHECK(chain.height() == height);
    CHECK(chain.nonce(payer) == payer_nonce);
    // The retired selectors, sent as the api payer to credit the account, change nothing: the
    // next run is short.
    for (const auto& [sig, data] : retired_calls(account))
      CHECK(chain.send(payer, data).at("status").as_string() == "0x0");
    const response short_run = c.post("/run_action", run, key.auth());
    CHECK(short_run.status == 402);
    CHECK(short_run.error_code() == "insufficient_credits");
    CHECK(balance_of(c, acct.auth()) == funded - kRuns * kPrice);

    // The account without credits: a surcharged write is 402 and never reaches the chain, after
    // the same attempts to credit it.
    for (const auto& [sig, data] : retired_calls(broke_account))
      (void)chain.send(payer, data);
    const uint64_t before = chain.height();
    const uint64_t logs = chain.logs();
    const response bw = c.post("/create_wallet", json::object{{"name", "free"}}, broke.auth());
    CHECK(bw.status == 402);
    CHECK(bw.error_code() == "insufficient_credits");
    CHECK(chain.height() == before);
    CHECK(chain.logs() == logs);
    CHECK(balance_of(c, broke.auth()) == 0);
  }

  CHECK(srv.stop().clean());
}

}  // namespace enact::itest
