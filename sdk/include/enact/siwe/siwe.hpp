// SPDX-License-Identifier: Apache-2.0
// Sign-In with Ethereum (EIP-4361): the message a wallet signs with personal_sign (EIP-191) to
// prove control of an address to a site. The trigger service's approval page signs users in with
// it (docs/protocol.md §4 "Token handshake"); a client that signs in without a browser builds the same text.
//
//   example.org:8080 wants you to sign in with your Ethereum account:
//   0xAbC…                                  (the address, EIP-55 or all lowercase)
//                                            (empty line)
//   Sign in to approve a client.             (optional statement, then an empty line)
//
//   URI: https://example.org:8080/auth/authorize
//   Version: 1
//   Chain ID: 1
//   Nonce: 0123456789abcdef
//   Issued At: 2026-11-01T00:00:00.000Z
//   Expiration Time: …   Not Before: …   Request ID: …   (optional, in this order)
//
// The parser is strict: exactly this line structure with LF line ends and no trailing line, an
// address in lowercase or with a correct EIP-55 checksum, version 1, a decimal chain id, an
// alphanumeric nonce of 8 to 128 characters, UTC RFC 3339 times. `Resources` and a scheme before
// the domain are refused. What the message must say for a given site (domain, URI, time window,
// nonce) is the verifier's to check; `verify_signature` checks who signed it.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "enact/bytes.hpp"
#include "enact/error.hpp"
#include "enact/result.hpp"

namespace enact {

enum class siwe_errc {
  too_large = 1,  ///< over siwe::kMaxMessage bytes
  not_utf8,       ///< not well-formed UTF-8, or a control character (lines end with LF only)
  bad_structure,  ///< a line missing or out of place (header, address, empty lines, fields)
  bad_value,      ///< a field present but its value malformed (domain, address, chain id, nonce, time)
  unsupported,    ///< Resources, or a version other than 1
  bad_signature,  ///< not 65 bytes, or not by the message's address
};

namespace detail {
inline const std::error_category& siwe_category() noexcept {
  static const errc_category<siwe_errc> c(
      "enact.siwe", {"", "message too large", "message not UTF-8 text", "not an EIP-4361 message",
                     "malformed field value", "unsupported EIP-4361 feature", "signature invalid"});
  return c;
}
}  // namespace detail
inline std::error_code make_error_code(siwe_errc e) noexcept { return {static_cast<int>(e), detail::siwe_category()}; }

}  // namespace enact
ENACT_ERRC_ENUM(enact::siwe_errc)

namespace enact::siwe {

/// Milliseconds since the Unix epoch, UTC.
using time_point = std::chrono::sys_time<std::chrono::milliseconds>;

/// The largest message parse() accepts, in bytes.
inline constexpr size_t kMaxMessage = 4096;

/// An EIP-4361 message.
struct message {
  std::string domain;  ///< the site's authority, host[:port]
  address account{};
  std::optional<std::string> statement;  ///< one line
  std::string uri;
  std::string version = "1";
  uint64_t chain_id = 1;
  std::string nonce;
  time_point issued_at{};
  std::optional<time_point> expiration_time;
  std::optional<time_point> not_before;
  std::optional<std::string> request_id;
};

/// Parses `text` strictly (see above). On failure the message names the line and what was
/// expected there ("message line 1: …", "message: Nonce: …").
[[nodiscard]] result<message> parse(std::string_view text);

/// The text of `m` as a wallet signs it: the account in EIP-55 form, times as RFC 3339 UTC with
/// milliseconds. parse() of the text gives `m` back.
[[nodiscard]] std::string to_text(const message& m);

/// `t` as RFC 3339 UTC with milliseconds ("2026-11-01T00:00:00.000Z").
[[nodiscard]] std::string format_time(time_point t);

/// Parses an RFC 3339 UTC time ("T" and "Z" uppercase, no offset, an optional fraction of up to 9
/// digits, kept to the millisecond; enact/codec/rfc3339.hpp parses the general form); nullopt for
/// anything else.
[[nodiscard]] std::optional<time_point> parse_time(std::string_view s);

/// Checks that `signature` (r ‖ s ‖ v, 65 bytes) is a personal_sign (EIP-191) signature of `text`
/// by `m.account`; `text` is the exact text `m` was parsed from. siwe_errc::bad_signature naming
/// the expected signer otherwise.
[[nodiscard]] result<void> verify_signature(std::string_view text, const message& m, bytes_view signature);

}  // namespace enact::siwe
