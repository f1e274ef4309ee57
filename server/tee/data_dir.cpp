// SPDX-License-Identifier: Apache-2.0
// docs/protocol.md §1 "data from before": a data directory records the PKP derivation rule its keys were
// made under, in `<data_dir>/key-derivation`. Wallets registered under the earlier path-only
// rule (salt "enact/pkp/v1") would get other addresses under the per-account rule, so a
// directory holding state but no record is refused rather than silently re-keyed.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "tee/errors.hpp"
#include "enact/pkp/pkp.hpp"
#include "tee/tee.hpp"

namespace enact::tee {
namespace {

constexpr const char* kRecord = "key-derivation";

bool exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

error refused(std::string message) { return fail(tee_errc::invalid_argument, std::move(message)); }

}  // namespace

result<void> claim_data_dir(const std::string& data_dir) {
  const std::string record = data_dir + "/" + kRecord;
  const std::string expected = std::string(pkp::kSalt) + "\n";
  const int fd = ::open(record.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd >= 0) {
    char buf[64] = {};
    const ssize_t n = ::read(fd, buf, sizeof buf - 1);
    ::close(fd);
    if (n >= 0 && std::string(buf, static_cast<size_t>(n)) == expected)
      return {};
    return refused(record + " names a key derivation this server does not implement (expected " +
                   std::string(pkp::kSalt) + "); refusing to start rather than re-key anything");
  }
  if (errno != ENOENT)
    return refused("cannot read " + record + ": " + std::strerror(errno));
  // No record: a new directory, or one from before the record existed.
  for (const char* state : {"tee-root.key", "ledger.sqlite", "triggers.sqlite", "rpc.sqlite"}) {
    if (exists(data_dir + "/" + state))
      return refused("data directory " + data_dir + " holds " + state +
                     " from before keys were bound to their account: its PKP wallets were derived under "
                     "the earlier path-only rule (" +
                     std::string(pkp::kLegacySalt) + ") and would get other addresses under the per-account rule (" +
                     std::string(pkp::kSalt) +
                     "). Nothing was re-keyed. Start with a new data directory (--data-dir) and create the "
                     "accounts' wallets again there.");
  }
  const std::string tmp = record + ".tmp";
  const int wfd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (wfd < 0)
    return refused("cannot create " + tmp + ": " + std::strerror(errno));
  const bool ok =
      ::write(wfd, expected.data(), expected.size()) == static_cast<ssize_t>(expected.size()) && ::fsync(wfd) == 0;
  ::close(wfd);
  if (!ok || ::rename(tmp.c_str(), record.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    ::unlink(tmp.c_str());
    return refused("cannot write " + record + ": " + why);
  }
  return {};
}

}  // namespace enact::tee
