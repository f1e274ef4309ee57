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
#include "storage/atomic_file.hpp"
#include "tee/tee.hpp"

namespace enact::tee {
namespace {

constexpr const char* kRecord = "key-derivation";
constexpr const char* kFingerprint = "root-fingerprint";

bool exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

error refused(std::string message) { return fail(tee_errc::invalid_argument, std::move(message)); }

/// Writes `text` to `path` so that a crash leaves the old record or the new one.
result<void> write_record(const std::string& path, std::string_view text) {
  if (auto why = storage::write_file_atomically(path, as_bytes(text)))
    return refused(std::move(*why));
  return {};
}

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
  return write_record(record, expected);
}

// docs/protocol.md §1 "root key": with dstack the root key is the agent's, so a data directory
// does not hold it; the record of its fingerprint is what notices a root that changed under it.
result<void> claim_root_fingerprint(const std::string& data_dir, std::string_view fingerprint) {
  const std::string record = data_dir + "/" + kFingerprint;
  const std::string expected = "api-payer " + std::string(fingerprint) + "\n";
  const int fd = ::open(record.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0 && errno == ENOENT)
    return write_record(record, expected);
  if (fd < 0)
    return refused("cannot read " + record + ": " + std::strerror(errno));
  char buf[128] = {};
  const ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  std::string recorded = n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
  if (recorded == expected)
    return {};
  if (recorded.starts_with("api-payer "))
    recorded.erase(0, 10);
  while (!recorded.empty() && (recorded.back() == '\n' || recorded.back() == '\r'))
    recorded.pop_back();
  return refused("the TEE root key changed: data directory " + data_dir +
                 " was made under the root whose api payer is " + recorded + " (" + record +
                 "), and this TEE's root gives the api payer " + std::string(fingerprint) +
                 ". Its accounts' PKP wallets and sealed keys belong to the other root; refusing to start rather than "
                 "serve them other keys. Start on the TEE that made this directory (with dstack: the same app, with "
                 "its KMS), or give a new --data-dir");
}

}  // namespace enact::tee
