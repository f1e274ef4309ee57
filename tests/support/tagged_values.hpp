// SPDX-License-Identifier: Apache-2.0
// Recognisable fixed-size values (hashes, addresses) for the ledger tests and benches that build
// records by hand: the bytes start `a`, `b` and end 1, so no value is all zeros and each one shows
// in a dump which record it belongs to.
#pragma once

#include <cstdint>

#include "enact/bytes.hpp"

namespace enact::test {

/// A fixed-size value whose bytes start a, b and end 1 (never zero).
template <class Fixed>
Fixed tagged(uint8_t a, uint8_t b) {
  Fixed x{};
  x[0] = a;
  x[1] = b;
  x[x.size() - 1] = 1;
  return x;
}
inline hash256 h256(uint8_t a, uint8_t b = 0) { return tagged<hash256>(a, b); }
inline address addr(uint8_t a, uint8_t b = 0) { return tagged<address>(a, b); }

}  // namespace enact::test
