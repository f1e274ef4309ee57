// SPDX-License-Identifier: Apache-2.0
// Argument checks of the signing capabilities (run_signing.hpp). Every refusal is an
// invalid_request whose message names the method and the field, which the action's catch sees.
#include "core/run_signing.hpp"

#include <boost/json.hpp>

#include <limits>

#include "enact/address.hpp"
#include "enact/api/errc.hpp"
#include "enact/codec/hex.hpp"
#include "enact/eip712/typed_data.hpp"
#include "enact/u256.hpp"

namespace enact::core::run_signing {
namespace {

namespace json = boost::json;

error refused(std::string_view method, const std::string& why) {
  return fail(api_errc::invalid_request, std::string(method) + ": " + why);
}

/// A JSON integer in [0, 2^53) or a decimal or 0x-hex string, as a u256.
result<u256> integer_field(const json::object& o, std::string_view field) {
  const auto* v = o.if_contains(field);
  if (v == nullptr)
    return refused("signTransaction", "tx." + std::string(field) + " is missing");
  constexpr int64_t kMaxSafe = (int64_t{1} << 53) - 1;
  if (v->is_int64() && v->get_int64() >= 0 && v->get_int64() <= kMaxSafe)
    return u256(static_cast<uint64_t>(v->get_int64()));
  if (v->is_uint64() && v->get_uint64() <= static_cast<uint64_t>(kMaxSafe))
    return u256(v->get_uint64());
  if (v->is_string()) {
    auto n = u256::from_string(v->get_string(), field);
    if (n)
      return *n;
  }
  return refused("signTransaction",
                 "tx." + std::string(field) +
                     " must be a non-negative integer below 2^256 (a JSON integer up to 2^53 - 1, or a decimal or "
                     "0x-hex string)");
}

result<uint64_t> bounded(const json::object& o, std::string_view field, uint64_t lo, uint64_t hi) {
  ENACT_TRY(const u256 n, integer_field(o, field));
  if (n < u256(lo) || n > u256(hi))
    return refused("signTransaction", "tx." + std::string(field) + " must be between " + std::to_string(lo) + " and " +
                                          std::to_string(hi));
  return static_cast<uint64_t>(n);
}

}  // namespace

result<bytes> ed25519_message(const json::object& args) {
  const auto* m = args.if_contains("message");
  if (m == nullptr || !m->is_string())
    return refused("signEd25519", "message must be a string (0x-hex bytes, or text signed as its UTF-8 bytes)");
  const std::string_view text = m->get_string();
  bytes out;
  if (text.starts_with("0x")) {
    auto decoded = codec::hex::decode_prefixed(text, "message");
    if (!decoded)
      return refused("signEd25519", decoded.err().message);
    out = std::move(*decoded);
  } else {
    out.assign(text.begin(), text.end());
  }
  if (out.size() > kMaxEd25519Message)
    return refused("signEd25519", "message is over " + std::to_string(kMaxEd25519Message) + " bytes");
  return out;
}

result<std::string> key_scheme(const json::object& args) {
  const auto* s = args.if_contains("scheme");
  if (s == nullptr || s->is_null())
    return std::string("secp256k1");
  if (s->is_string() && (s->get_string() == "secp256k1" || s->get_string() == "ed25519"))
    return std::string(s->get_string());
  return refused("getPublicKey", "scheme must be \"secp256k1\" or \"ed25519\"");
}

result<std::string> signature_name(const json::object& args, std::string_view method, size_t n) {
  const auto* v = args.if_contains("name");
  if (v == nullptr)
    return "sig" + std::to_string(n);
  if (!v->is_string() || v->get_string().empty() || v->get_string().size() > 128)
    return refused(method, "name must be a non-empty string");
  return std::string(v->get_string());
}

result<hash256> typed_data_digest(const json::object& args) {
  const auto* td = args.if_contains("typedData");
  if (td == nullptr || !(td->is_object() || td->is_string()))
    return refused("signTypedData", "typedData must be an EIP-712 document (an object or its JSON text)");
  const std::string text = td->is_string() ? std::string(td->get_string()) : json::serialize(*td);
  if (text.size() > kMaxTypedDataBytes)
    return refused("signTypedData", "typedData is over " + std::to_string(kMaxTypedDataBytes) + " bytes of JSON");
  auto doc = eip712::parse(text);
  if (!doc)
    return refused("signTypedData", doc.err().message);
  auto digest = eip712::digest(*doc);
  if (!digest)
    return refused("signTypedData", digest.err().message);
  return *digest;
}

result<chain::eip1559_tx> transaction(const json::object& args) {
  const auto* v = args.if_contains("tx");
  if (v == nullptr || !v->is_object())
    return refused("signTransaction", "tx must be an object (an EIP-1559 transaction)");
  const json::object& o = v->get_object();
  static constexpr std::string_view kFields[] = {
      "chainId", "nonce", "maxPriorityFeePerGas", "maxFeePerGas", "gasLimit", "gas", "to", "value", "data"};
  for (const auto& [key, _] : o) {
    bool known = false;
    for (const std::string_view f : kFields)
      known = known || key == f;
    if (!known)
      return refused("signTransaction", "tx." + std::string(key) +
                                            " is not a field of an EIP-1559 transaction (chainId, nonce, "
                                            "maxPriorityFeePerGas, maxFeePerGas, gasLimit, to, value, data)");
  }
  chain::eip1559_tx tx;
  ENACT_TRY(tx.chain_id, bounded(o, "chainId", 1, kMaxChainId));
  ENACT_TRY(tx.nonce, bounded(o, "nonce", 0, std::numeric_limits<uint64_t>::max() - 1));
  if (o.contains("gasLimit") && o.contains("gas"))
    return refused("signTransaction", "tx has both gasLimit and gas");
  ENACT_TRY(tx.gas_limit, bounded(o, o.contains("gas") ? "gas" : "gasLimit", kMinTxGas, kMaxTxGas));
  ENACT_TRY(tx.max_priority_fee_per_gas, integer_field(o, "maxPriorityFeePerGas"));
  ENACT_TRY(tx.max_fee_per_gas, integer_field(o, "maxFeePerGas"));
  if (tx.max_priority_fee_per_gas > tx.max_fee_per_gas)
    return refused("signTransaction", "tx.maxPriorityFeePerGas is above tx.maxFeePerGas");
  if (o.contains("value")) {
    ENACT_TRY(tx.value, integer_field(o, "value"));
  }
  if (const auto* to = o.if_contains("to"); to != nullptr && !to->is_null()) {
    if (!to->is_string())
      return refused("signTransaction", "tx.to must be an address or null");
    auto a = parse_address(to->get_string(), "tx.to");
    if (!a)
      return refused("signTransaction", a.err().message);
    tx.to = *a;
  }
  if (const auto* d = o.if_contains("data"); d != nullptr && !d->is_null()) {
    if (!d->is_string() || !d->get_string().starts_with("0x"))
      return refused("signTransaction", "tx.data must be 0x-hex bytes");
    if ((d->get_string().size() - 2) / 2 > kMaxTxData)
      return refused("signTransaction", "tx.data is over " + std::to_string(kMaxTxData) + " bytes");
    auto data = codec::hex::decode_prefixed(d->get_string(), "tx.data");
    if (!data)
      return refused("signTransaction", data.err().message);
    tx.data = std::move(*data);
  }
  return tx;
}

}  // namespace enact::core::run_signing
