// SPDX-License-Identifier: Apache-2.0
// The exclusive lock of a file or a directory (storage/file_lock.hpp), attacked by every other
// name of its target: a symbolic link, a symlinked parent directory, a path through `..`, a hard
// link (refused); a process the holder starts does not keep the lock past the holder (O_CLOEXEC);
// a moved lock stays held, a destroyed one is free again. And the atomic file writer
// (storage/atomic_file.hpp): the new content replaces the old whole, the file is private to its
// owner, nothing is left beside it, and a failure leaves the old content.
#include <doctest/doctest.h>

#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <string>

#include "storage/atomic_file.hpp"
#include "storage/file_lock.hpp"

extern char** environ;

namespace enact::storage::test {
namespace {

namespace fs = std::filesystem;

constexpr const char* kHeld = "held by another";

/// A fresh directory (mkdtemp), removed with its contents at the end of the test.
struct scratch {
  fs::path root;
  scratch() {
    std::string pattern = (fs::temp_directory_path() / "enact-file-lock-XXXXXX").string();
    REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    root = pattern;
  }
  ~scratch() {
    std::error_code ec;
    fs::remove_all(root, ec);
  }
  scratch(const scratch&) = delete;
  scratch& operator=(const scratch&) = delete;
};

/// The message `lock` throws, or "" when it locks (and lets go at once).
template <class Lock>
std::string refusal(Lock lock) {
  try {
    (void)lock();
    return {};
  } catch (const std::exception& e) {
    return e.what();
  }
}

}  // namespace

TEST_CASE("a file's lock: every name of the file reaches the one lock") {
  scratch s;
  const std::string file = (s.root / "store.sqlite").string();
  std::optional<file_lock> held = file_lock::for_file(file, kHeld);
  CHECK(fs::is_regular_file(file));  // created, empty
  CHECK(fs::file_size(file) == 0);
  CHECK(held->target() == fs::canonical(file).string());
  CHECK(held->path() == held->target() + ".lock");
  struct stat st {};
  REQUIRE(::lstat(held->path().c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);

  fs::create_symlink(file, s.root / "link.sqlite");
  fs::create_directory_symlink(s.root, s.root / "dir-link");
  fs::create_directory(s.root / "sub");
  for (const std::string& alias : {file, (s.root / "link.sqlite").string(), (s.root / "dir-link/store.sqlite").string(),
                                   (s.root / "sub/../store.sqlite").string(), (s.root / "./store.sqlite").string()}) {
    CAPTURE(alias);
    CHECK(refusal([&] { return file_lock::for_file(alias, kHeld); }) == kHeld);
  }

  // A hard link would lock a lock file of its own: refused, for either name.
  fs::create_hard_link(file, s.root / "hard.sqlite");
  CHECK(refusal([&] {
          return file_lock::for_file((s.root / "hard.sqlite").string(), kHeld);
        }).find("other hard links") != std::string::npos);
  CHECK(refusal([&] { return file_lock::for_file(file, kHeld); }).find("other hard links") != std::string::npos);
  fs::remove(s.root / "hard.sqlite");

  // Moved, still held; destroyed, free again by any name.
  file_lock moved = std::move(*held);
  held.reset();
  CHECK(refusal([&] { return file_lock::for_file(file, kHeld); }) == kHeld);
  moved = file_lock::for_file((s.root / "other.sqlite").string(), kHeld);  // lets go of the first
  CHECK(refusal([&] { return file_lock::for_file((s.root / "link.sqlite").string(), kHeld); }).empty());
  CHECK(refusal([&] { return file_lock::for_file((s.root / "other.sqlite").string(), kHeld); }) == kHeld);
}

TEST_CASE("a file's lock: a lock file that is a symbolic link, or a missing directory, is an OS error") {
  scratch s;
  fs::create_symlink(s.root / "elsewhere", s.root / "store.sqlite.lock");
  const std::string message = refusal([&] { return file_lock::for_file((s.root / "store.sqlite").string(), kHeld); });
  CHECK(message.find("store.sqlite.lock") != std::string::npos);
  CHECK(message != kHeld);
  CHECK_FALSE(fs::exists(s.root / "elsewhere"));

  const std::string missing = refusal([&] { return file_lock::for_file((s.root / "no/such.sqlite").string(), kHeld); });
  CHECK(missing.find("no/such.sqlite") != std::string::npos);
}

TEST_CASE("a directory's lock: inside the directory, reached by every path to it") {
  scratch s;
  const fs::path dir = s.root / "data";
  fs::create_directory(dir);
  std::optional<file_lock> held = file_lock::for_directory(dir.string(), "server.lock", kHeld);
  CHECK(held->target() == fs::canonical(dir).string());
  CHECK(held->path() == held->target() + "/server.lock");
  CHECK(fs::is_regular_file(dir / "server.lock"));

  fs::create_directory_symlink(dir, s.root / "link");
  fs::create_directory(s.root / "sibling");
  for (const fs::path& alias : {dir, s.root / "link", dir / "../data", s.root / "sibling/../link", dir / "."}) {
    CAPTURE(alias);
    CHECK(refusal([&] { return file_lock::for_directory(alias.string(), "server.lock", kHeld); }) == kHeld);
  }
  // Another lock file of the same directory is another lock.
  CHECK(refusal([&] { return file_lock::for_directory(dir.string(), "other.lock", kHeld); }).empty());

  held.reset();
  CHECK(refusal([&] { return file_lock::for_directory((s.root / "link").string(), "server.lock", kHeld); }).empty());
}

TEST_CASE("a directory's lock: a missing directory, a file, a name that is no plain file name") {
  scratch s;
  const std::string missing =
      refusal([&] { return file_lock::for_directory((s.root / "nope").string(), "server.lock", kHeld); });
  CHECK(missing.find("nope") != std::string::npos);
  CHECK_FALSE(fs::exists(s.root / "nope"));

  const fs::path file = s.root / "plain";
  (void)file_lock::for_file(file.string(), kHeld);  // creates it
  const std::string not_dir = refusal([&] { return file_lock::for_directory(file.string(), "server.lock", kHeld); });
  CHECK(not_dir.find("Not a directory") != std::string::npos);

  for (const std::string name : {"", ".", "..", "a/b", "../server.lock"}) {
    CAPTURE(name);
    CHECK_THROWS_AS((void)file_lock::for_directory(s.root.string(), name, kHeld), std::invalid_argument);
  }
}

TEST_CASE("a process the holder starts does not inherit the lock") {
  scratch s;
  std::optional<file_lock> held = file_lock::for_directory(s.root.string(), "server.lock", kHeld);
  // A child that outlives the lock (as a sandbox worker may outlive a request).
  char sleep_name[] = "sleep";
  char seconds[] = "30";
  char* argv[] = {sleep_name, seconds, nullptr};
  pid_t child = -1;
  REQUIRE(::posix_spawnp(&child, "sleep", nullptr, nullptr, argv, environ) == 0);
  held.reset();
  // Had the child inherited the descriptor, the open file description (and its lock) would live on.
  const std::string again = refusal([&] { return file_lock::for_directory(s.root.string(), "server.lock", kHeld); });
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  CHECK(again.empty());
}

namespace {

std::string read_all(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

size_t entries(const fs::path& dir) {
  size_t n = 0;
  for (auto it = fs::directory_iterator(dir); it != fs::directory_iterator(); ++it)
    ++n;
  return n;
}

}  // namespace

TEST_CASE("write_file_atomically: creates, replaces, leaves nothing beside the file") {
  scratch dir;
  const std::string path = (dir.root / "record").string();
  CHECK_FALSE(write_file_atomically(path, as_bytes("first\n")).has_value());
  CHECK(read_all(path) == "first\n");
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  CHECK_FALSE(write_file_atomically(path, as_bytes("second, longer\n")).has_value());
  CHECK(read_all(path) == "second, longer\n");
  CHECK_FALSE(write_file_atomically(path, as_bytes("")).has_value());
  CHECK(read_all(path).empty());
  CHECK(entries(dir.root) == 1);
}

TEST_CASE("write_file_atomically: a failure says why and leaves the old content") {
  scratch dir;
  const auto missing = write_file_atomically((dir.root / "no-such-dir" / "record").string(), as_bytes("x"));
  REQUIRE(missing.has_value());
  CHECK(missing->starts_with("cannot create "));
  // A directory where the file should be: the rename fails, the temporary file goes.
  fs::create_directories(dir.root / "taken" / "inside");
  const auto taken = write_file_atomically((dir.root / "taken").string(), as_bytes("x"));
  REQUIRE(taken.has_value());
  CHECK(taken->starts_with("cannot write "));
  CHECK(entries(dir.root) == 1);  // only "taken"
  CHECK(fs::is_directory(dir.root / "taken" / "inside"));
}

}  // namespace enact::storage::test
