// SPDX-License-Identifier: Apache-2.0
// What envelope.cpp (building and signing) and envelope_check.cpp (checking what a client sent)
// share: the envelope's member lists, docs/protocol.md §2 "Typed-data envelope".
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "enact/codec/hex.hpp"
#include "enact/eip712/envelope.hpp"

namespace enact::eip712::envelope::detail {

struct field {
  std::string_view name;
  std::string_view type;
};
// Version 1: the member lists, in this order.
inline constexpr field kDomainFields[] = {{"name", "string"}, {"version", "string"}, {"chainId", "uint256"}};
inline constexpr field kMessageFields[] = {{"address", "address"}, {"issuedAt", "uint256"}};
// Version 2: the domain names the registry, each message what it authorizes.
inline constexpr field kDomainFields2[] = {
    {"name", "string"}, {"version", "string"}, {"chainId", "uint256"}, {"verifyingContract", "address"}};
inline constexpr field kMintFields2[] = {{"address", "address"}, {"issuedAt", "uint256"}, {"nonce", "bytes32"}};
inline constexpr field kConvertFields2[] = {
    {"address", "address"}, {"account", "bytes32"}, {"issuedAt", "uint256"}, {"nonce", "bytes32"}};
inline constexpr field kBillingFields2[] = {
    {"address", "address"}, {"method", "string"}, {"path", "string"}, {"bodyHash", "bytes32"}, {"issuedAt", "uint256"}};

inline std::span<const field> message_fields(kind k, unsigned version) {
  if (version == 1)
    return kMessageFields;
  switch (k) {
    case kind::convert_account:
      return kConvertFields2;
    case kind::billing_auth:
      return kBillingFields2;
    default:
      return kMintFields2;
  }
}

// JavaScript reads larger JSON numbers inexactly (Number.MAX_SAFE_INTEGER): a wallet would sign
// a different value.
inline constexpr uint64_t kMaxSafeInteger = (uint64_t{1} << 53) - 1;

inline std::string hex32(const hash256& h) { return codec::hex::encode_prefixed(bytes_view(h.data(), h.size())); }

}  // namespace enact::eip712::envelope::detail
