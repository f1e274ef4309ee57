// SPDX-License-Identifier: Apache-2.0
#include "enact/ipfs/gateway.hpp"

#include "../client/transport.hpp"

namespace enact::ipfs {

namespace http = enact::client::detail;

result<std::string> fetch_from_gateway(const gateway_options& options, std::string_view cid_text) {
  ENACT_TRY(const cid wanted, parse(cid_text));
  const std::string text(cid_text);
  // A bare host[:port] names a plain-HTTP gateway, as it always has in the server's settings.
  const http::parsed_url url =
      http::parse_url(options.url.find("://") == std::string::npos ? "http://" + options.url : options.url);
  if (!url.ok())
    return fail(gateway_errc::bad_url, "IPFS gateway URL: " + url.why);
  http::connection_settings settings;
  settings.connect_timeout = options.timeout;
  settings.read_timeout = options.timeout;
  settings.ca_file = options.ca_file;
  const auto connection = http::http_connection::open(url.origin, settings);
  if (!connection)
    return fail(gateway_errc::bad_url, "IPFS gateway URL: cannot use '" + url.origin + "'");
  const size_t limit = options.max_bytes;
  http::http_exchange x = connection->send(http::http_method::get, url.prefix() + "/ipfs/" + text, {}, {}, {}, limit);
  if (x.failure == http::http_failure::too_large)
    return fail(gateway_errc::too_large,
                "action " + text + " on the IPFS gateway is larger than " + std::to_string(limit) + " bytes; refused");
  if (!x.answered() && x.status == 0)
    return fail(gateway_errc::unreachable, "IPFS gateway unreachable for " + text);
  if (x.status == 404)
    return fail(gateway_errc::not_found, "action " + text + " not found on the IPFS gateway");
  if (x.status >= 300 && x.status < 400)
    return fail(gateway_errc::bad_status, "IPFS gateway answered a redirect (" + std::to_string(x.status) + ") for " +
                                              text + "; redirects are not followed");
  if (x.status != 200)
    return fail(gateway_errc::bad_status, "IPFS gateway answered " + std::to_string(x.status) + " for " + text);
  if (!x.answered())
    return fail(gateway_errc::cut_short, "IPFS gateway: the answer for " + text + " was cut short");
  const auto content = as_bytes(std::string_view(x.body));
  if (!same_content(cid_v0_of(content), wanted) && cid_v1_of(content) != wanted)
    return fail(gateway_errc::wrong_content, "IPFS gateway returned bytes that do not hash to " + text + "; refused");
  return std::move(x.body);
}

}  // namespace enact::ipfs
