// SPDX-License-Identifier: Apache-2.0
// Uses the installed SDK's headers and compiled library (keccak, secp256k1 through the exported
// link interface, EIP-712 through Boost.JSON), and the installed typed client (cpp-httplib and
// OpenSSL through its exported link interface), as a user's application would.
#include <cstdio>
#include <string>

#include "enact/client/core_client.hpp"
#include "enact/codec/hex.hpp"
#include "enact/crypto/keccak.hpp"
#include "enact/eip712/envelope.hpp"

int main() {
  auto decoded = enact::codec::hex::decode("0x68656c6c6f");
  if (!decoded || std::string(enact::as_chars(*decoded)) != "hello") {
    std::puts("consumer failed: hex");
    return 1;
  }
  // crypto::keccak256("") is the well-known empty hash.
  if (enact::codec::hex::encode(enact::crypto::keccak256(std::string_view{})) !=
      "c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470") {
    std::puts("consumer failed: keccak256");
    return 1;
  }
  // An envelope with no signature is refused with a typed error, not a crash.
  enact::eip712::envelope::expectation expect{};
  expect.expected = enact::eip712::envelope::kind::create_wallet;
  expect.chain_id = 1;
  expect.now = 1800000000;
  if (enact::eip712::envelope::verify("{}", "0x", expect)) {
    std::puts("consumer failed: envelope accepted");
    return 1;
  }
  // The client links and fails the way it promises: nothing listens on port 1.
  enact::client::client_options options;
  options.base_url = "http://127.0.0.1:1";
  options.max_retries = 0;
  enact::client::core_client client(options);
  try {
    (void)client.get_node_chain_config();
    std::puts("consumer failed: reached a server on port 1");
    return 1;
  } catch (const enact::api_error& e) {
    if (e.errc() != enact::api_errc::connection_failed) {
      std::printf("consumer failed: client error %s\n", e.what());
      return 1;
    }
  }
  std::puts("consumer ok");
  return 0;
}
