// SPDX-License-Identifier: Apache-2.0
// Ed25519 through OpenSSL's EVP_PKEY interface (EVP_PKEY_ED25519, one-shot EVP_DigestSign with
// no digest, as RFC 8032 pure EdDSA requires). The seed is loaded with
// EVP_PKEY_new_raw_private_key; OpenSSL keeps its own copy of it and wipes that copy when the
// key is freed.
#include "enact/crypto/ed25519.hpp"

#include <openssl/evp.h>

#include <memory>

namespace enact::crypto::ed25519 {
namespace {

struct evp_deleter {
  void operator()(EVP_PKEY* k) const noexcept { EVP_PKEY_free(k); }
  void operator()(EVP_MD_CTX* c) const noexcept { EVP_MD_CTX_free(c); }
};
using pkey_ptr = std::unique_ptr<EVP_PKEY, evp_deleter>;
using md_ctx_ptr = std::unique_ptr<EVP_MD_CTX, evp_deleter>;

result<pkey_ptr> private_key(const Secret& seed) {
  if (seed.size() != kSeedSize)
    return fail(ed25519_errc::bad_seed_size, "Ed25519 seed: must be 32 bytes, got " + std::to_string(seed.size()));
  pkey_ptr key(EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nullptr, seed.view().data(), seed.size()));
  if (!key)
    return fail(ed25519_errc::backend_failed, "Ed25519: OpenSSL could not load the seed");
  return key;
}

}  // namespace

result<public_key> public_key_of(const Secret& seed) {
  ENACT_TRY(const pkey_ptr key, private_key(seed));
  public_key out{};
  size_t len = out.size();
  if (EVP_PKEY_get_raw_public_key(key.get(), out.data(), &len) != 1 || len != out.size())
    return fail(ed25519_errc::backend_failed, "Ed25519: OpenSSL could not give the public key");
  return out;
}

result<signature> sign(bytes_view message, const Secret& seed) {
  ENACT_TRY(const pkey_ptr key, private_key(seed));
  md_ctx_ptr ctx(EVP_MD_CTX_new());
  signature out{};
  size_t len = out.size();
  if (!ctx || EVP_DigestSignInit(ctx.get(), nullptr, nullptr, nullptr, key.get()) != 1 ||
      EVP_DigestSign(ctx.get(), out.data(), &len, message.data(), message.size()) != 1 || len != out.size())
    return fail(ed25519_errc::backend_failed, "Ed25519: OpenSSL could not sign");
  return out;
}

bool verify(bytes_view message, bytes_view sig, const public_key& key) noexcept {
  if (sig.size() != kSignatureSize)
    return false;
  const pkey_ptr pub(EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nullptr, key.data(), key.size()));
  if (!pub)
    return false;
  const md_ctx_ptr ctx(EVP_MD_CTX_new());
  if (!ctx || EVP_DigestVerifyInit(ctx.get(), nullptr, nullptr, nullptr, pub.get()) != 1)
    return false;
  return EVP_DigestVerify(ctx.get(), sig.data(), sig.size(), message.data(), message.size()) == 1;
}

}  // namespace enact::crypto::ed25519
