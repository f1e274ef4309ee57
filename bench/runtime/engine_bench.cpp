// SPDX-License-Identifier: Apache-2.0
// Each action engine's time per run against its own bare floor (docs/benchmarks.md "Action
// engines"), in-process, the same trivial action `Enact.setResponse({ok: params.x + 1})`:
//   bare_duktape                a Duktape heap created, params and a minimal setResponse set,
//                               the action compiled and run, the heap destroyed
//   bare_spidermonkey           a SpiderMonkey global created in a new compartment (jitless, one
//                               context as the worker has), params and a minimal setResponse set,
//                               the action compiled and run; the engine collects as it sees fit
//   sandbox_duktape             the worker's Duktape path (sandbox::run: counted allocator,
//                               deadline, the whole Enact API, classification), the heap's
//                               creation and destruction included
//   sandbox_duktape_ready       the same with the heap created ahead and the spent one destroyed
//                               outside the time, as the worker does while it waits for a request
//   sandbox_spidermonkey        the worker's SpiderMonkey path (spidermonkey::run: the action as
//                               an async function's body, limits armed, jobs drained), with the
//                               realm's creation and the collection between runs in the time
//   sandbox_spidermonkey_ready  the same with the realm made and the garbage collected outside
//                               the time, as the worker does while it waits for a request
// SpiderMonkey is initialised once per process, by either the bare floor or the sandbox, so the
// bare and the sandbox cases of SpiderMonkey run in separate invocations (bench/engines runs
// --benchmark_filter=bare_ and =sandbox_); a process asked for both skips the second with an error.
#include <benchmark/benchmark.h>

#include <js/CompilationAndEvaluation.h>
#include <js/Initialization.h>
#include <js/JSON.h>
#include <js/SourceText.h>
#include <jsapi.h>

#include <unistd.h>

#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

#include "trivial_action.hpp"
#include "runtime/sandbox.hpp"
#include "runtime/spidermonkey.hpp"

namespace rt = enact::runtime;
namespace sm = enact::runtime::spidermonkey;

