// SPDX-License-Identifier: Apache-2.0
// core_client's retries, timeouts, refused URLs and credentials, and the JSON form of its types.
#include "client_test.hpp"

using namespace client_test;

TEST_CASE("a GET is retried on 503 and then succeeds") {
  fake_server server;
  server.on([](const httplib::Request&, httplib::Response& res, size_t n) {
    if (n <= 2) {
      res.status = 503;
      res.set_content(R"({"error": {"code": "unavailable", "message": "pool saturated"}})", "application/json");
      return;
    }
    res.set_content(R"({"api_payers": []})", "application/json");
  });
  auto o = options_for(server);
  o.max_retries = 2;
  std::vector<milliseconds> waits;
  o.sleep = [&](milliseconds d) {
    waits.push_back(d);
  };
  core_client c(o);
  CHECK(c.get_api_payers().empty());
  CHECK(server.requests().size() == 3);
  CHECK(waits.size() == 2);

  // One retry fewer than needed: the third answer is never asked for.
  server.clear();
  waits.clear();
  server.on([](const httplib::Request&, httplib::Response& res, size_t) {
    res.status = 502;
    res.set_content("upstream down", "text/plain");
  });
  o.max_retries = 1;
  core_client c1(o);
  try {
    (void)c1.get_api_payers();
    FAIL("no exception");
  } catch (const api_error& e) {
    CHECK(e.errc() == api_errc::unavailable);
    CHECK(e.status() == 502);
  }
  CHECK(server.requests().size() == 2);
  CHECK(waits.size() == 1);
}

TEST_CASE("a POST is never retried") {
  fake_server server;
  struct case_ {
    int status;
    std::string_view code;
  };
  const case_ cases[] = {{503, "unavailable"}, {429, "rate_limited"}, {502, "unavailable"}};
  auto o = options_for(server);
  o.max_retries = 5;
  std::vector<milliseconds> waits;
  o.sleep = [&](milliseconds d) {
    waits.push_back(d);
  };
  core_client c(o, secret(kApiKey));
  for (const auto& tc : cases) {
    CAPTURE(tc.status);
    server.clear();
    server.on([&](const httplib::Request&, httplib::Response& res, size_t) {
      res.status = tc.status;
      res.set_header("Retry-After", "1");
      res.set_content(R"({"error": {"code": ")" + std::string(tc.code) + R"(", "message": "busy"}})",
                      "application/json");
    });
    try {
      (void)c.add_group({"g", std::nullopt, {}, {}});
      FAIL("no exception");
    } catch (const api_error& e) {
      CHECK(e.code_name() == tc.code);
    }
    CHECK(server.requests().size() == 1);
  }
  CHECK(waits.empty());

  // Nor when the connection fails.
  o.base_url = "http://127.0.0.1:1";
  core_client unreachable(o, secret(kApiKey));
  CHECK_THROWS_AS((void)unreachable.create_wallet({"w", std::nullopt}), api_error);
  CHECK(waits.empty());
}

TEST_CASE("429 with Retry-After waits that long, up to the cap") {
  struct case_ {
    std::string retry_after;
    milliseconds cap;
    milliseconds expected_wait;
  };
  const case_ cases[] = {
      {"7", milliseconds(60000), milliseconds(7000)},
      {"7", milliseconds(50), milliseconds(50)},
      {"0", milliseconds(50), milliseconds(0)},
  };
  for (const auto& tc : cases) {
    CAPTURE(tc.retry_after);
    CAPTURE(tc.cap.count());
    fake_server server;
    server.on([&](const httplib::Request&, httplib::Response& res, size_t n) {
      if (n == 1) {
        res.status = 429;
        res.set_header("Retry-After", tc.retry_after);
        res.set_content(R"({"error": {"code": "rate_limited", "message": "slow down"}})", "application/json");
        return;
      }
      res.set_content(R"({"balance_credits": 5, "currency": "usd_cents"})", "application/json");
    });
    auto o = options_for(server);
    o.max_retry_after = tc.cap;
    std::vector<milliseconds> waits;
    o.sleep = [&](milliseconds d) {
      waits.push_back(d);
    };
    core_client c(o, secret(kApiKey));
    CHECK(c.balance().balance_credits == 5);
    CHECK(server.requests().size() == 2);
    REQUIRE(waits.size() == 1);
    CHECK(waits[0] == tc.expected_wait);
  }

  // With retries exhausted, the error carries Retry-After for the caller.
  fake_server server;
  server.on([](const httplib::Request&, httplib::Response& res, size_t) {
    res.status = 429;
    res.set_header("Retry-After", "12");
    res.set_content(R"({"error": {"code": "rate_limited", "message": "slow down"}})", "application/json");
  });
  auto o = options_for(server);
  o.max_retries = 0;
  core_client c(o, secret(kApiKey));
  try {
    (void)c.balance();
    FAIL("no exception");
  } catch (const api_error& e) {
    CHECK(e.errc() == api_errc::rate_limited);
    REQUIRE(e.retry_after());
    CHECK(e.retry_after()->count() == 12);
  }
}

