// SPDX-License-Identifier: Apache-2.0
// What the tests that drive the SDK's clients against the real server share (client_test.cpp,
// chainsecured_test.cpp, trigger_client_test.cpp): client options for a server on a loopback
// port, and catching the api_error a call must throw.
#pragma once

#include <doctest/doctest.h>

#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

#include "enact/client/api_error.hpp"
#include "enact/client/core_client.hpp"

namespace enact::itest {

/// Options for a client of http://127.0.0.1:`port`, with a 10 s read timeout.
inline client::client_options options_for(int port) {
  client::client_options o;
  o.base_url = "http://127.0.0.1:" + std::to_string(port);
  o.read_timeout = std::chrono::seconds(10);
  return o;
}

/// The same, recording in `slept` every pause the client takes between retries instead of sleeping.
inline client::client_options options_for(int port, std::vector<std::chrono::milliseconds>& slept) {
  client::client_options o = options_for(port);
  o.sleep = [&slept](std::chrono::milliseconds d) {
    slept.push_back(d);
  };
  return o;
}

/// Runs `f` and returns the api_error it throws (fails the test when it throws none).
template <class F>
api_error expect_api_error(F&& f) {
  try {
    f();
  } catch (const api_error& e) {
    return e;
  }
  FAIL("expected an api_error");
  throw std::logic_error("unreachable");
}

}  // namespace enact::itest
