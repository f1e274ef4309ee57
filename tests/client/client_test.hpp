// SPDX-License-Identifier: Apache-2.0
// enact::client::core_client against a loopback server that plays the core service (docs/protocol.md §2):
// the request each method sends (method, path, query, headers, body fields exactly), the decoding
// of each answer, the mapping of every error code and status (docs/protocol.md §0), the retry rule (GETs
// only, Retry-After honoured up to the cap), timeouts and refused connections, and that no
// credential ever reaches an exception message.
//
// Shared by the client_*_test.cpp files of client.core: the fake core's canned answers and checks.
#pragma once

#include <doctest/doctest.h>

#include <boost/json.hpp>

#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "../unit/support.hpp"
#include "enact/client/core_client.hpp"
#include "enact/codec/base64.hpp"
#include "enact/address.hpp"
#include "enact/crypto/secp256k1.hpp"
#include "enact/eip712/envelope.hpp"
#include "fake_server.hpp"

using namespace enact;
using namespace enact::client;
using enact::test::fake_server;
using enact::test::recorded_request;
namespace json = boost::json;
using std::chrono::milliseconds;

namespace client_test {

// Test values. The keys are shaped like real ones (base64 of 32 bytes) so that nothing in the
// client could tell them apart from issued keys.
const std::string kApiKey = "QUNDT1VOVC1LRVktMDAwMDAwMDAwMDAwMDAwMDAwMDA=";
const std::string kUsageKey = "VVNBR0UtS0VZLTAwMDAwMDAwMDAwMDAwMDAwMDAwMDA=";
const std::string kNewKey = "TkVXLUtFWS0wMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDA=";
const std::string kA1 = "0x" + std::string(40, '1');
const std::string kA2 = "0xabcdef0123456789abcdef0123456789abcdef01";
const std::string kA3 = "0x" + std::string(40, 'c');
const std::string kH1 = "0x" + std::string(64, 'a');
const std::string kH2 = "0x" + std::string(62, '0') + "02";
const std::string kH3 = "0x" + std::string(64, '3');
const std::string kCid = "QmbFMke1KXqnYyBBWxB74N4c5SBnJMVAiMNRcGu6x1AwQH";

inline address addr(const std::string& s) { return parse_address(s).value(); }
inline hash256 h256(const std::string& s) { return codec::hex::decode_fixed<32>(s).value(); }
inline std::string checksum(const std::string& s) { return to_checksum_address(addr(s)); }
inline Secret secret(const std::string& s) { return Secret(as_bytes(s)); }

inline client_options options_for(const fake_server& s) {
  client_options o;
  o.base_url = s.url();
  o.connect_timeout = milliseconds(2000);
  o.read_timeout = milliseconds(5000);
  o.sleep = [](milliseconds) {
  };  // retries in these tests never wait
  return o;
}

inline json::value parse(std::string_view text) { return json::parse(text); }

// Canned answers, one per path, as the server would write them (lowercase addresses, extra
// fields a later server version might add).
const std::string kGroup = R"({"group_id": 7, "name": "ops", "description": "on-call",
  "pkp_ids_permitted": [")" +
                           kA1 + R"(", ")" + kA2 + R"("], "cid_hashes_permitted": [")" + kH3 +
                           R"("], "created_at": 1800000000})";
const std::string kWallet = R"({"pkp_id": ")" + kA2 + R"(", "wallet_address": ")" + kA2 + R"(", "derivation_path": ")" +
                            kH1 + R"(", "name": "signer", "description": "hot", "extra": [1, 2]})";
