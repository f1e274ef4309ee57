// SPDX-License-Identifier: Apache-2.0
// EIP-4361 messages (enact/siwe/siwe.hpp): the strict parser, the text builder that parse()
// reads back, RFC 3339 times, and the personal_sign check of who signed a message.
#include "enact/siwe/siwe.hpp"

#include <doctest/doctest.h>

#include "enact/codec/hex.hpp"
#include "enact/address.hpp"
#include "enact/crypto/eip191.hpp"
#include "enact/crypto/secp256k1.hpp"
#include "enact/secret.hpp"

namespace enact::siwe {
namespace {

using namespace std::chrono_literals;

const time_point t0 = time_point{std::chrono::sys_days{std::chrono::year{2026} / 11 / 1}.time_since_epoch()};

const std::string kAddr = "0x" + std::string(40, 'a');
const std::string kGood = "example.org:8080 wants you to sign in with your Ethereum account:\n" + kAddr +
                          "\n\nA statement.\n\nURI: https://example.org:8080/auth/authorize\nVersion: 1\n"
                          "Chain ID: 137\nNonce: abcdef0123456789\nIssued At: 2026-11-01T00:00:00.000Z";

TEST_CASE("EIP-4361 messages are parsed strictly") {
  const auto m = parse(kGood);
  REQUIRE(m.has_value());
  CHECK(m->domain == "example.org:8080");
  CHECK(m->statement == std::optional<std::string>("A statement."));
  CHECK(m->uri == "https://example.org:8080/auth/authorize");
  CHECK(m->version == "1");
  CHECK(m->chain_id == 137);
  CHECK(m->nonce == "abcdef0123456789");
  CHECK(m->issued_at == t0);
  CHECK(codec::hex::encode_prefixed(m->account) == kAddr);
  CHECK(!m->expiration_time);
  CHECK(!m->not_before);
  CHECK(!m->request_id);

  const std::string no_statement = "a.org wants you to sign in with your Ethereum account:\n" + kAddr +
                                   "\n\n\nURI: https://a.org\nVersion: 1\nChain ID: 1\nNonce: abcdefgh\n"
                                   "Issued At: 2026-11-01T00:00:00Z\nExpiration Time: 2026-11-01T00:10:00Z\n"
                                   "Not Before: 2026-10-31T23:59:00.5Z\nRequest ID: r-1";
  const auto n = parse(no_statement);
  REQUIRE(n.has_value());
  CHECK(!n->statement);
  CHECK(n->expiration_time == std::optional<time_point>(t0 + 10min));
  CHECK(n->not_before == std::optional<time_point>(t0 - 1min + 500ms));
  CHECK(n->request_id == std::optional<std::string>("r-1"));

  const auto replace = [&](std::string_view from, std::string_view to) {
    std::string s = kGood;
    const auto at = s.find(from);
    REQUIRE(at != std::string::npos);
    s.replace(at, from.size(), to);
    return s;
  };
  struct case_ {
    const char* what;
    std::string text;
    siwe_errc code;
    const char* words;
  };
  const case_ bad[] = {
      {"CRLF line ends", replace("\nVersion", "\r\nVersion"), siwe_errc::not_utf8, "control character"},
      {"not UTF-8", replace("A statement.", "A \xC0\xAF statement."), siwe_errc::not_utf8, "not UTF-8"},
      {"too few lines", "a.org wants you to sign in with your Ethereum account:\n" + kAddr, siwe_errc::bad_structure,
       "too few lines"},
      {"scheme before the domain", "https://" + kGood, siwe_errc::bad_value, "domain"},
      {"other header", replace("wants you to sign in", "asks you to sign in"), siwe_errc::bad_structure, "line 1"},
      {"bad checksum", replace(kAddr, "0x" + std::string(39, 'a') + "A"), siwe_errc::bad_value, "checksum"},
      {"no blank line", replace("\n\nA statement", "\nA statement"), siwe_errc::bad_structure, "line"},
      {"no blank line after the statement", replace("A statement.\n\n", "A statement.\n"), siwe_errc::bad_structure,
       "line 5"},
      {"version 2", replace("Version: 1", "Version: 2"), siwe_errc::unsupported, "Version"},
      {"missing version", replace("Version: 1\n", ""), siwe_errc::bad_structure, "Version"},
      {"empty field", replace("Chain ID: 137", "Chain ID: "), siwe_errc::bad_value, "empty"},
      {"chain id not decimal", replace("Chain ID: 137", "Chain ID: 0x89"), siwe_errc::bad_value, "Chain ID"},
      {"chain id with a leading zero", replace("Chain ID: 137", "Chain ID: 0137"), siwe_errc::bad_value, "Chain ID"},
      {"URI with a space", replace("/auth/authorize", "/auth authorize"), siwe_errc::bad_value, "URI"},
      {"short nonce", replace("abcdef0123456789", "abc123"), siwe_errc::bad_value, "Nonce"},
      {"nonce with symbols", replace("abcdef0123456789", "abcdef01-3456789"), siwe_errc::bad_value, "Nonce"},
      {"issued at not UTC", replace("00:00:00.000Z", "00:00:00+01:00"), siwe_errc::bad_value, "Issued At"},
      {"resources", kGood + "\nResources:\n- https://example.org/x", siwe_errc::unsupported, "Resources"},
      {"trailing line", kGood + "\n", siwe_errc::bad_structure, "unexpected"},
      {"fields out of order", replace("Version: 1\nChain ID: 137", "Chain ID: 137\nVersion: 1"),
       siwe_errc::bad_structure, "Version"},
      {"too long", kGood + std::string(5000, 'x'), siwe_errc::too_large, "bytes"},
  };
  for (const auto& c : bad) {
    CAPTURE(c.what);
    const auto r = parse(c.text);
    REQUIRE(!r.has_value());
    CHECK(r.code() == c.code);
    CHECK(r.err().message.find(c.words) != std::string::npos);
    // The SDK's parse errors are request errors to a server (category "enact.*").
    CHECK(std::string_view(r.code().category().name()) == "enact.siwe");
  }
}

TEST_CASE("to_text writes what parse reads back") {
  message m;
  m.domain = "localhost:8080";
  m.account = parse_address(kAddr).value();
  m.uri = "http://localhost:8080/auth/authorize";
  m.chain_id = 10;
  m.nonce = "0123456789abcdef";
  m.issued_at = t0 + 1234ms;
  const std::string text = to_text(m);
  CHECK(text ==
        "localhost:8080 wants you to sign in with your Ethereum account:\n" + to_checksum_address(m.account) +
            "\n\n\nURI: http://localhost:8080/auth/authorize\nVersion: 1\nChain ID: 10\nNonce: 0123456789abcdef\n"
            "Issued At: 2026-11-01T00:00:01.234Z");
  auto back = parse(text);
  REQUIRE(back.has_value());
  CHECK(back->account == m.account);
  CHECK(back->issued_at == m.issued_at);
  CHECK(!back->statement);

  m.statement = "Sign in.";
  m.expiration_time = t0 + 10min;
  m.not_before = t0;
  m.request_id = "abc";
  back = parse(to_text(m));
  REQUIRE(back.has_value());
  CHECK(back->statement == m.statement);
  CHECK(back->expiration_time == m.expiration_time);
  CHECK(back->not_before == m.not_before);
  CHECK(back->request_id == m.request_id);
  CHECK(to_text(*back) == to_text(m));
}

TEST_CASE("RFC 3339 times") {
  CHECK(format_time(t0) == "2026-11-01T00:00:00.000Z");
  CHECK(parse_time("2026-11-01T00:00:00Z") == std::optional<time_point>(t0));
  CHECK(parse_time("2026-11-01T00:00:00.123456789Z") == std::optional<time_point>(t0 + 123ms));
  CHECK(parse_time(format_time(t0 + 86399999ms)) == std::optional<time_point>(t0 + 86399999ms));
  for (const char* bad : {"2026-11-01T00:00:00", "2026-11-01 00:00:00Z", "2026-02-30T00:00:00Z", "2026-11-01T24:00:00Z",
                          "2026-11-01T00:00:00.Z", "2026-11-01T00:00:00+00:00"}) {
    CAPTURE(bad);
    CHECK(!parse_time(bad));
  }
}

TEST_CASE("verify_signature checks the signer against the message's account") {
  const Secret alice(bytes(32, 0x11));
  const Secret mallory(bytes(32, 0x22));
  message m;
  m.domain = "a.org";
  m.account = crypto::secp256k1::to_address(crypto::secp256k1::public_key_of(alice).value());
  m.uri = "https://a.org";
  m.nonce = "abcdefgh";
  m.issued_at = t0;
  const std::string text = to_text(m);
  const auto sign = [&](const Secret& key, std::string_view what) {
    return crypto::secp256k1::sign(crypto::personal_message_hash(what), key).value().to_bytes();
  };
  CHECK(verify_signature(text, m, sign(alice, text)).has_value());
  const auto by_mallory = verify_signature(text, m, sign(mallory, text));
  REQUIRE(!by_mallory.has_value());
  CHECK(by_mallory.code() == siwe_errc::bad_signature);
  CHECK(by_mallory.err().message.find(to_checksum_address(m.account)) != std::string::npos);
  CHECK(!verify_signature(text + " ", m, sign(alice, text)).has_value());
  CHECK(!verify_signature(text, m, bytes(64, 1)).has_value());
}

}  // namespace
}  // namespace enact::siwe
