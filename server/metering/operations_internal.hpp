// SPDX-License-Identifier: Apache-2.0
// What the metering operations' files (operations.cpp, idempotency_ops.cpp) share: hashes as
// stored, amounts as parameters, and the check of an identifier's length.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "enact/codec/hex.hpp"
#include "metering/session.hpp"

namespace enact::metering::sql::operations {

/// A hash as the store keeps it: lowercase hex text.
[[nodiscard]] inline std::string hx(const hash256& h) { return codec::hex::encode(h); }
/// An amount as a statement parameter (amounts are checked to fit a signed 64-bit integer).
[[nodiscard]] inline param num(uint64_t v) { return static_cast<int64_t>(v); }

[[nodiscard]] inline result<void> check_id(std::string_view what, std::string_view id, size_t max) {
  if (id.empty() || id.size() > max)
    return fail(metering_errc::invalid_argument, std::string(what) + ": 1 to " + std::to_string(max) + " bytes");
  return {};
}

}  // namespace enact::metering::sql::operations
