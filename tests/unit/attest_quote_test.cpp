// SPDX-License-Identifier: Apache-2.0
// The attest module's quote parsing and DCAP verification (attest_test.hpp for the fixtures).
#include "attest_test.hpp"

using namespace attest_test;

// --- parsing ---------------------------------------------------------------------------------

TEST_CASE("attest: every fixture quote parses to the fields expectations.json records") {
  for (const auto& [spec, want_v] : expectations().at("quotes").as_object()) {
    const json::object& want = want_v.as_object();
    INFO("quote ", std::string(spec));
    const bytes raw = load_quote(std::string(spec));
    CHECK(raw.size() == static_cast<size_t>(want.at("len").as_int64()));
    CHECK(codec::hex::encode(crypto::sha256(raw)) == want.at("sha256").as_string());
    auto q = parse_quote(raw);
    REQUIRE_MESSAGE(q, q.err().message);
    CHECK(q->header.version == want.at("version").as_int64());
    CHECK(q->header.attestation_key_type == want.at("att_key_type").as_int64());
    CHECK(q->header.tee_type == kTeeTdx);
    CHECK(q->signed_size == (q->header.version == 4 ? 48u + 584 : 48u + 6 + 648));
    CHECK(q->raw.size() == static_cast<size_t>(want.at("signed_len").as_int64()));
    REQUIRE(q->td);
    const td_report& td = *q->td;
    CHECK(codec::hex::encode(td.tee_tcb_svn) == want.at("tee_tcb_svn").as_string());
    CHECK(codec::hex::encode(td.mr_seam) == want.at("mr_seam").as_string());
    CHECK(codec::hex::encode(td.td_attributes) == want.at("td_attributes").as_string());
    CHECK(codec::hex::encode(td.xfam) == want.at("xfam").as_string());
    CHECK(codec::hex::encode(td.mr_td) == want.at("mr_td").as_string());
    CHECK(codec::hex::encode(td.mr_config_id) == want.at("mr_config_id").as_string());
    for (size_t i = 0; i < 4; ++i)
      CHECK(codec::hex::encode(td.rtmr[i]) == want.at("rtmr" + std::to_string(i)).as_string());
    CHECK(codec::hex::encode(td.report_data) == want.at("report_data").as_string());
    CHECK(q->pck_chain_pem.rfind("-----BEGIN CERTIFICATE-----", 0) == 0);
    CHECK(q->cert_type == 5);
    CHECK(q->qe_auth_data.size() == 32);
  }
}

TEST_CASE("attest: quote v5 with a TD 1.5 body and the SGX v3 quote parse") {
  // README §3: tdx_quote_outdated.bin is v5, body type 3 (648 bytes), tee_tcb_svn2 0d0103…
  auto v5 = parse_quote(load_quote("dcap-qvl/tdx_quote_outdated.bin"));
  REQUIRE(v5);
  CHECK(v5->body_type == 3);
  CHECK(v5->signed_size == 48 + 6 + 648);
  REQUIRE(v5->td->tee_tcb_svn2);
  CHECK(codec::hex::encode(*v5->td->tee_tcb_svn2) == "0d010300000000000000000000000000");
  CHECK(v5->td->mr_servicetd == crypto::hash384{});

  auto sgx = parse_quote(load_quote("dcap-qvl/sgx_quote.bin"));
  REQUIRE(sgx);
  CHECK(sgx->header.tee_type == kTeeSgx);
  CHECK(sgx->header.version == 3);
  CHECK(sgx->body_type == 1);
  CHECK(sgx->enclave);
  CHECK_FALSE(sgx->td);
  CHECK(sgx->signed_size == 48 + 384);
}

TEST_CASE("attest: a quote cut at any length fails as truncated, never crashes") {
  for (const char* spec : {"dcap-qvl/tdx_quote.bin", "dcap-qvl/tdx_quote_outdated.bin", "dcap-qvl/sgx_quote.bin"}) {
    const bytes raw = load_quote(spec);
    const size_t full = parse_quote(raw).value().raw.size();
    for (size_t n = 0; n < full; ++n) {
      auto r = parse_quote(bytes_view(raw.data(), n));
      REQUIRE_MESSAGE(!r, spec, " cut at ", n);
      CHECK_MESSAGE(r.code() == attest_errc::truncated, spec, " cut at ", n, ": ", r.err().message);
    }
    CHECK(parse_quote(bytes_view(raw.data(), full)));  // trailing padding is optional
  }
  auto r = parse_quote(bytes_view(load_quote("dcap-qvl/tdx_quote.bin").data(), 100));
  CHECK(r.err().message == "quote.body: needs 584 bytes at offset 48, 52 left");
}

