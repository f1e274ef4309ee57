// SPDX-License-Identifier: Apache-2.0
// Bearer tokens of the management API (docs/protocol.md §4). A token is 32 random bytes, sent as base64url
// without padding (43 characters); the store keeps only crypto::sha256(token bytes), which is also what
// the handshake's challenge carries (challenge = base64url(crypto::sha256(token))), so an approved
// challenge names its token's hash directly. Tokens live 30 days unless revoked.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "enact/result.hpp"
#include "triggers/store.hpp"

namespace enact::triggers {

inline constexpr std::chrono::hours kTokenLifetime{24 * 30};

struct issued_token {
  std::string token;  // shown once; the caller wipes it after use
  token_record record;
};

/// Draws a token for `user_id` and stores its hash.
[[nodiscard]] result<issued_token> issue_token(store& s, std::string_view user_id, std::string_view client_name,
                                               time_point now);

/// sha256 of a token's bytes; nullopt when `token` is not base64url of 32 bytes.
[[nodiscard]] std::optional<hash256> token_hash(std::string_view token);

/// The token record an `Authorization` header value authenticates ("Bearer <token>"):
/// api_errc::unauthenticated when it is missing, malformed, unknown, revoked or expired at `now`.
[[nodiscard]] result<token_record> authenticate(const store& s, std::string_view authorization, time_point now);

}  // namespace enact::triggers
