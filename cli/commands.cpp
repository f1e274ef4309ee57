// SPDX-License-Identifier: Apache-2.0
#include "commands.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/json.hpp>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <string>

#include "cli.hpp"
#include "output.hpp"
#include "enact/codec/abi.hpp"
#include "enact/codec/abi_json.hpp"
#include "enact/codec/hex.hpp"
#include "enact/codec/rlp.hpp"
#include "enact/codec/rfc3339.hpp"
#include "enact/codec/rlp_json.hpp"
#include "enact/cron/cron.hpp"
#include "enact/address.hpp"
#include "enact/crypto/keystore.hpp"
#include "enact/crypto/random.hpp"
#include "enact/crypto/secp256k1.hpp"
#include "enact/eip712/envelope.hpp"
#include "enact/eip712/typed_data.hpp"
#include "enact/ipfs/cid.hpp"
#include "enact/pkp/pkp.hpp"

namespace enact::cli {
namespace {

/// Unwraps a result or turns its error into an input_error (exit 1).
template <class T>
T take(result<T> r) {
  if (!r)
    throw input_error(r.err().message);
  return std::move(r).value();
}

eip712::typed_data read_typed_data(const std::string& path) { return take(eip712::parse(read_input(path))); }

// --- typed-data -------------------------------------------------------------------------------

int typed_data_hash(const std::vector<std::string>& argv) {
  args a(argv, {}, {});
  a.at_most(1);
  auto td = read_typed_data(a.at(0, "FILE"));
  emit_value("digest", codec::hex::encode_prefixed(take(eip712::digest(td))));
  return 0;
}

int typed_data_sign(const std::vector<std::string>& argv) {
  args a(argv, {"key-file"}, {});
  a.at_most(1);
  auto td = read_typed_data(a.at(0, "FILE"));
  Secret key = read_key_file(a.require("key-file"));
  auto sig = take(eip712::sign(td, key));
  emit_value("signature", codec::hex::encode_prefixed(sig.to_bytes()));
  return 0;
}

int typed_data_recover(const std::vector<std::string>& argv) {
  args a(argv, {}, {});
  a.at_most(2);
  auto td = read_typed_data(a.at(0, "FILE"));
  auto sig = take(codec::hex::decode(a.at(1, "SIG"), "signature"));
  emit_value("signer", to_checksum_address(take(eip712::recover(td, sig))));
  return 0;
}

// --- envelope ---------------------------------------------------------------------------------

eip712::envelope::kind parse_kind(const std::string& name) {
  auto k = eip712::envelope::kind_from_name(name);
  if (!k)
    throw usage_error(
        "--type: expected CreateWallet, ConvertAccount, AddUsageApiKey or "
        "BillingAuth, got '" +
        name + "'");
  return *k;
}

uint64_t unix_now() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count());
}

namespace env = eip712::envelope;

/// A version 2 option given with --version 1, where it would be silently meaningless.
void refuse_v2_options(const args& a, std::initializer_list<const char*> names) {
  for (const char* n : names)
    if (a.get(n))
      throw usage_error(std::string("--") + n + " is a version 2 member: drop it or --version 1");
}

hash256 hash_option(const args& a, const std::string& name, std::string_view what) {
  auto h = codec::hex::decode_fixed<32>(a.require(name), "--" + name);
  if (!h)
    throw usage_error(h.err().message + " (" + std::string(what) + ": 0x + 64 hex digits)");
  return *h;
}

/// The request a BillingAuth binds: --method, --path (the target exactly as sent, with its query)
/// and the body's bytes (--body-file; none: the empty body of a GET).
env::request_binding request_of(const args& a) {
  const std::string body = a.get("body-file") ? read_input(*a.get("body-file")) : std::string();
  return env::bind_request(a.require("method"), a.require("path"), body);
}

unsigned version_of(const args& a) {
  const auto v = a.get("version").value_or("2");
  if (v != "1" && v != "2")
    throw usage_error("--version: expected 1 or 2, got '" + v + "'");
  return v == "1" ? 1 : 2;
}

