// SPDX-License-Identifier: Apache-2.0
// The C API of enact.h over the SDK: the library's own calls (version, errors, enact_free) and what
// every entry point shares (entry_point.hpp). Keys passed in are copied into enact::Secret, which
// wipes its memory when the call returns.
#include <cstdlib>
#include <cstring>

#include "enact.h"
#include "enact/address.hpp"
#include "enact/client/api_error.hpp"
#include "enact/codec/abi.hpp"
#include "enact/codec/base32.hpp"
#include "enact/codec/base58.hpp"
#include "enact/codec/base64.hpp"
#include "enact/codec/hex.hpp"
#include "enact/codec/rlp.hpp"
#include "enact/cron/cron.hpp"
#include "enact/crypto/aes_gcm.hpp"
#include "enact/crypto/hkdf.hpp"
#include "enact/crypto/random.hpp"
#include "enact/crypto/secp256k1.hpp"
#include "enact/eip712/envelope.hpp"
#include "enact/eip712/typed_data.hpp"
#include "enact/ipfs/cid.hpp"
#include "enact/pkp/pkp.hpp"
#include "enact/u256.hpp"
#include "entry_point.hpp"

namespace enact_c {
namespace {

thread_local std::string last_error;

bool is_category(const std::error_code& ec, const std::error_category& c) noexcept { return ec.category() == c; }

// Returned strings carry their allocation size in a header, so enact_free can wipe them whole.
constexpr size_t kHeader = alignof(std::max_align_t);
static_assert(kHeader >= sizeof(size_t));

}  // namespace

int set_error(int code, std::string_view message) noexcept {
  try {
    last_error.assign(message);
  } catch (...) {
    last_error.clear();  // out of memory: the code still tells what happened
  }
  return code;
}

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

void require(const void* arg, const char* name) {
  if (arg == nullptr)
    refuse(ENACT_ERR_INVALID_ARGUMENT, std::string(name) + ": NULL");
}

void output(char* text, const char* name) {
  require(text, name);
  text[0] = '\0';
}
void output(char** allocated, const char* name) {
  require(allocated, name);
  *allocated = nullptr;
}

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

void copy_fixed(std::string_view s, char* out, size_t size) {
  if (s.size() + 1 > size)
    throw enact::Error(std::error_code{}, "output longer than its buffer");
  std::memcpy(out, s.data(), s.size());
  out[s.size()] = '\0';
}

enact::Secret key_from(const uint8_t* key32) { return enact::Secret(enact::bytes_view(key32, 32)); }

}  // namespace enact_c

using namespace enact_c;

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

}  // extern "C"
