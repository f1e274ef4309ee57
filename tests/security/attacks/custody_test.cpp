// SPDX-License-Identifier: Apache-2.0
// Attacks on custody (docs/protocol.md §1 "owning account", "server keys"; docs/security.md "Threat model"):
// a stranger with an account of its own and the public state of the registry tries to make the
// server sign, encrypt or decrypt with a key that is not its account's.
//
//   1. Copy a victim's (wallet, derivation_path) — public through the registry's views and logs —
//      into the attacker's own ChainSecured account on /rpc, list it in a group with the
//      attacker's code, and call every capability with it.
//   2. The same with the server's relayer: register the api_payer's address at its former
//      derivation path crypto::keccak256("enact/api-payer/0").
//   3. The same with the trigger store's sealing key at its former path.
//   4. Take the secret of a usage key minted by /add_usage_api_key_with_signature, whose wallet
//      the documented flow registers in the account, and use the wallet as a PKP: the secret must
//      not be the key the server signs with (docs/protocol.md §1 "usage key by signature").
//
// Each attack is made with nothing but HTTP and the SDK's registry client, as an outsider would.
// The action catches each refusal and reports it, so the test sees that every capability was
// refused (and no signature left the server), then runs the same calls uncaught for the 422.
#include <doctest/doctest.h>

#include <boost/json.hpp>

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "enact/chain/registry_client.hpp"
#include "enact/chain/rpc.hpp"
#include "enact/codec/base64.hpp"
#include "enact/client/core_client.hpp"
#include "enact/crypto/keccak.hpp"
#include "enact/eip712/envelope.hpp"
#include "enact/pkp/pkp.hpp"
#include "steps.hpp"

namespace enact::itest {
namespace {

chain::registry_client registry_of(const chain_env& e, const Secret& key) {
  chain::rpc_options o;
  o.url = e.rpc_url;
  auto rpc = std::make_shared<const chain::rpc_client>(chain::rpc_client::create(o).value());
  chain::sender_options so;
  so.poll_interval = std::chrono::milliseconds(20);
  return chain::registry_client::create(rpc, e.registry, key.clone(), so).value();
}

Secret wallet_key(std::string_view label) {
  const hash256 h = crypto::keccak256("custody attack wallet " + std::string(label));
  return Secret(bytes_view(h));
}

address address_of_key(const Secret& key) {
  return crypto::secp256k1::to_address(crypto::secp256k1::public_key_of(key).value());
}

/// Tries every capability with params.pkp and reports what each answered; a capability that
/// answers (rather than throws) leaves its result in `got`.
constexpr std::string_view kProbe = R"JS(
var tries = {
  getAddress: function () { return Enact.getAddress({pkpId: params.pkp}); },
  signEcdsa: function () {
    return Enact.signEcdsa({pkpId: params.pkp, name: "stolen",
      digest: "0x1111111111111111111111111111111111111111111111111111111111111111"});
  },
  signMessage: function () { return Enact.signMessage({pkpId: params.pkp, message: "hi"}); },
  encrypt: function () { return Enact.encrypt({pkpId: params.pkp, plaintext: "x"}); },
  decrypt: function () { return Enact.decrypt({pkpId: params.pkp, ciphertext: params.sealed}); },
  signEd25519: function () { return Enact.signEd25519({pkpId: params.pkp, message: "hi"}); },
  getPublicKey: function () { return Enact.getPublicKey({pkpId: params.pkp, scheme: "ed25519"}); },
  signTypedData: function () {
    return Enact.signTypedData({pkpId: params.pkp, name: "stolen-typed", typedData: {
      types: {EIP712Domain: [{name: "name", type: "string"}], Mail: [{name: "body", type: "string"}]},
      primaryType: "Mail", domain: {name: "d"}, message: {body: "b"}}});
  },
  signTransaction: function () {
    return Enact.signTransaction({pkpId: params.pkp, tx: {chainId: 1, nonce: 0, maxPriorityFeePerGas: 1,
      maxFeePerGas: 2, gasLimit: 21000, to: "0x000000000000000000000000000000000000dEaD", value: 1}});
  }
};
var refused = {}, got = {};
for (var k in tries) {
  try { got[k] = tries[k](); } catch (e) { refused[k] = String(e.message); }
}
Enact.setResponse({refused: refused, got: got});
)JS";

/// The same calls, uncaught: the first one ends the run.
constexpr std::string_view kUncaught = R"JS(
Enact.setResponse(Enact.signEcdsa({pkpId: params.pkp, name: "stolen",
  digest: "0x2222222222222222222222222222222222222222222222222222222222222222"}));
)JS";

