// SPDX-License-Identifier: Apache-2.0
// The C API of enact.h over the SDK. Every entry point runs its body inside `guarded`, which turns
// any exception into an error code and a thread-local message, so nothing C++ crosses the
// interface. SDK error codes map to the header's codes by their category (`code_of`). Keys passed
// in are copied into enact::Secret, which wipes its memory when the call returns.
#include "enact.h"

#include <boost/json.hpp>

#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "enact/bytes.hpp"
#include "enact/client/api_error.hpp"
#include "enact/client/core_client.hpp"
#include "enact/client/options.hpp"
#include "enact/codec/abi.hpp"
#include "enact/codec/abi_json.hpp"
#include "enact/codec/base32.hpp"
#include "enact/codec/base58.hpp"
#include "enact/codec/base64.hpp"
#include "enact/codec/hex.hpp"
#include "enact/codec/rlp.hpp"
#include "enact/u256.hpp"
#include "enact/cron/cron.hpp"
#include "enact/address.hpp"
#include "enact/crypto/aes_gcm.hpp"
#include "enact/crypto/eip191.hpp"
#include "enact/crypto/hkdf.hpp"
#include "enact/crypto/keccak.hpp"
#include "enact/crypto/random.hpp"
#include "enact/crypto/secp256k1.hpp"
#include "enact/secret.hpp"
#include "enact/eip712/envelope.hpp"
#include "enact/eip712/typed_data.hpp"
#include "enact/ipfs/cid.hpp"
#include "enact/pkp/pkp.hpp"

namespace json = boost::json;

// The generic JSON call is the typed client's own request path (core_client::call) without a
// typed wrapper.
struct enact_core_client {
  enact::client::core_client core;
  int status = 0;
  std::string request_id;

  enact_core_client(enact::client::client_options options, enact::secret key)
      : core(std::move(options), std::move(key)) {}
};

