// SPDX-License-Identifier: Apache-2.0
// The wallet-proof envelope (core-api spec "Typed-data envelope", docs/protocol.md §2 ChainSecured and
// Billing): an EIP-712 document of a fixed shape that a wallet signs with eth_signTypedData_v4 to
// prove it holds an address, for one flow (CreateWallet, ConvertAccount, AddUsageApiKey,
// BillingAuth). `build` and `sign` make it for clients; `check` / `verify` are the server's checks,
// in the order docs/protocol.md §2 fixes; `encode_wallet_auth` / `decode_wallet_auth` carry it in
// the billing `X-Wallet-Auth` header.
//
// Two versions. Version 1 is the specification's: domain {name, version "1", chainId}, message
// {address, issuedAt}; it binds the signer, the flow and the chain id only, so it is valid on
// every deployment of one chain id and for any account or request. Version 2 (docs/protocol.md §2
// "Envelope version 2", a departure from the specification) binds what the signature authorizes:
//   domain   {name "Svc ChainSecured", version "2", chainId, verifyingContract: the registry}
//   CreateWallet / AddUsageApiKey  (address address, uint256 issuedAt, bytes32 nonce)
//   ConvertAccount                 (address address, bytes32 account, uint256 issuedAt, bytes32 nonce)
//   BillingAuth                    (address address, string method, string path, bytes32 bodyHash,
//                                   uint256 issuedAt)
// `account` is the hash of the account converted; `nonce` is single-use (the server keeps used
// ones for the window); a BillingAuth authorizes one request: its method, its target (path and
// query as sent) and keccak256 of its body.
//
// Canonical form of version 1 (anything else is refused):
//   {"types": {"EIP712Domain": [{"name":"name","type":"string"},{"name":"version","type":"string"},
//                               {"name":"chainId","type":"uint256"}],
//              "<Primary>":    [{"name":"address","type":"address"},
//                               {"name":"issuedAt","type":"uint256"}]},
//    "primaryType": "<Primary>",
//    "domain": {"name": "Svc ChainSecured", "version": "1", "chainId": <chain id>},
//    "message": {"address": "0x…", "issuedAt": <unix seconds>}}
// Version 2 has the same four parts with the members above, in that order. Object keys may come in
// any order; array order is fixed. chainId and issuedAt are JSON numbers (exact integers below
// 2^53) or decimal / 0x-hex strings, as eth_signTypedData_v4 accepts; bytes32 values are 0x + 64 hex.
//
// `check` checks, in this order, and stops at the first failure (error code after the arrow):
//   1. serialized typed data at most 4096 bytes, measured on the text as received -> too_large
//   2. valid JSON: an object with exactly types, primaryType, domain, message -> malformed
//   3. `types` exactly canonical for version 1 or 2: EIP712Domain and one of the four structs with
//      that version's member names, types and order, each member object exactly {name, type}, no
//      other struct; primaryType names the declared struct -> types_not_canonical. A primaryType
//      outside the four, or one that differs from the declared struct, is therefore
//      types_not_canonical (not wrong_primary_type: such a document is no envelope at all).
//   4. primaryType is the one this endpoint expects -> wrong_primary_type
//   5. domain has exactly the version's members; name "Svc ChainSecured", version the one the types
//      declare -> domain_mismatch (a chainId that is not an unsigned integer -> malformed)
//   6. version 1 when the expectation does not accept it -> version_refused
//   7. domain.chainId equals the expected chain id -> chain_id_mismatch
//   8. version 2: domain.verifyingContract equals the expected registry -> contract_mismatch
//   9. message members well formed (address 0x + 40 hex, EIP-55 checked when mixed case; unsigned
//      integers; bytes32; strings) -> malformed
//  10. now - max_skew <= issuedAt <= now + max_skew (bounds included) -> expired
//  11. version 2 ConvertAccount: message.account equals the expected account -> account_mismatch
//  12. version 2 BillingAuth: method, path and bodyHash equal the request's -> request_mismatch
//  13. signature is 0x + 130 hex and a key recovers from it (v in 0/1/27/28, low s) ->
//      signature_malformed
//  14. recovered signer equals message.address, and expected_signer when set -> signer_mismatch
// A version 2 nonce's single use is the server's to enforce (replayed is its code).
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
  version_refused,      // a version 1 envelope where only version 2 is accepted
  contract_mismatch,    // domain.verifyingContract differs from the expected registry
  account_mismatch,     // ConvertAccount v2 names another account than the one converted
  request_mismatch,     // BillingAuth v2 signed for another method, target or body
  replayed,             // a version 2 nonce used before (reported by the server's nonce store)
};

}  // namespace enact
ENACT_ERRC(envelope_errc, envelope_category, "enact.envelope", "typed data too large", "malformed typed data",
           "typed data types not canonical", "wrong primaryType", "domain mismatch", "chainId mismatch",
           "issuedAt outside the window", "malformed signature", "signer mismatch", "envelope version refused",
           "verifyingContract mismatch", "account mismatch", "request mismatch", "nonce already used")

