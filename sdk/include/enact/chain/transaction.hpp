// SPDX-License-Identifier: Apache-2.0
// EIP-1559 (type 2) transactions: the unsigned payload 0x02 ‖ rlp([chainId, nonce,
// maxPriorityFeePerGas, maxFeePerGas, gasLimit, to, value, data, accessList]), its signing hash,
// signing with a private key into the raw form 0x02 ‖ rlp([..., yParity, r, s]) that
// `eth_sendRawTransaction` takes, the transaction hash, and a strict decoder of raw transactions
// that recovers the sender. Only an empty access list is supported (the SDK never needs one):
// encoders write `[]` and decoders reject a non-empty list with `chain_errc::access_list`.
// Validity rules that depend on chain state (fees against the base fee, maxPriorityFeePerGas
// ≤ maxFeePerGas, intrinsic gas) are not checked here: these functions deal with the encoding.
#pragma once

#include <cstdint>
#include <optional>

#include "enact/bytes.hpp"
#include "enact/u256.hpp"
#include "enact/crypto/secp256k1.hpp"
#include "enact/secret.hpp"
#include "enact/error.hpp"
#include "enact/result.hpp"

namespace enact {

enum class chain_errc {
  wrong_type = 1,  // empty input, or a first byte other than 0x02 (legacy or another type)
  bad_rlp,         // the payload is not one canonical RLP item (the message names the RLP reason)
  field_count,     // the RLP list does not have 9 (unsigned) or 12 (signed) elements
  bad_field,       // a field of the wrong shape: a list, a non-canonical or too large integer,
                   // a `to` that is neither empty nor 20 bytes
  access_list,     // a non-empty access list (not supported)
  bad_signature,   // yParity not 0 or 1, r or s zero or >= n, or no key recovers
  high_s,          // s > n/2 (EIP-2)
};

}  // namespace enact
ENACT_ERRC(chain_errc, chain_category, "enact.chain", "not an EIP-1559 transaction", "malformed RLP",
           "wrong number of fields", "malformed field", "non-empty access list", "invalid signature",
           "s is high (EIP-2)")

namespace enact::chain {

/// The EIP-2718 type byte of an EIP-1559 transaction.
inline constexpr uint8_t kEip1559Type = 0x02;

/// The fields of an EIP-1559 transaction (access list: empty only, see the file comment).
/// `to` empty means contract creation.
struct eip1559_tx {
  uint64_t chain_id = 0;
  uint64_t nonce = 0;  // EIP-2681 bounds the nonce to 64 bits
  u256 max_priority_fee_per_gas;
  u256 max_fee_per_gas;
  uint64_t gas_limit = 0;
  std::optional<address> to;
  u256 value;
  bytes data;

  friend bool operator==(const eip1559_tx&, const eip1559_tx&) = default;
};

/// A decoded raw transaction: its fields, signature, the recovered sender and its hash.
struct decoded_tx {
  eip1559_tx tx;
  crypto::secp256k1::signature signature;  // v holds yParity (0 or 1)
  address from{};
  hash256 hash{};
};

/// 0x02 ‖ rlp([chainId, nonce, maxPriorityFeePerGas, maxFeePerGas, gasLimit, to, value, data, []]).
[[nodiscard]] bytes unsigned_payload(const eip1559_tx& tx);

/// crypto::keccak256(unsigned_payload(tx)): the digest the sender signs (EIP-1559).
[[nodiscard]] hash256 signing_hash(const eip1559_tx& tx);

/// 0x02 ‖ rlp([..., yParity, r, s]) for a signature made elsewhere over signing_hash(tx)
/// (`sig.v` is yParity, 0 or 1). The signature is not checked.
[[nodiscard]] bytes encode_signed(const eip1559_tx& tx, const crypto::secp256k1::signature& sig);

/// Signs `tx` with `key` (RFC 6979, low s) and returns the raw transaction. Fails with a
/// secp256k1_errc when `key` is not a valid private key.
[[nodiscard]] result<bytes> sign(const eip1559_tx& tx, const Secret& key);

/// crypto::keccak256(raw): the transaction hash nodes report.
[[nodiscard]] hash256 tx_hash(bytes_view raw) noexcept;

/// Decodes a raw signed EIP-1559 transaction, accepting only the canonical encoding (exactly
/// what `encode_signed` writes), and recovers its sender. Errors are chain_errc.
[[nodiscard]] result<decoded_tx> decode(bytes_view raw);

/// Decodes an unsigned payload (what `unsigned_payload` writes), with the same strictness.
[[nodiscard]] result<eip1559_tx> decode_unsigned(bytes_view payload);

}  // namespace enact::chain
