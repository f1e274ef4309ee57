// SPDX-License-Identifier: Apache-2.0
// The arguments of the signing capabilities an action calls beyond signEcdsa (docs/protocol.md §2
// "Running an action"): Enact.signEd25519's message, Enact.getPublicKey's scheme,
// Enact.signTypedData's document and Enact.signTransaction's transaction, each read and checked
// here before any key is used, so a malformed or absurd argument is refused with nothing signed.
// Which PKP may sign is decided by the run's capability handler (routes_run.cpp), the same rule
// for every capability; these functions see no keys.
#pragma once

#include <boost/json/object.hpp>

#include <cstddef>
#include <string>
#include <string_view>

#include "enact/bytes.hpp"
#include "enact/chain/transaction.hpp"
#include "enact/result.hpp"

namespace enact::core::run_signing {

/// Longest message Enact.signEd25519 signs (bytes, after decoding).
inline constexpr size_t kMaxEd25519Message = 64u << 10;
/// Longest typed-data document Enact.signTypedData takes (its JSON text).
inline constexpr size_t kMaxTypedDataBytes = 64u << 10;
/// Longest `data` of a transaction Enact.signTransaction signs (bytes; geth's pool refuses
/// transactions over 128 KiB).
inline constexpr size_t kMaxTxData = 128u << 10;
/// Bounds of a transaction's gas limit: the intrinsic gas of any transaction, and far above any
/// chain's block gas limit.
inline constexpr uint64_t kMinTxGas = 21000;
inline constexpr uint64_t kMaxTxGas = 1'000'000'000;
/// Largest chain id: JavaScript's Number.MAX_SAFE_INTEGER (EIP-2294 bounds it lower still).
inline constexpr uint64_t kMaxChainId = (uint64_t{1} << 53) - 1;

/// `args.message`: a string, read as hex bytes when it starts with "0x" (as Enact.sha256 reads
/// strings), else as its UTF-8 bytes; at most kMaxEd25519Message bytes.
[[nodiscard]] result<bytes> ed25519_message(const boost::json::object& args);

/// `args.scheme`: "secp256k1" (the default when absent) or "ed25519".
[[nodiscard]] result<std::string> key_scheme(const boost::json::object& args);

/// `args.name` when given (1..128 characters), else "sig<n>" for the n-th named signature of the
/// run: the key of the run's `signatures` answer. `method` prefixes the error message.
[[nodiscard]] result<std::string> signature_name(const boost::json::object& args, std::string_view method, size_t n);

/// The EIP-712 digest of `args.typedData` (an object, or its JSON text): the document as
/// eth_signTypedData_v4 takes it, at most kMaxTypedDataBytes of JSON.
[[nodiscard]] result<hash256> typed_data_digest(const boost::json::object& args);

/// `args.tx`: an EIP-1559 transaction {chainId, nonce, maxPriorityFeePerGas, maxFeePerGas,
/// gasLimit (or gas), to (absent or null: contract creation), value, data}. Integers are JSON
/// integers up to 2^53 − 1 or decimal or 0x-hex strings. Refused: unknown fields (gasPrice, a
/// type, an access list), chainId 0 or above kMaxChainId, a nonce of 2^64 − 1 or more (EIP-2681),
/// gas outside [kMinTxGas, kMaxTxGas], maxPriorityFeePerGas above maxFeePerGas, fees or a
/// value above 2^256 − 1, data over kMaxTxData bytes.
[[nodiscard]] result<chain::eip1559_tx> transaction(const boost::json::object& args);

}  // namespace enact::core::run_signing
