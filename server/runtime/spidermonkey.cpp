// SPDX-License-Identifier: Apache-2.0
// One action in one fresh SpiderMonkey realm (see spidermonkey.hpp). Natives report errors the
// JSAPI way: they set a pending exception and return false; none throws a C++ exception.
#include "runtime/spidermonkey.hpp"

#include <malloc.h>

#include <js/Array.h>
#include <js/ArrayBuffer.h>
#include <js/CompilationAndEvaluation.h>
#include <js/Conversions.h>
#include <js/Initialization.h>
#include <js/JSON.h>
#include <js/MemoryCallbacks.h>
#include <js/Object.h>
#include <js/Promise.h>
#include <js/PropertyAndElement.h>
#include <js/SourceText.h>
#include <js/Stack.h>
#include <js/String.h>
#include <js/experimental/TypedData.h>
#include <jsapi.h>
#include <jsfriendapi.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>

#include "runtime/channel.hpp"
#include "runtime/run_text.hpp"
#include "runtime/spidermonkey_realm.hpp"
#include "runtime/utf8.hpp"

namespace enact::runtime::spidermonkey {

using sandbox::outcome;

struct realm_state {
  JS::PersistentRootedObject global;
  bool ready = false;  // the globals are installed
};

namespace {

using clock = std::chrono::steady_clock;
using detail::run_state;

const JSClass kGlobalClass = {"global", JSCLASS_GLOBAL_FLAGS, &JS::DefaultGlobalClassOps, nullptr, nullptr, nullptr};

// Native stack the engine may use for the action's recursion (JSON, natives, the parser): far
// below the 8 MiB main thread stack, so "too much recursion" is an error, never a crash.
constexpr size_t kStackQuota = 1u << 20;
// A full collection between runs once the garbage-collected heap grew this much since the last.
constexpr size_t kCollectAfterBytes = 16u << 20;
// How often the watchdog compares the run's malloc bytes with its heap limit.
constexpr auto kMemoryPoll = std::chrono::milliseconds(2);

// Promise jobs of the run, run by us (never by the engine on its own), and dropped when the run
// ends: nothing a run queued survives into the next one.
class job_queue final : public JS::JobQueue {
 public:
  JSObject* getIncumbentGlobal(JSContext* cx) override { return JS::CurrentGlobalOrNull(cx); }
  bool enqueuePromiseJob(JSContext* cx, JS::HandleObject, JS::HandleObject job, JS::HandleObject,
                         JS::HandleObject) override {
    jobs_.push_back(std::make_unique<JS::PersistentRootedObject>(cx, job));
    return true;
  }
  void runJobs(JSContext* cx) override { (void)drain(cx); }
  [[nodiscard]] bool empty() const override { return jobs_.empty(); }

  /// Runs jobs until none is left; false as soon as one fails (an exception is pending, or the
  /// run was stopped by the interrupt callback).
  bool drain(JSContext* cx) {
    JS::RootedObject job(cx);
    JS::RootedValue ignored(cx);
    while (!jobs_.empty()) {
      job = *jobs_.front();
      jobs_.pop_front();
      JSAutoRealm in(cx, job);
      if (!JS::Call(cx, JS::UndefinedHandleValue, job, JS::HandleValueArray::empty(), &ignored))
        return false;
    }
    return true;
  }
  void clear() { jobs_.clear(); }

 private:
  using jobs = std::deque<std::unique_ptr<JS::PersistentRootedObject>>;
  // Only the Debugger API saves a queue; no action can reach it, but the contract is kept.
  class saved final : public SavedJobQueue {
   public:
    saved(job_queue& q) : queue_(q), jobs_(std::move(q.jobs_)) { q.jobs_.clear(); }
    ~saved() override { queue_.jobs_ = std::move(jobs_); }

