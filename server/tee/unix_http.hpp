// SPDX-License-Identifier: Apache-2.0
// A minimal HTTP/1.1 client over a Unix domain socket (internal to server/tee), for the dstack
// guest agent at /var/run/dstack.sock. cpp-httplib 0.11.4 connects over TCP only (its
// set_address_family takes no AF_UNIX path), hence this: one request per connection
// (`Connection: close`), a Content-Length, chunked or read-to-close body, a deadline for the whole
// exchange and a size limit on the answer.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "enact/result.hpp"

namespace enact::tee::detail {

struct http_answer {
  int status = 0;
  /// The decoded body. Answers may carry key material (GetKey): the caller wipes it.
  std::string body;
};

/// Sends `method target` with `json_body` (Content-Type application/json when not empty) to the
/// server on `socket_path` and returns its answer. Errors (code unavailable) name the socket and
/// what failed: connect, send, a timeout, a malformed or oversized answer. The raw receive buffer
/// is wiped before returning.
[[nodiscard]] result<http_answer> unix_http_request(const std::string& socket_path, std::string_view method,
                                                    std::string_view target, std::string_view json_body,
                                                    std::chrono::milliseconds timeout);

}  // namespace enact::tee::detail
