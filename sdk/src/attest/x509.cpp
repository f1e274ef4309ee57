// SPDX-License-Identifier: Apache-2.0
// OpenSSL side of the attest module (see x509.hpp).
#include "x509.hpp"

#include <openssl/asn1.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/objects.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include <openssl/core_names.h>
#include <openssl/params.h>

#include <climits>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <map>
#include <mutex>

#include "enact/codec/base64.hpp"
#include "enact/crypto/sha2.hpp"

namespace enact::attest::detail {

namespace {

struct bio_free {
  void operator()(BIO* p) const noexcept { BIO_free(p); }
};
using bio_ptr = std::unique_ptr<BIO, bio_free>;

bio_ptr memory_bio(const void* data, size_t size) {
  if (size > static_cast<size_t>(INT_MAX))
    return nullptr;
  return bio_ptr(BIO_new_mem_buf(size == 0 ? "" : data, static_cast<int>(size)));
}

int64_t asn1_time_unix(const ASN1_TIME* t) {
  std::tm tm{};
  if (t == nullptr || ASN1_TIME_to_tm(t, &tm) != 1)
    return 0;
  return unix_from_civil(tm.tm_year + 1900, static_cast<unsigned>(tm.tm_mon + 1), static_cast<unsigned>(tm.tm_mday),
                         tm.tm_hour, tm.tm_min, tm.tm_sec);
}

std::string name_text(const X509_NAME* name) {
  bio_ptr out(BIO_new(BIO_s_mem()));
  if (!out || X509_NAME_print_ex(out.get(), name, 0, XN_FLAG_RFC2253) < 0)
    return {};
  char* data = nullptr;
  const long n = BIO_get_mem_data(out.get(), &data);
  return n > 0 ? std::string(data, static_cast<size_t>(n)) : std::string();
}

}  // namespace

std::string short_name(X509* cert) {
  if (cert == nullptr)
    return "certificate";
  const X509_NAME* subject = X509_get_subject_name(cert);
  const int i = X509_NAME_get_index_by_NID(subject, NID_commonName, -1);
  if (i >= 0) {
    const ASN1_STRING* s = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subject, i));
    const unsigned char* p = ASN1_STRING_get0_data(s);
    return "'" + std::string(reinterpret_cast<const char*>(p), static_cast<size_t>(ASN1_STRING_length(s))) + "'";
  }
  return "'" + name_text(subject) + "'";
}

namespace {

// --- parsed certificates and CRLs, shared by content ------------------------------------------
//
// OpenSSL 3.0 takes about 200 µs to decode a P-256 certificate (its public key goes through the
// provider decoder framework) and 100 µs for a PCK CRL: more than all the signature checks of a
// quote. The same Intel CA certificates, TCB signing certificate and CRLs arrive with every quote
// and collateral, so parsed objects are shared by the SHA-256 of their DER bytes. Entries are
// immutable once parsed (X509 caches its extension data under its own lock); the map is bounded.

template <class T, T* (*D2i)(T**, const unsigned char**, long), void (*Free)(T*), int (*UpRef)(T*)>
class parsed_cache {
 public:
  struct release {
    void operator()(T* p) const noexcept { Free(p); }
  };
  using ptr = std::unique_ptr<T, release>;

  /// A reference to the object the DER bytes encode (the whole of them), or null.
  T* get(bytes_view der) {
    if (der.empty() || der.size() > static_cast<size_t>(LONG_MAX))
      return nullptr;
    const hash256 key = crypto::sha256(der);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (const auto it = entries_.find(key); it != entries_.end()) {
        UpRef(it->second.get());
        return it->second.get();
      }
    }
    const unsigned char* p = der.data();
    ptr parsed(D2i(nullptr, &p, static_cast<long>(der.size())));
    ERR_clear_error();
    if (!parsed || p != der.data() + der.size())
      return nullptr;
    std::lock_guard<std::mutex> lock(mutex_);
    if (entries_.size() >= kCapacity)
      entries_.clear();
    T* out = parsed.get();
    UpRef(out);  // one reference for the caller, the other for the cache
    entries_.emplace(key, std::move(parsed));
    return out;
  }

 private:
  static constexpr size_t kCapacity = 256;
  std::mutex mutex_;
  std::map<hash256, ptr> entries_;
};

x509_ptr cached_cert(bytes_view der) {
  static parsed_cache<X509, d2i_X509, X509_free, X509_up_ref> cache;
  X509* cert = cache.get(der);
  if (cert != nullptr)
    X509_check_purpose(cert, -1, 0);  // computes the extension cache before any sharing
  return x509_ptr(cert);
}

