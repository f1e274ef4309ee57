// The trigger-store suite (STYLE.md "Server code": one suite, every backend). Written against
// `store&` only; a backend plugs in with a `backend` that opens stores over fresh state and a
// doctest case that calls `run_store_suite` with its factory:
//
//   TEST_CASE("trigger store: sqlite") { run_store_suite(make_sqlite_backend); }
//
// Each case is a SUBCASE of the calling test case, on a backend of its own.
#pragma once

#include <functional>
#include <memory>

#include "triggers/store.hpp"

namespace enact::triggers::test {

class backend {
 public:
  virtual ~backend() = default;
  /// A store over this backend's state; called again after the previous store was destroyed, it
  /// reopens the same state (the persistence case).
  [[nodiscard]] virtual std::unique_ptr<store> open() = 0;
};

using backend_factory = std::function<std::unique_ptr<backend>()>;

void run_store_suite(const backend_factory& make);

}  // namespace enact::triggers::test