   private:
    job_queue& queue_;
    jobs jobs_;
  };
  js::UniquePtr<SavedJobQueue> saveJobQueue(JSContext*) override { return js::MakeUnique<saved>(*this); }
  jobs jobs_;
};

// The process-wide engine: one context on the main thread, and the watchdog that interrupts it.
struct engine_state {
  JSContext* cx = nullptr;
  job_queue jobs;
  run_state* current = nullptr;
  size_t gc_bytes_after_collect = 0;

  std::mutex mu;
  std::condition_variable wake;
  bool watching = false;  // the watchdog thread is running
  bool armed = false;     // a run is in progress: watch its deadline and memory
  clock::time_point deadline;
  size_t malloc_ceiling = 0;  // malloc bytes in use beyond which the run is over its heap limit
  std::atomic<bool> timed_out{false};
  std::atomic<bool> memory_exceeded{false};
  std::atomic<bool> halted{false};  // the run is over: refuse to execute anything more
};

engine_state* g_engine = nullptr;

size_t malloc_in_use() {
  const struct mallinfo2 m = ::mallinfo2();
  return m.uordblks + m.hblkhd;
}

void watch() {
  engine_state& e = *g_engine;
  std::unique_lock lock(e.mu);
  e.watching = true;
  e.wake.notify_all();
  for (;;) {
    if (!e.armed) {
      e.wake.wait(lock);
      continue;
    }
    const clock::time_point now = clock::now();
    if (now >= e.deadline) {
      e.timed_out = true;
    } else if (malloc_in_use() > e.malloc_ceiling) {
      e.memory_exceeded = true;
    } else {
      e.wake.wait_until(lock, std::min(e.deadline, now + kMemoryPoll));
      continue;
    }
    e.armed = false;
    JS_RequestInterruptCallback(e.cx);
  }
}

// false stops the script with an uncatchable termination: no catch or finally runs.
bool on_interrupt(JSContext*) {
  const engine_state& e = *g_engine;
  return !(e.timed_out || e.memory_exceeded || e.halted);
}

void on_out_of_memory(JSContext*, void*) {
  if (g_engine->current != nullptr)
    g_engine->current->out_of_memory = true;
}

}  // namespace

namespace detail {

run_state* current(JSContext* cx) {
  run_state* s = g_engine->current;
  if (s == nullptr || g_engine->halted) {
    JS_ReportErrorASCII(cx, "the run is over");
    return nullptr;
  }
  return s;
}

}  // namespace detail

namespace {

using namespace detail;

// --- one run ---------------------------------------------------------------------------------

// The action as the body of an async function on the first line, so lines keep their numbers.
std::string wrapped(std::string_view code) {
  constexpr std::string_view head = "(async function () {";
  constexpr std::string_view tail = "\n})()";
  std::string out;
  out.reserve(head.size() + code.size() + tail.size());
  out.append(head).append(code).append(tail);
  return out;
}

// The stack without the frame of the wrapper's own call, `})()` on the line after the code: it
// is not the action's.
std::string without_wrapper_frame(std::string stack, std::string_view code) {
  const auto lines = static_cast<size_t>(std::count(code.begin(), code.end(), '\n'));
  const std::string frame = "@" + std::string(sandbox::kFilename) + ":" + std::to_string(lines + 2) + ":3";
  for (const std::string_view prefix : {"", "async*"}) {
    const std::string line = std::string(prefix) + frame;
    if (stack == line)
      return {};
    if (stack.ends_with("\n" + line))
      stack.resize(stack.size() - line.size() - 1);
  }
  return stack;
}

// String(error) and error.stack of a thrown or rejected value.
void describe(JSContext* cx, JS::HandleValue thrown, std::string_view code, outcome& o) {
  std::string text;
  if (thrown.isObject()) {
    JS::RootedObject obj(cx, &thrown.toObject());
    JS::RootedValue stack(cx);
    if (JS_GetProperty(cx, obj, "stack", &stack) && stack.isString()) {
      JS::RootedString str(cx, stack.toString());
      if (utf8_of(cx, str, text)) {
        while (!text.empty() && text.back() == '\n')
          text.pop_back();
        o.stack = sandbox::text::cut(without_wrapper_frame(std::move(text), code), sandbox::kMaxStackBytes);
      }
    }
    JS_ClearPendingException(cx);
  }
  JS::RootedString str(cx, thrown.isSymbol() ? JS_ValueToSource(cx, thrown) : JS::ToString(cx, thrown));
  if (str != nullptr && utf8_of(cx, str, text)) {
    o.message = sandbox::text::cut(std::move(text), sandbox::kMaxMessageBytes);
  } else {
    o.message = "uncaught error";
  }
  JS_ClearPendingException(cx);
}

enum class ending { fulfilled, thrown, stopped };

// What a failed step left: the pending exception, or nothing when the interrupt callback (or
// an uncatchable error) stopped the script.
ending failed(JSContext* cx, JS::MutableHandleValue thrown) {
  const bool pending = JS_IsExceptionPending(cx) && JS_GetPendingException(cx, thrown);
  JS_ClearPendingException(cx);
  return pending ? ending::thrown : ending::stopped;
}

// Evaluates the wrapped code and drains the jobs; the async function's promise decides the
// ending, and `thrown` holds what it was rejected with.
ending evaluate(JSContext* cx, run_state& s, JS::MutableHandleValue thrown) {
  const std::string source = wrapped(s.req->code);
  JS::CompileOptions options(cx);
  options.setFileAndLine(sandbox::kFilename.data(), 1);
  JS::SourceText<mozilla::Utf8Unit> text;
  JS::RootedValue result(cx);
  const bool ok = text.init(cx, source.data(), source.size(), JS::SourceOwnership::Borrowed) &&
                  JS::Evaluate(cx, options, text, &result) && g_engine->jobs.drain(cx);
  if (!ok)
    return failed(cx, thrown);
  JS::RootedObject promise(cx, result.isObject() ? &result.toObject() : nullptr);
  if (promise == nullptr || !JS::IsPromiseObject(promise))
    return ending::fulfilled;  // not reached: an async function returns a promise
  switch (JS::GetPromiseState(promise)) {
    case JS::PromiseState::Fulfilled:
      return ending::fulfilled;
    case JS::PromiseState::Rejected:
      thrown.set(JS::GetPromiseResult(promise));
      return ending::thrown;
    case JS::PromiseState::Pending:
      break;
  }
  // Nothing outside the run can settle it: no timers, and every Enact call answers at once.
  (void)throw_error(cx, JSProto_Error, "the action awaited a promise that can never settle");
  return failed(cx, thrown);
}

void arm(const sandbox::request& req) {
  engine_state& e = *g_engine;
  const std::lock_guard lock(e.mu);
  e.timed_out = false;
  e.memory_exceeded = false;
  e.halted = false;
  e.deadline = clock::now() + req.lim.wall;
  e.malloc_ceiling = malloc_in_use() + req.lim.heap_bytes;
  e.armed = true;
  e.wake.notify_one();
}

void disarm() {
  engine_state& e = *g_engine;
  const std::lock_guard lock(e.mu);
  e.armed = false;
  e.halted = true;
}

}  // namespace

bool start(std::string& why) {
  // Date in UTC whatever the host says (ICU and the C library both read TZ).
  ::setenv("TZ", "UTC", 1);
  JS::DisableJitBackend();
  if (!JS_Init()) {
    why = "JS_Init failed";
    return false;
  }
  g_engine = new engine_state;  // lives as long as the process
  JSContext* cx = JS_NewContext(JS::DefaultHeapMaxBytes);
  if (cx == nullptr) {
    why = "JS_NewContext failed";
    return false;
  }
  g_engine->cx = cx;
  JS_SetNativeStackQuota(cx, kStackQuota);
  JS::SetJobQueue(cx, &g_engine->jobs);
  if (!JS::InitSelfHostedCode(cx)) {
    why = "JS::InitSelfHostedCode failed";
    return false;
  }
  if (!JS_AddInterruptCallback(cx, on_interrupt)) {
    why = "JS_AddInterruptCallback failed";
    return false;
  }
  JS::SetOutOfMemoryCallback(cx, on_out_of_memory, nullptr);
  // Running before start() returns, so the thread needs no system call after the filter.
  std::thread(watch).detach();
  std::unique_lock lock(g_engine->mu);
  g_engine->wake.wait(lock, [] { return g_engine->watching; });
  return true;
}

fresh_realm::fresh_realm() : state_(std::make_unique<realm_state>()) {
  JSContext* cx = g_engine->cx;
  JS::RealmOptions options;
  state_->global.init(cx, JS_NewGlobalObject(cx, &kGlobalClass, nullptr, JS::FireOnNewGlobalHook, options));
  if (state_->global == nullptr) {
    JS_ClearPendingException(cx);
    return;
  }
  JSAutoRealm in(cx, state_->global);
  state_->ready = install_globals(cx, state_->global);
  JS_ClearPendingException(cx);
}

fresh_realm::~fresh_realm() = default;
fresh_realm::fresh_realm(fresh_realm&&) noexcept = default;
fresh_realm& fresh_realm::operator=(fresh_realm&&) noexcept = default;

outcome run(fresh_realm realm, const sandbox::request& req, const sandbox::call_parent& parent) {
  engine_state& e = *g_engine;
  JSContext* cx = e.cx;
  run_state s;
  s.req = &req;
  s.parent = &parent;
  if (realm.state_ == nullptr || !realm.state_->ready) {
    s.out.failure = failure_kind::memory;
    s.out.message = "no SpiderMonkey realm could be created";
    return std::move(s.out);
  }
  ending end = ending::stopped;
  {
    JSAutoRealm in(cx, realm.state_->global);
    JS::RootedValue params(cx);
    JS::RootedValue thrown(cx);
    e.current = &s;
    JS_SetGCParameter(
        cx, JSGC_MAX_BYTES,
        static_cast<uint32_t>(std::min<size_t>(JS_GetGCParameter(cx, JSGC_BYTES) + req.lim.heap_bytes, UINT32_MAX)));
    arm(req);
    const std::string_view params_json = req.params_json.empty() ? std::string_view("{}") : req.params_json;
    end = parse_json(cx, params_json, &params) &&
                  JS_DefineProperty(cx, realm.state_->global, "params", params, JSPROP_ENUMERATE)
              ? evaluate(cx, s, &thrown)
              : failed(cx, &thrown);
    if (end != ending::fulfilled)
      s.out.failure = failure_kind::exception;
    if (end == ending::thrown)
      describe(cx, thrown, req.code, s.out);
    else if (end == ending::stopped)
      s.out.message = "the action was stopped by the engine";
    disarm();
    e.jobs.clear();
    e.current = nullptr;
  }
  sandbox::text::settle(s.out, req.lim, e.timed_out, s.output_exceeded,
                        end != ending::fulfilled && (e.memory_exceeded || s.out_of_memory));
  JS_SetGCParameter(cx, JSGC_MAX_BYTES, UINT32_MAX);
  return std::move(s.out);
}

void collect_garbage() {
  JSContext* cx = g_engine->cx;
  const size_t bytes = JS_GetGCParameter(cx, JSGC_BYTES);
  if (bytes > g_engine->gc_bytes_after_collect + kCollectAfterBytes) {
    JS_GC(cx);
    g_engine->gc_bytes_after_collect = JS_GetGCParameter(cx, JSGC_BYTES);
  } else {
    JS_MaybeGC(cx);
  }
}

}  // namespace enact::runtime::spidermonkey
