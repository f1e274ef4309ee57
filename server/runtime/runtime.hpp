// SPDX-License-Identifier: Apache-2.0
// The action sandbox (docs/architecture.md §4 "Action runtime", docs/protocol.md §2 "Running an action"). A `pool`
// keeps pre-started `enact-worker` processes (fork+exec once each, never per request); `run`
// hands one action to an idle worker over its channel (4-byte big-endian length + JSON frames),
// the worker evaluates it in a fresh realm of its engine (SpiderMonkey by default, or Duktape:
// pool_config::engine) under `limits`, and every call that needs keys
// (`Enact.signEcdsa`, `signMessage`, `getAddress`, `encrypt`, `decrypt`, `signEd25519`,
// `getPublicKey`, `signTypedData`, `signTransaction`) comes back to the caller's
// `capability_handler` — the runtime itself holds no keys. A worker that crashes, hangs or breaks
// the protocol is killed, reaped and replaced; the pool keeps serving.
//
// SpiderMonkey runs the code as the body of an async function (top-level await; the run ends
// when its promise settles); Duktape runs it as an ES5.1 program. Either way the action sees the
// engine's builtins plus:
//   params                        the run's params (parsed JSON; `{}` when none were given)
//   Enact.setResponse(value)      JSON-encodes `value` (undefined → null); the last call wins
//   Enact.sha256(x), crypto::keccak256(x) x: a string starting with "0x" is hex bytes, any other string
//                                 its UTF-8 bytes, or a Uint8Array/ArrayBuffer; returns 0x-hex
//   Enact.signEcdsa({...}) etc.   capability calls: `args` must be an object; the handler's
//                                 value is returned, its error thrown as `Error(message)`
//   Enact.fetch(url, init)        made by the server under its egress policy (fetch.hpp): a
//                                 promise on SpiderMonkey, a value on Duktape
//   console.log/info/warn/error   arguments joined by spaces (objects as JSON), one line each
// Date runs in UTC. The code is compiled as `action.js`, so stacks read `at f (action.js:3)`.
#pragma once

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <chrono>
#include <cstddef>
#include <functional>
#include <iterator>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "enact/error.hpp"
#include "enact/result.hpp"

namespace enact::runtime {

enum class runtime_errc {
  pool_saturated = 1,   // no worker became free within pool_config::queue_timeout (→ 503)
  worker_start_failed,  // a worker could not be started or did not report ready
  protocol,             // a worker sent a malformed or unexpected frame; it was replaced
  invalid_request,      // code not UTF-8 or over 64 MiB, params not JSON, or a limit of zero
  stopped,              // the pool is shutting down
  unconfined,           // a worker could not put an isolation layer in place: no run is served
};

namespace detail {
inline const std::error_category& runtime_category() noexcept {
  static const enact::detail::errc_category<runtime_errc> c(
      "enact.runtime", {"", "sandbox pool saturated", "sandbox worker failed to start", "sandbox protocol violation",
                        "invalid run request", "pool stopped", "sandbox isolation incomplete"});
  return c;
}
}  // namespace detail
inline std::error_code make_error_code(runtime_errc e) noexcept {
  return {static_cast<int>(e), detail::runtime_category()};
}

}  // namespace enact::runtime
ENACT_ERRC_ENUM(enact::runtime::runtime_errc)

