// SPDX-License-Identifier: Apache-2.0
// Tests of the attest module against real Intel TDX/SGX quotes, collateral and dstack event logs
// (tests/fixtures/tdx, sources in tests/fixtures/README.md; expected verdicts in expectations.json,
// from dcap-qvl's upstream tests or @phala/dcap-qvl 0.3.9 as noted there).
//
// Verification times: each DCAP case uses the `now` expectations.json gives (inside the
// collateral's validity window, as dcap-qvl's now_from_collateral() computes it). Checks that
// need no collateral run at kChainTime, 2027-01-01T00:00:00Z: inside every fixture PCK chain's
// validity (latest notBefore 2026-04-15, tdx-lite; earliest notAfter 2030-09-20, the SGX quote).
// Fixed times keep the suite independent of the clock: the certificates expire, the tests don't.
//
// Shared by the attest_*_test.cpp files of unit.attest: fixtures, certificates, test-side decoding,
// event-log fixtures, a /info answer, and network evidence with a fake CAA resolver.
#pragma once

#include "support.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "enact/attest/app.hpp"
#include "enact/attest/event_log.hpp"
#include "enact/attest/governance.hpp"
#include "enact/attest/network.hpp"
#include "enact/attest/quote.hpp"
#include "enact/attest/report.hpp"
#include "enact/attest/verify_all.hpp"
#include "enact/codec/base64.hpp"
#include "enact/codec/hex.hpp"
#include "enact/crypto/sha2.hpp"

using namespace enact;
using namespace enact::attest;
namespace json = boost::json;

namespace attest_test {

constexpr int64_t kChainTime = 1798761600;  // 2027-01-01T00:00:00Z, see the file comment

// Self-signed P-256 certificates made with `openssl req -x509 -newkey ec` for these tests; the
// SHA-256 of cert A's DER is from `openssl x509 -outform DER | sha256sum`.
constexpr std::string_view kCertA =
    "-----BEGIN CERTIFICATE-----\n"
    "MIIBfDCCASKgAwIBAgIBGjAKBggqhkjOPQQDAjAcMRowGAYDVQQDDBFhcHBhLmV4\n"
    "YW1wbGUudGVzdDAgFw0yNjExMjMxMzUxMzJaGA8yMTI2MTAzMDEzNTEzMlowHDEa\n"
    "MBgGA1UEAwwRYXBwYS5leGFtcGxlLnRlc3QwWTATBgcqhkjOPQIBBggqhkjOPQMB\n"
    "BwNCAATCdrSJ4AHrOTDk9GN43euSFYLh6iavbPUQRVsVwIHGzXKBPNNAA7S+qE4G\n"
    "ZNUHA7GiRM9FouhU+tHWlKN0ve9qo1MwUTAdBgNVHQ4EFgQUG8+98N6FuIigQDFS\n"
    "xoLokqSWFDwwHwYDVR0jBBgwFoAUG8+98N6FuIigQDFSxoLokqSWFDwwDwYDVR0T\n"
    "AQH/BAUwAwEB/zAKBggqhkjOPQQDAgNIADBFAiAid1ScXtKeVby5I6su/3LkUoG1\n"
    "t4epciWIX93mgV2j/AIhAJfdpOEJqlTK4D4dnmfbHBKxagHjw/qqlhuSOxBzxb2y\n"
    "-----END CERTIFICATE-----\n";
constexpr std::string_view kCertASha256 = "73faca7149051f1345ae88a89093be2efedce353192aea2f407bbe94231039fd";
constexpr std::string_view kCertB =
    "-----BEGIN CERTIFICATE-----\n"
    "MIIBfTCCASKgAwIBAgIBGzAKBggqhkjOPQQDAjAcMRowGAYDVQQDDBFhcHBiLmV4\n"
    "YW1wbGUudGVzdDAgFw0yNjExMjMxMzUxMzJaGA8yMTI2MTAzMDEzNTEzMlowHDEa\n"
    "MBgGA1UEAwwRYXBwYi5leGFtcGxlLnRlc3QwWTATBgcqhkjOPQIBBggqhkjOPQMB\n"
    "BwNCAATEHqpPZDqV2chgdrPV739cwlXCW9zYfrmm7N2eQZik73m+If8WNW3GrdIU\n"
    "RjK0NrBQ4C73zTIiMoWR+yXrPQO7o1MwUTAdBgNVHQ4EFgQU8y2jqOPqk/X0kHr2\n"
    "94zHnEPW66QwHwYDVR0jBBgwFoAU8y2jqOPqk/X0kHr294zHnEPW66QwDwYDVR0T\n"
    "AQH/BAUwAwEB/zAKBggqhkjOPQQDAgNJADBGAiEAqDRhMxy5msjbWFZWKnS1uj7u\n"
    "BI3CP5Hu4pdbDr1jo80CIQChmZlpmo11B3077ADkUpY5BvimcSj3b/I7yTdrGnse\n"
    "XQ==\n"
    "-----END CERTIFICATE-----\n";

inline std::string fixture(const std::string& rel) { return test::read_file(test::fixture_path("tdx/" + rel)); }

inline bytes unhex(std::string_view s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' '))
    s.remove_suffix(1);
  return codec::hex::decode(s).value();
}

