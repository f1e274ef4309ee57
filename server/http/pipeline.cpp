// SPDX-License-Identifier: Apache-2.0
#include "http/pipeline.hpp"

#include <httplib.h>

#include "http/request.hpp"

namespace enact::http {

void take_request_id(const httplib::Request&, httplib::Response& res, std::string& id) {
  id = current_request().id;
  if (!res.has_header("X-Request-Id"))
    res.set_header("X-Request-Id", id);
}

void send_value(httplib::Response& res, int status, const boost::json::value& v) {
  if (status == 204)
    res.status = status;
  else
    send_json(res, status, v);
}

void send_failure(httplib::Response& res, http_error h, const boost::json::value& details, int status,
                  int retry_after) {
  if (!details.is_null())
    h.details = details;
  if (status != 0)
    h.status = status;
  if (retry_after > 0)
    res.set_header("Retry-After", std::to_string(retry_after));
  send_error(res, h);
}

}  // namespace enact::http
