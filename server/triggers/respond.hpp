// SPDX-License-Identifier: Apache-2.0
// The trigger service's errors on the wire (docs/protocol.md §0): the store's and the TEE's codes in
// the API's terms, then the HTTP kit's body. The service meets no other layer's errors.
#pragma once

#include "http/errors.hpp"
#include "enact/api/errc.hpp"
#include "tee/errors.hpp"
#include "triggers/store.hpp"

namespace enact::triggers {

/// Store and TEE errors in the API's terms (docs/protocol.md §0); any other error as it is.
[[nodiscard]] inline error api_error_of(const error& e) {
  if (e.code.category() == tee::tee_category()) {
    const api_errc code = tee::to_api_errc(static_cast<tee::tee_errc>(e.code.value()));
    return fail(code, code == api_errc::internal ? std::string("internal error") : e.message);
  }
  if (e.code.category() != store_category())
    return e;
  switch (static_cast<store_errc>(e.code.value())) {
    case store_errc::not_found:
    case store_errc::wrong_type:
      return fail(api_errc::not_found, e.message);
    case store_errc::disabled:
    case store_errc::conflict:
      return fail(api_errc::conflict, e.message);
    case store_errc::invalid_argument:
      return fail(api_errc::invalid_request, e.message);
    case store_errc::storage:
      return fail(api_errc::unavailable, "the trigger store is unavailable; retry");
    case store_errc::rate_limited:
    case store_errc::queue_full:
      return fail(api_errc::rate_limited, e.message);
    case store_errc::limit_reached:
      return fail(api_errc::forbidden, e.message);
    case store_errc::lease_lost:
      break;
  }
  return fail(api_errc::internal, "internal error");
}

/// The wire form of an error of the trigger service.
[[nodiscard]] inline http::http_error wire_error(const error& e) { return http::to_http(api_error_of(e)); }

/// Whether a failure is the service's own (internal, unavailable): logged with its detail.
[[nodiscard]] inline bool is_server_failure(const http::http_error& h) {
  return h.code == api_errc::internal || h.code == api_errc::unavailable;
}

}  // namespace enact::triggers
