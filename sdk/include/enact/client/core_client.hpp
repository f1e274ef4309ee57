// SPDX-License-Identifier: Apache-2.0
// `enact::client::core_client`: the typed client of the core service (docs/protocol.md §2, /core/v1) —
// accounts and usage keys, groups, wallets (PKPs), actions, the public utility endpoints,
// billing and the wallet-signed ChainSecured endpoints. One method per endpoint, named after it;
// each sends one request (GETs may be retried, see options.hpp) and returns the decoded answer or
// throws `enact::api_error`.
//
// Credentials: the API key (account key or usage key) is a `Secret` holding the key's base64 text
// exactly as issued, sent as `X-Api-Key`. Billing calls may instead carry a wallet proof
// (`X-Wallet-Auth`, primaryType BillingAuth); such a call sends no API key. Key values in requests
// and answers stay in Secrets, and neither the API key nor any key value a request carried ever
// appears in an exception message.
//
// Wallet proofs are envelopes of version 2 (docs/protocol.md §2 "Envelope version 2"): the
// overloads taking a wallet key sign one for the server's deployment, the chain id and registry
// of its get_node_chain_config (fetched once per client and kept), with a fresh nonce for every
// call, or bound to the one request sent for billing.
//
// Errors: this layer throws. Every method reports a failure as `enact::api_error` (a server error,
// a transport failure, or an answer that is not what docs/protocol.md promises: bad_response); reading the
// answers goes through the throwing `value_to` conversions of enact/api/core.hpp, whose
// enact::Error becomes an api_error carrying the answer's status and request id. Nothing is
// reported through `result`.
//
// The HTTP stack (cpp-httplib over OpenSSL) is private to the compiled library. A client is not
// for concurrent use: give each thread its own.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "enact/bytes.hpp"
#include "enact/client/api_error.hpp"
#include "enact/client/core_types.hpp"
#include "enact/client/options.hpp"
#include "enact/secret.hpp"
#include "enact/eip712/envelope.hpp"

namespace enact::client {

class core_client {
 public:
  /// Throws api_error (invalid_request, status 0) when `options.base_url` is not an http(s) URL
  /// of the accepted form. An empty `api_key` sends no credential (public endpoints, new_account).
  explicit core_client(client_options options, Secret api_key = {});
  ~core_client();
  core_client(core_client&&) noexcept;
  core_client& operator=(core_client&&) noexcept;
  core_client(const core_client&) = delete;
  core_client& operator=(const core_client&) = delete;

  /// Replaces the credential (e.g. with the key new_account just returned).
  void set_api_key(Secret api_key);
  [[nodiscard]] bool has_api_key() const noexcept;

  // --- accounts and keys (auth: none / key / owner) ---------------------------------------------
  [[nodiscard]] new_account_response new_account(const new_account_request& request);
  /// The account-exists check: who the credential belongs to.
  [[nodiscard]] account_info account();
  [[nodiscard]] new_usage_key add_usage_api_key(const usage_key_spec& spec);
  [[nodiscard]] page<usage_key_info> list_api_keys(page_request p = {});
  /// Replaces every permission of the key (omitted ones reset); returns the key's hash.
  hash256 update_usage_api_key(const Secret& usage_api_key, const usage_key_spec& spec);
  hash256 update_usage_api_key_metadata(const Secret& usage_api_key, std::string_view name,
                                        std::string_view description);
  hash256 remove_usage_api_key(const Secret& usage_api_key);

  // --- groups -----------------------------------------------------------------------------------
  group add_group(const new_group& g);
  [[nodiscard]] page<group> list_groups(page_request p = {});
  /// One group; api_error not_found when the account has no group with that id.
  [[nodiscard]] group get_group(uint64_t group_id);
  /// Replaces name, description and both sets of `g.group_id`.
  group update_group(const group& g);
  /// Returns the removed group's id.
  uint64_t remove_group(uint64_t group_id);

  // --- wallets ----------------------------------------------------------------------------------
  wallet create_wallet(const new_wallet& w);
  [[nodiscard]] page<wallet> list_wallets(page_request p = {});
  [[nodiscard]] page<wallet> list_wallets_in_group(uint64_t group_id, page_request p = {});
  group add_pkp_to_group(uint64_t group_id, const address& pkp_id);
  group remove_pkp_from_group(uint64_t group_id, const address& pkp_id);

