// SPDX-License-Identifier: Apache-2.0
// The SpiderMonkey engine of the sandbox (docs/architecture.md §4 "Action runtime"): the
// worker's default. SpiderMonkey 102 from Debian, jitless (no executable mapping is ever asked
// for, so the seccomp filter keeps refusing PROT_EXEC), one JSContext for the worker's main
// thread, and a fresh global — a realm in a compartment and zone of its own — per run, created
// while the worker waits for the next request, as the Duktape worker creates its heap.
//
// The action's code is the body of an async function, so top-level `await` works; the run ends
// when that function's promise settles, after the promise job queue is drained (a rejected
// promise is an `exception` carrying its stack). The globals and the Enact API are those of
// sandbox.hpp, with the same argument checks and messages (run_text.hpp).
//
// Limits: wall time through the interrupt callback, requested by a watchdog thread when the
// deadline passes; heap through JSGC_MAX_BYTES for the garbage-collected heap plus the malloc
// bytes the run adds (the watchdog reads them every 2 ms and interrupts past the limit), with
// the worker's RLIMIT_AS behind both; output and log sizes as in Duktape. The watchdog and
// SpiderMonkey's own helper threads are started by start(), before the worker's rlimits
// (RLIMIT_NPROC 0) and its seccomp filter (installed on every thread).
#pragma once

#include <memory>
#include <string>

#include "runtime/sandbox.hpp"

namespace enact::runtime::spidermonkey {

/// Once per process, before RLIMIT_NPROC and the seccomp filter: TZ=UTC (Date runs in UTC as it
/// does on Duktape), JS_Init without the JIT, the context, its job queue, interrupt and
/// out-of-memory callbacks, and the watchdog thread. False with the reason when it failed.
[[nodiscard]] bool start(std::string& why);

struct realm_state;

/// A new global with params unset and the Enact and console globals installed: made while the
/// worker is idle, used by exactly one run.
class fresh_realm {
 public:
  fresh_realm();
  ~fresh_realm();
  fresh_realm(fresh_realm&&) noexcept;
  fresh_realm& operator=(fresh_realm&&) noexcept;
  fresh_realm(const fresh_realm&) = delete;
  fresh_realm& operator=(const fresh_realm&) = delete;

 private:
  friend sandbox::outcome run(fresh_realm realm, const sandbox::request& req, const sandbox::call_parent& parent);
  std::unique_ptr<realm_state> state_;
};

/// Runs `req` in `realm` to completion (its promise settled or the run stopped on a limit);
/// never throws for anything the action does. Garbage is collected after the outcome is known
/// (collect_garbage), not during it.
[[nodiscard]] sandbox::outcome run(fresh_realm realm, const sandbox::request& req, const sandbox::call_parent& parent);

/// Between runs, while idle: a full collection once enough garbage built up, else a chance for
/// an incremental slice.
void collect_garbage();

}  // namespace enact::runtime::spidermonkey
