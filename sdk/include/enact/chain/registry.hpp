// SPDX-License-Identifier: Apache-2.0
// Bindings of the permission registry (contracts/IPermissionRegistry.sol): one
// struct per function call, view, event and custom error, each naming its canonical Solidity
// signature (`kSignature`, from which the selector or topic0 is computed with keccak-256), with
// typed ABI encoders and strict decoders. Calls: `encode(c)` writes selector ‖ arguments,
// `decode_call` turns any calldata into the `call` variant, `encode_result` / `decode_result`
// handle return data. Events: `encode_log` writes topics and data, `decode_log` reads them back
// with the arguments as JSON. Reverts: `encode_revert` writes a custom error, Error(string) or
// Panic(uint256), `decode_revert` classifies any revert data as a `registry_errc` (the errors are
// declared in registry_errors.hpp, which this header includes). Deployment:
// `creation_code` and `deployment_data` give the registry's code and constructor call.
//
// Value types: uint256 parameters that hold keccak-256 hashes (accountHash, usageKeyHash,
// hashedCid, cidHashes, derivationPath) are `hash256` (the 32 big-endian bytes of the word);
// group ids are `scopes::group_id` and a word above 2^64-1 is refused on decode
// (abi_errc::out_of_range); every other uint256 is `u256`. JSON forms (events, errors, and the
// JSON bridge of calls and results) are those of the embedded ledger's events: hashes and bytes
// as `0x` + lowercase hex, addresses as `0x` + 40 lowercase hex digits, group ids and uint256
// counters as JSON integers (a counter above 2^64-1 as a decimal string), permissions as
// `boost::json::value_from(scopes::permission_set)`, keys being the Solidity parameter names.
// Decoding failures are abi_errc codes: truncated, bad_offset, out_of_range, bad_padding, ...,
// selector_mismatch for an unknown selector or topic0, wrong_length for a wrong topic count,
// bad_value for JSON that does not fit.
#pragma once

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <array>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "enact/bytes.hpp"
#include "enact/chain/registry_abi.hpp"
#include "enact/chain/registry_errors.hpp"
#include "enact/codec/abi.hpp"
#include "enact/u256.hpp"
#include "enact/result.hpp"
#include "enact/scopes/scopes.hpp"

