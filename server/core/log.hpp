// SPDX-License-Identifier: Apache-2.0
// The server's structured logger is the HTTP kit's (http/log.hpp); the core's routes and the
// embedding API name it enact::core::logger.
#pragma once

#include "http/log.hpp"

namespace enact::core {

using logger = http::logger;

}  // namespace enact::core
