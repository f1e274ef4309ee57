#include "http/errors.hpp"

#include <httplib.h>

#include <cstdint>

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
  const auto byte = [&](size_t i) {
    return static_cast<uint8_t>(text[i]);
  };
  const auto sequence_at = [&](size_t i) -> size_t {  // its length, 0 when malformed
    const uint8_t lead = byte(i);
    if (lead < 0x80)
      return 1;
    size_t len = 0;
    uint32_t cp = 0;
    uint32_t min = 0;
    if ((lead & 0xE0) == 0xC0)
      len = 2, cp = lead & 0x1F, min = 0x80;
    else if ((lead & 0xF0) == 0xE0)
      len = 3, cp = lead & 0x0F, min = 0x800;
    else if ((lead & 0xF8) == 0xF0)
      len = 4, cp = lead & 0x07, min = 0x10000;
    else
      return 0;
    if (i + len > text.size())
      return 0;
    for (size_t k = 1; k < len; ++k) {
      if ((byte(i + k) & 0xC0) != 0x80)
        return 0;
      cp = (cp << 6) | (byte(i + k) & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
      return 0;
    return len;
  };
  size_t i = 0;
  while (i < text.size()) {
    const size_t len = sequence_at(i);
    if (len == 0)
      break;
    i += len;
  }
  if (i == text.size())
    return text;  // the common case: nothing to replace, no copy
  std::string out = text.substr(0, i);
  while (i < text.size()) {
    const size_t len = sequence_at(i);
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

bool is_well_formed_utf8(std::string_view text) {
  std::string copy(text);
  return well_formed_utf8(std::move(copy)).size() == text.size();
}

void send_json(httplib::Response& res, int status, const boost::json::value& body) {
  res.status = status;
  res.set_content(well_formed_utf8(boost::json::serialize(body)), "application/json");
}

void send_error(httplib::Response& res, const http_error& e) { send_json(res, e.status, error_body(e)); }

}  // namespace enact::http
