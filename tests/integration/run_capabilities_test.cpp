// SPDX-License-Identifier: Apache-2.0
// run_action's capability calls and the rules of the execution check (run_test.hpp).
#include "run_test.hpp"

namespace enact::itest {

// --- capabilities --------------------------------------------------------------------------------

TEST_CASE("run_action: signatures, addresses and encryption by the PKPs the run may use") {
  server_process srv({"--dev", "--sandbox-workers", "2"});
  http_client c = srv.client();
  const account_keys acct = create_account(c, "runner");
  buy_credits(c, acct.auth(), 1000);
  const Secret root = root_key_of(srv);
  const hash256 account = codec::hex::decode_fixed<32>(acct.api_key_hash).value();

  const wallet p1 = create_wallet(c, acct.auth(), "p1");
  const wallet p2 = create_wallet(c, acct.auth(), "p2");
  const wallet p3 = create_wallet(c, acct.auth(), "p3");
  const stored_action sign = upload(c, acct.auth(), kSignCode);
  const stored_action crypto = upload(c, acct.auth(), kCryptoCode);
  const uint64_t g = add_group(c, acct.auth(), "signers", {p1.pkp_id, p2.pkp_id}, {sign.hashed, crypto.hashed});
  // p3 is in a group of its own with no action: it may not be used with these actions.
  add_group(c, acct.auth(), "elsewhere", {p3.pkp_id}, {});
  const usage_keys exec = executor_key(c, acct.auth(), json::array{g});

  std::vector<std::string> bodies;  // every run_action response, searched for secrets below
  std::vector<std::string> derived_keys;

  SUBCASE("signEcdsa, signMessage and getAddress") {
    for (const auto& [who, auth] :
         {std::pair{std::string("account key"), acct.auth()}, std::pair{std::string("usage key"), exec.auth()}}) {
      for (const wallet& w : {p1, p2}) {
        INFO(who << ", PKP " << w.pkp_id);
        const hash256 digest = crypto::keccak256("digest for " + w.pkp_id + who);
        const std::string message = "héllo, wörld 👋 " + w.pkp_id;
        const response r = run(
            c, auth,
            by_cid(sign.cid, {{"pkp", w.pkp_id}, {"digest", codec::hex::encode_prefixed(digest)}, {"message", message}},
                   w.pkp_id));
        bodies.push_back(r.text);
        ITEST_REQUIRE_STATUS(r, 200);
        CHECK(u_of(r.body, "charged_credits") == 1);
        CHECK(r.obj().at("run_ms").is_number());
        CHECK(s_of(r.body, "logs").empty());

        // signatures[name]: r, s, v, public_key, digest and the 65-byte signature.
        const auto& sigs = r.obj().at("signatures").as_object();
        REQUIRE(sigs.size() == 1);
        REQUIRE(sigs.contains("main"));
        const json::value& sig = sigs.at("main");
        CHECK(s_of(sig, "digest") == codec::hex::encode_prefixed(digest));
        const auto sig65 = codec::hex::decode_prefixed(s_of(sig, "signature")).value();
        REQUIRE(sig65.size() == 65);
        CHECK(s_of(sig, "r") == codec::hex::encode_prefixed(bytes_view(sig65).first(32)));
        CHECK(s_of(sig, "s") == codec::hex::encode_prefixed(bytes_view(sig65).subspan(32, 32)));
        const uint64_t v = u_of(sig, "v");
        CHECK((v == 27 || v == 28));
        CHECK(sig65[64] == v);
        const auto signer = crypto::secp256k1::recover_address(digest, sig65);
        REQUIRE(signer);
        CHECK(to_checksum_address(*signer) == w.pkp_id);
        const auto pub = codec::hex::decode_prefixed(s_of(sig, "public_key")).value();
        REQUIRE(pub.size() == 65);
        CHECK(pub[0] == 0x04);
        crypto::secp256k1::public_key xy{};
        std::copy(pub.begin() + 1, pub.end(), xy.begin());
        CHECK(to_checksum_address(crypto::secp256k1::to_address(xy)) == w.pkp_id);
        // The action got the same object the caller gets.
        CHECK(r.obj().at("response").at("sig") == sig);

        // The key the server used is the one docs/protocol.md §1 derives from the root key, the owning
        // account and the path: RFC 6979 makes the signature a function of key and digest, so it
        // must match exactly.
        const hash256 path = codec::hex::decode_fixed<32>(w.path).value();
        const Secret key = pkp::signing_key(root, account, path).value();
        CHECK(to_checksum_address(pkp::wallet_address(root, account, path).value()) == w.pkp_id);
        CHECK(codec::hex::encode_prefixed(crypto::secp256k1::sign(digest, key).value().to_bytes()) ==
              s_of(sig, "signature"));
        derived_keys.push_back(codec::hex::encode(key.view()));

        // signMessage: EIP-191 personal_sign of the UTF-8 message.
        const auto personal = codec::hex::decode_prefixed(r.obj().at("response").at("personal").as_string()).value();
        const auto personal_signer =
            crypto::secp256k1::recover_address(crypto::personal_message_hash(std::string_view(message)), personal);
        REQUIRE(personal_signer);
        CHECK(to_checksum_address(*personal_signer) == w.pkp_id);

        // getAddress is the pkp_id, checksummed.
        CHECK(r.obj().at("response").at("address").as_string() == w.pkp_id);
      }
    }
  }

  SUBCASE("encrypt and decrypt; another PKP's ciphertext and a PKP outside the run are refused") {
    const std::string text = "a sealed note — 封印";
    const response r =
        run(c, exec.auth(), by_cid(crypto.cid, {{"a", p1.pkp_id}, {"b", p2.pkp_id}, {"c", p3.pkp_id}, {"text", text}}));
    bodies.push_back(r.text);
    ITEST_REQUIRE_STATUS(r, 200);
    const auto& out = r.obj().at("response").as_object();
    CHECK(out.at("opened").as_string() == text);
    CHECK(out.at("opened_by_b").as_string() == text);
    // Sealed forms: nonce ‖ ciphertext ‖ tag, opened by the SDK with the key docs/protocol.md §1 derives.
    const auto sealed = codec::hex::decode_prefixed(out.at("sealed").as_string()).value();
    const auto other = codec::hex::decode_prefixed(out.at("other").as_string()).value();
    CHECK(sealed.size() == text.size() + crypto::aes_gcm::kOverhead);
    const Secret k1 = pkp::symmetric_key(root, account, codec::hex::decode_fixed<32>(p1.path).value()).value();
    const Secret k2 = pkp::symmetric_key(root, account, codec::hex::decode_fixed<32>(p2.path).value()).value();
    derived_keys.push_back(codec::hex::encode(k1.view()));
    derived_keys.push_back(codec::hex::encode(k2.view()));
    const auto opened = crypto::aes_gcm::decrypt(k1, sealed);
    REQUIRE(opened);
    CHECK(std::string(as_chars(*opened)) == text);
    CHECK(!crypto::aes_gcm::decrypt(k2, sealed));
    CHECK(crypto::aes_gcm::decrypt(k2, other));

    // The action's catch saw each refusal.
    const auto error_of = [&](std::string_view field) {
      const auto& o = out.at(field).as_object();
      INFO(field << ": " << json::serialize(o));
      CHECK(!o.contains("ok"));
      return o.contains("error") ? std::string(o.at("error").as_string()) : std::string();
    };
    CHECK(error_of("cross").find("not made by this PKP") != std::string::npos);
    CHECK(error_of("altered").find("not made by this PKP") != std::string::npos);
    for (const std::string field : {"outsider_address", "outsider_sign", "outsider_encrypt"}) {
      INFO(field);
      const std::string e = error_of(field);
      CHECK(e.find("is not usable in this run") != std::string::npos);
      CHECK(e.find(p3.pkp_id) != std::string::npos);
    }
    CHECK(r.obj().at("signatures").as_object().empty());
  }

  SUBCASE("only groups the key may execute in lend their PKPs to the run") {
    // p3 is listed with the action in a group on which the usage key has no execute.
    add_group(c, acct.auth(), "not for exec", {p3.pkp_id}, {crypto.hashed});
    const json::object params{{"a", p1.pkp_id}, {"b", p2.pkp_id}, {"c", p3.pkp_id}, {"text", "t"}};
    const response refused = run(c, exec.auth(), by_cid(crypto.cid, params));
    bodies.push_back(refused.text);
    ITEST_REQUIRE_STATUS(refused, 200);
    const auto& e = refused.obj().at("response").at("outsider_address").as_object();
    REQUIRE(e.contains("error"));
    CHECK(std::string(e.at("error").as_string()).find("is not usable in this run") != std::string::npos);
    // Naming p3 as the run's PKP is refused outright for that key.
    const response named = run(c, exec.auth(), by_cid(crypto.cid, params, p3.pkp_id));
    bodies.push_back(named.text);
    check_error(srv, named, 403, "forbidden", kRunRoute);
    // The account key executes in every group, so p3 is usable in its runs.
    const response owner = run(c, acct.auth(), by_cid(crypto.cid, params, p3.pkp_id));
    bodies.push_back(owner.text);
    ITEST_REQUIRE_STATUS(owner, 200);
    const auto& ok = owner.obj().at("response").at("outsider_address").as_object();
    REQUIRE(ok.contains("ok"));
    CHECK(ok.at("ok").as_string() == p3.pkp_id);
  }

  SUBCASE("a PKP unknown to the account is no more usable than one outside the group") {
    const std::string stranger = random_address_hex();
    const response r =
        run(c, acct.auth(), by_cid(crypto.cid, {{"a", p1.pkp_id}, {"b", p2.pkp_id}, {"c", stranger}, {"text", "t"}}));
    bodies.push_back(r.text);
    ITEST_REQUIRE_STATUS(r, 200);
    const auto& e = r.obj().at("response").at("outsider_address").as_object();
    REQUIRE(e.contains("error"));
    CHECK(std::string(e.at("error").as_string()).find("is not usable in this run") != std::string::npos);
  }

  // No key byte anywhere: the root key, the PKP keys derived from it and the API keys appear in
  // no run response, nor in the log.
  const auto exit = srv.stop();
  CHECK(exit.clean());
  std::vector<std::string> forbidden = leak_forms(root.view());
  for (const auto& k : derived_keys)
    forbidden.push_back(k);
  forbidden.push_back(acct.api_key);
  forbidden.push_back(exec.value);
  REQUIRE(!bodies.empty());
  const std::string log = srv.log_text();
  for (const auto& s : forbidden) {
    for (const auto& b : bodies)
      CHECK_MESSAGE(b.find(s) == std::string::npos, "a key appears in a run_action response");
    CHECK_MESSAGE(log.find(s) == std::string::npos, "a key appears in the server log");
  }
  check_no_secret_logged(srv, {acct.api_key, exec.value});
}

// --- the execution rule --------------------------------------------------------------------------

TEST_CASE("run_action: each rule of the execution check refuses before any run or charge") {
  server_process srv({"--dev", "--sandbox-workers", "2"});
  http_client c = srv.client();
  const account_keys acct = create_account(c, "rules");
  buy_credits(c, acct.auth(), 1000);

  const wallet p1 = create_wallet(c, acct.auth(), "in-group");
  const wallet p2 = create_wallet(c, acct.auth(), "other-group");
  const stored_action listed = upload(c, acct.auth(), kGoodCode);
  const std::string unlisted_code = "// in no group\n" + std::string(kGoodCode);
  const stored_action unlisted = upload(c, acct.auth(), unlisted_code);
  // Code whose CID a group lists but that was never stored (and no gateway is configured).
  const std::string missing_code = "// never uploaded\n" + std::string(kGoodCode);
  const std::string missing_cid = cid_of_code(missing_code);
  // Code that is authorised as its CID when sent in the body (never uploaded either).
  const std::string inline_code = "// sent inline\n" + std::string(kGoodCode);
  const std::string inline_cid = cid_of_code(inline_code);
  const std::string inline_unlisted = "// sent inline, unlisted\n" + std::string(kGoodCode);

  const uint64_t g = add_group(c, acct.auth(), "g", {p1.pkp_id},
                               {listed.hashed, hashed_cid_hex(missing_cid), hashed_cid_hex(inline_cid)});
  const uint64_t other = add_group(c, acct.auth(), "other", {p2.pkp_id}, {});
  const usage_keys no_execute = executor_key(c, acct.auth(), json::array{});
  const usage_keys other_only = executor_key(c, acct.auth(), json::array{other});
  const usage_keys wildcard = executor_key(c, acct.auth(), json::array{0});
  const usage_keys in_g = executor_key(c, acct.auth(), json::array{g});
  const usage_keys deleted = executor_key(c, acct.auth(), json::array{g});
  ITEST_REQUIRE_STATUS(c.post("/remove_usage_api_key", json::object{{"usage_api_key", deleted.value}}, acct.auth()),
                       200);

  const json::object params{{"x", 41}};
  struct refusal {
    std::string name;
    httplib::Headers auth;
    json::object body;
    int status;
    std::string code;
  };
  const std::vector<refusal> refusals{
      {"CID in no group", acct.auth(), by_cid(unlisted.cid, params), 403, "forbidden"},
      {"PKP not in the group that lists the CID", acct.auth(), by_cid(listed.cid, params, p2.pkp_id), 403, "forbidden"},
      {"PKP unknown to the account", acct.auth(), by_cid(listed.cid, params, random_address_hex()), 403, "forbidden"},
      {"key without execute", no_execute.auth(), by_cid(listed.cid, params), 403, "forbidden"},
      {"execute granted only on another group", other_only.auth(), by_cid(listed.cid, params), 403, "forbidden"},
      {"execute only on another group that lists the PKP", other_only.auth(), by_cid(listed.cid, params, p2.pkp_id),
       403, "forbidden"},
      {"deleted key", deleted.auth(), by_cid(listed.cid, params), 401, "unauthenticated"},
      {"code whose CID no group lists", acct.auth(), by_code(inline_unlisted, params), 403, "forbidden"},
      {"CID listed but in no content store, no gateway", acct.auth(), by_cid(missing_cid, params), 404, "not_found"},
  };
  for (const auto& f : refusals) {
    INFO(f.name);
    const uint64_t balance = balance_of(c, acct.auth());
    const activity before = settled_activity(srv.pid());
    REQUIRE(before.size() == 2);
    const response r = run(c, f.auth, f.body);
    check_error(srv, r, f.status, f.code, kRunRoute);
    CHECK(!details_of(r).contains("kind"));
    CHECK(settled_activity(srv.pid()) == before);  // no worker was handed anything
    CHECK(balance_of(c, acct.auth()) == balance);  // nothing charged
  }

  // What the rule accepts, each charged one credit and run by a worker (which also shows that
  // the activity reading above would have seen a run).
  const std::vector<std::tuple<std::string, httplib::Headers, json::object>> accepted{
      {"account key", acct.auth(), by_cid(listed.cid, params)},
      {"account key and the PKP", acct.auth(), by_cid(listed.cid, params, p1.pkp_id)},
      {"execute on the group", in_g.auth(), by_cid(listed.cid, params, p1.pkp_id)},
      {"wildcard 0 in execute_in_groups", wildcard.auth(), by_cid(listed.cid, params)},
      {"code authorised as its CID", in_g.auth(), by_code(inline_code, params)},
      // The code sent in the body was kept: its CID now runs from the content store.
      {"CID of code sent before", wildcard.auth(), by_cid(inline_cid, params)},
  };
  for (const auto& [name, auth, body] : accepted) {
    INFO(name);
    const uint64_t balance = balance_of(c, acct.auth());
    const activity before = settled_activity(srv.pid());
    const response r = run(c, auth, body);
    ITEST_REQUIRE_STATUS(r, 200);
    CHECK(r.obj().at("response") == json::value(json::object{{"ok", 42}}));
    CHECK(u_of(r.body, "charged_credits") == 1);
    CHECK(settled_activity(srv.pid()) != before);
    CHECK(balance_of(c, acct.auth()) == balance - 1);
  }

  SUBCASE("insufficient credits: 402, nothing run, nothing charged") {
    const account_keys poor = create_account(c, "poor");
    REQUIRE(balance_of(c, poor.auth()) == 0);
    add_group(c, poor.auth(), "g", {}, {listed.hashed});
    const activity before = settled_activity(srv.pid());
    const response r = run(c, poor.auth(), by_cid(listed.cid, params));
    check_error(srv, r, 402, "insufficient_credits", kRunRoute);
    CHECK(!details_of(r).contains("kind"));
    CHECK(settled_activity(srv.pid()) == before);
    CHECK(balance_of(c, poor.auth()) == 0);
    // The same call runs once credits are bought.
    buy_credits(c, poor.auth(), 500);
    const response paid = run(c, poor.auth(), by_cid(listed.cid, params));
    ITEST_CHECK_STATUS(paid, 200);
    CHECK(balance_of(c, poor.auth()) == 499);
  }
}

}  // namespace enact::itest
