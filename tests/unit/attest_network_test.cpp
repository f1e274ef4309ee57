// SPDX-License-Identifier: Apache-2.0
// The attest module's network and governance checks, and the whole checklist (attest_test.hpp).
#include "attest_test.hpp"

using namespace attest_test;

// --- network ---------------------------------------------------------------------------------

TEST_CASE("attest: the network check passes for bound evidence") {
  CHECK(codec::hex::encode(crypto::sha256(pem_der(kCertA))) == kCertASha256);
  network_evidence e = make_evidence();
  fake_resolver dns = caa_for_account(kAccount);
  auto r = verify_network(e, dns);
  REQUIRE_MESSAGE(r, r.err().message);
  CHECK_MESSAGE(r->passed(), failed_names(*r));
  CHECK(r->checks.size() == 5);
  CHECK(codec::hex::encode(r->served_cert_sha256) == kCertASha256);
  CHECK(r->account_uri == kAccount);
  CHECK(dns.asked == std::vector<std::string>{std::string(kDomain)});
  CHECK(to_json(*r).at("verdict").as_string() == "pass");

  // account_uri is the other spelling of the account field.
  auto r2 = verify_network(make_evidence(R"({"account_uri":")" + std::string(kAccount) + "\"}"), dns);
  REQUIRE(r2);
  CHECK_MESSAGE(r2->passed(), failed_names(*r2));

  // A listed file whose content changed after sha256sum.txt was written.
  e.files["acme-account.json"] += " ";
  auto r3 = verify_network(e, dns);
  REQUIRE(r3);
  CHECK(r3->failed() == std::vector<std::string>{"file_hashes"});
  CHECK(r3->find("file_hashes")->detail == "acme-account.json (hash differs)");
}

TEST_CASE("attest: the network check fails each binding that does not hold") {
  {
    // report_data of another sha256sum.txt
    network_evidence e = make_evidence();
    e.files["sha256sum.txt"] += "\n";
    fake_resolver dns = caa_for_account(kAccount);
    auto r = verify_network(e, dns);
    REQUIRE(r);
    CHECK(r->failed() == std::vector<std::string>{"report_data"});
  }
  {
    network_evidence e = make_evidence();
    e.served_cert_der = pem_der(kCertB);
    fake_resolver dns = caa_for_account(kAccount);
    auto r = verify_network(e, dns);
    REQUIRE(r);
    CHECK(r->failed() == std::vector<std::string>{"certificate"});
  }
  {
    network_evidence e = make_evidence();
    fake_resolver dns = caa_for_account("https://acme-v02.api.letsencrypt.org/acme/acct/1");
    auto r = verify_network(e, dns);
    REQUIRE(r);
    CHECK(r->failed() == std::vector<std::string>{"caa_account"});
    CHECK(r->find("caa_account")->detail == "the evidence account " + std::string(kAccount) +
                                                " is not among the accounturi values "
                                                "(https://acme-v02.api.letsencrypt.org/acme/acct/1)");
  }
  {
    // A second issue record without accounturi lets any account of that CA issue.
    network_evidence e = make_evidence();
    fake_resolver dns = caa_for_account(kAccount);
    dns.records[std::string(kDomain)].push_back({0, "issue", "pki.goog"});
    auto r = verify_network(e, dns);
    REQUIRE(r);
    CHECK(r->failed() == std::vector<std::string>{"caa_account"});
  }
  {
    network_evidence e = make_evidence();
    fake_resolver dns;
    auto r = verify_network(e, dns);
    REQUIRE(r);
    CHECK(r->failed() == std::vector<std::string>{"caa_restricts_issuance", "caa_account"});
    CHECK(r->find("caa_restricts_issuance")->detail ==
          "no CAA records for app.example.test: any CA may issue to any account");
  }
  {
    network_evidence e = make_evidence();
    fake_resolver dns;
    dns.records[std::string(kDomain)] = {{0, "iodef", "mailto:x@example.test"}};
    auto r = verify_network(e, dns);
    REQUIRE(r);
    CHECK(r->failed() == std::vector<std::string>{"caa_restricts_issuance", "caa_account"});
  }
  {
    network_evidence e = make_evidence();
    fake_resolver dns;
    dns.fail_lookup = true;
    CHECK(verify_network(e, dns).code() == attest_errc::lookup_failed);
  }
}