TEST_CASE("an answer slower than the read timeout is a timeout") {
  fake_server server;
  server.on([](const httplib::Request&, httplib::Response& res, size_t) {
    std::this_thread::sleep_for(milliseconds(1000));
    res.set_content(R"({"api_payers": []})", "application/json");
  });
  auto o = options_for(server);
  o.read_timeout = milliseconds(150);
  o.max_retries = 0;
  core_client c(o);
  try {
    (void)c.get_api_payers();
    FAIL("no exception");
  } catch (const api_error& e) {
    CHECK(e.errc() == api_errc::timeout);
    CHECK(e.code_name() == "timeout");
    CHECK(e.status() == 0);
  }
}

TEST_CASE("an unreachable server is connection_failed; GETs retry it, with backoff") {
  client_options o;
  o.base_url = "http://127.0.0.1:1";
  o.max_retries = 3;
  o.retry_backoff = milliseconds(100);
  std::vector<milliseconds> waits;
  o.sleep = [&](milliseconds d) {
    waits.push_back(d);
  };
  core_client c(o, secret(kApiKey));
  try {
    (void)c.account();
    FAIL("no exception");
  } catch (const api_error& e) {
    CHECK(e.errc() == api_errc::connection_failed);
    CHECK(e.status() == 0);
    CHECK(e.request_id().empty());
    CHECK(std::string(e.what()).find("127.0.0.1:1") != std::string::npos);
  }
  REQUIRE(waits.size() == 3);
  // Exponential with jitter: attempt n waits between half and all of 100 ms * 2^n.
  for (size_t i = 0; i < waits.size(); ++i) {
    CAPTURE(i);
    CHECK(waits[i] >= milliseconds(50 << i));
    CHECK(waits[i] <= milliseconds(100 << i));
  }
}

TEST_CASE("https to a plain-HTTP server, or with a missing CA file, fails to connect") {
  fake_server server;
  serve_canned(server);
  auto o = options_for(server);
  o.max_retries = 0;
  o.base_url = "https://127.0.0.1:" + std::to_string(server.port());
  core_client c(o);
  try {
    (void)c.get_api_payers();
    FAIL("no exception");
  } catch (const api_error& e) {
    CHECK(e.errc() == api_errc::connection_failed);
  }
  o.ca_file = "/nonexistent/ca.pem";
  core_client c2(o);
  try {
    (void)c2.get_api_payers();
    FAIL("no exception");
  } catch (const api_error& e) {
    CHECK(e.errc() == api_errc::connection_failed);
  }
}

TEST_CASE("base URLs the client refuses") {
  const std::string_view bad[] = {
      "",
      "127.0.0.1:8080",
      "ftp://example.org",
      "http://",
      "http://:8080",
      "http://user:pass@example.org",
      "http://example.org:0",
      "http://example.org:65536",
      "http://example.org:x",
      "http://example.org/?q=1",
      "http://example.org/#frag",
      "http://[::1",
  };
  for (const auto url : bad) {
    CAPTURE(url);
    client_options o;
    o.base_url = std::string(url);
    try {
      core_client c(o);
      FAIL("accepted");
    } catch (const api_error& e) {
      CHECK(e.errc() == api_errc::invalid_request);
      CHECK(e.status() == 0);
      CHECK(std::string(e.what()).find("base_url") != std::string::npos);
    }
  }
  for (const auto url :
       {"http://localhost", "https://example.org:8443/enact", "http://[::1]:80", "HTTP://Example.org/"}) {
    CAPTURE(url);
    client_options o;
    o.base_url = url;
    CHECK_NOTHROW((void)core_client{o});
  }
}

