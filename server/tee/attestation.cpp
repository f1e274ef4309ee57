// SPDX-License-Identifier: Apache-2.0
#include "tee/attestation.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/bn.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <boost/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

#include "tee/errors.hpp"
#include "enact/codec/hex.hpp"
#include "enact/crypto/random.hpp"
#include "enact/crypto/sha2.hpp"
#include "tee/tee.hpp"

namespace enact::tee {

// --- the defaults of a TEE that cannot attest ---------------------------------------------------

result<quote_response> tee::quote(const report_data&) const {
  return fail(tee_errc::unavailable, "the " + std::string(kind()) + " TEE cannot attest");
}

result<app_info> tee::info() const {
  return fail(tee_errc::unavailable, "the " + std::string(kind()) + " TEE has no app info");
}

const evidence_dir& tee::evidences() const noexcept {
  static const evidence_dir none;
  return none;
}

// --- names, types, binding ----------------------------------------------------------------------

namespace {

namespace json = boost::json;

// Evidence files are a few KiB (a certificate chain, a quote with its event log).
constexpr size_t kMaxEvidenceFile = size_t{4} << 20;

bool name_char(char c) noexcept {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
}

error os_error(std::string what) { return fail(tee_errc::failed, std::move(what) + ": " + std::strerror(errno)); }

struct fd_closer {
  int fd;
  ~fd_closer() {
    if (fd >= 0)
      ::close(fd);
  }
};

}  // namespace

bool is_evidence_name(std::string_view name) noexcept {
  if (name.empty() || name.size() > 128 || name.front() == '.')
    return false;
  return std::all_of(name.begin(), name.end(), name_char);
}

std::string_view evidence_content_type(std::string_view name) noexcept {
  if (name.ends_with(".json"))
    return "application/json";
  if (name.ends_with(".pem"))
    return "application/x-pem-file";
  if (name.ends_with(".txt"))
    return "text/plain; charset=utf-8";
  return "application/octet-stream";
}

report_data evidence_report_data(std::string_view sha256sum_txt) noexcept {
  report_data out{};
  const hash256 h = crypto::sha256(as_bytes(sha256sum_txt));
  std::copy(h.begin(), h.end(), out.begin());
  return out;
}

// --- the served directory -----------------------------------------------------------------------

result<std::vector<std::string>> evidence_dir::list() const {
  if (!configured())
    return fail(tee_errc::not_found, "no evidence files are configured on this server");
  const int dfd = ::open(path_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0)
    return fail(tee_errc::unavailable, std::string("the evidence directory cannot be read: ") + std::strerror(errno));
  DIR* d = ::fdopendir(dfd);
  if (d == nullptr) {
    ::close(dfd);
    return fail(tee_errc::unavailable, "the evidence directory cannot be read");
  }
  std::vector<std::string> names;
  while (const dirent* e = ::readdir(d)) {
    const std::string_view name = e->d_name;
    struct stat st {};
    if (is_evidence_name(name) && ::fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
      names.emplace_back(name);
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

result<evidence_file> evidence_dir::read(std::string_view name) const {
  if (!is_evidence_name(name))
    return fail(tee_errc::invalid_argument,
                "path: not an evidence file name (letters, digits, '.', '_' and '-' only, not "
                "starting with '.')");
  if (!configured())
    return fail(tee_errc::not_found, "no evidence files are configured on this server");
  const int dfd = ::open(path_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0)
    return fail(tee_errc::unavailable, std::string("the evidence directory cannot be read: ") + std::strerror(errno));
  const fd_closer dir_guard{dfd};
  const std::string n(name);
  // O_NOFOLLOW: a symbolic link planted in the directory never leads the server elsewhere.
  const int fd = ::openat(dfd, n.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  const std::string missing = "no evidence file '" + n + "'";
  if (fd < 0)
    return fail(tee_errc::not_found, missing);
  const fd_closer file_guard{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
    return fail(tee_errc::not_found, missing);
  if (static_cast<uint64_t>(st.st_size) > kMaxEvidenceFile)
    return fail(tee_errc::unavailable, "evidence file '" + n + "' is larger than 4 MiB");
  evidence_file f{n, std::string(evidence_content_type(n)), {}};
  f.body.resize(static_cast<size_t>(st.st_size));
  size_t got = 0;
  while (got < f.body.size()) {
    const ssize_t r = ::read(fd, f.body.data() + got, f.body.size() - got);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      break;
    got += static_cast<size_t>(r);
  }
  f.body.resize(got);  // a file shortened while read is served as it now is
  return f;
}

// --- the development set ------------------------------------------------------------------------

namespace {

result<std::string> read_small_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return os_error("cannot open " + path);
  const fd_closer guard{fd};
  std::string out;
  char buf[8192];
  for (;;) {
    const ssize_t r = ::read(fd, buf, sizeof buf);
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0)
      return os_error("cannot read " + path);
    if (r == 0)
      break;
    out.append(buf, static_cast<size_t>(r));
    if (out.size() > kMaxEvidenceFile)
      return fail(tee_errc::failed, path + ": larger than 4 MiB");
  }
  return out;
}

/// Replaces `path` by `text` (written to a temporary file of this process, then renamed), mode
/// 0644, so a reader never sees half a file.
result<void> write_file(const std::string& path, std::string_view text) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0)
    return os_error("cannot create " + tmp);
  size_t done = 0;
  bool ok = true;
  while (ok && done < text.size()) {
    const ssize_t w = ::write(fd, text.data() + done, text.size() - done);
    if (w < 0 && errno == EINTR)
      continue;
    ok = w > 0;
    if (ok)
      done += static_cast<size_t>(w);
  }
  ok = ok && ::fchmod(fd, 0644) == 0 && ::fsync(fd) == 0;
  ::close(fd);
  if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) {
    const error e = os_error("cannot write " + path);
    ::unlink(tmp.c_str());
    return e;
  }
  return {};
}

bool exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

struct pkey_free {
  void operator()(EVP_PKEY* k) const noexcept { EVP_PKEY_free(k); }
};
struct x509_free {
  void operator()(X509* x) const noexcept { X509_free(x); }
};
struct bio_free {
  void operator()(BIO* b) const noexcept { BIO_free(b); }
};
using x509_ptr = std::unique_ptr<X509, x509_free>;

/// True when `pem` holds a certificate that has not expired.
bool usable_certificate(const std::string& pem) {
  std::unique_ptr<BIO, bio_free> in(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  if (!in)
    return false;
  x509_ptr cert(PEM_read_bio_X509(in.get(), nullptr, nullptr, nullptr));
  return cert && X509_cmp_current_time(X509_get0_notAfter(cert.get())) > 0;
}

bool add_extension(X509* cert, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, cert, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
  if (ext == nullptr)
    return false;
  const bool ok = X509_add_ext(cert, ext, -1) == 1;
  X509_EXTENSION_free(ext);
  return ok;
}

/// A self-signed P-256 certificate for `domain`, valid for a year, as PEM. The key is dropped
/// with the EVP_PKEY: nothing serves TLS with it.
result<std::string> self_signed_certificate(std::string_view domain) {
  const auto openssl_failed = [](const char* step) {
    return fail(tee_errc::failed, std::string("development certificate: ") + step + " failed");
  };
  std::unique_ptr<EVP_PKEY, pkey_free> key(EVP_EC_gen("P-256"));
  x509_ptr cert(X509_new());
  if (!key || !cert)
    return openssl_failed("key generation");
  std::array<uint8_t, 16> serial{};
  crypto::random_bytes(serial);
  serial[0] &= 0x7f;  // a positive INTEGER (RFC 5280 §4.1.2.2)
  BIGNUM* bn = BN_bin2bn(serial.data(), static_cast<int>(serial.size()), nullptr);
  const bool serial_ok = bn != nullptr && BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert.get()));
  BN_free(bn);
  const std::string d(domain);
  X509_NAME* name = X509_get_subject_name(cert.get());
  const auto* cn = reinterpret_cast<const unsigned char*>(d.c_str());
  const auto* org = reinterpret_cast<const unsigned char*>("enact simulated TEE (development only)");
  if (!serial_ok || X509_set_version(cert.get(), 2) != 1 ||
      X509_gmtime_adj(X509_getm_notBefore(cert.get()), -300) == nullptr ||
      X509_gmtime_adj(X509_getm_notAfter(cert.get()), 365L * 24 * 3600) == nullptr ||
      X509_set_pubkey(cert.get(), key.get()) != 1 ||
      X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC, org, -1, -1, 0) != 1 ||
      X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, cn, -1, -1, 0) != 1 ||
      X509_set_issuer_name(cert.get(), name) != 1 ||
      !add_extension(cert.get(), NID_basic_constraints, "critical,CA:FALSE") ||
      !add_extension(cert.get(), NID_key_usage, "critical,digitalSignature") ||
      !add_extension(cert.get(), NID_ext_key_usage, "serverAuth") ||
      !add_extension(cert.get(), NID_subject_alt_name, "DNS:" + d))
    return openssl_failed("certificate construction");
  if (X509_sign(cert.get(), key.get(), EVP_sha256()) == 0)
    return openssl_failed("signing");
  std::unique_ptr<BIO, bio_free> out(BIO_new(BIO_s_mem()));
  if (!out || PEM_write_bio_X509(out.get(), cert.get()) != 1)
    return openssl_failed("PEM encoding");
  char* data = nullptr;
  const long n = BIO_get_mem_data(out.get(), &data);
  return std::string(data, static_cast<size_t>(n));
}