TEST_CASE("attest: malformed quote headers and sizes are typed errors") {
  const bytes v4 = load_quote("dcap-qvl/tdx_quote.bin");
  const bytes v5 = load_quote("dcap-qvl/tdx_quote_outdated.bin");
  auto set16 = [](bytes b, size_t at, uint16_t v) {
    b.at(at) = static_cast<uint8_t>(v);
    b.at(at + 1) = static_cast<uint8_t>(v >> 8);
    return b;
  };
  auto add32 = [](bytes b, size_t at, int delta) {
    uint32_t v = b[at] | b[at + 1] << 8 | b[at + 2] << 16 | static_cast<uint32_t>(b[at + 3]) << 24;
    v = static_cast<uint32_t>(static_cast<int64_t>(v) + delta);
    for (int i = 0; i < 4; ++i)
      b[at + static_cast<size_t>(i)] = static_cast<uint8_t>(v >> (8 * i));
    return b;
  };
  struct bad {
    const char* what;
    bytes data;
    attest_errc code;
  };
  const bad cases[] = {
      {"version 3 for TDX", set16(v4, 0, 3), attest_errc::unsupported_version},
      {"version 6", set16(v4, 0, 6), attest_errc::unsupported_version},
      {"SGX quote claiming version 4", set16(load_quote("dcap-qvl/sgx_quote.bin"), 0, 4),
       attest_errc::unsupported_version},
      {"key type 3 (ECDSA-384)", set16(v4, 2, 3), attest_errc::unsupported_key_type},
      {"TEE type 0x82", set16(v4, 4, 0x82), attest_errc::unsupported_tee},
      {"v5 body type 4", set16(v5, 48, 4), attest_errc::unsupported_version},
      {"v5 body size 647", add32(v5, 50, -1), attest_errc::bad_length},
      {"certification data type 5 where 6 belongs", set16(v4, kV4CertType, 5), attest_errc::unsupported_cert_type},
      {"inner certification data type 4", set16(v4, kV4QeReport + 384 + 64 + 2 + 32, 4),
       attest_errc::unsupported_cert_type},
      {"signature data one byte longer", add32(v4, kV4SigSize, 1), attest_errc::bad_length},
      {"signature data one byte shorter", add32(v4, kV4SigSize, -1), attest_errc::truncated},
      {"certification data one byte longer", add32(v4, kV4CertType + 2, 1), attest_errc::truncated},
      {"PCK chain size one byte shorter", add32(v4, kV4QeReport + 384 + 64 + 2 + 32 + 2, -1), attest_errc::bad_length},
      {"QE auth data size 0xffff", set16(v4, kV4QeReport + 384 + 64, 0xffff), attest_errc::truncated},
  };
  for (const auto& c : cases) {
    auto r = parse_quote(c.data);
    REQUIRE_MESSAGE(!r, c.what);
    CHECK_MESSAGE(r.code() == c.code, c.what, ": ", r.err().message);
  }
  CHECK(parse_quote_hex("0x12zz").code() == attest_errc::bad_field);
  CHECK(parse_quote_hex(fixture("dcap-qvl/tdx-quote.hex")));         // 0x prefix, no newline
  CHECK(parse_quote_hex(fixture("dcap-qvl/quote-from-tappd.hex")));  // trailing newline
}

// --- DCAP verification -----------------------------------------------------------------------

