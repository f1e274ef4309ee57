// SPDX-License-Identifier: Apache-2.0
#include "enact/siwe/siwe.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <vector>

#include "enact/codec/rfc3339.hpp"
#include "enact/codec/utf8.hpp"
#include "enact/address.hpp"
#include "enact/crypto/eip191.hpp"
#include "enact/crypto/secp256k1.hpp"

namespace enact::siwe {
namespace {

constexpr std::string_view kHeader = " wants you to sign in with your Ethereum account:";

bool is_alnum(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

bool has_control(std::string_view s) {
  return std::any_of(s.begin(), s.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u < 0x20 || u == 0x7f;
  });
}

/// An RFC 3986 authority as EIP-4361 allows it for the domain: host[:port], no userinfo.
bool is_authority(std::string_view s) {
  if (s.empty() || s.size() > 255)
    return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return is_alnum(c) || c == '.' || c == '-' || c == ':' || c == '[' || c == ']' || c == '_';
  });
}

std::string line_no(size_t i) { return "message line " + std::to_string(i + 1); }

}  // namespace

std::string format_time(time_point t) { return codec::rfc3339::format(t, 3); }

std::optional<time_point> parse_time(std::string_view s) {
  // EIP-4361 messages are compared as text and signed as text: one spelling per instant, so
  // UTC with an uppercase "T" and "Z" only.
  if (s.size() < 20 || s[10] != 'T' || s.back() != 'Z')
    return std::nullopt;
  return codec::rfc3339::parse_as<std::chrono::milliseconds>(s);
}

