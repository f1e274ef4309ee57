// SPDX-License-Identifier: Apache-2.0
// RLP's JSON bridge in the shape of ethers' encodeRlp/decodeRlp: "0x…" strings for byte strings,
// arrays for lists. Kept apart from rlp.hpp so that the codec does not bring Boost.JSON to its
// users.
#pragma once

#include <boost/json/value.hpp>

#include "enact/codec/rlp.hpp"

namespace enact::codec::rlp {

/// ethers' shape: byte strings as "0x…" lowercase hex, lists as arrays.
[[nodiscard]] boost::json::value to_json(const item& it);
/// Inverse of to_json; hex digits of either case; `0x` prefix and an even digit count required.
[[nodiscard]] result<item> from_json(const boost::json::value& v, size_t max_depth = kMaxDepth);

}  // namespace enact::codec::rlp
