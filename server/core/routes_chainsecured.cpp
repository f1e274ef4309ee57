// SPDX-License-Identifier: Apache-2.0
// The ChainSecured endpoints (docs/protocol.md §2 "ChainSecured"): each takes a typed-data envelope
// and its signature, checked by core::check_envelope in the order and with the answers §2 fixes.
// The typed-data limit measures the compact serialization of `typed_data`, as X-Wallet-Auth's does,
// so it bounds what a wallet signed rather than a client's indentation. Minting writes nothing to
// the ledger and is per-IP limited (route::per_ip_limited), since it is unauthenticated.
#include "core/envelope_check.hpp"
#include "core/errors.hpp"
#include "core/key_cache.hpp"
#include "core/route.hpp"
#include "core/schema.hpp"
#include "enact/codec/base64.hpp"
#include "enact/codec/hex.hpp"
#include "enact/address.hpp"
#include "enact/crypto/secp256k1.hpp"
#include "enact/secret.hpp"
#include "enact/eip712/envelope.hpp"
#include "enact/pkp/pkp.hpp"
#include "tee/tee.hpp"

namespace enact::core {
namespace {

namespace s = schema;

/// Largest request body of these endpoints: a 4096-byte envelope, its signature and an address,
/// with room for a pretty-printed body; anything larger is no envelope request.
constexpr size_t kMaxBody = size_t{16} << 10;

/// The envelope's signer, checked for flow `k` on this deployment (docs/protocol.md §2) with what
/// the flow binds; a version 2 nonce is used up here.
result<address> verified_signer(const request_context& c, eip712::envelope::kind k, envelope_binding binding = {}) {
  const json::value& typed_data = c.body.at("typed_data");
  ENACT_TRY(const auto v, check_envelope(c.svc, c.cfg, k, typed_data, json::serialize(typed_data).size(),
                                         c.body.at("signature").as_string(), binding));
  return v.signer;
}

// --- handlers ---------------------------------------------------------------------------------

/// The account a PKP minted for `signer` belongs to (docs/protocol.md §1 "owning account"): the account
/// whose admin wallet `signer` is, or, while it has none, crypto::keccak256(abi.encodePacked(signer)),
/// the hash its account will have when the wallet creates it on-chain.
result<pkp::account_hash> owning_account_of(const request_context& c, const address& signer) {
  auto account = c.svc.ledger->account_by_admin(signer);
  if (account)
    return account->hash;
  if (account.code() != ledger_errc::unknown_account)
    return account.err();
  return pkp::canonical_account_hash(signer);
}

result<json::value> create_wallet_with_signature(const request_context& c) {
  ENACT_TRY(const address signer, verified_signer(c, eip712::envelope::kind::create_wallet));
  ENACT_TRY(const pkp::account_hash owner, owning_account_of(c, signer));
  // docs/protocol.md §1: signature-minted wallets sit at a random 32-byte path, under the signer's account.
  const pkp::derivation_path path = pkp::random_path();
  ENACT_TRY(const address wallet, c.svc.tee->wallet_address(owner, path));
  // Derived from (the signer's account, the path) here, so the key is that account's by
  // construction: its Ed25519 key's Solana address is named as for every other wallet answer.
  ENACT_TRY(const auto ed25519, c.svc.tee->ed25519_public_key(owner, path));
  std::string solana = pkp::solana_address(ed25519);
  // Remembered (core/key_cache.hpp): the wallet's later listings and runs under `owner` pay a lookup.
  shared_key_cache().remember(*c.svc.tee, owner, path, wallet, solana);
  return json::value_from(api::minted_wallet{wallet, wallet, path, std::move(solana)});
}

result<json::value> add_usage_api_key_with_signature(const request_context& c) {
  ENACT_TRY(const address signer, verified_signer(c, eip712::envelope::kind::add_usage_api_key));
  ENACT_TRY(const pkp::account_hash owner, owning_account_of(c, signer));
  const pkp::derivation_path path = pkp::random_path();
  // The admin wallet registers the key's address (registerWalletDerivation) and the hash of its
  // base64 text (setUsageApiKey) on-chain. The key is derived in the usage-key domain, never the
  // PKP one: that registered wallet fails the owning-account check, so the key that leaves here
  // never signs as a PKP (docs/protocol.md §1 "usage key by signature").
  ENACT_TRY(const Secret key, c.svc.tee->usage_key(owner, path));
  ENACT_TRY(const auto pub, crypto::secp256k1::public_key_of(key));
  std::string text = codec::base64::encode(key.view());
  json::object out{{"usage_api_key", text},
                   {"wallet_address", to_checksum_address(crypto::secp256k1::to_address(pub))},
                   {"derivation_path", codec::hex::encode_prefixed(path)}};
  // The copy in `out` is wiped by mount once sent (wipe_secrets); this one now.
  detail::secure_wipe(text.data(), text.size());
  return json::value(std::move(out));  // moved, so no unwiped copy of the key is left behind
}

result<json::value> convert_to_chain_secured_account(const request_context& c) {
  ENACT_TRY(const address new_admin,
            api::read_address(c.body.at("new_admin_wallet_address"), "new_admin_wallet_address"));
  const auto& account = c.who->account;
  // Core-api spec, States: the signer must be the new admin (an EOA; no ERC-1271); version 2 also
  // names this account, so a victim's envelope converts no account but the one it names.
  ENACT_TRY_VOID(verified_signer(c, eip712::envelope::kind::convert_account, {new_admin, account.hash, std::nullopt}));
  const auto already = [&] {
    return fail(api_errc::conflict, "account " + codec::hex::encode_prefixed(account.hash) +
                                        " is ChainSecured already; there is no way back to API "
                                        "mode");
  };
  if (!account.managed)
    return already();
  if (auto r = c.svc.ledger->convert_to_chain_secured(relay(c), account.hash, new_admin); !r) {
    // A conversion that won a race with this one: the registry refuses the relay (the account
    // is unmanaged now) before it reaches its AlreadyUnmanaged check.
    if (r.code() == ledger_errc::already_unmanaged || r.code() == ledger_errc::relay_not_allowed)
      return already();
    return r.err();
  }
  return json::value_from(api::chain_secured_account{new_admin, account.hash});
}

// --- schemas ----------------------------------------------------------------------------------

/// The envelope as OpenAPI shows it. Below the top level the schema documents only: every check
/// of the envelope is eip712::envelope::verify's, so that each rejection keeps its own code and order (a
/// schema type on `types` would turn a non-canonical block into invalid_request).
json::object typed_data_schema(eip712::envelope::kind k) {
  namespace env = eip712::envelope;
  const std::string primary(env::primary_type_name(k));
  env::message_v2 m;
  m.signer = parse_address("0x7E5F4552091A69125d5DfCb7b8C2659029395Bdf").value();
  m.issued_at = 1735689600;
  m.nonce.fill(0x11);
  m.account.fill(0x22);
  json::object example =
      env::build(k, env::deployment{31337, parse_address("0x5FbDB2315678afecb367f032d93F642f64180aa3").value()}, m);
  const std::string members = k == env::kind::convert_account
                                  ? "address address, account bytes32, issuedAt uint256, nonce bytes32"
                                  : "address address, issuedAt uint256, nonce bytes32";
  return json::object{
      {"type", "object"},
      {"description", "EIP-712 typed data as eth_signTypedData_v4 signs it, primaryType " + primary +
                          ", version 2 (docs/protocol.md §2). At most 4096 bytes in compact JSON serialization."},
      {"properties",
       json::object{
           {"types", json::object{{"description",
                                   "exactly EIP712Domain: [name string, version string, chainId uint256, "
                                   "verifyingContract address] and " +
                                       primary + ": [" + members + "], in this order" +
                                       (k != env::kind::convert_account
                                            ? " (or version 1: EIP712Domain without verifyingContract, " + primary +
                                                  ": [address address, issuedAt uint256])"
                                            : std::string())}}},
           {"primaryType", json::object{{"description", "the flow; this endpoint's only"},
                                        {"enum", json::array{json::string(primary)}}}},
           {"domain", json::object{{"description",
                                    "name \"Svc ChainSecured\", version \"2\", chainId and "
                                    "verifyingContract: chain_id and contract_address of "
                                    "/get_node_chain_config"}}},
           {"message", json::object{{"description", k == env::kind::convert_account
                                                        ? "address: the new admin wallet; account: the hash of the "
                                                          "account converted (api_key_hash); issuedAt: unix seconds, "
                                                          "within now ± 300; nonce: 32 random bytes, single-use"
                                                        : "address: the signing wallet; issuedAt: unix seconds, within "
                                                          "now ± 300; nonce: 32 random bytes, single-use"}}}}},
      {"examples", json::array{std::move(example)}}};
}

json::object signature_schema() {
  return json::object{{"type", "string"},
                      {"description", "0x + 130 hex: r ‖ s ‖ v (v 27/28 or 0/1)"},
                      {"pattern", "^0x[0-9a-fA-F]{130}$"}};
}

/// Error responses these routes add to the defaults (OpenAPI only).
json::object envelope_errors() {
  return json::object{{"400",
                       "invalid_request: malformed JSON, missing or unknown field, bad message values; "
                       "typed_data_invalid: typed data over 4096 bytes, types / primaryType / domain not "
                       "canonical for this endpoint, or a version this endpoint refuses; chain_id_mismatch: "
                       "domain.chainId or domain.verifyingContract is not this deployment's"},
                      {"401",
                       "signature_expired: issuedAt outside now ± 300 s, or the nonce was used before; "
                       "signature_invalid: malformed signature, or the signer is not message.address"},
                      {"413", "payload_too_large: body over 16 KiB"}};
}

route envelope_route(std::string_view path, std::string_view operation_id, std::string_view summary,
                     eip712::envelope::kind k, json::object response, handler h) {
  route r;
  r.method = "POST";
  r.path = path;
  r.operation_id = operation_id;
  r.tag = "chainsecured";
  r.summary = summary;
  r.auth = auth_kind::none;
  r.request = s::object({{"typed_data", typed_data_schema(k), true}, {"signature", signature_schema(), true}});
  r.response = std::move(response);
  r.handle = std::move(h);
  r.max_body = kMaxBody;
  r.per_ip_limited = true;
  r.errors = envelope_errors();
  return r;
}

}  // namespace

void add_chainsecured_routes(std::vector<route>& out) {
  out.push_back(
      envelope_route("/create_wallet_with_signature", "createWalletWithSignature",
                     "Mint a PKP wallet at a random derivation path for a wallet-signed CreateWallet envelope. "
                     "Nothing is registered: the wallet calls registerWalletDerivation on-chain.",
                     eip712::envelope::kind::create_wallet,
                     s::object({{"pkp_id", s::address("the wallet address"), true},
                                {"wallet_address", s::address(), true},
                                {"derivation_path", s::hash("32 random bytes"), true},
                                {"solana_address", s::string("base58 Solana address of the PKP's Ed25519 key"), true}}),
                     create_wallet_with_signature));
  out.push_back(envelope_route("/add_usage_api_key_with_signature", "addUsageApiKeyWithSignature",
                               "Mint a usage key (the PKP signing key at a random path, base64; shown once) for a "
                               "wallet-signed AddUsageApiKey envelope. Nothing is registered: the admin wallet calls "
                               "registerWalletDerivation and setUsageApiKey on-chain.",
                               eip712::envelope::kind::add_usage_api_key,
                               s::object({{"usage_api_key", s::string("the usage key (base64); shown once", 64), true},
                                          {"wallet_address", s::address("address of the key"), true},
                                          {"derivation_path", s::hash("32 random bytes"), true}}),
                               add_usage_api_key_with_signature));

  route convert =
      envelope_route("/convert_to_chain_secured_account", "convertToChainSecuredAccount",
                     "Convert the account to ChainSecured mode (account key only): the wallet that signed the "
                     "ConvertAccount envelope becomes the admin, the master key stops authorizing writes. "
                     "One-way.",
                     eip712::envelope::kind::convert_account,
                     s::object({{"new_admin_wallet_address", s::address("the new admin (EIP-55)"), true},
                                {"api_key_hash", s::hash("the account id, unchanged"), true}}),
                     convert_to_chain_secured_account);
  convert.auth = auth_kind::owner;
  // Not `writes`: the master key of a converted account reaches the handler, which answers 409
  // conflict (converting twice) rather than 401.
  convert.writes = false;
  convert.surcharged = true;       // a relayed write all the same
  convert.per_ip_limited = false;  // authenticated: the per-key limiter applies
  convert.request =
      s::object({{"new_admin_wallet_address", s::address("the new admin wallet; must be the envelope's signer"), true},
                 {"typed_data", typed_data_schema(eip712::envelope::kind::convert_account), true},
                 {"signature", signature_schema(), true}});
  convert.errors["401"] =
      "unauthenticated: credential missing or unknown; signature_expired: issuedAt outside now ± "
      "300 s, or the nonce was used before; signature_invalid: malformed signature, the signer is not "
      "message.address and new_admin_wallet_address, or message.account is not this account";
  convert.errors["403"] = "forbidden: a usage key (the account key only may convert)";
  convert.errors["409"] =
      "conflict: the account is ChainSecured already, or the new admin administers another "
      "account";
  out.push_back(std::move(convert));
}

}  // namespace enact::core
