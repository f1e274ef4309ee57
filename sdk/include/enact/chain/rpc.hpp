// SPDX-License-Identifier: Apache-2.0
// Ethereum JSON-RPC codec, without transport: builds JSON-RPC 2.0 request bodies
// (`{"jsonrpc":"2.0","id","method","params"}`), parses a response body into either its `result`
// or the node's `{"error":{"code","message","data"}}` (kept as a typed `node_error` carrying the
// revert data of a failed `eth_call` or gas estimate), and converts the Ethereum wire forms of the
// execution API specification: QUANTITY (`0x` + hex without leading zeros, `0x0` for zero) and
// DATA (`0x` + an even number of hex digits). A body that is not a well-formed JSON-RPC 2.0
// response to the expected id is an `rpc_errc` failure; a node error is not a parse failure, it is
// one of the two outcomes of a `reply`. Batches are not supported.
#pragma once

#include <boost/json.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "enact/bytes.hpp"
#include "enact/codec/hex.hpp"
#include "enact/u256.hpp"
#include "enact/error.hpp"
#include "enact/result.hpp"

namespace enact {

enum class rpc_errc {
  bad_json = 1,  // the body is not JSON
  bad_response,  // not a JSON-RPC 2.0 response object (fields missing, of the wrong type, or
                 // both or neither of `result` and `error`)
  id_mismatch,   // the response answers another request
  node_error,    // the node answered with an error object (see reply::error for its details)
  bad_quantity,  // not a QUANTITY: no 0x, no digits, a leading zero, a non-hex digit, > 256 bits
  bad_data,      // not DATA: no 0x, odd digit count, a non-hex digit, or the wrong length
  // Transport (enact/chain/client.hpp):
  unreachable,  // no connection: refused, reset, closed before an answer, TLS failure
  timeout,      // no connection or no answer within the timeout (also: a receipt that does
                // not appear before the sender's deadline)
  http_status,  // an HTTP status other than 200 (the message names it)
  bad_url,      // an endpoint URL the client cannot use
  tx_failed,    // a mined transaction whose receipt has status 0
};

}  // namespace enact
ENACT_ERRC(rpc_errc, rpc_category, "enact.rpc", "response is not JSON", "malformed JSON-RPC response",
           "response id does not match the request", "the node returned an error", "invalid QUANTITY", "invalid DATA",
           "node unreachable", "timed out", "unexpected HTTP status", "invalid endpoint URL", "transaction failed")

namespace enact::chain::rpc {

// --- wire forms (Ethereum execution API specification, "Value encoding") ----------------------

/// QUANTITY: `0x` + lowercase hex without leading zeros; zero is `0x0`.
[[nodiscard]] inline std::string quantity(const u256& v) { return v.to_hex(); }

/// DATA: `0x` + lowercase hex, two digits per byte.
[[nodiscard]] inline std::string data(bytes_view b) { return codec::hex::encode_prefixed(b); }

/// Parses a QUANTITY strictly: `0x0`, or `0x` followed by 1-64 hex digits of either case, the
/// first not `0`. `what` names the field in error messages.
[[nodiscard]] inline result<u256> parse_quantity(const boost::json::value& v, std::string_view what = "quantity") {
  const auto* s = v.if_string();
  if (s == nullptr)
    return fail(rpc_errc::bad_quantity, std::string(what) + ": expected a 0x-hex string");
  const std::string_view t(*s);
  if (t.size() < 3 || t[0] != '0' || t[1] != 'x')
    return fail(rpc_errc::bad_quantity, std::string(what) + ": expected 0x followed by at least one hex digit");
  if (t.size() > 3 && t[2] == '0')
    return fail(rpc_errc::bad_quantity, std::string(what) + ": leading zero digit");
  if (t.size() > 2 + 64)
    return fail(rpc_errc::bad_quantity, std::string(what) + ": more than 256 bits");
  for (size_t i = 2; i < t.size(); ++i)
    if (codec::hex::detail::nibble(t[i]) < 0)
      return fail(rpc_errc::bad_quantity, std::string(what) + ": invalid hex digit at offset " + std::to_string(i));
  return u256::from_hex(t, what);
}

/// Same, limited to 64 bits (block numbers, nonces, gas, chain ids).
[[nodiscard]] inline result<uint64_t> parse_quantity_u64(const boost::json::value& v,
                                                         std::string_view what = "quantity") {
  ENACT_TRY(const u256 x, parse_quantity(v, what));
  if (!x.fits_u64())
    return fail(rpc_errc::bad_quantity, std::string(what) + ": value exceeds 64 bits");
  return static_cast<uint64_t>(x);
}

/// Parses DATA strictly: `0x` (required) and an even number of hex digits of either case.
[[nodiscard]] inline result<bytes> parse_data(const boost::json::value& v, std::string_view what = "data") {
  const auto* s = v.if_string();
  if (s == nullptr)
    return fail(rpc_errc::bad_data, std::string(what) + ": expected a 0x-hex string");
  auto b = codec::hex::decode_prefixed(*s, what);
  if (!b)
    return fail(rpc_errc::bad_data, std::move(b).err().message);
  return std::move(*b);
}

/// DATA of exactly N bytes (hashes: 32, addresses: 20).
template <size_t N>
[[nodiscard]] result<std::array<uint8_t, N>> parse_data_fixed(const boost::json::value& v,
                                                              std::string_view what = "data") {
  ENACT_TRY(const bytes b, parse_data(v, what));
  if (b.size() != N)
    return fail(rpc_errc::bad_data,
                std::string(what) + ": expected " + std::to_string(N) + " bytes, got " + std::to_string(b.size()));
  std::array<uint8_t, N> out{};
  std::copy(b.begin(), b.end(), out.begin());
  return out;
}

// --- requests ------------------------------------------------------------------------------

/// `{"jsonrpc":"2.0","id":id,"method":method,"params":params}` (JSON-RPC 2.0 §4).
[[nodiscard]] inline boost::json::object request(uint64_t id, std::string_view method, boost::json::array params = {}) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", std::move(params)}};
}