int envelope_new(const std::vector<std::string>& argv) {
  args a(argv,
         {"type", "chain-id", "key-file", "issued-at", "version", "contract", "account", "nonce", "method", "path",
          "body-file", "count"},
         {});
  a.at_most(0);
  const auto kind = parse_kind(a.require("type"));
  const auto chain_id = parse_u64(a.require("chain-id"), "--chain-id");
  const auto issued_at = a.get("issued-at") ? parse_u64(*a.get("issued-at"), "--issued-at") : unix_now();
  const uint64_t count = a.get("count") ? parse_u64(*a.get("count"), "--count") : 1;
  if (count == 0)
    throw usage_error("--count: at least 1");
  const unsigned version = version_of(a);
  if (version == 1)
    refuse_v2_options(a, {"contract", "account", "nonce", "method", "path", "body-file"});
  if (version == 1 && count > 1)
    throw usage_error("--count: a version 1 envelope has no nonce, so every copy would be the same");
  if (a.get("nonce") && count > 1)
    throw usage_error("--nonce with --count: each envelope gets its own nonce");

  env::message_v2 m;
  env::deployment d;
  if (version == 2) {
    d = {chain_id, take(parse_address(a.require("contract")))};
    m.issued_at = issued_at;
    const bool billing = kind == env::kind::billing_auth;
    if (kind == env::kind::convert_account)
      m.account = hash_option(a, "account", "the converted account's api_key_hash");
    else if (a.get("account"))
      throw usage_error("--account: only a ConvertAccount names an account");
    if (billing) {
      m.request = request_of(a);
      if (a.get("nonce"))
        throw usage_error("--nonce: a BillingAuth has no nonce (it is bound to one request)");
    } else if (a.get("method") || a.get("path") || a.get("body-file")) {
      throw usage_error("--method, --path and --body-file: only a BillingAuth names a request");
    }
  }
  Secret key = read_key_file(a.require("key-file"));
  // The envelopes are documents to pass on (envelope verify, a request body), so each is printed as
  // that JSON document, one line each, in both forms.
  for (uint64_t i = 0; i < count; ++i) {
    if (version == 1) {
      std::printf("%s\n", env::to_json(take(env::sign(kind, chain_id, key, issued_at))).c_str());
      continue;
    }
    if (kind != env::kind::billing_auth) {
      if (a.get("nonce"))
        m.nonce = hash_option(a, "nonce", "the nonce");
      else
        crypto::random_bytes(m.nonce);
    }
    std::printf("%s\n", env::to_json(take(env::sign(kind, d, m, key))).c_str());
  }
  return 0;
}

int envelope_verify(const std::vector<std::string>& argv) {
  args a(argv, {"type", "chain-id", "now", "signer", "contract", "account", "method", "path", "body-file"},
         {"accept-v1"});
  a.at_most(1);
  const std::string text = read_input(a.at(0, "FILE"));
  env::expectation expect{};
  expect.expected = parse_kind(a.require("type"));
  expect.chain_id = parse_u64(a.require("chain-id"), "--chain-id");
  expect.now = a.get("now") ? parse_u64(*a.get("now"), "--now") : unix_now();
  if (auto s = a.get("signer"))
    expect.expected_signer = take(parse_address(*s));
  if (auto c = a.get("contract"))
    expect.verifying_contract = take(parse_address(*c));
  if (a.get("account"))
    expect.account = hash_option(a, "account", "the converted account's api_key_hash");
  if (a.get("method") || a.get("path") || a.get("body-file"))
    expect.request = request_of(a);
  // As the server does by default (docs/protocol.md §2): version 1 only for the minting flows.
  expect.accept_v1 = a.has("accept-v1") || expect.expected == env::kind::create_wallet ||
                     expect.expected == env::kind::add_usage_api_key;

  // FILE holds {"typed_data": <object or its JSON text>, "signature": "0x…"}.
  boost::system::error_code ec;
  auto doc = boost::json::parse(text, ec);
  if (ec || !doc.is_object())
    throw input_error("FILE: expected a JSON object {\"typed_data\", \"signature\"}");
  const auto& obj = doc.as_object();
  const auto* td = obj.if_contains("typed_data");
  const auto* sig = obj.if_contains("signature");
  if (!td || !sig || !sig->is_string())
    throw input_error("FILE: expected fields \"typed_data\" and \"signature\" (a string)");
  const std::string td_text = td->is_string() ? std::string(td->as_string()) : boost::json::serialize(*td);
  auto checked = env::check(td_text, std::string(sig->as_string()), expect);
  if (!checked) {
    std::string why = checked.err().message;
    if (checked.code() == envelope_errc::contract_mismatch && !expect.verifying_contract)
      why += " (a version 2 envelope is checked against --contract, the deployment's registry)";
    else if (checked.code() == envelope_errc::version_refused)
      why += " (--accept-v1: as a server that opts in to version 1)";
    throw input_error(why);
  }
  emit_value("signer", to_checksum_address(checked->signer));
  return 0;
}

