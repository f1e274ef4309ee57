// SPDX-License-Identifier: Apache-2.0
// Generic EIP-712 typed data (https://eips.ethereum.org/EIPS/eip-712) as wallets sign it with
// eth_signTypedData_v4: parsing and validation of a typed-data document, `encodeType`, `typeHash`,
// `encodeData`, `hashStruct`, the domain separator, the signing digest
// crypto::keccak256(0x1901 ‖ domainSeparator ‖ hashStruct(primaryType, message)), and signing and
// recovery over that digest. What is accepted is what both MetaMask's @metamask/eth-sig-util (V4)
// and ethers' TypedDataEncoder accept and hash alike; where they differ, the stricter reading is
// taken so a document accepted here hashes the same in both (see "Accepted input" below).
//
// Accepted input (the choices where the references differ):
// - Types: every uintN/intN (N = 8..256, step 8), address, bool, bytesN (1..32), bytes, string,
//   struct names, and arrays `T[]` / `T[k]` (k >= 1) of any of them, nested to any depth.
//   `uint`/`int` without a width are unknown types (ethers would rewrite them to uint256, which
//   changes encodeType). Struct names are identifiers ([A-Za-z_][A-Za-z0-9_]*) that do not look
//   like an atomic type; member names are identifiers that may also use `$`; member names are
//   unique within a struct.
// - Recursive structs are allowed when every cycle passes through a dynamic array (`Person[]`), as
//   eth-sig-util V4 allows (ethers refuses all recursion). A cycle through plain members or fixed
//   arrays only is `cyclic_type`: no finite value exists, since null values are refused.
// - Types no struct refers to are accepted and do not affect the hash (as in MetaMask; ethers
//   refuses them), but their definitions must be valid.
// - types.EIP712Domain is required. Its members are a subset of name (string), version (string),
//   chainId (uint256), verifyingContract (address), salt (bytes32), in that order (EIP-712
//   §Definition of domainSeparator; ethers derives exactly this order). The domain object holds
//   exactly the declared members: an undeclared key is `extra_field` (ethers would hash it,
//   eth-sig-util would drop it).
// - Message keys that are not members of their struct are ignored, as ethers and eth-sig-util
//   ignore them; `extra_fields::reject` refuses them instead (the wallet-proof envelope does).
// - Values: integers as JSON numbers that are exact integers of magnitude below 2^53 (what
//   JavaScript reads exactly), or strings in decimal (optional leading '-') or 0x hex (not
//   negative: eth-sig-util's BigInt() refuses "-0x…"); no spaces or '+'. A value outside the
//   type's range is `out_of_range`. Addresses as 0x + 40 hex (EIP-55 checksum
//   checked when mixed case). bytes and bytesN as 0x hex (bytesN of exactly N bytes). bool only as
//   true/false; string only as a JSON string. A missing member or a null value is an error.
// - primaryType EIP712Domain: the digest is crypto::keccak256(0x1901 ‖ domainSeparator), as eth-sig-util
//   computes it (the message is not hashed).
//
// Every error message starts with the path of the offending part: `message.wallets[1].balance:
// uint8 out of range`, `types.Mail: unknown type 'Persn' (member 'to')`, `domain.chainId: ...`.
#pragma once

#include <boost/json.hpp>

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "enact/bytes.hpp"
#include "enact/crypto/secp256k1.hpp"
#include "enact/secret.hpp"
#include "enact/error.hpp"
#include "enact/result.hpp"

namespace enact {

enum class eip712_errc {
  bad_json = 1,   // not JSON, or a document part of the wrong JSON kind (types not an object, ...)
  missing_field,  // a required part is absent: types/primaryType/domain/message, a member's value
  extra_field,    // a domain key not declared in EIP712Domain; an undeclared message key (reject
                  // mode)
  unknown_type,   // a reference to a type that is neither atomic nor defined; undefined primaryType
  bad_type,       // malformed definition: bad name or array suffix, duplicate member, EIP712Domain
  cyclic_type,    // a struct that contains itself with no dynamic array on the way
  bad_value,      // value of the wrong kind, bad hex, wrong length, bad address, array length
  out_of_range,   // integer outside the type's range, or a JSON number that is not an exact integer
  too_deep,       // values nested deeper than eip712::kMaxDepth
};

}  // namespace enact
ENACT_ERRC(eip712_errc, eip712_category, "enact.eip712", "malformed typed-data document", "missing field",
           "undeclared field", "unknown type", "malformed type definition", "cyclic type", "invalid value",
           "value out of range", "nesting too deep")

