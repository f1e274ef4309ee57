// SPDX-License-Identifier: Apache-2.0
#include "app/http_config.hpp"

#include "app/setting_values.hpp"

namespace enact::app {

std::optional<result<void>> apply_http_setting(http::connection_limits& s, std::string_view key,
                                               const boost::json::value& v, const std::string& what) {
  using setting::number;
  using setting::number_in;
  const auto apply = [&]() -> result<void> {
    if (key == "http.max_header_bytes") {
      ENACT_TRY(s.max_header_bytes, number_in<size_t>(v, what, 1024, 1 << 20));
    } else if (key == "http.max_headers") {
      ENACT_TRY(s.max_headers, number_in<size_t>(v, what, 8, 10000));
    } else if (key == "http.request_timeout_seconds") {
      ENACT_TRY(const int64_t n, number_in<int64_t>(v, what, 1, 3600));
      s.request_timeout = std::chrono::seconds(n);
    } else {
      ENACT_TRY(s.max_connections_per_client, number<size_t>(v, what));
    }
    return {};
  };
  if (key != "http.max_header_bytes" && key != "http.max_headers" && key != "http.request_timeout_seconds" &&
      key != "http.max_connections_per_client")
    return std::nullopt;
  return apply();
}

}  // namespace enact::app
