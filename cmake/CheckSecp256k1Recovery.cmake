# SPDX-License-Identifier: Apache-2.0
# The SDK signs with recoverable ECDSA and recovers signers (ecrecover, EIP-712 and envelope
# checks), so libsecp256k1 must carry its recovery module. Debian's does; upstream's CMake build
# leaves it out unless SECP256K1_ENABLE_MODULE_RECOVERY=ON, and so does ConanCenter's secp256k1
# recipe, which has no option for it. Fail at configure time with what to do, not at link time
# with an undefined secp256k1_ecdsa_recover.
include(CheckCSourceCompiles)
include(CMakePushCheckState)
cmake_push_check_state(RESET)
set(CMAKE_REQUIRED_LIBRARIES PkgConfig::secp256k1)
set(CMAKE_REQUIRED_QUIET ON)
check_c_source_compiles([[
#include <secp256k1.h>
#include <secp256k1_recovery.h>
int main(void) {
  secp256k1_ecdsa_recoverable_signature sig;
  return secp256k1_ecdsa_recover(0, 0, &sig, 0) == 0 ? 0 : 1;
}]] ENACT_SECP256K1_HAS_RECOVERY)
cmake_pop_check_state()
if(NOT ENACT_SECP256K1_HAS_RECOVERY)
  message(FATAL_ERROR
    "libsecp256k1 (${secp256k1_LINK_LIBRARIES}) lacks its recovery module (secp256k1_recovery.h, "
    "secp256k1_ecdsa_recover), which enact needs to recover signers. Build libsecp256k1 with "
    "SECP256K1_ENABLE_MODULE_RECOVERY=ON (CMake) or --enable-module-recovery (autotools); Debian's "
    "libsecp256k1-dev has it. With Conan, ConanCenter's secp256k1 recipe builds it without: see the "
    "docstring of conanfile.py.")
endif()
