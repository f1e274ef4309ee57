// SPDX-License-Identifier: Apache-2.0
// The Stripe stand-in (stripe_fixture.hpp) as a process, for tests written in another language
// (tests/browser/dashboard_stripe_test.mjs): it serves the file given as the stand-in Stripe.js at
// /v3/, prints one line `stripe fixture at http://127.0.0.1:<port> {json}` naming its base URL and
// keys, and runs until it is sent SIGTERM or SIGINT. The test sets the webhook
// endpoint with POST /_fixture/webhook_endpoint once its server is up.
//
// usage: stripe_fixture_server <stand-in Stripe.js file>
#include <boost/json.hpp>

#include <csignal>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "stripe_fixture.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: stripe_fixture_server <stand-in Stripe.js file>\n";
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  if (!in) {
    std::cerr << "stripe_fixture_server: cannot read " << argv[1] << "\n";
    return 1;
  }
  std::ostringstream script;
  script << in.rdbuf();

  // SIGTERM ends the wait on stdin as its end would; the fixture's destructor then stops it.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);

  enact::test::stripe_fixture f;
  f.serve_script(script.str());
  const boost::json::object info{{"base_url", f.base_url()},
                                 {"secret_key", f.secret_key()},
                                 {"publishable_key", enact::test::stripe_fixture::kPublishableKey},
                                 {"webhook_secret", enact::test::stripe_fixture::kWebhookSecret}};
  std::cout << "stripe fixture at " << f.base_url() << " " << boost::json::serialize(info) << std::endl;
  int sig = 0;
  sigwait(&set, &sig);
  return 0;
}
