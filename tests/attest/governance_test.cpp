// SPDX-License-Identifier: Apache-2.0
// The governance check (docs/protocol.md §5, check 4) against a real EVM:
// tests/attest/Governance.sol (creation code in Governance.bin, kept equal to the source by ctest
// attest.governance_bytecode) deployed on anvil from dev account 0 (unlocked, so
// eth_sendTransaction needs no local signing), one compose hash allowed, and
// enact::attest::verify_governance asked through enact::chain::rpc_client's eth_call.
#include <doctest/doctest.h>

#include <chrono>
#include <thread>

#include <boost/json.hpp>

#include <fstream>
#include <iterator>
#include <string>

#include "anvil_process.hpp"
#include "enact/attest/governance.hpp"
#include "enact/chain/client.hpp"
#include "enact/codec/hex.hpp"
#include "enact/address.hpp"
#include "enact/crypto/keccak.hpp"

namespace {

namespace json = boost::json;
using namespace enact;
using enact::test::anvil_process;

std::string governance_bin() { return enact::test::creation_code(ENACT_SOURCE_DIR "/tests/attest/Governance.bin"); }

/// eth_sendTransaction from dev account 0; returns the receipt. anvil mines each transaction in
/// a block of its own, but the receipt may appear a moment after the hash is returned: polled.
json::object send(const anvil_process& node, const json::object& tx_fields) {
  json::object tx = tx_fields;
  tx["from"] = codec::hex::encode_prefixed(anvil_process::dev_addresses()[0]);
  const json::value hash = node.rpc("eth_sendTransaction", json::array{tx});
  json::value receipt = node.rpc("eth_getTransactionReceipt", json::array{hash});
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (receipt.is_null() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    receipt = node.rpc("eth_getTransactionReceipt", json::array{hash});
  }
  REQUIRE(receipt.is_object());
  REQUIRE(receipt.at("status").as_string() == "0x1");
  return receipt.as_object();
}

hash256 hash_of(std::string_view label) { return crypto::keccak256(label); }

}  // namespace

TEST_CASE("attest.governance: allowedComposeHashes on anvil through rpc_client eth_call") {
  anvil_process node;
  const json::object deployed = send(node, {{"data", governance_bin()}});
  const address contract = parse_address(deployed.at("contractAddress").as_string()).value();

  const hash256 allowed = hash_of("compose allowed by governance");
  const hash256 other = hash_of("compose nobody allowed");
  bytes allow_call;
  {
    const hash256 selector_hash = crypto::keccak256(std::string_view("allow(bytes32)"));
    allow_call.assign(selector_hash.begin(), selector_hash.begin() + 4);
    allow_call.insert(allow_call.end(), allowed.begin(), allowed.end());
  }
  send(node, {{"to", codec::hex::encode_prefixed(contract)}, {"data", codec::hex::encode_prefixed(allow_call)}});

  chain::rpc_options o;
  o.url = node.url();
  const chain::rpc_client rpc(o);
  const attest::eth_call_fn eth_call = [&rpc](const address& to, bytes_view data) {
    return rpc.call(to, data);
  };

  struct row {
    const char* what;
    address to;
    hash256 compose_hash;
    bool passed;
  };
  const address no_code = anvil_process::dev_addresses()[5];
  const row rows[] = {
      {"the allowed hash", contract, allowed, true},
      {"a hash never allowed", contract, other, false},
      {"an address without code (empty return data is not an ABI bool)", no_code, allowed, false},
  };
  for (const row& r : rows) {
    CAPTURE(r.what);
    const attest::governance_report g = attest::verify_governance(r.to, r.compose_hash, eth_call);
    REQUIRE(g.checks.size() == 1);
    CHECK(g.checks[0].name == "compose_hash_allowed");
    CHECK(g.checks[0].passed == r.passed);
    CHECK(g.allowed == r.passed);
    CHECK(g.passed() == r.passed);
    CHECK(g.contract == r.to);
    CHECK(g.compose_hash == r.compose_hash);
    CHECK(!g.checks[0].detail.empty());
  }

  // The /info form: app_id and compose_hash as hex strings, with and without 0x.
  const std::string app_id = codec::hex::encode(contract);
  auto from_info = attest::verify_governance(app_id, codec::hex::encode(allowed), eth_call);
  REQUIRE(from_info.has_value());
  CHECK(from_info->passed());
  auto prefixed = attest::verify_governance("0x" + app_id, codec::hex::encode_prefixed(other), eth_call);
  REQUIRE(prefixed.has_value());
  CHECK_FALSE(prefixed->passed());
  auto bad = attest::verify_governance(app_id.substr(2), codec::hex::encode(allowed), eth_call);
  REQUIRE_FALSE(bad.has_value());
  CHECK(bad.code() == attest_errc::bad_field);

  // A node that cannot be reached is a failed check with the reason, not a pass.
  node.stop();
  const attest::governance_report down = attest::verify_governance(contract, allowed, eth_call);
  REQUIRE(down.checks.size() == 1);
  CHECK_FALSE(down.passed());
  CHECK_FALSE(down.allowed);
}
