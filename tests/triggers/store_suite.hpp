// SPDX-License-Identifier: Apache-2.0
// The trigger-store suite (STYLE.md "Server code": one suite, every backend). Written against
// `store&` only; a backend plugs in with a `backend` that opens stores over fresh state and a
// doctest case that calls `run_store_suite` with its factory:
//
//   TEST_CASE("trigger store: sqlite") { run_store_suite(make_sqlite_backend); }
//
// Each case is a SUBCASE of the calling test case, on a backend of its own.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

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
/// Webhook de-duplication by config.dedup_header (dedup_suite.cpp), one SUBCASE each.
void run_dedup_suite(const backend_factory& make);

/// The store tests' fixed clock origin, 2024-05-01T00:00:00Z.
inline const time_point t0 = time_point{std::chrono::sys_days{std::chrono::year{2024} / 5 / 1}.time_since_epoch()};

/// A lease of up to `n` runs by `worker` at `now` for `d`, three attempts at most.
lease_request lease(std::string worker, time_point now, size_t n = 1,
                    std::chrono::milliseconds d = std::chrono::seconds(10));

/// The reference that completes or releases the leased run `l`.
lease_ref ref_of(const leased_run& l);

}  // namespace enact::triggers::test
