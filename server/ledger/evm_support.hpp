// SPDX-License-Identifier: Apache-2.0
// Helpers of the evm ledger (evm_ledger.hpp) shared by its source files: messages (hex, a node's
// origin), the mapping of registry reverts to ledger_errc, and the conversions of the registry's
// views into the ledger's types.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "enact/chain/registry.hpp"
#include "enact/codec/hex.hpp"
#include "ledger/ledger.hpp"

namespace enact::ledger::evm {

namespace reg = chain::registry;
using steady = std::chrono::steady_clock;

template <size_t N>
[[nodiscard]] inline std::string hx(const std::array<uint8_t, N>& v) {
  return codec::hex::encode_prefixed(v);
}

/// scheme://host[:port] of a URL: a hosted node's path may carry its API key, which no message
/// repeats.
[[nodiscard]] inline std::string origin_of(std::string_view url) {
  const size_t scheme = url.find("://");
  const size_t path = url.find('/', scheme == std::string_view::npos ? 0 : scheme + 3);
  return std::string(url.substr(0, path));
}

// --- errors --------------------------------------------------------------------------------------

[[nodiscard]] inline ledger_errc ledger_code(registry_errc c) {
  switch (c) {
    case registry_errc::not_admin:
    case registry_errc::not_owner:  // registry administration by someone else
      return ledger_errc::not_admin;
    case registry_errc::relay_not_allowed:
      return ledger_errc::relay_not_allowed;
    case registry_errc::already_unmanaged:
      return ledger_errc::already_unmanaged;
    case registry_errc::unknown_account:
      return ledger_errc::unknown_account;
    case registry_errc::unknown_usage_key:
      return ledger_errc::unknown_usage_key;
    case registry_errc::unknown_group:
      return ledger_errc::unknown_group;
    case registry_errc::unknown_wallet:
      return ledger_errc::unknown_wallet;
    case registry_errc::unknown_action:
      return ledger_errc::unknown_action;
    case registry_errc::duplicate:
      return ledger_errc::duplicate;
    case registry_errc::invalid_argument:
      return ledger_errc::invalid_argument;
    case registry_errc::account_hash_not_canonical:
      return ledger_errc::hash_not_canonical;
    case registry_errc::managed_not_allowed:
      return ledger_errc::managed_not_allowed;
    case registry_errc::hash_is_usage_key:
      return ledger_errc::hash_is_usage_key;
    case registry_errc::hash_is_account:
      return ledger_errc::hash_is_account;
    case registry_errc::usage_key_of_another_account:
      return ledger_errc::usage_key_of_another_account;
    case registry_errc::new_admin_not_sender:
      return ledger_errc::new_admin_not_sender;
    case registry_errc::error_string:
    case registry_errc::panic:
    case registry_errc::unknown_error:
      break;
  }
  return ledger_errc::storage;
}

[[nodiscard]] inline error from_registry(const reg::registry_error& e) {
  const ledger_errc code = ledger_code(e.code);
  if (code == ledger_errc::storage)
    return fail(code, "registry: unexpected revert " + e.message);
  return fail(code, "registry: " + e.message);
}

[[nodiscard]] inline bool transport_failure(const error& e) {
  return e.code == rpc_errc::unreachable || e.code == rpc_errc::timeout || e.code == rpc_errc::http_status;
}

// --- view conversions ----------------------------------------------------------------------------

[[nodiscard]] inline uint64_t clamp64(const u256& v) { return v.fits_u64() ? static_cast<uint64_t>(v) : UINT64_MAX; }
[[nodiscard]] inline int64_t time64(const u256& v) {
  const uint64_t t = clamp64(v);
  return t > static_cast<uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(t);
}

[[nodiscard]] inline account to_account(const reg::account_view& v) {
  return {v.account_hash, v.admin, v.managed, v.name, v.description, v.email, time64(v.created_at)};
}

/// Expiration and balance above 2^64-1 are clamped, not refused (evm_ledger.hpp).
[[nodiscard]] inline usage_key to_usage_key(const reg::usage_key_view& v) {
  return {v.usage_key_hash,    v.account_hash,        v.wallet,           v.name,
          v.description,       clamp64(v.expiration), clamp64(v.balance), v.permissions,
          time64(v.created_at)};
}

[[nodiscard]] inline group to_group(const reg::group_view& v) {
  return {v.group_id, v.name, v.description, v.pkp_ids, v.cid_hashes};
}

[[nodiscard]] inline wallet to_wallet(const reg::wallet_view& v) {
  return {v.wallet, v.derivation_path, v.name, v.description, time64(v.created_at)};
}

[[nodiscard]] inline action to_action(const reg::action_view& v) {
  return {v.cid, v.hashed_cid, v.name, v.description, time64(v.created_at)};
}

template <class T, class V, class F>
[[nodiscard]] inline page<T> to_page(const reg::list_page<V>& v, F convert) {
  page<T> out;
  out.total = clamp64(v.total);
  out.items.reserve(v.items.size());
  for (const V& item : v.items)
    out.items.push_back(convert(item));
  return out;
}

/// offset and limit of a 1-based page (docs/protocol.md §0), validated as the embedded ledger does.
[[nodiscard]] inline result<std::pair<u256, u256>> page_args(page_request p) {
  if (p.number == 0 || p.size == 0)
    return fail(ledger_errc::invalid_argument, "page: number and size must be at least 1");
  return std::pair{u256{p.number - 1} * u256{p.size}, u256{p.size}};
}

// The registry's administration log, not a ledger event (IPermissionRegistry.sol).
[[nodiscard]] inline bool administration_log(std::string_view name) { return name == "ApiPayerSet"; }

}  // namespace enact::ledger::evm
