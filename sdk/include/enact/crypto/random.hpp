// SPDX-License-Identifier: Apache-2.0
// Cryptographically secure random bytes from OpenSSL's CSPRNG (RAND_bytes). A failure of the
// generator is a system fault, not an input error, so these functions throw `enact::Error`
// (code `random_errc::generator_failed`) instead of returning a result.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "enact/secret.hpp"
#include "enact/error.hpp"

namespace enact {

enum class random_errc {
  generator_failed = 1,
};

}  // namespace enact
ENACT_ERRC(random_errc, random_category, "enact.random", "random generator failed")

namespace enact::crypto {

/// Fills `out` with random bytes. Throws enact::Error when the generator fails.
void random_bytes(std::span<uint8_t> out);

/// A new secret of `n` random bytes. Throws enact::Error when the generator fails.
[[nodiscard]] Secret random_secret(size_t n);

}  // namespace enact::crypto
