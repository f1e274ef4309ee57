// SPDX-License-Identifier: Apache-2.0
// The approval page of the handshake (docs/triggers.md "Signing in a client"): HTML with a script
// allowed by its nonce alone, served with headers that keep it out of frames and caches.
#pragma once

#include <string>

#include "triggers/store.hpp"

namespace httplib {
struct Response;
}

namespace enact::triggers {

/// The page for `a` (pending: sign in and decide; otherwise its outcome), its script under `script_nonce`.
[[nodiscard]] std::string approval_page(const approval& a, bool expired, const std::string& script_nonce);

/// Answers `html` with the page's headers (Content-Security-Policy for `script_nonce`, no frames, no store).
void send_page(httplib::Response& res, int status, std::string html, const std::string& script_nonce);

/// A page that says why the request cannot be approved.
void send_error_page(httplib::Response& res, int status, const std::string& message);

}  // namespace enact::triggers
