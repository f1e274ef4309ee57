// Shared by the fuzz targets: a property check that aborts (so libFuzzer records the input as a
// crash with its reproducer) and views of the fuzzer's input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

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

}  // namespace enact::fuzz