namespace enact::runtime {

/// Per-run limits. A run that exceeds wall, heap or output fails (failure_kind); logs beyond
/// `log_bytes` are cut and followed by kLogTruncationMarker, and the run goes on.
struct limits {
  std::chrono::milliseconds wall{10000};
  // Duktape: every byte the heap allocates, counted by its allocator. SpiderMonkey: what the
  // run adds to the garbage-collected heap, and to malloc's bytes in use, each up to this.
  size_t heap_bytes = 64u << 20;
  size_t output_bytes = 1u << 20;  // the UTF-8 JSON text that Enact.setResponse produces
  size_t log_bytes = 64u << 10;    // console output kept per run
};

/// The engine the workers run actions in (docs/architecture.md §4 "Action runtime").
enum class action_engine {
  spidermonkey,  // SpiderMonkey 102, jitless: modern JavaScript, async code, BigInt
  duktape,       // Duktape 2.7: ES5.1
};

/// "spidermonkey" or "duktape": the names of --action-engine and of the worker's --engine.
[[nodiscard]] constexpr std::string_view to_string(action_engine e) noexcept {
  return e == action_engine::duktape ? "duktape" : "spidermonkey";
}

/// The engine named `name` (to_string's names); false for any other name.
[[nodiscard]] constexpr bool parse_action_engine(std::string_view name, action_engine& out) noexcept {
  if (name == "spidermonkey" || name == "duktape") {
    out = name == "duktape" ? action_engine::duktape : action_engine::spidermonkey;
    return true;
  }
  return false;
}

/// Appended to the logs of a run whose console output went over limits::log_bytes.
inline constexpr std::string_view kLogTruncationMarker = "\n[logs truncated]\n";

struct pool_config {
  std::string worker_path;  // empty: default_worker_path()
  action_engine engine = action_engine::spidermonkey;
  size_t size = 0;  // workers; 0: 2 × hardware threads
  limits defaults;
  std::chrono::milliseconds queue_timeout{5000};   // longest wait for an idle worker
  std::chrono::milliseconds kill_grace{1000};      // wall + this → SIGKILL (the backstop)
  std::chrono::milliseconds start_timeout{10000};  // a new worker must report ready within this
  size_t address_space_bytes = 0;                  // worker RLIMIT_AS; 0: defaults.heap_bytes + 512 MiB
  /// When set, called after each run (the server passes its debug log): the worker, the wait for
  /// an idle one, the run's time and its outcome. Never the code, the params or the output.
  std::function<void(std::string_view message, boost::json::object fields)> on_run;