inline const json::object& expectations() {
  static const json::value v = json::parse(fixture("expectations.json"));
  return v.as_object();
}

// --- SCALE (dstack-attest attestation.rs VersionedAttestation::V0), test-side decoding -------

struct scale_reader {
  bytes_view d;
  size_t pos = 0;
  [[nodiscard]] uint32_t at(size_t i) const {
    if (i >= d.size())
      throw std::runtime_error("SCALE data ends early");
    return d[i];
  }
  uint64_t compact() {
    const uint8_t b = at(pos);
    switch (b & 3) {
      case 0:
        pos += 1;
        return b >> 2;
      case 1: {
        const uint64_t v = (at(pos) | at(pos + 1) << 8) >> 2;
        pos += 2;
        return v;
      }
      case 2: {
        const uint64_t v = (static_cast<uint64_t>(at(pos)) | at(pos + 1) << 8 | at(pos + 2) << 16 |
                            static_cast<uint64_t>(at(pos + 3)) << 24) >>
                           2;
        pos += 4;
        return v;
      }
      default:
        throw std::runtime_error("SCALE big compact integers are not used by the fixtures");
    }
  }
  uint32_t u32() {
    const uint32_t v = at(pos) | at(pos + 1) << 8 | at(pos + 2) << 16 | static_cast<uint32_t>(at(pos + 3)) << 24;
    pos += 4;
    return v;
  }
  bytes vec() {
    const size_t n = compact();
    if (pos + n > d.size())
      throw std::runtime_error("SCALE vector past the end");
    bytes out(d.begin() + static_cast<std::ptrdiff_t>(pos), d.begin() + static_cast<std::ptrdiff_t>(pos + n));
    pos += n;
    return out;
  }
};

struct scale_attestation {
  bytes quote;
  event_log log;
};

inline scale_attestation decode_scale(bytes_view b) {
  scale_reader r{b};
  REQUIRE(r.at(0) == 0);  // VersionedAttestation::V0
  REQUIRE(r.at(1) == 0);  // AttestationQuote::DstackTdx
  r.pos = 2;
  scale_attestation out;
  out.quote = r.vec();
  const size_t n = r.compact();
  for (size_t i = 0; i < n; ++i) {
    event e;
    e.imr = r.u32();
    e.event_type = r.u32();
    e.digest = r.vec();
    const bytes name = r.vec();
    e.name.assign(name.begin(), name.end());
    e.payload = r.vec();
    out.log.events.push_back(std::move(e));
  }
  return out;
}

/// The quote bytes of a fixture named as in expectations.json.
inline bytes load_quote(const std::string& spec) {
  const size_t hash = spec.find('#');
  if (hash != std::string::npos) {
    const std::string file = spec.substr(0, hash);
    if (file.size() > 4 && file.substr(file.size() - 4) == ".bin")
      return decode_scale(as_bytes(fixture(file))).quote;
    const json::value doc = json::parse(fixture(file));
    return unhex(doc.at(spec.substr(hash + 1)).as_string());
  }
  if (spec.size() > 4 && spec.substr(spec.size() - 4) == ".hex")
    return unhex(fixture(spec));
  const std::string raw = fixture(spec);
  return bytes(raw.begin(), raw.end());
}

inline quote_collateral load_collateral(const std::string& file, bool drop_pck_chain) {
  quote_collateral c = parse_collateral(fixture(file)).value();
  if (drop_pck_chain)
    c.pck_certificate_chain.reset();
  return c;
}

inline quote_options at(int64_t now) {
  quote_options o;
  o.now = now;
  return o;
}

inline bool check_passed(const checklist& r, std::string_view name) {
  const check* c = r.find(name);
  INFO("check ", std::string(name));
  REQUIRE(c != nullptr);
  return c->passed;
}

inline std::string failed_names(const checklist& r) {
  std::string out;
  for (const auto& n : r.failed())
    out += n + " ";
  return out;
}

inline bytes flipped(bytes b, size_t at, uint8_t mask = 0x01) {
  b.at(at) ^= mask;
  return b;
}

// Offsets in a TDX v4 quote (Intel TDX DCAP Quoting Library API §A.3).
constexpr size_t kV4Body = 48;
constexpr size_t kV4SigSize = 48 + 584;               // u32 signature data size
constexpr size_t kV4SigData = kV4SigSize + 4;         // signature, attestation key, …
constexpr size_t kV4CertType = kV4SigData + 64 + 64;  // u16 6, u32 size
constexpr size_t kV4QeReport = kV4CertType + 2 + 4;

}  // namespace attest_test

// --- event log -------------------------------------------------------------------------------

