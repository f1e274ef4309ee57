// SPDX-License-Identifier: Apache-2.0
// The pool the runtime suites run against (pool_test.cpp, modern_test.cpp): real enact-worker
// processes running the engine under test, a handler that echoes capability calls, and a run
// that must reach its worker.
#pragma once

#include <doctest/doctest.h>

#include <unistd.h>

#include <boost/json/value.hpp>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/runtime.hpp"

namespace enact::runtime::test {

using namespace std::chrono_literals;

// The engine under test: ctest runs this suite once per engine (tests/runtime/CMakeLists.txt),
// naming it in ENACT_TEST_ACTION_ENGINE; unset, the default engine.
inline runtime::action_engine engine() {
  runtime::action_engine e = runtime::pool_config{}.engine;
  const char* name = std::getenv("ENACT_TEST_ACTION_ENGINE");
  if (name != nullptr)
    REQUIRE_MESSAGE(runtime::parse_action_engine(name, e), name);
  return e;
}

inline bool on_duktape() { return engine() == runtime::action_engine::duktape; }

inline runtime::pool_config config(size_t size = 0) {
  runtime::pool_config c;
  c.worker_path = ENACT_WORKER_PATH;
  c.engine = engine();
  c.size = size;
  c.defaults.wall = 5000ms;
  // Without root the workers keep the test's uid, a missing layer: these cases are about runs,
  // not confinement (isolation_test.cpp), so they opt out there. CI runs as root, fully confined.
  c.allow_weak_isolation = ::geteuid() != 0;
  return c;
}

inline std::unique_ptr<runtime::pool> start(runtime::pool_config c) {
  auto p = runtime::pool::start(std::move(c));
  REQUIRE_MESSAGE(p.has_value(), (p ? std::string() : p.err().message));
  return std::move(p).value();
}

// One pool shared by the cases that leave their workers healthy.
inline runtime::pool& shared_pool() {
  static std::unique_ptr<runtime::pool> p = start(config());
  return *p;
}

inline runtime::limits with_wall(std::chrono::milliseconds wall) {
  runtime::limits l;
  l.wall = wall;
  return l;
}

// Answers every call with {"method", "args"}; counts calls.
struct echo_handler : runtime::capability_handler {
  std::mutex mu;
  std::vector<std::string> methods;
  enact::result<boost::json::value> call(std::string_view method, const boost::json::object& args) override {
    const std::lock_guard lock(mu);
    methods.emplace_back(method);
    return boost::json::value(boost::json::object{{"method", method}, {"args", args}});
  }
};

inline runtime::run_result run_ok(runtime::pool& p, std::string_view code, std::string_view params = "",
                                  const runtime::limits* lim = nullptr) {
  echo_handler caps;
  auto r = p.run(code, params, caps, lim);
  REQUIRE_MESSAGE(r.has_value(), (r ? std::string() : r.err().message));
  return std::move(r).value();
}

}  // namespace enact::runtime::test
