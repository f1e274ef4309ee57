// SPDX-License-Identifier: Apache-2.0
// How a worker confines itself before its first run (docs/architecture.md §4 "Action runtime"): only the
// channel stays open, a private network namespace, root dropped to nobody, resource limits,
// no new privileges, and a seccomp filter that allows only what the run loop needs. Every step is
// tried and its outcome recorded in the report, which the worker sends to the parent in its hello
// frame; whether a worker missing a layer may run anything is decided from that report
// (pool_config::allow_weak_isolation), never here.
#pragma once

#include <cstddef>
#include <functional>
#include <string_view>

#include "runtime/runtime.hpp"

namespace enact::runtime::confinement {

/// Everything before the seccomp filter: descriptors, namespace, identity, limits.
/// `address_space_bytes` becomes RLIMIT_AS (skipped under AddressSanitizer).
/// `skip`: a kIsolationLayers name this call leaves out on purpose and reports as missing (the
/// test hook of pool_config::fail_layer_for_tests); empty in every real run.
/// `before_limits`, when set, runs after the identity is dropped and before the rlimits: the
/// place to start threads (RLIMIT_NPROC is 0 afterwards).
void prepare(isolation_report& report, int channel_fd, size_t address_space_bytes, std::string_view skip = {},
             const std::function<void()>& before_limits = {});

/// PR_SET_NO_NEW_PRIVS and the seccomp filter. Call after every lazy initialisation the runs
/// need has happened (dynamic loading, OpenSSL configuration): afterwards only read/write on
/// `channel_fd`, memory management, clocks, random bytes, resource usage and exit are allowed,
/// on every thread of the process; anything else kills the
/// process (SIGSYS), which the parent sees as a crashed run.
/// `skip`: as for prepare ("no_new_privs" also leaves the filter out, as the kernel would).
void lock_down(isolation_report& report, int channel_fd, std::string_view skip = {});

}  // namespace enact::runtime::confinement
