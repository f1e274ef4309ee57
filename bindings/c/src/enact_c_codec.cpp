// SPDX-License-Identifier: Apache-2.0
// The C API's Solidity ABI encoding, IPFS CIDs and cron schedules.
#include <boost/json.hpp>

#include <chrono>
#include <string>
#include <vector>

#include "enact.h"
#include "enact/codec/abi.hpp"
#include "enact/codec/abi_json.hpp"
#include "enact/codec/hex.hpp"
#include "enact/cron/cron.hpp"
#include "enact/ipfs/cid.hpp"
#include "entry_point.hpp"

namespace json = boost::json;
using namespace enact_c;

extern "C" {

int enact_abi_encode_call(const char* signature, const char* args_json, char** out_hex) {
  return guarded([&] {
    output(out_hex, "out_hex");
    require(signature, "signature");
    require(args_json, "args_json");
    const auto fn = enact::codec::abi::parse_signature(signature).value();
    boost::system::error_code ec;
    const json::value args = json::parse(args_json, ec);
    if (ec)
      return set_error(ENACT_ERR_PARSE, "args_json: not JSON (" + ec.message() + ")");
    if (!args.is_array())
      return set_error(ENACT_ERR_PARSE, "args_json: expected a JSON array");
    const json::array& list = args.get_array();
    if (list.size() != fn.inputs.size())
      return set_error(ENACT_ERR_PARSE, "args_json: " + fn.canonical() + " takes " + std::to_string(fn.inputs.size()) +
                                            " arguments, got " + std::to_string(list.size()));
    std::vector<enact::codec::abi::value> values;
    values.reserve(list.size());
    for (size_t i = 0; i < list.size(); ++i)
      values.push_back(enact::codec::abi::from_json(fn.inputs[i], list[i], "arg " + std::to_string(i)).value());
    *out_hex =
        new_string(enact::codec::hex::encode_prefixed(enact::codec::abi::encode_call(fn.canonical(), values).value()));
    return ENACT_OK;
  });
}

int enact_cid_v0(const uint8_t* data, size_t len, char out_cid[ENACT_CID_V0_SIZE]) {
  return guarded([&] {
    output(out_cid, "out_cid");
    if (data == nullptr && len != 0)
      return invalid("data: NULL with a non-zero length");
    copy_fixed(enact::ipfs::cid_of(enact::bytes_view(data, data ? len : 0)), out_cid, ENACT_CID_V0_SIZE);
    return ENACT_OK;
  });
}

int enact_cron_next(const char* expression, int64_t after, int64_t* out_next) {
  return guarded([&] {
    require(out_next, "out_next");
    *out_next = 0;
    require(expression, "expression");
    const auto schedule = enact::cron::parse(expression).value();
    const auto next = enact::cron::next_after(schedule, std::chrono::sys_seconds(std::chrono::seconds(after)));
    if (!next)
      return set_error(ENACT_ERR_OUT_OF_RANGE,
                       "expression: no fire time after " + std::to_string(after) + " within years 1 to 9999");
    *out_next = next->time_since_epoch().count();
    return ENACT_OK;
  });
}

}  // extern "C"
