// SPDX-License-Identifier: Apache-2.0
// SHA-2 through OpenSSL EVP. In OpenSSL 3 the SHA256()/SHA384() one-shots fetch the algorithm on
// every call (about twice the cost of hashing 200 bytes), so the EVP_MDs are fetched once per
// process, the one-shots reuse one context per thread, and each streaming hasher owns a context.
#include "enact/crypto/sha2.hpp"

#include <openssl/evp.h>

#include <new>

namespace enact::crypto {

namespace {
const uint8_t kEmpty[1] = {0};

const uint8_t* data_or_empty(bytes_view data) noexcept { return data.empty() ? kEmpty : data.data(); }

/// Fetched once and kept for the life of the process; falls back to the built-in object.
const EVP_MD* fetch(const char* name, const EVP_MD* fallback) noexcept {
  const EVP_MD* md = EVP_MD_fetch(nullptr, name, nullptr);
  return md != nullptr ? md : fallback;
}
const EVP_MD* sha256_md() noexcept {
  static const EVP_MD* md = fetch("SHA2-256", EVP_sha256());
  return md;
}
const EVP_MD* sha384_md() noexcept {
  static const EVP_MD* md = fetch("SHA2-384", EVP_sha384());
  return md;
}

/// One EVP_MD_CTX per thread for the one-shots, freed when the thread ends.
struct thread_context {
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  ~thread_context() { EVP_MD_CTX_free(ctx); }
};

template <size_t N>
std::array<uint8_t, N> digest(const EVP_MD* md, bytes_view data) noexcept {
  std::array<uint8_t, N> out{};
  unsigned len = 0;
  thread_local thread_context tc;
  if (tc.ctx != nullptr && EVP_DigestInit_ex2(tc.ctx, md, nullptr) == 1) {
    EVP_DigestUpdate(tc.ctx, data_or_empty(data), data.size());
    EVP_DigestFinal_ex(tc.ctx, out.data(), &len);
  } else {
    EVP_Digest(data_or_empty(data), data.size(), out.data(), &len, md, nullptr);
  }
  return out;
}

EVP_MD_CTX* evp(void* p) noexcept { return static_cast<EVP_MD_CTX*>(p); }
}  // namespace

hash256 sha256(bytes_view data) noexcept { return digest<32>(sha256_md(), data); }

hash384 sha384(bytes_view data) noexcept { return digest<48>(sha384_md(), data); }

// `context` is never defined: the pointer it types is an EVP_MD_CTX*, converted at the boundary.
void sha256_hasher::context_deleter::operator()(context* c) const noexcept { EVP_MD_CTX_free(evp(c)); }

sha256_hasher::sha256_hasher() {
  EVP_MD_CTX* c = EVP_MD_CTX_new();
  if (c == nullptr || EVP_DigestInit_ex2(c, sha256_md(), nullptr) != 1) {
    EVP_MD_CTX_free(c);
    throw std::bad_alloc();
  }
  ctx_.reset(reinterpret_cast<context*>(c));
}

sha256_hasher::~sha256_hasher() = default;
sha256_hasher::sha256_hasher(sha256_hasher&&) noexcept = default;
sha256_hasher& sha256_hasher::operator=(sha256_hasher&&) noexcept = default;

sha256_hasher& sha256_hasher::update(bytes_view data) noexcept {
  if (!data.empty())
    EVP_DigestUpdate(evp(ctx_.get()), data.data(), data.size());
  return *this;
}

hash256 sha256_hasher::finalize() noexcept {
  hash256 out{};
  unsigned len = 0;
  EVP_MD_CTX* c = evp(ctx_.get());
  EVP_DigestFinal_ex(c, out.data(), &len);
  EVP_DigestInit_ex2(c, sha256_md(), nullptr);
  return out;
}

}  // namespace enact::crypto