TEST_CASE("no credential ever appears in an exception message") {
  fake_server server;
  // A careless server that echoes everything it got, in every part of the error body.
  server.on([](const httplib::Request& req, httplib::Response& res, size_t) {
    const std::string key = req.get_header_value("X-Api-Key");
    json::object err;
    err["code"] = "unauthenticated";
    err["message"] = "bad key " + key + " with body " + req.body;
    err["details"] = json::object{{"key", key}, {"body", req.body}, {"list", json::array{key}}};
    res.status = 401;
    res.set_content(json::serialize(json::object{{"error", err}}), "application/json");
  });
  auto o = options_for(server);
  o.max_retries = 0;
  core_client c(o, secret(kApiKey));
  const Secret usage = secret(kUsageKey);

  std::vector<std::function<void()>> calls = {
      [&] { (void)c.account(); },
      [&] { (void)c.list_api_keys(); },
      [&] {
        (void)c.update_usage_api_key(usage, {"n", std::nullopt, std::nullopt, {}});
      },
      [&] { (void)c.update_usage_api_key_metadata(usage, "n", "d"); },
      [&] { (void)c.remove_usage_api_key(usage); },
  };
  for (size_t i = 0; i < calls.size(); ++i) {
    CAPTURE(i);
    try {
      calls[i]();
      FAIL("no exception");
    } catch (const api_error& e) {
      CHECK(e.errc() == api_errc::unauthenticated);
      const std::string all = std::string(e.what()) + e.message() + json::serialize(e.details());
      CHECK(all.find(kApiKey) == std::string::npos);
      CHECK(all.find(kUsageKey) == std::string::npos);
      CHECK(all.find("[redacted]") != std::string::npos);
    }
  }

  // The key was sent, though: redaction is of the message only.
  CHECK(server.requests().front().header("X-Api-Key") == kApiKey);

  // Transport failures and bad answers name no key either.
  o.base_url = "http://127.0.0.1:1";
  core_client unreachable(o, secret(kApiKey));
  try {
    (void)unreachable.remove_usage_api_key(usage);
    FAIL("no exception");
  } catch (const api_error& e) {
    CHECK(std::string(e.what()).find(kApiKey) == std::string::npos);
    CHECK(std::string(e.what()).find(kUsageKey) == std::string::npos);
  }
  server.on([](const httplib::Request&, httplib::Response& res, size_t) {
    res.set_content(R"({"api_key": 12, "wallet_address": ")" + kA1 + R"(", "leak": ")" + kApiKey + R"("})",
                    "application/json");
  });
  core_client c2(options_for(server), secret(kApiKey));
  try {
    (void)c2.new_account({"acme", std::nullopt, std::nullopt});
    FAIL("no exception");
  } catch (const api_error& e) {
    CHECK(e.errc() == api_errc::bad_response);
    CHECK(std::string(e.what()).find("api_key") != std::string::npos);
    CHECK(std::string(e.what()).find(kApiKey) == std::string::npos);
  }
}

TEST_CASE("an API key that cannot travel in a header is refused before anything is sent") {
  fake_server server;
  serve_canned(server);
  for (const std::string& key : {kApiKey + "\r\nX-Injected: 1", kApiKey + " ", std::string("\x01")}) {
    core_client c(options_for(server), secret(key));
    try {
      (void)c.account();
      FAIL("no exception");
    } catch (const api_error& e) {
      CHECK(e.errc() == api_errc::invalid_request);
      CHECK(e.status() == 0);
      CHECK(std::string(e.what()).find(kApiKey) == std::string::npos);
    }
  }
  CHECK(server.requests().empty());
}

TEST_CASE("request bodies and answers convert to and from JSON symmetrically") {
  // value_from of a decoded answer writes the canonical wire form (checksummed addresses).
  const group g = json::value_to<group>(parse(kGroup));
  const json::value out = json::value_from(g);
  CHECK(out.at("pkp_ids_permitted").at(1) == json::value(checksum(kA2)));
  CHECK(json::value_to<group>(out).pkp_ids_permitted == g.pkp_ids_permitted);
  const page<wallet> p = json::value_to<page<wallet>>(parse(page_of(kWallet)));
  CHECK(json::value_to<page<wallet>>(json::value_from(p)).items.at(0).derivation_path == h256(kH1));
  // A permission set round-trips through the usage-key listing form.
  usage_key_info k;
  k.hash = h256(kH2);
  k.permissions.remove_pkp_from_groups = {0};
  CHECK(json::value_to<usage_key_info>(json::value_from(k)).permissions == k.permissions);
}