TEST_CASE("attest: every DCAP case of expectations.json gets its expected verdict") {
  // An "error" case of dcap-qvl is a report that fails here; the check that fails carries the
  // reason. neg-foreign-pck-chain: dcap-qvl takes the collateral's PCK chain (another
  // machine's) and fails the QE report signature; this verifier keeps the quote's own chain
  // and fails the collateral_pck_chain check instead — same verdict, named cause.
  const std::map<std::string, std::string> failing_check = {
      {"dcapqvl-tdx15-outdated", "tcb_level"},
      {"neg-issue-date-in-future", "tcb_info_validity"},
      {"neg-foreign-pck-chain", "collateral_pck_chain"},
      {"neg-tcb-below-all-levels-tappd", "tcb_level"},
  };
  size_t cases = 0;
  for (const auto& cv : expectations().at("dcap_cases").as_array()) {
    const json::object& c = cv.as_object();
    const std::string id(c.at("id").as_string());
    INFO("case ", id);
    const bytes raw = load_quote(std::string(c.at("quote").as_string()));
    quote_options o = at(c.at("now").as_int64());
    const bool drop = c.contains("collateral_edit");
    if (drop)
      REQUIRE(c.at("collateral_edit").as_string() == "delete key pck_certificate_chain");
    o.collateral = load_collateral(std::string(c.at("collateral").as_string()), drop);
    auto r = verify_quote(raw, o);
    REQUIRE_MESSAGE(r, r.err().message);
    if (c.at("expect").as_string() == "ok") {
      CHECK_MESSAGE(r->passed(), "failed: ", failed_names(*r));
      REQUIRE(r->tcb);
      CHECK(to_string(r->tcb->status) == c.at("status").as_string());
      std::vector<std::string> want;
      for (const auto& a : c.at("advisory_ids").as_array())
        want.emplace_back(a.as_string());
      CHECK(r->tcb->advisory_ids == want);
    } else {
      CHECK_FALSE(r->passed());
      REQUIRE(failing_check.count(id) == 1);
      CHECK_MESSAGE(!check_passed(*r, failing_check.at(id)), "failed: ", failed_names(*r));
    }
    ++cases;
  }
  CHECK(cases == 11);
}

TEST_CASE("attest: the up-to-date TDX quote passes every check, and the report says why") {
  quote_options o = at(1752919234);  // dcapqvl-tdx-uptodate
  o.collateral = load_collateral("dcap-qvl/tdx_quote_collateral.json", false);
  auto r = verify_quote(load_quote("dcap-qvl/tdx_quote.bin"), o);
  REQUIRE(r);
  const std::vector<std::string> names = {"quote_signature",
                                          "qe_report_signature",
                                          "qe_report_data",
                                          "pck_chain",
                                          "debug_disabled",
                                          "tcb_info_chain",
                                          "tcb_info_signature",
                                          "tcb_info_validity",
                                          "qe_identity_chain",
                                          "qe_identity_signature",
                                          "qe_identity_validity",
                                          "tcb_info_platform",
                                          "qe_identity",
                                          "qe_tcb",
                                          "tdx_module",
                                          "tcb_level",
                                          "tcb_status"};
  REQUIRE(r->checks.size() == names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    CHECK(r->checks[i].name == names[i]);
    CHECK_MESSAGE(r->checks[i].passed, r->checks[i].name, ": ", r->checks[i].detail);
  }
  CHECK(r->overall() == verdict::pass);
  REQUIRE(r->pck);
  CHECK(codec::hex::encode(r->pck->fmspc) == "b0c06f000000");
  CHECK(r->pck->pce_svn == 11);
  CHECK(r->pck->subject.find("Intel SGX PCK Certificate") != std::string::npos);
  CHECK(r->tcb->platform_status == tcb_status::up_to_date);
  CHECK(r->tcb->qe_status == tcb_status::up_to_date);
  CHECK(r->tcb->module_status == tcb_status::up_to_date);
  CHECK(r->tcb->tcb_evaluation_data_number == 17);
  CHECK(r->find("pck_chain")->detail.find("with 2 CRLs") != std::string::npos);

  const json::value j = to_json(*r);
  CHECK(j.at("verdict").as_string() == "pass");
  CHECK(j.at("checks").as_array().size() == names.size());
  CHECK(j.at("facts").at("tcb").at("status").as_string() == "UpToDate");
  CHECK(j.at("facts").at("quote").at("td_report").at("mr_td").as_string() ==
        "91eb2b44d141d4ece09f0c75c2c53d247a3c68edd7fafe8a3520c942a604a407de03ae6dc5f87f27428b253887"
        "3118b7");
  CHECK(j.at("facts").at("verified_at").as_string() == "2025-07-19T10:00:34Z");
}

