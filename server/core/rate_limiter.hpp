// SPDX-License-Identifier: Apache-2.0
// The token buckets of the HTTP kit (http/rate_limiter.hpp), by the names the core's routes use.
#pragma once

#include "http/rate_limiter.hpp"

namespace enact::core {

using http::client_of;
using http::rate_limiter;

}  // namespace enact::core
