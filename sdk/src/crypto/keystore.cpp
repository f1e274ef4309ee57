// SPDX-License-Identifier: Apache-2.0
// Web3 Secret Storage v3 (enact/crypto/keystore.hpp) through OpenSSL's scrypt, PBKDF2 and
// AES-128-CTR.
#include "enact/crypto/keystore.hpp"

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/params.h>

#include <boost/json.hpp>
#include <memory>

#include "enact/codec/hex.hpp"
#include "enact/crypto/keccak.hpp"
#include "enact/crypto/random.hpp"
#include "enact/crypto/secp256k1.hpp"

namespace json = boost::json;

namespace enact::crypto::keystore {
namespace {

constexpr size_t kDkLen = 32;
constexpr size_t kKeyLen = 32;

struct ossl_deleter {
  void operator()(EVP_KDF* k) const noexcept { EVP_KDF_free(k); }
  void operator()(EVP_KDF_CTX* c) const noexcept { EVP_KDF_CTX_free(c); }
  void operator()(EVP_CIPHER_CTX* c) const noexcept { EVP_CIPHER_CTX_free(c); }
};

error bad(std::string what) { return error{make_error_code(keystore_errc::malformed), "keystore: " + what}; }

OSSL_PARAM octets(const char* key, bytes_view v) noexcept {
  static const uint8_t kEmpty = 0;
  return OSSL_PARAM_construct_octet_string(key, const_cast<uint8_t*>(v.empty() ? &kEmpty : v.data()), v.size());
}

result<Secret> derive(const char* algorithm, OSSL_PARAM* params, std::string_view what) {
  const std::unique_ptr<EVP_KDF, ossl_deleter> kdf(EVP_KDF_fetch(nullptr, algorithm, nullptr));
  if (!kdf)
    return fail(keystore_errc::backend_failed, std::string("keystore: ") + algorithm + " unavailable");
  const std::unique_ptr<EVP_KDF_CTX, ossl_deleter> ctx(EVP_KDF_CTX_new(kdf.get()));
  if (!ctx)
    return fail(keystore_errc::backend_failed, "keystore: cannot allocate a KDF context");
  Secret out = Secret::of_size(kDkLen);
  if (EVP_KDF_derive(ctx.get(), out.mutable_view().data(), kDkLen, params) != 1)
    return fail(keystore_errc::backend_failed, "keystore: " + std::string(what) + " derivation failed");
  return out;
}

result<void> check_scrypt(const scrypt_params& s, const limits& lim) {
  if (s.n < 2 || (s.n & (s.n - 1)) != 0)
    return fail(keystore_errc::malformed, "keystore: kdfparams.n must be a power of two greater than 1");
  if (s.r == 0 || s.p == 0)
    return fail(keystore_errc::malformed, "keystore: kdfparams.r and kdfparams.p must be at least 1");
  if (s.r < 4 && s.n >= (uint64_t{1} << (16 * s.r)))
    return fail(keystore_errc::malformed, "keystore: kdfparams.n must be below 2^(16·r) (RFC 7914)");
  // Work and memory computed without overflow: every factor is checked against the limit first.
  const unsigned __int128 work = static_cast<unsigned __int128>(s.n) * s.r * s.p;
  const unsigned __int128 memory =
      static_cast<unsigned __int128>(128) * s.r * (static_cast<unsigned __int128>(s.n) + s.p);
  if (work > lim.max_scrypt_work || memory > lim.max_scrypt_memory)
    return fail(keystore_errc::too_costly, "keystore: scrypt n=" + std::to_string(s.n) + " r=" + std::to_string(s.r) +
                                               " p=" + std::to_string(s.p) + " exceeds the allowed cost");
  return {};
}

result<Secret> run_kdf(const kdf_params& kdf, bytes_view salt, std::string_view password) {
  const bytes_view pw = as_bytes(password);
  if (const auto* s = std::get_if<scrypt_params>(&kdf)) {
    uint64_t n = s->n;
    uint32_t r = s->r, p = s->p;
    // OpenSSL refuses to use more than maxmem; what it needs is 128 · r · (n + p + 2) bytes.
    uint64_t maxmem = 128 * uint64_t{r} * (n + p + 2) + (uint64_t{1} << 20);
    OSSL_PARAM params[] = {octets(OSSL_KDF_PARAM_PASSWORD, pw),
                           octets(OSSL_KDF_PARAM_SALT, salt),
                           OSSL_PARAM_construct_uint64(OSSL_KDF_PARAM_SCRYPT_N, &n),
                           OSSL_PARAM_construct_uint32(OSSL_KDF_PARAM_SCRYPT_R, &r),
                           OSSL_PARAM_construct_uint32(OSSL_KDF_PARAM_SCRYPT_P, &p),
                           OSSL_PARAM_construct_uint64(OSSL_KDF_PARAM_SCRYPT_MAXMEM, &maxmem),
                           OSSL_PARAM_construct_end()};
    return derive("SCRYPT", params, "scrypt");
  }
  const auto& pb = std::get<pbkdf2_params>(kdf);
  uint64_t iterations = pb.c;
  int no_sp800_132_bounds = 1;  // keystores use 32-byte salts but any iteration count
  char digest[] = "SHA256";
  OSSL_PARAM params[] = {octets(OSSL_KDF_PARAM_PASSWORD, pw),
                         octets(OSSL_KDF_PARAM_SALT, salt),
                         OSSL_PARAM_construct_uint64(OSSL_KDF_PARAM_ITER, &iterations),
                         OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, digest, 0),
                         OSSL_PARAM_construct_int(OSSL_KDF_PARAM_PKCS5, &no_sp800_132_bounds),
                         OSSL_PARAM_construct_end()};
  return derive("PBKDF2", params, "pbkdf2");
}

// AES-128-CTR is its own inverse: the same call encrypts and decrypts.
result<void> aes_128_ctr(bytes_view key16, bytes_view iv16, bytes_view in, std::span<uint8_t> out) {
  const std::unique_ptr<EVP_CIPHER_CTX, ossl_deleter> ctx(EVP_CIPHER_CTX_new());
  int len = 0, tail = 0;
  if (!ctx || EVP_EncryptInit_ex(ctx.get(), EVP_aes_128_ctr(), nullptr, key16.data(), iv16.data()) != 1 ||
      EVP_EncryptUpdate(ctx.get(), out.data(), &len, in.data(), static_cast<int>(in.size())) != 1 ||
      EVP_EncryptFinal_ex(ctx.get(), out.data() + len, &tail) != 1 || static_cast<size_t>(len + tail) != in.size())
    return fail(keystore_errc::backend_failed, "keystore: AES-128-CTR failed");
  return {};
}

hash256 mac_of(const Secret& derived, bytes_view ciphertext) {
  bytes pre(derived.view().begin() + 16, derived.view().end());
  pre.insert(pre.end(), ciphertext.begin(), ciphertext.end());
  const hash256 mac = keccak256(pre);
  detail::secure_wipe(pre.data(), pre.size());
  return mac;
}

// --- reading ---------------------------------------------------------------------------------

result<const json::object*> object_at(const json::object& o, std::string_view key, std::string_view path) {
  const json::value* v = o.if_contains(key);
  if (v == nullptr || !v->is_object())
    return bad(std::string(path) + ": expected an object");
  return &v->get_object();
}

result<std::string_view> string_at(const json::object& o, std::string_view key, std::string_view path) {
  const json::value* v = o.if_contains(key);
  if (v == nullptr || !v->is_string())
    return bad(std::string(path) + ": expected a string");
  return std::string_view(v->get_string());
}

result<uint64_t> uint_at(const json::object& o, std::string_view key, std::string_view path) {
  const json::value* v = o.if_contains(key);
  if (v != nullptr && v->is_uint64())
    return v->get_uint64();
  if (v != nullptr && v->is_int64() && v->get_int64() >= 0)
    return static_cast<uint64_t>(v->get_int64());
  return bad(std::string(path) + ": expected an unsigned integer");
}

result<bytes> hex_at(const json::object& o, std::string_view key, std::string_view path) {
  ENACT_TRY(std::string_view text, string_at(o, key, path));
  auto b = codec::hex::decode(text, path);
  if (!b)
    return bad(b.err().message);
  return std::move(*b);
}

struct parsed {
  kdf_params kdf;
  bytes salt, iv, ciphertext, mac;
  std::optional<address> expected;
};

result<parsed> parse(std::string_view text, const limits& lim) {
  json::error_code ec;
  const json::value doc = json::parse(text, ec);
  if (ec || !doc.is_object())
    return bad("not a JSON object");
  const json::object& root = doc.get_object();
  ENACT_TRY(const uint64_t version, uint_at(root, "version", "version"));
  if (version != 3)
    return fail(keystore_errc::unsupported, "keystore: version " + std::to_string(version) + " (only 3 is read)");
  // geth writes "crypto"; early files and ethers write "Crypto".
  const char* ckey = root.contains("crypto") ? "crypto" : "Crypto";
  ENACT_TRY(const json::object* c, object_at(root, ckey, ckey));

  parsed out;
  ENACT_TRY(std::string_view cipher, string_at(*c, "cipher", "crypto.cipher"));
  if (cipher != "aes-128-ctr")
    return fail(keystore_errc::unsupported, "keystore: cipher " + std::string(cipher) + " (only aes-128-ctr is read)");
  ENACT_TRY(const json::object* cp, object_at(*c, "cipherparams", "crypto.cipherparams"));
  ENACT_TRY(out.iv, hex_at(*cp, "iv", "crypto.cipherparams.iv"));
  if (out.iv.size() != 16)
    return bad("crypto.cipherparams.iv: expected 16 bytes");
  ENACT_TRY(out.ciphertext, hex_at(*c, "ciphertext", "crypto.ciphertext"));
  if (out.ciphertext.size() != kKeyLen)
    return bad("crypto.ciphertext: expected 32 bytes (one secp256k1 key)");
  ENACT_TRY(out.mac, hex_at(*c, "mac", "crypto.mac"));
  if (out.mac.size() != 32)
    return bad("crypto.mac: expected 32 bytes");

  ENACT_TRY(std::string_view kdf, string_at(*c, "kdf", "crypto.kdf"));
  ENACT_TRY(const json::object* kp, object_at(*c, "kdfparams", "crypto.kdfparams"));
  ENACT_TRY(const uint64_t dklen, uint_at(*kp, "dklen", "crypto.kdfparams.dklen"));
  if (dklen != kDkLen)
    return bad("crypto.kdfparams.dklen: expected 32");
  ENACT_TRY(out.salt, hex_at(*kp, "salt", "crypto.kdfparams.salt"));
  if (out.salt.empty())
    return bad("crypto.kdfparams.salt: empty");
  if (kdf == "scrypt") {
    scrypt_params s;
    ENACT_TRY(s.n, uint_at(*kp, "n", "crypto.kdfparams.n"));
    ENACT_TRY(const uint64_t r, uint_at(*kp, "r", "crypto.kdfparams.r"));
    ENACT_TRY(const uint64_t p, uint_at(*kp, "p", "crypto.kdfparams.p"));
    if (r > UINT32_MAX || p > UINT32_MAX)
      return fail(keystore_errc::too_costly, "keystore: scrypt r or p out of range");
    s.r = static_cast<uint32_t>(r);
    s.p = static_cast<uint32_t>(p);
    ENACT_TRY_VOID(check_scrypt(s, lim));
    out.kdf = s;
  } else if (kdf == "pbkdf2") {
    ENACT_TRY(std::string_view prf, string_at(*kp, "prf", "crypto.kdfparams.prf"));
    if (prf != "hmac-sha256")
      return fail(keystore_errc::unsupported, "keystore: prf " + std::string(prf) + " (only hmac-sha256 is read)");
    ENACT_TRY(const uint64_t iterations, uint_at(*kp, "c", "crypto.kdfparams.c"));
    if (iterations == 0)
      return bad("crypto.kdfparams.c: must be at least 1");
    if (iterations > lim.max_pbkdf2_iterations)
      return fail(keystore_errc::too_costly,
                  "keystore: pbkdf2 c=" + std::to_string(iterations) + " exceeds the allowed cost");
    out.kdf = pbkdf2_params{static_cast<uint32_t>(iterations)};
  } else {
    return fail(keystore_errc::unsupported, "keystore: kdf " + std::string(kdf) + " (scrypt and pbkdf2 are read)");
  }

  if (const json::value* a = root.if_contains("address"); a != nullptr && !a->is_null()) {
    if (!a->is_string())
      return bad("address: expected a string");
    auto addr = codec::hex::decode_fixed<20>(std::string_view(a->get_string()), "address");
    if (!addr)
      return bad(addr.err().message);
    out.expected = *addr;
  }
  return out;
}

std::string uuid_v4(bytes_view r) {
  std::array<uint8_t, 16> b{};
  std::copy_n(r.begin(), 16, b.begin());
  b[6] = static_cast<uint8_t>((b[6] & 0x0f) | 0x40);  // version 4
  b[8] = static_cast<uint8_t>((b[8] & 0x3f) | 0x80);  // RFC 4122 variant
  const std::string h = codec::hex::encode(b);
  return h.substr(0, 8) + "-" + h.substr(8, 4) + "-" + h.substr(12, 4) + "-" + h.substr(16, 4) + "-" + h.substr(20);
}

}  // namespace

