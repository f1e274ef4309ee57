// SPDX-License-Identifier: Apache-2.0
// The permission registry's reverts (contracts/IPermissionRegistry.sol): `registry_errc`, one
// value per custom error plus Solidity's Error(string) and Panic(uint256), and one struct per
// error naming its canonical signature (`kSignature`) and its code (`kCode`), with the encoder
// and the classifier of revert data. Part of the registry bindings (registry.hpp, which includes
// this header; the value types and JSON forms are described there).
#pragma once

#include <boost/json/object.hpp>

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>

#include "enact/bytes.hpp"
#include "enact/chain/registry_abi.hpp"
#include "enact/u256.hpp"
#include "enact/error.hpp"
#include "enact/result.hpp"

namespace enact {

/// The registry's revert reasons: one value per custom error of IPermissionRegistry.sol, the two
/// built-in Solidity reverts, and `unknown_error` for anything else.
enum class registry_errc {
  not_admin = 1,      // NotAdmin(uint256 accountHash, address sender)
  relay_not_allowed,  // RelayNotAllowed(uint256 accountHash, address sender)
  already_unmanaged,  // AlreadyUnmanaged(uint256 accountHash)
  unknown_account,    // UnknownAccount(uint256 accountHash)
  unknown_usage_key,  // UnknownUsageKey(uint256 accountHash, uint256 usageKeyHash)
  unknown_group,      // UnknownGroup(uint256 accountHash, uint256 groupId)
  unknown_wallet,     // UnknownWallet(uint256 accountHash, address wallet)
  unknown_action,     // UnknownAction(uint256 accountHash, uint256 hashedCid)
  duplicate,          // Duplicate(string what)
  invalid_argument,   // InvalidArgument(string reason)
  not_owner,          // NotOwner(address sender)
  // Identity rules (docs/protocol.md §3):
  account_hash_not_canonical,    // AccountHashNotCanonical(uint256 apiKeyHash, address admin)
  managed_not_allowed,           // ManagedNotAllowed(uint256 apiKeyHash, address sender)
  hash_is_usage_key,             // HashIsUsageKey(uint256 apiKeyHash)
  hash_is_account,               // HashIsAccount(uint256 usageKeyHash)
  usage_key_of_another_account,  // UsageKeyOfAnotherAccount(uint256 accountHash, uint256
                                 // usageKeyHash)
  // Conversion consent: the admin converts only to itself; an api payer's relay carries the
  // consent of another new admin.
  new_admin_not_sender,  // NewAdminNotSender(uint256 accountHash, address newAdmin)
  error_string,          // Error(string): require(cond, "reason") / revert("reason")
  panic,                 // Panic(uint256): assert, arithmetic overflow, out-of-bounds index, ...
  unknown_error,         // revert data empty, shorter than 4 bytes, of an unknown selector, or of
                         // a known selector with malformed arguments
};

}  // namespace enact
ENACT_ERRC(registry_errc, registry_category, "enact.registry", "not the admin", "relay not allowed",
           "already unmanaged", "unknown account", "unknown usage key", "unknown group", "unknown wallet",
           "unknown action", "duplicate", "invalid argument", "not the owner", "account hash not canonical",
           "managed account not allowed", "hash is a usage key", "hash is an account", "usage key of another account",
           "new admin is not the sender", "reverted with a reason", "panic", "unknown revert")

namespace enact::chain::registry {

namespace detail {
template <class T, class V>
struct is_alternative;
template <class T, class... A>
struct is_alternative<T, std::variant<A...>> : std::bool_constant<(std::is_same_v<T, A> || ...)> {};
/// std::variant<A...>, written variant_of<Ignored, A...> so that an X-macro list, which expands
/// to ", A1, A2, ...", can follow the ignored first type.
template <class Ignored, class... A>
struct variant_of_list {
  using type = std::variant<A...>;
};
template <class... A>
using variant_of = typename variant_of_list<A...>::type;
}  // namespace detail

#define ENACT_REGISTRY_EQ(T) friend bool operator==(const T&, const T&) = default

// =============================================================================================
// Reverts: the custom errors of the interface, expanded from enact/chain/registry_abi.hpp (the
// members as registry.hpp describes them; UnknownGroup keeps the group id as a uint256, since the
// contract reverts with whatever id it was asked for), plus Solidity's Error(string) and
// Panic(uint256). `kCode` is the registry_errc of the error's name in snake_case.

#define ENACT_REGISTRY_MEMBER(type, member, name) type member{};
#define ENACT_REGISTRY_ERROR(S, signature, code)                           \
  struct S {                                                               \
    static constexpr std::string_view kSignature = signature;              \
    static constexpr registry_errc kCode = registry_errc::code;            \
    ENACT_REGISTRY_FIELDS_##S(ENACT_REGISTRY_MEMBER) ENACT_REGISTRY_EQ(S); \
  };
ENACT_REGISTRY_ERRORS(ENACT_REGISTRY_ERROR)
#undef ENACT_REGISTRY_ERROR
#undef ENACT_REGISTRY_MEMBER

/// Solidity's `Error(string)` (require with a message, revert("...")); JSON key "message".
struct error_string_error {
  static constexpr std::string_view kSignature = "Error(string)";
  static constexpr registry_errc kCode = registry_errc::error_string;
  std::string message;
  ENACT_REGISTRY_EQ(error_string_error);
};
/// Solidity's `Panic(uint256)` (Solidity docs, "Panic via assert and Error via require");
/// JSON key "code".
struct panic_error {
  static constexpr std::string_view kSignature = "Panic(uint256)";
  static constexpr registry_errc kCode = registry_errc::panic;
  u256 code;
  ENACT_REGISTRY_EQ(panic_error);
};

#undef ENACT_REGISTRY_EQ

#define ENACT_REGISTRY_ALTERNATIVE(S, ...) , S
using any_error = detail::variant_of<std::monostate ENACT_REGISTRY_ERRORS(ENACT_REGISTRY_ALTERNATIVE),
                                     error_string_error, panic_error>;
#undef ENACT_REGISTRY_ALTERNATIVE

template <class T>
concept error_type = detail::is_alternative<T, any_error>::value;

/// A classified revert.
struct registry_error {
  registry_errc code = registry_errc::unknown_error;
  std::string name;          // "NotAdmin", "Error", "Panic"; empty for unknown_error
  boost::json::object args;  // arguments by Solidity name; unknown_error: {"data": "0x…"}
  std::string message;       // "NotAdmin(accountHash=0x…, sender=0x…)"

  /// As an enact::error: the registry_errc and the message.
  [[nodiscard]] error to_error() const { return error{make_error_code(code), message}; }
};

/// First 4 bytes of crypto::keccak256(T::kSignature).
template <error_type T>
[[nodiscard]] const std::array<uint8_t, 4>& selector();

/// selector ‖ ABI-encoded arguments: the revert data.
template <error_type T>
[[nodiscard]] bytes encode_revert(const T& e);
[[nodiscard]] bytes encode_revert(const any_error& e);
/// From a registry_error's code and JSON args (the inverse of decode_revert); abi_errc::bad_value
/// for unknown_error or args that do not fit.
[[nodiscard]] result<bytes> encode_revert(const registry_error& e);

/// Classifies revert data. Never fails: anything unrecognised is unknown_error.
[[nodiscard]] registry_error decode_revert(bytes_view revert_data);

}  // namespace enact::chain::registry