namespace {

thread_local std::string last_error;

int set_error(int code, std::string_view message) noexcept {
  try {
    last_error.assign(message);
  } catch (...) {
    last_error.clear();  // out of memory: the code still tells what happened
  }
  return code;
}

bool is_category(const std::error_code& ec, const std::error_category& c) noexcept { return ec.category() == c; }

// The header's code for an SDK error code, by the domain the error comes from.
int code_of(const std::error_code& ec) noexcept {
  using namespace enact::detail;
  if (is_category(ec, hex_category()) || is_category(ec, address_category()) || is_category(ec, base32_category()) ||
      is_category(ec, base58_category()) || is_category(ec, base64_category()) || is_category(ec, u256_category()))
    return ENACT_ERR_INVALID_ARGUMENT;
  if (is_category(ec, eip712_category()) || is_category(ec, abi_category()) || is_category(ec, cron_category()) ||
      is_category(ec, cid_category()) || is_category(ec, rlp_category()))
    return ENACT_ERR_PARSE;
  if (is_category(ec, secp256k1_category())) {
    const auto e = static_cast<enact::secp256k1_errc>(ec.value());
    return e == enact::secp256k1_errc::invalid_private_key || e == enact::secp256k1_errc::signing_failed
               ? ENACT_ERR_CRYPTO
               : ENACT_ERR_SIGNATURE_INVALID;
  }
  if (is_category(ec, pkp_category()) || is_category(ec, hkdf_category()) || is_category(ec, random_category()) ||
      is_category(ec, aes_gcm_category()))
    return ENACT_ERR_CRYPTO;
  if (is_category(ec, envelope_category()) && ec.value() >= 1 &&
      ec.value() <= static_cast<int>(enact::envelope_errc::replayed))
    return ENACT_ERR_ENVELOPE_BASE - ec.value();
  if (is_category(ec, api_category())) {
    switch (static_cast<enact::api_errc>(ec.value())) {
      case enact::api_errc::connection_failed:
      case enact::api_errc::timeout:
        return ENACT_ERR_NETWORK;
      case enact::api_errc::bad_response:
        return ENACT_ERR_BAD_RESPONSE;
      default:
        return ENACT_ERR_HTTP;
    }
  }
  return ENACT_ERR_INTERNAL;
}

int invalid(std::string_view message) noexcept { return set_error(ENACT_ERR_INVALID_ARGUMENT, message); }

// A call refused with one of the header's codes (an argument check, an SDK failure given its own
// code): `guarded` records it.
struct refusal {
  int code;
  std::string message;
};

[[noreturn]] void refuse(int code, std::string message) { throw refusal{code, std::move(message)}; }

// Refuses a NULL argument as "<name>: NULL". An entry point checks its output first, then its
// inputs in the order of the header.
void require(const void* arg, const char* name) {
  if (arg == nullptr)
    refuse(ENACT_ERR_INVALID_ARGUMENT, std::string(name) + ": NULL");
}

// An output argument, refused when NULL, else emptied before anything can fail, so that a failed
// call leaves nothing stale in it.
void output(char* text, const char* name) {
  require(text, name);
  text[0] = '\0';
}
void output(char** allocated, const char* name) {
  require(allocated, name);
  *allocated = nullptr;
}

// The value of an SDK result; a failure is refused with `code` (the SDK's failures otherwise go
// through `.value()`, whose enact::Error `guarded` maps by code_of).
template <class T>
T value_or_refuse(enact::result<T> r, int code) {
  if (!r)
    refuse(code, r.err().message);
  return std::move(r).value();
}

// Runs an entry point's body; no exception leaves it.
template <class F>
int guarded(F&& body) noexcept {
  try {
    return body();
  } catch (const refusal& r) {
    return set_error(r.code, r.message);
  } catch (const std::bad_alloc&) {
    return set_error(ENACT_ERR_OUT_OF_MEMORY, "out of memory");
  } catch (const enact::exception& e) {
    return set_error(code_of(e.code()), e.what());
  } catch (const std::exception& e) {
    return set_error(ENACT_ERR_INTERNAL, std::string("internal error: ") + e.what());
  } catch (...) {
    return set_error(ENACT_ERR_INTERNAL, "internal error: unknown exception");
  }
}

// Returned strings carry their allocation size in a header, so enact_free can wipe them whole.
constexpr size_t kHeader = alignof(std::max_align_t);
static_assert(kHeader >= sizeof(size_t));

char* new_string(std::string_view s) {
  const size_t total = kHeader + s.size() + 1;
  auto* base = static_cast<char*>(std::malloc(total));
  if (base == nullptr)
    throw std::bad_alloc();
  std::memcpy(base, &total, sizeof total);
  char* text = base + kHeader;
  if (!s.empty())
    std::memcpy(text, s.data(), s.size());
  text[s.size()] = '\0';
  return text;
}

// Copies `s` into a fixed output of `size` bytes (terminator included).
void copy_fixed(std::string_view s, char* out, size_t size) {
  if (s.size() + 1 > size)
    throw enact::exception(std::error_code{}, "output longer than its buffer");
  std::memcpy(out, s.data(), s.size());
  out[s.size()] = '\0';
}

enact::secret key_from(const uint8_t* key32) { return enact::secret(enact::bytes_view(key32, 32)); }

// The typed-data document of the argument typed_data_json.
enact::eip712::typed_data typed_data_of(const char* typed_data_json) {
  require(typed_data_json, "typed_data_json");
  return enact::eip712::parse(typed_data_json).value();
}

// The envelope kind the argument `what` names.
enact::eip712::envelope::kind kind_of(std::string_view what, const char* primary_type) {
  if (primary_type != nullptr)
    if (const auto k = enact::eip712::envelope::kind_from_name(primary_type))
      return *k;
  refuse(ENACT_ERR_INVALID_ARGUMENT, std::string(what) + ": expected CreateWallet, ConvertAccount, AddUsageApiKey " +
                                         "or BillingAuth, got " +
                                         (primary_type ? "'" + std::string(primary_type) + "'" : std::string("NULL")));
}

uint64_t unix_now() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count());
}

enact::hash256 hash_from(const uint8_t* h32) {
  enact::hash256 h{};
  std::memcpy(h.data(), h32, h.size());
  return h;
}