crl_ptr cached_crl(bytes_view der) {
  static parsed_cache<X509_CRL, d2i_X509_CRL, X509_CRL_free, X509_CRL_up_ref> cache;
  return crl_ptr(cache.get(der));
}

// --- DER reading for the SGX extensions ------------------------------------------------------

struct der {
  uint8_t tag = 0;
  bytes_view value;
};

/// Reads one TLV at the front of `in` (definite lengths up to 4 bytes), advancing it.
bool read_der(bytes_view& in, der& out) {
  if (in.size() < 2)
    return false;
  out.tag = in[0];
  size_t len = in[1];
  size_t header = 2;
  if (len & 0x80) {
    const size_t n = len & 0x7f;
    if (n == 0 || n > 4 || in.size() < 2 + n)
      return false;
    len = 0;
    for (size_t i = 0; i < n; ++i)
      len = (len << 8) | in[2 + i];
    header += n;
  }
  if (in.size() - header < len)
    return false;
  out.value = in.subspan(header, len);
  in = in.subspan(header + len);
  return true;
}

/// Reads one SEQUENCE { OBJECT IDENTIFIER, value } at the front of `in`, advancing it: the shape
/// of every entry of the SGX extension and of its TCB.
bool read_oid_entry(bytes_view& in, der& oid, der& value) {
  der entry;
  if (!read_der(in, entry) || entry.tag != 0x30)
    return false;
  bytes_view body = entry.value;
  return read_der(body, oid) && oid.tag == 0x06 && read_der(body, value);
}

/// A non-negative DER INTEGER up to 16 bits.
bool der_uint16(bytes_view v, uint16_t& out) {
  if (v.empty() || v.size() > 3 || (v[0] & 0x80))
    return false;
  uint32_t x = 0;
  for (uint8_t b : v)
    x = (x << 8) | b;
  if (x > 0xffff)
    return false;
  out = static_cast<uint16_t>(x);
  return true;
}

// 1.2.840.113741.1.13.1 (Intel SGX extensions), DER content bytes.
constexpr uint8_t kSgxOid[] = {0x2a, 0x86, 0x48, 0x86, 0xf8, 0x4d, 0x01, 0x0d, 0x01};

/// The arc after 1.2.840.113741.1.13.1[.prefix], or -1.
int sgx_arc(bytes_view oid, std::initializer_list<uint8_t> prefix) {
  const size_t base = sizeof(kSgxOid) + prefix.size();
  if (oid.size() != base + 1 || std::memcmp(oid.data(), kSgxOid, sizeof(kSgxOid)) != 0)
    return -1;
  size_t i = sizeof(kSgxOid);
  for (uint8_t p : prefix)
    if (oid[i++] != p)
      return -1;
  return oid[base] < 0x80 ? oid[base] : -1;
}

template <size_t N>
bool octets(bytes_view v, std::array<uint8_t, N>& out) {
  if (v.size() != N)
    return false;
  std::memcpy(out.data(), v.data(), N);
  return true;
}

}  // namespace

result<std::vector<x509_ptr>> parse_pem_chain(std::string_view pem, std::string_view what) {
  std::vector<x509_ptr> out;
  static constexpr std::string_view kBegin = "-----BEGIN CERTIFICATE-----";
  static constexpr std::string_view kEnd = "-----END CERTIFICATE-----";
  size_t pos = 0;
  while (true) {
    const size_t b = pem.find(kBegin, pos);
    if (b == std::string_view::npos)
      break;
    const size_t e = pem.find(kEnd, b);
    const std::string index = std::to_string(out.size());
    if (e == std::string_view::npos)
      return fail(attest_errc::bad_certificate, std::string(what) + ": certificate " + index + " has no END line");
    // RFC 7468 §2: base64 lines between the encapsulation boundaries.
    std::string body;
    body.reserve(e - b);
    for (char c : pem.substr(b + kBegin.size(), e - b - kBegin.size()))
      if (c != '\n' && c != '\r' && c != ' ' && c != '\t')
        body.push_back(c);
    auto der = codec::base64::decode(body);
    x509_ptr cert = der ? cached_cert(*der) : nullptr;
    if (!cert)
      return fail(attest_errc::bad_certificate, std::string(what) + ": certificate " + index + " does not parse");
    out.push_back(std::move(cert));
    pos = e + kEnd.size();
  }
  if (out.empty())
    return fail(attest_errc::bad_certificate, std::string(what) + ": no PEM certificate");
  return out;
}

