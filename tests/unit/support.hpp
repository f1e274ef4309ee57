// SPDX-License-Identifier: Apache-2.0
// Shared test support: doctest printers for byte containers and error codes, file helpers for
// reading vectors and fixtures, and a temporary directory.
#pragma once

#include <doctest/doctest.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <array>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "enact/codec/hex.hpp"

namespace doctest {
template <>
struct StringMaker<std::vector<uint8_t>> {
  static String convert(const std::vector<uint8_t>& v) { return ("0x" + enact::codec::hex::encode(v)).c_str(); }
};
template <size_t N>
struct StringMaker<std::array<uint8_t, N>> {
  static String convert(const std::array<uint8_t, N>& v) { return ("0x" + enact::codec::hex::encode(v)).c_str(); }
};
template <>
struct StringMaker<std::error_code> {
  static String convert(const std::error_code& e) {
    return (std::string(e.category().name()) + ":" + std::to_string(e.value()) + " (" + e.message() + ")").c_str();
  }
};
}  // namespace doctest

namespace enact::test {
/// Reads a whole file (binary); throws when it cannot be opened.
inline std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f)
    throw std::runtime_error("cannot open " + path);
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}
/// Path of a file under the repository (ENACT_SOURCE_DIR is set by tests/CMakeLists.txt).
inline std::string source_path(const std::string& rel) { return std::string(ENACT_SOURCE_DIR) + "/" + rel; }
/// Path of a file under tests/fixtures (ENACT_FIXTURES_DIR; provenance in tests/fixtures/README.md).
inline std::string fixture_path(const std::string& rel) { return std::string(ENACT_FIXTURES_DIR) + "/" + rel; }

/// A known-answer vector: an input and the text it must give (or be given by).
struct text_vector {
  std::string_view in;
  std::string_view out;
};

/// Binds the socket `fd` to 127.0.0.1 on a port the kernel picks; that port, or 0 when binding
/// fails.
inline int bind_loopback(int fd) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0)
    return 0;
  return ntohs(addr.sin_port);
}

/// An input that must be refused, and the error code it must be refused with.
template <class Errc>
struct refusal {
  std::string_view in;
  Errc code;
};

/// `parse` of each input must fail with its code (the message names the input and the error).
template <class Errc, class Parse>
void check_refusals(const std::vector<refusal<Errc>>& cases, Parse parse) {
  for (const auto& c : cases) {
    auto r = parse(c.in);
    REQUIRE_MESSAGE(!r, c.in);
    CHECK_MESSAGE(r.code() == c.code, c.in, ": ", r.err().message);
  }
}

/// A fresh directory under the system temp directory, "<prefix>-<random>-<random>", removed with
/// everything in it; with `owner_only` its mode is 0700.
class temp_dir {
 public:
  explicit temp_dir(std::string_view prefix, bool owner_only = false) {
    std::random_device rd;
    path_ = std::filesystem::temp_directory_path() /
            (std::string(prefix) + "-" + std::to_string(rd()) + "-" + std::to_string(rd()));
    std::filesystem::create_directories(path_);
    if (owner_only)
      std::filesystem::permissions(path_, std::filesystem::perms::owner_all);
  }
  ~temp_dir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }
  [[nodiscard]] std::string str() const { return path_.string(); }
  /// The path of `name` inside the directory.
  [[nodiscard]] std::string file(std::string_view name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};
}  // namespace enact::test
