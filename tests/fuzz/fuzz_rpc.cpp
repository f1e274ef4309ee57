// SPDX-License-Identifier: Apache-2.0
// JSON-RPC replies (chain/rpc.hpp). Input: one byte (the expected id) then the response body.
// Never crashes; a parsed reply answers the expected id and holds exactly one of result and
// error; a string result that parses as QUANTITY or DATA prints back as its lowercase text; the
// error's revert data is the decoded DATA of `data` or `data.data`.
#include <algorithm>
#include <cctype>

#include "enact/chain/rpc.hpp"
#include "fuzz.hpp"

using namespace enact;
namespace rpc = enact::chain::rpc;

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); });
  return out;
}

void check_wire_forms(const boost::json::value& v) {
  const auto q = rpc::parse_quantity(v);
  const auto d = rpc::parse_data(v);
  if (!v.is_string()) {
    fuzz::require(!q && !d, "rpc: QUANTITY or DATA from a non-string");
    return;
  }
  const std::string text = lower(v.get_string());
  if (q) {
    fuzz::require(rpc::quantity(*q) == text, "rpc: quantity(parse_quantity(s)) != s");
    const auto small = rpc::parse_quantity_u64(v);
    fuzz::require(small.has_value() == q->fits_u64(), "rpc: parse_quantity_u64 disagrees");
  } else {
    fuzz::require(q.code() == rpc_errc::bad_quantity, "rpc: parse_quantity error code");
  }
  if (d)
    fuzz::require(rpc::data(*d) == text, "rpc: data(parse_data(s)) != s");
  else
    fuzz::require(d.code() == rpc_errc::bad_data, "rpc: parse_data error code");
  const auto h = rpc::parse_data_fixed<32>(v);
  fuzz::require(h.has_value() == (d && d->size() == 32), "rpc: parse_data_fixed<32> disagrees");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0)
    return 0;
  const uint64_t id = data[0];
  const auto r = rpc::parse_response(fuzz::text(data + 1, size - 1), id);
  if (!r) {
    fuzz::require(
        r.code() == rpc_errc::bad_json || r.code() == rpc_errc::bad_response || r.code() == rpc_errc::id_mismatch,
        "rpc: parse_response error code");
    return 0;
  }
  fuzz::require(r->id == id, "rpc: reply id");
  const auto v = r->value();
  fuzz::require(v.has_value() == r->ok(), "rpc: value() disagrees with ok()");
  if (r->ok()) {
    check_wire_forms(r->result);
    if (const auto* a = r->result.if_array())
      for (const auto& e : *a)
        check_wire_forms(e);
    if (const auto* o = r->result.if_object())
      for (const auto& kv : *o)
        check_wire_forms(kv.value());
    return 0;
  }
  fuzz::require(v.code() == rpc_errc::node_error && r->result.is_null(), "rpc: node error form");
  const auto& e = *r->error;
  const boost::json::value* inner = &e.data;
  if (const auto* o = e.data.if_object())
    inner = o->if_contains("data");
  const auto expected = inner ? rpc::parse_data(*inner) : result<bytes>(fail(rpc_errc::bad_data, ""));
  fuzz::require(e.revert_data.has_value() == expected.has_value() && (!expected || *e.revert_data == *expected),
                "rpc: revert data differs from the DATA in error.data");
  check_wire_forms(e.data);
  return 0;
}