TEST_CASE("attest: the TDX module identity joins the TCB status (newer collateral)") {
  // cross-dcapqvl-tdx-newer-collateral: platform and TDX_01 module SVN 6 are both OutOfDate.
  quote_options o = at(1786622400);
  o.collateral = load_collateral("near-mpc/collateral.json", true);
  auto r = verify_quote(load_quote("dcap-qvl/tdx_quote.bin"), o);
  REQUIRE(r);
  REQUIRE(r->tcb);
  CHECK(r->tcb->platform_status == tcb_status::out_of_date);
  CHECK(r->tcb->module_status == tcb_status::out_of_date);
  CHECK(r->tcb->status == tcb_status::out_of_date);
  CHECK(r->passed());  // OutOfDate is a verified status by default…
  quote_options strict = o;
  strict.accepted = {tcb_status::up_to_date};
  auto s = verify_quote(load_quote("dcap-qvl/tdx_quote.bin"), strict);
  REQUIRE(s);
  CHECK_FALSE(s->passed());  // …and a client may refuse it
  CHECK(s->failed() == std::vector<std::string>{"tcb_status"});
  CHECK(s->find("tcb_status")->detail ==
        "OutOfDate (not accepted), advisories INTEL-SA-01192, INTEL-SA-01245, INTEL-SA-01312, "
        "INTEL-SA-01313");
}

TEST_CASE("attest: an out-of-date TDX module makes an up-to-date platform OutOfDate") {
  // Intel QVL convergeTcbStatuses. The TDX_01 module levels of the dcap-qvl collateral, edited
  // so that the quote's module SVN 6 falls to the OutOfDate level: the edited text no longer
  // carries Intel's signature, and the assessment is still made and reported.
  quote_options o = at(1752919234);
  o.collateral = load_collateral("dcap-qvl/tdx_quote_collateral.json", false);
  const std::string from = R"("TDX_01","mrsigner")";
  const size_t module = o.collateral->tcb_info.find(from);
  REQUIRE(module != std::string::npos);
  const size_t level = o.collateral->tcb_info.find(R"({"isvsvn":4})", module);
  REQUIRE(level != std::string::npos);
  o.collateral->tcb_info.replace(level, 12, R"({"isvsvn":7})");
  auto r = verify_quote(load_quote("dcap-qvl/tdx_quote.bin"), o);
  REQUIRE(r);
  CHECK(r->failed() == std::vector<std::string>{"tcb_info_signature"});
  REQUIRE(r->tcb);
  CHECK(r->tcb->platform_status == tcb_status::up_to_date);
  CHECK(r->tcb->module_status == tcb_status::out_of_date);
  CHECK(r->tcb->status == tcb_status::out_of_date);
}

TEST_CASE("attest: TCB status names are Intel's") {
  CHECK(parse_tcb_status("ConfigurationAndSWHardeningNeeded") == tcb_status::configuration_and_sw_hardening_needed);
  CHECK_FALSE(parse_tcb_status("uptodate"));
  for (int i = 0; i <= static_cast<int>(tcb_status::revoked); ++i)
    CHECK(parse_tcb_status(to_string(static_cast<tcb_status>(i))) == static_cast<tcb_status>(i));
}

TEST_CASE("attest: signatures and chains of every fixture quote verify without collateral") {
  for (const auto& [spec, want] : expectations().at("quotes").as_object()) {
    INFO("quote ", std::string(spec));
    auto r = verify_quote(load_quote(std::string(spec)), at(kChainTime));
    REQUIRE_MESSAGE(r, r.err().message);
    CHECK_MESSAGE(r->passed(), "failed: ", failed_names(*r));
    CHECK(r->checks.size() == 5);
    CHECK_FALSE(r->tcb);
  }
  auto sgx = verify_quote(load_quote("dcap-qvl/sgx_quote.bin"), at(kChainTime));
  REQUIRE(sgx);
  CHECK_MESSAGE(sgx->passed(), "failed: ", failed_names(*sgx));
}

