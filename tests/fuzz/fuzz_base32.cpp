// SPDX-License-Identifier: Apache-2.0
// Base32 (lowercase, unpadded; codec/base32.hpp) decoding: never crashes; the decoder accepts
// canonical text only, so whatever decodes re-encodes to exactly the input.
#include "enact/codec/base32.hpp"
#include "fuzz.hpp"

using namespace enact;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view s = fuzz::text(data, size);
  fuzz::require_canonical(
      s, [](std::string_view t) { return codec::base32::decode_lower_nopad(t); },
      [](const bytes& b) { return codec::base32::encode_lower_nopad(b); }, base32_errc::bad_char,
      "base32: encode(decode(s)) != s", "base32: error outside base32_errc");
  const bytes b(data, data + size);
  fuzz::require(codec::base32::decode_lower_nopad(codec::base32::encode_lower_nopad(b)).value() == b,
                "base32: decode(encode(b)) != b");
  return 0;
}