namespace attest_test {

struct log_fixture {
  bytes quote;
  event_log log;
};

/// The quote and event log of each rtmr_replay entry of expectations.json.
inline log_fixture replay_fixture(const std::string& key) {
  if (key == "dstack/tdx-lite-attestation.json (SCALE)") {
    const json::value doc = json::parse(fixture("dstack/tdx-lite-attestation.json"));
    auto s = decode_scale(unhex(doc.at("attestation").as_string()));
    return {s.quote, s.log};
  }
  if (key == "dstack/guest-agent-attestation.bin (SCALE)") {
    auto s = decode_scale(as_bytes(fixture("dstack/guest-agent-attestation.bin")));
    return {s.quote, s.log};
  }
  if (key == "dstack/simulator-legacy-quote.hex + simulator-legacy-eventlog.json")
    return {load_quote("dstack/simulator-legacy-quote.hex"),
            parse_event_log(fixture("dstack/simulator-legacy-eventlog.json")).value()};
  if (key == "near-mpc/quote.bin + tcb_info.json") {
    const json::value doc = json::parse(fixture("near-mpc/tcb_info.json"));
    return {load_quote("near-mpc/quote.bin"), event_log_from_json(doc.at("event_log")).value()};
  }
  const json::value doc = json::parse(fixture(key));
  return {unhex(doc.at("quote").as_string()), event_log_from_json(doc.at("event_log")).value()};
}

}  // namespace attest_test

// --- application -----------------------------------------------------------------------------

namespace attest_test {

/// A GET /info answer built from near-mpc's tcb_info.json (a real guest-agent tcb_info); /info
/// itself was not published with it. The guest agent sends tcb_info as a JSON string.
inline std::string near_info(bool tcb_as_string) {
  const json::value tcb = json::parse(fixture("near-mpc/tcb_info.json"));
  json::object info;
  info["app_id"] = "2911e1f733466216dedb862d6d669e11256ee7a3";
  info["compose_hash"] = tcb.at("compose_hash");
  if (tcb_as_string)
    info["tcb_info"] = json::serialize(tcb);
  else
    info["tcb_info"] = tcb;
  return json::serialize(info);
}

inline event_log near_log() { return replay_fixture("near-mpc/quote.bin + tcb_info.json").log; }

}  // namespace attest_test

// --- network ---------------------------------------------------------------------------------

namespace attest_test {

inline bytes pem_der(std::string_view pem) {
  std::string body;
  std::string_view s = pem.substr(pem.find('\n') + 1);
  s = s.substr(0, s.find("-----END"));
  for (char c : s)
    if (c != '\n')
      body.push_back(c);
  return codec::base64::decode(body).value();
}

constexpr std::string_view kDomain = "app.example.test";
constexpr std::string_view kAccount = "https://acme-v02.api.letsencrypt.org/acme/acct/123456789";

class fake_resolver final : public caa_resolver {
 public:
  std::map<std::string, std::vector<caa_record>> records;
  std::vector<std::string> asked;
  bool fail_lookup = false;
  result<std::vector<caa_record>> caa(std::string_view domain) override {
    asked.emplace_back(domain);
    if (fail_lookup)
      return fail(attest_errc::lookup_failed, "CAA: SERVFAIL");
    const auto it = records.find(std::string(domain));
    return it == records.end() ? std::vector<caa_record>{} : it->second;
  }
};

/// Evidence as dstack-ingress publishes it (evidence-lib.sh), around a real quote whose
/// report_data is patched to bind sha256sum.txt: the network check reads the quote, it does
/// not verify it (the quote check does).
inline network_evidence make_evidence(std::string account_json = R"({"uri":")" + std::string(kAccount) +
                                                                 R"(","status":"valid"})") {
  network_evidence e;
  e.domain = kDomain;
  e.files["acme-account.json"] = std::move(account_json);
  e.files["cert-app.example.test.pem"] = kCertA;
  std::string sums;
  for (const char* name : {"acme-account.json", "cert-app.example.test.pem"})
    sums += codec::hex::encode(crypto::sha256(as_bytes(e.files[name]))) + "  " + name + "\n";
  e.files["sha256sum.txt"] = sums;
  bytes quote = load_quote("dcap-qvl/tdx_quote.bin");
  const hash256 h = crypto::sha256(as_bytes(sums));
  std::copy(h.begin(), h.end(), quote.begin() + kV4Body + 520);
  std::fill(quote.begin() + kV4Body + 520 + 32, quote.begin() + kV4Body + 584, 0);
  e.files["quote.json"] = R"({"quote":")" + codec::hex::encode(quote) + R"(","report_data":")" + codec::hex::encode(h) +
                          std::string(64, '0') + "\"}";
  e.served_cert_der = pem_der(kCertA);
  return e;
}

inline fake_resolver caa_for_account(std::string_view account) {
  fake_resolver r;
  r.records[std::string(kDomain)] = {
      {0, "issue", "letsencrypt.org; validationmethods=dns-01; accounturi=" + std::string(account)},
      {0, "iodef", "mailto:security@example.test"},
  };
  return r;
}

}  // namespace attest_test