TEST_CASE("attest: a flipped byte anywhere signed fails the check that covers it") {
  const bytes good = load_quote("dcap-qvl/tdx_quote.bin");
  const quote q = parse_quote(good).value();
  const std::string& pem = q.pck_chain_pem;
  const size_t pem_at = q.raw.size() - pem.size() - 1;  // the chain ends with one NUL byte
  REQUIRE(std::string_view(reinterpret_cast<const char*>(good.data() + pem_at), 27) == "-----BEGIN CERTIFICATE-----");
  const size_t second = pem.find("-----BEGIN CERTIFICATE-----", 1);
  REQUIRE(second != std::string::npos);
  // A base64 letter in the middle of a certificate's last full line (its signature): 'A' and
  // 'B' differ in one bit of the decoded bytes and keep the text valid base64.
  auto base64_flip_at = [&](size_t cert_start) {
    const size_t end = pem.find("-----END", cert_start);
    const size_t line = pem.rfind('\n', pem.rfind('\n', end - 1) - 1) + 1;
    return pem_at + line + 20;
  };
  // A base64 letter inside a certificate's P-256 public key (after 03 42 00 04 in the DER):
  // the first letter of a 4-letter group holds the top 6 bits of the group's first byte.
  auto pubkey_flip_at = [&](size_t cert_start) {
    const size_t body = pem.find('\n', cert_start) + 1;
    const size_t end = pem.find("-----END", cert_start);
    std::string b64;
    for (size_t i = body; i < end; ++i)
      if (pem[i] != '\n')
        b64.push_back(pem[i]);
    const bytes der = codec::base64::decode(b64).value();
    const uint8_t marker[] = {0x03, 0x42, 0x00, 0x04};
    const auto it = std::search(der.begin(), der.end(), std::begin(marker), std::end(marker));
    REQUIRE(it != der.end());
    const size_t key_byte = static_cast<size_t>(it - der.begin()) + 4 + 20;
    const size_t letter = key_byte / 3 * 4;
    return pem_at + body + letter + letter / 64;  // 64 letters per line
  };
  auto with_base64_flip = [&](size_t at) {
    bytes b = good;
    b.at(at) = b.at(at) == 'A' ? 'B' : (b.at(at) == 'B' ? 'A' : static_cast<uint8_t>(b.at(at) ^ 0x01));
    return b;
  };
  struct case_ {
    const char* what;
    bytes data;
    std::vector<std::string> failing;
  };
  const case_ cases[] = {
      {"header (user data)", flipped(good, 40), {"quote_signature"}},
      {"body (mr_td)", flipped(good, kV4Body + 136), {"quote_signature"}},
      {"body (report_data)", flipped(good, kV4Body + 520 + 63), {"quote_signature"}},
      {"quote signature r", flipped(good, kV4SigData + 5), {"quote_signature"}},
      {"quote signature s", flipped(good, kV4SigData + 60), {"quote_signature"}},
      {"attestation key", flipped(good, kV4SigData + 64 + 10), {"quote_signature", "qe_report_data"}},
      {"QE report (mr_enclave)", flipped(good, kV4QeReport + 64), {"qe_report_signature"}},
      {"QE report (report_data)", flipped(good, kV4QeReport + 320), {"qe_report_signature", "qe_report_data"}},
      {"QE report signature", flipped(good, kV4QeReport + 384 + 3), {"qe_report_signature"}},
      {"QE auth data", flipped(good, kV4QeReport + 384 + 64 + 2 + 7), {"qe_report_data"}},
      {"PCK leaf certificate (signature)", with_base64_flip(base64_flip_at(0)), {"pck_chain"}},
      {"PCK leaf certificate (public key)", with_base64_flip(pubkey_flip_at(0)), {"qe_report_signature", "pck_chain"}},
      {"PCK intermediate certificate (signature)", with_base64_flip(base64_flip_at(second)), {"pck_chain"}},
      {"PCK intermediate certificate (public key)", with_base64_flip(pubkey_flip_at(second)), {"pck_chain"}},
  };
  for (const auto& c : cases) {
    auto r = verify_quote(c.data, at(kChainTime));
    REQUIRE_MESSAGE(r, c.what, ": ", r.err().message);
    CHECK_MESSAGE(r->failed() == c.failing, c.what, ": failed ", failed_names(*r));
    CHECK(r->overall() == verdict::fail);
  }
}

