// SPDX-License-Identifier: Apache-2.0
// The Duktape engine as the sandbox uses it: heaps whose every allocation is counted against a
// byte limit, and whose bytecode executor stops once a deadline passes. The deadline check is
// Duktape's DUK_USE_EXEC_TIMEOUT_CHECK hook (enabled in our duk_config.h, see CMakeLists.txt),
// called from the executor interrupt about every 256K instructions; once it has fired it keeps
// answering "expired", so the RangeError it causes unwinds through every catch in the action.
// Native code that never returns to the executor (a pathological regexp) is not interrupted:
// the parent's SIGKILL after wall + grace is the backstop for that.
#pragma once

#include <cstddef>
#include <cstdint>

#include "duktape.h"

namespace enact::runtime::engine {

/// The per-heap state behind Duktape's heap_udata. One per run; it must outlive the heap.
struct heap_guard {
  size_t heap_limit = 0;        // bytes; 0: no limit
  size_t heap_used = 0;         // bytes handed to Duktape, including our per-block header
  bool heap_exhausted = false;  // an allocation was refused (limit, or malloc itself)
  int64_t deadline_ns = 0;      // CLOCK_MONOTONIC; 0: none
  bool timed_out = false;       // the deadline passed while bytecode ran
  bool halted = false;          // the run is over: refuse to execute any more bytecode
  void* owner = nullptr;        // for the embedder's fatal handler
};

/// CLOCK_MONOTONIC in nanoseconds (vDSO: no system call on common hosts).
[[nodiscard]] int64_t monotonic_ns() noexcept;

/// A heap using `guard` for accounting and the deadline (nullptr `guard`: a plain heap).
/// Returns nullptr when Duktape cannot create it (limit too small).
[[nodiscard]] duk_context* create_heap(heap_guard* guard, duk_fatal_function fatal) noexcept;

}  // namespace enact::runtime::engine
