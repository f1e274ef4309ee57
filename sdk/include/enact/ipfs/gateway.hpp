// SPDX-License-Identifier: Apache-2.0
// Fetching action code from an IPFS HTTP gateway (`GET <gateway>/ipfs/<cid>`), verified against
// the CID before it is returned: a gateway is not trusted with the content, only with carrying it.
// Part of enact::client (the HTTP library stays behind its .cpp). The fetch is built for a server
// that fetches on behalf of callers: a redirect is never followed (a gateway, or whoever answers in
// its name, must not point the fetch at another host, such as an internal address), and the body
// is read only up to a limit, so a hostile gateway cannot make the caller buffer an endless answer.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>

#include "enact/error.hpp"
#include "enact/ipfs/cid.hpp"
#include "enact/result.hpp"

namespace enact::ipfs {

enum class gateway_errc {
  bad_url = 1,   // the gateway URL is not http(s)://host[:port][/path]
  unreachable,   // no answer (cannot connect, timeout, TLS failure)
  not_found,     // the gateway answered 404
  bad_status,    // any other status than 200 (a redirect included)
  too_large,     // the content is over the limit
  cut_short,     // the answer ended before its body was complete
  wrong_content  // the bytes do not hash to the CID
};

namespace detail {
inline const std::error_category& gateway_category() noexcept {
  static const enact::detail::errc_category<gateway_errc> c(
      "enact.ipfs.gateway",
      {"", "bad gateway URL", "gateway unreachable", "not found on the gateway", "gateway answered an error",
       "content over the limit", "answer cut short", "content does not match the CID"});
  return c;
}
}  // namespace detail
inline std::error_code make_error_code(gateway_errc e) noexcept {
  return {static_cast<int>(e), detail::gateway_category()};
}

}  // namespace enact::ipfs
ENACT_ERRC_ENUM(enact::ipfs::gateway_errc)

namespace enact::ipfs {

struct gateway_options {
  /// `http://host[:port][/path]` or `https://…`; a URL without a scheme is taken as http.
  std::string url;
  /// Limit for connecting and, separately, for the answer to arrive.
  std::chrono::milliseconds timeout{10000};
  /// Longest content accepted, in bytes (a declared Content-Length over it is refused before any
  /// of the body is read).
  size_t max_bytes = kChunkSize;
  /// PEM file of trusted CA certificates for https; empty: the system's default store.
  std::string ca_file;
};

/// The bytes of `cid_text` (a CID as the caller wrote it; it is requested as written) from the
/// gateway, returned only when they hash to that CID in its v0 or v1 form. Every failure names the
/// CID and is one of gateway_errc (or a cid_errc when `cid_text` is not a CID).
[[nodiscard]] result<std::string> fetch_from_gateway(const gateway_options& options, std::string_view cid_text);

}  // namespace enact::ipfs
