// SPDX-License-Identifier: Apache-2.0
// The wire model of the core service (docs/protocol.md §2, /core/v1): every request and response type, field
// for field as the wire carries them, shared by the server's handlers, the typed client, the CLI
// and the C binding, so a field is spelled once. Fields are typed: addresses as `address` (sent EIP-55 checksummed),
// hashes and derivation paths as `hash256` (sent 0x + lowercase hex), ids as uint64_t, permission sets as
// `scopes::permission_set`, and key values as `Secret` (never converted to JSON implicitly).
//
// JSON conversion follows Boost.JSON's `tag_invoke` customisation: `value_from` writes a request
// body exactly as §2 lists its fields (optional fields only when set), and writes responses back
// out (the CLI prints them); `value_to` reads a response. Reading ignores fields it does not know
// (a newer server may add some), reads an absent or null name or description as empty, and throws
// enact::Error with api_errc::bad_response naming the field when an id, hash, address or count is
// missing or ill-typed. Types holding a Secret have no `value_from`. The server reads request
// bodies without exceptions through `api::read<T>` (enact/api/read.hpp).
#pragma once

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "enact/bytes.hpp"
#include "enact/api/errc.hpp"
#include "enact/secret.hpp"
#include "enact/scopes/scopes.hpp"

namespace enact::api {

namespace json = boost::json;

// --- paging (docs/protocol.md §0) --------------------------------------------------------------------------

/// `page_number` from 1, `page_size` 1..100 (the server refuses other values: invalid_request).
struct page_request {
  uint64_t number = 1;
  uint64_t size = 20;
};

template <class T>
struct page {
  std::vector<T> items;
  uint64_t page_number = 0;
  uint64_t page_size = 0;
  uint64_t total = 0;
};

// --- accounts and keys ---------------------------------------------------------------------------

/// POST /new_account.
struct new_account_request {
  std::string name;
  std::optional<std::string> description;
  std::optional<std::string> email;
};

/// The account key is returned once, here; `api_key` holds its base64 text exactly as issued.
struct new_account_response {
  Secret api_key;
  address wallet_address{};
  hash256 api_key_hash{};
};

/// Which credential a call was made with (GET /account, `key`).
struct key_identity {
  scopes::key_kind kind = scopes::key_kind::usage;
  hash256 hash{};
  /// A usage key's permissions (GET /account names them for a usage key); absent for the
  /// account key, and from a core that does not send them.
  std::optional<scopes::permission_set> permissions;
};

/// GET /account.
struct account_info {
  hash256 api_key_hash{};
  address admin_wallet_address{};
  bool managed = true;
  std::string name;
  std::string description;
  key_identity key;
};

/// The fields of POST /add_usage_api_key, and of /update_usage_api_key besides the key value.
/// `expiration` is unix seconds; absent: the key does not expire.
struct usage_key_spec {
  std::string name;
  std::optional<std::string> description;
  std::optional<uint64_t> expiration;
  scopes::permission_set permissions;
};

/// The usage key is returned once, here, as its base64 text.
struct new_usage_key {
  Secret usage_api_key;
  hash256 hash{};
  address wallet_address{};
};

/// An item of GET /list_api_keys: never the key value. `expiration` 0 (or absent) means never;
/// `created_at` is unix seconds.
struct usage_key_info {
  hash256 hash{};
  std::string name;
  std::string description;
  uint64_t expiration = 0;
  int64_t created_at = 0;
  scopes::permission_set permissions;
};

// --- groups, wallets, actions --------------------------------------------------------------------

/// A group as every group endpoint answers it; also the body of POST /update_group, which
/// replaces all four fields.
struct group {
  uint64_t group_id = 0;
  std::string name;
  std::string description;
  std::vector<address> pkp_ids_permitted;
  std::vector<hash256> cid_hashes_permitted;
};

/// POST /add_group. Empty sets are not sent (the server's default is the same empty set).
struct new_group {
  std::string name;
  std::optional<std::string> description;
  std::vector<address> pkp_ids_permitted;
  std::vector<hash256> cid_hashes_permitted;
};

/// POST /create_wallet.
struct new_wallet {
  std::string name;
  std::optional<std::string> description;
};

/// A PKP: `pkp_id` is its wallet address (docs/protocol.md §1).
struct wallet {
  address pkp_id{};
  address wallet_address{};
  hash256 derivation_path{};
  std::string name;
  std::string description;
  /// The base58 Solana address of the PKP's Ed25519 key (pkp::solana_address). The server sends
  /// null for a wallet whose registered derivation path is not a key of the account (and older
  /// servers send nothing): both read as nullopt. Written only when set.
  std::optional<std::string> solana_address;
  /// True for the wallet of a usage key (minted by signature, docs/protocol.md §1 "usage key by
  /// signature"): no PKP, it never signs in a run. Older servers send nothing: read as false.
  bool usage_key_wallet = false;
};

/// POST /add_action: the raw CID, which the server hashes.
struct new_action {
  std::string action_ipfs_cid;
  std::string name;
  std::optional<std::string> description;
};

/// Registered action metadata.
struct action {
  std::string action_ipfs_cid;
  hash256 hashed_cid{};
  std::string name;
  std::string description;
};

/// POST /update_action_metadata.
struct action_metadata {
  hash256 hashed_cid{};
  std::string name;
  std::string description;
};

/// POST /upload_action.
struct uploaded_action {
  std::string action_ipfs_cid;
  hash256 hashed_cid{};
};

/// GET /get_action_code: an action's code as the content store holds it.
struct action_code {
  std::string action_ipfs_cid;
  std::string code;
};

/// POST /remove_group, and its answer.
struct group_ref {
  uint64_t group_id = 0;
};

/// POST /add_pkp_to_group and /remove_pkp_from_group.
struct group_pkp {
  uint64_t group_id = 0;
  address pkp_id{};
};

/// POST /add_action_to_group: the raw CID, which the server hashes.
struct group_action {
  uint64_t group_id = 0;
  std::string action_ipfs_cid;
};

/// POST /remove_action_from_group.
struct group_action_hash {
  uint64_t group_id = 0;
  hash256 hashed_cid{};
};

/// POST /delete_action, and its answer.
struct action_ref {
  hash256 hashed_cid{};
};

// --- running actions -----------------------------------------------------------------------------

/// POST /run_action: exactly one of `code` and `action_ipfs_cid`.
struct run_action_request {
  std::optional<std::string> code;
  std::optional<std::string> action_ipfs_cid;
  std::optional<address> pkp_id;
  json::object params;  // visible to the action as `params`
};

/// A signature an action made with Enact.signEcdsa, with what a caller needs to verify it.
struct action_signature {
  std::array<uint8_t, 65> signature{};  // r ‖ s ‖ v (v = 27 or 28)
  hash256 r{};
  hash256 s{};
  uint8_t v = 27;
  bytes public_key;  // 65 bytes, uncompressed (0x04 ‖ x ‖ y)
  hash256 digest{};
};

struct run_action_result {
  /// What the action passed to Enact.setResponse (parsed JSON; null when it set none).
  json::value response;
  std::string logs;
  std::map<std::string, action_signature> signatures;
  uint64_t run_ms = 0;
  uint64_t charged_credits = 0;
};

// --- public utility and billing ------------------------------------------------------------------

/// GET /get_node_chain_config.
struct chain_config {
  uint64_t chain_id = 0;
  address contract_address{};
  std::string chain_name;
};

/// GET /billing/stripe_config.
struct stripe_config {
  std::string publishable_key;
  std::optional<std::string> mode;  // "dev" with the dev provider, which needs no card
};

/// GET /billing/balance: one credit is one US cent (`currency` "usd_cents").
struct credit_balance {
  uint64_t balance_credits = 0;
  std::string currency;
};

/// POST /billing/create_payment_intent. `client_secret` is the payment provider's handle for the
/// payer's browser, not an enact credential.
struct payment_intent {
  std::string payment_intent_id;
  std::string client_secret;
  uint64_t amount_cents = 0;
};

/// One item of GET /billing/usage: a settled charge of the account, newest first — a run
/// (`run_id` is the run's request id) or a relayed write's surcharge ("write " + its request id).
struct usage_charge {
  std::string run_id;
  hash256 key_hash{};  // the key that paid (the account's hash for the account key)
  uint64_t charged_credits = 0;
  uint64_t charged_at = 0;  // unix seconds
};

/// One item of GET /billing/payments: a payment intent of the account, newest first, credited or
/// still open.
/// A refund or dispute of a payment (docs/protocol.md §2 "Billing", GET /billing/payments).
struct payment_reversal {
  std::string kind;  // "refund", "dispute", "dispute_won" (the amount a won dispute gave back)
  uint64_t amount_cents = 0;
  std::string event_id;
  uint64_t created_at = 0;  // unix seconds
};

struct payment_record {
  std::string payment_intent_id;
  uint64_t amount_cents = 0;
  std::string provider;  // "dev", "stripe"
  bool credited = false;
  uint64_t created_at = 0;   // unix seconds
  uint64_t credited_at = 0;  // unix seconds; 0 while not credited
  /// What refunds and disputes take back now (0 from a server that sends none), and each of them.
  uint64_t reversed_cents = 0;
  std::vector<payment_reversal> reversals;
};

// --- ChainSecured (wallet-signed) ---------------------------------------------------------------

/// POST /create_wallet_with_signature: a PKP minted at a random derivation path. Registered
/// nowhere yet: the wallet calls registerWalletDerivation on-chain with these values.
struct minted_wallet {
  address pkp_id{};
  address wallet_address{};
  hash256 derivation_path{};
  /// The base58 Solana address of its Ed25519 key (pkp::solana_address); nullopt from a server
  /// that does not send it.
  std::optional<std::string> solana_address;
};

/// POST /add_usage_api_key_with_signature: the usage key (base64 text, shown once), its address
/// and derivation path; an unattached keypair until the admin wallet registers it on-chain
/// (registerWalletDerivation, then setUsageApiKey with the keccak256 of the key text).
struct minted_usage_key {
  Secret usage_api_key;
  address wallet_address{};
  hash256 derivation_path{};
};

/// POST /convert_to_chain_secured_account: the new admin and the account id it keeps.
struct chain_secured_account {
  address new_admin_wallet_address{};
  hash256 api_key_hash{};
};

// --- JSON ----------------------------------------------------------------------------------------

void tag_invoke(json::value_from_tag, json::value& v, const new_account_request& r);
void tag_invoke(json::value_from_tag, json::value& v, const key_identity& k);
void tag_invoke(json::value_from_tag, json::value& v, const account_info& a);
/// The add_usage_api_key body.
void tag_invoke(json::value_from_tag, json::value& v, const usage_key_spec& s);
void tag_invoke(json::value_from_tag, json::value& v, const usage_key_info& k);
/// Also the update_group body.
void tag_invoke(json::value_from_tag, json::value& v, const group& g);
void tag_invoke(json::value_from_tag, json::value& v, const new_group& g);
void tag_invoke(json::value_from_tag, json::value& v, const new_wallet& w);
void tag_invoke(json::value_from_tag, json::value& v, const wallet& w);
void tag_invoke(json::value_from_tag, json::value& v, const new_action& a);
void tag_invoke(json::value_from_tag, json::value& v, const action& a);
void tag_invoke(json::value_from_tag, json::value& v, const action_metadata& a);
void tag_invoke(json::value_from_tag, json::value& v, const uploaded_action& a);
void tag_invoke(json::value_from_tag, json::value& v, const action_code& a);
void tag_invoke(json::value_from_tag, json::value& v, const group_ref& g);
void tag_invoke(json::value_from_tag, json::value& v, const group_pkp& g);
void tag_invoke(json::value_from_tag, json::value& v, const group_action& g);
void tag_invoke(json::value_from_tag, json::value& v, const group_action_hash& g);
void tag_invoke(json::value_from_tag, json::value& v, const action_ref& a);
void tag_invoke(json::value_from_tag, json::value& v, const chain_config& c);
void tag_invoke(json::value_from_tag, json::value& v, const stripe_config& c);
void tag_invoke(json::value_from_tag, json::value& v, const credit_balance& b);
void tag_invoke(json::value_from_tag, json::value& v, const payment_intent& p);
void tag_invoke(json::value_from_tag, json::value& v, const usage_charge& u);
void tag_invoke(json::value_from_tag, json::value& v, const payment_record& p);
void tag_invoke(json::value_from_tag, json::value& v, const minted_wallet& w);
void tag_invoke(json::value_from_tag, json::value& v, const chain_secured_account& a);

new_account_response tag_invoke(json::value_to_tag<new_account_response>, const json::value& v);
key_identity tag_invoke(json::value_to_tag<key_identity>, const json::value& v);
account_info tag_invoke(json::value_to_tag<account_info>, const json::value& v);
new_usage_key tag_invoke(json::value_to_tag<new_usage_key>, const json::value& v);
usage_key_info tag_invoke(json::value_to_tag<usage_key_info>, const json::value& v);
group tag_invoke(json::value_to_tag<group>, const json::value& v);
group_ref tag_invoke(json::value_to_tag<group_ref>, const json::value& v);
action_ref tag_invoke(json::value_to_tag<action_ref>, const json::value& v);
wallet tag_invoke(json::value_to_tag<wallet>, const json::value& v);
action tag_invoke(json::value_to_tag<action>, const json::value& v);
uploaded_action tag_invoke(json::value_to_tag<uploaded_action>, const json::value& v);
action_code tag_invoke(json::value_to_tag<action_code>, const json::value& v);
run_action_result tag_invoke(json::value_to_tag<run_action_result>, const json::value& v);
void tag_invoke(json::value_from_tag, json::value& v, const run_action_request& r);
/// A signature as a run's answer and the action itself see it.
void tag_invoke(json::value_from_tag, json::value& v, const action_signature& s);
/// The server's answer to a run (docs/protocol.md §2 "Running an action").
void tag_invoke(json::value_from_tag, json::value& v, const run_action_result& r);
chain_config tag_invoke(json::value_to_tag<chain_config>, const json::value& v);
stripe_config tag_invoke(json::value_to_tag<stripe_config>, const json::value& v);
credit_balance tag_invoke(json::value_to_tag<credit_balance>, const json::value& v);
payment_intent tag_invoke(json::value_to_tag<payment_intent>, const json::value& v);
usage_charge tag_invoke(json::value_to_tag<usage_charge>, const json::value& v);
payment_record tag_invoke(json::value_to_tag<payment_record>, const json::value& v);
minted_wallet tag_invoke(json::value_to_tag<minted_wallet>, const json::value& v);
minted_usage_key tag_invoke(json::value_to_tag<minted_usage_key>, const json::value& v);
chain_secured_account tag_invoke(json::value_to_tag<chain_secured_account>, const json::value& v);

namespace detail {
/// Reads page_number, page_size and total of a list answer; returns its `items` array.
const json::array& read_page_header(const json::value& v, page_request& number_and_size, uint64_t& total);
/// Rethrows a bad_response from reading items[i] with the index in front of its message.
[[noreturn]] void rethrow_item_error(size_t index, const Error& e);
}  // namespace detail

template <class T>
page<T> tag_invoke(json::value_to_tag<page<T>>, const json::value& v) {
  page<T> p;
  page_request header;
  const json::array& items = detail::read_page_header(v, header, p.total);
  p.page_number = header.number;
  p.page_size = header.size;
  p.items.reserve(items.size());
  for (size_t i = 0; i < items.size(); ++i) {
    try {
      p.items.push_back(json::value_to<T>(items[i]));
    } catch (const Error& e) {
      detail::rethrow_item_error(i, e);
    }
  }
  return p;
}

template <class T>
void tag_invoke(json::value_from_tag, json::value& v, const page<T>& p) {
  json::array items;
  items.reserve(p.items.size());
  for (const T& item : p.items)
    items.push_back(json::value_from(item));
  json::object& o = v.emplace_object();
  o["items"] = std::move(items);
  o["page_number"] = p.page_number;
  o["page_size"] = p.page_size;
  o["total"] = p.total;
}

}  // namespace enact::api
