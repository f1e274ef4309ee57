// SPDX-License-Identifier: Apache-2.0
// EIP-712 typed data (eip712/typed_data.hpp): JSON text -> typed_data -> digest. Never crashes;
// the digest is deterministic, survives to_json -> from_json, and equals crypto::keccak256(0x1901 ‖
// domainSeparator ‖ hashStruct(primaryType, message)) computed from the parts; reject mode either
// fails or agrees with ignore mode; encodeType of every declared struct is stable.
#include "enact/crypto/keccak.hpp"
#include "enact/eip712/typed_data.hpp"
#include "fuzz.hpp"

using namespace enact;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto td = eip712::parse(fuzz::text(data, size));
  if (!td) {
    fuzz::require(td.code().category() == make_error_code(eip712_errc::bad_json).category(),
                  "eip712: parse error outside eip712_errc");
    return 0;
  }
  const auto d1 = eip712::digest(*td);
  const auto d2 = eip712::digest(*td);
  fuzz::require(d1.has_value() == d2.has_value() && (!d1 || *d1 == *d2), "eip712: digest not deterministic");

  const auto again = eip712::from_json(eip712::to_json(*td));
  fuzz::require(again.has_value(), "eip712: from_json(to_json(td)) fails");
  const auto d3 = eip712::digest(*again);
  fuzz::require(d1.has_value() == d3.has_value() && (!d1 || *d1 == *d3),
                "eip712: digest changed through to_json / from_json");

  if (d1) {
    const auto sep = eip712::domain_separator(*td);
    fuzz::require(sep.has_value(), "eip712: digest without a domain separator");
    bytes pre = {0x19, 0x01};
    pre.insert(pre.end(), sep->begin(), sep->end());
    if (td->primary_type != "EIP712Domain") {
      const auto h = eip712::hash_struct(td->types, td->primary_type, td->message);
      fuzz::require(h.has_value(), "eip712: digest without a message hash");
      pre.insert(pre.end(), h->begin(), h->end());
    }
    fuzz::require(crypto::keccak256(pre) == *d1, "eip712: digest differs from its definition");
    const auto strict = eip712::digest(*td, eip712::extra_fields::reject);
    fuzz::require(!strict || *strict == *d1, "eip712: reject mode digest differs");
  } else {
    fuzz::require(d1.code().category() == make_error_code(eip712_errc::bad_json).category(),
                  "eip712: digest error outside eip712_errc");
  }
  for (const auto& [name, members] : td->types) {
    const auto t1 = eip712::encode_type(td->types, name);
    const auto t2 = eip712::encode_type(td->types, name);
    fuzz::require(t1.has_value() == t2.has_value() && (!t1 || *t1 == *t2), "eip712: encode_type not deterministic");
    if (t1)
      fuzz::require(t1->starts_with(name + "("), "eip712: encode_type does not start with the type");
  }
  return 0;
}