/// An attacker: a wallet with its own ChainSecured account on /rpc, a usage key that may execute
/// in its group 1, and credits.
struct attacker {
  Secret wallet;
  hash256 account{};
  std::string usage_key;
  chain::registry_client registry;
  [[nodiscard]] httplib::Headers auth() const { return api_key(usage_key); }
};

attacker make_attacker(server_process& srv, const chain_env& env, std::string_view label) {
  Secret w = wallet_key(label);
  chain::registry_client reg = registry_of(env, w);
  const chain::account_created created = reg.new_account("attacker").value();
  // The usage key: any 32 random-looking bytes in base64; only its hash goes on-chain.
  const hash256 seed = crypto::keccak256("usage key of " + std::string(label));
  const std::string key = codec::base64::encode(bytes_view(seed));
  scopes::permission_set perms;
  perms.execute_in_groups = {1};
  REQUIRE(reg.set_usage_api_key(created.account_hash, crypto::keccak256(std::string_view(key)), u256{}, u256{},
                                "runner", "", perms)
              .has_value());
  http_client c = srv.client();
  buy_credits(c, wallet_auth(env, w), 500);
  return attacker{std::move(w), created.account_hash, key, std::move(reg)};
}

/// Registers (`wallet`, `path`) in the attacker's account, puts it with the probe and the
/// uncaught action in group 1, and returns the CIDs of both.
std::pair<std::string, std::string> arm(http_client& c, attacker& a, const address& wallet, const hash256& path) {
  REQUIRE(a.registry.register_wallet_derivation(a.account, wallet, path, "copied").has_value());
  const response probe = c.post("/upload_action", json::object{{"code", kProbe}}, a.auth());
  ITEST_REQUIRE_STATUS(probe, 200);
  const response uncaught = c.post("/upload_action", json::object{{"code", kUncaught}}, a.auth());
  ITEST_REQUIRE_STATUS(uncaught, 200);
  const hash256 h1 = codec::hex::decode_fixed<32>(s_of(probe.body, "hashed_cid")).value();
  const hash256 h2 = codec::hex::decode_fixed<32>(s_of(uncaught.body, "hashed_cid")).value();
  const auto groups = a.registry.list_groups(a.account).value();
  if (groups.items.empty()) {
    REQUIRE(a.registry.add_group(a.account, "loot", "", {wallet}, {h1, h2}).has_value());
  } else {
    REQUIRE(a.registry.add_pkp_to_group(a.account, 1, wallet).has_value());
  }
  return {s_of(probe.body, "action_ipfs_cid"), s_of(uncaught.body, "action_ipfs_cid")};
}

