// SPDX-License-Identifier: Apache-2.0
#include "http/errors.hpp"

#include <httplib.h>

#include <cstdint>

#include "enact/codec/utf8.hpp"

namespace enact::http {

int status_of(api_errc c) noexcept {
  switch (c) {
    case api_errc::invalid_request:
    case api_errc::typed_data_invalid:
    case api_errc::chain_id_mismatch:
      return 400;
    case api_errc::unauthenticated:
    case api_errc::signature_invalid:
    case api_errc::signature_expired:
      return 401;
    case api_errc::insufficient_credits:
      return 402;
    case api_errc::forbidden:
      return 403;
    case api_errc::not_found:
      return 404;
    case api_errc::conflict:
      return 409;
    case api_errc::payload_too_large:
      return 413;
    case api_errc::action_failed:
      return 422;
    case api_errc::rate_limited:
      return 429;
    case api_errc::unavailable:
      return 503;
    default:
      return 500;  // internal, and the client-side transport codes a server never sends
  }
}

http_error to_http(const error& e) {
  const auto& cat = e.code.category();
  api_errc code = api_errc::internal;
  if (cat == detail::api_category())
    code = static_cast<api_errc>(e.code.value());
  else if (std::string_view(cat.name()).starts_with("enact."))
    // A codec, scope, CID or cron parse error: the request carried a bad value.
    code = api_errc::invalid_request;
  // Bugs never describe internals to the caller.
  return make_error(code, code == api_errc::internal ? std::string("internal error") : e.message);
}

http_error make_error(api_errc code, std::string message) {
  return {status_of(code), code, std::move(message), nullptr};
}

boost::json::object error_body(const http_error& e) {
  boost::json::object err{{"code", name(e.code)}, {"message", e.message}};
  if (!e.details.is_null())
    err["details"] = e.details;
  return boost::json::object{{"error", std::move(err)}};
}

std::string well_formed_utf8(std::string text) {
  size_t i = codec::utf8::valid_prefix(text);
  if (i == text.size())
    return text;  // the common case: nothing to replace, no copy
  std::string out = text.substr(0, i);
  while (i < text.size()) {
    const size_t len = codec::utf8::sequence_length(text, i);
    if (len == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
    } else {
      out.append(text, i, len);
      i += len;
    }
  }
  return out;
}

bool is_well_formed_utf8(std::string_view text) { return codec::utf8::is_valid(text); }

void send_json(httplib::Response& res, int status, const boost::json::value& body) {
  res.status = status;
  res.set_content(well_formed_utf8(boost::json::serialize(body)), "application/json");
}

void send_error(httplib::Response& res, const http_error& e) { send_json(res, e.status, error_body(e)); }

}  // namespace enact::http
