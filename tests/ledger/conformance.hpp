// SPDX-License-Identifier: Apache-2.0
// The permission-ledger conformance suite (STYLE.md "Server code": one suite, every backend). It
// is written against `permission_ledger&` only; a backend plugs in by providing a `backend` that
// opens ledgers over fresh state, and a doctest case that calls `run_conformance` with it:
//
//   TEST_CASE("ledger conformance: embedded") { run_conformance(make_embedded_backend); }
//
// Each conformance case is a SUBCASE of the calling test case, on a backend of its own.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ledger/ledger.hpp"

namespace enact::ledger::test {

/// Fresh ledger state for one conformance case.
class backend {
 public:
  virtual ~backend() = default;
  /// A ledger over this backend's state. Called again after the previous ledger was destroyed,
  /// it reopens the same state (the persistence case).
  [[nodiscard]] virtual std::unique_ptr<permission_ledger> open() = 0;
};

/// Makes a backend with fresh, empty state whose ledgers accept `api_payers` as relays.
using backend_factory = std::function<std::unique_ptr<backend>(const std::vector<address>& api_payers)>;

/// Runs every conformance case as a doctest SUBCASE of the calling TEST_CASE.
void run_conformance(const backend_factory& make);

}  // namespace enact::ledger::test