TEST_CASE("attest: missing or malformed evidence files are typed errors") {
  fake_resolver dns = caa_for_account(kAccount);
  struct case_ {
    const char* what;
    std::string file;
    std::optional<std::string> content;  // nullopt: remove it
    attest_errc code;
  };
  const case_ cases[] = {
      {"no sha256sum.txt", "sha256sum.txt", std::nullopt, attest_errc::bad_field},
      {"sha256sum.txt garbage", "sha256sum.txt", "hello\n", attest_errc::bad_field},
      {"sha256sum.txt empty", "sha256sum.txt", "", attest_errc::bad_field},
      {"no quote.json", "quote.json", std::nullopt, attest_errc::bad_field},
      {"quote.json not JSON", "quote.json", "{", attest_errc::bad_json},
      {"quote.json without quote", "quote.json", "{}", attest_errc::bad_field},
      {"quote.json truncated quote", "quote.json", R"({"quote":"0400"})", attest_errc::truncated},
      {"no account", "acme-account.json", std::nullopt, attest_errc::bad_field},
      {"account without uri", "acme-account.json", "{}", attest_errc::bad_field},
      {"account uri empty", "acme-account.json", R"({"uri":""})", attest_errc::bad_field},
      {"no certificate", "cert-app.example.test.pem", std::nullopt, attest_errc::bad_field},
      {"certificate garbage", "cert-app.example.test.pem",
       "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n", attest_errc::bad_certificate},
  };
  for (const auto& c : cases) {
    network_evidence e = make_evidence();
    if (c.content)
      e.files[c.file] = *c.content;
    else
      e.files.erase(c.file);
    auto r = verify_network(e, dns);
    REQUIRE_MESSAGE(!r, c.what);
    CHECK_MESSAGE(r.code() == c.code, c.what, ": ", r.err().message);
  }
}

TEST_CASE("attest: CAA issue values (RFC 8659 §4.2, RFC 8657)") {
  auto v = parse_caa_issue_value(" letsencrypt.org ; accounturi = https://a/acct/1;validationmethods=dns-01 ");
  REQUIRE(v);
  CHECK(v->issuer == "letsencrypt.org");
  REQUIRE(v->parameters.size() == 2);
  CHECK(v->parameters[0] == std::pair<std::string, std::string>{"accounturi", "https://a/acct/1"});
  CHECK(v->parameters[1].second == "dns-01");
  CHECK(parse_caa_issue_value(";")->issuer.empty());  // "issue ;": no CA may issue
  CHECK(parse_caa_issue_value("ca.example")->parameters.empty());
  CHECK_FALSE(parse_caa_issue_value("ca.example; novalue"));
  CHECK_FALSE(parse_caa_issue_value("ca.example; =x"));
}

TEST_CASE("attest: CAA records from a DNS answer (RFC 1035 §4.1, RFC 8659 §4.1)") {
  // Answer to "app.example.test CAA": a CNAME to a name compressed against the question, then
  // two CAA records whose owner is a pointer to it.
  bytes m = {0x12, 0x34, 0x81, 0x80, 0, 1, 0, 3, 0, 0, 0, 0};
  for (std::string_view label : {"app", "example", "test"}) {
    m.push_back(static_cast<uint8_t>(label.size()));
    m.insert(m.end(), label.begin(), label.end());
  }
  m.insert(m.end(), {0, 0x01, 0x01, 0, 1});  // root, QTYPE 257, QCLASS IN
  // CNAME app.example.test -> ca.example.test
  m.insert(m.end(), {0xc0, 12, 0, 5, 0, 1, 0, 0, 0, 60, 0, 5, 2, 'c', 'a', 0xc0, 16});
  auto caa_rr = [&](uint8_t flags, std::string_view tag, std::string_view value) {
    m.insert(m.end(), {0xc0, 12, 0x01, 0x01, 0, 1, 0, 0, 0, 60});
    const size_t len = 2 + tag.size() + value.size();
    m.push_back(static_cast<uint8_t>(len >> 8));
    m.push_back(static_cast<uint8_t>(len));
    m.push_back(flags);
    m.push_back(static_cast<uint8_t>(tag.size()));
    m.insert(m.end(), tag.begin(), tag.end());
    m.insert(m.end(), value.begin(), value.end());
  };
  caa_rr(0, "issue", "letsencrypt.org; accounturi=https://a/1");
  caa_rr(128, "tbs", "x");
  auto r = parse_caa_answer(m);
  REQUIRE_MESSAGE(r, r.err().message);
  REQUIRE(r->size() == 2);
  CHECK((*r)[0] == caa_record{0, "issue", "letsencrypt.org; accounturi=https://a/1"});
  CHECK((*r)[1] == caa_record{128, "tbs", "x"});
  for (size_t n = 0; n < m.size(); ++n) {
    auto cut = parse_caa_answer(bytes_view(m.data(), n));
    CHECK_MESSAGE(!cut, "cut at ", n);
  }
  bytes zero_tag = m;
  zero_tag[zero_tag.size() - 5] = 0;  // the second record's tag length
  CHECK(parse_caa_answer(zero_tag).code() == attest_errc::bad_field);
  bytes bad_label = m;
  bad_label[12] = 0x80;
  CHECK(parse_caa_answer(bad_label).code() == attest_errc::bad_field);
}

// --- governance ------------------------------------------------------------------------------

