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
#include "runtime/utf8.hpp"

namespace enact::runtime::spidermonkey {

using sandbox::outcome;

struct realm_state {
  JS::PersistentRootedObject global;
  bool ready = false;  // the globals are installed
};

namespace {

using clock = std::chrono::steady_clock;

const JSClass kGlobalClass = {"global", JSCLASS_GLOBAL_FLAGS, &JS::DefaultGlobalClassOps, nullptr, nullptr, nullptr};

// Native stack the engine may use for the action's recursion (JSON, natives, the parser): far
// below the 8 MiB main thread stack, so "too much recursion" is an error, never a crash.
constexpr size_t kStackQuota = 1u << 20;
// A full collection between runs once the garbage-collected heap grew this much since the last.
constexpr size_t kCollectAfterBytes = 16u << 20;
// How often the watchdog compares the run's malloc bytes with its heap limit.
constexpr auto kMemoryPoll = std::chrono::milliseconds(2);

// The run in progress (on the worker's main thread).
struct run_state {
  const sandbox::request* req = nullptr;
  const sandbox::call_parent* parent = nullptr;
  outcome out;
  bool output_exceeded = false;
  bool out_of_memory = false;  // the engine reported OOM (GC heap limit, malloc, RLIMIT_AS)
};

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

// --- values and text -------------------------------------------------------------------------

// UTF-16 as UTF-8; a lone surrogate becomes U+FFFD.
void append_utf16(std::string& out, std::u16string_view in) {
  for (size_t i = 0; i < in.size(); ++i) {
    uint32_t c = in[i];
    if (c >= 0xD800 && c <= 0xDBFF && i + 1 < in.size() && in[i + 1] >= 0xDC00 && in[i + 1] <= 0xDFFF) {
      c = 0x10000 + ((c - 0xD800) << 10) + (in[i + 1] - 0xDC00);
      ++i;
    } else if (c >= 0xD800 && c <= 0xDFFF) {
      c = 0xFFFD;
    }
    utf8::append(out, c);
  }
}

// The string as UTF-8 (lone surrogates as U+FFFD); false when the engine failed (OOM).
bool utf8_of(JSContext* cx, JS::HandleString str, std::string& out) {
  JSLinearString* linear = JS_EnsureLinearString(cx, str);
  if (linear == nullptr)
    return false;
  out.resize(JS::GetDeflatedUTF8StringLength(linear));
  out.resize(JS::DeflateStringToUTF8Buffer(linear, mozilla::Span<char>(out.data(), out.size())));
  return true;
}

bool json_chunk(const char16_t* buf, uint32_t len, void* data) {
  append_utf16(*static_cast<std::string*>(data), std::u16string_view(buf, len));
  return true;
}

// Well-formed JSON.stringify writes a lone surrogate as a \uD8xx escape, which strict JSON
// parsers (the server's among them) refuse; it becomes U+FFFD, as Duktape's output has it.
std::string without_lone_surrogates(std::string json) {
  std::string out;
  for (size_t i = 0; i < json.size(); ++i) {
    if (json[i] != '\\' || i + 1 >= json.size()) {
      out += json[i];
      continue;
    }
    const bool surrogate = json[i + 1] == 'u' && i + 5 < json.size() && (json[i + 2] == 'd' || json[i + 2] == 'D') &&
                           std::string_view("89abcdefABCDEF").find(json[i + 3]) != std::string_view::npos;
    if (surrogate) {
      out += "\xEF\xBF\xBD";
      i += 5;
    } else {
      out.append(json, i, 2);  // any other escape, kept whole so its second character is not read
      ++i;
    }
  }
  return out;
}

// JSON.stringify(value) as UTF-8; `defined` false when JSON has nothing for it (undefined, a
// function). False with an exception pending when stringify threw (a cycle, a BigInt).
bool stringify(JSContext* cx, JS::HandleValue value, std::string& out, bool& defined) {
  out.clear();
  JS::RootedValue v(cx, value);
  if (!JS_Stringify(cx, &v, nullptr, JS::NullHandleValue, json_chunk, &out))
    return false;
  defined = !out.empty();
  if (out.find("\\u") != std::string::npos)
    out = without_lone_surrogates(std::move(out));
  return true;
}

bool parse_json(JSContext* cx, std::string_view text, JS::MutableHandleValue out) {
  JS::RootedString s(cx, JS_NewStringCopyUTF8N(cx, JS::UTF8Chars(text.data(), text.size())));
  return s != nullptr && JS_ParseJSON(cx, s, out);
}

// Throws `new <kind>(message)` built from the realm's original constructor.
bool throw_error(JSContext* cx, JSProtoKey kind, const std::string& message) {
  JS::RootedObject ctor(cx);
  JS::RootedString text(cx, JS_NewStringCopyUTF8N(cx, JS::UTF8Chars(message.data(), message.size())));
  if (text == nullptr || !JS_GetClassObject(cx, kind, &ctor))
    return false;
  JS::RootedValueArray<1> args(cx);
  args[0].setString(text);
  JS::RootedValue constructor(cx, JS::ObjectValue(*ctor));
  JS::RootedObject error(cx);
  if (!JS::Construct(cx, constructor, args, &error))
    return false;
  JS::RootedValue thrown(cx, JS::ObjectValue(*error));
  JS_SetPendingException(cx, thrown);
  return false;
}

bool is_kind(JSContext* cx, JS::HandleObject obj, js::ESClass kind) {
  js::ESClass cls = js::ESClass::Other;
  return JS::GetBuiltinClass(cx, obj, &cls) && cls == kind;
}

bool is_buffer(JSObject* obj) { return JS_IsArrayBufferViewObject(obj) || JS::IsArrayBufferObject(obj); }

run_state* current(JSContext* cx) {
  run_state* s = g_engine->current;
  if (s == nullptr || g_engine->halted) {
    JS_ReportErrorASCII(cx, "the run is over");
    return nullptr;
  }
  return s;
}

// --- console ---------------------------------------------------------------------------------

// Strings as they are, plain objects and arrays as JSON, everything else through String().
void append_value(JSContext* cx, JS::HandleValue v, std::string& line) {
  std::string piece;
  if (v.isObject()) {
    JS::RootedObject obj(cx, &v.toObject());
    bool defined = false;
    if (!JS::IsCallable(obj) && !is_kind(cx, obj, js::ESClass::Error) && stringify(cx, v, piece, defined) && defined) {
      line += piece;
      return;
    }
    JS_ClearPendingException(cx);
  }
  JS::RootedString str(cx, v.isSymbol() ? JS_ValueToSource(cx, v) : JS::ToString(cx, v));
  if (str != nullptr && utf8_of(cx, str, piece)) {
    line += piece;
  } else {
    JS_ClearPendingException(cx);
    line += "[unprintable]";
  }
}

bool console_log(JSContext* cx, unsigned argc, JS::Value* vp) {
  const JS::CallArgs args = JS::CallArgsFromVp(argc, vp);
  run_state* s = current(cx);
  if (s == nullptr)
    return false;
  args.rval().setUndefined();
  if (s->out.logs_truncated)
    return true;
  std::string line;
  for (unsigned i = 0; i < args.length() && line.size() <= s->req->lim.log_bytes; ++i) {
    if (i > 0)
      line += ' ';
    append_value(cx, args[i], line);
  }
  sandbox::text::append_log(s->out, s->req->lim.log_bytes, line);
  return true;
}

// --- Enact -----------------------------------------------------------------------------------

bool set_response(JSContext* cx, unsigned argc, JS::Value* vp) {
  const JS::CallArgs args = JS::CallArgsFromVp(argc, vp);
  run_state* s = current(cx);
  if (s == nullptr)
    return false;
  std::string json;
  bool defined = false;
  if (!stringify(cx, args.get(0), json, defined))
    return false;
  if (!defined)
    json = "null";  // values JSON cannot express (undefined, functions)
  if (json.size() > s->req->lim.output_bytes) {
    s->output_exceeded = true;
    return throw_error(cx, JSProto_RangeError,
                       sandbox::text::response_too_large(json.size(), s->req->lim.output_bytes));
  }
  s->out.response_json = std::move(json);
  s->out.has_response = true;
  args.rval().setUndefined();
  return true;
}

// A string starting with 0x is hex bytes, any other string its UTF-8 bytes; buffers as they are.
bool input_bytes(JSContext* cx, JS::HandleValue v, const char* what, bytes& out) {
  if (v.isString()) {
    JS::RootedString str(cx, v.toString());
    std::string text;
    std::string error;
    if (!utf8_of(cx, str, text))
      return false;
    return sandbox::text::string_bytes(text, what, out, error) || throw_error(cx, JSProto_TypeError, error);
  }
  if (v.isObject() && is_buffer(&v.toObject())) {
    JSObject* obj = &v.toObject();
    const JS::AutoCheckCannotGC nogc;
    bool shared = false;
    const bool view = JS_IsArrayBufferViewObject(obj);
    const auto* p = static_cast<const uint8_t*>(view ? JS_GetArrayBufferViewData(obj, &shared, nogc)
                                                     : JS::GetArrayBufferData(obj, &shared, nogc));
    const size_t n = view ? JS_GetArrayBufferViewByteLength(obj) : JS::GetArrayBufferByteLength(obj);
    out = p == nullptr ? bytes() : bytes(p, p + n);
    return true;
  }
  return throw_error(cx, JSProto_TypeError, sandbox::text::expected_bytes(what));
}

template <bool Keccak>
bool hash(JSContext* cx, unsigned argc, JS::Value* vp) {
  const JS::CallArgs args = JS::CallArgsFromVp(argc, vp);
  if (current(cx) == nullptr)
    return false;
  bytes in;
  if (!input_bytes(cx, args.get(0), Keccak ? "Enact.keccak256" : "Enact.sha256", in))
    return false;
  const std::string digest = sandbox::text::digest_hex(Keccak, in);
  JSString* str = JS_NewStringCopyN(cx, digest.data(), digest.size());
  if (str == nullptr)
    return false;
  args.rval().setString(str);
  return true;
}

bool capability(JSContext* cx, unsigned argc, JS::Value* vp) {
  const JS::CallArgs args = JS::CallArgsFromVp(argc, vp);
  run_state* s = current(cx);
  if (s == nullptr)
    return false;
  const std::string_view method = sandbox::kCapabilities[js::GetFunctionNativeReserved(&args.callee(), 0).toInt32()];
  const JS::HandleValue arg = args.get(0);
  bool array = false;
  if (arg.isObject()) {
    JS::RootedObject obj(cx, &arg.toObject());
    if (!JS::IsArrayObject(cx, obj, &array))
      return false;
    array = array || JS::IsCallable(obj) || is_buffer(obj);
  }
  if (!arg.isObject() || array)
    return throw_error(cx, JSProto_TypeError, sandbox::text::expected_object(method));
  std::string json;
  bool defined = false;
  if (!stringify(cx, arg, json, defined))
    return false;
  if (json.size() > channel::kMaxCallArgsBytes)
    return throw_error(cx, JSProto_RangeError, sandbox::text::args_too_large(method));
  const sandbox::call_answer answer = (*s->parent)(method, json);
  if (!answer.ok)
    return throw_error(cx, JSProto_Error, answer.payload);
  return parse_json(cx, answer.payload, args.rval());
}

// --- Enact.fetch -----------------------------------------------------------------------------
// Made by the parent (fetch.hpp). As fetch() does, Enact.fetch answers with a promise, and so do
// the response's text() and json(); every refusal is a rejection the action's try/catch around
// `await` sees.

// A native step's outcome as a promise: its value resolved, or the exception it raised rejected.
// False (no promise) only when the engine stopped the run, which nothing may catch.
bool settle_promise(JSContext* cx, bool ok, JS::MutableHandleValue v) {
  if (!ok) {
    if (!JS_IsExceptionPending(cx) || !JS_GetPendingException(cx, v))
      return false;
    JS_ClearPendingException(cx);
  }
  JSObject* promise = ok ? JS::CallOriginalPromiseResolve(cx, v) : JS::CallOriginalPromiseReject(cx, v);
  if (promise == nullptr)
    return false;
  v.setObject(*promise);
  return true;
}

// text() and json(): reserved slot 0 holds the body, slot 1 whether to parse it.
bool fetch_body(JSContext* cx, unsigned argc, JS::Value* vp) {
  const JS::CallArgs args = JS::CallArgsFromVp(argc, vp);
  if (current(cx) == nullptr)
    return false;
  JS::RootedValue body(cx, js::GetFunctionNativeReserved(&args.callee(), 0));
  bool ok = true;
  if (js::GetFunctionNativeReserved(&args.callee(), 1).toBoolean()) {
    JS::RootedString text(cx, body.toString());
    ok = JS_ParseJSON(cx, text, &body);
  }
  if (!settle_promise(cx, ok, &body))
    return false;
  args.rval().set(body);
  return true;
}

// Checks what the worker can, hands {url, init} to the parent, and builds the response.
bool fetch_response(JSContext* cx, const JS::CallArgs& args, run_state& s, JS::MutableHandleValue out) {
  if (!args.get(0).isString())
    return throw_error(cx, JSProto_TypeError, std::string(sandbox::kFetchUrlExpected));
  const JS::HandleValue init = args.get(1);
  bool array = false;
  if (init.isObject()) {
    JS::RootedObject obj(cx, &init.toObject());
    if (!JS::IsArrayObject(cx, obj, &array))
      return false;
    array = array || JS::IsCallable(obj) || is_buffer(obj);
  }
  if (!init.isNullOrUndefined() && (!init.isObject() || array))
    return throw_error(cx, JSProto_TypeError, std::string(sandbox::kFetchInitExpected));
  JS::RootedObject request(cx, JS_NewPlainObject(cx));
  if (request == nullptr || !JS_DefineProperty(cx, request, "url", args.get(0), JSPROP_ENUMERATE) ||
      (init.isObject() && !JS_DefineProperty(cx, request, "init", init, JSPROP_ENUMERATE))) {
    return false;
  }
  JS::RootedValue request_value(cx, JS::ObjectValue(*request));
  std::string json;
  bool defined = false;
  if (!stringify(cx, request_value, json, defined))
    return false;
  if (json.size() > channel::kMaxCallArgsBytes)
    return throw_error(cx, JSProto_RangeError, sandbox::text::args_too_large(sandbox::kFetchMethod));
  const sandbox::call_answer answer = (*s.parent)(sandbox::kFetchMethod, json);
  if (!answer.ok)
    return throw_error(cx, JSProto_Error, answer.payload);
  if (!parse_json(cx, answer.payload, out))
    return false;
  if (!out.isObject())
    return throw_error(cx, JSProto_Error, "fetch: malformed answer");
  JS::RootedObject response(cx, &out.toObject());
  JS::RootedValue body(cx);
  if (!JS_GetProperty(cx, response, "body", &body) || !JS_DeleteProperty(cx, response, "body"))
    return false;
  if (!body.isString())
    body.setString(JS_GetEmptyString(cx));
  for (const bool parse : {false, true}) {
    JSFunction* fn =
        js::DefineFunctionWithReserved(cx, response, parse ? "json" : "text", fetch_body, 0, JSPROP_ENUMERATE);
    if (fn == nullptr)
      return false;
    js::SetFunctionNativeReserved(JS_GetFunctionObject(fn), 0, body);
    js::SetFunctionNativeReserved(JS_GetFunctionObject(fn), 1, JS::BooleanValue(parse));
  }
  return true;
}

bool enact_fetch(JSContext* cx, unsigned argc, JS::Value* vp) {
  const JS::CallArgs args = JS::CallArgsFromVp(argc, vp);
  run_state* s = current(cx);
  if (s == nullptr)
    return false;
  JS::RootedValue response(cx);
  if (!settle_promise(cx, fetch_response(cx, args, *s, &response), &response))
    return false;
  args.rval().set(response);
  return true;
}

bool define_function(JSContext* cx, JS::HandleObject on, const char* name, JSNative fn, unsigned nargs) {
  return JS_DefineFunction(cx, on, name, fn, nargs, JSPROP_ENUMERATE) != nullptr;
}

bool install_globals(JSContext* cx, JS::HandleObject global) {
  JS::RootedObject enact(cx, JS_NewPlainObject(cx));
  if (enact == nullptr || !define_function(cx, enact, "setResponse", set_response, 1) ||
      !define_function(cx, enact, "sha256", hash<false>, 1) ||
      !define_function(cx, enact, "keccak256", hash<true>, 1)) {
    return false;
  }
  for (int i = 0; i < static_cast<int>(std::size(sandbox::kCapabilities)); ++i) {
    const std::string name(sandbox::kCapabilities[i]);
    JSFunction* fn = js::DefineFunctionWithReserved(cx, enact, name.c_str(), capability, 1, JSPROP_ENUMERATE);
    if (fn == nullptr)
      return false;
    js::SetFunctionNativeReserved(JS_GetFunctionObject(fn), 0, JS::Int32Value(i));
  }
  if (!define_function(cx, enact, "fetch", enact_fetch, 2))
    return false;
  JS::RootedObject console(cx, JS_NewPlainObject(cx));
  if (console == nullptr)
    return false;
  for (const char* name : {"log", "info", "warn", "error"}) {
    if (!define_function(cx, console, name, console_log, 0))
      return false;
  }
  return JS_FreezeObject(cx, enact) && JS_FreezeObject(cx, console) &&
         JS_DefineProperty(cx, global, "Enact", enact, JSPROP_ENUMERATE) &&
         JS_DefineProperty(cx, global, "console", console, JSPROP_ENUMERATE);
}

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