result<Secret> decrypt(std::string_view text, std::string_view password, const limits& lim) {
  ENACT_TRY(parsed p, parse(text, lim));
  ENACT_TRY(Secret derived, run_kdf(p.kdf, p.salt, password));
  const hash256 mac = mac_of(derived, p.ciphertext);
  if (!constant_time_equal(mac, p.mac))
    return fail(keystore_errc::wrong_password, "keystore: wrong password (the MAC does not match)");
  Secret key = Secret::of_size(kKeyLen);
  ENACT_TRY_VOID(aes_128_ctr(derived.view().first(16), p.iv, p.ciphertext, key.mutable_view()));
  if (!secp256k1::is_valid_private_key(key.view()))
    return fail(keystore_errc::malformed, "keystore: the decrypted bytes are not a valid secp256k1 private key");
  if (p.expected) {
    ENACT_TRY(const auto pub, secp256k1::public_key_of(key));
    if (secp256k1::to_address(pub) != *p.expected)
      return fail(keystore_errc::address_mismatch, "keystore: the key's address is 0x" +
                                                       codec::hex::encode(secp256k1::to_address(pub)) +
                                                       ", the file says 0x" + codec::hex::encode(*p.expected));
  }
  return key;
}

result<std::string> encrypt(const Secret& private_key, std::string_view password, const encrypt_options& options) {
  if (private_key.size() != kKeyLen || !secp256k1::is_valid_private_key(private_key.view()))
    return fail(keystore_errc::malformed, "keystore: the key to encrypt is not a valid secp256k1 private key");
  if (const auto* s = std::get_if<scrypt_params>(&options.kdf))
    ENACT_TRY_VOID(check_scrypt(*s, limits{.max_scrypt_memory = UINT64_MAX, .max_scrypt_work = UINT64_MAX}));
  else if (std::get<pbkdf2_params>(options.kdf).c == 0)
    return fail(keystore_errc::malformed, "keystore: pbkdf2 c must be at least 1");

  std::array<uint8_t, 32> salt{};
  std::array<uint8_t, 16> iv{};
  if (options.salt)
    salt = *options.salt;
  else
    random_bytes(salt);
  if (options.iv)
    iv = *options.iv;
  else
    random_bytes(iv);
  std::string id;
  if (options.id) {
    id = *options.id;
  } else {
    std::array<uint8_t, 16> r{};
    random_bytes(r);
    id = uuid_v4(r);
  }

  ENACT_TRY(Secret derived, run_kdf(options.kdf, salt, password));
  bytes ciphertext(kKeyLen);
  ENACT_TRY_VOID(aes_128_ctr(derived.view().first(16), iv, private_key.view(), ciphertext));
  const hash256 mac = mac_of(derived, ciphertext);
  ENACT_TRY(const auto pub, secp256k1::public_key_of(private_key));

  json::object kdfparams;
  std::string kdf_name;
  if (const auto* s = std::get_if<scrypt_params>(&options.kdf)) {
    kdf_name = "scrypt";
    kdfparams = {{"dklen", kDkLen}, {"n", s->n}, {"p", s->p}, {"r", s->r}, {"salt", codec::hex::encode(salt)}};
  } else {
    kdf_name = "pbkdf2";
    kdfparams = {{"c", std::get<pbkdf2_params>(options.kdf).c},
                 {"dklen", kDkLen},
                 {"prf", "hmac-sha256"},
                 {"salt", codec::hex::encode(salt)}};
  }
  const json::object doc{{"address", codec::hex::encode(secp256k1::to_address(pub))},
                         {"crypto",
                          {{"cipher", "aes-128-ctr"},
                           {"cipherparams", {{"iv", codec::hex::encode(iv)}}},
                           {"ciphertext", codec::hex::encode(ciphertext)},
                           {"kdf", kdf_name},
                           {"kdfparams", std::move(kdfparams)},
                           {"mac", codec::hex::encode(mac)}}},
                         {"id", id},
                         {"version", 3}};
  return json::serialize(doc);
}

}  // namespace enact::crypto::keystore
