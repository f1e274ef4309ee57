// SPDX-License-Identifier: Apache-2.0
// sign_typed_data: a client proves it holds a wallet. Reads a private key from a file, builds the
// EIP-712 wallet-proof envelope of version 2 (enact/eip712/envelope.hpp, docs/protocol.md §2
// "Envelope version 2") for one flow on one deployment (chain id and registry address), signs it
// and prints {"typed_data": …, "signature": "0x…"} — what a ChainSecured endpoint takes. With
// --url it also sends a CreateWallet envelope to that server's /create_wallet_with_signature
// (the deployment is then the server's) and prints the PKP it minted.
//
//   sign_typed_data --key-file KEY --chain-id N --contract ADDR [--type CreateWallet]
//                   [--issued-at UNIX] [--nonce HEX] [--account HASH] [--method M --path TARGET]
//   sign_typed_data --key-file KEY --url http://127.0.0.1:8080
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>

#include "enact/client/core_client.hpp"
#include "enact/codec/hex.hpp"
#include "enact/address.hpp"
#include "enact/crypto/random.hpp"
#include "enact/crypto/secp256k1.hpp"
#include "enact/secret.hpp"
#include "enact/eip712/envelope.hpp"

namespace {

using namespace enact;

constexpr const char* kUsage =
    "usage: sign_typed_data --key-file FILE [--type CreateWallet|ConvertAccount|AddUsageApiKey|"
    "BillingAuth]\n"
    "                       (--chain-id N --contract ADDR [--issued-at UNIX] [--nonce HEX]\n"
    "                        [--account HASH] [--method M --path TARGET] | --url URL)\n";

int usage(const char* why) {
  std::fprintf(stderr, "sign_typed_data: %s\n%s", why, kUsage);
  return 2;
}

/// The key file holds the 32-byte private key as hex (0x optional, surrounding whitespace
/// ignored), like `enact`'s --key-file. The text is wiped once decoded. Says why on failure.
std::optional<Secret> read_key(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "sign_typed_data: %s: cannot open file\n", path.c_str());
    return std::nullopt;
  }
  std::string text((std::istreambuf_iterator<char>(in)), {});
  const auto b = text.find_first_not_of(" \t\r\n");
  const auto e = text.find_last_not_of(" \t\r\n");
  const std::string_view digits =
      b == std::string::npos ? std::string_view() : std::string_view(text).substr(b, e - b + 1);
  Secret key = Secret::of_size(32);
  auto decoded = codec::hex::decode_into(digits, key.mutable_view(), path);
  detail::secure_wipe(text.data(), text.size());
  if (!decoded) {
    std::fprintf(stderr, "sign_typed_data: %s (expected a 32-byte hex private key)\n", decoded.err().message.c_str());
    return std::nullopt;
  }
  if (!crypto::secp256k1::is_valid_private_key(key.view())) {
    std::fprintf(stderr, "sign_typed_data: %s: not a valid secp256k1 private key\n", path.c_str());
    return std::nullopt;
  }
  return key;
}