std::string fake_acme_account() {
  // The `.invalid` top-level domain cannot resolve (RFC 2606), so this URI can never be taken
  // for an account of a real certificate authority, nor match a CAA accounturi.
  return json::serialize(
             json::object{{"uri", "https://acme.invalid/acme/acct/enact-simulated-not-a-real-account"},
                          {"simulated", true},
                          {"note",
                           "Development evidence of enact-server's simulated TEE: no ACME account exists and "
                           "the certificate beside this file is self-signed."}}) +
         "\n";
}

}  // namespace

result<std::string> sha256sum_of(const std::string& dir, const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) {
    ENACT_TRY(const std::string body, read_small_file(dir + "/" + n));
    out.append(codec::hex::encode(crypto::sha256(as_bytes(body)))).append("  ").append(n).append("\n");
  }
  return out;
}

result<void> write_development_evidence(const std::string& dir, std::string_view domain, const quote_response& q) {
  const std::string cert_name = "cert-" + std::string(domain) + ".pem";
  if (domain.empty() || !is_evidence_name(cert_name))
    return fail(tee_errc::invalid_argument, "evidence domain: '" + std::string(domain) + "' is not a plain host name");
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST)
    return os_error("cannot create " + dir);

  const std::string cert_path = dir + "/" + cert_name;
  bool fresh_cert = !exists(cert_path);
  if (!fresh_cert) {
    ENACT_TRY(const std::string pem, read_small_file(cert_path));
    fresh_cert = !usable_certificate(pem);
  }
  if (fresh_cert) {
    ENACT_TRY(const std::string pem, self_signed_certificate(domain));
    ENACT_TRY_VOID(write_file(cert_path, pem));
  }
  const std::string account_path = dir + "/acme-account.json";
  if (!exists(account_path))
    ENACT_TRY_VOID(write_file(account_path, fake_acme_account()));

  // The file list and order of dstack-ingress: `sha256sum acme-account.json cert-*.pem`.
  ENACT_TRY(const std::string sums, sha256sum_of(dir, {"acme-account.json", cert_name}));
  ENACT_TRY_VOID(write_file(dir + "/sha256sum.txt", sums));
  const report_data rd = evidence_report_data(sums);
  // The shape of a GetQuote answer, which dstack-ingress stores as quote.json (hex without 0x).
  const json::object quote_json{{"quote", codec::hex::encode(q.quote)},
                                {"event_log", q.event_log},
                                {"report_data", codec::hex::encode(rd)},
                                {"vm_config", q.vm_config}};
  return write_file(dir + "/quote.json", json::serialize(quote_json));
}

}  // namespace enact::tee