std::string_view body_of(const uint8_t* body, size_t body_len) {
  if (body == nullptr && body_len != 0)
    refuse(ENACT_ERR_INVALID_ARGUMENT, "body: NULL with a non-zero length");
  return body != nullptr ? std::string_view(reinterpret_cast<const char*>(body), body_len) : std::string_view();
}

// The deployment and message of a version 2 envelope from the arguments of build_v2 / sign_v2:
// each kind takes its own members and refuses the others, so that a member given in the belief
// that it is signed never goes unsigned.
struct v2_arguments {
  enact::eip712::envelope::deployment deployment;
  enact::eip712::envelope::message_v2 message;
};

v2_arguments v2_of(enact::eip712::envelope::kind k, uint64_t issued_at, uint64_t chain_id,
                   const char* verifying_contract, const uint8_t* nonce, const uint8_t* account, const char* method,
                   const char* path, const uint8_t* body, size_t body_len) {
  using enact::eip712::envelope::kind;
  require(verifying_contract, "verifying_contract");
  v2_arguments out;
  out.deployment = {chain_id, enact::parse_address_strict(verifying_contract, "verifying_contract").value()};
  out.message.issued_at = issued_at;
  const std::string name(enact::eip712::envelope::primary_type_name(k));
  const auto absent = [&](const void* arg, const char* what) {
    if (arg != nullptr)
      refuse(ENACT_ERR_INVALID_ARGUMENT, std::string(what) + ": a " + name + " does not carry it; pass NULL");
  };
  if (k == kind::convert_account) {
    require(account, "account");
    out.message.account = hash_from(account);
  } else {
    absent(account, "account");
  }
  if (k == kind::billing_auth) {
    absent(nonce, "nonce");
    require(method, "method");
    require(path, "path");
    out.message.request = enact::eip712::envelope::bind_request(method, path, body_of(body, body_len));
  } else {
    absent(method, "method");
    absent(path, "path");
    absent(body, "body");
    if (nonce != nullptr)
      out.message.nonce = hash_from(nonce);
    else
      enact::crypto::random_bytes(out.message.nonce);
  }
  return out;
}

// Header characters a request path may not contain (CR/LF would split the request line).
std::optional<size_t> bad_path_char(std::string_view path) noexcept {
  for (size_t i = 0; i < path.size(); ++i) {
    const auto c = static_cast<unsigned char>(path[i]);
    if (c <= 0x20 || c == 0x7f)
      return i;
  }
  return std::nullopt;
}

// The docs/protocol.md §0 error body of a failed call, rebuilt from what the transport kept of it.
std::string error_body(const enact::api_error& e) {
  json::object error{{"code", e.code_name()}, {"message", e.message()}};
  if (!e.details().is_null())
    error["details"] = e.details();
  return json::serialize(json::object{{"error", std::move(error)}});
}

enact_core_client* new_client(const char* base_url, const char* api_key, const char* ca_file,
                              uint32_t connect_timeout_ms, uint32_t read_timeout_ms, uint32_t max_retries) noexcept {
  enact_core_client* client = nullptr;
  guarded([&] {
    if (base_url == nullptr)
      return invalid("base_url: NULL");
    enact::client::client_options options;
    options.base_url = base_url;
    if (ca_file != nullptr)
      options.ca_file = ca_file;
    if (connect_timeout_ms != 0)
      options.connect_timeout = std::chrono::milliseconds(connect_timeout_ms);
    if (read_timeout_ms != 0)
      options.read_timeout = std::chrono::milliseconds(read_timeout_ms);
    options.max_retries = max_retries;
    options.user_agent = "enact-c/" ENACT_VERSION_STRING;
    enact::secret key;
    if (api_key != nullptr)
      key = enact::secret(enact::as_bytes(std::string_view(api_key)));
    try {
      client = new enact_core_client(std::move(options), std::move(key));
    } catch (const enact::api_error& e) {
      // The only refusal the transport makes at construction: a base URL it cannot use.
      return set_error(ENACT_ERR_INVALID_ARGUMENT, e.message());
    }
    return ENACT_OK;
  });
  return client;
}