TEST_CASE("attest: the governance check calls allowedComposeHashes(bytes32)") {
  const std::string app_id = "2911e1f733466216dedb862d6d669e11256ee7a3";
  const std::string compose = "2911e1f733466216dedb862d6d669e11256ee7a34ce4dbc66c4b807ba7a9c895";
  // Selector: ethers.id("allowedComposeHashes(bytes32)").slice(0, 10) = 0x2f6622e5.
  const bytes want_calldata = unhex("2f6622e5" + compose);
  CHECK(allowed_compose_hashes_calldata(codec::hex::decode_fixed<32>(compose).value()) == want_calldata);
  const bytes abi_true = unhex(std::string(63, '0') + "1");
  const bytes abi_false(32, 0);
  struct case_ {
    const char* what;
    result<bytes> answer;
    bool passed;
    std::string detail_part;
  };
  const case_ cases[] = {
      {"true", abi_true, true, "returned true"},
      {"false", abi_false, false, "returned false: the compose hash is not allowed"},
      {"revert", fail(attest_errc::lookup_failed, "execution reverted"), false, "failed: execution reverted"},
      {"not a bool", unhex(std::string(63, '0') + "2"), false, "not an ABI bool"},
      {"empty (no contract)", bytes{}, false, "not an ABI bool"},
  };
  for (const auto& c : cases) {
    address seen_to{};
    bytes seen_data;
    eth_call_fn call = [&](const address& to, bytes_view data) -> result<bytes> {
      seen_to = to;
      seen_data.assign(data.begin(), data.end());
      return c.answer;
    };
    auto r = verify_governance("0x" + app_id, compose, call);
    REQUIRE(r);
    CHECK(codec::hex::encode(seen_to) == app_id);
    CHECK(seen_data == want_calldata);
    CHECK_MESSAGE(r->passed() == c.passed, c.what);
    CHECK_MESSAGE(r->find("compose_hash_allowed")->detail.find(c.detail_part) != std::string::npos, c.what, ": ",
                  r->find("compose_hash_allowed")->detail);
  }
  CHECK(verify_governance("00", compose, {}).code() == attest_errc::bad_field);
  CHECK(verify_governance(app_id, "00", {}).code() == attest_errc::bad_field);
  auto none = verify_governance(app_id, compose, {});
  REQUIRE(none);
  CHECK_FALSE(none->passed());
  CHECK(to_json(*none).at("facts").at("contract").as_string() == "0x" + app_id);
}

TEST_CASE("attest: a checklist with no checks does not pass") {
  checklist empty;
  CHECK(empty.overall() == verdict::fail);
  CHECK(to_string(verdict::pass) == "pass");
  checklist one;
  one.add("a", true, "why");
  CHECK(one.passed());
  const json::object j = to_json(one);
  CHECK(json::serialize(j) == R"({"verdict":"pass","checks":[{"name":"a","passed":true,"detail":"why"}]})");
}

TEST_CASE("attest: verify_all runs the four checks over what a client fetched") {
  // GET /attestation and GET /info of the near-mpc CVM, assembled from its published quote and
  // tcb_info (see near_info).
  const json::value tcb = json::parse(fixture("near-mpc/tcb_info.json"));
  json::object attestation;
  attestation["quote"] = codec::hex::encode(load_quote("near-mpc/quote.bin"));
  attestation["event_log"] = json::serialize(tcb.at("event_log"));
  service_evidence e;
  e.attestation_json = json::serialize(attestation);
  e.info_json = near_info(true);
  verify_all_options o;
  o.quote = at(1786622400);  // nearmpc-uptodate
  o.quote.collateral = load_collateral("near-mpc/collateral.json", false);
  bytes calldata;
  o.eth_call = [&](const address&, bytes_view data) -> result<bytes> {
    calldata.assign(data.begin(), data.end());
    return unhex(std::string(63, '0') + "1");
  };
  auto r = verify_all(e, o);
  REQUIRE_MESSAGE(r, r.err().message);
  CHECK_MESSAGE(r->quote.passed(), failed_names(r->quote));
  CHECK_MESSAGE(r->app.passed(), failed_names(r->app));
  REQUIRE(r->governance);
  CHECK(r->governance->passed());
  CHECK(codec::hex::encode(calldata) == "2f6622e52911e1f733466216dedb862d6d669e11256ee7a34ce4dbc66c4b807ba7a9c895");
  CHECK(r->skipped == std::vector<std::string>{"network"});
  CHECK(r->overall() == verdict::pass);
  CHECK(to_json(*r).at("verdict").as_string() == "pass");

  // With network evidence whose quote had its report_data rewritten (make_evidence): the
  // bindings hold, but the evidence quote's signature does not, and the verdict is fail.
  e.network = make_evidence();
  fake_resolver dns = caa_for_account(kAccount);
  o.resolver = &dns;
  o.quote.collateral.reset();
  o.quote.now = kChainTime;
  auto n = verify_all(e, o);
  REQUIRE_MESSAGE(n, n.err().message);
  REQUIRE(n->network);
  CHECK(n->network->passed());
  REQUIRE(n->evidence_quote);
  CHECK(n->evidence_quote->failed() == std::vector<std::string>{"quote_signature"});
  CHECK(n->skipped.empty());
  CHECK(n->overall() == verdict::fail);
}