result<x509_ptr> parse_der_cert(bytes_view der_bytes, std::string_view what) {
  x509_ptr cert = cached_cert(der_bytes);
  if (!cert)
    return fail(attest_errc::bad_certificate, std::string(what) + ": DER certificate does not parse");
  return cert;
}

result<crl_ptr> parse_crl(bytes_view data, std::string_view what) {
  crl_ptr crl;
  static constexpr std::string_view kPem = "-----BEGIN X509 CRL-----";
  if (as_chars(data).find(kPem) != std::string_view::npos) {
    bio_ptr bio = memory_bio(data.data(), data.size());
    crl.reset(bio ? PEM_read_bio_X509_CRL(bio.get(), nullptr, nullptr, nullptr) : nullptr);
    ERR_clear_error();
  } else {
    crl = cached_crl(data);
  }
  if (!crl)
    return fail(attest_errc::bad_certificate, std::string(what) + ": CRL does not parse");
  return crl;
}

bytes cert_der(X509* cert) {
  unsigned char* buf = nullptr;
  const int n = i2d_X509(cert, &buf);
  if (n <= 0)
    return {};
  bytes out(buf, buf + n);
  OPENSSL_free(buf);
  return out;
}

std::string subject_of(X509* cert) { return name_text(X509_get_subject_name(cert)); }
std::string issuer_of(X509* cert) { return name_text(X509_get_issuer_name(cert)); }
int64_t not_before(X509* cert) { return asn1_time_unix(X509_get0_notBefore(cert)); }
int64_t not_after(X509* cert) { return asn1_time_unix(X509_get0_notAfter(cert)); }

int64_t unix_from_civil(int64_t y, unsigned m, unsigned d, int hh, int mm, int ss) {
  // days_from_civil (H. Hinnant, "chrono-Compatible Low-Level Date Algorithms")
  y -= m <= 2 ? 1 : 0;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  const int64_t days = era * 146097 + static_cast<int64_t>(doe) - 719468;
  return days * 86400 + int64_t{hh} * 3600 + int64_t{mm} * 60 + ss;
}

std::string format_time(int64_t t) {
  const int64_t days = t >= 0 ? t / 86400 : (t - 86399) / 86400;
  int64_t secs = t - days * 86400;
  // civil_from_days (same source)
  const int64_t z = days + 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const auto doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  const unsigned d = doy - (153 * mp + 2) / 5 + 1;
  const unsigned m = mp < 10 ? mp + 3 : mp - 9;
  const int64_t y = static_cast<int64_t>(yoe) + era * 400 + (m <= 2 ? 1 : 0);
  char buf[96];
  std::snprintf(buf, sizeof buf, "%04lld-%02u-%02uT%02lld:%02lld:%02lldZ", static_cast<long long>(y), m, d,
                static_cast<long long>(secs / 3600), static_cast<long long>(secs / 60 % 60),
                static_cast<long long>(secs % 60));
  return buf;
}

