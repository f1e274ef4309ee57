// SPDX-License-Identifier: Apache-2.0
// Assertions on enact::result for the backend suites (ledger conformance, trigger store):
//   must_ok(r)              the value of a result that must succeed, or the test case stops
//   MUST(expr)              the value of a result that must succeed (a failure is recorded with
//                           the error's message, and the value is default-constructed)
//   CHECK_ERRC(expr, want)  a result that must fail with the error code `want`
#pragma once

#include <doctest/doctest.h>

#include <string>
#include <system_error>
#include <utility>

#include "enact/result.hpp"

namespace enact::test {

template <class T>
T must_ok(result<T> r) {
  REQUIRE_MESSAGE(r.has_value(), (r ? "" : r.err().message));
  return std::move(r).value();
}

template <class T>
T must(result<T> r, const char* expr, const char* file, int line) {
  if (!r)
    ADD_FAIL_AT(file, line, (std::string(expr) + " failed: " + r.err().message));
  return std::move(r).value();
}
inline void must(const result<void>& r, const char* expr, const char* file, int line) {
  if (!r)
    ADD_FAIL_AT(file, line, (std::string(expr) + " failed: " + r.err().message));
}
template <class T, class Errc>
void check_errc(const result<T>& r, Errc want, const char* expr, const char* file, int line) {
  if (r.code() == want)
    return;
  const std::string got = r ? std::string("success") : r.code().message() + " (" + r.err().message + ")";
  ADD_FAIL_CHECK_AT(file, line, (std::string(expr) + ": expected " + make_error_code(want).message() + ", got " + got));
}

}  // namespace enact::test

#define MUST(...) ::enact::test::must((__VA_ARGS__), #__VA_ARGS__, __FILE__, __LINE__)
#define CHECK_ERRC(expr, want) ::enact::test::check_errc((expr), (want), #expr, __FILE__, __LINE__)