// --- abi / rlp --------------------------------------------------------------------------------

int abi_encode(const std::vector<std::string>& argv) {
  args a(argv, {}, {});
  const std::string& sig_text = a.at(0, "SIGNATURE");
  // A signature with a name gives calldata (selector + arguments); a bare tuple like
  // '(uint256,string)' gives the encoding of the arguments alone.
  const bool bare = !sig_text.empty() && sig_text.front() == '(';
  const auto inputs =
      bare ? take(codec::abi::type::parse(sig_text)).components : take(codec::abi::parse_signature(sig_text)).inputs;
  if (a.count() - 1 != inputs.size())
    throw usage_error(sig_text + " takes " + std::to_string(inputs.size()) + " arguments, got " +
                      std::to_string(a.count() - 1));
  std::vector<codec::abi::value> values;
  for (size_t i = 0; i < inputs.size(); ++i) {
    auto v = codec::abi::from_cli_arg(inputs[i], a.positionals()[i + 1]);
    if (!v)
      throw input_error("argument " + std::to_string(i + 1) + ": " + v.err().message);
    values.push_back(std::move(*v));
  }
  bytes out = bare ? take(codec::abi::encode(inputs, values)) : take(codec::abi::encode_call(sig_text, values));
  emit_value("data", codec::hex::encode_prefixed(out));
  return 0;
}

int abi_decode(const std::vector<std::string>& argv) {
  args a(argv, {}, {});
  a.at_most(2);
  std::string types_text = a.at(0, "TYPES");
  if (types_text.empty() || types_text.front() != '(')
    types_text = "(" + types_text + ")";
  const auto types = take(codec::abi::type::parse(types_text)).components;
  auto data = take(codec::hex::decode(a.at(1, "HEX"), "HEX"));
  auto values = take(codec::abi::decode(types, data));
  boost::json::array out;
  for (size_t i = 0; i < values.size(); ++i)
    out.push_back(codec::abi::to_json(types[i], values[i]));
  emit_value("values", out);
  return 0;
}

int rlp_encode(const std::vector<std::string>& argv) {
  args a(argv, {}, {});
  a.at_most(1);
  boost::system::error_code ec;
  auto doc = boost::json::parse(a.at(0, "JSON"), ec);
  if (ec)
    throw input_error("JSON: " + ec.message());
  auto item = take(codec::rlp::from_json(doc));
  emit_value("rlp", codec::hex::encode_prefixed(codec::rlp::encode(item)));
  return 0;
}

int rlp_decode(const std::vector<std::string>& argv) {
  args a(argv, {}, {});
  a.at_most(1);
  auto data = take(codec::hex::decode(a.at(0, "HEX"), "HEX"));
  emit_value("item", codec::rlp::to_json(take(codec::rlp::decode(data))));
  return 0;
}

// --- cid / cron -------------------------------------------------------------------------------

int cid_cmd(const std::vector<std::string>& argv) {
  args a(argv, {}, {"v1"});
  a.at_most(1);
  const std::string content = read_input(a.at(0, "FILE"));
  const auto c = a.has("v1") ? ipfs::cid_v1_of(as_bytes(content)) : ipfs::cid_v0_of(as_bytes(content));
  emit_value("cid", c.to_string());
  return 0;
}

std::chrono::sys_seconds parse_rfc3339(const std::string& text) {
  // Any RFC 3339 instant: "2026-01-01T00:00:00Z", JavaScript's toISOString() with milliseconds,
  // or a numeric offset; the cron search starts at the whole second.
  const auto t = enact::codec::rfc3339::parse_as<std::chrono::seconds>(text);
  if (!t)
    throw usage_error(
        "--after: expected an RFC 3339 instant like 2026-01-01T00:00:00Z or 2026-01-01T00:00:00.000Z, got '" + text +
        "'");
  return *t;
}

