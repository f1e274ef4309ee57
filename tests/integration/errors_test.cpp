// SPDX-License-Identifier: Apache-2.0
// Every row of docs/protocol.md §0's error table that applies to the core endpoints, against the real
// server: status, code, the `{"error": {"code", "message"}}` body, nothing written by a refused
// request, X-Request-Id on every response with one log line carrying it (route, status, latency),
// and no API key value in any log line.
#include <doctest/doctest.h>

#include <cstdint>
#include <thread>

#include "enact/eip712/envelope.hpp"
#include "steps.hpp"

namespace enact::itest {
namespace {

/// A client that remembers every response, so that a test can check at the end that each one
/// carried an X-Request-Id and got exactly one log line.
class recording_client {
 public:
  explicit recording_client(const server_process& srv) : srv_(srv), c_(srv.client()) {}

  response get(const std::string& path, const httplib::Headers& h = {}) {
    return keep(c_.get(path, h), "/core/v1" + path);
  }
  response post(const std::string& path, const json::value& body, const httplib::Headers& h = {}) {
    return keep(c_.post(path, body, h), "/core/v1" + path);
  }
  response post_raw(const std::string& path, const std::string& body, const httplib::Headers& h = {}) {
    return keep(c_.post_raw(path, body, h), "/core/v1" + path);
  }
  response raw(const std::string& method, const std::string& full_path, const std::string& body = {}) {
    return keep(c_.request(method, full_path, body), full_path);
  }
  http_client& plain() { return c_; }

  /// Every recorded response has an X-Request-Id and exactly one request log line with its
  /// route, status and latency.
  void check_all_logged() const {
    for (const auto& [r, route] : seen_)
      check_logged(srv_, r, route);
  }
  size_t count() const { return seen_.size(); }