// One request of the JSON client: with the API key, or (by_wallet) with a BillingAuth of wallet_key.
int client_call(enact_core_client* client, const char* method, const char* path, const char* json_body, bool by_wallet,
                const uint8_t* wallet_key, char** out_json) noexcept {
  return guarded([&] {
    output(out_json, "out_json");
    require(client, "client");
    if (method == nullptr || path == nullptr)
      return invalid(method == nullptr ? "method: NULL" : "path: NULL");
    const std::string_view m = method;
    if (m != "GET" && m != "POST")
      return invalid("method: expected GET or POST, got '" + std::string(m) + "'");
    const bool is_get = m == "GET";
    const std::string_view target = path;
    if (target.empty() || target.front() != '/')
      return invalid("path: must start with '/'");
    if (const auto at = bad_path_char(target))
      return invalid("path: invalid character at offset " + std::to_string(*at));
    if (by_wallet) {
      require(wallet_key, "wallet_key");
      (void)enact::crypto::secp256k1::public_key_of(key_from(wallet_key)).value();
    }
    if (is_get && json_body != nullptr)
      return invalid("json_body: a GET request has no body; pass NULL");
    std::string_view body;
    if (!is_get) {
      body = json_body != nullptr ? std::string_view(json_body) : "{}";
      boost::system::error_code ec;
      (void)json::parse(body, ec);
      if (ec)
        return set_error(ENACT_ERR_PARSE, "json_body: not JSON (" + ec.message() + ")");
    }
    client->status = 0;
    client->request_id.clear();
    try {
      const auto answer =
          by_wallet ? client->core.call(m, target, body, key_from(wallet_key)) : client->core.call(m, target, body);
      client->status = answer.status;
      client->request_id = answer.request_id;
      *out_json = new_string(answer.body);
      return ENACT_OK;
    } catch (const enact::api_error& e) {
      client->status = e.status();
      client->request_id = e.request_id();
      const int code = code_of(e.code());
      if (code == ENACT_ERR_NETWORK)
        return set_error(code, e.what());
      if (e.status() == 0 && e.errc() == enact::api_errc::invalid_request)
        return set_error(ENACT_ERR_INVALID_ARGUMENT, e.message());
      *out_json = new_string(error_body(e));
      return set_error(code, e.what());
    }
  });
}

}  // namespace

