// SPDX-License-Identifier: Apache-2.0
// Everything the crypto module takes from OpenSSL: wiping and constant-time comparison for
// `Secret`, the CSPRNG, HKDF-SHA256 (RFC 5869) and AES-256-GCM (SP 800-38D). OpenSSL headers stay
// in this file so SDK consumers do not inherit them.
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/params.h>
#include <openssl/rand.h>

#include <algorithm>
#include <climits>
#include <memory>
#include <string>

#include "enact/crypto/aes_gcm.hpp"
#include "enact/crypto/hkdf.hpp"
#include "enact/crypto/random.hpp"
#include "enact/secret.hpp"

namespace enact {

// ---------------------------------------------------------------------------------------------
// Secret support

void detail::secure_wipe(void* p, size_t n) noexcept {
  if (p != nullptr && n != 0)
    OPENSSL_cleanse(p, n);
}

bool constant_time_equal(bytes_view a, bytes_view b) noexcept {
  if (a.size() != b.size())
    return false;
  if (a.empty())
    return true;
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace enact

namespace enact::crypto {

// ---------------------------------------------------------------------------------------------
// CSPRNG

void random_bytes(std::span<uint8_t> out) {
  // RAND_bytes takes an int length; draw large requests in pieces.
  while (!out.empty()) {
    const size_t n = std::min<size_t>(out.size(), INT_MAX);
    if (RAND_bytes(out.data(), static_cast<int>(n)) != 1)
      throw Error(make_error_code(random_errc::generator_failed), "random_bytes: the OpenSSL random generator failed");
    out = out.subspan(n);
  }
}

Secret random_secret(size_t n) {
  Secret s = Secret::of_size(n);
  random_bytes(s.mutable_view());
  return s;
}

// ---------------------------------------------------------------------------------------------
// HKDF-SHA256

namespace {

struct kdf_deleter {
  void operator()(EVP_KDF* k) const noexcept { EVP_KDF_free(k); }
  void operator()(EVP_KDF_CTX* c) const noexcept { EVP_KDF_CTX_free(c); }
  void operator()(EVP_CIPHER_CTX* c) const noexcept { EVP_CIPHER_CTX_free(c); }
  void operator()(EVP_CIPHER* c) const noexcept { EVP_CIPHER_free(c); }
};

// Fetching an algorithm walks the provider tables; do it once per process (thread-safe static
// initialisation; fetched objects are immutable and shareable across threads).
EVP_KDF* hkdf_algorithm() noexcept {
  static const std::unique_ptr<EVP_KDF, kdf_deleter> kdf(EVP_KDF_fetch(nullptr, "HKDF", nullptr));
  return kdf.get();
}

EVP_CIPHER* aes_256_gcm() noexcept {
  static const std::unique_ptr<EVP_CIPHER, kdf_deleter> cipher(EVP_CIPHER_fetch(nullptr, "AES-256-GCM", nullptr));
  return cipher.get();
}

OSSL_PARAM octets(const char* key, bytes_view v) noexcept {
  // OSSL_PARAM is not const-correct; OpenSSL only reads these buffers.
  return OSSL_PARAM_construct_octet_string(key, const_cast<uint8_t*>(v.data()), v.size());
}

}  // namespace

result<Secret> hkdf_sha256(bytes_view ikm, bytes_view salt, bytes_view info, size_t length) {
  if (length == 0 || length > kHkdfSha256MaxLength)
    return fail(hkdf_errc::bad_length, "hkdf_sha256: length must be 1.." + std::to_string(kHkdfSha256MaxLength) +
                                           ", got " + std::to_string(length));
  EVP_KDF* kdf = hkdf_algorithm();
  if (kdf == nullptr)
    return fail(hkdf_errc::backend_failed, "hkdf_sha256: HKDF unavailable");
  const std::unique_ptr<EVP_KDF_CTX, kdf_deleter> ctx(EVP_KDF_CTX_new(kdf));
  if (!ctx)
    return fail(hkdf_errc::backend_failed, "hkdf_sha256: cannot allocate context");

  // An empty octet string for the key is valid for HKDF; salt and info are omitted when empty
  // (the RFC defines an absent salt as HashLen zeros, and OpenSSL does the same).
  static const uint8_t kEmpty = 0;
  OSSL_PARAM params[5];
  size_t n = 0;
  char digest[] = "SHA256";
  params[n++] = OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, digest, 0);
  params[n++] = octets(OSSL_KDF_PARAM_KEY, ikm.empty() ? bytes_view(&kEmpty, 0) : ikm);
  if (!salt.empty())
    params[n++] = octets(OSSL_KDF_PARAM_SALT, salt);
  if (!info.empty())
    params[n++] = octets(OSSL_KDF_PARAM_INFO, info);
  params[n] = OSSL_PARAM_construct_end();

  Secret out = Secret::of_size(length);
  if (EVP_KDF_derive(ctx.get(), out.mutable_view().data(), length, params) != 1)
    return fail(hkdf_errc::backend_failed, "hkdf_sha256: derivation failed");
  return out;
}

// ---------------------------------------------------------------------------------------------
// AES-256-GCM

namespace aes_gcm {
namespace {

result<void> check_key(const Secret& key) {
  if (key.size() != kKeySize)
    return fail(aes_gcm_errc::bad_key_size, "aes_gcm: key must be 32 bytes, got " + std::to_string(key.size()));
  return {};
}

error backend(const char* step) {
  return fail(aes_gcm_errc::backend_failed, std::string("aes_gcm: ") + step + " failed");
}

bool fits_int(size_t n) { return n <= static_cast<size_t>(INT_MAX); }

struct gcm_setup {
  EVP_CIPHER* cipher = nullptr;
  std::unique_ptr<EVP_CIPHER_CTX, kdf_deleter> ctx;
};

/// The cipher and a fresh context for one operation on `data_size` bytes with `aad_size` bytes of
/// associated data (OpenSSL takes their lengths as int).
result<gcm_setup> gcm_start(size_t data_size, size_t aad_size) {
  if (!fits_int(data_size) || !fits_int(aad_size))
    return backend("input size check");
  EVP_CIPHER* cipher = aes_256_gcm();
  if (cipher == nullptr)
    return backend("cipher fetch");
  std::unique_ptr<EVP_CIPHER_CTX, kdf_deleter> ctx(EVP_CIPHER_CTX_new());
  if (!ctx)
    return backend("context allocation");
  return gcm_setup{cipher, std::move(ctx)};
}

}  // namespace

result<bytes> encrypt_with_nonce(const Secret& key32, bytes_view nonce12, bytes_view plaintext, bytes_view aad) {
  ENACT_TRY_VOID(check_key(key32));
  if (nonce12.size() != kNonceSize)
    return fail(aes_gcm_errc::bad_nonce_size, "aes_gcm: nonce must be 12 bytes, got " + std::to_string(nonce12.size()));
  ENACT_TRY(const gcm_setup gcm, gcm_start(plaintext.size(), aad.size()));
  EVP_CIPHER* cipher = gcm.cipher;
  const auto& ctx = gcm.ctx;

  bytes sealed(kNonceSize + plaintext.size() + kTagSize);
  std::copy(nonce12.begin(), nonce12.end(), sealed.begin());
  uint8_t* ct = sealed.data() + kNonceSize;
  int len = 0;
  // The default GCM IV length is 12 bytes, so no explicit IVLEN control is needed.
  if (EVP_EncryptInit_ex2(ctx.get(), cipher, key32.view().data(), nonce12.data(), nullptr) != 1)
    return backend("encrypt init");
  if (!aad.empty() && EVP_EncryptUpdate(ctx.get(), nullptr, &len, aad.data(), static_cast<int>(aad.size())) != 1)
    return backend("aad update");
  if (!plaintext.empty() &&
      EVP_EncryptUpdate(ctx.get(), ct, &len, plaintext.data(), static_cast<int>(plaintext.size())) != 1)
    return backend("encrypt update");
  if (EVP_EncryptFinal_ex(ctx.get(), ct + plaintext.size(), &len) != 1)
    return backend("encrypt final");
  if (EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_GET_TAG, static_cast<int>(kTagSize), ct + plaintext.size()) != 1)
    return backend("tag extraction");
  return sealed;
}

result<bytes> encrypt(const Secret& key32, bytes_view plaintext, bytes_view aad) {
  ENACT_TRY_VOID(check_key(key32));
  nonce n;
  random_bytes(n);
  return encrypt_with_nonce(key32, n, plaintext, aad);
}

result<bytes> decrypt(const Secret& key32, bytes_view sealed, bytes_view aad) {
  ENACT_TRY_VOID(check_key(key32));
  if (sealed.size() < kOverhead)
    return fail(aes_gcm_errc::truncated,
                "aes_gcm: sealed data must be at least 28 bytes, got " + std::to_string(sealed.size()));
  const bytes_view nonce12 = sealed.first(kNonceSize);
  const bytes_view ct = sealed.subspan(kNonceSize, sealed.size() - kOverhead);
  const bytes_view tag = sealed.last(kTagSize);
  ENACT_TRY(const gcm_setup gcm, gcm_start(ct.size(), aad.size()));
  EVP_CIPHER* cipher = gcm.cipher;
  const auto& ctx = gcm.ctx;

  bytes plain(ct.size());
  int len = 0;
  if (EVP_DecryptInit_ex2(ctx.get(), cipher, key32.view().data(), nonce12.data(), nullptr) != 1)
    return backend("decrypt init");
  if (!aad.empty() && EVP_DecryptUpdate(ctx.get(), nullptr, &len, aad.data(), static_cast<int>(aad.size())) != 1)
    return backend("aad update");
  if (!ct.empty() && EVP_DecryptUpdate(ctx.get(), plain.data(), &len, ct.data(), static_cast<int>(ct.size())) != 1)
    return backend("decrypt update");
  if (EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_TAG, static_cast<int>(kTagSize),
                          const_cast<uint8_t*>(tag.data())) != 1)
    return backend("tag setup");
  if (EVP_DecryptFinal_ex(ctx.get(), plain.data() + plain.size(), &len) != 1) {
    // The unauthenticated plaintext must not outlive the failed check.
    detail::secure_wipe(plain.data(), plain.size());
    return fail(aes_gcm_errc::authentication_failed,
                "aes_gcm: authentication failed (wrong key, wrong associated data, or tampered "
                "ciphertext)");
  }
  return plain;
}

}  // namespace aes_gcm

}  // namespace enact::crypto