 private:
  response keep(response r, std::string route) {
    if (const auto q = route.find('?'); q != std::string::npos)
      route.resize(q);
    seen_.emplace_back(r, std::move(route));
    return r;
  }
  const server_process& srv_;
  http_client c_;
  std::vector<std::pair<response, std::string>> seen_;
};

/// The account state a refused request must leave untouched.
struct state_counts {
  size_t groups, wallets, actions, keys;
  uint64_t balance;
  friend bool operator==(const state_counts&, const state_counts&) = default;
};
state_counts counts(http_client& c, const httplib::Headers& owner) {
  return state_counts{list_all(c, "/list_groups", owner).size(), list_all(c, "/list_wallets", owner).size(),
                      list_all(c, "/list_actions", owner).size(), list_all(c, "/list_api_keys", owner).size(),
                      balance_of(c, owner)};
}

struct bad_request {
  const char* what;
  const char* method;
  std::string path;                // under /core/v1, with query
  std::string body;                // raw
  std::string message_names = {};  // a word the message must contain
};

}  // namespace

TEST_CASE("400 invalid_request: bodies, fields, pages, CIDs, addresses, hashes, query, credentials") {
  server_process srv({"--dev"});
  recording_client c(srv);
  const account_keys acct = create_account(c.plain(), "bad-requests");
  const usage_keys uk = create_usage_key(c.plain(), acct.auth(), {{"name", "u"}});
  const response g = c.post("/add_group", json::object{{"name", "g"}}, acct.auth());
  ITEST_REQUIRE_STATUS(g, 200);
  const std::string gid = std::to_string(u_of(g.body, "group_id"));
  const std::string cid = cid_of_code("Enact.setResponse(0)");
  const std::string h = hashed_cid_hex(cid);
  const state_counts before = counts(c.plain(), acct.auth());

  const std::string long_name(300, 'n');
  const std::vector<bad_request> rows = {
      // malformed JSON
      {"not JSON", "POST", "/add_group", "{not json"},
      {"empty body", "POST", "/add_group", ""},
      {"JSON array", "POST", "/add_group", "[1,2]"},
      {"trailing garbage", "POST", "/add_group", R"({"name":"x"} y)"},
      {"truncated", "POST", "/add_usage_api_key", R"({"name":"x",)"},
      {"invalid UTF-8", "POST", "/add_group", "{\"name\":\"\xff\"}"},
      // missing fields
      {"missing name", "POST", "/add_group", "{}", "name"},
      {"missing CID", "POST", "/add_action", R"({"name":"x"})", "action_ipfs_cid"},
      {"missing sets", "POST", "/update_group", R"({"group_id":)" + gid + R"(,"name":"x","description":""})"},
      {"missing amount", "POST", "/billing/create_payment_intent", "{}", "amount_cents"},
      {"missing usage key", "POST", "/remove_usage_api_key", "{}", "usage_api_key"},
      // unknown fields
      {"unknown field", "POST", "/add_group", R"({"name":"x","colour":"red"})", "colour"},
      {"misspelt permission", "POST", "/add_usage_api_key", R"({"name":"k","can_create_group":true})",
       "can_create_group"},
      {"unknown field on update", "POST", "/update_usage_api_key",
       R"({"usage_api_key":")" + uk.value + R"(","name":"k","execute_in_group":[0]})", "execute_in_group"},
      {"unknown field, new account", "POST", "/new_account", R"({"name":"x","admin":"0x00"})", "admin"},
      // ill-typed fields
      {"name a number", "POST", "/add_group", R"({"name":5})", "name"},
      {"name empty", "POST", "/add_group", R"({"name":""})", "name"},
      {"name too long", "POST", "/add_group", R"({"name":")" + long_name + R"("})", "name"},
      {"flag a string", "POST", "/add_usage_api_key", R"({"name":"k","can_create_groups":"yes"})", "can_create_groups"},
      {"negative group id", "POST", "/add_usage_api_key", R"({"name":"k","execute_in_groups":[-1]})",
       "execute_in_groups"},
      {"fractional group id", "POST", "/add_usage_api_key", R"({"name":"k","execute_in_groups":[1.5]})",
       "execute_in_groups"},
      {"list a string", "POST", "/add_usage_api_key", R"({"name":"k","execute_in_groups":"0"})", "execute_in_groups"},
      {"expiration in the past", "POST", "/add_usage_api_key", R"({"name":"k","expiration":1000})", "expiration"},
      {"amount a string", "POST", "/billing/create_payment_intent", R"({"amount_cents":"500"})", "amount_cents"},
      {"amount fractional", "POST", "/billing/create_payment_intent", R"({"amount_cents":500.5})", "amount_cents"},
      {"amount below 500", "POST", "/billing/create_payment_intent", R"({"amount_cents":499})", "amount_cents"},
      {"group id a bool", "POST", "/remove_group", R"({"group_id":true})", "group_id"},
      {"group id text", "POST", "/remove_group", R"({"group_id":"abc"})", "group_id"},
      {"group id negative", "POST", "/remove_group", R"({"group_id":-1})", "group_id"},
      {"group id 0 (the wildcard)", "POST", "/remove_group", R"({"group_id":0})", "group_id"},
      {"group id 0 as text", "POST", "/add_pkp_to_group",
       R"({"group_id":"0","pkp_id":")" + acct.wallet_address + R"("})", "group_id"},
      {"code not a string", "POST", "/upload_action", R"({"code":42})", "code"},
      {"svc ipfs id of an object", "POST", "/get_svc_action_ipfs_id", R"({"code":"x"})"},
      // bad pages
      {"page_size 0", "GET", "/list_groups?page_size=0", "", "page_size"},
      {"page_size 101", "GET", "/list_groups?page_size=101", "", "page_size"},
      {"page_size abc", "GET", "/list_groups?page_size=abc", "", "page_size"},
      {"page_size -1", "GET", "/list_wallets?page_size=-1", "", "page_size"},
      {"page_size empty", "GET", "/list_actions?page_size=", "", "page_size"},
      {"page_number 0", "GET", "/list_groups?page_number=0", "", "page_number"},
      {"page_number abc", "GET", "/list_api_keys?page_number=abc", "", "page_number"},
      {"page_number 1.5", "GET", "/list_wallets_in_group?group_id=" + gid + "&page_number=1.5", "", "page_number"},
      // bad CIDs
      {"CID garbage", "POST", "/add_action", R"({"action_ipfs_cid":"QmNotACid","name":"x"})", "action_ipfs_cid"},
      {"CID empty", "POST", "/add_action", R"({"action_ipfs_cid":"","name":"x"})", "action_ipfs_cid"},
      {"CID one char short", "POST", "/add_action",
       R"({"action_ipfs_cid":")" + cid.substr(0, cid.size() - 1) + R"(","name":"x"})", "action_ipfs_cid"},
      {"hash given as CID", "POST", "/add_action_to_group",
       R"({"group_id":)" + gid + R"(,"action_ipfs_cid":")" + h + R"("})", "action_ipfs_cid"},
      // bad addresses
      {"address short", "POST", "/add_pkp_to_group", R"({"group_id":)" + gid + R"(,"pkp_id":"0x1234"})", "pkp_id"},
      {"address without 0x", "POST", "/add_pkp_to_group",
       R"({"group_id":)" + gid + R"(,"pkp_id":")" + acct.wallet_address.substr(2) + R"(00"})", "pkp_id"},
      {"address non-hex", "POST", "/remove_pkp_from_group",
       R"({"group_id":)" + gid + R"(,"pkp_id":"0x)" + std::string(40, 'z') + R"("})", "pkp_id"},
      {"address in a set", "POST", "/add_group", R"({"name":"x","pkp_ids_permitted":["nope"]})", "pkp_ids_permitted"},
      // bad hashes
      {"hash short", "POST", "/delete_action", R"({"hashed_cid":"0x12"})", "hashed_cid"},
      {"hash without 0x", "POST", "/update_action_metadata",
       R"({"hashed_cid":")" + h.substr(2) + R"(","name":"x","description":""})", "hashed_cid"},
      {"hash non-hex", "POST", "/remove_action_from_group",
       R"({"group_id":)" + gid + R"(,"hashed_cid":"0x)" + std::string(64, 'g') + R"("})", "hashed_cid"},
      {"hash in a set", "POST", "/add_group", R"({"name":"x","cid_hashes_permitted":["0xabc"]})",
       "cid_hashes_permitted"},
      // query parameters
      {"unknown query parameter", "GET", "/list_groups?foo=1", "", "foo"},
      {"query on a plain GET", "GET", "/account?x=1", "", "x"},
      {"misspelt page parameter", "GET", "/list_wallets?pagesize=3", "", "pagesize"},
      {"misspelt group parameter", "GET", "/list_actions?group=1", "", "group"},
      {"missing group_id", "GET", "/list_wallets_in_group", "", "group_id"},
      {"get_group without group_id", "GET", "/get_group", "", "group_id"},
      {"get_group of the wildcard", "GET", "/get_group?group_id=0", "", "group_id"},
      {"group_id not a number", "GET", "/list_actions?group_id=abc", "", "group_id"},
  };
  for (const auto& row : rows) {
    INFO(std::string(row.what) << ": " << std::string(row.method) << " " << row.path << " " << row.body.substr(0, 200));
    const bool is_public = row.path == "/new_account" || row.path == "/get_svc_action_ipfs_id";
    const httplib::Headers creds = is_public ? httplib::Headers{} : acct.auth();
    const response r =
        std::string_view(row.method) == "GET" ? c.get(row.path, creds) : c.post_raw(row.path, row.body, creds);
    check_error_shape(r, 400, "invalid_request");
    if (!row.message_names.empty())
      CHECK_MESSAGE(r.error_message().find(row.message_names) != std::string::npos, r.error_message());
  }

  // Both credential headers: different keys are refused; the same key twice is fine.
  {
    httplib::Headers both = acct.auth();
    both.emplace("Authorization", "Bearer " + uk.value);
    check_error_shape(c.get("/account", both), 400, "invalid_request");
    check_error_shape(c.post("/add_group", json::object{{"name", "x"}}, both), 400, "invalid_request");
    httplib::Headers same = acct.auth();
    same.emplace("Authorization", "Bearer " + acct.api_key);
    ITEST_CHECK_STATUS(c.get("/account", same), 200);
  }

  // A request line over httplib's limit is refused before routing, with the same error body and
  // a request id.
  {
    const response r = c.plain().get("/list_groups?" + std::string(9000, 'a'), acct.auth());
    check_error_shape(r, 400, "invalid_request");
    const auto lines = srv.await_request_lines(r.header("X-Request-Id"));
    REQUIRE(lines.size() == 1);
    CHECK(lines[0].at("status").to_number<int>() == 400);
  }

  // Nothing was written by any refused request.
  CHECK(counts(c.plain(), acct.auth()) == before);

  c.check_all_logged();
  CHECK(srv.stop().clean());
  check_no_secret_logged(srv, {acct.api_key, uk.value});
}

TEST_CASE("401 unauthenticated: missing, unknown, deleted, expired credentials") {
  server_process srv({"--dev"});
  recording_client c(srv);
  const account_keys acct = create_account(c.plain(), "auth");
  const usage_keys deleted =
      create_usage_key(c.plain(), acct.auth(), {{"name", "deleted"}, {"can_create_groups", true}});
  ITEST_REQUIRE_STATUS(c.post("/remove_usage_api_key", json::object{{"usage_api_key", deleted.value}}, acct.auth()),
                       200);
  const auto [expiring, expires_at] = [&] {
    const int64_t at = unix_now() + 2;
    return std::pair{create_usage_key(c.plain(), acct.auth(),
                                      {{"name", "short-lived"}, {"expiration", at}, {"can_create_groups", true}}),
                     at};
  }();
  // Before its expiration the key works.
  ITEST_CHECK_STATUS(c.get("/account", expiring.auth()), 200);
  const state_counts before = counts(c.plain(), acct.auth());

  const std::string unknown = codec::base64::encode(crypto::keccak256(std::string_view("never issued")));
  struct cred_case {
    const char* what;
    httplib::Headers headers;
  };
  const std::vector<cred_case> creds = {
      {"no credential", {}},
      {"unknown key", api_key(unknown)},
      {"unknown key as bearer", bearer(unknown)},
      {"not base64 at all", api_key("not a key")},
      {"empty X-Api-Key", api_key("")},
      {"Authorization without Bearer", {{"Authorization", "Basic " + acct.api_key}}},
      {"deleted usage key", deleted.auth()},
      {"deleted usage key as bearer", bearer(deleted.value)},
  };
  const auto try_all = [&](const cred_case& cc) {
    INFO(std::string(cc.what));
    check_error_shape(c.get("/account", cc.headers), 401, "unauthenticated");
    check_error_shape(c.get("/list_groups", cc.headers), 401, "unauthenticated");
    check_error_shape(c.post("/add_group", json::object{{"name", "x"}}, cc.headers), 401, "unauthenticated");
    check_error_shape(c.get("/billing/balance", cc.headers), 401, "unauthenticated");
    check_error_shape(c.post("/billing/create_payment_intent", json::object{{"amount_cents", 500}}, cc.headers), 401,
                      "unauthenticated");
  };
  for (const auto& cc : creds)
    try_all(cc);

  // The expiring key stops working once its expiration has passed.
  while (unix_now() <= expires_at)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  try_all({"expired usage key", expiring.auth()});
  // Nothing was written by any refused request, and the account key is unaffected.
  CHECK(counts(c.plain(), acct.auth()) == before);
  ITEST_CHECK_STATUS(c.get("/account", acct.auth()), 200);

  // Expirations are unsigned unix seconds: the largest one is far in the future, not negative.
  const usage_keys lasting =
      create_usage_key(c.plain(), acct.auth(), {{"name", "lasting"}, {"expiration", UINT64_MAX}});
  ITEST_CHECK_STATUS(c.get("/account", lasting.auth()), 200);
  bool listed = false;
  for (const auto& k : list_all(c.plain(), "/list_api_keys", acct.auth()))
    if (k.at("hash").as_string() == lasting.hash) {
      listed = true;
      CHECK(k.at("expiration").to_number<uint64_t>() == UINT64_MAX);
    }
  CHECK(listed);

  c.check_all_logged();
  CHECK(srv.stop().clean());
  check_no_secret_logged(srv, {acct.api_key, deleted.value, expiring.value, lasting.value});
}

TEST_CASE(
    "X-Wallet-Auth errors: typed_data_invalid, signature_invalid, signature_expired, "
    "chain_id_mismatch") {
  server_process srv;
  recording_client c(srv);
  const uint64_t chain_id = env_of(srv).chain_id;
  const account_keys acct = create_account(c.plain(), "wallet");
  const Secret key = key_secret(acct.api_key);
  const auto header = [](const eip712::envelope::signed_envelope& env) {
    return httplib::Headers{{"X-Wallet-Auth", eip712::envelope::encode_wallet_auth(env)}};
  };
  const chain_env e = env_of(srv);
  // Version 2, bound to GET /core/v1/billing/balance (docs/protocol.md §2), for chain `chain`.
  const auto signed_for = [&](eip712::envelope::kind k, uint64_t chain, int64_t at) {
    const eip712::envelope::deployment d{chain, e.registry};
    if (k == eip712::envelope::kind::billing_auth)
      return eip712::envelope::sign_billing(d, key, static_cast<uint64_t>(at),
                                            eip712::envelope::bind_request("GET", "/core/v1/billing/balance", ""))
          .value();
    return eip712::envelope::sign_v2(k, d, key, static_cast<uint64_t>(at)).value();
  };
  ITEST_CHECK_STATUS(
      c.get("/billing/balance", header(signed_for(eip712::envelope::kind::billing_auth, chain_id, unix_now()))), 200);

  // A signature made for another flow (primaryType CreateWallet) is refused.
  check_error_shape(
      c.get("/billing/balance", header(signed_for(eip712::envelope::kind::create_wallet, chain_id, unix_now()))), 400,
      "typed_data_invalid");
  {
    // Non-canonical types: a field renamed.
    auto env = signed_for(eip712::envelope::kind::billing_auth, chain_id, unix_now());
    env.typed_data["types"].as_object()["BillingAuth"].as_array()[1].as_object()["name"] = "issued";
    check_error_shape(c.get("/billing/balance", header(env)), 400, "typed_data_invalid");
  }
  {
    // Over 4096 bytes of typed data.
    auto env = signed_for(eip712::envelope::kind::billing_auth, chain_id, unix_now());
    env.typed_data["domain"].as_object()["name"] = std::string(5000, 'x');
    const response r = c.get("/billing/balance", header(env));
    CHECK(r.status == 400);
    CHECK((r.error_code() == "typed_data_invalid" || r.error_code() == "invalid_request"));
  }
  {
    // The signer differs from message.address.
    auto env = signed_for(eip712::envelope::kind::billing_auth, chain_id, unix_now());
    env.signature =
        eip712::envelope::sign_billing(
            {e.chain_id, e.registry}, Secret(crypto::keccak256(std::string_view("someone else"))),
            static_cast<uint64_t>(unix_now()), eip712::envelope::bind_request("GET", "/core/v1/billing/balance", ""))
            .value()
            .signature;
    check_error_shape(c.get("/billing/balance", header(env)), 401, "signature_invalid");
    // A malformed signature.
    env.signature = "0x1234";
    check_error_shape(c.get("/billing/balance", header(env)), 401, "signature_invalid");
  }
  check_error_shape(
      c.get("/billing/balance", header(signed_for(eip712::envelope::kind::billing_auth, chain_id, unix_now() - 301))),
      401, "signature_expired");
  check_error_shape(
      c.get("/billing/balance", header(signed_for(eip712::envelope::kind::billing_auth, chain_id, unix_now() + 400))),
      401, "signature_expired");
  check_error_shape(c.get("/billing/balance", header(signed_for(eip712::envelope::kind::billing_auth, 1, unix_now()))),
                    400, "chain_id_mismatch");
  check_error_shape(c.get("/billing/balance", {{"X-Wallet-Auth", "%%% not base64 %%%"}}), 400, "invalid_request");
  // Another deployment's registry; the specification's version 1; another request.
  {
    auto other = e;
    other.registry[19] ^= 1;
    const auto env =
        eip712::envelope::sign_billing({other.chain_id, other.registry}, key, static_cast<uint64_t>(unix_now()),
                                       eip712::envelope::bind_request("GET", "/core/v1/billing/balance", ""))
            .value();
    check_error_shape(c.get("/billing/balance", header(env)), 400, "chain_id_mismatch");
  }
  check_error_shape(
      c.get("/billing/balance", header(eip712::envelope::sign(eip712::envelope::kind::billing_auth, e.chain_id, key,
                                                              static_cast<uint64_t>(unix_now()))
                                           .value())),
      400, "typed_data_invalid");
  check_error_shape(
      c.get("/billing/usage", header(signed_for(eip712::envelope::kind::billing_auth, chain_id, unix_now()))), 401,
      "signature_invalid");

  c.check_all_logged();
  CHECK(srv.stop().clean());
  check_no_secret_logged(srv, {acct.api_key});
}

TEST_CASE("402 insufficient_credits: writes cost the surcharge, nothing is written when short") {
  server_process srv({"--dev", "--write-surcharge", "3"});
  recording_client c(srv);
  const account_keys acct = create_account(c.plain(), "payer");
  const state_counts empty = counts(c.plain(), acct.auth());
  CHECK(empty.balance == 0);

  const std::string cid = cid_of_code("Enact.setResponse('paid')");
  struct write_case {
    const char* path;
    json::object body;
  };
  const write_case writes[] = {
      {"/add_group", {{"name", "g"}}},
      {"/create_wallet", {{"name", "w"}}},
      {"/add_action", {{"action_ipfs_cid", cid}, {"name", "a"}}},
      {"/add_usage_api_key", {{"name", "k"}}},
  };
  for (const auto& w : writes) {
    INFO(std::string(w.path));
    check_error_shape(c.post(w.path, w.body, acct.auth()), 402, "insufficient_credits");
  }
  CHECK(counts(c.plain(), acct.auth()) == empty);
  // Reads and non-ledger calls are free.
  ITEST_CHECK_STATUS(c.post("/upload_action", json::object{{"code", "1"}}, acct.auth()), 200);
  CHECK(balance_of(c.plain(), acct.auth()) == 0);

  CHECK(buy_credits(c.plain(), acct.auth(), 500) == 500);
  uint64_t expected = 500;
  for (const auto& w : writes) {
    INFO(std::string(w.path));
    ITEST_CHECK_STATUS(c.post(w.path, w.body, acct.auth()), 200);
    expected -= 3;
    CHECK(balance_of(c.plain(), acct.auth()) == expected);
  }
  const json::value group = list_all(c.plain(), "/list_groups", acct.auth()).at(0);
  const uint64_t gid = u_of(group, "group_id");
  const std::string pkp = s_of(list_all(c.plain(), "/list_wallets", acct.auth()).at(0), "pkp_id");
  ITEST_CHECK_STATUS(c.post("/add_pkp_to_group", json::object{{"group_id", gid}, {"pkp_id", pkp}}, acct.auth()), 200);
  expected -= 3;
  ITEST_CHECK_STATUS(
      c.post("/update_action_metadata",
             json::object{{"hashed_cid", hashed_cid_hex(cid)}, {"name", "b"}, {"description", ""}}, acct.auth()),
      200);
  expected -= 3;
  CHECK(balance_of(c.plain(), acct.auth()) == expected);

  // Refused writes cost nothing.
  check_error_shape(c.post("/remove_group", json::object{{"group_id", 999}}, acct.auth()), 404, "not_found");
  check_error_shape(c.post("/add_group", json::object{{"nam", "typo"}}, acct.auth()), 400, "invalid_request");
  check_error_shape(c.post("/add_action", json::object{{"action_ipfs_cid", cid}, {"name", "dup"}}, acct.auth()), 409,
                    "conflict");
  const usage_keys weak = create_usage_key(c.plain(), acct.auth(), {{"name", "weak"}});
  expected -= 3;
  check_error_shape(c.post("/add_group", json::object{{"name", "x"}}, weak.auth()), 403, "forbidden");
  CHECK(balance_of(c.plain(), acct.auth()) == expected);

  // A usage key's writes are paid from its account's balance.
  const usage_keys creator =
      create_usage_key(c.plain(), acct.auth(), {{"name", "creator"}, {"can_create_groups", true}});
  expected -= 3;
  ITEST_CHECK_STATUS(c.post("/add_group", json::object{{"name", "by usage key"}}, creator.auth()), 200);
  expected -= 3;
  CHECK(balance_of(c.plain(), acct.auth()) == expected);

  // Spend down: every write succeeds while the balance covers it, then 402; never below zero.
  const size_t groups_before = list_all(c.plain(), "/list_groups", acct.auth()).size();
  uint64_t succeeded = 0;
  for (;;) {
    const response r = c.post("/add_group", json::object{{"name", "drain"}}, acct.auth());
    if (r.status == 402) {
      check_error_shape(r, 402, "insufficient_credits");
      break;
    }
    REQUIRE_MESSAGE(r.status == 200, r.describe());
    ++succeeded;
    REQUIRE(succeeded <= 500);
  }
  CHECK(succeeded == expected / 3);
  CHECK(balance_of(c.plain(), acct.auth()) == expected % 3);
  CHECK(list_all(c.plain(), "/list_groups", acct.auth()).size() == groups_before + succeeded);
  check_error_shape(c.post("/add_group", json::object{{"name", "w"}}, creator.auth()), 402, "insufficient_credits");
  CHECK(balance_of(c.plain(), acct.auth()) == expected % 3);

  // Topping up lets writes through again.
  CHECK(buy_credits(c.plain(), acct.auth(), 500) == 500 + expected % 3);
  ITEST_CHECK_STATUS(c.post("/add_group", json::object{{"name", "after top-up"}}, acct.auth()), 200);
  CHECK(balance_of(c.plain(), acct.auth()) == 497 + expected % 3);

  c.check_all_logged();
  CHECK(srv.stop().clean());
  check_no_secret_logged(srv, {acct.api_key, weak.value, creator.value});
}

TEST_CASE("403 forbidden, 404 not_found, 409 conflict") {
  server_process srv({"--dev"});
  recording_client c(srv);
  const account_keys acct = create_account(c.plain(), "owner");
  const account_keys other = create_account(c.plain(), "other");
  const usage_keys weak = create_usage_key(c.plain(), acct.auth(), {{"name", "weak"}});
  const response g = c.post("/add_group", json::object{{"name", "g"}}, acct.auth());
  ITEST_REQUIRE_STATUS(g, 200);
  const uint64_t gid = u_of(g.body, "group_id");
  const response w = c.post("/create_wallet", json::object{{"name", "w"}}, acct.auth());
  ITEST_REQUIRE_STATUS(w, 200);
  const std::string pkp = s_of(w.body, "pkp_id");
  const std::string cid = cid_of_code("Enact.setResponse('404')");
  const std::string h = hashed_cid_hex(cid);
  ITEST_REQUIRE_STATUS(c.post("/add_action", json::object{{"action_ipfs_cid", cid}, {"name", "a"}}, acct.auth()), 200);
  const state_counts before = counts(c.plain(), acct.auth());

  // 403: a scope missing, an owner-only operation.
  {
    const response r = c.post("/add_group", json::object{{"name", "x"}}, weak.auth());
    check_error_shape(r, 403, "forbidden");
    CHECK(r.error_message().find("group:create") != std::string::npos);
    const response r2 =
        c.post("/add_action_to_group", json::object{{"group_id", gid}, {"action_ipfs_cid", cid}}, weak.auth());
    check_error_shape(r2, 403, "forbidden");
    CHECK(r2.error_message().find("group:manageActions") != std::string::npos);
    check_error_shape(c.post("/add_usage_api_key", json::object{{"name", "x"}}, weak.auth()), 403, "forbidden");
    check_error_shape(c.get("/list_api_keys", weak.auth()), 403, "forbidden");
  }

  // 404: unknown group, PKP, action, payment intent, endpoint.
  const std::string unknown_hash = codec::hex::encode_prefixed(crypto::keccak256(std::string_view("no such action")));
  const std::string unknown_pkp = random_address_hex();
  struct nf_case {
    const char* what;
    const char* method;
    std::string path;
    json::value body;
  };
  const std::vector<nf_case> not_found = {
      {"remove unknown group", "POST", "/remove_group", json::object{{"group_id", 999}}},
      {"remove unknown group (string id)", "POST", "/remove_group", json::object{{"group_id", "999"}}},
      {"update unknown group", "POST", "/update_group",
       json::object{{"group_id", 999},
                    {"name", "x"},
                    {"description", ""},
                    {"pkp_ids_permitted", json::array{}},
                    {"cid_hashes_permitted", json::array{}}}},
      {"add PKP to unknown group", "POST", "/add_pkp_to_group", json::object{{"group_id", 999}, {"pkp_id", pkp}}},
      {"remove PKP from unknown group", "POST", "/remove_pkp_from_group",
       json::object{{"group_id", 999}, {"pkp_id", pkp}}},
      {"add action to unknown group", "POST", "/add_action_to_group",
       json::object{{"group_id", 999}, {"action_ipfs_cid", cid}}},
      {"remove action from unknown group", "POST", "/remove_action_from_group",
       json::object{{"group_id", 999}, {"hashed_cid", h}}},
      {"wallets of unknown group", "GET", "/list_wallets_in_group?group_id=999", nullptr},
      {"actions of unknown group", "GET", "/list_actions?group_id=999", nullptr},
      {"unknown PKP", "POST", "/add_pkp_to_group", json::object{{"group_id", gid}, {"pkp_id", unknown_pkp}}},
      {"unknown PKP removed", "POST", "/remove_pkp_from_group",
       json::object{{"group_id", gid}, {"pkp_id", unknown_pkp}}},
      {"unknown PKP in a new group", "POST", "/add_group",
       json::object{{"name", "x"}, {"pkp_ids_permitted", json::array{json::string(unknown_pkp)}}}},
      {"unknown action metadata", "POST", "/update_action_metadata",
       json::object{{"hashed_cid", unknown_hash}, {"name", "x"}, {"description", ""}}},
      {"unknown action deleted", "POST", "/delete_action", json::object{{"hashed_cid", unknown_hash}}},
      {"unknown payment intent", "POST", "/billing/confirm_payment", json::object{{"payment_intent_id", "pi_unknown"}}},
  };
  for (const auto& row : not_found) {
    INFO(std::string(row.what));
    const response r =
        std::string_view(row.method) == "GET" ? c.get(row.path, acct.auth()) : c.post(row.path, row.body, acct.auth());
    check_error_shape(r, 404, "not_found");
  }
  // Another account's group, PKP and action are unknown to this one.
  {
    const response mine = c.post("/add_group", json::object{{"name", "x"}}, other.auth());
    ITEST_REQUIRE_STATUS(mine, 200);
    check_error_shape(c.post("/add_pkp_to_group",
                             json::object{{"group_id", u_of(mine.body, "group_id")}, {"pkp_id", pkp}}, other.auth()),
                      404, "not_found");
    check_error_shape(c.post("/delete_action", json::object{{"hashed_cid", h}}, other.auth()), 404, "not_found");
    const response intent = c.post("/billing/create_payment_intent", json::object{{"amount_cents", 500}}, acct.auth());
    ITEST_REQUIRE_STATUS(intent, 200);
    check_error_shape(c.post("/billing/confirm_payment",
                             json::object{{"payment_intent_id", s_of(intent.body, "payment_intent_id")}}, other.auth()),
                      404, "not_found");
  }
  for (const auto& [method, path] : std::vector<std::pair<std::string, std::string>>{{"GET", "/core/v1/nope"},
                                                                                     {"POST", "/core/v1/nope"},
                                                                                     {"GET", "/nope"},
                                                                                     {"GET", "/core/v1/add_group"},
                                                                                     {"GET", "/core/v2/account"}}) {
    INFO(method << " " << path);
    check_error_shape(c.raw(method, path, "{}"), 404, "not_found");
  }

  // 409: duplicate action, double confirmation.
  check_error_shape(c.post("/add_action", json::object{{"action_ipfs_cid", cid}, {"name", "again"}}, acct.auth()), 409,
                    "conflict");
  {
    const response intent = c.post("/billing/create_payment_intent", json::object{{"amount_cents", 600}}, acct.auth());
    ITEST_REQUIRE_STATUS(intent, 200);
    const json::object body{{"payment_intent_id", s_of(intent.body, "payment_intent_id")}};
    ITEST_REQUIRE_STATUS(c.post("/billing/confirm_payment", body, acct.auth()), 200);
    check_error_shape(c.post("/billing/confirm_payment", body, acct.auth()), 409, "conflict");
    CHECK(balance_of(c.plain(), acct.auth()) == 600);
  }
  state_counts after = counts(c.plain(), acct.auth());
  after.balance = before.balance;
  CHECK(after == before);
  {
    // The duplicate kept the first registration's metadata.
    const auto actions = list_all(c.plain(), "/list_actions", acct.auth());
    REQUIRE(actions.size() == 1);
    CHECK(actions[0].at("name").as_string() == "a");
  }

  c.check_all_logged();
  CHECK(srv.stop().clean());
  check_no_secret_logged(srv, {acct.api_key, other.api_key, weak.value});
}

TEST_CASE("413 payload_too_large: bodies over 1 MiB, action code over 256 KiB") {
  server_process srv;
  recording_client c(srv);
  const account_keys acct = create_account(c.plain(), "big");
  const state_counts before = counts(c.plain(), acct.auth());

  const auto body_of_size = [](size_t n) {
    // {"name":"x","description":"ddd…"} padded to exactly n bytes.
    const std::string head = R"({"name":"x","description":")", tail = R"("})";
    return head + std::string(n - head.size() - tail.size(), 'd') + tail;
  };
  const size_t mib = size_t{1} << 20;
  // Exactly 1 MiB is not too large (it fails the description's length limit instead).
  check_error_shape(c.post_raw("/add_group", body_of_size(mib), acct.auth()), 400, "invalid_request");
  for (const size_t n : {mib + 1, mib + 2, mib + 4096, 2 * mib}) {
    INFO("body of " << n << " bytes");
    check_error_shape(c.post_raw("/add_group", body_of_size(n), acct.auth()), 413, "payload_too_large");
  }
  // Public routes too.
  check_error_shape(c.post_raw("/new_account", body_of_size(mib + 10)), 413, "payload_too_large");

  const size_t kib256 = size_t{256} << 10;
  const std::string ok_code(kib256, 'a');
  const response ok = c.post("/upload_action", json::object{{"code", ok_code}}, acct.auth());
  ITEST_CHECK_STATUS(ok, 200);
  if (ok.status == 200)
    CHECK(s_of(ok.body, "action_ipfs_cid") == cid_of_code(ok_code));
  for (const size_t n : {kib256 + 1, kib256 + 100, size_t{300} << 10, mib - 100}) {
    INFO("code of " << n << " bytes");
    check_error_shape(c.post("/upload_action", json::object{{"code", std::string(n, 'a')}}, acct.auth()), 413,
                      "payload_too_large");
    check_error_shape(c.post("/get_svc_action_ipfs_id", json::string(std::string(n, 'a'))), 413, "payload_too_large");
  }
  CHECK(counts(c.plain(), acct.auth()) == before);

  c.check_all_logged();
  CHECK(srv.stop().clean());
  check_no_secret_logged(srv, {acct.api_key});
}

TEST_CASE("429 rate_limited with Retry-After: per key") {
  server_process srv({"--key-rate", "5"});
  recording_client c(srv);
  const account_keys acct = create_account(c.plain(), "busy");
  const usage_keys uk = create_usage_key(c.plain(), acct.auth(), {{"name", "quiet"}});

  // A burst of 5 per key: within at most a few hundred immediate requests the bucket runs dry.
  response limited;
  for (int i = 0; i < 300 && limited.status != 429; ++i) {
    response r = c.get("/account", acct.auth());
    REQUIRE((r.status == 200 || r.status == 429));
    if (r.status == 429)
      limited = std::move(r);
  }
  check_error_shape(limited, 429, "rate_limited");
  const std::string retry = limited.header("Retry-After");
  REQUIRE(!retry.empty());
  const int wait = std::stoi(retry);
  CHECK(wait >= 1);
  CHECK(std::to_string(wait) == retry);  // delta-seconds, an integer
  // Writes are limited by the same bucket.
  const response w = c.post("/add_group", json::object{{"name", "x"}}, acct.auth());
  if (w.status == 429) {
    check_error_shape(w, 429, "rate_limited");
    CHECK(!w.header("Retry-After").empty());
  }
  // Another key has its own bucket; unauthenticated public routes are not limited per key.
  ITEST_CHECK_STATUS(c.get("/account", uk.auth()), 200);
  ITEST_CHECK_STATUS(c.get("/get_node_chain_config"), 200);
  // After the advertised wait the key works again.
  std::this_thread::sleep_for(std::chrono::seconds(wait));
  ITEST_CHECK_STATUS(c.get("/account", acct.auth()), 200);

  c.check_all_logged();
  CHECK(srv.stop().clean());
  check_no_secret_logged(srv, {acct.api_key, uk.value});
}

TEST_CASE("429 rate_limited with Retry-After: new accounts per client address") {
  server_process srv({"--new-accounts-per-minute", "2"});
  recording_client c(srv);
  const account_keys a = create_account(c.plain(), "one");
  const account_keys b = create_account(c.plain(), "two");
  const response r = c.post("/new_account", json::object{{"name", "three"}});
  check_error_shape(r, 429, "rate_limited");
  CHECK(!r.obj().at("error").as_object().contains("api_key"));
  const std::string retry = r.header("Retry-After");
  REQUIRE(!retry.empty());
  CHECK(std::stoi(retry) >= 1);
  CHECK(std::stoi(retry) <= 60);
  // Existing accounts are unaffected.
  ITEST_CHECK_STATUS(c.get("/account", a.auth()), 200);
  ITEST_CHECK_STATUS(c.get("/account", b.auth()), 200);

  c.check_all_logged();
  CHECK(srv.stop().clean());
  check_no_secret_logged(srv, {a.api_key, b.api_key});
}

TEST_CASE("503 unavailable: billing writes without a payment provider") {
  server_process srv;
  recording_client c(srv);
  const account_keys acct = create_account(c.plain(), "no-provider");
  check_error_shape(c.post("/billing/create_payment_intent", json::object{{"amount_cents", 500}}, acct.auth()), 503,
                    "unavailable");
  check_error_shape(c.post("/billing/confirm_payment", json::object{{"payment_intent_id", "pi_1"}}, acct.auth()), 503,
                    "unavailable");
  check_error_shape(c.get("/billing/stripe_config"), 503, "unavailable");
  CHECK(balance_of(c.plain(), acct.auth()) == 0);

  c.check_all_logged();
  CHECK(srv.stop().clean());
  check_no_secret_logged(srv, {acct.api_key});
}

}  // namespace enact::itest
