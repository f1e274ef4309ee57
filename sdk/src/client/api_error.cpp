// SPDX-License-Identifier: Apache-2.0
#include "enact/client/api_error.hpp"

#include <utility>

namespace enact {

api_error::api_error(api_errc code, int status, std::string code_name, std::string message, boost::json::value details,
                     std::string request_id, std::optional<std::chrono::seconds> retry_after)
    : Error(make_error_code(code), (code_name.empty() ? std::string(name(code)) : code_name) + ": " + message),
      status_(status),
      code_name_(code_name.empty() ? std::string(name(code)) : std::move(code_name)),
      message_(std::move(message)),
      details_(std::move(details)),
      request_id_(std::move(request_id)),
      retry_after_(retry_after) {}

}  // namespace enact
