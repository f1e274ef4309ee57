// SPDX-License-Identifier: Apache-2.0
// EIP-1559 raw transactions (chain/transaction.hpp): the input as a signed raw transaction and as
// an unsigned payload. Never crashes; both decoders accept canonical encodings only, so whatever
// decodes re-encodes to exactly the input, and a signed one carries its hash and the sender the
// signature recovers to.
#include "enact/chain/transaction.hpp"
#include "enact/crypto/secp256k1.hpp"
#include "fuzz.hpp"

using namespace enact;

namespace {
bool same(const bytes& a, const uint8_t* data, size_t size) {
  return a.size() == size && std::equal(a.begin(), a.end(), data);
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const bytes_view in = fuzz::view(data, size);
  if (const auto d = chain::decode(in)) {
    fuzz::require(same(chain::encode_signed(d->tx, d->signature), data, size),
                  "tx1559: encode_signed(decode(raw)) != raw");
    fuzz::require(d->hash == chain::tx_hash(in), "tx1559: hash");
    fuzz::require(d->signature.v <= 1, "tx1559: yParity");
    const auto sig65 = d->signature.to_bytes();
    const auto from = crypto::secp256k1::recover_address(chain::signing_hash(d->tx), sig65);
    fuzz::require(from && *from == d->from, "tx1559: sender differs from the recovered address");
    const auto payload = chain::unsigned_payload(d->tx);
    const auto back = chain::decode_unsigned(payload);
    fuzz::require(back && *back == d->tx, "tx1559: decode_unsigned(unsigned_payload(tx)) != tx");
  } else {
    fuzz::require(d.code().category() == make_error_code(chain_errc::wrong_type).category(),
                  "tx1559: decode error outside chain_errc");
  }
  if (const auto tx = chain::decode_unsigned(in)) {
    fuzz::require(same(chain::unsigned_payload(*tx), data, size), "tx1559: unsigned_payload(decode_unsigned(p)) != p");
  } else {
    fuzz::require(tx.code().category() == make_error_code(chain_errc::wrong_type).category(),
                  "tx1559: decode_unsigned error outside chain_errc");
  }
  return 0;
}
