// SPDX-License-Identifier: Apache-2.0
// The wallet-proof envelope check (eip712/envelope.hpp), as the server runs it on a request.
// Input: one flag byte (bits 0-1: the kind the endpoint expects; bit 2: the rest is an
// X-Wallet-Auth header value instead of typed data) then, for a body, the typed data's JSON text,
// a NUL byte and the signature's text. The expectation is fixed: chain id 1, now 1700000000, the
// default skew, and for version 2 the registry 0x…c0de, the account 0x11…11 and the request
// GET /core/v1/billing/balance (the seeds of make_corpus are signed for it). Never crashes; the text and parsed
// forms of verify agree; an accepted envelope names its signer in message.address; a decoded
// header re-encodes to one that decodes the same.
#include "enact/address.hpp"
#include "enact/eip712/envelope.hpp"
#include "fuzz.hpp"

using namespace enact;

namespace {

constexpr uint64_t kChainId = 1;
constexpr uint64_t kNow = 1700000000;

void check_body(std::string_view typed_data, std::string_view signature, const eip712::envelope::expectation& want) {
  const auto signer = eip712::envelope::verify(typed_data, signature, want);
  if (!signer) {
    fuzz::require(signer.code().category() == make_error_code(envelope_errc::malformed).category(),
                  "envelope: error outside envelope_errc");
  }
  // The parsed form, given the same size, decides the same whenever the text is JSON (a text
  // over the size limit is refused before parsing, whatever it holds).
  boost::system::error_code ec;
  const boost::json::value doc = boost::json::parse(typed_data, ec);
  if (!ec) {
    const auto again = eip712::envelope::verify(doc, typed_data.size(), signature, want);
    fuzz::require(again.has_value() == signer.has_value() && (!signer || *again == *signer) &&
                      (signer || again.code() == signer.code()),
                  "envelope: verify(text) and verify(value) disagree");
  }
  if (signer) {
    fuzz::require(!ec, "envelope: accepted typed data that is not JSON");
    const auto addr = parse_address(doc.at("message").at("address").as_string());
    fuzz::require(addr && *addr == *signer, "envelope: signer differs from message.address");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0)
    return 0;
  eip712::envelope::expectation want{static_cast<eip712::envelope::kind>(data[0] & 3), kChainId, kNow};
  want.verifying_contract = parse_address("0x000000000000000000000000000000000000c0de").value();
  want.account = hash256{};
  want.account->fill(0x11);
  want.request = eip712::envelope::bind_request("GET", "/core/v1/billing/balance", "");
  const std::string_view rest = fuzz::text(data + 1, size - 1);
  if ((data[0] & 4) != 0) {
    const auto parts = eip712::envelope::decode_wallet_auth(rest);
    if (!parts)
      return 0;
    check_body(parts->first, parts->second, want);
    boost::system::error_code ec;
    const auto doc = boost::json::parse(parts->first, ec);
    fuzz::require(!ec && doc.is_object(), "envelope: decoded header typed data is not an object");
    const std::string header =
        eip712::envelope::encode_wallet_auth(eip712::envelope::signed_envelope{doc.as_object(), parts->second});
    const auto again = eip712::envelope::decode_wallet_auth(header);
    fuzz::require(again && *again == *parts, "envelope: decode_wallet_auth(encode_wallet_auth(x)) != x");
    return 0;
  }
  const size_t nul = rest.find('\0');
  check_body(rest.substr(0, nul), nul == std::string_view::npos ? "" : rest.substr(nul + 1), want);
  return 0;
}
