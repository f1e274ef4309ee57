// SPDX-License-Identifier: Apache-2.0
#include "app/http_config.hpp"

#include "app/setting_values.hpp"

namespace enact::app {

std::optional<result<void>> apply_http_setting(http::connection_limits& s, std::string_view key,
                                               const boost::json::value& v, const std::string& what) {
  using setting::number;
  using setting::number_in;
  const auto set = [](auto& field, auto value) -> result<void> {
    ENACT_TRY(field, std::move(value));
    return {};
  };
  if (key == "http.max_header_bytes")
    return set(s.max_header_bytes, number_in<size_t>(v, what, 1024, 1 << 20));
  if (key == "http.max_headers")
    return set(s.max_headers, number_in<size_t>(v, what, 8, 10000));
  if (key == "http.max_connections_per_client")
    return set(s.max_connections_per_client, number<size_t>(v, what));
  if (key == "http.request_timeout_seconds") {
    auto n = number_in<int64_t>(v, what, 1, 3600);
    if (!n)
      return result<void>(n.err());
    s.request_timeout = std::chrono::seconds(*n);
    return result<void>{};
  }
  return std::nullopt;
}

}  // namespace enact::app
