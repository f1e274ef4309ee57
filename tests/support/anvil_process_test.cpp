// SPDX-License-Identifier: Apache-2.0
// enact::test::anvil_process: two nodes at once on their own ports and chain ids, the dev keys
// against the node's accounts, restart on the same port with and without kept state, and the
// errors of a node that cannot start.
#include "anvil_process.hpp"

#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>

#include "enact/codec/hex.hpp"
#include "enact/crypto/secp256k1.hpp"

namespace enact::test {
namespace {

std::string hx(bytes_view b) { return codec::hex::encode_prefixed(b); }

/// A value transfer from dev account 0 (anvil's dev accounts are unlocked for
/// eth_sendTransaction), once its receipt is there. Returns the transaction hash.
std::string send_transfer(const anvil_process& node) {
  const auto& a = anvil_process::dev_addresses();
  boost::json::object tx = {{"from", hx(a[0])}, {"to", hx(a[1])}, {"value", "0x1"}};
  std::string hash(node.rpc("eth_sendTransaction", {tx}).as_string());
  // Automining may finish the block just after the answer: poll for the receipt (bounded).
  for (int i = 0; i < 1000; ++i) {
    if (!node.rpc("eth_getTransactionReceipt", {boost::json::value(hash)}).is_null())
      return hash;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  throw std::runtime_error("no receipt for " + hash);
}

TEST_CASE("two nodes at once, each with its port and chain id") {
  anvil_process a;
  anvil_process b(777);
  CHECK(a.running());
  CHECK(b.running());
  CHECK(a.port() != b.port());
  CHECK(a.url() == "http://127.0.0.1:" + std::to_string(a.port()));
  CHECK(a.chain_id() == 31337);
  CHECK(b.chain_id() == 777);
  CHECK(a.rpc("eth_chainId").as_string() == "0x7a69");
  CHECK(b.rpc("eth_chainId").as_string() == "0x309");
  // Separate chains: a transaction on one leaves the other at its genesis block.
  (void)send_transfer(a);
  CHECK(a.rpc("eth_blockNumber").as_string() == "0x1");
  CHECK(b.rpc("eth_blockNumber").as_string() == "0x0");
  CHECK(a.log_text().find("Listening on 127.0.0.1:" + std::to_string(a.port())) != std::string::npos);
}

TEST_CASE("dev keys are the node's accounts") {
  anvil_process node;
  const boost::json::array accounts = node.rpc("eth_accounts").as_array();
  REQUIRE(accounts.size() == anvil_process::kDevAccounts);
  for (size_t i = 0; i < anvil_process::kDevAccounts; ++i) {
    INFO("account ", i);
    const address& want = anvil_process::dev_addresses()[i];
    CHECK(codec::hex::decode_fixed<20>(accounts[i].as_string()).value() == want);
    const Secret key(anvil_process::dev_private_keys()[i]);
    CHECK(crypto::secp256k1::to_address(crypto::secp256k1::public_key_of(key).value()) == want);
  }
}

TEST_CASE("stop and start: same port; the chain survives with keep_state only") {
  struct case_ {
    bool keep_state;
    const char* block_after_restart;
  };
  for (const case_ c : {case_{true, "0x1"}, case_{false, "0x0"}}) {
    INFO("keep_state ", c.keep_state);
    anvil_process::options o;
    o.chain_id = 4242;
    o.keep_state = c.keep_state;
    anvil_process node(o);
    const uint16_t port = node.port();
    const std::string tx = send_transfer(node);
    CHECK(node.rpc("eth_blockNumber").as_string() == "0x1");

    node.stop();
    CHECK_FALSE(node.running());
    CHECK_THROWS_AS((void)node.rpc("eth_chainId"), std::runtime_error);
    node.stop();  // idempotent

    node.start();
    CHECK(node.running());
    CHECK(node.port() == port);
    CHECK(node.rpc("eth_chainId").as_string() == "0x1092");
    CHECK(node.rpc("eth_blockNumber").as_string() == c.block_after_restart);
    const boost::json::value receipt = node.rpc("eth_getTransactionReceipt", {boost::json::value(tx)});
    CHECK(receipt.is_null() == !c.keep_state);
    node.start();  // no-op while running
    CHECK(node.port() == port);
  }
}

TEST_CASE("a node that cannot start throws with its output") {
  anvil_process::options missing;
  missing.binary = "/nonexistent/anvil";
  CHECK_THROWS_WITH_AS(anvil_process{missing}, doctest::Contains("no executable anvil"), std::runtime_error);

  anvil_process::options bad_flag;
  bad_flag.extra_args = {"--no-such-flag"};
  CHECK_THROWS_WITH_AS(anvil_process{bad_flag}, doctest::Contains("exited before listening"), std::runtime_error);

  // A restart on a port someone took meanwhile fails (and says so) instead of moving elsewhere.
  anvil_process node;
  node.stop();
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(node.port());
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(fd, reinterpret_cast<const sockaddr*>(&sa), sizeof sa) == 0);
  REQUIRE(::listen(fd, 1) == 0);
  CHECK_THROWS_WITH_AS(node.start(), doctest::Contains("exited before listening"), std::runtime_error);
  CHECK_FALSE(node.running());
  ::close(fd);
  node.start();
  CHECK(node.rpc("eth_chainId").as_string() == "0x7a69");
}

}  // namespace
}  // namespace enact::test
