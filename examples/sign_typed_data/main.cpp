// SPDX-License-Identifier: Apache-2.0
// sign_typed_data: a client proves it holds a wallet. Reads a private key from a file, builds the
// EIP-712 wallet-proof envelope (enact/eip712/envelope.hpp) for one flow on one chain, signs it
// and prints {"typed_data": …, "signature": "0x…"} — what a ChainSecured endpoint takes. With
// --url it also sends a CreateWallet envelope to that server's /create_wallet_with_signature
// (the chain id is then the server's) and prints the PKP it minted.
//
//   sign_typed_data --key-file KEY [--type CreateWallet] --chain-id N [--issued-at UNIX]
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
#include "enact/crypto/secp256k1.hpp"
#include "enact/secret.hpp"
#include "enact/eip712/envelope.hpp"

namespace {

using namespace enact;

constexpr const char* kUsage =
    "usage: sign_typed_data --key-file FILE [--type CreateWallet|ConvertAccount|AddUsageApiKey|"
    "BillingAuth]\n"
    "                       --chain-id N [--issued-at UNIX] | --url URL\n";

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
  std::string key_file, url;
  eip712::envelope::kind kind = eip712::envelope::kind::create_wallet;
  // No default: every enact-server deployment has a chain id of its own (docs/protocol.md §1
  // "embedded chain"), which --url reads from the server.
  std::optional<uint64_t> chain_id;
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
      const auto k = eip712::envelope::kind_from_name(value);
      if (!k)
        return usage("--type: expected CreateWallet, ConvertAccount, AddUsageApiKey or BillingAuth");
      kind = *k;
    } else if (flag == "--chain-id" || flag == "--issued-at") {
      const auto n = number(value);
      if (!n)
        return usage("--chain-id and --issued-at take a non-negative integer");
      (flag == "--chain-id" ? chain_id.emplace() : issued_at.emplace()) = *n;
    } else {
      return usage("unknown option");
    }
  }
  if (key_file.empty())
    return usage("--key-file is required");
  if (url.empty() && !chain_id)
    return usage("--chain-id is required without --url (the chain of the server the envelope is for)");
  const std::optional<Secret> key = read_key(key_file);
  if (!key)
    return 1;
  const uint64_t now = issued_at.value_or(static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count()));

  try {
    if (!url.empty()) {
      // The envelope must name the server's chain and be issued within 300 s of its clock.
      client::client_options options;
      options.base_url = url;
      client::core_client core(options);
      const eip712::envelope::signed_envelope env =
          eip712::envelope::sign(eip712::envelope::kind::create_wallet, core.get_node_chain_config().chain_id, *key,
                                 now)
              .value();
      std::printf("%s\n", eip712::envelope::to_json(env).c_str());
      const client::minted_wallet w = core.create_wallet_with_signature(env);
      std::printf("{\"pkp_id\":\"%s\",\"wallet_address\":\"%s\"}\n", to_checksum_address(w.pkp_id).c_str(),
                  to_checksum_address(w.wallet_address).c_str());
      return 0;
    }
    const eip712::envelope::signed_envelope env = eip712::envelope::sign(kind, *chain_id, *key, now).value();
    // What the server will do with it: recover the signer and check it against message.address.
    eip712::envelope::expectation want{};
    want.expected = kind;
    want.chain_id = *chain_id;
    want.now = now;
    const address signer =
        eip712::envelope::verify(boost::json::serialize(env.typed_data), env.signature, want).value();
    std::printf("%s\n", eip712::envelope::to_json(env).c_str());
    std::fprintf(stderr, "signed by %s\n", to_checksum_address(signer).c_str());
    return 0;
  } catch (const enact::Error& e) {  // api_error is one too: "<code>: <message>"
    std::fprintf(stderr, "sign_typed_data: %s\n", e.what());
    return 1;
  }
}
