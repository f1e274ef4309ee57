// SPDX-License-Identifier: Apache-2.0
// The attest module's event-log replay and application check (attest_test.hpp for the fixtures).
#include "attest_test.hpp"

using namespace attest_test;

// --- event log -------------------------------------------------------------------------------

TEST_CASE("attest: every event log replays to the RTMRs expectations.json records") {
  for (const auto& [key, want_v] : expectations().at("rtmr_replay").as_object()) {
    const json::object& want = want_v.as_object();
    INFO("log ", std::string(key));
    log_fixture f = replay_fixture(std::string(key));
    CHECK(f.log.events.size() == static_cast<size_t>(want.at("events").as_int64()));
    const quote q = parse_quote(f.quote).value();
    const event_log_report r = verify_event_log(f.log, *q.td);
    CHECK(r.replayed.digests_computed == static_cast<size_t>(want.at("runtime_digests_computed").as_int64()));
    CHECK(r.replayed.digest_mismatches.size() == static_cast<size_t>(want.at("runtime_digest_mismatch").as_int64()));
    const auto& match = want.at("match").as_array();
    for (size_t i = 0; i < 4; ++i)
      CHECK_MESSAGE(check_passed(r, "rtmr" + std::to_string(i)) == match[i].as_bool(), "rtmr", i);
  }
}

TEST_CASE("attest: RTMR3 runtime events hold what expectations.json records") {
  const std::map<std::string, std::string> logs = {
      {"dstack/verifier-quote-report.json", "dstack/verifier-quote-report.json"},
      {"dstack/tdx-lite-getquote.json", "dstack/tdx-lite-getquote.json"},
      {"dstack/guest-agent-attestation.bin", "dstack/guest-agent-attestation.bin (SCALE)"},
      {"dstack/simulator-legacy-eventlog.json", "dstack/simulator-legacy-quote.hex + simulator-legacy-eventlog.json"},
      {"dstack-examples/rtmr3-report.json", "dstack-examples/rtmr3-report.json"},
      {"near-mpc/tcb_info.json", "near-mpc/quote.bin + tcb_info.json"},
  };
  for (const auto& [key, want_v] : expectations().at("rtmr3_events").as_object()) {
    INFO("log ", std::string(key));
    REQUIRE(logs.count(std::string(key)) == 1);
    const log_fixture f = replay_fixture(logs.at(std::string(key)));
    for (const auto& [name, payload] : want_v.as_object()) {
      const event* e = f.log.find_runtime(name);
      REQUIRE_MESSAGE(e != nullptr, std::string(name));
      CHECK(e->imr == 3);
      CHECK(codec::hex::encode(e->payload) == payload.as_string());
    }
  }
}

TEST_CASE("attest: quote and event log verify together; an altered payload fails RTMR3") {
  const json::value doc = json::parse(fixture("dstack/verifier-quote-report.json"));
  quote_options o = at(kChainTime);
  o.log = event_log_from_json(doc.at("event_log")).value();
  const bytes raw = unhex(doc.at("quote").as_string());
  auto r = verify_quote(raw, o);
  REQUIRE(r);
  CHECK_MESSAGE(r->passed(), failed_names(*r));
  REQUIRE(r->log);
  CHECK(r->checks.size() == 10);
  CHECK(codec::hex::encode(r->log->log.find_runtime("compose-hash")->payload) ==
        "3763bc34552cf3a27ff71ad5f7a90471562a1a2df552dfc1998cba2d60da27e7");

  // The same log with one runtime payload changed: its given digest no longer matches, and
  // replaying the payload changes RTMR3.
  for (auto& e : o.log->events)
    if (e.name == "compose-hash")
      e.payload[0] ^= 0x01;
  auto bad = verify_quote(raw, o);
  REQUIRE(bad);
  CHECK(bad->failed() == std::vector<std::string>{"event_log_digests", "rtmr3"});
  CHECK(bad->find("event_log_digests")->detail == "22 compose-hash: the digest is not that of its payload");

  // A log stripped of runtime digests (tdx-lite): the recomputed digests replay; an altered
  // payload fails RTMR3 alone.
  const json::value lite = json::parse(fixture("dstack/tdx-lite-getquote.json"));
  event_log lite_log = event_log_from_json(lite.at("event_log")).value();
  for (auto& e : lite_log.events)
    if (e.name == "key-provider")
      e.payload.back() ^= 0x01;
  const quote lq = parse_quote(unhex(lite.at("quote").as_string())).value();
  const event_log_report lr = verify_event_log(lite_log, *lq.td);
  CHECK(lr.failed() == std::vector<std::string>{"rtmr3"});

  // A boot event's digest changed: its RTMR fails.
  event_log boot = event_log_from_json(doc.at("event_log")).value();
  boot.events.at(0).digest[5] ^= 0x01;
  const quote vq = parse_quote(raw).value();
  CHECK(verify_event_log(boot, *vq.td).failed() == std::vector<std::string>{"rtmr0"});
}

