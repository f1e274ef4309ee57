// SPDX-License-Identifier: Apache-2.0
// RLP's JSON bridge (rlp_json.hpp): ethers' encodeRlp/decodeRlp shape.
#include "enact/codec/rlp_json.hpp"

#include <boost/json.hpp>

#include <string>

#include "enact/codec/hex.hpp"

namespace enact::codec::rlp {

namespace {

result<item> from_json_at(const boost::json::value& v, size_t depth, size_t max_depth, const std::string& path) {
  if (const auto* s = v.if_string()) {
    auto b = codec::hex::decode_prefixed(std::string_view(s->data(), s->size()), path);
    if (!b)
      return fail(rlp_errc::bad_json, b.err().message);
    return item::string(std::move(b).value());
  }
  if (const auto* a = v.if_array()) {
    if (depth >= max_depth)
      return fail(rlp_errc::too_deep, path + ": arrays nested deeper than " + std::to_string(max_depth));
    std::vector<item> children;
    children.reserve(a->size());
    for (size_t i = 0; i < a->size(); ++i) {
      auto child = from_json_at((*a)[i], depth + 1, max_depth, path + "[" + std::to_string(i) + "]");
      if (!child)
        return std::move(child).err();
      children.push_back(std::move(child).value());
    }
    return item::list(std::move(children));
  }
  return fail(rlp_errc::bad_json, path + ": expected a 0x-hex string or an array");
}

}  // namespace

boost::json::value to_json(const item& it) {
  if (!it.is_list())
    return boost::json::value(codec::hex::encode_prefixed(std::get<0>(it.node)));
  boost::json::array a;
  a.reserve(std::get<1>(it.node).size());
  for (const item& child : std::get<1>(it.node))
    a.push_back(to_json(child));
  return a;
}

result<item> from_json(const boost::json::value& v, size_t max_depth) { return from_json_at(v, 0, max_depth, "rlp"); }

}  // namespace enact::codec::rlp