const std::string kAction =
    R"({"action_ipfs_cid": ")" + kCid + R"(", "hashed_cid": ")" + kH3 + R"(", "name": "hello", "description": null})";
inline std::string page_of(const std::string& item) {
  return R"({"items": [)" + item + R"(], "page_number": 2, "page_size": 5, "total": 6})";
}

inline const std::map<std::string, std::string>& canned() {
  static const std::map<std::string, std::string> m = {
      {"/core/v1/new_account", R"({"api_key": ")" + kNewKey + R"(", "wallet_address": ")" + kA1 +
                                   R"(", "api_key_hash": ")" + kH1 + R"(", "note": "once"})"},
      {"/core/v1/account",
       R"({"api_key_hash": ")" + kH1 + R"(", "admin_wallet_address": ")" + kA1 +
           R"(", "managed": true, "name": "acme", "description": "d", "key": {"kind": "usage", "hash": ")" + kH2 +
           R"(", "since": 1}, "future": {"nested": [1]}})"},
      {"/core/v1/add_usage_api_key",
       R"({"usage_api_key": ")" + kNewKey + R"(", "hash": ")" + kH2 + R"(", "wallet_address": ")" + kA2 + R"("})"},
      {"/core/v1/list_api_keys",
       page_of(R"({"hash": ")" + kH2 +
               R"(", "name": "ci", "description": "", "expiration": 1900000000, "created_at": 1800000000,
        "can_create_groups": true, "can_delete_groups": false, "can_create_pkps": true,
        "manage_ipfs_ids_in_groups": [0], "add_pkp_to_groups": [3, 4], "remove_pkp_from_groups": [],
        "execute_in_groups": [7]})")},
      {"/core/v1/update_usage_api_key", R"({"hash": ")" + kH2 + R"("})"},
      {"/core/v1/update_usage_api_key_metadata", R"({"hash": ")" + kH2 + R"("})"},
      {"/core/v1/remove_usage_api_key", R"({"hash": ")" + kH2 + R"("})"},
      {"/core/v1/add_group", kGroup},
      {"/core/v1/list_groups", page_of(kGroup)},
      {"/core/v1/update_group", kGroup},
      {"/core/v1/remove_group", R"({"group_id": "7"})"},
      {"/core/v1/create_wallet", kWallet},
      {"/core/v1/list_wallets", page_of(kWallet)},
      {"/core/v1/list_wallets_in_group", page_of(kWallet)},
      {"/core/v1/add_pkp_to_group", kGroup},
      {"/core/v1/remove_pkp_from_group", kGroup},
      {"/core/v1/add_action", kAction},
      {"/core/v1/add_action_to_group", kGroup},
      {"/core/v1/remove_action_from_group", kGroup},
      {"/core/v1/update_action_metadata", kAction},
      {"/core/v1/delete_action", R"({"hashed_cid": ")" + kH3 + R"("})"},
      {"/core/v1/list_actions", page_of(kAction)},
      {"/core/v1/upload_action", R"({"action_ipfs_cid": ")" + kCid + R"(", "hashed_cid": ")" + kH3 + R"("})"},
      {"/core/v1/get_node_chain_config",
       R"({"chain_id": 8453, "contract_address": ")" + kA3 + R"(", "chain_name": "base"})"},
      {"/core/v1/get_api_payers", R"({"api_payers": [")" + kA1 + R"(", ")" + kA2 + R"("]})"},
      {"/core/v1/get_admin_api_payer", R"({"admin_api_payer": ")" + kA3 + R"("})"},
      {"/core/v1/get_svc_action_ipfs_id", R"({"action_ipfs_cid": ")" + kCid + R"("})"},
      {"/core/v1/billing/stripe_config", R"({"publishable_key": "pk_test_123"})"},
      {"/core/v1/billing/balance", R"({"balance_credits": 1234, "currency": "usd_cents"})"},
      {"/core/v1/billing/create_payment_intent",
       R"({"payment_intent_id": "pi_1", "client_secret": "pi_1_secret_x", "amount_cents": 500})"},
      {"/core/v1/billing/confirm_payment", R"({"balance_credits": 1734})"},
  };
  return m;
}

inline void serve_canned(fake_server& s) {
  s.on([](const httplib::Request& req, httplib::Response& res, size_t) {
    auto it = canned().find(req.path);
    if (it == canned().end()) {
      res.status = 404;
      res.set_content(R"({"error": {"code": "not_found", "message": "no such endpoint"}})", "application/json");
      return;
    }
    res.set_content(it->second, "application/json");
  });
}

inline void check_group(const group& g) {
  CHECK(g.group_id == 7);
  CHECK(g.name == "ops");
  CHECK(g.description == "on-call");
  CHECK(g.pkp_ids_permitted == std::vector<address>{addr(kA1), addr(kA2)});
  CHECK(g.cid_hashes_permitted == std::vector<hash256>{h256(kH3)});
}

inline void check_wallet(const wallet& w) {
  CHECK(w.pkp_id == addr(kA2));
  CHECK(w.wallet_address == addr(kA2));
  CHECK(w.derivation_path == h256(kH1));
  CHECK(w.name == "signer");
  CHECK(w.description == "hot");
}

inline void check_action(const action& a) {
  CHECK(a.action_ipfs_cid == kCid);
  CHECK(a.hashed_cid == h256(kH3));
  CHECK(a.name == "hello");
  CHECK(a.description.empty());  // null reads as empty
}

template <class T>
void check_page(const page<T>& p, const std::function<void(const T&)>& check_item) {
  CHECK(p.page_number == 2);
  CHECK(p.page_size == 5);
  CHECK(p.total == 6);
  REQUIRE(p.items.size() == 1);
  check_item(p.items[0]);
}

enum class auth { none, key };

struct endpoint_case {
  std::string_view name;
  std::function<void(core_client&)> call;  // calls the method and checks what it decoded
  std::string method;
  std::string path;
  std::map<std::string, std::string> query;
  std::string body;  // expected JSON, compared as a value (field order free); empty for GET
  auth credential;
};

}  // namespace client_test
