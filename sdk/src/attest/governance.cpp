// SPDX-License-Identifier: Apache-2.0
// The governance check (see governance.hpp).
#include "enact/attest/governance.hpp"

#include <boost/json.hpp>

#include "enact/codec/abi.hpp"
#include "enact/codec/hex.hpp"

namespace enact::attest {

namespace {
constexpr std::string_view kSignature = "allowedComposeHashes(bytes32)";
}  // namespace

bytes allowed_compose_hashes_calldata(const hash256& compose_hash) {
  const auto sel = codec::abi::selector(kSignature);
  bytes out(sel.begin(), sel.end());
  out.insert(out.end(), compose_hash.begin(), compose_hash.end());
  return out;
}

governance_report verify_governance(const address& app_contract, const hash256& compose_hash,
                                    const eth_call_fn& eth_call) {
  governance_report r;
  r.contract = app_contract;
  r.compose_hash = compose_hash;
  const std::string call =
      "allowedComposeHashes(0x" + codec::hex::encode(compose_hash) + ") on 0x" + codec::hex::encode(app_contract);
  if (!eth_call) {
    r.add("compose_hash_allowed", false, "not checked: no eth_call given");
    return r;
  }
  auto ret = eth_call(app_contract, allowed_compose_hashes_calldata(compose_hash));
  if (!ret) {
    r.add("compose_hash_allowed", false, call + " failed: " + ret.err().message);
    return r;
  }
  static const codec::abi::type kBool = codec::abi::type::of("bool");
  auto decoded = codec::abi::decode(std::span<const codec::abi::type>(&kBool, 1), *ret);
  if (!decoded) {
    r.add("compose_hash_allowed", false,
          call + " returned 0x" + codec::hex::encode(*ret) + ", not an ABI bool (" + decoded.err().message + ")");
    return r;
  }
  r.allowed = std::get<bool>(decoded->front().node);
  r.add("compose_hash_allowed", r.allowed,
        call + (r.allowed ? " returned true" : " returned false: the compose hash is not allowed"));
  return r;
}

result<governance_report> verify_governance(std::string_view app_id, std::string_view compose_hash,
                                            const eth_call_fn& eth_call) {
  address to{};
  if (auto r = codec::hex::decode_into(app_id, to, "app_id"); !r)
    return fail(attest_errc::bad_field, r.err().message);
  hash256 h{};
  if (auto r = codec::hex::decode_into(compose_hash, h, "compose_hash"); !r)
    return fail(attest_errc::bad_field, r.err().message);
  return verify_governance(to, h, eth_call);
}

boost::json::value to_json(const governance_report& r) {
  boost::json::object o = to_json(static_cast<const checklist&>(r));
  o["facts"] = boost::json::object{{"contract", codec::hex::encode_prefixed(r.contract)},
                                   {"compose_hash", codec::hex::encode_prefixed(r.compose_hash)},
                                   {"allowed", r.allowed}};
  return o;
}

}  // namespace enact::attest
