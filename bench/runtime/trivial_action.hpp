// SPDX-License-Identifier: Apache-2.0
// The trivial action of the runtime benchmarks (runtime_bench.cpp, engine_bench.cpp;
// docs/benchmarks.md "Running actions", "Action engines"): its code, params and response, as a
// sandbox request with a parent that refuses every capability, and its bare Duktape floor — a
// heap created and destroyed in-process with params and a minimal Enact.setResponse and nothing
// else of the sandbox.
#pragma once

#include <string>
#include <string_view>

#include "duktape.h"
#include "runtime/sandbox.hpp"

namespace enact::bench {

/// The benchmarks' trivial action, its params and its response.
inline constexpr std::string_view kTrivialCode = "Enact.setResponse({ok: params.x + 1})";
inline constexpr std::string_view kTrivialParams = R"({"x":41})";
inline constexpr std::string_view kTrivialResponse = R"({"ok":42})";

/// The trivial action as a sandbox request.
inline runtime::sandbox::request trivial_request() {
  runtime::sandbox::request req;
  req.code = kTrivialCode;
  req.params_json = kTrivialParams;
  return req;
}

/// A parent that answers every capability call with a refusal.
inline const runtime::sandbox::call_parent kNoCapabilities = [](std::string_view, std::string_view) {
  return runtime::sandbox::call_answer{false, "no capabilities here"};
};

namespace detail {

inline std::string& bare_response() {
  thread_local std::string response;
  return response;
}

inline duk_ret_t bare_set_response(duk_context* ctx) {
  duk_set_top(ctx, 1);
  duk_size_t n = 0;
  const char* json = duk_json_encode(ctx, 0) != nullptr ? duk_get_lstring(ctx, 0, &n) : "null";
  bare_response().assign(json, n);
  return 0;
}

inline duk_ret_t bare_run(duk_context* ctx, void*) {
  duk_push_global_object(ctx);
  duk_push_lstring(ctx, kTrivialParams.data(), kTrivialParams.size());
  duk_json_decode(ctx, -1);
  duk_put_prop_string(ctx, -2, "params");
  duk_push_object(ctx);
  duk_push_c_function(ctx, bare_set_response, 1);
  duk_put_prop_string(ctx, -2, "setResponse");
  duk_put_prop_string(ctx, -2, "Enact");
  duk_pop(ctx);
  duk_push_string(ctx, "action.js");
  duk_compile_lstring_filename(ctx, 0, kTrivialCode.data(), kTrivialCode.size());
  duk_call(ctx, 0);
  return 0;
}

}  // namespace detail

/// One run of the trivial action in a fresh bare heap: true when it answered kTrivialResponse.
inline bool bare_duktape_run() {
  detail::bare_response().clear();
  duk_context* ctx = duk_create_heap_default();
  const bool ran = duk_safe_call(ctx, detail::bare_run, nullptr, 0, 1) == DUK_EXEC_SUCCESS;
  duk_destroy_heap(ctx);
  return ran && detail::bare_response() == kTrivialResponse;
}

}  // namespace enact::bench
