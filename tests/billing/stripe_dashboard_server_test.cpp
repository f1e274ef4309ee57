// SPDX-License-Identifier: Apache-2.0
// The dashboard's card payment, as the server sets it up (docs/dashboard.md "Paying by card"):
// with Stripe as the payment provider, /dashboard/settings names the Stripe.js URL and every
// dashboard answer's Content-Security-Policy names exactly the origins Stripe documents for it
// (https://docs.stripe.com/security/guide#content-security-policy), checked here as text; with the
// dev provider or none, the policy is the one without Stripe. --stripe-js-url, the test-only way to
// load a loopback stand-in, is https, or http on a loopback host, and nothing else.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "server_support.hpp"
#include "steps.hpp"

namespace enact::itest {
namespace {

using test::stripe_fixture;

constexpr const char* kNoStripePolicy =
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

// Stripe's integration security guide: script-src https://js.stripe.com https://*.js.stripe.com,
// frame-src the same and https://hooks.stripe.com, connect-src https://api.stripe.com.
constexpr const char* kStripePolicy =
    "default-src 'none'; script-src 'self' https://js.stripe.com https://*.js.stripe.com; style-src 'self'; "
    "connect-src 'self' https://api.stripe.com; img-src 'self' data:; "
    "frame-src https://js.stripe.com https://*.js.stripe.com https://hooks.stripe.com; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const std::vector<std::string> kDashboardPaths = {"/dashboard/", "/dashboard/app.js", "/dashboard/settings"};

}  // namespace

TEST_CASE("Stripe mode: the dashboard loads Stripe.js from js.stripe.com, and its policy names Stripe's origins") {
  stripe_fixture f;
  stripe_server s(f, std::string(stripe_fixture::kWebhookSecret));
  for (const std::string& path : kDashboardPaths) {
    INFO(path);
    const response r = call(s.srv.port(), "GET", path);
    ITEST_REQUIRE_STATUS(r, 200);
    CHECK(r.header("Content-Security-Policy") == kStripePolicy);
  }
  const response settings = call(s.srv.port(), "GET", "/dashboard/settings");
  CHECK(settings.body == json::parse(R"({"triggers_url":null,"stripe_js_url":"https://js.stripe.com/v3/"})"));
  CHECK(s.srv.stop().clean());
}

TEST_CASE("--stripe-js-url: a loopback stand-in's origin takes the place of Stripe's, and nothing else changes") {
  stripe_fixture f;
  const std::string standin = f.base_url() + "/v3/";
  stripe_server s(f, std::string(stripe_fixture::kWebhookSecret), {"--stripe-js-url", standin});
  const std::string origin = f.base_url();
  const std::string expected =
      "default-src 'none'; script-src 'self' " + origin + "; style-src 'self'; connect-src 'self' " + origin +
      "; img-src 'self' data:; frame-src " + origin + "; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
  for (const std::string& path : kDashboardPaths) {
    INFO(path);
    CHECK(call(s.srv.port(), "GET", path).header("Content-Security-Policy") == expected);
  }
  const response settings = call(s.srv.port(), "GET", "/dashboard/settings");
  CHECK(s_of(settings.body, "stripe_js_url") == standin);
  CHECK(s.srv.stop().clean());
}

TEST_CASE("the dev provider and no provider: no Stripe.js and the policy unchanged, whatever --stripe-js-url says") {
  for (const std::vector<std::string>& flags :
       {std::vector<std::string>{"--dev"},
        std::vector<std::string>{"--dev", "--stripe-js-url", "https://js.stripe.com/v3/"},
        std::vector<std::string>{"--billing", "none"}}) {
    CAPTURE(flags.back());
    server_process srv(flags);
    for (const std::string& path : kDashboardPaths) {
      INFO(path);
      CHECK(call(srv.port(), "GET", path).header("Content-Security-Policy") == kNoStripePolicy);
    }
    CHECK(call(srv.port(), "GET", "/dashboard/settings").body ==
          json::parse(R"({"triggers_url":null,"stripe_js_url":null})"));
    CHECK(srv.stop().clean());
  }
}

TEST_CASE("--stripe-js-url is https, or http on a loopback host; anything else stops the server with the reason") {
  struct case_ {
    std::string url;
    std::string reason;
  };
  const std::vector<case_> cases = {
      {"http://js.example.org/v3/", "http only on a loopback host"},
      {"http://127.0.0.1.example.org/v3/", "http only on a loopback host"},
      {"ftp://127.0.0.1/v3/", "expected an https:// URL"},
      {"javascript:alert(1)", "expected an https:// URL"},
      {"https://user@js.stripe.com/v3/", "host"},
      {"https://js.stripe.com;script-src */v3/", "host"},
      {"https:///v3/", "host"},
      {"https://js.stripe.com/v3/ x", "path"},
  };
  for (const case_& c : cases) {
    CAPTURE(c.url);
    const finished_run run = run_to_exit({"--billing", "none", "--stripe-js-url", c.url});
    CHECK(run.status.exited);
    CHECK(run.status.code == 2);
    CHECK(run.stderr_text.find("--stripe-js-url") != std::string::npos);
    CHECK(run.stderr_text.find(c.reason) != std::string::npos);
  }
}

}  // namespace enact::itest
