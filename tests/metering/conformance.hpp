// SPDX-License-Identifier: Apache-2.0
// The metering-store conformance suite (server/metering/store.hpp), written against
// metering::store& only and run on every backend: sqlite_test.cpp and pg_test.cpp each give it a
// factory of fresh, empty stores read by a clock the suite moves.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "metering/store.hpp"

namespace enact::metering::test {

/// The suite's clock: milliseconds, moved forward by the cases that test expiry.
struct test_clock {
  std::atomic<millis> now{1'700'000'000'000};
  [[nodiscard]] clock_fn fn() {
    return [this] {
      return now.load();
    };
  }
};

/// A 32-byte hash made of two bytes: the accounts and keys the cases name.
[[nodiscard]] inline hash256 test_hash(uint8_t a, uint8_t b = 0) {
  hash256 x{};
  x[0] = a;
  x[1] = b;
  x[31] = 1;
  return x;
}

/// A payment record as a payment provider's intent gives it: uncredited.
[[nodiscard]] inline payment intent(std::string id, const account_hash& account, uint64_t cents,
                                    std::string provider = "dev") {
  payment p;
  p.id = std::move(id);
  p.account = account;
  p.amount_cents = cents;
  p.provider = std::move(provider);
  return p;
}

/// Runs `body(thread index)` on `threads` threads started together; returns when all have ended.
template <class F>
void race(int threads, F body) {
  std::atomic<bool> go{false};
  std::vector<std::thread> running;
  for (int t = 0; t < threads; ++t)
    running.emplace_back([&, t] {
      while (!go.load())
        std::this_thread::yield();
      body(t);
    });
  go = true;
  for (auto& t : running)
    t.join();
}

/// A fresh, empty store reading `clock`.
using store_factory = std::function<std::unique_ptr<store>(test_clock& clock)>;

/// Runs every case of the suite (one doctest SUBCASE each) on stores from `make`.
void run_conformance(const store_factory& make);
/// The Idempotency-Key cases (idempotency_cases.cpp), one SUBCASE each.
void run_idempotency_conformance(const store_factory& make);
/// Concurrent writes, which the store's committer runs in batches (group_commit_cases.cpp).
void run_group_commit_conformance(const store_factory& make);
/// The single-use values (nonce_cases.cpp), one SUBCASE each.
void run_nonce_conformance(const store_factory& make);

}  // namespace enact::metering::test
