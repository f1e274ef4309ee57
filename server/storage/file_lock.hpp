// SPDX-License-Identifier: Apache-2.0
// One process at a time on a file or a directory (docs/architecture.md §2, `server/storage/`):
// an exclusive, non-blocking flock(2) on a lock file, held while the holder lives. The kernel lets
// go of it when the process ends, however it ends, so a killed server leaves no stale lock behind;
// the lock file itself stays (empty, mode 0600).
//
// Every path to the target locks the same lock file: the target is named by its canonical path
// (symbolic links, `.` and `..` resolved). For a directory the lock file lives inside it, so any
// name of the directory reaches the same file; for a file it lives beside it as `<canonical>.lock`,
// and a file with a second hard link (a name that would lock a lock file of its own) is refused.
//
// The descriptor is opened O_CLOEXEC: a process the holder starts (the sandbox workers) does not
// inherit the lock, and cannot keep it past the holder.
#pragma once

#include <string>

namespace enact::storage {

/// An exclusive flock on a lock file, released on destruction. Movable, not copyable.
class file_lock {
 public:
  /// Locks the file `path` by `<canonical path>.lock`, creating `path` (empty, mode 0600) and the
  /// lock file when absent. Throws std::runtime_error: `held_message` when another process holds
  /// the lock; "<path> has other hard links: …" for a file with more than one name; the path and
  /// the OS error otherwise.
  [[nodiscard]] static file_lock for_file(const std::string& path, const std::string& held_message);

  /// Locks the existing directory `dir` by the lock file `<canonical dir>/<name>` (`name` a plain
  /// file name). Throws std::runtime_error: `held_message` when another process holds the lock;
  /// the path and the OS error otherwise (e.g. `dir` is missing or is no directory).
  [[nodiscard]] static file_lock for_directory(const std::string& dir, const std::string& name,
                                               const std::string& held_message);

  ~file_lock();
  file_lock(file_lock&& other) noexcept;
  file_lock& operator=(file_lock&& other) noexcept;
  file_lock(const file_lock&) = delete;
  file_lock& operator=(const file_lock&) = delete;

  /// The canonical path of the locked file or directory.
  [[nodiscard]] const std::string& target() const noexcept { return target_; }
  /// The lock file's path.
  [[nodiscard]] const std::string& path() const noexcept { return path_; }

 private:
  file_lock(std::string target, std::string lock_path, const std::string& held_message);

  std::string target_;
  std::string path_;
  int fd_ = -1;
};

}  // namespace enact::storage
