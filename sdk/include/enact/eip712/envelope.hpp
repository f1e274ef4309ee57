// SPDX-License-Identifier: Apache-2.0
// The wallet-proof envelope (core-api spec "Typed-data envelope", docs/protocol.md §2 ChainSecured and
// Billing): an EIP-712 document of a fixed shape that a wallet signs with eth_signTypedData_v4 to
// prove it holds an address, for one flow (CreateWallet, ConvertAccount, AddUsageApiKey,
// BillingAuth) on one chain at one time. `build` and `sign` make it for clients; `verify` is the
// server's check, in the order docs/protocol.md §2 fixes; `encode_wallet_auth` / `decode_wallet_auth` carry
// it in the billing `X-Wallet-Auth` header.
//
// Canonical form (anything else is refused):
//   {"types": {"EIP712Domain": [{"name":"name","type":"string"},{"name":"version","type":"string"},
//                               {"name":"chainId","type":"uint256"}],
//              "<Primary>":    [{"name":"address","type":"address"},
//                               {"name":"issuedAt","type":"uint256"}]},
//    "primaryType": "<Primary>",
//    "domain": {"name": "Svc ChainSecured", "version": "1", "chainId": <chain id>},
//    "message": {"address": "0x…", "issuedAt": <unix seconds>}}
// Object keys may come in any order; array order is fixed. chainId and issuedAt are JSON numbers
// (exact integers below 2^53) or decimal / 0x-hex strings, as eth_signTypedData_v4 accepts.
//
// `verify` checks, in this order, and stops at the first failure (error code after the arrow):
//   1. serialized typed data at most 4096 bytes, measured on the text as received -> too_large
//   2. valid JSON: an object with exactly types, primaryType, domain, message -> malformed
//   3. `types` exactly canonical: the two structs above with the same member names, types and
//      order, each member object exactly {name, type}, no other struct; primaryType names the
//      declared struct, which is one of the four -> types_not_canonical. A primaryType outside
//      the four, or one that differs from the declared struct, is therefore types_not_canonical
//      (not wrong_primary_type: such a document is no envelope at all).
//   4. primaryType is the one this endpoint expects -> wrong_primary_type
//   5. domain has exactly name, version, chainId; name "Svc ChainSecured", version "1"
//      -> domain_mismatch (a chainId that is not an unsigned integer -> malformed)
//   6. domain.chainId equals the expected chain id -> chain_id_mismatch
//   7. message has exactly address (0x + 40 hex, EIP-55 checked when mixed case) and issuedAt
//      (unsigned integer) -> malformed
//   8. now - max_skew <= issuedAt <= now + max_skew (bounds included) -> expired
//   9. signature is 0x + 130 hex and a key recovers from it (v in 0/1/27/28, low s) ->
//      signature_malformed
//  10. recovered signer equals message.address, and expected_signer when set -> signer_mismatch
#pragma once

#include <boost/json.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "enact/bytes.hpp"
#include "enact/u256.hpp"
#include "enact/secret.hpp"
#include "enact/error.hpp"
#include "enact/result.hpp"

namespace enact {

enum class envelope_errc {
  too_large = 1,        // serialized typed data (or X-Wallet-Auth header) over the limit
  malformed,            // not JSON, wrong shape, bad message values, bad base64 header
  types_not_canonical,  // `types` (or primaryType against them) differs from the canonical form
  wrong_primary_type,   // a valid envelope for another flow
  domain_mismatch,      // domain keys, name or version differ
  chain_id_mismatch,    // domain.chainId differs from the expected chain
  expired,              // issuedAt outside now ± max_skew
  signature_malformed,  // not 0x + 65 bytes of hex, or no key recovers from it
  signer_mismatch,      // recovered address differs from message.address or the expected signer
};

}  // namespace enact
ENACT_ERRC(envelope_errc, envelope_category, "enact.envelope", "typed data too large", "malformed typed data",
           "typed data types not canonical", "wrong primaryType", "domain mismatch", "chainId mismatch",
           "issuedAt outside the window", "malformed signature", "signer mismatch")

