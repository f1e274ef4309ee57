// SPDX-License-Identifier: Apache-2.0
// ChainSecured in the OpenAPI document, through the SDK client, and the interop vectors' envelopes.
#include "chainsecured_test.hpp"

namespace enact::itest {

// --- OpenAPI
// ---------------------------------------------------------------------------------------

TEST_CASE("OpenAPI lists the three endpoints with their bodies and error responses") {
  server_process srv;
  auto c = srv.client();
  const response doc = c.get("/openapi.json");
  ITEST_REQUIRE_STATUS(doc, 200);
  const auto& paths = doc.obj().at("paths").as_object();
  for (const endpoint& ep : kEndpoints) {
    INFO(ep.path);
    REQUIRE(paths.contains(ep.path));
    const auto& op = paths.at(ep.path).as_object().at("post").as_object();
    CHECK(op.at("security").as_array().empty() == !ep.convert);
    const auto& schema = op.at("requestBody").at("content").at("application/json").at("schema").as_object();
    std::set<std::string> required;
    for (const auto& r : schema.at("required").as_array())
      required.insert(std::string(r.as_string()));
    std::set<std::string> want{"typed_data", "signature"};
    if (ep.convert)
      want.insert("new_admin_wallet_address");
    CHECK(required == want);
    CHECK_FALSE(schema.at("additionalProperties").as_bool());
    const auto& td = schema.at("properties").at("typed_data").as_object();
    CHECK(td.at("examples").as_array()[0].at("primaryType") ==
          json::value(eip712::envelope::primary_type_name(ep.kind)));
    const auto& responses = op.at("responses").as_object();
    for (const char* status : {"200", "400", "401", "413", "429"})
      CHECK_MESSAGE(responses.contains(status), status);
    CHECK(responses.at("400").at("description").as_string().find("typed_data_invalid") != std::string::npos);
    CHECK(responses.at("401").at("description").as_string().find("signature_expired") != std::string::npos);
    if (ep.convert) {
      CHECK(responses.contains("403"));
      CHECK(responses.at("409").at("description").as_string().find("ChainSecured") != std::string::npos);
    }
  }
  CHECK(srv.stop().clean());
}

// --- the SDK client
// --------------------------------------------------------------------------------

TEST_CASE("the SDK client's ChainSecured methods") {
  server_process srv({"--dev"});
  client::core_client anon(options_for(srv.port()));
  const chain_env ce = env_of(srv);
  const uint64_t chain = ce.chain_id;
  const Secret root = root_key_of(srv);
  const Secret w = wallet_key("client wallet");

  const client::minted_wallet minted = anon.create_wallet_with_signature(w, chain);
  CHECK(minted.pkp_id == minted.wallet_address);
  const hash256 minter = pkp::canonical_account_hash(address_of_key(w));
  CHECK(minted.wallet_address == pkp::wallet_address(root, minter, minted.derivation_path).value());

  const client::minted_usage_key k = anon.add_usage_api_key_with_signature(
      eip712::envelope::sign(eip712::envelope::kind::add_usage_api_key, chain, w, unix_now()).value());
  const Secret decoded(codec::base64::decode(as_chars(k.usage_api_key.view())).value());
  // docs/protocol.md §1 "usage key by signature": its own domain, never the PKP key at the path.
  CHECK(decoded == pkp::usage_key(root, minter, k.derivation_path).value());
  CHECK(!(decoded == pkp::signing_key(root, minter, k.derivation_path).value()));
  CHECK(address_of_key(decoded) == k.wallet_address);

  // Refusals arrive as api_error with the code and status of docs/protocol.md §0.
  // A chain id that is not the server's is refused by the client before anything is sent.
  api_error e = expect_api_error([&] { (void)anon.create_wallet_with_signature(w, 1); });
  CHECK(e.errc() == api_errc::chain_id_mismatch);
  CHECK(e.status() == 0);
  e = expect_api_error([&] {
    (void)anon.add_usage_api_key_with_signature(
        eip712::envelope::sign(eip712::envelope::kind::create_wallet, chain, w, unix_now()).value());
  });
  CHECK(e.errc() == api_errc::typed_data_invalid);
  e = expect_api_error([&] {
    (void)anon.create_wallet_with_signature(
        eip712::envelope::sign(eip712::envelope::kind::create_wallet, chain, w, unix_now() - 3600).value());
  });
  CHECK(e.errc() == api_errc::signature_expired);
  CHECK(e.status() == 401);
  // A key that is no secp256k1 key is refused before anything is sent.
  e = expect_api_error([&] { (void)anon.create_wallet_with_signature(Secret(bytes(32, 0)), chain); });
  CHECK(e.errc() == api_errc::invalid_request);
  CHECK(e.status() == 0);

  // Conversion.
  auto created = anon.new_account({"client conversion", {}, {}});
  client::core_client owner(options_for(srv.port()), created.api_key.clone());
  const Secret admin = wallet_key("client admin");
  // An envelope signed by another wallet than the stated new admin.
  e = expect_api_error([&] {
    (void)owner.convert_to_chain_secured_account(
        address_of_key(admin),
        eip712::envelope::sign_v2(eip712::envelope::kind::convert_account, {ce.chain_id, ce.registry}, w,
                                  static_cast<uint64_t>(unix_now()), created.api_key_hash)
            .value());
  });
  CHECK(e.errc() == api_errc::signature_invalid);
  CHECK(owner.account().managed);

  const client::chain_secured_account conv = owner.convert_to_chain_secured_account(admin, chain);
  CHECK(conv.new_admin_wallet_address == address_of_key(admin));
  CHECK(conv.api_key_hash == created.api_key_hash);
  // The former master key authorizes nothing after the conversion (docs/protocol.md §0 401 row).
  e = expect_api_error([&] { (void)owner.account(); });
  CHECK(e.errc() == api_errc::unauthenticated);
  e = expect_api_error([&] { (void)owner.convert_to_chain_secured_account(admin, chain); });
  CHECK(e.errc() == api_errc::unauthenticated);
  CHECK(e.status() == 401);
  e = expect_api_error([&] { (void)owner.add_group({"after", {}, {}, {}}); });
  CHECK(e.errc() == api_errc::unauthenticated);
  // A version 2 BillingAuth names its request, exactly as the client sends it.
  const auto balance =
      anon.balance(eip712::envelope::sign_billing({ce.chain_id, ce.registry}, admin, static_cast<uint64_t>(unix_now()),
                                                  eip712::envelope::bind_request("GET", "/core/v1/billing/balance", ""))
                       .value());
  CHECK(balance.balance_credits == 0);

  CHECK(srv.stop().clean());
  check_no_secret_logged(
      srv, {std::string(as_chars(created.api_key.view())), std::string(as_chars(k.usage_api_key.view()))});
}

// --- interop vectors
// -------------------------------------------------------------------------------

TEST_CASE("wallet-signed envelopes of the interop vectors (eth_signTypedData_v4 libraries)") {
  // tests/vectors/typed_data.json, signatures by viem (= ethers Wallet.signTypedData). Their
  // issuedAt is fixed and the server has no clock override, so a canonical envelope is verified
  // at unit level with `now` = its issuedAt, and over HTTP (on a server of its chain) everything
  // before the issuedAt rule must pass: the answer is signature_expired. An envelope of another
  // shape is refused as typed_data_invalid over HTTP whatever its chain and time, since `types`
  // are checked first.
  const json::value file = json::parse(read_text(std::string(ENACT_VECTORS_DIR) + "/typed_data.json"));
  struct replay {
    std::string name;
    json::object document;
    std::string signature;
    std::string signer;
    eip712::envelope::kind kind;
    bool canonical;
  };
  std::vector<replay> replays;
  for (const auto& v : file.at("vectors").as_array()) {
    const auto& doc = v.at("document").as_object();
    const auto* primary = doc.at("primaryType").if_string();
    const auto k = primary ? eip712::envelope::kind_from_name(*primary) : std::nullopt;
    // Version 1 only: version 2 vectors name a registry no server here has (unit.interop checks them).
    if (!k || *k == eip712::envelope::kind::billing_auth ||
        std::string_view(v.at("name").as_string()).starts_with("envelope2-"))
      continue;
    const auto& msg = doc.at("message").as_object();
    const auto* issued = msg.if_contains("issuedAt");
    const json::object canonical = eip712::envelope::build(*k, doc.at("domain").at("chainId").to_number<uint64_t>(),
                                                           parse_address(msg.at("address").as_string()).value(),
                                                           issued != nullptr ? issued->to_number<uint64_t>() : 0);
    replays.push_back({std::string(v.at("name").as_string()), doc, std::string(v.at("signature_viem").as_string()),
                       std::string(v.at("signer").as_string()), *k, doc.at("types") == canonical.at("types")});
  }
  REQUIRE_FALSE(replays.empty());

  for (const auto& r : replays) {
    INFO(r.name);
    const uint64_t chain = r.document.at("domain").at("chainId").to_number<uint64_t>();
    eip712::envelope::expectation want{r.kind, chain, 0, eip712::envelope::kDefaultMaxSkew, std::nullopt};
    want.now = r.document.at("message").at("issuedAt").to_number<uint64_t>();
    const auto verified = eip712::envelope::verify(json::serialize(r.document), r.signature, want);
    if (r.canonical) {
      REQUIRE(verified.has_value());
      CHECK(to_checksum_address(*verified) == r.signer);
    } else {
      REQUIRE_FALSE(verified.has_value());
      CHECK(verified.code() == envelope_errc::types_not_canonical);
    }

    // Version 1 conversion by the operator's opt-in (docs/protocol.md §2).
    server_process srv({"--chain-id", std::to_string(chain), "--chain-envelope-v1", "accept"});
    auto c = srv.client();
    const std::string path = r.kind == eip712::envelope::kind::create_wallet       ? kCreate
                             : r.kind == eip712::envelope::kind::add_usage_api_key ? kAddKey
                                                                                   : kConvert;
    httplib::Headers auth;
    json::object body{{"typed_data", r.document}, {"signature", r.signature}};
    if (r.kind == eip712::envelope::kind::convert_account) {
      auth = create_account(c).auth();
      body["new_admin_wallet_address"] = r.signer;
    }
    const response resp = c.post(path, body, auth);
    if (r.canonical)
      check_error(srv, resp, 401, "signature_expired", "/core/v1" + path);
    else
      check_error(srv, resp, 400, "typed_data_invalid", "/core/v1" + path);
    CHECK(srv.stop().clean());
  }
  const auto canonical = std::count_if(replays.begin(), replays.end(), [](const replay& r) { return r.canonical; });
  MESSAGE(replays.size() << " wallet-signed envelope vectors replayed, " << canonical << " of the canonical shape");
}

}  // namespace enact::itest
