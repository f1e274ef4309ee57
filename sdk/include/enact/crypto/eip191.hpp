// SPDX-License-Identifier: Apache-2.0
// EIP-191 version 0x45 ("personal_sign"): the digest a wallet signs for a plain message,
// keccak256("\x19Ethereum Signed Message:\n" ‖ decimal byte length ‖ message).
#pragma once

#include <string>
#include <string_view>

#include "enact/bytes.hpp"
#include "enact/crypto/keccak.hpp"

namespace enact::crypto {

/// The EIP-191 personal-message digest of `message`.
[[nodiscard]] inline hash256 personal_message_hash(bytes_view message) {
  keccak256_hasher h;
  h.update(
      std::string_view("\x19"
                       "Ethereum Signed Message:\n"));
  h.update(std::string_view(std::to_string(message.size())));
  h.update(message);
  return h.finalize();
}

/// Same, for the UTF-8 bytes of `message`.
[[nodiscard]] inline hash256 personal_message_hash(std::string_view message) {
  return personal_message_hash(as_bytes(message));
}

}  // namespace enact::crypto