std::string format_rfc3339(std::chrono::sys_seconds t) { return enact::codec::rfc3339::format(t); }

int cron_next(const std::vector<std::string>& argv) {
  args a(argv, {"after", "count"}, {});
  a.at_most(1);
  auto sched = take(cron::parse(a.at(0, "EXPR")));
  auto t = a.get("after") ? parse_rfc3339(*a.get("after"))
                          : std::chrono::floor<std::chrono::seconds>(std::chrono::system_clock::now());
  const uint64_t count = a.get("count") ? parse_u64(*a.get("count"), "--count") : 1;
  if (count == 0 || count > 10000)
    throw usage_error("--count: expected 1 to 10000");
  boost::json::array times;
  for (uint64_t i = 0; i < count; ++i) {
    auto next = cron::next_after(sched, t);
    if (!next)
      throw input_error("EXPR: never fires after " + format_rfc3339(t));
    t = *next;
    times.emplace_back(format_rfc3339(t));
  }
  emit_value("next", times);
  return 0;
}

// --- keys / pkp -------------------------------------------------------------------------------

int key_new(const std::vector<std::string>& argv) {
  args a(argv, {"out"}, {});
  a.at_most(0);
  Secret key = Secret::of_size(32);
  do {
    crypto::random_bytes(key.mutable_view());
  } while (!crypto::secp256k1::is_valid_private_key(key.view()));
  const auto addr = crypto::secp256k1::to_address(take(crypto::secp256k1::public_key_of(key)));
  if (auto out = a.get("out")) {
    // Created 0600 and never overwritten: a key file is not something to clobber by accident.
    std::string text = codec::hex::encode_prefixed(key.view()) + "\n";
    const int fd = ::open(out->c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
    if (fd < 0)
      throw input_error(*out + ": cannot create (exists already, or no permission)");
    const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    ::close(fd);
    detail::secure_wipe(text.data(), text.size());
    if (!ok)
      throw input_error(*out + ": write failed");
    emit_value("address", to_checksum_address(addr));
  } else {
    // Printing the key is what was asked for; it goes to stdout only.
    std::string text = codec::hex::encode_prefixed(key.view());
    emit_secret_value("private_key", Secret(as_bytes(text)));
    detail::secure_wipe(text.data(), text.size());
  }
  return 0;
}

int key_address(const std::vector<std::string>& argv) {
  args a(argv, {"key-file"}, {});
  a.at_most(0);
  Secret key = read_key_file(a.require("key-file"));
  emit_value("address",
             to_checksum_address(crypto::secp256k1::to_address(take(crypto::secp256k1::public_key_of(key)))));
  return 0;
}

int keystore_encrypt(const std::vector<std::string>& argv) {
  args a(argv, {"key-file", "out", "kdf", "scrypt-n", "pbkdf2-c"}, {});
  a.at_most(0);
  const std::string out = a.require("out");
  crypto::keystore::encrypt_options o;
  const std::string kdf = a.get("kdf").value_or("scrypt");
  if (kdf == "scrypt") {
    crypto::keystore::scrypt_params sp;
    if (auto n = a.get("scrypt-n"))
      sp.n = parse_u64(*n, "--scrypt-n");
    o.kdf = sp;
  } else if (kdf == "pbkdf2") {
    crypto::keystore::pbkdf2_params pp;
    if (auto c = a.get("pbkdf2-c")) {
      const uint64_t v = parse_u64(*c, "--pbkdf2-c");
      if (v == 0 || v > UINT32_MAX)
        throw usage_error("--pbkdf2-c: expected 1.." + std::to_string(UINT32_MAX));
      pp.c = static_cast<uint32_t>(v);
    }
    o.kdf = pp;
  } else {
    throw usage_error("--kdf: expected scrypt or pbkdf2, got '" + kdf + "'");
  }
  const Secret key = read_key_file(a.require("key-file"));
  std::string pw = keystore_password(out);
  auto file = crypto::keystore::encrypt(key, pw, o);
  detail::secure_wipe(pw.data(), pw.size());
  if (!file)
    throw input_error(file.err().message);
  const int fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0)
    throw input_error(out + ": cannot create (exists already, or no permission)");
  const std::string text = *file + "\n";
  const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  if (::close(fd) != 0 || !ok) {
    ::unlink(out.c_str());
    throw input_error(out + ": write failed");
  }
  emit_value("address",
             to_checksum_address(crypto::secp256k1::to_address(take(crypto::secp256k1::public_key_of(key)))));
  return 0;
}

