// SPDX-License-Identifier: Apache-2.0
// Hex decoding (codec/hex.hpp): never crashes; whatever decodes re-encodes to the same digits
// (lowercase, so compared case-insensitively), and the fixed and prefixed forms agree with decode.
#include <algorithm>
#include <cctype>

#include "enact/codec/hex.hpp"
#include "fuzz.hpp"

using namespace enact;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view s = fuzz::text(data, size);
  const auto decoded = codec::hex::decode(s);
  const bool prefixed = codec::hex::detail::has_prefix(s);
  const std::string_view digits = prefixed ? s.substr(2) : s;
  if (decoded) {
    const std::string again = codec::hex::encode(*decoded);
    fuzz::require(again.size() == digits.size() &&
                      std::equal(again.begin(), again.end(), digits.begin(),
                                 [](char a, char b) { return a == std::tolower(static_cast<unsigned char>(b)); }),
                  "hex: encode(decode(s)) differs from s");
    fuzz::require(codec::hex::encode_prefixed(*decoded) == "0x" + again, "hex: encode_prefixed");
  } else {
    fuzz::require(decoded.code().category() == make_error_code(hex_errc::bad_digit).category(),
                  "hex: error outside hex_errc");
  }
  // decode_prefixed is decode when the prefix is there, and missing_prefix when it is not.
  const auto p = codec::hex::decode_prefixed(s);
  if (prefixed)
    fuzz::require(p.has_value() == decoded.has_value() && (!p || *p == *decoded),
                  "hex: decode_prefixed disagrees with decode");
  else
    fuzz::require(!p && p.code() == hex_errc::missing_prefix, "hex: decode_prefixed without 0x");
  // decode_fixed<20> accepts exactly the 20-byte inputs decode accepts.
  const auto f = codec::hex::decode_fixed<20>(s);
  const bool want = decoded && decoded->size() == 20;
  fuzz::require(f.has_value() == want, "hex: decode_fixed<20> disagrees with decode");
  if (f)
    fuzz::require(std::equal(f->begin(), f->end(), decoded->begin()), "hex: decode_fixed value");
  return 0;
}
