// SPDX-License-Identifier: Apache-2.0
#include "storage/file_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <system_error>
#include <utility>

namespace enact::storage {
namespace {

[[noreturn]] void throw_os(const std::string& what, int e) { throw std::runtime_error(what + ": " + std::strerror(e)); }

std::string canonical_of(const std::string& path) {
  std::error_code ec;
  const std::filesystem::path resolved = std::filesystem::canonical(path, ec);
  if (ec)
    throw std::runtime_error(path + ": " + ec.message());
  return resolved.string();
}

}  // namespace

file_lock file_lock::for_file(const std::string& path, const std::string& held_message) {
  // Created first when absent, so that it has a canonical name (empty: a store makes it what it is).
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0)
    throw_os(path, errno);
  struct stat st {};
  const int stated = ::fstat(fd, &st);
  const int e = errno;
  ::close(fd);
  if (stated != 0)
    throw_os(path, e);
  if (st.st_nlink > 1)
    throw std::runtime_error(path +
                             " has other hard links: a file locked by its name has one name (another would lock a "
                             "lock file of its own)");
  std::string target = canonical_of(path);
  std::string lock_path = target + ".lock";
  return file_lock(std::move(target), std::move(lock_path), held_message);
}

file_lock file_lock::for_directory(const std::string& dir, const std::string& name, const std::string& held_message) {
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos)
    throw std::invalid_argument("file_lock: '" + name + "' is not a plain file name");
  std::string target = canonical_of(dir);
  struct stat st {};
  if (::stat(target.c_str(), &st) != 0)
    throw_os(target, errno);
  if (!S_ISDIR(st.st_mode))
    throw_os(target, ENOTDIR);
  std::string lock_path = target + "/" + name;
  return file_lock(std::move(target), std::move(lock_path), held_message);
}

file_lock::file_lock(std::string target, std::string lock_path, const std::string& held_message)
    : target_(std::move(target)), path_(std::move(lock_path)) {
  // O_NOFOLLOW: the lock file is the lock itself, never a link to somewhere else.
  fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd_ < 0)
    throw_os(path_, errno);
  int locked;
  do
    locked = ::flock(fd_, LOCK_EX | LOCK_NB);
  while (locked != 0 && errno == EINTR);
  if (locked != 0) {
    const int e = errno;
    ::close(fd_);
    fd_ = -1;
    if (e == EWOULDBLOCK)
      throw std::runtime_error(held_message);
    throw_os(path_, e);
  }
}

file_lock::~file_lock() {
  if (fd_ >= 0)
    ::close(fd_);
}

file_lock::file_lock(file_lock&& other) noexcept
    : target_(std::move(other.target_)), path_(std::move(other.path_)), fd_(std::exchange(other.fd_, -1)) {}

file_lock& file_lock::operator=(file_lock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0)
      ::close(fd_);
    target_ = std::move(other.target_);
    path_ = std::move(other.path_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

}  // namespace enact::storage