TEST_CASE("attest: verify_attestation takes the GET /attestation answer") {
  auto r = verify_attestation(fixture("dstack/verifier-quote-report.json"), at(kChainTime));
  REQUIRE_MESSAGE(r, r.err().message);
  CHECK_MESSAGE(r->passed(), failed_names(*r));
  CHECK(r->log);
  CHECK(verify_attestation("{\"quote\":\"zz\"}").code() == attest_errc::bad_field);
  CHECK(verify_attestation("{}").code() == attest_errc::bad_field);
  CHECK(verify_attestation("[").code() == attest_errc::bad_json);
  quote_options sgx = at(kChainTime);
  sgx.log = event_log{};
  CHECK(verify_quote(load_quote("dcap-qvl/sgx_quote.bin"), sgx).code() == attest_errc::bad_field);
}

TEST_CASE("attest: runtime event digests (dstack runtime_events.rs)") {
  event e;
  e.event_type = kRuntimeEventType;
  e.name = "compose-hash";
  e.payload = unhex("3763bc34552cf3a27ff71ad5f7a90471562a1a2df552dfc1998cba2d60da27e7");
  // v1: the digest the verifier-quote-report.json log carries for this event.
  const json::value doc = json::parse(fixture("dstack/verifier-quote-report.json"));
  const event_log log = event_log_from_json(doc.at("event_log")).value();
  const event* given = log.find_runtime("compose-hash");
  REQUIRE(given);
  const crypto::hash384 d1 = runtime_event_digest(e);
  CHECK(bytes(d1.begin(), d1.end()) == given->digest);
  // v2: SHA-384 of the JCS preimage dstack's tests spell out.
  e.version = 2;
  e.payload = {0xab, 0xcd};
  CHECK(runtime_event_digest(e) ==
        crypto::sha384(as_bytes(R"({"name":"compose-hash","payload":"abcd","type":134217729})")));
  e.name = "a\"b\\\n\x01";
  CHECK(runtime_event_digest(e) ==
        crypto::sha384(as_bytes(R"({"name":"a\"b\\\n\u0001","payload":"abcd","type":134217729})")));
}

TEST_CASE("attest: malformed event logs are typed errors") {
  test::check_refusals<attest_errc>(
      {
          {"[", attest_errc::bad_json},
          {"{}", attest_errc::bad_field},
          {"\"[\"", attest_errc::bad_json},
          {"\"\\\"[]\\\"\"", attest_errc::bad_field},
          {"[1]", attest_errc::bad_field},
          {R"([{"event_type":1}])", attest_errc::bad_field},
          {R"([{"imr":4,"event_type":1}])", attest_errc::bad_field},
          {R"([{"imr":-1,"event_type":1}])", attest_errc::bad_field},
          {R"([{"imr":0,"event_type":4294967296}])", attest_errc::bad_field},
          {R"([{"imr":0,"event_type":1,"digest":"00"}])", attest_errc::bad_field},
          {R"([{"imr":0,"event_type":1,"digest":"0g"}])", attest_errc::bad_field},
          {R"([{"imr":0,"event_type":1,"event_payload":"abc"}])", attest_errc::bad_field},
          {R"([{"imr":0,"event_type":1,"event":5}])", attest_errc::bad_field},
          {R"([{"imr":0,"event_type":1,"version":3}])", attest_errc::bad_field},
      },
      [](std::string_view in) { return parse_event_log(in); });
  auto r = parse_event_log(R"([{"imr":9,"event_type":1}])");
  CHECK(r.err().message == "event_log[0].imr: 9 exceeds 3");
  // A boot event without a digest cannot be replayed.
  event_log log = parse_event_log(R"([{"imr":1,"event_type":1,"event":"x"}])").value();
  const replay_result rr = replay(log);
  CHECK(rr.digest_mismatches == std::vector<std::string>{"0 x: a boot event without a digest"});
  // Logs built in code are held to the same rules as parsed ones.
  event_log built;
  built.events.push_back(event{7, 1, bytes(48, 0), "far", {}, 1});
  built.events.push_back(event{0, 1, bytes(47, 0), "short", {}, 1});
  const replay_result br = replay(built);
  CHECK(br.digest_mismatches ==
        std::vector<std::string>{"0 far: IMR 7 is not an RTMR (0..3)", "1 short: a digest of 47 bytes, not 48"});
  CHECK(br.rtmr[0] == crypto::hash384{});
}

// --- application -----------------------------------------------------------------------------

TEST_CASE("attest: the application check passes for near-mpc's pinned compose") {
  for (bool as_string : {true, false}) {
    auto info = parse_app_info(near_info(as_string));
    REQUIRE_MESSAGE(info, info.err().message);
    CHECK(info->app_compose == fixture("near-mpc/app_compose.json"));
    REQUIRE(info->event_log_in_info);
    const app_report r = verify_app(*info, near_log());
    CHECK_MESSAGE(r.passed(), failed_names(r));
    CHECK(codec::hex::encode(r.computed_compose_hash) ==
          "2911e1f733466216dedb862d6d669e11256ee7a34ce4dbc66c4b807ba7a9c895");
    REQUIRE(r.images.size() == 2);
    CHECK(r.images[0].image ==
          "nearone/"
          "mpc-launcher@sha256:5618a93a78c9ac9173e7ebf7c8af173bd675be6832a2f8c2a9a7149ac2678f54");
    CHECK(r.find("images_pinned")->detail == "all 2 images are pinned by @sha256 digest");
  }
}

TEST_CASE("attest: the application check fails on a changed compose, hash or app id") {
  app_info info = parse_app_info(near_info(true)).value();
  const event_log log = near_log();
  {
    app_info changed = info;
    changed.app_compose.insert(changed.app_compose.size() - 1, " ");
    const app_report r = verify_app(changed, log);
    CHECK(r.failed() == std::vector<std::string>{"compose_hash"});
  }
  {
    // /info claims another compose hash, and the app_compose that hashes to it.
    app_info other = info;
    other.app_compose = fixture("dstack-examples/rtmr3-app-compose.json");
    other.compose_hash = crypto::sha256(as_bytes(other.app_compose));
    const app_report r = verify_app(other, log);
    CHECK(r.failed() == std::vector<std::string>{"compose_hash_event", "images_pinned"});
    CHECK(r.find("compose_hash_event")->detail ==
          "the measured compose-hash event holds "
          "2911e1f733466216dedb862d6d669e11256ee7a34ce4dbc66c4b807ba7a9c895, not the stated "
          "compose hash");
  }
  {
    app_info other = info;
    other.app_id = "0000000000000000000000000000000000000001";
    CHECK(verify_app(other, log).failed() == std::vector<std::string>{"app_id_event"});
  }
  CHECK(verify_app(info, event_log{}).failed() == std::vector<std::string>{"compose_hash_event", "app_id_event"});
}

TEST_CASE("attest: an unpinned image is reported by name (dstack-examples rtmr3 compose)") {
  const std::string compose = fixture("dstack-examples/rtmr3-app-compose.json");
  const log_fixture f = replay_fixture("dstack-examples/rtmr3-report.json");
  json::object info;
  info["app_id"] = "06768e6df639ce3be65e9e5321f8b2d82dbffb01";
  info["compose_hash"] = codec::hex::encode(crypto::sha256(as_bytes(compose)));
  info["tcb_info"] = json::object{{"app_compose", compose}};
  const app_info parsed = parse_app_info(json::serialize(info)).value();
  CHECK_FALSE(parsed.event_log_in_info);
  const app_report r = verify_app(parsed, f.log);
  CHECK(r.failed() == std::vector<std::string>{"images_pinned"});
  CHECK(r.unpinned_images == std::vector<std::string>{"quay.io/jupyter/base-notebook"});
  CHECK(r.find("images_pinned")->detail == "not pinned by @sha256 digest: quay.io/jupyter/base-notebook");
  CHECK(to_json(r).at("facts").at("unpinned_images").as_array().size() == 1);
}

TEST_CASE("attest: image lines of a compose file") {
  const std::string d64(64, 'a');
  struct case_ {
    std::string line;
    std::string image;
    bool pinned;
  };
  const case_ cases[] = {
      {"    image: repo/app@sha256:" + d64, "repo/app@sha256:" + d64, true},
      {"image: \"repo/app:1.0@sha256:" + d64 + "\"", "repo/app:1.0@sha256:" + d64, true},
      {"  image: 'repo/app@sha256:" + d64 + "'  ", "repo/app@sha256:" + d64, true},
      {"  image: repo/app@sha256:" + d64 + " # pinned", "repo/app@sha256:" + d64, true},
      {"  - image: repo/app@sha256:" + std::string(64, 'F'), "repo/app@sha256:" + std::string(64, 'F'), true},
      {"  image: repo/app:latest", "repo/app:latest", false},
      {"  image: repo/app@sha256:" + d64.substr(1), "repo/app@sha256:" + d64.substr(1), false},
      {"  image: repo/app@sha256:" + d64 + "0", "repo/app@sha256:" + d64 + "0", false},
      {"  image: repo/app@sha256:" + d64.substr(1) + "g", "repo/app@sha256:" + d64.substr(1) + "g", false},
      {"  image: @sha256:" + d64, "@sha256:" + d64, false},
      {"  image:", "", false},
  };
  for (const auto& c : cases) {
    const auto images = compose_images("services:\n  a:\n" + c.line + "\n    user: root\n");
    REQUIRE_MESSAGE(images.size() == 1, c.line);
    CHECK_MESSAGE(images[0].image == c.image, c.line);
    CHECK_MESSAGE(images[0].pinned == c.pinned, c.line);
  }
  CHECK(compose_images("services:\n  a:\n    x-image: foo\n    # image: bar\n").empty());
}

TEST_CASE("attest: malformed /info is a typed error") {
  struct bad {
    std::string in;
    attest_errc code;
  };
  const std::string hash(64, '0');
  const std::string id(40, '0');
  const bad cases[] = {
      {"{", attest_errc::bad_json},
      {"[]", attest_errc::bad_field},
      {R"({"compose_hash":")" + hash + R"(","tcb_info":{"app_compose":"{}"}})", attest_errc::bad_field},
      {R"({"app_id":"00","compose_hash":")" + hash + R"(","tcb_info":{"app_compose":"{}"}})", attest_errc::bad_field},
      {R"({"app_id":")" + id + R"(","compose_hash":"00","tcb_info":{"app_compose":"{}"}})", attest_errc::bad_field},
      {R"({"app_id":")" + id + R"(","compose_hash":")" + hash + R"(","tcb_info":{}})", attest_errc::bad_field},
      {R"({"app_id":")" + id + R"(","compose_hash":")" + hash + R"(","tcb_info":"{"})", attest_errc::bad_json},
      {R"({"app_id":")" + id + R"(","compose_hash":")" + hash +
           R"(","tcb_info":{"app_compose":"{}","event_log":[{"imr":7,"event_type":1}]}})",
       attest_errc::bad_field},
  };
  for (const auto& c : cases) {
    auto r = parse_app_info(c.in);
    REQUIRE_MESSAGE(!r, c.in);
    CHECK_MESSAGE(r.code() == c.code, c.in, ": ", r.err().message);
  }
  app_info info = parse_app_info(R"({"app_id":"0x)" + std::string(40, 'A') + R"(","compose_hash":")" + hash +
                                 R"(","tcb_info":{"app_compose":"not json"}})")
                      .value();
  CHECK(info.app_id == std::string(40, 'a'));
  const app_report r = verify_app(info, event_log{});
  CHECK(r.find("images_pinned")->detail == "app_compose is not JSON");
}
