// SPDX-License-Identifier: Apache-2.0
// The ChainSecured endpoints (docs/protocol.md §2 "ChainSecured") against the real server:
// minting a PKP and a usage key for a wallet-signed envelope, every rejection of the validation
// order with its own status and code (on all three endpoints), conversion of an account and what
// changes with it (master key, usage keys, relayed writes, billing by the new admin wallet), the
// per-IP limit, the OpenAPI entries, the SDK client's methods, and a replay of the wallet-signed
// envelopes of the interop vectors. Envelopes are signed with the SDK's eip712::envelope::sign.
//
// Shared by the chainsecured_*_test.cpp files of integration.chainsecured: keys, envelopes, bodies.
#pragma once

#include <doctest/doctest.h>

#include <chrono>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>

#include "enact/client/api_error.hpp"
#include "enact/client/core_client.hpp"
#include "enact/u256.hpp"
#include "enact/eip712/envelope.hpp"
#include "client_support.hpp"
#include "steps.hpp"

namespace enact::itest {

const std::string kCreate = "/create_wallet_with_signature";
const std::string kAddKey = "/add_usage_api_key_with_signature";
const std::string kConvert = "/convert_to_chain_secured_account";

inline std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  REQUIRE_MESSAGE(f.good(), "cannot read " << path);
  std::ostringstream out;
  out << f.rdbuf();
  return out.str();
}

/// The simulated TEE's root key (docs/protocol.md §1 derivations are checked against it).
inline Secret root_key_of(const server_process& srv) {
  const std::string raw = read_text(srv.data_dir() + "/tee-root.key");
  REQUIRE(raw.size() == 32);
  return Secret(as_bytes(std::string_view(raw)));
}

/// A reproducible wallet key per label.
inline Secret wallet_key(std::string_view label) {
  return Secret(crypto::keccak256("chainsecured test wallet " + std::string(label)));
}

inline address address_of_key(const Secret& key) {
  return crypto::secp256k1::to_address(crypto::secp256k1::public_key_of(key).value());
}

/// An envelope for the chain `chain`: each server's own (env_of(srv).chain_id, docs/protocol.md §1
/// "embedded chain").
inline eip712::envelope::signed_envelope sign_env(eip712::envelope::kind k, const Secret& key, int64_t issued_at,
                                                  uint64_t chain) {
  return eip712::envelope::sign(k, chain, key, static_cast<uint64_t>(issued_at)).value();
}

/// The body of a ChainSecured request.
inline std::string body_text(const json::value& typed_data, const std::string& signature, const json::object& extra) {
  json::object o = extra;
  o["typed_data"] = typed_data;
  o["signature"] = signature;
  return json::serialize(o);
}

/// Unix seconds read in the first half of a second, so that a request sent right away is checked
/// by the server within the same second: a window bound (now + 301) then holds exactly.
inline int64_t now_early_in_second() {
  using namespace std::chrono;
  const auto since = system_clock::now().time_since_epoch();
  const auto into = since - duration_cast<seconds>(since);
  if (into > milliseconds(400))
    std::this_thread::sleep_for(seconds(1) - into + milliseconds(20));
  return unix_now();
}

inline bool is_checksummed_address(const std::string& s) {
  auto a = parse_address_strict(s, "address");
  return a.has_value() && to_checksum_address(*a) == s;
}

inline bool is_path_hex(const std::string& s) {
  return s.size() == 66 && s.starts_with("0x") && codec::hex::decode_fixed<32>(s).has_value() &&
         codec::hex::encode_prefixed(codec::hex::decode_fixed<32>(s).value()) == s;
}

struct endpoint {
  std::string path;
  eip712::envelope::kind kind;
  eip712::envelope::kind other;  // a flow whose envelope this endpoint must refuse
  bool convert = false;
};

const endpoint kEndpoints[] = {
    {kCreate, eip712::envelope::kind::create_wallet, eip712::envelope::kind::add_usage_api_key},
    {kAddKey, eip712::envelope::kind::add_usage_api_key, eip712::envelope::kind::create_wallet},
    {kConvert, eip712::envelope::kind::convert_account, eip712::envelope::kind::create_wallet, true},
};

/// A version 2 ConvertAccount body (docs/protocol.md §2) for the account whose hash is
/// `account_hash` (hex), signed by `new_admin` for `e`'s deployment.
inline json::object convert_body(const chain_env& e, const Secret& new_admin, const std::string& account_hash,
                                 int64_t issued_at = 0) {
  const auto env = eip712::envelope::sign_v2(eip712::envelope::kind::convert_account, {e.chain_id, e.registry},
                                             new_admin, static_cast<uint64_t>(issued_at ? issued_at : unix_now()),
                                             codec::hex::decode_fixed<32>(account_hash).value())
                       .value();
  return json::object{{"new_admin_wallet_address", to_checksum_address(address_of_key(new_admin))},
                      {"typed_data", env.typed_data},
                      {"signature", env.signature}};
}

inline json::object mint_body(eip712::envelope::kind k, const Secret& key, uint64_t chain) {
  const auto env = sign_env(k, key, unix_now(), chain);
  return json::object{{"typed_data", env.typed_data}, {"signature", env.signature}};
}

}  // namespace enact::itest
