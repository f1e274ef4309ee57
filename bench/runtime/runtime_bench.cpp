// SPDX-License-Identifier: Apache-2.0
// The cost of one action run, from the floor up (same action, same params, same Duktape build):
//   bare_duktape      a heap created, the action compiled and run with a minimal setResponse,
//                     the heap destroyed — in-process, no limits, no isolation
//   sandbox_inprocess the worker's own code path (sandbox::run: counted allocator, deadline,
//                     the full Enact API, error classification), still in-process, heap
//                     creation and destruction included
//   sandbox_prepared  the same with the heap created outside the timed region, as the worker
//                     does while it waits for the next request; its destruction stays timed, as
//                     in the earlier reports (the worker now destroys it after answering, the
//                     path enact_engine_bench's sandbox_duktape_ready times)
//   pool              through the pool of Duktape workers: framing, a worker process, the
//                     round trip; 1 and 2 calling threads (the pool has 2 × cores workers)
// The ratio pool / bare_duktape is the price of running actions out of process.
#include <benchmark/benchmark.h>

#include <memory>
#include <string>
#include <string_view>

#include "trivial_action.hpp"
#include "runtime/runtime.hpp"
#include "runtime/sandbox.hpp"

namespace rt = enact::runtime;

namespace {

constexpr std::string_view kCode = enact::bench::kTrivialCode;
constexpr std::string_view kParams = enact::bench::kTrivialParams;

void bare_duktape(benchmark::State& state) {
  for (auto _ : state) {
    if (!enact::bench::bare_duktape_run())
      state.SkipWithError("bare run failed");
  }
}
BENCHMARK(bare_duktape);

using enact::bench::kNoCapabilities;
const auto bench_request = enact::bench::trivial_request;

void sandbox_inprocess(benchmark::State& state) {
  const rt::sandbox::request req = bench_request();
  for (auto _ : state) {
    const rt::sandbox::outcome o = rt::sandbox::run(req, kNoCapabilities, nullptr);
    if (o.failure != rt::failure_kind::none)
      state.SkipWithError(o.message.c_str());
    benchmark::DoNotOptimize(o.response_json);
  }
}
BENCHMARK(sandbox_inprocess);

void sandbox_prepared(benchmark::State& state) {
  const rt::sandbox::request req = bench_request();
  for (auto _ : state) {
    state.PauseTiming();
    rt::sandbox::fresh_heap heap(nullptr);
    state.ResumeTiming();
    const rt::sandbox::outcome o = rt::sandbox::run(std::move(heap), req, kNoCapabilities);
    if (o.failure != rt::failure_kind::none)
      state.SkipWithError(o.message.c_str());
    benchmark::DoNotOptimize(o.response_json);
  }
}
BENCHMARK(sandbox_prepared);

struct no_capabilities : rt::capability_handler {
  enact::result<boost::json::value> call(std::string_view, const boost::json::object&) override {
    return enact::error{std::make_error_code(std::errc::operation_not_permitted), "none"};
  }
};

rt::pool& shared_pool() {
  static std::unique_ptr<rt::pool> p = [] {
    rt::pool_config c;
    c.worker_path = ENACT_WORKER_PATH;
    c.engine = rt::action_engine::duktape;  // the engine of this file's floor (SpiderMonkey: engine_bench.cpp)
    return rt::pool::start(c).value();
  }();
  return *p;
}

void pool(benchmark::State& state) {
  rt::pool& p = shared_pool();
  no_capabilities caps;
  for (auto _ : state) {
    auto r = p.run(kCode, kParams, caps);
    if (!r || r->failure != rt::failure_kind::none || r->response_json != R"({"ok":42})") {
      state.SkipWithError("pool run failed");
      break;
    }
  }
  state.counters["workers"] = benchmark::Counter(static_cast<double>(p.size()), benchmark::Counter::kAvgThreads);
}
BENCHMARK(pool)->Threads(1)->Threads(2)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
