// SPDX-License-Identifier: Apache-2.0
// Links the packaged static SDK and client with their dependencies: an EIP-55 address from
// Keccak-256, a signature recovered with libsecp256k1, and the client's typed network error.
#include <cstdio>
#include <string>

#include "enact/address.hpp"
#include "enact/client/core_client.hpp"
#include "enact/crypto/eip191.hpp"
#include "enact/crypto/secp256k1.hpp"
#include "enact/secret.hpp"

namespace secp = enact::crypto::secp256k1;

int main() {
  // The key 0x01…01 signs an EIP-191 message; its signer recovers to the key's own address.
  const enact::Secret key(enact::bytes(32, 0x01));
  const auto digest = enact::crypto::personal_message_hash(std::string_view("test_package"));
  const auto pub = secp::public_key_of(key);
  const auto sig = secp::sign(digest, key);
  if (!pub || !sig) {
    std::puts("test_package: signing failed");
    return 1;
  }
  const auto signer = secp::recover_address(digest, sig->to_bytes());
  if (!signer || enact::to_checksum_address(*signer) != enact::to_checksum_address(secp::to_address(*pub))) {
    std::puts("test_package: recovered another signer");
    return 1;
  }
  enact::client::client_options options;
  options.base_url = "http://127.0.0.1:1";  // nothing listens on port 1
  options.max_retries = 0;
  enact::client::core_client client(options);
  try {
    (void)client.get_api_payers();
    std::puts("test_package: a server answered on port 1");
    return 1;
  } catch (const enact::api_error& e) {
    if (e.errc() != enact::api_errc::connection_failed) {
      std::printf("test_package: %s\n", e.what());
      return 1;
    }
  }
  std::printf("test_package ok: %s\n", enact::to_checksum_address(*signer).c_str());
  return 0;
}
