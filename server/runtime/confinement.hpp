// How a worker confines itself before its first run (DESIGN.md §4 "Action runtime"): only the
// channel stays open, a private network namespace, root dropped to nobody, resource limits,
// no new privileges, and a seccomp filter that allows only what the run loop needs. Every step
// is best effort: what succeeded is reported to the parent in the hello frame.
#pragma once

#include <cstddef>

#include "runtime/runtime.hpp"

namespace enact::runtime::confinement {

/// Everything before the seccomp filter: descriptors, namespace, identity, limits.
/// `address_space_bytes` becomes RLIMIT_AS (skipped under AddressSanitizer).
void prepare(isolation_report& report, int channel_fd, size_t address_space_bytes);

/// PR_SET_NO_NEW_PRIVS and the seccomp filter. Call after every lazy initialisation the runs
/// need has happened (dynamic loading, OpenSSL configuration): afterwards only read/write on
/// `channel_fd`, memory management, clocks and exit are allowed; anything else kills the
/// process (SIGSYS), which the parent sees as a crashed run.
void lock_down(isolation_report& report, int channel_fd);

}  // namespace enact::runtime::confinement
