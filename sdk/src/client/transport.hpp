// One JSON request over HTTP(S) with the retry rule of options.hpp, and the mapping of every
// failure to api_error (API.md §0). Private to enact::client; cpp-httplib stays in transport.cpp.
#pragma once

#include <boost/json/value.hpp>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "enact/bytes.hpp"
#include "enact/client/api_error.hpp"
#include "enact/client/options.hpp"
#include "enact/crypto/secret.hpp"

namespace enact::client::detail {

enum class http_method { get, post };

struct http_request {
  http_method method = http_method::get;
  std::string target;               // path below the base URL's prefix, with its query: "/core/v1/account"
  std::string body;                 // JSON text (POST); wiped after sending
  const Secret* api_key = nullptr;  // sent as X-Api-Key when set and non-empty
  std::string wallet_auth;          // sent as X-Wallet-Auth when non-empty
  /// Key values the body carries: scrubbed, like the API key, from any error text.
  std::vector<bytes_view> redact;
};

struct http_answer {
  int status = 0;
  std::string request_id;
  boost::json::value body;
};

class transport {
 public:
  /// Throws api_error (invalid_request, status 0) for a base URL it cannot use.
  explicit transport(client_options options);
  ~transport();
  transport(transport&&) noexcept;
  transport& operator=(transport&&) noexcept;

  /// A 2xx answer with a JSON body, or throws api_error.
  http_answer send(http_request& request);

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

}  // namespace enact::client::detail