  /// Every isolation layer (kIsolationLayers) is required: a worker that cannot put one in place
  /// exits after its report, and from then on the pool serves no run (runtime_errc::unconfined,
  /// naming the layers). Set this only when the operator has said so (enact-server
  /// --unsafe-allow-weak-sandbox): workers then run with whatever layers they could apply.
  bool allow_weak_isolation = false;
  /// Called when workers report missing layers (the server passes its error log, or its warning
  /// log under allow_weak_isolation): when the pool stops serving, then at most once a minute
  /// while runs are refused; with allow_weak_isolation, once at start and again whenever a layer
  /// is missing that was not before. Fields: missing (layer names), notes (why).
  std::function<void(std::string_view message, boost::json::object fields)> on_isolation;
  /// Test builds only (ENACT_SANDBOX_TEST_HOOKS): the one layer (a kIsolationLayers name) each
  /// worker leaves out on purpose. Empty: none; also read from the ENACT_TEST_SANDBOX_FAIL_LAYER
  /// environment variable of the server process. A build without the hooks refuses a non-empty
  /// value (pool::start: invalid_request).
  std::string fail_layer_for_tests;
};

enum class failure_kind { none, exception, timeout, memory, output_too_large, crashed };

/// "none", "exception", "timeout", "memory", "output_too_large", "crashed" — the
/// `details.kind` values of docs/protocol.md §0 `action_failed` (crashed maps to 500 at the route).
[[nodiscard]] constexpr std::string_view to_string(failure_kind k) noexcept {
  switch (k) {
    case failure_kind::none:
      return "none";
    case failure_kind::exception:
      return "exception";
    case failure_kind::timeout:
      return "timeout";
    case failure_kind::memory:
      return "memory";
    case failure_kind::output_too_large:
      return "output_too_large";
    case failure_kind::crashed:
      return "crashed";
  }
  return "crashed";
}

struct run_result {
  failure_kind failure = failure_kind::none;
  std::string response_json;  // what setResponse got, as JSON text; empty when never called
  std::string logs;
  bool logs_truncated = false;
  std::string message;                   // failures: `String(error)` for exceptions, else why the run stopped
  std::string stack;                     // the JavaScript stack, when the failure has one
  std::chrono::microseconds run_time{};  // from handing the code to the worker to its answer
};

/// Answers the capability calls of one run. Called on the thread that called pool::run, while
/// the action waits; the returned error's message is what the action's `catch` sees, so it must
/// not carry secrets. A thrown exception reaches the action as "internal error".
class capability_handler {
 public:
  virtual ~capability_handler() = default;
  /// `method`: one of sandbox::kCapabilities (signEcdsa, signMessage, getAddress, encrypt,
  /// decrypt, signEd25519, getPublicKey, signTypedData, signTransaction); `args`: the object the
  /// action passed.
  [[nodiscard]] virtual result<boost::json::value> call(std::string_view method, const boost::json::object& args) = 0;
  /// Called by pool::run as the run is handed to its worker, with the instant its wall time ends:
  /// a call that takes time (Enact.fetch, fetch.hpp) must answer before it.
  virtual void on_start(std::chrono::steady_clock::time_point wall_deadline) { (void)wall_deadline; }
};

/// What a worker achieved in confining itself: each step is tried and reported, and the pool
/// decides (pool_config::allow_weak_isolation) whether a worker missing one may run actions.
struct isolation_report {
  bool empty_environment = false;   // execve'd with no environment variables
  bool fds_closed = false;          // only the channel is open
  bool network_namespace = false;   // unshare(CLONE_NEWNET): no interface but a down loopback
  bool dropped_privileges = false;  // root → nobody (65534), supplementary groups cleared
  bool rlimits = false;             // AS, NOFILE, NPROC, FSIZE, CORE set
  bool no_new_privs = false;        // PR_SET_NO_NEW_PRIVS
  bool seccomp = false;             // the syscall allow-list filter is installed
  std::string notes;                // why a step was not achieved
};

/// The isolation layers by the names reports, logs and GET /info use, in the order a worker
/// applies them (the fields of isolation_report).
inline constexpr std::string_view kIsolationLayers[] = {
    "empty_environment", "fds_closed", "network_namespace", "dropped_privileges", "rlimits", "no_new_privs", "seccomp"};

/// The layers `r` lacks, in kIsolationLayers order; empty when the worker is fully confined.
[[nodiscard]] inline std::vector<std::string> missing_layers(const isolation_report& r) {
  const bool held[] = {r.empty_environment, r.fds_closed, r.network_namespace, r.dropped_privileges, r.rlimits,
                       r.no_new_privs,      r.seccomp};
  static_assert(std::size(held) == std::size(kIsolationLayers));
  std::vector<std::string> out;
  for (size_t i = 0; i < std::size(held); ++i)
    if (!held[i])
      out.emplace_back(kIsolationLayers[i]);
  return out;
}

/// Whether the pool requires every layer and whether it serves runs (GET /info "sandbox").
struct isolation_status {
  bool enforced = true;              // every layer required (no allow_weak_isolation)
  bool serving = true;               // false: a worker lacked a required layer; runs are refused
  std::vector<std::string> missing;  // layers some worker since start could not put in place
  std::string notes;                 // why, as the most recent such worker reported it
};

/// The worker binary that belongs to this build: next to the running executable, else the
/// installed libexec/enact/enact-worker, else the one in the build tree.
[[nodiscard]] std::string default_worker_path();

class pool {
 public:
  /// Starts `config.size` workers and waits until each reports ready.
  [[nodiscard]] static result<std::unique_ptr<pool>> start(pool_config config);
  /// Kills and reaps every worker. Call only after all run() calls have returned.
  ~pool();
  pool(const pool&) = delete;
  pool& operator=(const pool&) = delete;

  /// Runs `code` with `params_json` (empty: `{}`) under `override` or the pool's default limits.
  /// Thread-safe; takes one idle worker and blocks up to queue_timeout for one
  /// (runtime_errc::pool_saturated). Action failures are a run_result with `failure` set; the
  /// error channel is for the pool's own trouble.
  [[nodiscard]] result<run_result> run(std::string_view code, std::string_view params_json, capability_handler& caps,
                                       const limits* override = nullptr);

  [[nodiscard]] size_t size() const;
  /// Workers retired (crashed, killed, or misbehaving) and sent for replacement since start.
  [[nodiscard]] size_t restarts() const;
  /// Process ids of the running workers, for monitoring and tests.
  [[nodiscard]] std::vector<int> worker_pids() const;
  /// What the most recently started worker reported about its confinement.
  [[nodiscard]] isolation_report isolation() const;
  /// Whether isolation is enforced, runs are served, and which layers were missing.
  [[nodiscard]] isolation_status isolation_state() const;

  class impl;

 private:
  explicit pool(std::unique_ptr<impl> p);
  std::unique_ptr<impl> impl_;
};

}  // namespace enact::runtime