namespace enact::eip712::envelope {

inline constexpr std::string_view kDomainName = "Svc ChainSecured";
inline constexpr std::string_view kDomainVersion = "1";
/// domain.version of the binding envelope (docs/protocol.md §2 "Envelope version 2").
inline constexpr std::string_view kDomainVersion2 = "2";
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

// --- version 2 ------------------------------------------------------------------------------

/// The deployment a version 2 envelope is for: its registry's chain and address.
struct deployment {
  uint64_t chain_id = 0;
  address verifying_contract{};  // the registry (get_node_chain_config's contract_address)
};

/// The request a version 2 BillingAuth authorizes.
struct request_binding {
  std::string method;   // "GET", "POST", as sent
  std::string path;     // the request target as sent: path and query, e.g. "/core/v1/billing/usage?limit=20"
  hash256 body_hash{};  // keccak256 of the body's bytes (of nothing for a request without one)
};

/// A version 2 message; which members a kind carries is in the header comment above.
struct message_v2 {
  address signer{};
  uint64_t issued_at = 0;
  hash256 nonce{};          // CreateWallet, AddUsageApiKey, ConvertAccount
  hash256 account{};        // ConvertAccount: the account converted
  request_binding request;  // BillingAuth
};

/// The request binding of `method` `path` with `body` (body_hash = keccak256(body)).
[[nodiscard]] request_binding bind_request(std::string_view method, std::string_view path, std::string_view body);

/// The canonical version 2 envelope, as a wallet would sign it with eth_signTypedData_v4.
[[nodiscard]] boost::json::object build(kind k, const deployment& d, const message_v2& m);

/// Its EIP-712 digest, computed directly from the values (equal to eip712::digest of build(k, d, m)).
[[nodiscard]] hash256 digest(kind k, const deployment& d, const message_v2& m);

/// Builds a version 2 envelope for the key's address (m.signer is replaced by it) and signs it.
[[nodiscard]] result<signed_envelope> sign(kind k, const deployment& d, message_v2 m, const Secret& key);

/// Signs a version 2 envelope of kind `k` issued at `issued_at` with a fresh random nonce;
/// `account` is the account converted (ConvertAccount only).
[[nodiscard]] result<signed_envelope> sign_v2(kind k, const deployment& d, const Secret& key, uint64_t issued_at,
                                              const hash256& account = {});

/// Signs a version 2 BillingAuth for one request.
[[nodiscard]] result<signed_envelope> sign_billing(const deployment& d, const Secret& key, uint64_t issued_at,
                                                   request_binding request);

/// What the server expects of an envelope.
struct expectation {
  kind expected;
  uint64_t chain_id;
  uint64_t now;  // unix seconds
  uint64_t max_skew = kDefaultMaxSkew;
  std::optional<address> expected_signer;  // e.g. new_admin_wallet_address for conversion
  /// Version 2 is checked against this registry; without it a version 2 envelope is
  /// contract_mismatch (the verifier cannot say which deployment it is).
  std::optional<address> verifying_contract = std::nullopt;
  /// Whether version 1 is accepted (docs/protocol.md §2: for CreateWallet and AddUsageApiKey
  /// always, for ConvertAccount and BillingAuth only when the operator opts in).
  bool accept_v1 = true;
  /// ConvertAccount v2: the account converted. Unset, a version 2 ConvertAccount is account_mismatch.
  std::optional<hash256> account = std::nullopt;
  /// BillingAuth v2: the request received. Unset, a version 2 BillingAuth is request_mismatch.
  std::optional<request_binding> request = std::nullopt;
};

/// What a passing envelope says.
struct verified {
  address signer{};
  unsigned version = 1;
  uint64_t issued_at = 0;
  std::optional<hash256> nonce;  // version 2 CreateWallet, AddUsageApiKey, ConvertAccount
};

/// Checks an envelope as received (the typed data's JSON text and the signature's hex) in the
/// order given above.
[[nodiscard]] result<verified> check(std::string_view typed_data_json, std::string_view signature_hex,
                                     const expectation& want);

/// Same, for typed data already parsed out of a larger body; `serialized_size` is the size of its
/// text (as received when known, else of its compact serialization) for the size rule.
[[nodiscard]] result<verified> check(const boost::json::value& typed_data, size_t serialized_size,
                                     std::string_view signature_hex, const expectation& want);

/// The single-use name of a version 2 nonce: keccak256 of the primaryType, the signer and the
/// nonce, what the server's nonce store records.
[[nodiscard]] hash256 nonce_id(kind k, const verified& v);

/// check(), returning the signer only.
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
