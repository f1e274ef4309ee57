// SPDX-License-Identifier: Apache-2.0
// The Solidity ABI's JSON bridge, in the shape ethers' AbiCoder uses (integers as decimal
// strings, addresses EIP-55 checksummed, bytes as hex): kept apart from abi.hpp so that the codec
// does not bring Boost.JSON to its users.
#pragma once

#include <boost/json/value.hpp>

#include <string_view>

#include "enact/codec/abi.hpp"

namespace enact::codec::abi {

/// A value from ethers-style JSON: integers as exact JSON numbers, decimal strings or "0x" hex
/// strings (with a leading '-' for intN); bools; addresses as "0x" + 40 hex digits of any case;
/// bytes and bytesN as "0x" hex; strings; arrays for arrays and tuples. `what` names the value in
/// error messages.
[[nodiscard]] result<value> from_json(const type& t, const boost::json::value& v, std::string_view what = "value");

/// JSON of a value: integers as decimal strings, addresses EIP-55 checksummed, bytes as "0x"
/// lowercase hex, bools, strings, arrays. Throws enact::Error (type_mismatch) when `v` does not
/// have the shape of `t`, and (bad_type) when a hand-built `t` is invalid.
[[nodiscard]] boost::json::value to_json(const type& t, const value& v);

}  // namespace enact::codec::abi
