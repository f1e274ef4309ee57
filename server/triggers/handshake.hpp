// SPDX-License-Identifier: Apache-2.0
// The browser approval handshake of the trigger service (docs/protocol.md §4 "Token handshake";
// docs/triggers.md "Signing in a client"). A client draws a bearer token, opens
// /auth/authorize?challenge=base64url(crypto::sha256(token bytes))&client=<name>, and polls
// POST /auth/token until a user signed in on that page (by an EIP-4361 message signed with
// personal_sign, EIP-191; parsed and checked by the SDK's enact/siwe/siwe.hpp) approved the
// challenge; the token is then stored hashed for that user, once. The user id of a wallet is its
// address in lowercase ("0x" + 40 lowercase hex digits).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "enact/bytes.hpp"
#include "enact/result.hpp"
#include "triggers/clock.hpp"
#include "triggers/store.hpp"

namespace httplib {
class Server;
}
namespace enact::http {
class logger;
}
namespace enact::core {
using logger = http::logger;  // http/log.hpp
}

namespace enact::triggers {

struct handshake_config {
  /// The service's public base URL (service_config::public_url). When set, its authority is the
  /// only domain sign-in messages may name (and their URI must be under it), and an https URL
  /// marks the session cookie Secure. The request's Host header is never the reference: a
  /// message signed for another site, replayed here with a Host header naming that site, must
  /// not sign anyone in.
  std::string public_url;
  /// Without a public URL: the authorities of the loopback address the service listens on
  /// ("127.0.0.1:8080", "localhost:8080"; loopback_authorities()), the only domains sign-in then
  /// accepts. Empty too: every sign-in is refused.
  std::vector<std::string> loopback_authorities;
  /// How long a token request waits for its approval and claim, from the page's first opening.
  std::chrono::minutes request_lifetime{10};
  /// How long a sign-in nonce (and its pre-sign-in cookie) is valid.
  std::chrono::minutes nonce_lifetime{10};
  /// How long a signed-in session lasts.
  std::chrono::minutes session_lifetime{30};
  /// Accepted distance of a sign-in message's Issued At from the server's clock (docs/protocol.md §0
  /// signature_expired: now ± 300 s).
  std::chrono::seconds issued_at_window{300};
  /// Requests a second per client address over the unauthenticated /auth routes (the approval
  /// page, nonce, sign-in, session, approve, deny, sign-out and the token poll), with `auth_burst`
  /// at once; 0 disables. A client polls about once a second and a sign-in takes a handful.
  double auth_requests_per_second = 5;
  double auth_burst = 60;
};

/// The authorities a browser uses for a listener on `host`:`port` when `host` is a loopback
/// address (127.0.0.0/8, ::1, localhost): the address itself and "localhost", with the port.
/// Empty for any other host, the wildcards 0.0.0.0 and :: included (reachable from elsewhere).
[[nodiscard]] std::vector<std::string> loopback_authorities(std::string_view host, int port);

/// The user id of a wallet: its address as "0x" + 40 lowercase hex digits.
[[nodiscard]] std::string wallet_user_id(const address& a);

/// Mounts /auth/authorize, /auth/nonce, /auth/sign-in, /auth/session, /auth/approve,
/// /auth/deny and /auth/token on `server` (the bearer routes /auth/tokens and /auth/tokens/<id>
/// are the route table's, triggers/api.cpp). `db`, `clk` and
/// `log` must outlive the server's handlers.
void mount_handshake(httplib::Server& server, store& db, const clock& clk, http::logger& log, handshake_config cfg);

}  // namespace enact::triggers
