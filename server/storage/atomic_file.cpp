// SPDX-License-Identifier: Apache-2.0
#include "storage/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>

#include "enact/codec/hex.hpp"
#include "enact/crypto/random.hpp"

namespace enact::storage {

std::optional<std::string> write_file_atomically(const std::string& path, bytes_view data) {
  std::array<uint8_t, 8> suffix{};
  crypto::random_bytes(suffix);
  const std::string tmp = path + ".tmp-" + codec::hex::encode(suffix);
  // O_EXCL: never through a link or over another writer's file.
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0)
    return "cannot create " + tmp + ": " + std::strerror(errno);
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    done += static_cast<size_t>(n);
  }
  const bool ok = done == data.size() && ::fsync(fd) == 0;
  const int write_errno = errno;
  ::close(fd);
  if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(ok ? errno : write_errno);
    ::unlink(tmp.c_str());
    return "cannot write " + path + ": " + why;
  }
  // The rename is an entry of the directory: durable only once the directory is.
  std::string dir = std::filesystem::path(path).parent_path().string();
  if (dir.empty())
    dir = ".";
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0)
    return "cannot sync " + dir + ": " + std::strerror(errno);
  const bool synced = ::fsync(dfd) == 0;
  const int sync_errno = errno;
  ::close(dfd);
  if (!synced)
    return "cannot sync " + dir + ": " + std::strerror(sync_errno);
  return std::nullopt;
}

}  // namespace enact::storage
