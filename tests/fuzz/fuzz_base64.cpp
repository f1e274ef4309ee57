// SPDX-License-Identifier: Apache-2.0
// Base64 and base64url decoding (codec/base64.hpp): never crashes, and since both decoders accept
// canonical text only, whatever decodes re-encodes to exactly the input (base64url: the unpadded
// form, plus the padding the input had).
#include "enact/codec/base64.hpp"
#include "fuzz.hpp"

using namespace enact;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view s = fuzz::text(data, size);
  fuzz::require_canonical(
      s, [](std::string_view t) { return codec::base64::decode(t); },
      [](const bytes& b) { return codec::base64::encode(b); }, base64_errc::bad_char, "base64: encode(decode(s)) != s",
      "base64: error outside base64_errc");
  if (const auto url_form = codec::base64::decode_url(s)) {
    std::string again = codec::base64::encode_url(*url_form);
    if (s.size() > again.size())  // the input carried the optional padding
      again.append(s.size() - again.size(), '=');
    fuzz::require(again == s, "base64url: encode_url(decode_url(s)) != s");
  } else {
    fuzz::require(url_form.code().category() == make_error_code(base64_errc::bad_char).category(),
                  "base64url: error outside base64_errc");
  }
  // Encoding any bytes decodes back to them.
  const bytes b(data, data + size);
  fuzz::require(codec::base64::decode(codec::base64::encode(b)).value() == b, "base64: decode(encode(b)) != b");
  fuzz::require(codec::base64::decode_url(codec::base64::encode_url(b)).value() == b,
                "base64url: decode_url(encode_url(b)) != b");
  return 0;
}