namespace enact::eip712 {

/// Deepest nesting of structs and array levels in a value (and of JSON in `parse`).
inline constexpr size_t kMaxDepth = 64;

/// One member of a struct type, as declared: `{"name": "wallet", "type": "address"}`.
struct member {
  std::string name;
  std::string type;
  friend bool operator==(const member&, const member&) = default;
};

/// Struct definitions by name (the document's `types`, EIP712Domain included). Ordered by name,
/// which is also the order encodeType lists referenced structs in.
using type_map = std::map<std::string, std::vector<member>, std::less<>>;

/// What to do with a message key that is not a member of its struct.
enum class extra_fields { ignore, reject };

/// A parsed typed-data document. `types` has been validated by `parse_types`, `primary_type` is
/// defined in it, the domain keys are declared members of EIP712Domain and `message` is an object;
/// the values themselves are checked when they are encoded (by `digest`, `hash_struct`, ...).
struct typed_data {
  type_map types;
  std::string primary_type;
  boost::json::object domain;
  boost::json::value message;
};

/// Validates a document's `types` object (see "Accepted input") and returns its definitions.
[[nodiscard]] result<type_map> parse_types(const boost::json::value& types);

/// Reads a typed-data document from parsed JSON. Top-level keys other than types, primaryType,
/// domain and message are ignored, as eth_signTypedData_v4 ignores them.
[[nodiscard]] result<typed_data> from_json(const boost::json::value& doc);

/// Parses JSON text (nesting up to kMaxDepth) and reads it with `from_json`.
[[nodiscard]] result<typed_data> parse(std::string_view json);

/// The document as JSON: `{"types", "primaryType", "domain", "message"}`.
[[nodiscard]] boost::json::object to_json(const typed_data& td);

// The functions below accept any type_map; they find unknown types and bad values themselves,
// but the structural rules (names, duplicates, cycles, EIP712Domain) are `parse_types`'.

/// EIP-712 §encodeType: `Primary(type name,...)` followed by every struct it references, directly
/// or not, sorted by name.
[[nodiscard]] result<std::string> encode_type(const type_map& types, std::string_view primary);

/// crypto::keccak256(encodeType(type)).
[[nodiscard]] result<hash256> type_hash(const type_map& types, std::string_view type);

/// EIP-712 §encodeData: typeHash ‖ one 32-byte word per member. `path` names `value` in errors.
[[nodiscard]] result<bytes> encode_data(const type_map& types, std::string_view type, const boost::json::value& value,
                                        extra_fields extra = extra_fields::ignore, std::string_view path = "message");

/// EIP-712 §hashStruct: crypto::keccak256(encodeData(type, value)).
[[nodiscard]] result<hash256> hash_struct(const type_map& types, std::string_view type, const boost::json::value& value,
                                          extra_fields extra = extra_fields::ignore, std::string_view path = "message");

/// hashStruct(EIP712Domain, domain).
[[nodiscard]] result<hash256> domain_separator(const typed_data& td);

/// The digest a wallet signs: crypto::keccak256(0x1901 ‖ domainSeparator ‖ hashStruct(primaryType,
/// message)), or crypto::keccak256(0x1901 ‖ domainSeparator) when primaryType is EIP712Domain.
[[nodiscard]] result<hash256> digest(const typed_data& td, extra_fields extra = extra_fields::ignore);

/// Signs the digest with `key` (what eth_signTypedData_v4 returns, as r ‖ s ‖ v).
[[nodiscard]] result<crypto::secp256k1::signature> sign(const typed_data& td, const Secret& key);

/// The address whose key made the 65-byte signature `sig65` over the digest.
[[nodiscard]] result<address> recover(const typed_data& td, bytes_view sig65);

}  // namespace enact::eip712
