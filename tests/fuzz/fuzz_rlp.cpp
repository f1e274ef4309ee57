// SPDX-License-Identifier: Apache-2.0
// RLP decoding (codec/rlp.hpp): never crashes; the decoder accepts canonical encodings only, so
// whatever decodes re-encodes to exactly the input; the JSON bridge round trips; integers decode
// only when they re-encode to the same item.
#include <functional>

#include "enact/codec/rlp.hpp"
#include "enact/codec/rlp_json.hpp"
#include "fuzz.hpp"

using namespace enact;

namespace {

void check_integers(const codec::rlp::item& it) {
  if (it.is_list()) {
    fuzz::require(!codec::rlp::decode_uint(it) && codec::rlp::decode_uint(it).code() == rlp_errc::expected_string,
                  "rlp: decode_uint of a list");
    for (const auto& child : it.as_list())
      check_integers(child);
    return;
  }
  const auto v = codec::rlp::decode_uint(it);
  if (v) {
    fuzz::require(codec::rlp::item::uint(*v) == it, "rlp: item::uint(decode_uint(it)) != it");
    const auto small = codec::rlp::decode_u64(it);
    fuzz::require(small.has_value() == v->fits_u64(), "rlp: decode_u64 disagrees with decode_uint");
    if (small)
      fuzz::require(u256{*small} == *v, "rlp: decode_u64 value");
  } else {
    fuzz::require(v.code() == rlp_errc::leading_zero || v.code() == rlp_errc::uint_overflow, "rlp: decode_uint error");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const bytes_view in = fuzz::view(data, size);
  const auto it = codec::rlp::decode(in);
  if (!it) {
    fuzz::require(it.code().category() == make_error_code(rlp_errc::truncated).category(),
                  "rlp: error outside rlp_errc");
    return 0;
  }
  const bytes again = codec::rlp::encode(*it);
  fuzz::require(again.size() == size && std::equal(again.begin(), again.end(), data), "rlp: encode(decode(x)) != x");
  const auto back = codec::rlp::from_json(codec::rlp::to_json(*it));
  fuzz::require(back && *back == *it, "rlp: from_json(to_json(item)) != item");
  check_integers(*it);
  return 0;
}
