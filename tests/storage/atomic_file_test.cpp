// SPDX-License-Identifier: Apache-2.0
// The atomic file writer (storage/atomic_file.hpp): the new content replaces the old whole, the
// file is private to its owner, nothing is left beside it, and a failure leaves the old content.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "storage/atomic_file.hpp"

namespace enact::storage::test {
namespace {

namespace fs = std::filesystem;

struct temp_dir {
  temp_dir() {
    std::string tmpl = (fs::temp_directory_path() / "enact-atomic-XXXXXX").string();
    REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
    path = tmpl;
  }
  ~temp_dir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  fs::path path;
};

std::string read_all(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

TEST_CASE("write_file_atomically: creates, replaces, leaves nothing beside the file") {
  temp_dir dir;
  const std::string path = (dir.path / "record").string();
  CHECK_FALSE(write_file_atomically(path, as_bytes("first\n")).has_value());
  CHECK(read_all(path) == "first\n");
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  CHECK_FALSE(write_file_atomically(path, as_bytes("second, longer\n")).has_value());
  CHECK(read_all(path) == "second, longer\n");
  CHECK_FALSE(write_file_atomically(path, as_bytes("")).has_value());
  CHECK(read_all(path).empty());
  int entries = 0;
  for (const auto& e : fs::directory_iterator(dir.path)) {
    (void)e;
    ++entries;
  }
  CHECK(entries == 1);
}

TEST_CASE("write_file_atomically: a failure says why and leaves the old content") {
  temp_dir dir;
  const auto missing = write_file_atomically((dir.path / "no-such-dir" / "record").string(), as_bytes("x"));
  REQUIRE(missing.has_value());
  CHECK(missing->starts_with("cannot create "));
  // A directory where the file should be: the rename fails, the temporary file goes.
  fs::create_directory(dir.path / "taken");
  fs::create_directory(dir.path / "taken" / "inside");
  const auto taken = write_file_atomically((dir.path / "taken").string(), as_bytes("x"));
  REQUIRE(taken.has_value());
  CHECK(taken->starts_with("cannot write "));
  int entries = 0;
  for (const auto& e : fs::directory_iterator(dir.path)) {
    (void)e;
    ++entries;
  }
  CHECK(entries == 1);  // only "taken"
}

}  // namespace
}  // namespace enact::storage::test
