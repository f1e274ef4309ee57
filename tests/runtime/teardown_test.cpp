// SPDX-License-Identifier: Apache-2.0
// A run's answer is final. A Duktape worker answers first and destroys the spent heap while it
// waits for the next request (server/runtime/sandbox.hpp run_keeping_heap): whatever the action
// left to run at that teardown (finalizers, which Duktape calls for every remaining object as
// the heap is destroyed) must change neither that run's answer nor the next run's, and must not
// hold the worker up; the same for a heap that grew, which is torn down before the answer. On SpiderMonkey the action
// sets its response and nothing else.
#include <doctest/doctest.h>

#include <chrono>
#include <string>

#include "pool_fixture.hpp"
#include "runtime/runtime.hpp"

namespace rt = enact::runtime;
using namespace enact::runtime::test;
using namespace std::chrono_literals;

namespace {

// A finalizer on an object still reachable when the run ends (so no collection during the run
// calls it): it tries to answer for the run, log, and loop forever.
constexpr std::string_view kLeavesFinalizers = R"js(
  function late() {
    try { Enact.setResponse({late: true}); } catch (e) {}
    try { console.log('finalizer ran'); } catch (e) {}
    for (;;) {}
  }
  if (typeof Duktape === 'object') {
    var kept = {};
    Duktape.fin(kept, late);
    this.kept = kept;
  }
  if (params.grow) {
    var grown = [];  // well past sandbox::kDeferredTeardownBytes: torn down before the answer
    for (var i = 0; i < 40000; i++) grown.push({i: i, s: 'x' + i});
    this.grown = grown;
  }
  console.log('before');
  Enact.setResponse({a: 1});
)js";

}  // namespace

TEST_CASE("runtime: what a heap runs while it is torn down reaches no answer and holds no worker") {
  auto p = start(config(1));
  const int worker = p->worker_pids().at(0);
  for (int round = 0; round < 4; ++round) {
    CAPTURE(round);
    rt::limits lim = with_wall(3000ms);
    const auto first = run_ok(*p, kLeavesFinalizers, round % 2 == 0 ? R"({"grow":false})" : R"({"grow":true})", &lim);
    CHECK(first.failure == rt::failure_kind::none);
    CHECK(first.response_json == R"({"a":1})");
    CHECK(first.logs == "before\n");

    // The same worker takes the next run: had the finalizers run unhalted, their loop would hold
    // it until the first run's wall time (3 s) was spent.
    const auto next = run_ok(*p, "Enact.setResponse({ok: params.x + 1})", R"({"x":41})");
    CHECK(next.failure == rt::failure_kind::none);
    CHECK(next.response_json == R"({"ok":42})");
    CHECK(next.logs.empty());
    CHECK(next.run_time < 2000ms);
  }
  CHECK(p->worker_pids().at(0) == worker);
  CHECK(p->restarts() == 0);
}
