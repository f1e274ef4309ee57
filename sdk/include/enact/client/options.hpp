// SPDX-License-Identifier: Apache-2.0
// Connection settings shared by the typed clients: where the service is, how long to wait, and how
// often an idempotent GET is tried again. Retries follow one rule: only GETs are repeated (on a
// failed connection, a timeout, 502/503/504, and 429), after an exponential backoff with jitter or
// the server's Retry-After when it sends one, capped by `max_retry_after`. A POST is sent once:
// the server may have acted on it even when the answer was lost.
#pragma once

#include <chrono>
#include <functional>
#include <string>

namespace enact::client {

struct client_options {
  /// `http://host[:port]` or `https://host[:port]`, optionally followed by a path prefix under
  /// which the service is mounted (`https://example.org/enact`). No user-info, query or fragment:
  /// credentials travel in headers only.
  std::string base_url = "http://127.0.0.1:8080";
  /// PEM file of trusted CA certificates for https; empty: the system's default store. The
  /// server certificate and host name are always verified.
  std::string ca_file;
  std::chrono::milliseconds connect_timeout{5000};
  /// Longest wait for the server to answer (and to accept the request body).
  std::chrono::milliseconds read_timeout{30000};
  /// Further attempts after the first, for GETs only.
  unsigned max_retries = 2;
  /// Delay before the first retry; doubled for each further one (with jitter), at most 8 s.
  std::chrono::milliseconds retry_backoff{200};
  /// Longest wait honoured from a Retry-After header; a longer one is shortened to this.
  std::chrono::milliseconds max_retry_after{30000};
  std::string user_agent = "enact-sdk/0.1";
  /// How the client waits between attempts; empty: std::this_thread::sleep_for. Tests record the
  /// delays here instead of sleeping.
  std::function<void(std::chrono::milliseconds)> sleep;
};

}  // namespace enact::client
