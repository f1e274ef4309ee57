// SPDX-License-Identifier: Apache-2.0
// Base58btc decoding (codec/base58.hpp): never crashes, and the encoding is a bijection between
// byte strings and texts over the alphabet, so whatever decodes re-encodes to exactly the input.
#include "enact/codec/base58.hpp"
#include "fuzz.hpp"

using namespace enact;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view s = fuzz::text(data, size);
  if (const auto decoded = codec::base58::decode(s)) {
    fuzz::require(codec::base58::encode(*decoded) == s, "base58: encode(decode(s)) != s");
  } else {
    fuzz::require(decoded.code() == base58_errc::bad_char || decoded.code() == base58_errc::too_long,
                  "base58: unexpected error code");
    fuzz::require((decoded.code() == base58_errc::too_long) == (s.size() > codec::base58::kMaxDecodeLength),
                  "base58: too_long disagrees with the length limit");
  }
  // Bytes whose encoding fits the decoder's limit decode back to themselves.
  if (size <= 512) {
    const bytes b(data, data + size);
    const std::string e = codec::base58::encode(b);
    if (e.size() <= codec::base58::kMaxDecodeLength)
      fuzz::require(codec::base58::decode(e).value() == b, "base58: decode(encode(b)) != b");
  }
  return 0;
}