int pkp_derive(const std::vector<std::string>& argv) {
  args a(argv, {"root-key-file", "account", "path"}, {});
  a.at_most(0);
  Secret root = read_key_file(a.require("root-key-file"));
  // docs/protocol.md §1: a PKP key belongs to one account; the same path under another account is
  // another key.
  auto account = codec::hex::decode_fixed<32>(a.require("account"), "--account");
  if (!account)
    throw usage_error(account.err().message + " (the owning account's hash is 32 bytes of hex)");
  auto path = codec::hex::decode_fixed<32>(a.require("path"), "--path");
  if (!path)
    throw usage_error(path.err().message + " (a derivation path is 32 bytes of hex)");
  // Two lines: the Ethereum address (the pkp_id) and the Solana address (base58 of the PKP's
  // Ed25519 public key, docs/protocol.md §1 "PKP Ed25519 key").
  emit_value("addresses",
             boost::json::array{to_checksum_address(take(pkp::wallet_address(root, *account, *path))),
                                pkp::solana_address(take(pkp::ed25519_public_key(root, *account, *path)))});
  return 0;
}

}  // namespace

std::vector<command> all_commands() {
  std::vector<command> all = {
      {"typed-data hash", "FILE", "EIP-712 digest of typed data (eth_signTypedData_v4 JSON) as 0x hex",
       typed_data_hash},
      {"typed-data sign", "FILE --key-file K", "sign typed data; prints the 65-byte 0x signature", typed_data_sign},
      {"typed-data recover", "FILE SIG", "recover the signer of typed data; prints its address", typed_data_recover},
      {"envelope new",
       "--type T --chain-id N --contract ADDR --key-file K [--issued-at UNIX] [--account HASH] [--nonce HEX] "
       "[--method M --path TARGET [--body-file F]] [--count N] [--version 1|2]",
       "build and sign a wallet-proof envelope (version 2 unless --version 1); prints {\"typed_data\", "
       "\"signature\"}, one line per envelope",
       envelope_new},
      {"envelope verify",
       "FILE --type T --chain-id N [--contract ADDR] [--account HASH] [--method M --path TARGET [--body-file F]] "
       "[--now UNIX] [--signer ADDR] [--accept-v1]",
       "validate an envelope as a server does; prints the signer", envelope_verify},
      {"abi encode", "'f(uint256,string)' ARGS...",
       "ABI-encode arguments; with a function name, prints calldata with its selector", abi_encode},
      {"abi decode", "TYPES HEX", "decode ABI data for TYPES like 'uint256,string'; prints JSON", abi_decode},
      {"rlp encode", "JSON", "RLP-encode a JSON value (\"0x..\" strings, nested arrays)", rlp_encode},
      {"rlp decode", "HEX", "decode RLP; prints JSON", rlp_decode},
      {"cid", "[--v1] FILE", "IPFS CID of a file as `ipfs add` computes it (v0, or v1 with --v1)", cid_cmd},
      {"cron next", "'EXPR' [--after RFC3339] [--count N]", "next firing times of a cron expression (UTC)", cron_next},
      {"key new", "[--out FILE]", "new secp256k1 key; with --out, writes it (0600) and prints the address", key_new},
      {"key address", "--key-file K", "address of a private key (hex or keystore file)", key_address},
      {"keystore encrypt", "--key-file K --out FILE [--kdf scrypt|pbkdf2] [--scrypt-n N] [--pbkdf2-c N]",
       "write a Web3 Secret Storage keystore (0600) of a key; the password as for reading one; prints the address",
       keystore_encrypt},
      {"pkp derive", "--root-key-file R --account 0x... --path 0x...",
       "PKP addresses for a root key, owning account hash and derivation path: Ethereum (the pkp_id), then Solana",
       pkp_derive},
  };
  for (command& c : core_commands())
    all.push_back(std::move(c));
  for (command& c : chain_commands())
    all.push_back(std::move(c));
  for (command& c : attest_commands())
    all.push_back(std::move(c));
  for (command& c : trigger_commands())
    all.push_back(std::move(c));
  return all;
}

}  // namespace enact::cli