  // --- actions ----------------------------------------------------------------------------------
  action add_action(const new_action& a);
  group add_action_to_group(uint64_t group_id, std::string_view action_ipfs_cid);
  group remove_action_from_group(uint64_t group_id, const hash256& hashed_cid);
  action update_action_metadata(const action_metadata& a);
  /// Returns the deleted action's hashed CID.
  hash256 delete_action(const hash256& hashed_cid);
  /// With a group id: the actions of that group; without: all actions of the account.
  [[nodiscard]] page<action> list_actions(std::optional<uint64_t> group_id = std::nullopt, page_request p = {});
  /// Stores the code in the server's content store (so it runs without a gateway).
  uploaded_action upload_action(std::string_view code);
  /// The code of an action of the account, read back from the server's content store, for the
  /// CID exactly as registered. A usage key reads the actions it may run or manage; any other
  /// CID is not_found (docs/protocol.md §2 /get_action_code).
  [[nodiscard]] action_code get_action_code(std::string_view action_ipfs_cid);
  /// Runs an action. An action that throws, times out or breaks a limit is an api_error with
  /// code action_failed whose details() carry `kind`, `stack` and `logs`. Never retried.
  run_action_result run_action(const run_action_request& request);
  /// The same with an `Idempotency-Key` (docs/protocol.md §0 "Idempotency"): the account's same
  /// request under the same key within 24 hours answers the first run's result again instead of
  /// running and charging a second time. The key is 1 to 255 printable ASCII characters without
  /// spaces; another key is an api_error with code invalid_request, before anything is sent.
  run_action_result run_action(const run_action_request& request, std::string_view idempotency_key);

  // --- public utility (no auth) -----------------------------------------------------------------
  /// Asks the server each time, and keeps the answer as the deployment wallet proofs are signed for.
  [[nodiscard]] chain_config get_node_chain_config();
  /// The deployment version 2 envelopes for this server name: chain_id and contract_address of
  /// get_node_chain_config, asked on first use and kept for the client's lifetime.
  [[nodiscard]] eip712::envelope::deployment deployment();
  [[nodiscard]] std::vector<address> get_api_payers();
  [[nodiscard]] address get_admin_api_payer();
  /// The CID the server computes for `code` (POST /get_svc_action_ipfs_id).
  [[nodiscard]] std::string get_svc_action_ipfs_id(std::string_view code);
  /// GET /billing/stripe_config.
  [[nodiscard]] stripe_config get_stripe_config();

  // --- billing: with the API key, or with the admin wallet ----------------------------------------
  // The overloads taking `admin_wallet_key` (the account's admin wallet) send no API key: each
  // signs a version 2 BillingAuth bound to the request exactly as sent (method, target with its
  // query, body), issued now; a GET retried by the transport carries the same proof, which stays
  // valid for 300 s. The overloads taking a `signed_envelope` send it as given: a version 2
  // BillingAuth authorizes one request only (its method, target and body hash), so it must have
  // been signed for exactly the request the overload sends (the target is the base URL's path
  // prefix followed by "/core/v1/billing/…" and the query these methods build); version 1 proofs
  // are refused unless the server's operator accepts them.
  [[nodiscard]] credit_balance balance();
  [[nodiscard]] credit_balance balance(const Secret& admin_wallet_key);
  [[nodiscard]] credit_balance balance(const eip712::envelope::signed_envelope& wallet_proof);
  /// `amount_cents` at least 500 (the server refuses less: invalid_request).
  payment_intent create_payment_intent(uint64_t amount_cents);
  payment_intent create_payment_intent(uint64_t amount_cents, const Secret& admin_wallet_key);
  payment_intent create_payment_intent(uint64_t amount_cents, const eip712::envelope::signed_envelope& wallet_proof);
  /// Credits the account once (a second confirm: conflict); returns the new balance in credits.
  uint64_t confirm_payment(std::string_view payment_intent_id);
  uint64_t confirm_payment(std::string_view payment_intent_id, const Secret& admin_wallet_key);
  uint64_t confirm_payment(std::string_view payment_intent_id, const eip712::envelope::signed_envelope& wallet_proof);
  /// GET /billing/usage: the account's settled charges (runs and write surcharges), newest first.
  [[nodiscard]] page<usage_charge> billing_usage(page_request p = {});
  [[nodiscard]] page<usage_charge> billing_usage(const Secret& admin_wallet_key, page_request p = {});
  [[nodiscard]] page<usage_charge> billing_usage(const eip712::envelope::signed_envelope& wallet_proof,
                                                 page_request p = {});
  /// GET /billing/payments: the account's payment intents, credited or open, newest first.
  [[nodiscard]] page<payment_record> billing_payments(page_request p = {});
  [[nodiscard]] page<payment_record> billing_payments(const Secret& admin_wallet_key, page_request p = {});
  [[nodiscard]] page<payment_record> billing_payments(const eip712::envelope::signed_envelope& wallet_proof,
                                                      page_request p = {});

