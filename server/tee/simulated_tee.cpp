#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/errors.hpp"
#include "enact/crypto/aes_gcm.hpp"
#include "enact/crypto/random.hpp"
#include "enact/crypto/secret.hpp"
#include "enact/pkp/pkp.hpp"
#include "tee/tee.hpp"

namespace enact::tee {
namespace {

constexpr size_t kRootKeySize = 32;

class simulated_tee final : public tee {
 public:
  explicit simulated_tee(Secret root) : root_(std::move(root)) {}

  std::string_view kind() const noexcept override { return "simulated"; }

  result<address> wallet_address(const hash256& path) const override {
    return pkp::wallet_address(root_, path);
  }

  result<secp256k1::signature> sign_digest(const hash256& path,
                                           const hash256& digest) const override {
    ENACT_TRY(const Secret key, pkp::signing_key(root_, path));
    return secp256k1::sign(digest, key);
  }

  result<secp256k1::public_key> public_key(const hash256& path) const override {
    ENACT_TRY(const Secret key, pkp::signing_key(root_, path));
    return secp256k1::public_key_of(key);
  }

  result<bytes> encrypt(const hash256& path, bytes_view plaintext) const override {
    ENACT_TRY(const Secret key, pkp::symmetric_key(root_, path));
    return aes_gcm::encrypt(key, plaintext);
  }

  result<Secret> export_signing_key(const hash256& path) const override {
    return pkp::signing_key(root_, path);
  }

  result<bytes> decrypt(const hash256& path, bytes_view sealed) const override {
    ENACT_TRY(const Secret key, pkp::symmetric_key(root_, path));
    return aes_gcm::decrypt(key, sealed);
  }

 private:
  Secret root_;
};

error os_error(const std::string& what) {
  return fail(api_errc::internal, what + ": " + std::strerror(errno));
}

}  // namespace

result<std::unique_ptr<tee>> open_simulated(const std::string& data_dir) {
  const std::string path = data_dir + "/tee-root.key";
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0 && errno == ENOENT) {
    // First start: create the key exclusively, so two starting servers never hold two keys.
    Secret fresh = Secret::of_size(kRootKeySize);
    random_bytes(fresh.mutable_view());
    const std::string tmp = path + ".tmp";
    const int wfd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (wfd < 0)
      return os_error("cannot create " + tmp);
    const bool ok = ::write(wfd, fresh.view().data(), kRootKeySize) ==
                        static_cast<ssize_t>(kRootKeySize) &&
                    ::fsync(wfd) == 0;
    ::close(wfd);
    if (!ok || ::link(tmp.c_str(), path.c_str()) != 0) {
      const error e = os_error("cannot write " + path);
      ::unlink(tmp.c_str());
      if (errno != EEXIST)
        return e;
    }
    ::unlink(tmp.c_str());
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  }
  if (fd < 0)
    return os_error("cannot open " + path);
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    return os_error("cannot stat " + path);
  }
  if ((st.st_mode & 077) != 0) {
    ::close(fd);
    return fail(api_errc::internal, path + ": readable by group or others (mode " +
                                         std::to_string(st.st_mode & 0777) +
                                         "); refusing to use it, chmod 600 it");
  }
  if (st.st_size != static_cast<off_t>(kRootKeySize)) {
    ::close(fd);
    return fail(api_errc::internal, path + ": expected " + std::to_string(kRootKeySize) +
                                         " bytes, found " + std::to_string(st.st_size));
  }
  Secret root = Secret::of_size(kRootKeySize);
  const ssize_t n = ::read(fd, root.mutable_view().data(), kRootKeySize);
  ::close(fd);
  if (n != static_cast<ssize_t>(kRootKeySize))
    return fail(api_errc::internal, path + ": short read");
  return std::unique_ptr<tee>(std::make_unique<simulated_tee>(std::move(root)));
}

}  // namespace enact::tee