namespace {

constexpr std::string_view kCode = enact::bench::kTrivialCode;
constexpr std::string_view kParams = enact::bench::kTrivialParams;
constexpr std::string_view kExpected = enact::bench::kTrivialResponse;

std::string g_response;

// --- Duktape ------------------------------------------------------------------------------------

void bare_duktape(benchmark::State& state) {
  for (auto _ : state) {
    if (!enact::bench::bare_duktape_run())
      state.SkipWithError("bare Duktape run failed");
  }
}
BENCHMARK(bare_duktape);

// --- SpiderMonkey -------------------------------------------------------------------------------

enum class sm_user { none, bare, sandbox };
sm_user g_sm_user = sm_user::none;
JSContext* g_bare_cx = nullptr;

/// SpiderMonkey for `who`, initialised on first use; false when the other kind already has it.
bool claim_spidermonkey(sm_user who, benchmark::State& state) {
  if (g_sm_user == who)
    return true;
  if (g_sm_user != sm_user::none) {
    state.SkipWithError("SpiderMonkey is initialised once per process: run bare_ and sandbox_ cases separately");
    return false;
  }
  g_sm_user = who;
  if (who == sm_user::sandbox) {
    std::string why;
    if (!sm::start(why)) {
      state.SkipWithError(why.c_str());
      return false;
    }
    return true;
  }
  JS::DisableJitBackend();
  if (!JS_Init() || (g_bare_cx = JS_NewContext(JS::DefaultHeapMaxBytes)) == nullptr ||
      !JS::InitSelfHostedCode(g_bare_cx)) {
    state.SkipWithError("SpiderMonkey could not be initialised");
    return false;
  }
  return true;
}

constexpr JSClass kGlobal = {"global", JSCLASS_GLOBAL_FLAGS, &JS::DefaultGlobalClassOps};

bool json_chunk(const char16_t* buf, uint32_t len, void* data) {
  auto& out = *static_cast<std::string*>(data);
  for (uint32_t i = 0; i < len; ++i)
    out.push_back(static_cast<char>(buf[i]));  // the benchmark's response is ASCII
  return true;
}

bool sm_set_response(JSContext* cx, unsigned argc, JS::Value* vp) {
  const JS::CallArgs args = JS::CallArgsFromVp(argc, vp);
  JS::RootedValue v(cx, args.get(0));
  g_response.clear();
  if (!JS_Stringify(cx, &v, nullptr, JS::NullHandleValue, json_chunk, &g_response))
    return false;
  args.rval().setUndefined();
  return true;
}

bool sm_bare_run(JSContext* cx) {
  const JS::RealmOptions options;  // a new compartment and zone, as the worker's realms have
  JS::RootedObject global(cx, JS_NewGlobalObject(cx, &kGlobal, nullptr, JS::FireOnNewGlobalHook, options));
  if (global == nullptr)
    return false;
  const JSAutoRealm in(cx, global);
  JS::RootedValue params(cx);
  const std::u16string params16(kParams.begin(), kParams.end());
  JS::RootedObject enact(cx, JS_NewPlainObject(cx));
  if (enact == nullptr || !JS_ParseJSON(cx, params16.data(), static_cast<uint32_t>(params16.size()), &params) ||
      !JS_DefineProperty(cx, global, "params", params, JSPROP_ENUMERATE) ||
      JS_DefineFunction(cx, enact, "setResponse", sm_set_response, 1, 0) == nullptr ||
      !JS_DefineProperty(cx, global, "Enact", enact, JSPROP_ENUMERATE))
    return false;
  JS::CompileOptions compile(cx);
  compile.setFileAndLine("action.js", 1);
  JS::SourceText<mozilla::Utf8Unit> text;
  JS::RootedValue result(cx);
  return text.init(cx, kCode.data(), kCode.size(), JS::SourceOwnership::Borrowed) &&
         JS::Evaluate(cx, compile, text, &result);
}

void bare_spidermonkey(benchmark::State& state) {
  if (!claim_spidermonkey(sm_user::bare, state))
    return;
  size_t collected = JS_GetGCParameter(g_bare_cx, JSGC_BYTES);
  for (auto _ : state) {
    if (!sm_bare_run(g_bare_cx) || g_response != kExpected) {
      JS_ClearPendingException(g_bare_cx);
      state.SkipWithError("bare SpiderMonkey run failed");
      break;
    }
    // Every run leaves a global in a zone of its own, which no zone's own trigger collects: a
    // full collection each 16 MiB of growth, as the worker's collect_garbage does between runs.
    if (JS_GetGCParameter(g_bare_cx, JSGC_BYTES) > collected + (16u << 20)) {
      JS_GC(g_bare_cx);
      collected = JS_GetGCParameter(g_bare_cx, JSGC_BYTES);
    } else {
      JS_MaybeGC(g_bare_cx);
    }
  }
}
BENCHMARK(bare_spidermonkey);

// --- the sandbox's paths ------------------------------------------------------------------------

using enact::bench::kNoCapabilities;
const auto bench_request = enact::bench::trivial_request;

void sandbox_duktape(benchmark::State& state) {
  const rt::sandbox::request req = bench_request();
  for (auto _ : state) {
    const rt::sandbox::outcome o = rt::sandbox::run(req, kNoCapabilities, nullptr);
    if (o.failure != rt::failure_kind::none || o.response_json != kExpected)
      state.SkipWithError(o.message.c_str());
  }
}
BENCHMARK(sandbox_duktape);

void sandbox_duktape_ready(benchmark::State& state) {
  const rt::sandbox::request req = bench_request();
  std::optional<rt::sandbox::fresh_heap> heap;
  for (auto _ : state) {
    state.PauseTiming();
    heap.reset();  // the previous run's spent heap
    heap.emplace(nullptr);
    state.ResumeTiming();
    const rt::sandbox::outcome o = rt::sandbox::run_keeping_heap(*heap, req, kNoCapabilities);
    if (o.failure != rt::failure_kind::none || o.response_json != kExpected) {
      state.SkipWithError(o.message.c_str());
      break;
    }
  }
}
BENCHMARK(sandbox_duktape_ready);

void sandbox_spidermonkey(benchmark::State& state) {
  if (!claim_spidermonkey(sm_user::sandbox, state))
    return;
  const rt::sandbox::request req = bench_request();
  for (auto _ : state) {
    const rt::sandbox::outcome o = sm::run(sm::fresh_realm(), req, kNoCapabilities);
    if (o.failure != rt::failure_kind::none || o.response_json != kExpected) {
      state.SkipWithError(o.message.c_str());
      break;
    }
    sm::collect_garbage();
  }
}
BENCHMARK(sandbox_spidermonkey);

void sandbox_spidermonkey_ready(benchmark::State& state) {
  if (!claim_spidermonkey(sm_user::sandbox, state))
    return;
  const rt::sandbox::request req = bench_request();
  for (auto _ : state) {
    state.PauseTiming();
    sm::collect_garbage();
    sm::fresh_realm realm;
    state.ResumeTiming();
    const rt::sandbox::outcome o = sm::run(std::move(realm), req, kNoCapabilities);
    if (o.failure != rt::failure_kind::none || o.response_json != kExpected) {
      state.SkipWithError(o.message.c_str());
      break;
    }
  }
}
BENCHMARK(sandbox_spidermonkey_ready);

}  // namespace

// SpiderMonkey is never shut down (the worker never shuts it down either): the process ends with
// _exit once the results are written, so no library destructor runs against a live context.
int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv))
    return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  std::fflush(nullptr);
  ::_exit(0);
}
