// SPDX-License-Identifier: Apache-2.0
// EIP-1559 transactions: encoding, signing and strict decoding (see enact/chain/transaction.hpp).
#include "enact/chain/transaction.hpp"

#include <algorithm>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "enact/codec/hex.hpp"
#include "enact/codec/rlp.hpp"
#include "enact/crypto/keccak.hpp"

namespace enact::chain {

namespace {

constexpr size_t kUnsignedFields = 9;
constexpr size_t kSignedFields = 12;
// A top-level list holding an access list of [address, [storage keys]] entries is 4 deep;
// anything deeper is rejected by the RLP decoder before it is walked.
constexpr size_t kMaxDepth = 4;

std::vector<codec::rlp::item> fields_of(const eip1559_tx& tx) {
  std::vector<codec::rlp::item> f;
  f.reserve(kSignedFields);
  f.push_back(codec::rlp::item::uint(tx.chain_id));
  f.push_back(codec::rlp::item::uint(tx.nonce));
  f.push_back(codec::rlp::item::uint(tx.max_priority_fee_per_gas));
  f.push_back(codec::rlp::item::uint(tx.max_fee_per_gas));
  f.push_back(codec::rlp::item::uint(tx.gas_limit));
  f.push_back(tx.to ? codec::rlp::item::string(bytes_view(*tx.to)) : codec::rlp::item{});
  f.push_back(codec::rlp::item::uint(tx.value));
  f.push_back(codec::rlp::item::string(bytes_view(tx.data)));
  f.push_back(codec::rlp::item::list({}));  // access list (EIP-2930): always empty here
  return f;
}

bytes typed(const std::vector<codec::rlp::item>& fields) {
  bytes out{kEip1559Type};
  codec::rlp::encode(out, codec::rlp::item::list(fields));
  return out;
}

/// Re-labels an RLP field error as chain_errc::bad_field, keeping its message.
error field_error(error e) { return fail(chain_errc::bad_field, std::move(e.message)); }

result<uint64_t> u64_field(const codec::rlp::item& it, std::string_view what) {
  auto v = codec::rlp::decode_u64(it, what);
  if (!v)
    return field_error(std::move(v).err());
  return *v;
}

result<u256> uint_field(const codec::rlp::item& it, std::string_view what) {
  auto v = codec::rlp::decode_uint(it, what);
  if (!v)
    return field_error(std::move(v).err());
  return *v;
}

/// The type byte and the RLP list after it, with `expected` elements.
result<std::vector<codec::rlp::item>> split(bytes_view raw, size_t expected) {
  if (raw.empty())
    return fail(chain_errc::wrong_type, "transaction: empty input");
  if (raw[0] != kEip1559Type)
    return fail(chain_errc::wrong_type,
                "transaction: type byte 0x" + codec::hex::encode(raw.first(1)) + ", expected 0x02 (EIP-1559)");
  auto it = codec::rlp::decode(raw.subspan(1), kMaxDepth);
  if (!it)
    return fail(chain_errc::bad_rlp, "transaction: " + it.err().message);
  if (!it->is_list())
    return fail(chain_errc::bad_rlp, "transaction: expected an RLP list, got a byte string");
  auto& list = it->as_list();
  if (list.size() != expected)
    return fail(chain_errc::field_count,
                "transaction: " + std::to_string(list.size()) + " fields, expected " + std::to_string(expected));
  return std::move(list);
}

result<eip1559_tx> parse_fields(const std::vector<codec::rlp::item>& f) {
  eip1559_tx tx;
  ENACT_TRY(tx.chain_id, u64_field(f[0], "transaction.chainId"));
  ENACT_TRY(tx.nonce, u64_field(f[1], "transaction.nonce"));
  ENACT_TRY(tx.max_priority_fee_per_gas, uint_field(f[2], "transaction.maxPriorityFeePerGas"));
  ENACT_TRY(tx.max_fee_per_gas, uint_field(f[3], "transaction.maxFeePerGas"));
  ENACT_TRY(tx.gas_limit, u64_field(f[4], "transaction.gasLimit"));
  if (f[5].is_list())
    return fail(chain_errc::bad_field, "transaction.to: expected a byte string, got a list");
  const bytes& to = f[5].as_bytes();
  if (to.size() == 20) {
    tx.to.emplace();
    std::copy(to.begin(), to.end(), tx.to->begin());
  } else if (!to.empty()) {
    return fail(chain_errc::bad_field,
                "transaction.to: " + std::to_string(to.size()) + " bytes, expected 20 or empty (contract creation)");
  }
  ENACT_TRY(tx.value, uint_field(f[6], "transaction.value"));
  if (f[7].is_list())
    return fail(chain_errc::bad_field, "transaction.data: expected a byte string, got a list");
  tx.data = f[7].as_bytes();
  if (!f[8].is_list())
    return fail(chain_errc::bad_field, "transaction.accessList: expected a list, got a byte string");
  if (!f[8].as_list().empty())
    return fail(chain_errc::access_list, "transaction.accessList: " + std::to_string(f[8].as_list().size()) +
                                             " entries; only an empty access list is supported");
  return tx;
}

}  // namespace

bytes unsigned_payload(const eip1559_tx& tx) { return typed(fields_of(tx)); }

hash256 signing_hash(const eip1559_tx& tx) { return crypto::keccak256(unsigned_payload(tx)); }

bytes encode_signed(const eip1559_tx& tx, const crypto::secp256k1::signature& sig) {
  auto f = fields_of(tx);
  f.push_back(codec::rlp::item::uint(sig.v));
  // r and s are RLP integers: minimal big-endian, no leading zero bytes.
  f.push_back(codec::rlp::item::uint(u256::from_be(sig.r).value()));
  f.push_back(codec::rlp::item::uint(u256::from_be(sig.s).value()));
  return typed(f);
}

result<bytes> sign(const eip1559_tx& tx, const Secret& key) {
  ENACT_TRY(const auto sig, crypto::secp256k1::sign(signing_hash(tx), key));
  return encode_signed(tx, sig);
}

hash256 tx_hash(bytes_view raw) noexcept { return crypto::keccak256(raw); }

result<eip1559_tx> decode_unsigned(bytes_view payload) {
  ENACT_TRY(const auto f, split(payload, kUnsignedFields));
  return parse_fields(f);
}

result<decoded_tx> decode(bytes_view raw) {
  ENACT_TRY(const auto f, split(raw, kSignedFields));
  decoded_tx out;
  ENACT_TRY(out.tx, parse_fields(f));

  ENACT_TRY(const uint64_t y_parity, u64_field(f[9], "transaction.yParity"));
  if (y_parity > 1)
    return fail(chain_errc::bad_signature, "transaction.yParity: " + std::to_string(y_parity) + ", expected 0 or 1");
  ENACT_TRY(const u256 r, uint_field(f[10], "transaction.r"));
  ENACT_TRY(const u256 s, uint_field(f[11], "transaction.s"));
  out.signature.r = r.to_be();
  out.signature.s = s.to_be();
  out.signature.v = static_cast<uint8_t>(y_parity);

  // The unsigned payload is rebuilt from the parsed fields; since the input was canonical, it is
  // byte-for-byte the payload that was signed.
  const hash256 digest = signing_hash(out.tx);
  auto key = crypto::secp256k1::recover(digest, out.signature);
  if (!key) {
    if (key.code() == secp256k1_errc::high_s)
      return fail(chain_errc::high_s, "transaction.s: above n/2 (EIP-2)");
    return fail(chain_errc::bad_signature, "transaction: " + key.err().message);
  }
  out.from = crypto::secp256k1::to_address(*key);
  out.hash = tx_hash(raw);
  return out;
}

}  // namespace enact::chain