std::string verify_chain(const std::vector<x509_ptr>& chain, X509* root, int64_t now,
                         const std::vector<X509_CRL*>& crls) {
  if (chain.empty())
    return "no certificate";
  struct store_free {
    void operator()(X509_STORE* p) const noexcept { X509_STORE_free(p); }
  };
  struct ctx_free {
    void operator()(X509_STORE_CTX* p) const noexcept { X509_STORE_CTX_free(p); }
  };
  struct stack_free {
    void operator()(STACK_OF(X509) * p) const noexcept { sk_X509_free(p); }
  };
  std::unique_ptr<X509_STORE, store_free> store(X509_STORE_new());
  std::unique_ptr<X509_STORE_CTX, ctx_free> ctx(X509_STORE_CTX_new());
  std::unique_ptr<STACK_OF(X509), stack_free> untrusted(sk_X509_new_null());
  if (!store || !ctx || !untrusted || X509_STORE_add_cert(store.get(), root) != 1)
    return "out of memory";
  for (X509_CRL* crl : crls)
    if (X509_STORE_add_crl(store.get(), crl) != 1)
      return "out of memory";
  for (size_t i = 1; i < chain.size(); ++i)
    if (sk_X509_push(untrusted.get(), chain[i].get()) <= 0)
      return "out of memory";
  if (X509_STORE_CTX_init(ctx.get(), store.get(), chain[0].get(), untrusted.get()) != 1)
    return "out of memory";
  X509_VERIFY_PARAM* param = X509_STORE_CTX_get0_param(ctx.get());
  X509_VERIFY_PARAM_set_time(param, static_cast<time_t>(now));
  if (!crls.empty())
    X509_VERIFY_PARAM_set_flags(param, X509_V_FLAG_CRL_CHECK | X509_V_FLAG_CRL_CHECK_ALL);
  const int ok = X509_verify_cert(ctx.get());
  ERR_clear_error();
  if (ok == 1)
    return {};
  const int err = X509_STORE_CTX_get_error(ctx.get());
  X509* at = X509_STORE_CTX_get_current_cert(ctx.get());
  const std::string who = short_name(at);
  const std::string when = " at " + format_time(now);
  switch (err) {
    case X509_V_ERR_CERT_HAS_EXPIRED:
      return "certificate " + who + " expired " + format_time(not_after(at)) + " (checked" + when + ")";
    case X509_V_ERR_CERT_NOT_YET_VALID:
      return "certificate " + who + " is not valid before " + format_time(not_before(at)) + " (checked" + when + ")";
    case X509_V_ERR_CRL_HAS_EXPIRED:
      return "the CRL for certificate " + who + " has expired (checked" + when + ")";
    case X509_V_ERR_CRL_NOT_YET_VALID:
      return "the CRL for certificate " + who + " is not yet valid (checked" + when + ")";
    case X509_V_ERR_CERT_REVOKED:
      return "certificate " + who + " is revoked";
    case X509_V_ERR_UNABLE_TO_GET_CRL:
      return "no CRL from the issuer of certificate " + who;
    default:
      return "certificate " + who + ": " + X509_verify_cert_error_string(err);
  }
}

pkey_ptr p256_key(const std::array<uint8_t, 64>& xy) {
  // From its parameters rather than a DER SubjectPublicKeyInfo: OpenSSL 3.0's decoders take
  // several times longer than the import (and than the signature check).
  struct ctx_free {
    void operator()(EVP_PKEY_CTX* p) const noexcept { EVP_PKEY_CTX_free(p); }
  };
  thread_local std::unique_ptr<EVP_PKEY_CTX, ctx_free> ctx(EVP_PKEY_CTX_new_from_name(nullptr, "EC", nullptr));
  if (!ctx || EVP_PKEY_fromdata_init(ctx.get()) != 1)
    return nullptr;
  uint8_t point[65];
  point[0] = 0x04;  // uncompressed (SEC 1 §2.3.3)
  std::memcpy(point + 1, xy.data(), 64);
  char group[] = "prime256v1";
  OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_PKEY_PARAM_GROUP_NAME, group, 0),
                         OSSL_PARAM_construct_octet_string(OSSL_PKEY_PARAM_PUB_KEY, point, sizeof point),
                         OSSL_PARAM_construct_end()};
  EVP_PKEY* key = nullptr;
  if (EVP_PKEY_fromdata(ctx.get(), &key, EVP_PKEY_PUBLIC_KEY, params) != 1)
    key = nullptr;
  ERR_clear_error();  // a point off the curve
  return pkey_ptr(key);
}

bytes ecdsa_der(const std::array<uint8_t, 64>& sig) {
  auto integer = [](const uint8_t* v) {
    size_t skip = 0;
    while (skip < 31 && v[skip] == 0)
      ++skip;
    bytes out{0x02};
    const bool pad = (v[skip] & 0x80) != 0;
    out.push_back(static_cast<uint8_t>(32 - skip + (pad ? 1 : 0)));
    if (pad)
      out.push_back(0);
    out.insert(out.end(), v + skip, v + 32);
    return out;
  };
  const bytes r = integer(sig.data());
  const bytes s = integer(sig.data() + 32);
  bytes out{0x30, static_cast<uint8_t>(r.size() + s.size())};
  out.insert(out.end(), r.begin(), r.end());
  out.insert(out.end(), s.begin(), s.end());
  return out;
}

bool verify_p256(EVP_PKEY* key, bytes_view message, const std::array<uint8_t, 64>& signature) {
  if (key == nullptr)
    return false;
  struct md_free {
    void operator()(EVP_MD_CTX* p) const noexcept { EVP_MD_CTX_free(p); }
  };
  thread_local std::unique_ptr<EVP_MD_CTX, md_free> ctx(EVP_MD_CTX_new());
  if (!ctx || EVP_MD_CTX_reset(ctx.get()) != 1)
    return false;
  const bytes sig = ecdsa_der(signature);
  static const uint8_t kEmpty = 0;
  const bool ok = EVP_DigestVerifyInit(ctx.get(), nullptr, EVP_sha256(), nullptr, key) == 1 &&
                  EVP_DigestVerify(ctx.get(), sig.data(), sig.size(), message.empty() ? &kEmpty : message.data(),
                                   message.size()) == 1;
  ERR_clear_error();
  return ok;
}

