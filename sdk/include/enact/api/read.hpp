// SPDX-License-Identifier: Apache-2.0
// Reading request bodies of the core service (docs/protocol.md §2) without exceptions: `api::read<T>(body)`
// returns the request or an `enact::error` with api_errc::invalid_request whose message names the
// field by its path ("body.pkp_ids_permitted[2]: listed twice") with the words the server answers,
// so a handler forwards it as is. The server checks each body against its route's JSON schema
// first (presence, JSON types, lengths); these readers add what a schema cannot say — an address
// that is not 20 bytes of hex, a hash without 0x, a CID that does not parse, an id that is the
// wildcard, a set that lists an element twice — and read an absent optional text as empty.
#pragma once

#include <boost/json/value.hpp>

#include <cstdint>
#include <string>
#include <string_view>

#include "enact/api/core.hpp"
#include "enact/bytes.hpp"
#include "enact/result.hpp"

namespace enact::api {

/// The request `T` from a body. Defined for the request types below; any other `T` fails to link.
template <class T>
[[nodiscard]] result<T> read(const json::value& body);

template <>
result<new_account_request> read<new_account_request>(const json::value& body);
/// The add_usage_api_key body, and the update_usage_api_key body besides the key value (which
/// `usage_api_key` may carry). A field that is neither metadata nor a permission is refused with
/// scope_errc::unknown_field, and an ill-formed permission with its scope_errc (enact/scopes).
template <>
result<usage_key_spec> read<usage_key_spec>(const json::value& body);
template <>
result<new_group> read<new_group>(const json::value& body);
/// The update_group body (every field required).
template <>
result<group> read<group>(const json::value& body);
template <>
result<group_ref> read<group_ref>(const json::value& body);
template <>
result<group_pkp> read<group_pkp>(const json::value& body);
template <>
result<group_action> read<group_action>(const json::value& body);
template <>
result<group_action_hash> read<group_action_hash>(const json::value& body);
template <>
result<new_wallet> read<new_wallet>(const json::value& body);
/// The CID is checked to parse (CIDv0 or CIDv1).
template <>
result<new_action> read<new_action>(const json::value& body);
template <>
result<action_metadata> read<action_metadata>(const json::value& body);
template <>
result<action_ref> read<action_ref>(const json::value& body);
/// Exactly one of `code` and `action_ipfs_cid`; the CID is parsed by the server, which also
/// knows the code's size limit.
template <>
result<run_action_request> read<run_action_request>(const json::value& body);

// --- single values: `field` is the name (or path, "pkp_ids_permitted[2]") below `body.` --------

/// A group id: a JSON integer or a decimal string, never 0 (the wildcard). Its messages name the
/// field without the `body.` prefix, as the server does for ids in a body and in a query.
[[nodiscard]] result<uint64_t> read_group_id(const json::value& v, std::string_view field);
/// A 0x address, in any case (docs/protocol.md §0).
[[nodiscard]] result<address> read_address(const json::value& v, std::string_view field);
/// 0x + 64 hex digits.
[[nodiscard]] result<hash256> read_hash(const json::value& v, std::string_view field);
/// A raw IPFS CID that parses, returned as given (its hash is keccak256 of this text).
[[nodiscard]] result<std::string> read_cid(const json::value& v, std::string_view field);

}  // namespace enact::api