TEST_CASE("attest: certificates are judged at the given time, expiry named in the detail") {
  const bytes raw = load_quote("dcap-qvl/tdx_quote.bin");
  // The PCK leaf is valid 2025-02-06T… to 2032-02-06T…
  auto late = verify_quote(raw, at(1956528000));  // 2032-01-01T00:00:00Z
  REQUIRE(late);
  CHECK(late->passed());
  auto expired = verify_quote(raw, at(1988150400));  // 2033-01-01T00:00:00Z
  REQUIRE(expired);
  CHECK(expired->failed() == std::vector<std::string>{"pck_chain"});
  const std::string& d = expired->find("pck_chain")->detail;
  CHECK_MESSAGE(d.find("'Intel SGX PCK Certificate' expired 2032-02-06T") != std::string::npos, d);
  CHECK_MESSAGE(d.find("checked at 2033-01-01T00:00:00Z") != std::string::npos, d);
  auto early = verify_quote(raw, at(1735689600));  // 2025-01-01T00:00:00Z
  REQUIRE(early);
  CHECK(early->failed() == std::vector<std::string>{"pck_chain"});
  CHECK(early->find("pck_chain")->detail.find("is not valid before 2025-02-06T") != std::string::npos);
}

TEST_CASE("attest: the trust anchor can be replaced") {
  const bytes raw = load_quote("dcap-qvl/tdx_quote.bin");
  quote_options o = at(kChainTime);
  o.root_ca_pem = fixture("intel/intel_sgx_root_ca.pem");
  auto same = verify_quote(raw, o);
  REQUIRE(same);
  CHECK(same->passed());
  CHECK(std::string(intel_sgx_root_ca_pem()) == fixture("intel/intel_sgx_root_ca.pem"));
  // Another self-signed P-256 certificate as the anchor: the Intel chain does not reach it.
  o.root_ca_pem = kCertA;
  auto other = verify_quote(raw, o);
  REQUIRE(other);
  CHECK(other->failed() == std::vector<std::string>{"pck_chain"});
  o.root_ca_pem = "not a certificate";
  CHECK(verify_quote(raw, o).code() == attest_errc::bad_certificate);
}

TEST_CASE("attest: collateral with a flipped signature byte fails its signature check") {
  const bytes raw = load_quote("dcap-qvl/tdx_quote.bin");
  const quote_collateral good = load_collateral("dcap-qvl/tdx_quote_collateral.json", false);
  struct case_ {
    const char* what;
    quote_collateral c;
    std::string failing;
  };
  quote_collateral tcb_sig = good, qe_sig = good, tcb_text = good, tcb_chain = good;
  tcb_sig.tcb_info_signature[10] ^= 0x01;
  qe_sig.qe_identity_signature[40] ^= 0x80;
  // A change in the signed text that leaves it valid JSON with the same meaning.
  tcb_text.tcb_info.insert(1, " ");
  // The issuer chain without its root: the TCB signing certificate still chains to the anchor.
  tcb_chain.tcb_info_issuer_chain =
      good.tcb_info_issuer_chain.substr(0, good.tcb_info_issuer_chain.find("-----END") + 26);
  const case_ cases[] = {
      {"tcb_info_signature", tcb_sig, "tcb_info_signature"},
      {"qe_identity_signature", qe_sig, "qe_identity_signature"},
      {"tcb_info text", tcb_text, "tcb_info_signature"},
  };
  for (const auto& c : cases) {
    quote_options o = at(1752919234);
    o.collateral = c.c;
    auto r = verify_quote(raw, o);
    REQUIRE(r);
    CHECK_MESSAGE(r->failed() == std::vector<std::string>{c.failing}, c.what, ": ", failed_names(*r));
  }
  quote_options o = at(1752919234);
  o.collateral = tcb_chain;
  auto r = verify_quote(raw, o);
  REQUIRE(r);
  CHECK_MESSAGE(r->passed(), failed_names(*r));

  // A collateral whose signed text is not TCB info is malformed input, not a failed check.
  quote_collateral broken = good;
  broken.tcb_info = "{\"version\":3}";
  o.collateral = broken;
  CHECK(verify_quote(raw, o).code() == attest_errc::bad_field);
  broken = good;
  broken.pck_crl = {0x30, 0x00};
  o.collateral = broken;
  CHECK(verify_quote(raw, o).code() == attest_errc::bad_certificate);
}