/// The request serialized as the body of an HTTP POST.
[[nodiscard]] inline std::string request_body(uint64_t id, std::string_view method, boost::json::array params = {}) {
  return boost::json::serialize(request(id, method, std::move(params)));
}

// --- responses -----------------------------------------------------------------------------

/// The node's error object (JSON-RPC 2.0 §5.1). A reverted call carries its revert data
/// (Error(string), Panic(uint256) or a custom error, ABI-encoded) in `data`; nodes put it there
/// as a DATA string (geth, erigon, reth, anvil) or as `{"data": DATA, ...}` (some others), and
/// `revert_data` holds it decoded when either form is present.
struct node_error {
  int64_t code = 0;
  std::string message;
  boost::json::value data;  // as sent; null when absent
  std::optional<bytes> revert_data;
};

/// A well-formed response: exactly one of a result and an error.
struct reply {
  uint64_t id = 0;
  boost::json::value result;        // null when `error` is set
  std::optional<node_error> error;  // set when the node answered with an error

  [[nodiscard]] bool ok() const noexcept { return !error.has_value(); }
  /// The result, or rpc_errc::node_error with a message naming the node's code and message.
  /// Callers that need the revert data read `error->revert_data` first.
  [[nodiscard]] enact::result<boost::json::value> value() const {
    if (!error)
      return result;
    return fail(rpc_errc::node_error, "rpc: node error " + std::to_string(error->code) + ": " + error->message);
  }
};

namespace detail {
inline std::optional<bytes> revert_bytes(const boost::json::value& data) {
  const boost::json::value* v = &data;
  if (const auto* o = data.if_object()) {
    v = o->if_contains("data");
    if (v == nullptr)
      return std::nullopt;
  }
  auto b = parse_data(*v);
  if (!b)
    return std::nullopt;
  return std::move(*b);
}

/// A JSON integer that fits int64 (Boost.JSON parses an integer above INT64_MAX as uint64).
inline std::optional<int64_t> as_int64(const boost::json::value& v) {
  if (const auto* i = v.if_int64())
    return *i;
  if (const auto* u = v.if_uint64(); u != nullptr && *u <= static_cast<uint64_t>(INT64_MAX))
    return static_cast<int64_t>(*u);
  return std::nullopt;
}

inline bool id_equals(const boost::json::value& id, uint64_t expected) {
  if (const auto* i = id.if_int64())
    return *i >= 0 && static_cast<uint64_t>(*i) == expected;
  if (const auto* u = id.if_uint64())
    return *u == expected;
  return false;  // a string, a fractional number, null: our requests only use integer ids
}
}  // namespace detail

/// Parses a response body to the request with id `expected_id`.
[[nodiscard]] inline enact::result<reply> parse_response(std::string_view body, uint64_t expected_id) {
  boost::system::error_code ec;
  boost::json::value doc = boost::json::parse(body, ec);
  if (ec)
    return fail(rpc_errc::bad_json, "rpc: response is not JSON (" + ec.message() + ")");
  auto* o = doc.if_object();
  if (o == nullptr)
    return fail(rpc_errc::bad_response, "rpc: response is not a JSON object");
  const auto* version = o->if_contains("jsonrpc");
  if (version == nullptr || !version->is_string() || version->as_string() != "2.0")
    return fail(rpc_errc::bad_response, "rpc.jsonrpc: expected \"2.0\"");
  const auto* id = o->if_contains("id");
  if (id == nullptr)
    return fail(rpc_errc::bad_response, "rpc.id: missing");
  if (!detail::id_equals(*id, expected_id))
    return fail(rpc_errc::id_mismatch,
                "rpc.id: " + boost::json::serialize(*id) + ", expected " + std::to_string(expected_id));
  const auto* res = o->if_contains("result");
  const auto* err = o->if_contains("error");
  if ((res == nullptr) == (err == nullptr))
    return fail(rpc_errc::bad_response, res ? "rpc: both result and error present" : "rpc: neither result nor error");
  reply out;
  out.id = expected_id;
  if (res != nullptr) {
    out.result = *res;
    return out;
  }
  const auto* eo = err->if_object();
  if (eo == nullptr)
    return fail(rpc_errc::bad_response, "rpc.error: expected an object");
  const auto* code = eo->if_contains("code");
  const auto code_value = code ? detail::as_int64(*code) : std::nullopt;
  if (!code_value)
    return fail(rpc_errc::bad_response, "rpc.error.code: expected an integer");
  const auto* message = eo->if_contains("message");
  if (message == nullptr || !message->is_string())
    return fail(rpc_errc::bad_response, "rpc.error.message: expected a string");
  node_error e;
  e.code = *code_value;
  e.message = std::string(message->as_string());
  if (const auto* d = eo->if_contains("data")) {
    e.data = *d;
    e.revert_data = detail::revert_bytes(*d);
  }
  out.error = std::move(e);
  return out;
}

}  // namespace enact::chain::rpc
