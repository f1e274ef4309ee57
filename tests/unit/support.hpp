// Shared test support: doctest printers for byte containers and error codes, and file helpers
// for reading vectors and fixtures.
#pragma once

#include <doctest/doctest.h>

#include <array>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include "enact/codec/hex.hpp"

namespace doctest {
template <>
struct StringMaker<std::vector<uint8_t>> {
  static String convert(const std::vector<uint8_t>& v) { return ("0x" + enact::hex::encode(v)).c_str(); }
};
template <size_t N>
struct StringMaker<std::array<uint8_t, N>> {
  static String convert(const std::array<uint8_t, N>& v) { return ("0x" + enact::hex::encode(v)).c_str(); }
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
/// Path of a file under ../shared.
inline std::string shared_path(const std::string& rel) { return std::string(ENACT_SHARED_DIR) + "/" + rel; }
}  // namespace enact::test
