// SPDX-License-Identifier: Apache-2.0
// The route table's JSON Schema subset is the HTTP kit's (http/schema.hpp), shared with the
// trigger service; the core's routes name it `core::schema`.
#pragma once

#include "http/schema.hpp"

namespace enact::core {
namespace schema = http::schema;
}  // namespace enact::core
