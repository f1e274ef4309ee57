// SPDX-License-Identifier: Apache-2.0
// How the RPC client (client.cpp) and the transaction sender (transaction_sender.cpp) read a
// node's refusals: revert data rides in the error message after kRevertMarker (revert_data() in
// client.hpp reads it back), and a few node messages mean the nonce is taken.
#pragma once

#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>

#include "enact/chain/client.hpp"

namespace enact::chain::detail {

inline constexpr std::string_view kRevertMarker = " (revert data ";

inline bool nonce_too_low(const error& e) {
  if (e.code != rpc_errc::node_error)
    return false;
  std::string m = e.message;
  std::transform(m.begin(), m.end(), m.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return m.find("nonce too low") != std::string::npos || m.find("nonce is too low") != std::string::npos;
}

/// A new transaction refused because its nonce is taken: mined ("nonce too low"), or held in the
/// node's pool by another transaction that this one does not outbid ("replacement transaction
/// underpriced"; "already known": the same transaction, signed for the same write by another
/// process). Either way the nonce belongs to another send, and the pending count is asked again.
inline bool nonce_taken(const error& e) {
  if (nonce_too_low(e))
    return true;
  if (e.code != rpc_errc::node_error)
    return false;
  std::string m = e.message;
  std::transform(m.begin(), m.end(), m.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return m.find("replacement transaction underpriced") != std::string::npos ||
         m.find("replacement underpriced") != std::string::npos || m.find("already known") != std::string::npos;
}

inline bool transient(const error& e) {
  return e.code == rpc_errc::unreachable || e.code == rpc_errc::timeout || e.code == rpc_errc::http_status;
}

}  // namespace enact::chain::detail