result<message> parse(std::string_view text) {
  if (text.size() > kMaxMessage)
    return fail(siwe_errc::too_large, "message: over " + std::to_string(kMaxMessage) + " bytes");
  if (!codec::utf8::is_valid(text))
    return fail(siwe_errc::not_utf8, "message: not UTF-8");
  std::vector<std::string_view> lines;
  for (size_t start = 0;;) {
    const size_t lf = text.find('\n', start);
    lines.push_back(text.substr(start, lf == std::string_view::npos ? std::string_view::npos : lf - start));
    if (lf == std::string_view::npos)
      break;
    start = lf + 1;
  }
  for (size_t i = 0; i < lines.size(); ++i)
    if (has_control(lines[i]))
      return fail(siwe_errc::not_utf8, line_no(i) + ": control character (lines end with LF only)");
  if (lines.size() < 8)
    return fail(siwe_errc::bad_structure, "message: not an EIP-4361 message (too few lines)");

  message m;
  // Line 1: "<domain> wants you to sign in with your Ethereum account:".
  if (!lines[0].ends_with(kHeader))
    return fail(siwe_errc::bad_structure,
                "message line 1: expected '<domain> wants you to sign in with your Ethereum account:'");
  m.domain = std::string(lines[0].substr(0, lines[0].size() - kHeader.size()));
  if (!is_authority(m.domain))
    return fail(siwe_errc::bad_value, "message line 1: the domain must be a host[:port] without scheme");
  // Line 2: the address (EIP-4361 asks for EIP-55; an all-lowercase address is accepted too).
  auto a = parse_address_strict(lines[1], "message line 2 (address)");
  if (!a)
    return fail(siwe_errc::bad_value, a.err().message);
  m.account = *a;
  // Then an empty line, an optional one-line statement, an empty line.
  if (!lines[2].empty())
    return fail(siwe_errc::bad_structure, "message line 3: expected an empty line");
  size_t i = 4;
  if (!lines[3].empty()) {
    m.statement = std::string(lines[3]);
    if (!lines[4].empty())
      return fail(siwe_errc::bad_structure, "message line 5: expected an empty line after the statement");
    i = 5;
  }

  const auto field = [&](std::string_view name, bool required) -> result<std::optional<std::string>> {
    const std::string prefix = std::string(name) + ": ";
    if (i < lines.size() && lines[i].starts_with(prefix)) {
      std::string v(lines[i].substr(prefix.size()));
      if (v.empty())
        return fail(siwe_errc::bad_value, line_no(i) + ": " + std::string(name) + " is empty");
      ++i;
      return std::optional<std::string>(std::move(v));
    }
    if (required)
      return fail(siwe_errc::bad_structure, line_no(i) + ": expected '" + prefix + "…'");
    return std::optional<std::string>{};
  };
  const auto time_field = [&](std::string_view name, bool required) -> result<std::optional<time_point>> {
    const size_t line = i;
    ENACT_TRY(const auto v, field(name, required));
    if (!v)
      return std::optional<time_point>{};
    const auto t = parse_time(*v);
    if (!t)
      return fail(siwe_errc::bad_value,
                  line_no(line) + ": " + std::string(name) + ": expected an RFC 3339 UTC time ending in Z");
    return std::optional<time_point>(*t);
  };

  ENACT_TRY(const auto uri, field("URI", true));
  m.uri = *uri;
  if (m.uri.find(' ') != std::string::npos)
    return fail(siwe_errc::bad_value, "message: URI: contains a space");
  ENACT_TRY(const auto version, field("Version", true));
  if (*version != "1")
    return fail(siwe_errc::unsupported, "message: Version: must be 1");
  m.version = *version;
  ENACT_TRY(const auto chain, field("Chain ID", true));
  {
    const auto& c = *chain;
    const auto [end, ec] = std::from_chars(c.data(), c.data() + c.size(), m.chain_id);
    if (ec != std::errc{} || end != c.data() + c.size() || c.size() > 18 || (c.size() > 1 && c[0] == '0') ||
        !std::all_of(c.begin(), c.end(), [](char d) { return d >= '0' && d <= '9'; }))
      return fail(siwe_errc::bad_value, "message: Chain ID: expected a decimal integer");
  }
  ENACT_TRY(const auto nonce, field("Nonce", true));
  if (nonce->size() < 8 || nonce->size() > 128 || !std::all_of(nonce->begin(), nonce->end(), is_alnum))
    return fail(siwe_errc::bad_value, "message: Nonce: expected at least 8 letters and digits");
  m.nonce = *nonce;
  ENACT_TRY(const auto issued, time_field("Issued At", true));
  m.issued_at = *issued;
  ENACT_TRY(m.expiration_time, time_field("Expiration Time", false));
  ENACT_TRY(m.not_before, time_field("Not Before", false));
  ENACT_TRY(m.request_id, field("Request ID", false));
  if (i < lines.size()) {
    if (lines[i].starts_with("Resources:"))
      return fail(siwe_errc::unsupported, line_no(i) + ": Resources are not accepted here");
    return fail(siwe_errc::bad_structure, line_no(i) + ": unexpected '" + std::string(lines[i].substr(0, 40)) + "'");
  }
  return m;
}

std::string to_text(const message& m) {
  std::string out = m.domain;
  out += kHeader;
  out += "\n" + to_checksum_address(m.account) + "\n\n";
  if (m.statement)
    out += *m.statement + "\n\n";
  else
    out += "\n";
  out += "URI: " + m.uri + "\nVersion: " + m.version + "\nChain ID: " + std::to_string(m.chain_id) +
         "\nNonce: " + m.nonce + "\nIssued At: " + format_time(m.issued_at);
  if (m.expiration_time)
    out += "\nExpiration Time: " + format_time(*m.expiration_time);
  if (m.not_before)
    out += "\nNot Before: " + format_time(*m.not_before);
  if (m.request_id)
    out += "\nRequest ID: " + *m.request_id;
  return out;
}

result<void> verify_signature(std::string_view text, const message& m, bytes_view signature) {
  const auto signer = signature.size() == 65
                          ? crypto::secp256k1::recover_address(crypto::personal_message_hash(text), signature)
                          : result<address>(fail(siwe_errc::bad_signature, ""));
  if (!signer || *signer != m.account)
    return fail(siwe_errc::bad_signature,
                "signature: not a signature of this message by " + to_checksum_address(m.account));
  return {};
}

}  // namespace enact::siwe
