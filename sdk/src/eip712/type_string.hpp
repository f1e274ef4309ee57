// SPDX-License-Identifier: Apache-2.0
// What typed_data.cpp (reading and checking `types`) and encode.cpp (encodeType, encodeData) share:
// the syntax of EIP-712 type strings. `Person[2][]` is an array of `Person[2]`: the last suffix is
// the outermost dimension, as in Solidity.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "enact/eip712/typed_data.hpp"

namespace enact::eip712::detail {

inline constexpr std::string_view kDomainType = "EIP712Domain";

enum class atomic_kind { uint_, int_, address, bool_, bytes_fixed, bytes, string };
struct atomic {
  atomic_kind kind;
  unsigned size = 0;  // bits for uintN/intN, bytes for bytesN
};

/// The atomic type `t` names (`uint256`, `bytes32`, `string`...), or nullopt.
std::optional<atomic> parse_atomic(std::string_view t) noexcept;

/// A name that reads as an atomic type, valid or not (`uint`, `int7`, `bytes33`): never a struct.
bool looks_atomic(std::string_view t) noexcept;

// \w only: eth-sig-util finds dependencies with /^\w*/, so any other character would make it
// compute a different encodeType.
bool is_struct_name(std::string_view s) noexcept;

bool is_member_name(std::string_view s) noexcept;

/// The outermost array dimension of a type: `T[3]` -> {T, 3}, `T[]` -> {T, nullopt}.
struct array_split {
  std::string_view element;
  std::optional<size_t> count;
};
enum class split_status { not_array, ok, malformed };
split_status split_array(std::string_view t, array_split& out) noexcept;

/// The type with every array suffix removed, or nullopt when a suffix is malformed.
std::optional<std::string_view> base_of(std::string_view t) noexcept;

bool has_dynamic_dimension(std::string_view t) noexcept;

std::string quoted(std::string_view s);

}  // namespace enact::eip712::detail
