// SPDX-License-Identifier: Apache-2.0
// ChainSecured minting and account conversion against the real server (chainsecured_test.hpp).
#include "chainsecured_test.hpp"

namespace enact::itest {

// --- minting
// ---------------------------------------------------------------------------------------

TEST_CASE("create_wallet_with_signature: a new PKP at a random path for each signed request") {
  server_process srv;
  auto c = srv.client();
  const uint64_t chain = env_of(srv).chain_id;
  const Secret root = root_key_of(srv);
  const Secret w = wallet_key("minter");
  const json::object body = mint_body(eip712::envelope::kind::create_wallet, w, chain);

  std::set<std::string> paths, wallets;
  // The same envelope twice: the issuedAt window is the only replay protection (core-api spec,
  // envelope rule 4), and each call mints anew.
  for (int i = 0; i < 3; ++i) {
    const response r = c.post(kCreate, body);
    ITEST_REQUIRE_STATUS(r, 200);
    CHECK(r.obj().size() == 4);  // pkp_id, wallet_address, derivation_path, solana_address
    const std::string pkp = s_of(r.body, "pkp_id");
    const std::string wallet = s_of(r.body, "wallet_address");
    const std::string path = s_of(r.body, "derivation_path");
    CHECK(pkp == wallet);
    CHECK(is_checksummed_address(wallet));
    REQUIRE(is_path_hex(path));
    // docs/protocol.md §1: the PKP of the signer's account (it has none yet: its canonical hash) at that
    // path under the node's root key; not the signer's address.
    const hash256 p = codec::hex::decode_fixed<32>(path).value();
    const hash256 owner = pkp::canonical_account_hash(address_of_key(w));
    CHECK(wallet == to_checksum_address(pkp::wallet_address(root, owner, p).value()));
    CHECK(s_of(r.body, "solana_address") == pkp::solana_address(pkp::ed25519_public_key(root, owner, p).value()));
    CHECK(wallet != to_checksum_address(address_of_key(w)));
    paths.insert(path);
    wallets.insert(wallet);
  }
  CHECK(paths.size() == 3);
  CHECK(wallets.size() == 3);

  // Nothing was registered: no account holds these wallets or was created.
  const account_keys acct = create_account(c);
  CHECK(list_all(c, "/list_wallets", acct.auth()).empty());
  const response me = c.get("/account", acct.auth());
  ITEST_REQUIRE_STATUS(me, 200);
  CHECK(s_of(me.body, "admin_wallet_address") == acct.wallet_address);

  CHECK(srv.stop().clean());
  check_no_secret_logged(srv, {acct.api_key});
}

TEST_CASE("add_usage_api_key_with_signature: the key is the usage key at the returned path, never a PKP's") {
  server_process srv;
  auto c = srv.client();
  const uint64_t chain = env_of(srv).chain_id;
  const Secret root = root_key_of(srv);
  const Secret w = wallet_key("admin of usage keys");

  std::vector<std::string> keys;
  std::set<std::string> paths;
  for (int i = 0; i < 2; ++i) {
    const response r = c.post(kAddKey, mint_body(eip712::envelope::kind::add_usage_api_key, w, chain));
    ITEST_REQUIRE_STATUS(r, 200);
    CHECK(r.obj().size() == 3);
    const std::string key = s_of(r.body, "usage_api_key");
    const std::string wallet = s_of(r.body, "wallet_address");
    const std::string path = s_of(r.body, "derivation_path");
    keys.push_back(key);
    paths.insert(path);
    // docs/protocol.md §1: standard base64 of 32 bytes, a secp256k1 key whose address is wallet_address.
    CHECK(key.size() == 44);
    const Secret decoded = key_secret(key);
    REQUIRE(decoded.size() == 32);
    CHECK(is_checksummed_address(wallet));
    CHECK(key_address(key) == wallet);
    REQUIRE(is_path_hex(path));
    const hash256 p = codec::hex::decode_fixed<32>(path).value();
    const hash256 owner = pkp::canonical_account_hash(address_of_key(w));
    // docs/protocol.md §1 "usage key by signature": derived under its own salt, not the PKP's.
    CHECK(decoded == pkp::usage_key(root, owner, p).value());
    CHECK(!(decoded == pkp::signing_key(root, owner, p).value()));
    CHECK(wallet != to_checksum_address(pkp::wallet_address(root, owner, p).value()));
    // Until the admin wallet registers it on-chain it authenticates nothing.
    check_error(srv, c.get("/account", api_key(key)), 401, "unauthenticated", "/core/v1/account");
  }
  CHECK(keys[0] != keys[1]);
  CHECK(paths.size() == 2);

  CHECK(srv.stop().clean());
  check_no_secret_logged(srv, keys);
}

// --- conversion
// ------------------------------------------------------------------------------------

TEST_CASE("convert_to_chain_secured_account: the wallet takes over, the master key stops working") {
  server_process srv({"--dev", "--sandbox-workers", "1"});
  auto c = srv.client();
  const chain_env ce = env_of(srv);
  const account_keys acct = create_account(c, "to convert");
  const account_keys other = create_account(c, "bystander");
  CHECK(buy_credits(c, acct.auth(), 500) == 500);
  const usage_keys uk = create_usage_key(c, acct.auth(),
                                         {{"name", "runner"},
                                          {"can_create_groups", true},
                                          {"can_create_pkps", true},
                                          {"manage_ipfs_ids_in_groups", json::array{0}},
                                          {"execute_in_groups", json::array{0}}});

  // State that must survive the conversion: a PKP, an action and a group listing both.
  const response w = c.post("/create_wallet", json::object{{"name", "signer"}}, acct.auth());
  ITEST_REQUIRE_STATUS(w, 200);
  const std::string pkp = s_of(w.body, "pkp_id");
  const std::string code = "Enact.setResponse({signer: Enact.getAddress({pkpId: params.pkp})});";
  const std::string cid = cid_of_code(code);
  ITEST_REQUIRE_STATUS(c.post("/add_action", json::object{{"action_ipfs_cid", cid}, {"name", "whoami"}}, acct.auth()),
                       200);
  ITEST_REQUIRE_STATUS(c.post("/add_group",
                              json::object{{"name", "g"},
                                           {"pkp_ids_permitted", json::array{json::string(pkp)}},
                                           {"cid_hashes_permitted", json::array{json::string(hashed_cid_hex(cid))}}},
                              acct.auth()),
                       200);
  // Read with the usage key: after the conversion the former master key reads nothing.
  const auto lists = [&] {
    return std::vector<std::vector<json::object>>{list_all(c, "/list_groups", uk.auth()),
                                                  list_all(c, "/list_wallets", uk.auth()),
                                                  list_all(c, "/list_actions", uk.auth())};
  };
  const auto keys_before = list_all(c, "/list_api_keys", acct.auth());
  REQUIRE(keys_before.size() == 1);
  const auto before = lists();
  const json::object run_body{{"code", code}, {"pkp_id", pkp}, {"params", json::object{{"pkp", pkp}}}};
  const auto run_ok = [&](const httplib::Headers& auth) {
    const response r = c.post("/run_action", run_body, auth);
    ITEST_REQUIRE_STATUS(r, 200);
    CHECK(s_of(r.obj().at("response"), "signer") == pkp);
  };
  run_ok(uk.auth());

  const Secret admin = wallet_key("new admin");
  const std::string admin_addr = to_checksum_address(address_of_key(admin));

  // Refused before anything changes: a usage key, and a new admin that administers an account.
  check_error(srv, c.post(kConvert, convert_body(ce, admin, acct.api_key_hash), uk.auth()), 403, "forbidden",
              "/core/v1" + kConvert);
  check_error(srv, c.post(kConvert, convert_body(ce, key_secret(other.api_key), acct.api_key_hash), acct.auth()), 409,
              "conflict", "/core/v1" + kConvert);
  check_error(srv, c.post(kConvert, convert_body(ce, admin, acct.api_key_hash)), 401, "unauthenticated",
              "/core/v1" + kConvert);
  {
    const response me = c.get("/account", acct.auth());
    ITEST_REQUIRE_STATUS(me, 200);
    CHECK(me.obj().at("managed").as_bool());
  }

  // The conversion.
  json::object body = convert_body(ce, admin, acct.api_key_hash);
  body["new_admin_wallet_address"] = "0x" + codec::hex::encode(address_of_key(admin));  // any case
  const response converted = c.post(kConvert, body, acct.auth());
  ITEST_REQUIRE_STATUS(converted, 200);
  CHECK(converted.obj().size() == 2);
  CHECK(s_of(converted.body, "new_admin_wallet_address") == admin_addr);
  CHECK(s_of(converted.body, "api_key_hash") == acct.api_key_hash);

  // The account, read with the usage key: unmanaged under the new admin, with the same hash.
  const response me = c.get("/account", uk.auth());
  ITEST_REQUIRE_STATUS(me, 200);
  CHECK_FALSE(me.obj().at("managed").as_bool());
  CHECK(s_of(me.body, "admin_wallet_address") == admin_addr);
  CHECK(s_of(me.body, "api_key_hash") == acct.api_key_hash);
  CHECK(s_of(me.obj().at("key"), "kind") == "usage");
  // Groups, PKPs, actions and the usage key unchanged (the key still authenticates).
  CHECK(lists() == before);

  // docs/protocol.md §0 401 row: the former master key authorizes nothing now, not even a read, a run or
  // a second conversion (whoever signs it).
  for (const char* path :
       {"/account", "/list_groups", "/list_wallets", "/list_actions", "/list_api_keys", "/billing/balance"}) {
    INFO(path);
    const response r = c.get(path, acct.auth());
    check_error(srv, r, 401, "unauthenticated", "/core/v1" + std::string(path));
    CHECK(r.error_message().find("ChainSecured") != std::string::npos);
  }
  check_error(srv, c.post("/run_action", run_body, acct.auth()), 401, "unauthenticated", "/core/v1/run_action");
  check_error(srv, c.post(kConvert, convert_body(ce, admin, acct.api_key_hash), acct.auth()), 401, "unauthenticated",
              "/core/v1" + kConvert);
  check_error(srv, c.post(kConvert, convert_body(ce, wallet_key("a third admin"), acct.api_key_hash), acct.auth()), 401,
              "unauthenticated", "/core/v1" + kConvert);

  // Nor any write. Each write (path and body) is refused with `status` and `code`, the message
  // naming ChainSecured mode.
  using write_list = std::vector<std::pair<std::string, json::object>>;
  const auto check_refused = [&](const write_list& writes, const auto& auth, int status, const char* code) {
    for (const auto& [path, b] : writes) {
      INFO(path);
      const response r = c.post(path, b, auth);
      check_error(srv, r, status, code, "/core/v1" + path);
      CHECK(r.error_message().find("ChainSecured") != std::string::npos);
    }
  };
  check_refused(
      {
          {"/add_group", {{"name", "after"}}},
          {"/create_wallet", {{"name", "after"}}},
          {"/add_usage_api_key", {{"name", "after"}}},
          {"/remove_usage_api_key", {{"usage_api_key", uk.value}}},
          {"/add_action", {{"action_ipfs_cid", cid_of_code("1")}, {"name", "after"}}},
      },
      acct.auth(), 401, "unauthenticated");

  // Usage keys keep working for runs; the writes the server would relay for them are refused by
  // the registry (relay_not_allowed): 403 naming the mode.
  run_ok(uk.auth());
  check_refused(
      {
          {"/add_group", {{"name", "after"}}},
          {"/create_wallet", {{"name", "after"}}},
          {"/add_action", {{"action_ipfs_cid", cid_of_code("2")}, {"name", "after"}}},
      },
      uk.auth(), 403, "forbidden");
  CHECK(lists() == before);

  // Billing follows the new admin wallet (X-Wallet-Auth, BillingAuth); the old one is no admin.
  CHECK(balance_of(c, wallet_auth(ce, admin)) == 498);  // 500 bought, two runs of one credit
  const response intent =
      c.post("/billing/create_payment_intent", json::object{{"amount_cents", 700}}, wallet_auth(ce, admin));
  ITEST_REQUIRE_STATUS(intent, 200);
  const response paid =
      c.post("/billing/confirm_payment", json::object{{"payment_intent_id", s_of(intent.body, "payment_intent_id")}},
             wallet_auth(ce, admin));
  ITEST_REQUIRE_STATUS(paid, 200);
  CHECK(u_of(paid.body, "balance_credits") == 1198);
  CHECK(balance_of(c, uk.auth()) == 1198);
  // Payments are the admin wallet's now, not the former master key's.
  for (const char* path : {"/billing/create_payment_intent", "/billing/confirm_payment"}) {
    INFO(path);
    const json::object b = std::string_view(path) == "/billing/confirm_payment"
                               ? json::object{{"payment_intent_id", s_of(intent.body, "payment_intent_id")}}
                               : json::object{{"amount_cents", 700}};
    const response r = c.post(path, b, acct.auth());
    check_error(srv, r, 401, "unauthenticated", "/core/v1" + std::string(path));
    CHECK(r.error_message().find("ChainSecured") != std::string::npos);
  }
  check_error(srv, c.get("/billing/balance", wallet_auth(ce, key_secret(acct.api_key))), 401, "unauthenticated",
              "/core/v1/billing/balance");
  {
    const response mine = c.get("/account", wallet_auth(ce, admin));  // billing only
    check_error(srv, mine, 401, "unauthenticated", "/core/v1/account");
  }
  // The bystander is untouched.
  const response theirs = c.get("/account", other.auth());
  ITEST_REQUIRE_STATUS(theirs, 200);
  CHECK(theirs.obj().at("managed").as_bool());

  CHECK(srv.stop().clean());
  check_no_secret_logged(srv, {acct.api_key, other.api_key, uk.value});
}

}  // namespace enact::itest
