// SPDX-License-Identifier: Apache-2.0
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "tee/errors.hpp"
#include "enact/crypto/random.hpp"
#include "enact/secret.hpp"
#include "tee/pkp_tee.hpp"
#include "tee/recorded.hpp"
#include "tee/tee.hpp"

namespace enact::tee {
namespace {

constexpr size_t kRootKeySize = 32;

class simulated_tee final : public detail::pkp_tee {
 public:
  simulated_tee(Secret root, detail::recorded_attestation recorded, evidence_dir evidences)
      : pkp_tee(std::move(root)), recorded_(std::move(recorded)), evidences_(std::move(evidences)) {}

  std::string_view kind() const noexcept override { return "simulated"; }

  // Whatever the report data, the answer is the recorded quote (whose own report_data is all
  // zero): this machine has no TEE to bind it. vm_config says so.
  result<quote_response> quote(const report_data&) const override { return recorded_.quote; }

  result<app_info> info() const override { return recorded_.info; }

  const evidence_dir& evidences() const noexcept override { return evidences_; }

 private:
  detail::recorded_attestation recorded_;
  evidence_dir evidences_;
};

error os_error(const std::string& what) { return fail(tee_errc::failed, what + ": " + std::strerror(errno)); }

/// The root key of `<data_dir>/tee-root.key` (tee.hpp, open_simulated).
result<Secret> load_root_key(const std::string& data_dir) {
  const std::string path = data_dir + "/tee-root.key";
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0 && errno == ENOENT) {
    // First start: create the key exclusively, so two starting servers never hold two keys.
    Secret fresh = Secret::of_size(kRootKeySize);
    crypto::random_bytes(fresh.mutable_view());
    const std::string tmp = path + ".tmp";
    const int wfd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (wfd < 0)
      return os_error("cannot create " + tmp);
    const bool ok =
        ::write(wfd, fresh.view().data(), kRootKeySize) == static_cast<ssize_t>(kRootKeySize) && ::fsync(wfd) == 0;
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
    return fail(tee_errc::failed, path + ": readable by group or others (mode " + std::to_string(st.st_mode & 0777) +
                                      "); refusing to use it, chmod 600 it");
  }
  if (st.st_size != static_cast<off_t>(kRootKeySize)) {
    ::close(fd);
    return fail(tee_errc::failed,
                path + ": expected " + std::to_string(kRootKeySize) + " bytes, found " + std::to_string(st.st_size));
  }
  Secret root = Secret::of_size(kRootKeySize);
  const ssize_t n = ::read(fd, root.mutable_view().data(), kRootKeySize);
  ::close(fd);
  if (n != static_cast<ssize_t>(kRootKeySize))
    return fail(tee_errc::failed, path + ": short read");
  return root;
}

}  // namespace

result<std::unique_ptr<tee>> open_simulated(const std::string& data_dir) {
  simulated_options opts;
  opts.write_evidence = false;
  return open_simulated(data_dir, opts);
}

result<std::unique_ptr<tee>> open_simulated(const std::string& data_dir, const simulated_options& opts) {
  ENACT_TRY(Secret root, load_root_key(data_dir));
  ENACT_TRY(detail::recorded_attestation recorded, detail::load_recorded());
  evidence_dir evidences;
  if (!opts.evidence_dir.empty()) {
    evidences = evidence_dir(opts.evidence_dir);
  } else if (opts.write_evidence) {
    const std::string dir = data_dir + "/evidences";
    ENACT_TRY_VOID(write_development_evidence(dir, opts.domain, recorded.quote));
    evidences = evidence_dir(dir);
  }
  return std::unique_ptr<tee>(
      std::make_unique<simulated_tee>(std::move(root), std::move(recorded), std::move(evidences)));
}

}  // namespace enact::tee
