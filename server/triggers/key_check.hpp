// SPDX-License-Identifier: Apache-2.0
// The check of a trigger's usage key against the core service (docs/protocol.md §4): when a trigger is
// created, or its key, action or PKP changes, the key must be a usage key (never the account key,
// which could do everything on the account's behalf for as long as the trigger lives) that may
// execute the trigger's action, with its PKP when one is named. Checked over HTTP, the way the
// run workers reach the core, so the trigger service may point at any compatible core: GET
// /core/v1/account tells the key's kind and permissions, GET /core/v1/list_groups (every page)
// the groups, and the SDK's execution rule (enact::scopes::find_executable_group) decides.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "enact/bytes.hpp"
#include "enact/secret.hpp"
#include "enact/result.hpp"

namespace enact::triggers {

struct key_check_config {
  /// Base URL of the core service (worker_config::core_url).
  std::string core_url;
  std::chrono::milliseconds timeout{10000};
  /// Largest number of groups read (list_groups pages of 100); an account with more is refused
  /// rather than read without end.
  size_t max_groups = 100000;
};

/// Whether `usage_key` (its base64 text) may run `action_cid` (with `pkp` when set) on the core.
/// Errors in the API's terms: invalid_request when it is an account key or a key the core does not
/// know, forbidden when the execution rule allows no group for it, unavailable when the core cannot
/// be asked (unreachable, 5xx, 429, an answer that is not the contract's); the message never
/// carries the key.
[[nodiscard]] result<void> check_trigger_key(const key_check_config& cfg, const Secret& usage_key,
                                             std::string_view action_cid, const std::optional<address>& pkp);

}  // namespace enact::triggers