  // --- ChainSecured: wallet-signed envelopes (docs/protocol.md §2) ----------------------------------------
  // Each takes an envelope signed by the wallet (eip712::envelope::sign_v2, or eth_signTypedData_v4
  // in a browser wallet) for the endpoint's primaryType, issued within 300 s of the server's clock
  // for the server's deployment. A version 2 nonce is single-use: an envelope sent twice (a retry
  // included) is refused the second time (signature_expired), so sign a new one for each call.
  // The overloads taking a key sign a version 2 envelope issued now with a fresh nonce for the
  // server's deployment (deployment()); given a `chain_id` too, they first check it is the
  // server's and throw api_error chain_id_mismatch (status 0, nothing sent) when it is not, for
  // callers that know which chain they mean (the one their registry transactions go to). The key
  // never leaves the process: only the envelope and its signature are sent.

  /// Mints a PKP at a random derivation path (auth none; primaryType CreateWallet). Nothing is
  /// registered: call registerWalletDerivation on-chain with the answer.
  minted_wallet create_wallet_with_signature(const eip712::envelope::signed_envelope& proof);
  minted_wallet create_wallet_with_signature(const Secret& wallet_key);
  minted_wallet create_wallet_with_signature(const Secret& wallet_key, uint64_t chain_id);
  /// Mints a usage key (auth none; primaryType AddUsageApiKey); its value is returned once.
  /// Register it on-chain (registerWalletDerivation, setUsageApiKey) before it authenticates.
  minted_usage_key add_usage_api_key_with_signature(const eip712::envelope::signed_envelope& proof);
  minted_usage_key add_usage_api_key_with_signature(const Secret& wallet_key);
  minted_usage_key add_usage_api_key_with_signature(const Secret& wallet_key, uint64_t chain_id);
  /// Converts the account of this client's account key to ChainSecured mode (primaryType
  /// ConvertAccount, signed by `new_admin`; a version 2 envelope names the account converted:
  /// keccak256 of the account key's text). One-way: afterwards the account key no longer
  /// authorizes writes (unauthenticated), and a second conversion is a conflict.
  chain_secured_account convert_to_chain_secured_account(const address& new_admin,
                                                         const eip712::envelope::signed_envelope& proof);
  /// The new admin is the address of `new_admin_key`, which signs the envelope for this client's
  /// account key (none set: invalid_request, nothing sent).
  chain_secured_account convert_to_chain_secured_account(const Secret& new_admin_key);
  chain_secured_account convert_to_chain_secured_account(const Secret& new_admin_key, uint64_t chain_id);

  // --- any endpoint, as JSON text ---------------------------------------------------------------

  /// What `call` returns. `body` may hold key values (new_account answers one): it is wiped when
  /// the answer is destroyed.
  struct raw_answer {
    int status = 0;
    std::string request_id;  // the answer's X-Request-Id
    std::string body;        // the answer's JSON, serialized
    raw_answer() = default;
    raw_answer(raw_answer&&) noexcept = default;
    raw_answer& operator=(raw_answer&&) noexcept = default;
    raw_answer(const raw_answer&) = delete;
    raw_answer& operator=(const raw_answer&) = delete;
    ~raw_answer();
  };
  /// One request to `target` below the base URL (a path with its query, "/core/v1/account"), sent
  /// with this client's API key when it has one: for callers that speak the JSON themselves (the
  /// C binding). `method` is "GET" (no body) or "POST" (`json_body`, "{}" when empty), else
  /// invalid_request with status 0. A POST is never retried. Throws api_error like every method.
  raw_answer call(std::string_view method, std::string_view target, std::string_view json_body = {});
  /// The same request sent with no API key but a version 2 BillingAuth of `admin_wallet_key` bound
  /// to it (the billing endpoints' wallet credential, docs/protocol.md §2).
  raw_answer call(std::string_view method, std::string_view target, std::string_view json_body,
                  const Secret& admin_wallet_key);

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace enact::client