namespace enact::eip712::envelope {

inline constexpr std::string_view kDomainName = "Svc ChainSecured";
inline constexpr std::string_view kDomainVersion = "1";
/// Largest serialized typed data accepted (core-api spec, Limits: 4 KiB).
inline constexpr size_t kMaxTypedDataSize = 4096;
/// Default issuedAt window, seconds either side of now.
inline constexpr uint64_t kDefaultMaxSkew = 300;
/// Largest X-Wallet-Auth header value accepted: base64 of a maximal typed data plus signature.
inline constexpr size_t kMaxWalletAuthSize = 8192;

/// The flow a signature is for; each is one primaryType.
enum class kind { create_wallet, convert_account, add_usage_api_key, billing_auth };

/// "CreateWallet", "ConvertAccount", "AddUsageApiKey", "BillingAuth".
[[nodiscard]] std::string_view primary_type_name(kind k) noexcept;
/// The kind whose primaryType is `name` (exact, case-sensitive).
[[nodiscard]] std::optional<kind> kind_from_name(std::string_view name) noexcept;

/// The canonical envelope for `signer`, as a wallet would sign it with eth_signTypedData_v4.
/// chainId and issuedAt are JSON numbers (decimal strings above 2^53 - 1, which JavaScript could
/// not read exactly); the address is EIP-55 checksummed.
[[nodiscard]] boost::json::object build(kind k, uint64_t chain_id, const address& signer, uint64_t issued_at);

/// The EIP-712 digest of the canonical envelope, computed directly from its four values (the type
/// hashes and the domain's name and version hashes are constants), equal to eip712::digest of
/// build(k, chain_id, signer, issued_at) and about five times cheaper; verify and sign use it.
[[nodiscard]] hash256 digest(kind k, const u256& chain_id, const address& signer, const u256& issued_at);

/// A signed envelope as the ChainSecured endpoints and the billing header carry it.
struct signed_envelope {
  boost::json::object typed_data;
  std::string signature;  // 0x + 130 hex: r ‖ s ‖ v
};

/// Builds the envelope for the key's address and signs it.
[[nodiscard]] result<signed_envelope> sign(kind k, uint64_t chain_id, const Secret& key, uint64_t issued_at);

/// `{"typed_data": …, "signature": "0x…"}`.
[[nodiscard]] std::string to_json(const signed_envelope& env);

/// What the server expects of an envelope.
struct expectation {
  kind expected;
  uint64_t chain_id;
  uint64_t now;  // unix seconds
  uint64_t max_skew = kDefaultMaxSkew;
  std::optional<address> expected_signer;  // e.g. new_admin_wallet_address for conversion
};

/// Checks an envelope as received (the typed data's JSON text and the signature's hex) in the
/// order given above; returns the signer's address.
[[nodiscard]] result<address> verify(std::string_view typed_data_json, std::string_view signature_hex,
                                     const expectation& want);

/// Same, for typed data already parsed out of a larger body; `serialized_size` is the size of its
/// text (as received when known, else of its compact serialization) for the size rule.
[[nodiscard]] result<address> verify(const boost::json::value& typed_data, size_t serialized_size,
                                     std::string_view signature_hex, const expectation& want);

/// The X-Wallet-Auth header value: base64 (standard alphabet, padded) of `to_json(env)`.
[[nodiscard]] std::string encode_wallet_auth(const signed_envelope& env);

/// Splits an X-Wallet-Auth value into (typed data as compact JSON text, signature). The header
/// holds the typed data as an object inside a larger JSON text, so the text returned, and the
/// size `verify` then measures, is its compact serialization. Values over kMaxWalletAuthSize are
/// too_large; bad base64, bad JSON or any other shape than exactly {"typed_data": object,
/// "signature": string} is malformed.
[[nodiscard]] result<std::pair<std::string, std::string>> decode_wallet_auth(std::string_view header);

}  // namespace enact::eip712::envelope
