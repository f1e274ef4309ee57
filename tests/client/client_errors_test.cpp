// SPDX-License-Identifier: Apache-2.0
// core_client's decoding of incomplete answers and its mapping of API errors (docs/protocol.md §0).
#include "client_test.hpp"

using namespace client_test;

TEST_CASE("answers with unknown fields decode; missing or ill-typed fields are bad_response") {
  fake_server server;
  core_client c(options_for(server), secret(kApiKey));
  struct case_ {
    std::string_view answer;
    std::string_view field;  // named in the message
  };
  const case_ cases[] = {
      {R"({"chain_id": 1, "chain_name": "x"})", "contract_address"},
      {R"({"chain_id": -1, "contract_address": "0x1111111111111111111111111111111111111111"})", "chain_id"},
      {R"({"chain_id": 1.5, "contract_address": "0x1111111111111111111111111111111111111111"})", "chain_id"},
      {R"({"chain_id": 1, "contract_address": "0x1234"})", "contract_address"},
      {R"({"chain_id": 1, "contract_address": 7})", "contract_address"},
      {R"([1, 2])", "chain config"},
  };
  for (const auto& tc : cases) {
    CAPTURE(tc.answer);
    server.on([&](const httplib::Request&, httplib::Response& res, size_t) {
      res.set_content(std::string(tc.answer), "application/json");
    });
    try {
      (void)c.get_node_chain_config();
      FAIL("no exception");
    } catch (const api_error& e) {
      CHECK(e.errc() == api_errc::bad_response);
      CHECK(e.status() == 200);
      CHECK(e.code_name() == "bad_response");
      CHECK(std::string(e.what()).find(tc.field) != std::string::npos);
      CHECK_FALSE(e.request_id().empty());
    }
  }
  // Chain id as a decimal string, unknown fields anywhere: accepted.
  server.on([](const httplib::Request&, httplib::Response& res, size_t) {
    res.set_content(
        R"({"chain_id": "31337", "contract_address": ")" + kA1 + R"(", "chain_name": "anvil", "rpc": {"x": null}})",
        "application/json");
  });
  CHECK(c.get_node_chain_config().chain_id == 31337);

  // Errors inside list items name the item.
  server.on([](const httplib::Request&, httplib::Response& res, size_t) {
    res.set_content(R"({"items": [)" + kGroup + R"(, {"group_id": 8, "pkp_ids_permitted": ["0x12"],
                        "cid_hashes_permitted": []}], "page_number": 1, "page_size": 20, "total": 2})",
                    "application/json");
  });
  try {
    (void)c.list_groups();
    FAIL("no exception");
  } catch (const api_error& e) {
    CHECK(e.errc() == api_errc::bad_response);
    CHECK(std::string(e.what()).find("items[1].pkp_ids_permitted[0]") != std::string::npos);
  }

  // A 2xx answer that is not JSON at all.
  server.on(
      [](const httplib::Request&, httplib::Response& res, size_t) { res.set_content("<html>ok</html>", "text/html"); });
  try {
    (void)c.account();
    FAIL("no exception");
  } catch (const api_error& e) {
    CHECK(e.errc() == api_errc::bad_response);
    CHECK(e.request_id() == "req-" + std::to_string(server.requests().size()));
  }
}

// docs/protocol.md §0: every error code with its status.
TEST_CASE("every API error code maps to api_errc with status, message, details and request id") {
  struct case_ {
    int status;
    std::string_view code;
    api_errc errc;
  };
  const case_ cases[] = {
      {400, "invalid_request", api_errc::invalid_request},
      {400, "typed_data_invalid", api_errc::typed_data_invalid},
      {400, "chain_id_mismatch", api_errc::chain_id_mismatch},
      {401, "unauthenticated", api_errc::unauthenticated},
      {401, "signature_invalid", api_errc::signature_invalid},
      {401, "signature_expired", api_errc::signature_expired},
      {402, "insufficient_credits", api_errc::insufficient_credits},
      {403, "forbidden", api_errc::forbidden},
      {404, "not_found", api_errc::not_found},
      {409, "conflict", api_errc::conflict},
      {413, "payload_too_large", api_errc::payload_too_large},
      {422, "action_failed", api_errc::action_failed},
      {429, "rate_limited", api_errc::rate_limited},
      {503, "unavailable", api_errc::unavailable},
      {500, "internal", api_errc::internal},
  };
  fake_server server;
  auto o = options_for(server);
  o.max_retries = 0;
  core_client c(o, secret(kApiKey));
  for (const auto& tc : cases) {
    CAPTURE(tc.code);
    server.on([&](const httplib::Request&, httplib::Response& res, size_t n) {
      res.status = tc.status;
      res.set_header("X-Request-Id", "rid-" + std::string(tc.code) + "-" + std::to_string(n));
      res.set_content(R"({"error": {"code": ")" + std::string(tc.code) +
                          R"(", "message": "it went wrong", "details": {"kind": "timeout", "n": 3}}})",
                      "application/json");
    });
    // Both a GET and a POST map the same way.
    for (int kind = 0; kind < 2; ++kind) {
      try {
        if (kind == 0)
          (void)c.list_groups();
        else
          (void)c.remove_group(1);
        FAIL("no exception");
      } catch (const api_error& e) {
        CHECK(e.errc() == tc.errc);
        CHECK(e.code() == make_error_code(tc.errc));
        CHECK(e.status() == tc.status);
        CHECK(e.code_name() == tc.code);
        CHECK(e.message() == "it went wrong");
        CHECK(std::string(e.what()) == std::string(tc.code) + ": it went wrong");
        CHECK(e.details() == parse(R"({"kind": "timeout", "n": 3})"));
        CHECK(e.request_id() == "rid-" + std::string(tc.code) + "-" + std::to_string(server.requests().size()));
      }
    }
  }
}

TEST_CASE("errors without a known code map by status") {
  struct case_ {
    int status;
    std::string body;
    api_errc errc;
    std::string_view code_name;
  };
  const case_ cases[] = {
      {502, "<html>bad gateway</html>", api_errc::unavailable, "unavailable"},
      {504, "", api_errc::unavailable, "unavailable"},
      {404, "not json", api_errc::not_found, "not_found"},
      {400, R"({"error": {"code": "brand_new_code", "message": "m"}})", api_errc::invalid_request, "brand_new_code"},
      {418, R"({"error": "teapot"})", api_errc::bad_response, "bad_response"},
      {301, "", api_errc::bad_response, "bad_response"},
  };
  fake_server server;
  auto o = options_for(server);
  o.max_retries = 0;
  core_client c(o);
  for (const auto& tc : cases) {
    CAPTURE(tc.status);
    server.on([&](const httplib::Request&, httplib::Response& res, size_t) {
      res.status = tc.status;
      res.set_content(tc.body, "text/plain");
    });
    try {
      (void)c.get_api_payers();
      FAIL("no exception");
    } catch (const api_error& e) {
      CHECK(e.errc() == tc.errc);
      CHECK(e.status() == tc.status);
      CHECK(e.code_name() == tc.code_name);
      CHECK_FALSE(e.message().empty());
      CHECK(e.details().is_null());
    }
  }
}