namespace enact::chain::registry {

using scopes::group_id;
using scopes::permission_set;

// =============================================================================================
// Structs, one per entry of the registry's ABI, expanded from the tables of
// enact/chain/registry_abi.hpp (generated from contracts/build/PermissionRegistry.json when the
// SDK is configured): members in parameter order, named after the Solidity parameter in
// snake_case (setUsageApiKey's `p` is `permissions`, isApiPayer's unnamed parameter `who`), and
// typed as the file comment says. The overload of setUsageApiKey that records the key's own
// wallet is set_usage_api_key_with_wallet_call; registerWalletDerivation's `admin_hash` is the
// account's hash.

#define ENACT_REGISTRY_MEMBER(type, member, name) type member{};
#define ENACT_REGISTRY_EQ(T) friend bool operator==(const T&, const T&) = default

/// The Solidity structs returned by the view functions (AccountView as account_view, ...).
#define ENACT_REGISTRY_VIEW(S, name)                                       \
  struct S {                                                               \
    ENACT_REGISTRY_FIELDS_##S(ENACT_REGISTRY_MEMBER) ENACT_REGISTRY_EQ(S); \
  };
ENACT_REGISTRY_VIEWS(ENACT_REGISTRY_VIEW)
#undef ENACT_REGISTRY_VIEW

/// The `(T[] items, uint256 total)` return of the list functions; JSON `{"items", "total"}`.
template <class T>
struct list_page {
  std::vector<T> items;
  u256 total;
  friend bool operator==(const list_page&, const list_page&) = default;
};

/// Calls: `kSignature` the canonical signature, `result_type` what the function returns (void
/// for none), `kView` whether it is a view function (eth_call only).
#define ENACT_REGISTRY_CALL(S, signature, result, view)                    \
  struct S {                                                               \
    static constexpr std::string_view kSignature = signature;              \
    static constexpr bool kView = view;                                    \
    using result_type = result;                                            \
    ENACT_REGISTRY_FIELDS_##S(ENACT_REGISTRY_MEMBER) ENACT_REGISTRY_EQ(S); \
  };
ENACT_REGISTRY_CALLS(ENACT_REGISTRY_CALL)
#undef ENACT_REGISTRY_CALL

/// Any registry call, in the order of the artifact's ABI.
#define ENACT_REGISTRY_ALTERNATIVE(S, ...) , S
using call = detail::variant_of<std::monostate ENACT_REGISTRY_CALLS(ENACT_REGISTRY_ALTERNATIVE)>;

/// One of the call structs above.
template <class T>
concept call_type = detail::is_alternative<T, call>::value;
/// A call whose function returns something.
template <class T>
concept call_with_result = call_type<T> && !std::is_void_v<typename T::result_type>;

/// First 4 bytes of crypto::keccak256(T::kSignature).
template <call_type T>
[[nodiscard]] const std::array<uint8_t, 4>& selector();

/// selector ‖ ABI-encoded arguments: the transaction or eth_call data.
template <call_type T>
[[nodiscard]] bytes encode(const T& c);
[[nodiscard]] bytes encode(const call& c);

/// Decodes calldata of function T (abi_errc::selector_mismatch for another function).
template <call_type T>
[[nodiscard]] result<T> decode(bytes_view calldata);
/// Decodes calldata of any registry function (abi_errc::selector_mismatch for an unknown
/// selector, abi_errc::truncated below 4 bytes).
[[nodiscard]] result<call> decode_call(bytes_view calldata);

/// The function's name ("setUsageApiKey") and canonical signature.
[[nodiscard]] std::string_view function_name(const call& c);
[[nodiscard]] std::string_view signature(const call& c);

/// The arguments as a JSON object keyed by the Solidity parameter names.
[[nodiscard]] boost::json::object to_json(const call& c);
/// The inverse of to_json: `function` is a name ("getGroup") or a canonical signature; an
/// overloaded name (setUsageApiKey) is resolved by the keys present. Every parameter is
/// required and no other key is allowed.
[[nodiscard]] result<call> call_from_json(std::string_view function, const boost::json::object& args);

/// Return data of function T (what eth_call answers).
template <call_with_result T>
[[nodiscard]] bytes encode_result(const typename T::result_type& value);
template <call_with_result T>
[[nodiscard]] result<typename T::result_type> decode_result(bytes_view return_data);
/// JSON of a return value: the value's JSON, `{"items", "total"}` for the list functions.
template <call_with_result T>
[[nodiscard]] boost::json::value result_to_json(const typename T::result_type& value);
template <call_with_result T>
[[nodiscard]] result<typename T::result_type> result_from_json(const boost::json::value& v);

// =============================================================================================
// Events: the first field is the indexed one (topic 1), the others are the log's data.
// ApiPayerSet, the registry administration log, is indexed by the payer, not by an account.

#define ENACT_REGISTRY_EVENT(S, signature)                                 \
  struct S {                                                               \
    static constexpr std::string_view kSignature = signature;              \
    ENACT_REGISTRY_FIELDS_##S(ENACT_REGISTRY_MEMBER) ENACT_REGISTRY_EQ(S); \
  };
ENACT_REGISTRY_EVENTS(ENACT_REGISTRY_EVENT)
#undef ENACT_REGISTRY_EVENT
#undef ENACT_REGISTRY_EQ
#undef ENACT_REGISTRY_MEMBER

using any_event = detail::variant_of<std::monostate ENACT_REGISTRY_EVENTS(ENACT_REGISTRY_ALTERNATIVE)>;
#undef ENACT_REGISTRY_ALTERNATIVE

template <class T>
concept event_type = detail::is_alternative<T, any_event>::value;

/// A log as the chain stores it: topics (topic0 = crypto::keccak256(signature), then the indexed
/// argument) and the ABI-encoded other arguments.
struct encoded_log {
  std::vector<hash256> topics;
  bytes data;
  friend bool operator==(const encoded_log&, const encoded_log&) = default;
};

/// A decoded registry log.
struct event {
  std::string name;                     // "UsageApiKeySet"
  std::optional<hash256> account_hash;  // the indexed accountHash (absent for ApiPayerSet)
  boost::json::object args;             // every argument, indexed ones included
  any_event value;
};

/// crypto::keccak256(T::kSignature).
template <event_type T>
[[nodiscard]] const hash256& topic0();

template <event_type T>
[[nodiscard]] encoded_log encode_log(const T& e);
[[nodiscard]] encoded_log encode_log(const any_event& e);
/// From an event name and its JSON arguments (as decode_log gives them, and as the embedded
/// ledger records its events): every parameter required, no other key.
[[nodiscard]] result<encoded_log> encode_log(std::string_view name, const boost::json::object& args);

/// Decodes a registry log (abi_errc::selector_mismatch for a topic0 the registry does not emit,
/// abi_errc::wrong_length for a topic count other than 2).
[[nodiscard]] result<event> decode_log(std::span<const hash256> topics, bytes_view data);

[[nodiscard]] std::string_view event_name(const any_event& e);
[[nodiscard]] boost::json::object to_json(const any_event& e);
[[nodiscard]] result<any_event> event_from_json(std::string_view name, const boost::json::object& args);

// =============================================================================================
// Deployment: the registry's code from the committed build artifact
// (contracts/build/PermissionRegistry.json, checked against the Solidity sources by
// `node build.mjs --check`), compiled into the SDK when it is configured.

/// The creation code (the artifact's "bytecode"): what a deploying transaction runs, followed by
/// the constructor arguments.
[[nodiscard]] const bytes& creation_code();
/// The runtime code (the artifact's "deployedBytecode"): what eth_getCode answers at the address
/// of a registry deployed from creation_code().
[[nodiscard]] const bytes& runtime_code();
/// The solc version the artifact was compiled with ("0.8.37+commit.…").
[[nodiscard]] std::string_view compiler_version();

/// The data of the deploying transaction: creation_code() ‖ abi.encode(address[] apiPayers), the
/// constructor `constructor(address[] apiPayers)`; the sender becomes the registry's owner.
[[nodiscard]] bytes deployment_data(std::span<const address> api_payers);

}  // namespace enact::chain::registry
