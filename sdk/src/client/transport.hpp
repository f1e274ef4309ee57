// SPDX-License-Identifier: Apache-2.0
// The SDK's one HTTP client, private to enact::client; cpp-httplib stays in transport.cpp.
//
// Two levels share it. `parse_url` and `http_connection` are the plain level: one URL grammar
// (http and https, host, IPv6 literal, port, path prefix; no user-info, query or fragment) and one
// request over one connection, with every failure named and described the same way for every
// caller; the chain JSON-RPC client and the IPFS gateway fetch use them with their own error codes.
// `transport` is the level of the typed service clients (core and trigger service): every method,
// an API key, a bearer token or a wallet proof, JSON or raw bodies, the retry rule of options.hpp,
// and the mapping of every failure to api_error (docs/protocol.md §0) with credentials scrubbed from it.
#pragma once

#include <boost/json/value.hpp>

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "enact/bytes.hpp"
#include "enact/client/api_error.hpp"
#include "enact/client/options.hpp"
#include "enact/secret.hpp"

namespace enact::client::detail {

// --- URLs ----------------------------------------------------------------------------------------

enum class url_fault { none, scheme, user_info, other };

/// `http(s)://host[:port][/path]`. User-info is refused (a credential in the URL would end up in
/// logs and error text), and so are a query and a fragment, so that a typo cannot send a request
/// to an unintended place.
struct parsed_url {
  url_fault fault = url_fault::none;  // none: the URL is usable
  std::string why;                    // what is wrong, when it is not
  std::string origin;                 // scheme://host[:port], what a connection is opened to
  std::string path;                   // the path as given ("" when none)

  [[nodiscard]] bool ok() const noexcept { return fault == url_fault::none; }
  /// The path without its trailing '/'s: the prefix that request targets are appended to, with
  /// any byte outside ASCII percent-encoded (paths are written as given, see http_connection).
  [[nodiscard]] std::string prefix() const;
};

[[nodiscard]] parsed_url parse_url(std::string_view url);

// --- one request over one connection -------------------------------------------------------------

enum class http_method { get, post, put, patch, del };

using http_headers = std::vector<std::pair<std::string, std::string>>;

/// How a request failed before an answer arrived.
enum class http_failure {
  none,
  connect,          // nothing accepted the connection
  connect_timeout,  // connecting took longer than the connect timeout
  read,             // no complete answer: the read timeout expired or the peer closed
  write,            // sending the request failed
  tls_handshake,
  tls_certificates,  // the CA file (or the system store) could not be loaded
  tls_verification,  // the server's certificate did not verify
  too_large,         // the answer's body was over the caller's limit (reading stopped there)
  other,
};

struct connection_settings {
  std::chrono::milliseconds connect_timeout{5000};
  std::chrono::milliseconds read_timeout{30000};  // also the limit for writing the request
  bool keep_alive = false;
  bool tcp_nodelay = true;  // a request is written as header and body: no Nagle delay between
  std::string ca_file;      // PEM CA file for https; empty: the system store
};

struct http_exchange {
  http_failure failure = http_failure::none;
  std::string failure_name;  // the HTTP library's name for it (other)
  std::chrono::milliseconds elapsed{};
  int status = 0;  // 0 when no answer head arrived
  std::string body;
  http_headers headers;  // of the answer

  [[nodiscard]] bool answered() const noexcept { return failure == http_failure::none; }
  /// The first answer header of that name (case-insensitive), or "".
  [[nodiscard]] std::string header(std::string_view name) const;
};

/// What a failure amounts to: a timeout or a connection failure, with a message that names the
/// origin (and never a header or a body).
struct failure_text {
  bool timeout = false;
  std::string message;
};
[[nodiscard]] failure_text describe(const http_exchange& x, const std::string& origin, const connection_settings& s);

/// One connection to one origin (kept alive between requests when the settings say so). Redirects
/// are never followed and https certificates and host names are always verified. A path is written
/// byte for byte as given (callers build it encoded), so that what a request-bound wallet proof
/// signs is what the server receives.
class http_connection {
 public:
  /// nullptr when the HTTP library cannot use `origin` (e.g. https without TLS support).
  [[nodiscard]] static std::unique_ptr<http_connection> open(const std::string& origin,
                                                             const connection_settings& settings);
  ~http_connection();
  http_connection(const http_connection&) = delete;
  http_connection& operator=(const http_connection&) = delete;

  /// Sends one request. `body_limit` (none: no limit) caps the body of a 200 answer: one declared or
  /// streaming past it ends the exchange as too_large without reading further; the body of any
  /// other status is read only up to 4 KiB.
  http_exchange send(http_method method, const std::string& path, const http_headers& headers, const std::string& body,
                     const std::string& content_type, std::optional<size_t> body_limit = std::nullopt);

 private:
  struct impl;
  explicit http_connection(std::unique_ptr<impl> p);
  std::unique_ptr<impl> impl_;
};

// --- the typed clients' transport ----------------------------------------------------------------

struct http_request {
  http_method method = http_method::get;
  std::string target;  // path below the base URL's prefix, with its query: "/core/v1/account"
  std::string body;    // wiped after sending
  std::string content_type = "application/json";
  const Secret* api_key = nullptr;  // sent as X-Api-Key when set and non-empty
  const Secret* bearer = nullptr;   // sent as Authorization: Bearer when set and non-empty
  std::string wallet_auth;          // sent as X-Wallet-Auth when non-empty
  /// When set, called once before the first attempt with the method ("GET", "POST", …), the
  /// target as written on the wire (the base URL's prefix, path and query) and the body; its value
  /// is sent as X-Wallet-Auth (a BillingAuth bound to the request, docs/protocol.md §2).
  std::function<std::string(std::string_view method, std::string_view wire_target, std::string_view body)>
      wallet_auth_for;
  http_headers extra;  // further headers, checked for line breaks by the caller
  /// Key values the body carries: scrubbed, like the credentials, from any error text.
  std::vector<bytes_view> redact;
};

struct http_answer {
  int status = 0;
  std::string request_id;
  boost::json::value body;  // null for an answer without a body (204)
};

class transport {
 public:
  /// Which credential the service takes, for the message that refuses user-info in the URL.
  enum class credential { api_key, bearer };

  /// Throws api_error (invalid_request, status 0) for a base URL it cannot use.
  explicit transport(client_options options, credential kind = credential::api_key);
  ~transport();
  transport(transport&&) noexcept;
  transport& operator=(transport&&) noexcept;

  /// A 2xx answer with a JSON body or none, or throws api_error. Only GETs are retried.
  http_answer send(http_request& request);

  /// The absolute URL of `target` under the base URL (for a link a user opens).
  [[nodiscard]] std::string url(std::string_view target) const;
  /// Waits as the options say (their `sleep`, or the thread sleeps).
  void pause(std::chrono::milliseconds d) const;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

/// Runs `read` on the answer's body; a bad_response it throws becomes an api_error carrying the
/// answer's status and request id.
template <class F>
auto decode_answer(const http_answer& a, F&& read) -> decltype(read(a.body)) {
  try {
    return read(a.body);
  } catch (const api_error&) {
    throw;
  } catch (const Error& e) {
    throw api_error(api_errc::bad_response, a.status, {}, std::string("answer field ") + e.what(), nullptr,
                    a.request_id);
  }
}

/// Overwrites every string in `v` (answers that carried a key value).
void wipe_strings(boost::json::value& v) noexcept;
/// The JSON text of `v`, with every string of `v` wiped afterwards (a body carrying a key value).
[[nodiscard]] std::string serialize_wiped(boost::json::value v);

}  // namespace enact::client::detail
