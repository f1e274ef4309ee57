// SPDX-License-Identifier: Apache-2.0
// Web3 Secret Storage (version 3) keystore files: the password-encrypted key files that geth,
// foundry's `cast wallet`, eth-account, MetaMask's exports and ethers read and write.
//
// A file holds one secp256k1 private key encrypted with AES-128-CTR under the first half of a
// key derived from the password by scrypt or PBKDF2-HMAC-SHA256; the MAC is
// keccak256(derived[16..32] ‖ ciphertext), so a wrong password is told apart from a damaged file
// only by the MAC (both read as wrong_password). decrypt() accepts what those tools write (the
// "crypto" or "Crypto" key, any field order, extra fields such as ethers' "x-ethers") and refuses
// KDF parameters that would cost more than `limits` allow before deriving anything, so a file from
// an untrusted source cannot make the caller allocate gigabytes. Derived keys are wiped.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "enact/bytes.hpp"
#include "enact/error.hpp"
#include "enact/result.hpp"
#include "enact/secret.hpp"

namespace enact {

enum class keystore_errc {
  malformed = 1,     // not JSON, a missing or ill-typed field, bad hex, a wrong length
  unsupported,       // version other than 3, a cipher other than aes-128-ctr, a KDF or PRF we do not run
  wrong_password,    // the MAC does not match: the password is wrong or the file was altered
  address_mismatch,  // the decrypted key's address differs from the file's "address" field
  too_costly,        // the KDF parameters exceed the caller's limits
  backend_failed,    // OpenSSL reported an internal failure
};

}  // namespace enact
ENACT_ERRC(keystore_errc, keystore_category, "enact.keystore", "malformed keystore", "unsupported keystore",
           "wrong password", "keystore address mismatch", "keystore KDF too costly", "keystore backend failure")

namespace enact::crypto::keystore {

/// scrypt's cost parameters. The defaults are geth's and ethers' "standard" ones (about 128 MiB and
/// a second of work on a laptop).
struct scrypt_params {
  uint64_t n = 131072;  // a power of two greater than 1
  uint32_t r = 8;
  uint32_t p = 1;
};

/// PBKDF2-HMAC-SHA256's iteration count (the Web3 Secret Storage example's 262144).
struct pbkdf2_params {
  uint32_t c = 262144;
};

using kdf_params = std::variant<scrypt_params, pbkdf2_params>;

/// What encrypt() writes. Salt, IV and id are random unless given (known-answer tests give them).
struct encrypt_options {
  kdf_params kdf = scrypt_params{};
  std::optional<std::array<uint8_t, 32>> salt;
  std::optional<std::array<uint8_t, 16>> iv;
  std::optional<std::string> id;  // a UUID; a random version 4 UUID when absent
};

/// The most a file may ask of decrypt(): scrypt's memory (128 · r · (n + p) bytes) and its work
/// (n · r · p), and PBKDF2's iterations. The defaults admit every setting the common tools write.
struct limits {
  uint64_t max_scrypt_memory = uint64_t{1} << 30;  // 1 GiB
  uint64_t max_scrypt_work = uint64_t{1} << 24;    // n · r · p
  uint32_t max_pbkdf2_iterations = 10'000'000;
};

/// The private key in `json`, decrypted with `password`. Checks the key is a valid secp256k1
/// key and, when the file names an address, that the key's address is that one.
[[nodiscard]] result<Secret> decrypt(std::string_view json, std::string_view password, const limits& lim = {});

/// `private_key` (32 bytes, a valid secp256k1 key) encrypted with `password`, as keystore JSON:
/// {"address", "crypto": {"cipher", "cipherparams": {"iv"}, "ciphertext", "kdf", "kdfparams", "mac"},
/// "id", "version": 3}, hex without "0x" as geth writes it.
[[nodiscard]] result<std::string> encrypt(const Secret& private_key, std::string_view password,
                                          const encrypt_options& options = {});

}  // namespace enact::crypto::keystore
