// SPDX-License-Identifier: Apache-2.0
// Shared by the fuzz targets: a property check that aborts (so libFuzzer records the input as a
// crash with its reproducer) and views of the fuzzer's input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <system_error>

#include "enact/bytes.hpp"

namespace enact::fuzz {

/// Aborts with `what` when a property that must hold for every input does not.
inline void require(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "fuzz property violated: %s\n", what);
    std::abort();
  }
}

inline std::string_view text(const uint8_t* data, size_t size) { return {reinterpret_cast<const char*>(data), size}; }

inline bytes_view view(const uint8_t* data, size_t size) { return {data, size}; }

/// A decoder that accepts canonical text only, on `s`: what it decodes re-encodes to exactly `s`,
/// and what it refuses it refuses with an error of `errc`'s category.
template <class Decode, class Encode, class Errc>
void require_canonical(std::string_view s, Decode decode, Encode encode, Errc errc, const char* round_trip,
                       const char* foreign_error) {
  if (const auto decoded = decode(s))
    require(encode(*decoded) == s, round_trip);
  else
    require(decoded.code().category() == make_error_code(errc).category(), foreign_error);
}

}  // namespace enact::fuzz