std::optional<pck_facts> read_pck_facts(X509* leaf, std::string& error) {
  pck_facts f;
  f.subject = subject_of(leaf);
  f.issuer = issuer_of(leaf);
  f.not_before = not_before(leaf);
  f.not_after = not_after(leaf);

  X509_EXTENSION* ext = nullptr;
  for (int i = 0, n = X509_get_ext_count(leaf); i < n; ++i) {
    X509_EXTENSION* e = X509_get_ext(leaf, i);
    const ASN1_OBJECT* obj = X509_EXTENSION_get_object(e);
    unsigned char* oid_der = nullptr;
    const int len = i2d_ASN1_OBJECT(obj, &oid_der);
    // DER of the OID: 06 <len> <content>
    const bool match =
        len == 2 + static_cast<int>(sizeof(kSgxOid)) && std::memcmp(oid_der + 2, kSgxOid, sizeof(kSgxOid)) == 0;
    OPENSSL_free(oid_der);
    if (match) {
      ext = e;
      break;
    }
  }
  if (ext == nullptr) {
    error = "no SGX extension (1.2.840.113741.1.13.1)";
    return std::nullopt;
  }
  const ASN1_OCTET_STRING* data = X509_EXTENSION_get_data(ext);
  bytes_view in(ASN1_STRING_get0_data(data), static_cast<size_t>(ASN1_STRING_length(data)));
  der outer;
  if (!read_der(in, outer) || outer.tag != 0x30) {
    error = "SGX extension is not a SEQUENCE";
    return std::nullopt;
  }
  bool have_tcb = false, have_fmspc = false, have_pce_id = false;
  bytes_view items = outer.value;
  while (!items.empty()) {
    der oid, value;
    if (!read_oid_entry(items, oid, value)) {
      error = "malformed SGX extension entry";
      return std::nullopt;
    }
    switch (sgx_arc(oid.value, {})) {
      case 1:  // PPID
        f.ppid.assign(value.value.begin(), value.value.end());
        break;
      case 2: {  // TCB: comp 01..16 SVNs, PCESVN, CPUSVN
        bytes_view comps = value.value;
        size_t seen = 0;
        while (!comps.empty()) {
          der coid, cval;
          if (!read_oid_entry(comps, coid, cval)) {
            error = "malformed SGX TCB entry";
            return std::nullopt;
          }
          const int arc = sgx_arc(coid.value, {0x02});
          uint16_t svn = 0;
          if (arc >= 1 && arc <= 16) {
            if (cval.tag != 0x02 || !der_uint16(cval.value, svn) || svn > 0xff) {
              error = "SGX TCB comp " + std::to_string(arc) + " SVN is not a byte";
              return std::nullopt;
            }
            f.tcb_components[static_cast<size_t>(arc - 1)] = static_cast<uint8_t>(svn);
            ++seen;
          } else if (arc == 17) {
            if (cval.tag != 0x02 || !der_uint16(cval.value, f.pce_svn)) {
              error = "PCESVN is not a 16-bit integer";
              return std::nullopt;
            }
            ++seen;
          } else if (arc == 18) {
            if (cval.tag != 0x04 || !octets(cval.value, f.cpu_svn)) {
              error = "CPUSVN is not 16 bytes";
              return std::nullopt;
            }
            ++seen;
          }
        }
        have_tcb = seen == 18;
        break;
      }
      case 3:  // PCE-ID
        have_pce_id = value.tag == 0x04 && octets(value.value, f.pce_id);
        break;
      case 4:  // FMSPC
        have_fmspc = value.tag == 0x04 && octets(value.value, f.fmspc);
        break;
      default:
        break;
    }
  }
  if (!have_tcb || !have_fmspc || !have_pce_id) {
    error = !have_tcb ? "SGX extension lacks a complete TCB"
                      : (!have_fmspc ? "SGX extension lacks a 6-byte FMSPC" : "SGX extension lacks a 2-byte PCE-ID");
    return std::nullopt;
  }
  return f;
}

}  // namespace enact::attest::detail
