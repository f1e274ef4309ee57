// SPDX-License-Identifier: Apache-2.0
// What the billing route tests share: enact-server started with Stripe pointed at the local
// fixture (tests/billing/stripe_fixture.hpp) and a webhook endpoint secret, through the
// environment variables an operator sets.
#pragma once

#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "server_process.hpp"
#include "stripe_fixture.hpp"

namespace enact::itest {

/// enact-server whose payment provider is Stripe at `f`, with `webhook_secret` as the endpoint
/// secret (none when empty).
struct stripe_server {
  scoped_env secret_key;
  scoped_env webhook_secret;
  server_process srv;
  stripe_server(const test::stripe_fixture& f, const std::string& webhook, std::vector<std::string> flags = {},
                std::string data_dir = {})
      : secret_key("STRIPE_SECRET_KEY", f.secret_key()),
        webhook_secret("STRIPE_WEBHOOK_SECRET", webhook),
        srv(with_stripe(f, std::move(flags)), std::move(data_dir)) {}

 private:
  static std::vector<std::string> with_stripe(const test::stripe_fixture& f, std::vector<std::string> flags) {
    flags.insert(flags.end(), {"--stripe-api-base", f.base_url(), "--stripe-publishable-key", "pk_test_enact"});
    return flags;
  }
};

}  // namespace enact::itest