std::optional<uint64_t> number(std::string_view text) {
  uint64_t v = 0;
  if (text.empty())
    return std::nullopt;
  for (const char c : text) {
    if (c < '0' || c > '9' || v > (UINT64_MAX - 9) / 10)
      return std::nullopt;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  namespace env = eip712::envelope;
  std::string key_file, url;
  env::kind kind = env::kind::create_wallet;
  // No default: every enact-server deployment has a chain id and registry of its own
  // (docs/protocol.md §1 "embedded chain"), which --url reads from the server.
  std::optional<uint64_t> chain_id;
  std::optional<address> contract;
  env::message_v2 message;
  std::optional<hash256> nonce;
  std::string method, path;
  std::optional<uint64_t> issued_at;
  for (int i = 1; i < argc; ++i) {
    const std::string_view flag = argv[i];
    if (flag == "--help" || flag == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (i + 1 >= argc)
      return usage("missing value");
    const std::string_view value = argv[++i];
    if (flag == "--key-file") {
      key_file = value;
    } else if (flag == "--url") {
      url = value;
    } else if (flag == "--type") {
      const auto k = env::kind_from_name(value);
      if (!k)
        return usage("--type: expected CreateWallet, ConvertAccount, AddUsageApiKey or BillingAuth");
      kind = *k;
    } else if (flag == "--chain-id" || flag == "--issued-at") {
      const auto n = number(value);
      if (!n)
        return usage("--chain-id and --issued-at take a non-negative integer");
      (flag == "--chain-id" ? chain_id.emplace() : issued_at.emplace()) = *n;
    } else if (flag == "--contract") {
      auto a = parse_address(value, "--contract");
      if (!a)
        return usage("--contract: expected the registry's address (0x + 40 hex digits)");
      contract = *a;
    } else if (flag == "--nonce" || flag == "--account") {
      auto h = codec::hex::decode_fixed<32>(value, flag);
      if (!h)
        return usage("--nonce and --account take 0x + 64 hex digits");
      (flag == "--nonce" ? nonce.emplace() : message.account) = *h;
    } else if (flag == "--method" || flag == "--path") {
      (flag == "--method" ? method : path) = value;
    } else {
      return usage("unknown option");
    }
  }
  if (key_file.empty())
    return usage("--key-file is required");
  if (url.empty() && (!chain_id || !contract))
    return usage(
        "--chain-id and --contract are required without --url: the deployment the envelope is for "
        "(chain_id and contract_address of the server's get_node_chain_config)");
  if (kind == env::kind::billing_auth && url.empty() && (method.empty() || path.empty()))
    return usage("a BillingAuth authorizes one request: give --method and --path");
  if ((kind == env::kind::billing_auth && nonce) || (kind != env::kind::billing_auth && !method.empty()))
    return usage("--nonce is for the other flows, --method and --path for a BillingAuth");
  if ((kind == env::kind::convert_account) != (message.account != hash256{}) && url.empty())
    return usage("--account (the converted account's api_key_hash) is for, and required by, a ConvertAccount");
  const std::optional<Secret> key = read_key(key_file);
  if (!key)
    return 1;
  message.issued_at = issued_at.value_or(static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count()));
  // A fresh random nonce unless one is given: the server accepts each once.
  if (nonce)
    message.nonce = *nonce;
  else
    crypto::random_bytes(message.nonce);

  try {
    if (!url.empty()) {
      // The envelope must name the server's deployment and be issued within 300 s of its clock.
      client::client_options options;
      options.base_url = url;
      client::core_client core(options);
      const env::signed_envelope signed_env =
          env::sign(env::kind::create_wallet, core.deployment(), message, *key).value();
      std::printf("%s\n", env::to_json(signed_env).c_str());
      const client::minted_wallet w = core.create_wallet_with_signature(signed_env);
      std::printf("{\"pkp_id\":\"%s\",\"wallet_address\":\"%s\"}\n", to_checksum_address(w.pkp_id).c_str(),
                  to_checksum_address(w.wallet_address).c_str());
      return 0;
    }
    const env::deployment deployment{*chain_id, *contract};
    if (kind == env::kind::billing_auth)
      message.request = env::bind_request(method, path, "");
    const env::signed_envelope signed_env = env::sign(kind, deployment, message, *key).value();
    // What the server will do with it: recover the signer and check it against message.address.
    env::expectation want{};
    want.expected = kind;
    want.chain_id = deployment.chain_id;
    want.now = message.issued_at;
    want.verifying_contract = deployment.verifying_contract;
    want.account = message.account;
    want.request = message.request;
    const env::verified v =
        env::check(boost::json::serialize(signed_env.typed_data), signed_env.signature, want).value();
    std::printf("%s\n", env::to_json(signed_env).c_str());
    std::fprintf(stderr, "signed by %s\n", to_checksum_address(v.signer).c_str());
    return 0;
  } catch (const enact::Error& e) {  // api_error is one too: "<code>: <message>"
    std::fprintf(stderr, "sign_typed_data: %s\n", e.what());
    return 1;
  }
}