/// Runs the probe and the uncaught action with `pkp`; every capability must be refused with a
/// message naming the PKP, and nothing signed.
void expect_refused(server_process& srv, http_client& c, const attacker& a,
                    const std::pair<std::string, std::string>& cids, const std::string& pkp,
                    const std::string& sealed = "0x00", std::string_view why = "is not a key of this account") {
  INFO("PKP " << pkp);
  const response r = c.post(
      "/run_action",
      json::object{
          {"action_ipfs_cid", cids.first}, {"pkp_id", pkp}, {"params", json::object{{"pkp", pkp}, {"sealed", sealed}}}},
      a.auth());
  ITEST_REQUIRE_STATUS(r, 200);
  const auto& out = r.obj().at("response").as_object();
  CHECK(out.at("got").as_object().empty());
  const auto& refused = out.at("refused").as_object();
  for (const char* cap : {"getAddress", "signEcdsa", "signMessage", "encrypt", "decrypt", "signEd25519", "getPublicKey",
                          "signTypedData", "signTransaction"}) {
    INFO(cap);
    REQUIRE(refused.contains(cap));
    const std::string msg(refused.at(cap).as_string());
    CHECK_MESSAGE(msg.find(why) != std::string::npos, msg);
    CHECK(msg.find(pkp) != std::string::npos);
  }
  CHECK(r.obj().at("signatures").as_object().empty());

  const response u =
      c.post("/run_action",
             json::object{{"action_ipfs_cid", cids.second}, {"pkp_id", pkp}, {"params", json::object{{"pkp", pkp}}}},
             a.auth());
  ITEST_CHECK_STATUS(u, 422);
  CHECK(u.error_code() == "action_failed");
  CHECK_MESSAGE(u.error_message().find(why) != std::string::npos, u.error_message());
  CHECK(u.text.find("\"signature\"") == std::string::npos);
  (void)srv;
}

}  // namespace

