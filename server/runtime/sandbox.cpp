// SPDX-License-Identifier: Apache-2.0
// One action in one heap (see sandbox.hpp). Duktape is built with DUK_USE_CPP_EXCEPTIONS, so a
// Duktape error raised inside the natives below unwinds them like any C++ exception and their
// std::string locals are destroyed; no native catches with `catch (...)`, which would swallow
// Duktape's own unwinding.
#include "runtime/sandbox.hpp"

#include <cstdlib>
#include <string>
#include <utility>

#include "duktape.h"
#include "runtime/channel.hpp"
#include "runtime/engine.hpp"
#include "runtime/run_text.hpp"
#include "runtime/utf8.hpp"

namespace enact::runtime::sandbox {

struct run_state {
  const request* req = nullptr;  // null until the run starts: natives refuse before that
  const call_parent* parent = nullptr;
  fatal_sink on_fatal = nullptr;
  engine::heap_guard guard;
  duk_context* ctx = nullptr;
  bool ready = false;  // the globals are installed
  outcome out;
  bool output_exceeded = false;
  bool finished = false;  // the outcome is fixed; natives refuse to act (finalizers at teardown)
};

namespace {

// The run in progress on this thread (natives have no other way to reach it cheaply).
thread_local run_state* t_current = nullptr;

run_state& current(duk_context* ctx) {
  if (t_current == nullptr || t_current->req == nullptr || t_current->finished) {
    (void)duk_error(ctx, DUK_ERR_ERROR, "the run is over");
  }
  return *t_current;
}

/// The string at `idx` as UTF-8 (it must be a string).
std::string text_at(duk_context* ctx, duk_idx_t idx) {
  duk_size_t n = 0;
  const char* p = duk_get_lstring(ctx, idx, &n);
  return p == nullptr ? std::string() : utf8::from_duktape(std::string_view(p, n));
}

[[noreturn]] void throw_error(duk_context* ctx, duk_errcode_t code, const std::string& message) {
  (void)duk_error(ctx, code, "%s", message.c_str());
  std::abort();  // unreachable: duk_error throws
}

// --- console ---------------------------------------------------------------------------------

duk_ret_t encode_json(duk_context* ctx, void*) {
  duk_json_encode(ctx, -1);
  return 1;
}

// Strings as they are, plain objects and arrays as JSON, everything else through String().
void append_value(duk_context* ctx, duk_idx_t idx, std::string& line) {
  if (duk_is_string(ctx, idx)) {
    line += text_at(ctx, idx);
    return;
  }
  if (duk_is_object(ctx, idx) && !duk_is_function(ctx, idx) && !duk_is_error(ctx, idx)) {
    duk_dup(ctx, idx);
    const bool ok = duk_safe_call(ctx, encode_json, nullptr, 1, 1) == DUK_EXEC_SUCCESS && duk_is_string(ctx, -1);
    if (ok)
      line += text_at(ctx, -1);
    duk_pop(ctx);
    if (ok)
      return;
  }
  duk_dup(ctx, idx);
  duk_safe_to_string(ctx, -1);
  line += text_at(ctx, -1);
  duk_pop(ctx);
}

duk_ret_t console_log(duk_context* ctx) {
  run_state& s = current(ctx);
  if (s.out.logs_truncated)
    return 0;
  const duk_idx_t n = duk_get_top(ctx);
  std::string line;
  for (duk_idx_t i = 0; i < n && line.size() <= s.req->lim.log_bytes; ++i) {
    if (i > 0)
      line += ' ';
    append_value(ctx, i, line);
  }
  text::append_log(s.out, s.req->lim.log_bytes, line);
  return 0;
}

// --- Enact -----------------------------------------------------------------------------------

duk_ret_t set_response(duk_context* ctx) {
  run_state& s = current(ctx);
  duk_set_top(ctx, 1);
  duk_json_encode(ctx, 0);
  // Values JSON cannot express (undefined, functions) become null.
  std::string json = duk_is_string(ctx, 0) ? text_at(ctx, 0) : std::string("null");
  if (json.size() > s.req->lim.output_bytes) {
    s.output_exceeded = true;
    throw_error(ctx, DUK_ERR_RANGE_ERROR, text::response_too_large(json.size(), s.req->lim.output_bytes));
  }
  s.out.response_json = std::move(json);
  s.out.has_response = true;
  return 0;
}

// A string starting with 0x is hex bytes, any other string its UTF-8 bytes; buffers as they are.
bytes input_bytes(duk_context* ctx, const char* what) {
  if (duk_is_string(ctx, 0)) {
    bytes out;
    std::string error;
    if (!text::string_bytes(text_at(ctx, 0), what, out, error))
      throw_error(ctx, DUK_ERR_TYPE_ERROR, error);
    return out;
  }
  if (duk_is_buffer_data(ctx, 0)) {
    duk_size_t n = 0;
    const auto* p = static_cast<const uint8_t*>(duk_get_buffer_data(ctx, 0, &n));
    return p == nullptr ? bytes() : bytes(p, p + n);
  }
  throw_error(ctx, DUK_ERR_TYPE_ERROR, text::expected_bytes(what));
}

duk_ret_t hash(duk_context* ctx) {
  (void)current(ctx);
  const bool keccak = duk_get_current_magic(ctx) == 1;
  const bytes in = input_bytes(ctx, keccak ? "Enact.keccak256" : "Enact.sha256");
  const std::string out = text::digest_hex(keccak, in);
  duk_push_lstring(ctx, out.data(), out.size());
  return 1;
}

duk_ret_t capability(duk_context* ctx) {
  run_state& s = current(ctx);
  const std::string method(kCapabilities[duk_get_current_magic(ctx)]);
  if (!duk_is_object(ctx, 0) || duk_is_array(ctx, 0) || duk_is_function(ctx, 0) || duk_is_buffer_data(ctx, 0)) {
    throw_error(ctx, DUK_ERR_TYPE_ERROR, text::expected_object(method));
  }
  duk_set_top(ctx, 1);
  duk_dup(ctx, 0);
  duk_json_encode(ctx, -1);
  const std::string args = text_at(ctx, -1);
  duk_pop(ctx);
  if (args.size() > channel::kMaxCallArgsBytes) {
    throw_error(ctx, DUK_ERR_RANGE_ERROR, text::args_too_large(method));
  }
  const call_answer answer = (*s.parent)(method, args);
  if (!answer.ok)
    throw_error(ctx, DUK_ERR_ERROR, answer.payload);
  duk_push_lstring(ctx, answer.payload.data(), answer.payload.size());
  duk_json_decode(ctx, -1);
  return 1;
}

// --- Enact.fetch -----------------------------------------------------------------------------
// Made by the parent (fetch.hpp); here the arguments go out as {url, init} and the answer
// becomes the response: {status, ok, url, headers} with text() and json(), each function keeping
// the body under a hidden key.

constexpr const char* kBodyKey = DUK_HIDDEN_SYMBOL("body");

// text() (magic 0) and json() (magic 1, a SyntaxError for a body that is not JSON).
duk_ret_t fetch_body(duk_context* ctx) {
  (void)current(ctx);
  duk_push_current_function(ctx);
  duk_get_prop_string(ctx, -1, kBodyKey);
  if (duk_get_current_magic(ctx) == 1)
    duk_json_decode(ctx, -1);
  return 1;
}

duk_ret_t fetch(duk_context* ctx) {
  run_state& s = current(ctx);
  duk_set_top(ctx, 2);
  if (!duk_is_string(ctx, 0))
    throw_error(ctx, DUK_ERR_TYPE_ERROR, std::string(kFetchUrlExpected));
  const bool has_init = !duk_is_null_or_undefined(ctx, 1);
  if (has_init &&
      (!duk_is_object(ctx, 1) || duk_is_array(ctx, 1) || duk_is_function(ctx, 1) || duk_is_buffer_data(ctx, 1))) {
    throw_error(ctx, DUK_ERR_TYPE_ERROR, std::string(kFetchInitExpected));
  }
  duk_push_object(ctx);
  duk_dup(ctx, 0);
  duk_put_prop_string(ctx, -2, "url");
  if (has_init) {
    duk_dup(ctx, 1);
    duk_put_prop_string(ctx, -2, "init");
  }
  duk_json_encode(ctx, -1);
  const std::string args = text_at(ctx, -1);
  duk_pop(ctx);
  if (args.size() > channel::kMaxCallArgsBytes)
    throw_error(ctx, DUK_ERR_RANGE_ERROR, text::args_too_large(kFetchMethod));
  const call_answer answer = (*s.parent)(kFetchMethod, args);
  if (!answer.ok)
    throw_error(ctx, DUK_ERR_ERROR, answer.payload);
  duk_push_lstring(ctx, answer.payload.data(), answer.payload.size());
  duk_json_decode(ctx, -1);  // [url init response]
  duk_get_prop_string(ctx, -1, "body");
  duk_del_prop_string(ctx, -2, "body");
  for (const int parse : {0, 1}) {
    duk_push_c_function(ctx, fetch_body, 0);
    duk_set_magic(ctx, -1, parse);
    duk_dup(ctx, -2);
    duk_put_prop_string(ctx, -2, kBodyKey);
    duk_put_prop_string(ctx, -3, parse == 1 ? "json" : "text");
  }
  duk_pop(ctx);  // the body
  return 1;
}

void put_function(duk_context* ctx, const char* name, duk_c_function fn, duk_idx_t nargs, int magic = 0) {
  duk_push_c_function(ctx, fn, nargs);
  duk_set_magic(ctx, -1, magic);
  duk_put_prop_string(ctx, -2, name);
}

duk_ret_t install_globals(duk_context* ctx, void*) {
  duk_push_global_object(ctx);
  duk_push_object(ctx);
  put_function(ctx, "setResponse", set_response, 1);
  put_function(ctx, "sha256", hash, 1, 0);
  put_function(ctx, "keccak256", hash, 1, 1);
  for (int i = 0; i < static_cast<int>(std::size(kCapabilities)); ++i) {
    put_function(ctx, std::string(kCapabilities[i]).c_str(), capability, 1, i);
  }
  put_function(ctx, "fetch", fetch, 2);
  duk_freeze(ctx, -1);
  duk_put_prop_string(ctx, -2, "Enact");

  duk_push_object(ctx);
  for (const char* name : {"log", "info", "warn", "error"}) {
    put_function(ctx, name, console_log, DUK_VARARGS);
  }
  duk_freeze(ctx, -1);
  duk_put_prop_string(ctx, -2, "console");
  duk_pop(ctx);  // global
  return 0;
}

duk_ret_t run_action(duk_context* ctx, void* udata) {
  auto& s = *static_cast<run_state*>(udata);
  duk_push_global_object(ctx);
  if (s.req->params_json.empty()) {
    duk_push_object(ctx);
  } else {
    duk_push_lstring(ctx, s.req->params_json.data(), s.req->params_json.size());
    duk_json_decode(ctx, -1);
  }
  duk_put_prop_string(ctx, -2, "params");
  duk_pop(ctx);  // global

  duk_push_lstring(ctx, kFilename.data(), kFilename.size());
  duk_compile_lstring_filename(ctx, 0, s.req->code.data(), s.req->code.size());
  duk_call(ctx, 0);
  return 0;
}

struct description {
  std::string message;
  std::string stack;
};

// Duktape's stacks name its own C source for frames inside the engine
// ("at [anon] (duk_js_call.c:2925) internal"); only the action's frames interest its author.
// Frame flags Duktape appends to the action's own frames (" preventsyield", " strict",
// " tailcall", " construct") describe the engine's call state, not the code, and are dropped.
std::string without_internal_frames(std::string_view stack) {
  std::string out;
  while (!stack.empty()) {
    const size_t end = stack.find('\n');
    std::string_view line = stack.substr(0, end);
    if (!line.ends_with(") internal")) {
      if (const size_t close = line.rfind(')'); close != std::string_view::npos && line.substr(0, 4) == "    ")
        line = line.substr(0, close + 1);
      if (!out.empty())
        out += '\n';
      out += line;
    }
    if (end == std::string_view::npos)
      break;
    stack.remove_prefix(end + 1);
  }
  return out;
}

// String(error) and error.stack of the thrown value on the stack top.
duk_ret_t describe(duk_context* ctx, void* udata) {
  auto& d = *static_cast<description*>(udata);
  if (duk_is_object(ctx, -1)) {
    duk_get_prop_string(ctx, -1, "stack");
    if (duk_is_string(ctx, -1)) {
      d.stack = text::cut(without_internal_frames(text_at(ctx, -1)), kMaxStackBytes);
    }
    duk_pop(ctx);
  }
  duk_dup(ctx, -1);
  duk_safe_to_string(ctx, -1);
  d.message = text::cut(text_at(ctx, -1), kMaxMessageBytes);
  duk_pop(ctx);
  return 0;
}

// How a run that returned `rc` ended. Limits take precedence over the error they caused.
void classify(duk_context* ctx, run_state& s, duk_int_t rc) {
  outcome& o = s.out;
  if (rc != DUK_EXEC_SUCCESS) {
    description d;
    if (duk_safe_call(ctx, describe, &d, 1, 1) != DUK_EXEC_SUCCESS)
      d.message = "uncaught error";
    o.failure = failure_kind::exception;
    o.message = std::move(d.message);
    o.stack = std::move(d.stack);
  }
  text::settle(o, s.req->lim, s.guard.timed_out, s.output_exceeded, rc != DUK_EXEC_SUCCESS && s.guard.heap_exhausted);
}

void on_duk_fatal(void* udata, const char* msg) {
  auto* guard = static_cast<engine::heap_guard*>(udata);
  run_state* s = guard != nullptr ? static_cast<run_state*>(guard->owner) : t_current;
  if (s != nullptr && s->on_fatal != nullptr && s->req != nullptr) {
    outcome o;
    o.failure = guard->timed_out        ? failure_kind::timeout
                : guard->heap_exhausted ? failure_kind::memory
                                        : failure_kind::crashed;
    o.message = std::string("engine fatal error: ") + (msg != nullptr ? msg : "");
    o.logs = std::move(s->out.logs);
    o.logs_truncated = s->out.logs_truncated;
    o.retire = true;
    s->on_fatal(o);
  }
  std::_Exit(70);
}

}  // namespace

fresh_heap::fresh_heap(fatal_sink on_fatal) : state_(std::make_unique<run_state>()) {
  run_state& s = *state_;
  s.on_fatal = on_fatal;
  s.guard.owner = &s;
  s.ctx = engine::create_heap(&s.guard, on_duk_fatal);
  if (s.ctx == nullptr)
    return;
  // Only our own code runs here; it fails only when memory does.
  s.ready = duk_safe_call(s.ctx, install_globals, nullptr, 0, 1) == DUK_EXEC_SUCCESS;
  duk_pop(s.ctx);
}

fresh_heap::~fresh_heap() {
  if (state_ != nullptr && state_->ctx != nullptr) {
    state_->finished = true;
    state_->guard.halted = true;
    duk_destroy_heap(state_->ctx);
  }
}

fresh_heap::fresh_heap(fresh_heap&&) noexcept = default;

fresh_heap& fresh_heap::operator=(fresh_heap&& other) noexcept {
  fresh_heap doomed(std::move(*this));
  state_ = std::move(other.state_);
  return *this;
}

outcome run_keeping_heap(fresh_heap& heap, const request& req, const call_parent& parent) {
  run_state& s = *heap.state_;
  s.req = &req;
  s.parent = &parent;
  s.guard.heap_limit = req.lim.heap_bytes;
  s.guard.deadline_ns =
      engine::monotonic_ns() + std::chrono::duration_cast<std::chrono::nanoseconds>(req.lim.wall).count();

  if (s.ctx == nullptr || !s.ready || s.guard.heap_used > s.guard.heap_limit) {
    s.out.failure = failure_kind::memory;
    s.out.message = "no Duktape heap fits in the heap limit of " + std::to_string(req.lim.heap_bytes) + " bytes";
  } else {
    t_current = &s;
    const duk_int_t rc = duk_safe_call(s.ctx, run_action, &s, 0, 1);
    classify(s.ctx, s, rc);
    t_current = nullptr;
  }
  // No bytecode after this point: finalizers that run while the heap is destroyed stop at
  // their first interrupt, and the natives refuse.
  s.finished = true;
  s.guard.halted = true;
  // A heap that grew is destroyed now, on the time of the run that grew it, never on the next
  // run's; a fatal error meanwhile is still this run's outcome.
  if (s.ctx != nullptr && s.guard.heap_used > kDeferredTeardownBytes) {
    duk_destroy_heap(s.ctx);
    s.ctx = nullptr;
  }
  // The outcome is the caller's now: a fatal error while a spent heap is destroyed later has
  // nothing left to report.
  s.on_fatal = nullptr;
  return std::move(s.out);
}

outcome run(fresh_heap heap, const request& req, const call_parent& parent) {
  outcome o = run_keeping_heap(heap, req, parent);
  { const fresh_heap spent(std::move(heap)); }  // destroyed here, before the caller sees `o`
  return o;
}

outcome run(const request& req, const call_parent& parent, fatal_sink on_fatal) {
  return run(fresh_heap(on_fatal), req, parent);
}

}  // namespace enact::runtime::sandbox