extern "C" {

const char* enact_version(void) { return ENACT_VERSION_STRING; }

const char* enact_last_error(void) { return last_error.c_str(); }

const char* enact_error_name(int code) {
  switch (code) {
    case ENACT_OK:
      return "ok";
    case ENACT_ERR_INVALID_ARGUMENT:
      return "invalid_argument";
    case ENACT_ERR_PARSE:
      return "parse";
    case ENACT_ERR_SIGNATURE_INVALID:
      return "signature_invalid";
    case ENACT_ERR_CRYPTO:
      return "crypto";
    case ENACT_ERR_NETWORK:
      return "network";
    case ENACT_ERR_HTTP:
      return "http";
    case ENACT_ERR_BAD_RESPONSE:
      return "bad_response";
    case ENACT_ERR_OUT_OF_RANGE:
      return "out_of_range";
    case ENACT_ERR_OUT_OF_MEMORY:
      return "out_of_memory";
    case ENACT_ERR_INTERNAL:
      return "internal";
    case ENACT_ERR_ENVELOPE_TOO_LARGE:
      return "envelope_too_large";
    case ENACT_ERR_ENVELOPE_MALFORMED:
      return "envelope_malformed";
    case ENACT_ERR_ENVELOPE_TYPES_NOT_CANONICAL:
      return "envelope_types_not_canonical";
    case ENACT_ERR_ENVELOPE_WRONG_PRIMARY_TYPE:
      return "envelope_wrong_primary_type";
    case ENACT_ERR_ENVELOPE_DOMAIN_MISMATCH:
      return "envelope_domain_mismatch";
    case ENACT_ERR_ENVELOPE_CHAIN_ID_MISMATCH:
      return "envelope_chain_id_mismatch";
    case ENACT_ERR_ENVELOPE_EXPIRED:
      return "envelope_expired";
    case ENACT_ERR_ENVELOPE_SIGNATURE_MALFORMED:
      return "envelope_signature_malformed";
    case ENACT_ERR_ENVELOPE_SIGNER_MISMATCH:
      return "envelope_signer_mismatch";
    case ENACT_ERR_ENVELOPE_VERSION_REFUSED:
      return "envelope_version_refused";
    case ENACT_ERR_ENVELOPE_CONTRACT_MISMATCH:
      return "envelope_contract_mismatch";
    case ENACT_ERR_ENVELOPE_ACCOUNT_MISMATCH:
      return "envelope_account_mismatch";
    case ENACT_ERR_ENVELOPE_REQUEST_MISMATCH:
      return "envelope_request_mismatch";
    case ENACT_ERR_ENVELOPE_REPLAYED:
      return "envelope_replayed";
    default:
      return "unknown";
  }
}

void enact_free(void* p) {
  if (p == nullptr)
    return;
  char* base = static_cast<char*>(p) - kHeader;
  size_t total = 0;
  std::memcpy(&total, base, sizeof total);
  enact::detail::secure_wipe(base, total);
  std::free(base);
}

int enact_keccak256(const uint8_t* data, size_t len, uint8_t out[32]) {
  return guarded([&] {
    require(out, "out");
    if (data == nullptr && len != 0)
      return invalid("data: NULL with a non-zero length");
    const enact::hash256 h = enact::crypto::keccak256(enact::bytes_view(data, data ? len : 0));
    std::memcpy(out, h.data(), h.size());
    return ENACT_OK;
  });
}

int enact_typed_data_hash(const char* typed_data_json, uint8_t out[32]) {
  return guarded([&] {
    require(out, "out");
    std::memset(out, 0, 32);
    const auto digest = enact::eip712::digest(typed_data_of(typed_data_json)).value();
    std::memcpy(out, digest.data(), digest.size());
    return ENACT_OK;
  });
}

int enact_typed_data_sign(const char* typed_data_json, const uint8_t private_key[32],
                          char out_signature[ENACT_SIGNATURE_HEX_SIZE]) {
  return guarded([&] {
    output(out_signature, "out_signature");
    require(private_key, "private_key");
    const auto td = typed_data_of(typed_data_json);
    const auto sig = enact::eip712::sign(td, key_from(private_key)).value();
    copy_fixed(enact::codec::hex::encode_prefixed(sig.to_bytes()), out_signature, ENACT_SIGNATURE_HEX_SIZE);
    return ENACT_OK;
  });
}

int enact_typed_data_recover(const char* typed_data_json, const char* signature_hex,
                             char out_address[ENACT_ADDRESS_SIZE]) {
  return guarded([&] {
    output(out_address, "out_address");
    require(signature_hex, "signature_hex");
    const auto td = typed_data_of(typed_data_json);
    const auto sig =
        value_or_refuse(enact::codec::hex::decode_prefixed(signature_hex, "signature"), ENACT_ERR_SIGNATURE_INVALID);
    copy_fixed(enact::to_checksum_address(enact::eip712::recover(td, sig).value()), out_address, ENACT_ADDRESS_SIZE);
    return ENACT_OK;
  });
}

// ---- accounts and EIP-191 messages ----------------------------------------------------------------

int enact_private_key_address(const uint8_t private_key[32], char out_address[ENACT_ADDRESS_SIZE]) {
  return guarded([&] {
    output(out_address, "out_address");
    require(private_key, "private_key");
    const auto pub = enact::crypto::secp256k1::public_key_of(key_from(private_key)).value();
    copy_fixed(enact::to_checksum_address(enact::crypto::secp256k1::to_address(pub)), out_address, ENACT_ADDRESS_SIZE);
    return ENACT_OK;
  });
}

int enact_message_sign(const uint8_t* message, size_t len, const uint8_t private_key[32],
                       char out_signature[ENACT_SIGNATURE_HEX_SIZE]) {
  return guarded([&] {
    output(out_signature, "out_signature");
    if (message == nullptr && len != 0)
      return invalid("message: NULL with a non-zero length");
    require(private_key, "private_key");
    const auto digest = enact::crypto::personal_message_hash(enact::bytes_view(message, message ? len : 0));
    const auto sig = enact::crypto::secp256k1::sign(digest, key_from(private_key)).value();
    copy_fixed(enact::codec::hex::encode_prefixed(sig.to_bytes()), out_signature, ENACT_SIGNATURE_HEX_SIZE);
    return ENACT_OK;
  });
}

int enact_message_recover(const uint8_t* message, size_t len, const char* signature_hex,
                          char out_address[ENACT_ADDRESS_SIZE]) {
  return guarded([&] {
    output(out_address, "out_address");
    if (message == nullptr && len != 0)
      return invalid("message: NULL with a non-zero length");
    require(signature_hex, "signature_hex");
    const auto digest = enact::crypto::personal_message_hash(enact::bytes_view(message, message ? len : 0));
    const auto sig =
        value_or_refuse(enact::codec::hex::decode_prefixed(signature_hex, "signature"), ENACT_ERR_SIGNATURE_INVALID);
    copy_fixed(enact::to_checksum_address(enact::crypto::secp256k1::recover_address(digest, sig).value()), out_address,
               ENACT_ADDRESS_SIZE);
    return ENACT_OK;
  });
}

int enact_envelope_build(const char* primary_type, const char* address, uint64_t issued_at, uint64_t chain_id,
                         char** out_json) {
  return guarded([&] {
    output(out_json, "out_json");
    const auto k = kind_of("primary_type", primary_type);
    require(address, "address");
    const auto signer = enact::parse_address_strict(address, "address").value();
    *out_json = new_string(json::serialize(enact::eip712::envelope::build(k, chain_id, signer, issued_at)));
    return ENACT_OK;
  });
}

int enact_envelope_sign(const char* primary_type, const uint8_t private_key[32], uint64_t issued_at, uint64_t chain_id,
                        char** out_json) {
  return guarded([&] {
    output(out_json, "out_json");
    const auto k = kind_of("primary_type", primary_type);
    require(private_key, "private_key");
    const auto env = enact::eip712::envelope::sign(k, chain_id, key_from(private_key), issued_at).value();
    *out_json = new_string(enact::eip712::envelope::to_json(env));
    return ENACT_OK;
  });
}

int enact_envelope_build_v2(const char* primary_type, const char* address, uint64_t issued_at, uint64_t chain_id,
                            const char* verifying_contract, const uint8_t nonce[32], const uint8_t account[32],
                            const char* method, const char* path, const uint8_t* body, size_t body_len,
                            char** out_json) {
  return guarded([&] {
    output(out_json, "out_json");
    const auto k = kind_of("primary_type", primary_type);
    require(address, "address");
    const auto signer = enact::parse_address_strict(address, "address").value();
    auto [d, m] = v2_of(k, issued_at, chain_id, verifying_contract, nonce, account, method, path, body, body_len);
    m.signer = signer;
    *out_json = new_string(json::serialize(enact::eip712::envelope::build(k, d, m)));
    return ENACT_OK;
  });
}

int enact_envelope_sign_v2(const char* primary_type, const uint8_t private_key[32], uint64_t issued_at,
                           uint64_t chain_id, const char* verifying_contract, const uint8_t nonce[32],
                           const uint8_t account[32], const char* method, const char* path, const uint8_t* body,
                           size_t body_len, char** out_json) {
  return guarded([&] {
    output(out_json, "out_json");
    const auto k = kind_of("primary_type", primary_type);
    require(private_key, "private_key");
    auto [d, m] = v2_of(k, issued_at, chain_id, verifying_contract, nonce, account, method, path, body, body_len);
    const auto env = enact::eip712::envelope::sign(k, d, std::move(m), key_from(private_key)).value();
    *out_json = new_string(enact::eip712::envelope::to_json(env));
    return ENACT_OK;
  });
}

int enact_envelope_verify_v2(const char* typed_data_json, const char* signature_hex, const char* expected_primary_type,
                             uint64_t chain_id, const char* verifying_contract, const uint8_t account[32],
                             const char* method, const char* path, const uint8_t* body, size_t body_len, int accept_v1,
                             uint64_t now, uint64_t max_skew, const char* expected_signer,
                             char out_address[ENACT_ADDRESS_SIZE], int* out_version, uint8_t out_nonce[32]) {
  return guarded([&] {
    output(out_address, "out_address");
    if (out_version != nullptr)
      *out_version = 0;
    if (out_nonce != nullptr)
      std::memset(out_nonce, 0, 32);
    require(typed_data_json, "typed_data_json");
    require(signature_hex, "signature_hex");
    enact::eip712::envelope::expectation want{};
    want.expected = kind_of("expected_primary_type", expected_primary_type);
    want.chain_id = chain_id;
    require(verifying_contract, "verifying_contract");
    want.verifying_contract = enact::parse_address_strict(verifying_contract, "verifying_contract").value();
    if (account != nullptr)
      want.account = hash_from(account);
    if ((method == nullptr) != (path == nullptr))
      return invalid("method and path: give both (the request a BillingAuth authorizes) or neither");
    if (method != nullptr)
      want.request = enact::eip712::envelope::bind_request(method, path, body_of(body, body_len));
    else if (body != nullptr)
      return invalid("body: given without method and path");
    want.accept_v1 = accept_v1 != 0;
    want.now = now != 0 ? now : unix_now();
    want.max_skew = max_skew != 0 ? max_skew : enact::eip712::envelope::kDefaultMaxSkew;
    if (expected_signer != nullptr)
      want.expected_signer = enact::parse_address_strict(expected_signer, "expected_signer").value();
    const auto v = enact::eip712::envelope::check(typed_data_json, signature_hex, want).value();
    copy_fixed(enact::to_checksum_address(v.signer), out_address, ENACT_ADDRESS_SIZE);
    if (out_version != nullptr)
      *out_version = static_cast<int>(v.version);
    if (out_nonce != nullptr && v.nonce)
      std::memcpy(out_nonce, v.nonce->data(), 32);
    return ENACT_OK;
  });
}

int enact_envelope_verify(const char* typed_data_json, const char* signature_hex, const char* expected_primary_type,
                          uint64_t chain_id, uint64_t now, uint64_t max_skew, const char* expected_signer,
                          char out_address[ENACT_ADDRESS_SIZE]) {
  return guarded([&] {
    output(out_address, "out_address");
    require(typed_data_json, "typed_data_json");
    require(signature_hex, "signature_hex");
    enact::eip712::envelope::expectation want{};
    want.expected = kind_of("expected_primary_type", expected_primary_type);
    want.chain_id = chain_id;
    want.now = now != 0 ? now : unix_now();
    want.max_skew = max_skew != 0 ? max_skew : enact::eip712::envelope::kDefaultMaxSkew;
    if (expected_signer != nullptr)
      want.expected_signer = enact::parse_address_strict(expected_signer, "expected_signer").value();
    const auto signer = enact::eip712::envelope::verify(typed_data_json, signature_hex, want).value();
    copy_fixed(enact::to_checksum_address(signer), out_address, ENACT_ADDRESS_SIZE);
    return ENACT_OK;
  });
}

int enact_abi_encode_call(const char* signature, const char* args_json, char** out_hex) {
  return guarded([&] {
    output(out_hex, "out_hex");
    require(signature, "signature");
    require(args_json, "args_json");
    const auto fn = enact::codec::abi::parse_signature(signature).value();
    boost::system::error_code ec;
    const json::value args = json::parse(args_json, ec);
    if (ec)
      return set_error(ENACT_ERR_PARSE, "args_json: not JSON (" + ec.message() + ")");
    if (!args.is_array())
      return set_error(ENACT_ERR_PARSE, "args_json: expected a JSON array");
    const json::array& list = args.get_array();
    if (list.size() != fn.inputs.size())
      return set_error(ENACT_ERR_PARSE, "args_json: " + fn.canonical() + " takes " + std::to_string(fn.inputs.size()) +
                                            " arguments, got " + std::to_string(list.size()));
    std::vector<enact::codec::abi::value> values;
    values.reserve(list.size());
    for (size_t i = 0; i < list.size(); ++i)
      values.push_back(enact::codec::abi::from_json(fn.inputs[i], list[i], "arg " + std::to_string(i)).value());
    *out_hex =
        new_string(enact::codec::hex::encode_prefixed(enact::codec::abi::encode_call(fn.canonical(), values).value()));
    return ENACT_OK;
  });
}

int enact_cid_v0(const uint8_t* data, size_t len, char out_cid[ENACT_CID_V0_SIZE]) {
  return guarded([&] {
    output(out_cid, "out_cid");
    if (data == nullptr && len != 0)
      return invalid("data: NULL with a non-zero length");
    copy_fixed(enact::ipfs::cid_of(enact::bytes_view(data, data ? len : 0)), out_cid, ENACT_CID_V0_SIZE);
    return ENACT_OK;
  });
}

int enact_cron_next(const char* expression, int64_t after, int64_t* out_next) {
  return guarded([&] {
    require(out_next, "out_next");
    *out_next = 0;
    require(expression, "expression");
    const auto schedule = enact::cron::parse(expression).value();
    const auto next = enact::cron::next_after(schedule, std::chrono::sys_seconds(std::chrono::seconds(after)));
    if (!next)
      return set_error(ENACT_ERR_OUT_OF_RANGE,
                       "expression: no fire time after " + std::to_string(after) + " within years 1 to 9999");
    *out_next = next->time_since_epoch().count();
    return ENACT_OK;
  });
}

int enact_pkp_account_wallet_address(const uint8_t root_key[32], const uint8_t account_hash[32],
                                     const uint8_t derivation_path[32], char out_address[ENACT_ADDRESS_SIZE]) {
  return guarded([&] {
    output(out_address, "out_address");
    require(root_key, "root_key");
    require(account_hash, "account_hash");
    require(derivation_path, "derivation_path");
    enact::pkp::account_hash account{};
    std::memcpy(account.data(), account_hash, account.size());
    enact::pkp::derivation_path path{};
    std::memcpy(path.data(), derivation_path, path.size());
    const auto wallet = enact::pkp::wallet_address(key_from(root_key), account, path).value();
    copy_fixed(enact::to_checksum_address(wallet), out_address, ENACT_ADDRESS_SIZE);
    return ENACT_OK;
  });
}

int enact_pkp_api_mode_path(const uint8_t api_key_hash[32], uint64_t index, uint8_t out_path[32]) {
  return guarded([&] {
    require(out_path, "out_path");
    require(api_key_hash, "api_key_hash");
    enact::hash256 key_hash{};
    std::memcpy(key_hash.data(), api_key_hash, key_hash.size());
    const enact::pkp::derivation_path path = enact::pkp::api_mode_path(key_hash, index);
    std::memcpy(out_path, path.data(), path.size());
    return ENACT_OK;
  });
}

enact_core_client* enact_core_client_new(const char* base_url, const char* api_key) {
  const enact::client::client_options defaults;
  return new_client(base_url, api_key, nullptr, static_cast<uint32_t>(defaults.connect_timeout.count()),
                    static_cast<uint32_t>(defaults.read_timeout.count()), defaults.max_retries);
}

enact_core_client* enact_core_client_new_ex(const char* base_url, const char* api_key, const char* ca_file,
                                            uint32_t connect_timeout_ms, uint32_t read_timeout_ms,
                                            uint32_t max_retries) {
  return new_client(base_url, api_key, ca_file, connect_timeout_ms, read_timeout_ms, max_retries);
}

int enact_core_client_set_api_key(enact_core_client* client, const char* api_key) {
  return guarded([&] {
    require(client, "client");
    client->core.set_api_key(api_key != nullptr ? enact::secret(enact::as_bytes(std::string_view(api_key)))
                                                : enact::secret());
    return ENACT_OK;
  });
}

int enact_core_client_call(enact_core_client* client, const char* method, const char* path, const char* json_body,
                           char** out_json) {
  return client_call(client, method, path, json_body, false, nullptr, out_json);
}

int enact_core_client_call_wallet(enact_core_client* client, const char* method, const char* path,
                                  const char* json_body, const uint8_t wallet_key[32], char** out_json) {
  return client_call(client, method, path, json_body, true, wallet_key, out_json);
}

int enact_core_client_status(const enact_core_client* client) { return client != nullptr ? client->status : 0; }

const char* enact_core_client_request_id(const enact_core_client* client) {
  return client != nullptr ? client->request_id.c_str() : "";
}

void enact_core_client_free(enact_core_client* client) { delete client; }

}  // extern "C"
