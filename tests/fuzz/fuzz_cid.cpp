// SPDX-License-Identifier: Apache-2.0
// CID parsing (ipfs/cid.hpp), text and binary. Never crashes; a parsed CID prints back as the
// input when the input was in the printed form (v0 base58btc, v1 base32), and always parses back
// from its string and binary forms to itself.
#include "enact/ipfs/cid.hpp"
#include "fuzz.hpp"

using namespace enact;

namespace {

void check_round_trips(const ipfs::cid& c) {
  const auto from_text = ipfs::parse(c.to_string());
  fuzz::require(from_text && *from_text == c, "cid: parse(to_string(c)) != c");
  const auto from_bin = ipfs::from_bytes(c.to_bytes());
  fuzz::require(from_bin && *from_bin == c, "cid: from_bytes(to_bytes(c)) != c");
  fuzz::require(ipfs::same_content(c, c), "cid: not the same content as itself");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view s = fuzz::text(data, size);
  if (const auto c = ipfs::parse(s)) {
    if (s.starts_with("Qm") || s.starts_with('b'))
      fuzz::require(c->to_string() == s, "cid: to_string(parse(s)) != s");
    check_round_trips(*c);
  } else {
    fuzz::require(c.code().category() == make_error_code(cid_errc::bad_multibase).category(),
                  "cid: parse error outside cid_errc");
  }
  if (const auto c = ipfs::from_bytes(fuzz::view(data, size))) {
    const bytes b = c->to_bytes();
    fuzz::require(b.size() == size && std::equal(b.begin(), b.end(), data), "cid: to_bytes(from_bytes(x)) != x");
    check_round_trips(*c);
  }
  return 0;
}
