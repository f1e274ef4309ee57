// SPDX-License-Identifier: Apache-2.0
// One action in one fresh Duktape heap, inside a worker process: the globals of runtime.hpp
// (params, Enact, console), the limits, and the classification of how the run ended. The worker
// supplies `call_parent`, through which capability calls leave the heap; this file knows
// nothing about processes or keys.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "runtime/runtime.hpp"

namespace enact::runtime::sandbox {

/// The file name the action's code is compiled under, as it appears in stacks.
inline constexpr std::string_view kFilename = "action.js";
/// Longest message and stack handed back (an action controls both; they are cut beyond this).
inline constexpr size_t kMaxMessageBytes = 16u << 10;
inline constexpr size_t kMaxStackBytes = 16u << 10;
/// The capability methods, in the order of their Duktape `magic` numbers.
inline constexpr std::string_view kCapabilities[] = {"signEcdsa",    "signMessage",   "getAddress",
                                                     "encrypt",      "decrypt",       "signEd25519",
                                                     "getPublicKey", "signTypedData", "signTransaction"};

/// Enact.fetch's call on the channel: {"call": "fetch", "args": {"url", "init"}}, answered by the
/// parent under the egress policy (fetch.hpp), never from the worker.
inline constexpr std::string_view kFetchMethod = "fetch";
/// Whether `method` is a call the worker may make: a capability, or fetch.
[[nodiscard]] constexpr bool is_call_method(std::string_view method) noexcept {
  for (const std::string_view m : kCapabilities)
    if (m == method)
      return true;
  return method == kFetchMethod;
}
/// The argument checks of Enact.fetch in the worker (TypeError); the parent checks the rest.
inline constexpr std::string_view kFetchUrlExpected = "fetch: the URL must be a string";
inline constexpr std::string_view kFetchInitExpected = "fetch: the options must be an object";

struct request {
  std::string code;
  std::string params_json;  // empty: {}
  limits lim;
};

/// The parent's answer to a capability call: JSON text when `ok`, else the error message.
struct call_answer {
  bool ok = false;
  std::string payload;
};
using call_parent = std::function<call_answer(std::string_view method, std::string_view args)>;

struct outcome {
  failure_kind failure = failure_kind::none;
  bool has_response = false;
  std::string response_json;
  std::string logs;
  bool logs_truncated = false;
  std::string message;
  std::string stack;
  bool retire = false;  // the engine hit a fatal error: this process must not run anything else
};

/// Receives the outcome when Duktape reports a fatal error (the heap is then unusable); it must
/// not return — the process exits right after it.
using fatal_sink = void (*)(const outcome&);

struct run_state;

/// A new Duktape heap with the Enact and console globals installed and nothing else done: the
/// worker creates the next one while it waits for the next request, which takes heap creation
/// (most of a trivial run's cost) off the request's path. It serves exactly one run, and is
/// destroyed with this object: after run_keeping_heap, a spent heap that runs nothing more.
class fresh_heap {
 public:
  explicit fresh_heap(fatal_sink on_fatal);
  ~fresh_heap();
  fresh_heap(fresh_heap&&) noexcept;
  fresh_heap& operator=(fresh_heap&&) noexcept;
  fresh_heap(const fresh_heap&) = delete;
  fresh_heap& operator=(const fresh_heap&) = delete;

 private:
  friend outcome run_keeping_heap(fresh_heap& heap, const request& req, const call_parent& parent);
  std::unique_ptr<run_state> state_;
};

/// A spent heap holding at most this many bytes is left to its owner by run_keeping_heap; a
/// larger one (its destruction takes time in proportion) is destroyed before the outcome returns.
inline constexpr size_t kDeferredTeardownBytes = 1u << 20;

/// Runs `req` to completion in `heap`: params, compile as kFilename, execute, classify. The heap
/// limit counts what the heap already holds. A spent heap of at most kDeferredTeardownBytes is left
/// in `heap`, halted (no bytecode runs, the natives refuse, a fatal error while it is destroyed
/// ends the process without reporting a second outcome), and destroyed with it: the worker
/// answers first and destroys it while it waits for the next request, since destroying even a
/// trivial run's heap costs several times what running the action did. Never throws for anything
/// the action does.
[[nodiscard]] outcome run_keeping_heap(fresh_heap& heap, const request& req, const call_parent& parent);

/// The same, the heap destroyed before the outcome is returned.
[[nodiscard]] outcome run(fresh_heap heap, const request& req, const call_parent& parent);

/// The same in a heap created on the spot.
[[nodiscard]] outcome run(const request& req, const call_parent& parent, fatal_sink on_fatal);

}  // namespace enact::runtime::sandbox