TEST_CASE("a usage key minted by signature is never a PKP's key") {
  server_process srv({"--dev"});
  const chain_env env = env_of(srv);
  http_client c = srv.client();
  attacker a = make_attacker(srv, env, "usage key holder");

  // The documented flow (docs/chainsecured.md): mint by signature, then the admin wallet registers
  // the key's wallet at the returned path and sets the key's hash.
  const auto env712 = eip712::envelope::sign(eip712::envelope::kind::add_usage_api_key, env.chain_id, a.wallet,
                                             static_cast<uint64_t>(unix_now()))
                          .value();
  const response minted = c.post("/add_usage_api_key_with_signature",
                                 json::object{{"typed_data", env712.typed_data}, {"signature", env712.signature}});
  ITEST_REQUIRE_STATUS(minted, 200);
  const std::string secret_text = s_of(minted.body, "usage_api_key");
  const std::string wallet = s_of(minted.body, "wallet_address");
  const hash256 path = codec::hex::decode_fixed<32>(s_of(minted.body, "derivation_path")).value();
  const Secret secret(codec::base64::decode(secret_text, "usage key").value());
  REQUIRE(to_checksum_address(address_of_key(secret)) == wallet);
  scopes::permission_set perms;
  perms.execute_in_groups = {1};
  REQUIRE(a.registry
              .set_usage_api_key(a.account, crypto::keccak256(std::string_view(secret_text)), u256{}, u256{}, "minted",
                                 "", perms)
              .has_value());
  const auto cids = arm(c, a, parse_address(wallet).value(), path);

  // The key authenticates as the usage key it is...
  const response me = c.get("/account", api_key(secret_text));
  ITEST_REQUIRE_STATUS(me, 200);
  CHECK(s_of(me.obj().at("key"), "kind") == "usage");
  // ...but its wallet never signs, encrypts or decrypts as a PKP, and the refusal says why.
  expect_refused(srv, c, a, cids, wallet, "0x00", "is the wallet of a usage key");
  // Nor is the secret any PKP key of the account at that path.
  const Secret root = [&] {
    std::ifstream f(srv.data_dir() + "/tee-root.key", std::ios::binary);
    std::string b((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    REQUIRE(b.size() == 32);
    return Secret(as_bytes(b));
  }();
  CHECK(!(secret == pkp::signing_key(root, a.account, path).value()));
  CHECK(to_checksum_address(pkp::wallet_address(root, a.account, path).value()) != wallet);

  // A usage key minted by the rule before the usage-key domain: the PKP signing key of its path,
  // registered the same way. The data directory of an upgraded server holds such keys; their
  // wallets pass the owning-account check, and are refused because the key is a usage key.
  const hash256 old_path = crypto::keccak256(std::string_view("a path minted by the earlier rule"));
  const Secret old_key = pkp::signing_key(root, a.account, old_path).value();
  const std::string old_text = codec::base64::encode(old_key.view());
  const address old_wallet = address_of_key(old_key);
  REQUIRE(a.registry
              .set_usage_api_key(a.account, crypto::keccak256(std::string_view(old_text)), u256{}, u256{},
                                 "minted before", "", perms)
              .has_value());
  REQUIRE(a.registry.register_wallet_derivation(a.account, old_wallet, old_path, "old usage key").has_value());
  REQUIRE(a.registry.add_pkp_to_group(a.account, 1, old_wallet).has_value());
  expect_refused(srv, c, a, cids, to_checksum_address(old_wallet), "0x00", "is the wallet of a usage key");

  // The wallet listing names both as usage-key wallets (docs/protocol.md §2 "Wallet"), and a PKP
  // created by the account as none: the dashboard and the CLI label them from this field.
  const hash256 pkp_path = crypto::keccak256(std::string_view("a PKP of the account"));
  const std::string pkp = to_checksum_address(pkp::wallet_address(root, a.account, pkp_path).value());
  REQUIRE(a.registry.register_wallet_derivation(a.account, parse_address(pkp).value(), pkp_path, "a PKP").has_value());
  const response listed = c.get("/list_wallets?page_size=100", a.auth());
  ITEST_REQUIRE_STATUS(listed, 200);
  std::map<std::string, bool> marked;
  for (const auto& item : listed.obj().at("items").as_array())
    marked[s_of(item, "pkp_id")] = item.as_object().at("usage_key_wallet").as_bool();
  REQUIRE(marked.contains(wallet));
  REQUIRE(marked.contains(to_checksum_address(old_wallet)));
  REQUIRE(marked.contains(pkp));
  CHECK(marked.at(wallet));
  CHECK(marked.at(to_checksum_address(old_wallet)));
  CHECK_FALSE(marked.at(pkp));
  CHECK(srv.stop().clean());
}

TEST_CASE("a victim's PKP copied into another account never signs there") {
  server_process srv({"--dev"});
  const chain_env env = env_of(srv);
  http_client c = srv.client();

  // The victim: an API-mode account with a wallet; its (wallet, path) is public.
  const account_keys victim = create_account(c, "victim");
  const response vw = c.post("/create_wallet", json::object{{"name", "treasury"}}, victim.auth());
  ITEST_REQUIRE_STATUS(vw, 200);
  const std::string victim_pkp = s_of(vw.body, "pkp_id");
  const hash256 victim_path = codec::hex::decode_fixed<32>(s_of(vw.body, "derivation_path")).value();
  // The victim's own use of it works, and gives a ciphertext to try to open.
  buy_credits(c, victim.auth(), 500);
  const std::string seal_code =
      "Enact.setResponse(Enact.encrypt({pkpId: params.pkp, plaintext: \"victim's secret\"}));";
  const response g =
      c.post("/add_group",
             json::object{{"name", "own"},
                          {"pkp_ids_permitted", json::array{json::string(victim_pkp)}},
                          {"cid_hashes_permitted", json::array{json::string(hashed_cid_hex(cid_of_code(seal_code)))}}},
             victim.auth());
  ITEST_REQUIRE_STATUS(g, 200);
  const response sealed =
      c.post("/run_action",
             json::object{{"code", seal_code}, {"pkp_id", victim_pkp}, {"params", json::object{{"pkp", victim_pkp}}}},
             victim.auth());
  ITEST_REQUIRE_STATUS(sealed, 200);
  const std::string victim_ciphertext(sealed.obj().at("response").as_string());

  // The attacker copies the pair into its own account and tries everything with it.
  attacker a = make_attacker(srv, env, "pkp thief");
  const auto cids = arm(c, a, parse_address(victim_pkp).value(), victim_path);
  expect_refused(srv, c, a, cids, victim_pkp, victim_ciphertext);
  // Nor does any wallet answer name its key for the attacker (docs/protocol.md §2 "solana_address"):
  // the copied wallet is listed with null, while the victim's own answers name the address.
  const response listed = c.get("/list_wallets", a.auth());
  ITEST_REQUIRE_STATUS(listed, 200);
  size_t copied = 0;
  for (const auto& item : listed.body.at("items").as_array())
    if (s_of(item, "pkp_id") == victim_pkp) {
      ++copied;
      CHECK(item.at("solana_address").is_null());
    }
  CHECK(copied == 1);
  const response own = c.get("/list_wallets", victim.auth());
  ITEST_REQUIRE_STATUS(own, 200);
  CHECK(s_of(own.body.at("items").at(0), "solana_address") == s_of(vw.body, "solana_address"));
  CHECK(listed.text.find(s_of(vw.body, "solana_address")) == std::string::npos);

  // The victim still signs with its own key: the refusal is about the account, not the key.
  const response again =
      c.post("/run_action",
             json::object{{"code", seal_code}, {"pkp_id", victim_pkp}, {"params", json::object{{"pkp", victim_pkp}}}},
             victim.auth());
  ITEST_CHECK_STATUS(again, 200);

  // The server remembers the owning-account check per (account, path, wallet) (docs/architecture.md,
  // core/key_cache.hpp): with the victim's entry now cached by its listing and its run, the copied
  // pair is still the attacker's own entry, so it is still listed with null and still refused.
  const response relisted = c.get("/list_wallets", a.auth());
  ITEST_REQUIRE_STATUS(relisted, 200);
  for (const auto& item : relisted.body.at("items").as_array())
    if (s_of(item, "pkp_id") == victim_pkp)
      CHECK(item.at("solana_address").is_null());
  CHECK(relisted.text.find(s_of(vw.body, "solana_address")) == std::string::npos);
  expect_refused(srv, c, a, cids, victim_pkp, victim_ciphertext);
  CHECK(srv.stop().clean());
}

TEST_CASE("the server's relayer and sealing keys are out of every account's reach") {
  server_process srv({"--dev"});
  const chain_env env = env_of(srv);
  http_client c = srv.client();
  const response payer = c.get("/get_admin_api_payer");
  ITEST_REQUIRE_STATUS(payer, 200);
  const std::string payer_addr = s_of(payer.body, "admin_api_payer");

  attacker a = make_attacker(srv, env, "relayer thief");

  // The relayer's former path: registering its address there gives the attacker nothing.
  const hash256 payer_path = crypto::keccak256(std::string_view("enact/api-payer/0"));
  auto cids = arm(c, a, parse_address(payer_addr).value(), payer_path);
  expect_refused(srv, c, a, cids, payer_addr);

  // The address the attacker's account does derive at that path is not the relayer: register it
  // honestly and sign with it, then check the signer is someone else.
  const Secret root = [&] {
    std::ifstream f(srv.data_dir() + "/tee-root.key", std::ios::binary);
    std::string b((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    REQUIRE(b.size() == 32);
    return Secret(as_bytes(b));
  }();
  const address own = pkp::wallet_address(root, a.account, payer_path).value();
  CHECK(to_checksum_address(own) != payer_addr);
  CHECK(pkp::server_signing_key(root, "api-payer/0").has_value());
  CHECK(to_checksum_address(crypto::secp256k1::to_address(
            crypto::secp256k1::public_key_of(pkp::server_signing_key(root, "api-payer/0").value()).value())) ==
        payer_addr);

  // The trigger store's sealing key at its former path: whatever wallet is registered there, a
  // decrypt with it is refused or opens nothing sealed with the server key.
  const hash256 seal_path = crypto::keccak256(std::string_view("enact/triggers/usage-key-seal/v1"));
  const address legacy_seal_wallet = pkp::legacy_wallet_address(root, seal_path).value();
  REQUIRE(a.registry.register_wallet_derivation(a.account, legacy_seal_wallet, seal_path, "seal").has_value());
  REQUIRE(a.registry.add_pkp_to_group(a.account, 1, legacy_seal_wallet).has_value());
  expect_refused(srv, c, a, cids, to_checksum_address(legacy_seal_wallet));
  CHECK(srv.stop().clean());
}

}  // namespace enact::itest

namespace enact::itest {

TEST_CASE("a data directory from before keys were bound to accounts is refused, not re-keyed") {
  // docs/protocol.md §1 "data from before": a directory whose wallets were derived under the path-only
  // rule holds state but no key-derivation record. Starting on it must fail with a message that
  // says so, and leave every file as it was.
  temp_dir dir;
  const std::string data = dir.path();
  {
    // The state of an earlier server: a root key and a ledger file, no record.
    std::ofstream key(data + "/tee-root.key", std::ios::binary);
    key << std::string(32, '\x42');
  }
  REQUIRE(::chmod((data + "/tee-root.key").c_str(), 0600) == 0);
  { std::ofstream ledger(data + "/ledger.sqlite", std::ios::binary); }
  const finished_run run = run_to_exit({"--listen", "127.0.0.1:0", "--data-dir", data, "--dev"});
  CHECK(run.status.exited);
  CHECK(run.status.code != 0);
  CHECK(run.stderr_text.find("enact/pkp/v1") != std::string::npos);
  CHECK(run.stderr_text.find("Nothing was re-keyed") != std::string::npos);
  CHECK(run.stdout_text.find("listening on") == std::string::npos);
  struct stat st {};
  CHECK(::stat((data + "/key-derivation").c_str(), &st) != 0);  // not claimed
  std::ifstream key(data + "/tee-root.key", std::ios::binary);
  std::string kept((std::istreambuf_iterator<char>(key)), std::istreambuf_iterator<char>());
  CHECK(kept == std::string(32, '\x42'));

  // A record of another rule is refused too.
  {
    std::ofstream rec(data + "/key-derivation");
    rec << "enact/pkp/v9\n";
  }
  const finished_run other = run_to_exit({"--listen", "127.0.0.1:0", "--data-dir", data, "--dev"});
  CHECK(other.status.code != 0);
  CHECK(other.stderr_text.find("key-derivation") != std::string::npos);

  // A new directory is claimed on first start and starts again.
  temp_dir fresh;
  {
    server_process srv({"--dev"}, fresh.path());
    CHECK(srv.stop().clean());
  }
  std::ifstream rec(fresh.path() + "/key-derivation");
  std::string line;
  std::getline(rec, line);
  CHECK(line == "enact/pkp/v2");
  server_process again({"--dev"}, fresh.path());
  CHECK(again.stop().clean());
}

}  // namespace enact::itest

namespace enact::itest {

TEST_CASE("a wallet's own address bytes are no API key for its account") {
  // An on-chain account's hash is crypto::keccak256(abi.encodePacked(admin)) (docs/protocol.md §1), and a key is
  // looked up by the keccak256 of what the caller sends. The 20 raw bytes of the admin's address,
  // sent as the key, hash to the account's hash: a key anyone can compute from a public address.
  server_process srv({"--dev"});
  const chain_env env = env_of(srv);
  // A wallet whose address bytes can travel in a header (no control bytes): about 6 % are.
  Secret w;
  address a{};
  for (int i = 0;; ++i) {
    REQUIRE(i < 2000);
    w = wallet_key("header-safe " + std::to_string(i));
    a = address_of_key(w);
    if (std::all_of(a.begin(), a.end(), [](uint8_t b) { return b > 0x20 && b != 0x7f; }))
      break;
  }
  chain::registry_client reg = registry_of(env, w);
  const chain::account_created created = reg.new_account("owner").value();
  CHECK(created.account_hash == crypto::keccak256(bytes_view(a)));
  http_client c = srv.client();
  const std::string raw(reinterpret_cast<const char*>(a.data()), a.size());
  for (const auto& headers : {api_key(raw), bearer(raw)}) {
    const response r = c.get("/account", headers);
    ITEST_CHECK_STATUS(r, 401);
    CHECK(r.error_code() == "unauthenticated");
    CHECK(r.error_message().find("malformed API key") != std::string::npos);
    CHECK(r.text.find(codec::hex::encode(created.account_hash)) == std::string::npos);
  }
  // Any other string that is not an issued key's form is refused the same way.
  for (const std::string& k :
       {std::string("password"), std::string(44, 'A'), std::string(43, 'A') + "B", std::string(43, '-') + "="}) {
    INFO(k);
    ITEST_CHECK_STATUS(c.get("/account", api_key(k)), 401);
  }
  CHECK(srv.stop().clean());
}

}  // namespace enact::itest
