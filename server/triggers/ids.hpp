// SPDX-License-Identifier: Apache-2.0
// Identifiers of the trigger service. Trigger ids are 128 random bits because the webhook URL
// `/webhook/<trigger id>` is public: knowing the id is what lets a sender fire the trigger, so it
// must not be guessable or enumerable. Run ids are random too (no ordering is exposed by them;
// lists are ordered by the store).
#pragma once

#include <string>
#include <string_view>

namespace enact::triggers {

/// "trg_" + 32 lowercase hex digits (16 bytes from the CSPRNG).
[[nodiscard]] std::string new_trigger_id();
/// "run_" + 32 lowercase hex digits (16 bytes from the CSPRNG).
[[nodiscard]] std::string new_run_id();
/// Whether `s` has the form of an id with `prefix` ("trg_" or "run_").
[[nodiscard]] bool is_id(std::string_view s, std::string_view prefix) noexcept;

}  // namespace enact::triggers