TEST_CASE("attest: collateral in Intel PCS form verifies like the QuoteCollateralV3 form") {
  const quote_collateral v3 = load_collateral("dcap-qvl/tdx_quote_collateral.json", false);
  // The bodies PCS serves: the signed object kept verbatim, the signature beside it.
  const std::string tcb_body =
      "{ \"tcbInfo\" : " + v3.tcb_info + ",\n \"signature\":\"" + codec::hex::encode(v3.tcb_info_signature) + "\"}";
  const std::string qe_body = "{\"enclaveIdentity\":" + v3.qe_identity + ",\"signature\":\"" +
                              codec::hex::encode(v3.qe_identity_signature) + "\"}";
  // PCS sends the issuer chain header percent-encoded.
  std::string header;
  for (unsigned char ch : v3.tcb_info_issuer_chain) {
    if (std::isalnum(ch)) {
      header.push_back(static_cast<char>(ch));
    } else {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", ch);
      header += buf;
    }
  }
  CHECK(decode_issuer_chain_header(header).value() == v3.tcb_info_issuer_chain);
  auto split = split_pcs_body(tcb_body, "tcbInfo");
  REQUIRE(split);
  CHECK(split->text == v3.tcb_info);
  auto c = collateral_from_pcs(tcb_body, header, qe_body, v3.qe_identity_issuer_chain, v3.root_ca_crl, v3.pck_crl);
  REQUIRE_MESSAGE(c, c.err().message);
  quote_options o = at(1752919234);
  o.collateral = *c;
  auto r = verify_quote(load_quote("dcap-qvl/tdx_quote.bin"), o);
  REQUIRE(r);
  CHECK_MESSAGE(r->passed(), failed_names(*r));
  CHECK(r->tcb->status == tcb_status::up_to_date);

  CHECK(split_pcs_body("{\"signature\":\"00\"}", "tcbInfo").code() == attest_errc::bad_field);
  CHECK(split_pcs_body("{\"tcbInfo\":{}", "tcbInfo").code() == attest_errc::bad_json);
  CHECK(split_pcs_body("{\"tcbInfo\":[],\"signature\":\"00\"}", "tcbInfo").code() == attest_errc::bad_field);
  CHECK(decode_issuer_chain_header("%2").code() == attest_errc::bad_field);
  CHECK(decode_issuer_chain_header("%zz").code() == attest_errc::bad_field);
  CHECK(parse_collateral("[]").code() == attest_errc::bad_field);
  CHECK(parse_collateral("{").code() == attest_errc::bad_json);
  CHECK(parse_collateral("{\"tcb_info\":\"{}\"}").code() == attest_errc::bad_field);
}

TEST_CASE("attest: collateral for another platform, or out of date, fails the checks that say so") {
  // quote-from-tappd.hex is FMSPC b0c06f000000; this collateral is for 90c06f000000.
  quote_options o = at(1774003274);
  o.collateral = load_collateral("dcap-qvl/tdx_quote_outdated_collateral.json", false);
  auto r = verify_quote(parse_quote_hex(fixture("dcap-qvl/quote-from-tappd.hex"))->raw, o);
  REQUIRE(r);
  CHECK(r->failed() == std::vector<std::string>{"tcb_info_platform", "tcb_level", "tcb_status"});
  CHECK(r->find("tcb_info_platform")->detail ==
        "TCB info is for FMSPC 90c06f000000, the PCK certificate names b0c06f000000");
  CHECK_FALSE(r->tcb);

  // A day after the collateral's next update (2025-07-19T10:16:03Z for the TCB info): the TCB
  // info, the QE identity and the PCK CRL (used by every chain) have all expired.
  quote_options late = at(1752919234 + 86400);
  late.collateral = load_collateral("dcap-qvl/tdx_quote_collateral.json", false);
  auto l = verify_quote(load_quote("dcap-qvl/tdx_quote.bin"), late);
  REQUIRE(l);
  for (const char* name : {"pck_chain", "tcb_info_validity", "qe_identity_validity"})
    CHECK_MESSAGE(!check_passed(*l, name), name);
  CHECK(l->find("tcb_info_validity")->detail ==
        "TCB info expired: its next update was due 2025-07-19T10:16:03Z (checked at "
        "2025-07-20T10:00:34Z)");
  CHECK(l->find("pck_chain")->detail.find("CRL") != std::string::npos);
}
